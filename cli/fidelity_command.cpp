#include "cli/fidelity_command.hpp"

#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/import_command.hpp"
#include "cli/twin_command.hpp"
#include "fidelity/live_recorder.hpp"
#include "fidelity/recording.hpp"
#include "fidelity/replay.hpp"
#include "fidelity/report.hpp"

namespace gputwin {
namespace {

// `gputwin import slurm.conf --sacct sacct.txt` of the recording, as JSON text (its notes are dropped: the
// recordings are of one known cluster).
std::string import_recording(const Recording& r) {
  ImportRequest request;
  request.slurm_conf = std::filesystem::absolute(r.slurm_conf).string();
  request.sacct = std::filesystem::absolute(r.sacct).string();
  std::ostringstream out, err;
  if (run_import(request, out, err) != 0) throw RecordingError(r.slurm_conf.string(), "", err.str());
  return out.str();
}

int compare_recordings(const FidelityCommand& c, const std::vector<std::string>& dirs) {
  std::vector<Recording> recordings;
  std::vector<std::vector<RecordedJob>> simulated;
  ReplayOptions options;
  options.phase_s = c.phase_s;
  options.overrides = c.overrides;
  for (const std::string& dir : dirs) {
    Recording r = read_recording(dir);
    const std::string scenario = replay_scenario_json(r, import_recording(r), options);
    if (!c.out.empty()) {  // the replay as a scenario of its own, for `gputwin run` and what-if studies
      std::filesystem::create_directories(c.out);
      std::ofstream(std::filesystem::path(c.out) / ("replay-" + r.dir.filename().string() + ".json")) << scenario;
    }
    simulated.push_back(simulate_recording(r, scenario, options));
    recordings.push_back(std::move(r));
  }
  FidelityCriteria criteria;
  criteria.edge_tolerance = c.edge_tolerance_pct / 100.0;
  criteria.start_tolerance = c.start_tolerance_pct / 100.0;
  const FidelityReport report = compare_with_replicas(recordings, simulated, criteria);
  std::filesystem::path first = std::filesystem::absolute(dirs.front()).lexically_normal();
  if (first.filename().empty()) first = first.parent_path();
  const std::string title = first.parent_path().filename().string() + "/" + first.filename().string() +
                            (dirs.size() > 1 ? " and its replicas" : "");
  std::cout << format_report(report, title);
  if (!c.out.empty()) {
    write_report(report, recordings, simulated, c.out);
    std::cout << "report: " << (std::filesystem::path(c.out) / "fidelity.json").string()
              << ", per job: " << (std::filesystem::path(c.out) / "jobs.csv").string() << "\n";
  }
  return c.check && report.has_spread && !report.inside ? 1 : 0;
}

int record_and_compare(const FidelityCommand& c) {
  RecordingOptions live;
  live.url = c.slurmrestd;
  live.local_slurm = c.local_slurm;
  live.local_slurm_script = c.local_slurm_script;
  live.local_state = c.local_state;
  live.local_port_base = c.local_port_base;
  live.workload = c.workload;
  live.replicas = c.replicas;
  live.time_scale = c.time_scale;
  live.slurm_conf = c.slurm_conf;
  // The twin's reader: a regular file of at most 64 KiB, mode 0600, `SLURM_JWT=` accepted.
  if (!c.token_file.empty()) live.token = read_token_file(c.token_file);
  live.user = c.user;
  live.out = c.out.empty() ? std::filesystem::path("fidelity-recordings") : std::filesystem::path(c.out);
  const std::vector<std::filesystem::path> dirs = record_replicas(live, std::cerr);
  std::vector<std::string> names;
  for (const auto& d : dirs) names.push_back(d.string());
  return compare_recordings(c, names);
}

}  // namespace

void add_fidelity_command(CLI::App& app, FidelityCommand& c) {
  c.app = app.add_subcommand("fidelity",
                             "The simulator against real Slurm: a workload's real replicas (recorded, or recorded "
                             "now through slurmrestd) against the simulation of the same submissions");
  c.app->add_option("--recorded", c.recorded,
                    "Recording folders, replicas of one workload (result.json, sacct.txt, "
                    "slurm.conf, assoc.txt)");
  c.app->add_option("--out", c.out, "Folder for fidelity.json and jobs.csv (and, live, the recordings)");
  c.app->add_option("--slurmrestd", c.slurmrestd, "Live form: slurmrestd URL of a test cluster to record on");
  c.app->add_flag("--local-slurm", c.local_slurm,
                  "Live form: start the local test cluster (../shared/slurmrestd/local-slurm.sh, root) and record on "
                  "it, stopping it afterwards");
  c.app->add_option("--local-slurm-script", c.local_slurm_script,
                    "Path of local-slurm.sh (default: found beside "
                    "the repository, ../shared/slurmrestd)");
  c.app->add_option("--local-state", c.local_state, "State folder of the local cluster")->capture_default_str();
  c.app->add_option("--local-port-base", c.local_port_base, "Its SLURM_TWIN_PORT_BASE")->capture_default_str();
  c.app->add_option("--workload", c.workload, "Live form: the workload (workload.json of a recording)");
  c.app->add_option("--replicas", c.replicas, "Live form: how many times to record it")->capture_default_str();
  c.app->add_option("--time-scale", c.time_scale, "Live form: multiplies submit offsets and run times")
      ->capture_default_str();
  c.app->add_option("--slurm-conf", c.slurm_conf, "Live form with --slurmrestd: the cluster's slurm.conf");
  c.app->add_option("--token-file", c.token_file, "Live form: file holding the JWT (default: $SLURM_JWT)");
  c.app->add_option("--user", c.user, "Live form: the user reads are made as")->capture_default_str();
  c.app->add_option("--phase", c.phase_s, "phase_s of the replay (slurmctld's start before the first submission)")
      ->capture_default_str();
  c.app->add_option("--set", c.overrides, "Change the replay scenario: /json/pointer=value (repeatable)");
  c.app
      ->add_option("--edge-tolerance", c.edge_tolerance_pct,
                   "How far outside the band of real mean waits still counts as inside, % of the nearer edge")
      ->capture_default_str();
  c.app
      ->add_option("--start-tolerance", c.start_tolerance_pct,
                   "How much larger than the replicas' mean pairwise start difference the simulator's may be, %")
      ->capture_default_str();
  c.app->add_flag("--check", c.check, "Exit 1 when the verdict is outside the real spread");
}

int run_fidelity_command(FidelityCommand& c) {
  if (c.app == nullptr || !*c.app) return -1;
  const bool live = !c.slurmrestd.empty() || c.local_slurm;
  if (live == !c.recorded.empty()) {
    fmt::print(stderr, "gputwin fidelity: give either --recorded DIR... or --slurmrestd URL / --local-slurm\n");
    return 2;
  }
  if (live && c.workload.empty()) {
    fmt::print(stderr, "gputwin fidelity: --workload W.json is required with --slurmrestd / --local-slurm\n");
    return 2;
  }
  if (live && c.replicas == 0) {
    fmt::print(stderr, "gputwin fidelity: --replicas: at least 1\n");
    return 2;
  }
  if (!(c.time_scale > 0)) {
    fmt::print(stderr, "gputwin fidelity: --time-scale: must be positive\n");
    return 2;
  }
  return live ? record_and_compare(c) : compare_recordings(c, c.recorded);
}

}  // namespace gputwin
