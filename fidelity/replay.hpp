// The simulator's side of a fidelity comparison: the scenario that replays one recording (the recording's own
// slurm.conf and sacct.txt as `gputwin import` turns them into a scenario, plus its associations from assoc.txt),
// run in-process, and its schedule as RecordedJobs matched to the recording's workload indices by job id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fidelity/recording.hpp"

namespace gputwin {

/// How to replay.
struct ReplayOptions {
  std::int64_t phase_s = 0;            ///< /scheduler/phase_s: slurmctld's start before the first submission.
  std::vector<std::string> overrides;  ///< Extra "JSON-pointer=value" changes (`gputwin run --set`).
};

/// The scenario's /accounting/accounts and /users from assoc.txt (`sacctmgr -P -n show assoc
/// format=Cluster,Account,User,Share,QOS,DefaultQOS`), as JSON text of an object {"accounts": [...], "users":
/// [...]}. `show assoc` has no parent column, so every account is placed under root; a user association directly
/// under root becomes the account "root-user" (Fairshare 1) holding that user, which gives Fair Tree the same
/// user associations (gputwin attaches users to accounts only). Throws RecordingError naming the line.
std::string associations_json(const std::string& assoc_path);

/// The replay scenario of `recording`: `imported` (the JSON `gputwin import slurm.conf --sacct sacct.txt` printed
/// for it) with its associations, `phase_s`, the
/// recording's slurm_version and auto_associations off. Throws RecordingError or ScenarioError.
std::string replay_scenario_json(const Recording& recording, const std::string& imported, const ReplayOptions& options);

/// Runs the replay scenario and returns its schedule by the recording's workload indices (times from the first
/// submission, as in the recording). Throws RecordingError when a recorded job is missing from the replay or never
/// starts in it; ScenarioError / TraceError for bad inputs.
std::vector<RecordedJob> simulate_recording(const Recording& recording, const std::string& scenario_json,
                                            const ReplayOptions& options);

}  // namespace gputwin
