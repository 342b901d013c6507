// `gputwin fidelity`: how closely the simulator reproduces a real Slurm, measured against the real cluster's own
// run-to-run spread. `--recorded DIR...` compares with existing recordings (replicas of one workload);
// `--slurmrestd URL --workload W.json --replicas N` (or `--local-slurm`) records the replicas first.
//
//   gputwin fidelity --recorded tests/fidelity/recordings/overload/replica-{1,2,3} --out out/fid
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace gputwin {

/// The parsed options of `gputwin fidelity`.
struct FidelityCommand {
  CLI::App* app = nullptr;            ///< The subcommand.
  std::vector<std::string> recorded;  ///< --recorded: recording folders (replicas of one workload).
  std::string out;                    ///< --out: where the report, per-job CSV and new recordings go.
  std::string slurmrestd;             ///< --slurmrestd URL (live form).
  bool local_slurm = false;           ///< --local-slurm: start ../shared/slurmrestd/local-slurm.sh first.
  std::string local_slurm_script;     ///< --local-slurm-script: that script's path.
  std::string local_state = "/tmp/gputwin-fidelity-slurm";  ///< --local-state: its state folder.
  std::string local_port_base = "17900";                    ///< --local-port-base: its SLURM_TWIN_PORT_BASE.
  std::string workload;                                     ///< --workload W.json (live form).
  std::uint32_t replicas = 3;                               ///< --replicas N (live form).
  double time_scale = 1.0;             ///< --time-scale: multiplies offsets and run times (live form).
  std::string slurm_conf;              ///< --slurm-conf: the cluster's slurm.conf (live form with --slurmrestd).
  std::string token_file;              ///< --token-file (live form; default $SLURM_JWT).
  std::string user = "root";           ///< --user: X-SLURM-USER-NAME for reads (live form).
  std::int64_t phase_s = 0;            ///< --phase: /scheduler/phase_s of the replay.
  std::vector<std::string> overrides;  ///< --set /pointer=value on the replay scenario.
  double edge_tolerance_pct = 1.0;     ///< --edge-tolerance: % of the band's nearer edge still counted inside.
  double start_tolerance_pct = 0.0;    ///< --start-tolerance: % above the replicas' pairwise difference allowed.
  bool check = false;                  ///< --check: exit 1 when the verdict is "outside".
};

/// Adds `fidelity` to `app`.
void add_fidelity_command(CLI::App& app, FidelityCommand& command);
/// Runs it if it was given; returns the exit status, or -1 when the subcommand was not used.
int run_fidelity_command(FidelityCommand& command);

}  // namespace gputwin
