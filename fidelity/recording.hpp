// A recording of what a real Slurm did with a known workload (the format of ../shared/slurm-recordings, written by
// record_real_slurm.py or by `gputwin fidelity --slurmrestd`): a folder with result.json (per job its submit, start
// and end in seconds from the recorder's t0), sacct.txt (the site history the simulator replays), slurm.conf,
// assoc.txt (`sacctmgr -P show assoc format=Cluster,Account,User,Share,QOS,DefaultQOS`) and workload.json.
//
//   Recording r = read_recording("tests/fidelity/recordings/overload/replica-1");
//   for (const RecordedJob& j : r.jobs) ... j.start_s - j.submit_s ...
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace gputwin {

/// A recording that cannot be used: "result.json: /jobs/3/start: expected a number".
class RecordingError : public InputError {
 public:
  /// Error in `file` at JSON pointer or line `location`.
  RecordingError(std::string file, std::string location, std::string problem)
      : InputError(std::move(file), std::move(location), std::move(problem)) {}
};

/// One job of a recording, times in whole seconds from the recording's first submission.
struct RecordedJob {
  std::uint32_t idx = 0;      ///< Index in the workload (the same job in every replica).
  std::uint64_t job_id = 0;   ///< slurmctld's JobID (sacct.txt's, so the simulator's job id on a replay).
  std::int64_t submit_s = 0;  ///< Submit, seconds from the first submission.
  std::int64_t start_s = 0;   ///< Start.
  std::int64_t end_s = 0;     ///< End.
  std::string state;          ///< sacct State (COMPLETED, ...).
  std::string nodes;          ///< NodeList.
};

/// One recording folder.
struct Recording {
  std::filesystem::path dir;         ///< The folder.
  std::vector<RecordedJob> jobs;     ///< By workload index, ascending.
  std::filesystem::path slurm_conf;  ///< dir/slurm.conf.
  std::filesystem::path sacct;       ///< dir/sacct.txt.
  std::filesystem::path assoc;       ///< dir/assoc.txt (may not exist: no associations then).
  std::string slurm_version;         ///< result.json's slurm_version ("22.05.8"), empty when not recorded.
};

/// Reads and checks a recording folder: result.json must parse, every job must have idx, job_id, submit, start,
/// end and state, idx values unique; slurm.conf and sacct.txt must exist. Throws RecordingError.
Recording read_recording(const std::filesystem::path& dir);

/// Mean of (start - submit) over the jobs, seconds.
double mean_wait_s(const std::vector<RecordedJob>& jobs);

}  // namespace gputwin
