// topology.conf (or, in the YAML build of this file, topology.yaml): parsed, resolved against the node names it
// mentions and against a fixed table, and written back in both forms (the written topology.yaml read again). Bad
// input must end in InputError.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/topology_conf.hpp"
#include "model/topology_yaml.hpp"

namespace {

gputwin::TopologySpec parse(std::string_view text) {
#ifdef GPUTWIN_FUZZ_TOPOLOGY_YAML
  return gputwin::parse_topology_yaml(text, "topology.yaml");
#else
  return gputwin::parse_topology_conf(text, "topology.conf");
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const gputwin::TopologySpec spec = parse(gputwin::fuzz::as_text(data, size));
    // The node names it mentions, in a stable order, so that a consistent file resolves.
    std::set<std::string> mentioned;
    for (const auto& s : spec.switches) mentioned.insert(s.nodes.begin(), s.nodes.end());
    for (const auto& b : spec.blocks) mentioned.insert(b.nodes.begin(), b.nodes.end());
    if (mentioned.size() > 100'000) return 0;
    const std::vector<std::string> names(mentioned.begin(), mentioned.end());
    try {
      const gputwin::SlurmTopology topology = gputwin::resolve_topology(spec, names, "fuzz");
      (void)gputwin::to_topology_conf(topology, names);
    } catch (const gputwin::InputError&) {
    }
    try {
      (void)gputwin::parse_topology_yaml(gputwin::write_topology_yaml(spec, "fuzz"), "written.yaml");
    } catch (const gputwin::InputError&) {
    }
    static const std::vector<std::string> fixed = {"n1", "n2", "n3", "n4", "gpu001", "gpu002"};
    (void)gputwin::resolve_topology(spec, fixed, "fuzz");
  } catch (const gputwin::InputError&) {
  }
  return 0;
}
