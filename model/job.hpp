// Jobs in Slurm's vocabulary: what was asked (JobSpec, from a trace or a generator) and Slurm's job states.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gputwin {

/// Slurm base job states (slurm.h), as sacct prints them.
enum class JobState : std::uint8_t {
  kPending,
  kRunning,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
};

/// Slurm's name of a state (COMPLETED, TIMEOUT, ...).
std::string_view job_state_name(JobState state);
/// Parses a Slurm state name (case-insensitive, "CANCELLED by 0" style suffixes ignored).
std::optional<JobState> parse_job_state(std::string_view name);

/// Sentinel for "no time limit given": the partition's DefaultTime, else MaxTime, applies.
inline constexpr std::int64_t kNoTimeLimit = -1;

/// One job as submitted, plus how it would run if nothing stopped it. All times in seconds.
struct JobSpec {
  std::uint64_t id = 0;                      ///< Job id (the trace's id on a replay).
  std::string name;                          ///< Job name.
  std::string user;                          ///< User name.
  std::string account;                       ///< Account (bank).
  std::string partition;                     ///< Partition name; empty means the default partition.
  std::string qos;                           ///< QOS name; empty means the default ("normal").
  std::int64_t submit_s = 0;                 ///< Submit time, seconds since the scenario epoch.
  std::uint32_t nodes = 0;                   ///< Exact node count (-N); 0 lets the selector choose, packing CPUs.
  std::uint32_t cpus = 1;                    ///< Total CPUs (ntasks x cpus-per-task).
  std::uint32_t gpus_per_node = 0;           ///< GPUs per allocated node (--gpus-per-node / --gres=gpu:N).
  std::uint64_t mem_per_node_mb = 0;         ///< Memory per node in MB; 0 means none requested.
  bool exclusive = false;                    ///< --exclusive: whole nodes.
  std::int64_t time_limit_s = kNoTimeLimit;  ///< Requested time limit (--time); kNoTimeLimit if not given.
  std::int64_t run_time_s = 0;               ///< How long the job would run if not killed (only the simulator knows).
  JobState outcome = JobState::kCompleted;   ///< How the job ends if it finishes within its limit.
};

}  // namespace gputwin
