// `gputwin import`: a site's Slurm configuration (slurm.conf with its includes, gres.conf, a sacctmgr dump, sacctmgr
// QOS output) and optionally its job history, turned into a scenario (README "Scenario format") printed on stdout.
// What the simulator does not model is listed on stderr and in the scenario's description.
//
//   gputwin import /etc/slurm/slurm.conf --gres /etc/slurm/gres.conf --assoc site.cfg --qos qos.txt
//                  --sacct last-month.txt > site.json
#pragma once

#include <iosfwd>
#include <string>

namespace gputwin {

/// The files `gputwin import` reads; empty strings are options not given.
struct ImportRequest {
  std::string slurm_conf;              ///< slurm.conf (required).
  std::string topology;                ///< topology.conf or topology.yaml: imported as switches or blocks.
  std::string topology_name;           ///< Which topology of a topology.yaml (default: its cluster_default one).
  std::string gres;                    ///< gres.conf: GPU types for nodes whose Gres= gives none.
  std::string assoc;                   ///< `sacctmgr dump` file: accounts, users, shares and limits.
  std::string qos;                     ///< `sacctmgr show qos -P` output.
  std::string sacct;                   ///< Job history, used as the workload (path written as given).
  std::string sacct_format = "sacct";  ///< Its format: sacct, sacct-json or slurmdb-json.
};

/// Writes the scenario JSON (2-space indent) to `out` and notes to `err`; returns the exit status (0, or 2 for a bad
/// argument). Bad input files throw InputError (ConfigError, TraceError) naming file and line.
int run_import(const ImportRequest& request, std::ostream& out, std::ostream& err);

}  // namespace gputwin
