// `gputwin topology SCENARIO`: the scenario's network topology as Slurm's topology.conf, or as a Graphviz graph.
#pragma once

#include <ostream>
#include <string>

#include "model/scenario.hpp"

namespace gputwin {

/// Writes `scenario`'s topology to `out` in `format` ("conf": topology.conf; "dot": Graphviz). Returns the exit
/// code (2 for an unknown format or a flat cluster with format "dot").
int print_topology(const Scenario& scenario, const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace gputwin
