// Jobs in Slurm's vocabulary: what was asked (JobSpec, from a trace or a generator) and Slurm's job states.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::int32_t nice = 0;                     ///< --nice: subtracted from the multifactor priority.
  std::int64_t begin_s = -1;                 ///< --begin: not eligible before this time; -1 if not given.
  std::int64_t hold_until_s = -1;            ///< Submitted held (-H) and released at this time; kHeldForever never.
  std::string dependency;                    ///< --dependency in Slurm's syntax ("afterok:12:13,singleton").
  bool requeue = true;                       ///< --requeue / JobRequeue: may be requeued (preemption, node fail).
  std::uint64_t array_job_id = 0;            ///< ArrayJobID of an array task; 0 if not an array task.
  std::int32_t array_task_id = -1;           ///< ArrayTaskID; -1 if not an array task.
  std::uint32_t array_max_running = 0;       ///< The array's %N throttle; 0 for none.
  std::string reservation;                   ///< --reservation: run inside this advance reservation.
  std::uint32_t switches = 0;                ///< --switches=count: most leaf switches wanted; 0 for any.
  std::int64_t switch_wait_s = -1;           ///< --switches=...@max-time in seconds; -1 = max_switch_wait.
  std::int64_t observed_start_s = -1;        ///< Start time in the source trace (for fidelity comparisons); -1 unknown.
  std::uint32_t priority = 0;                ///< --priority at submit (operators): fixed from then on; 0 = computed.
};

/// Parses an --array spec ("0-99%10", "1,3,5-7", "0-15:4%2") into sorted task ids and the %N throttle
/// (0 if none); false if malformed.
bool parse_array_spec(std::string_view text, std::vector<std::int32_t>& tasks, std::uint32_t& max_running);

/// Parses a --switches value ("2", "2@10:00", "1@600"): the leaf count and the max-time in seconds (-1 when no
/// time is given); false if malformed.
bool parse_switches_spec(std::string_view text, std::uint32_t& count, std::int64_t& wait_s);

/// hold_until_s value of a job that stays held for the whole run.
inline constexpr std::int64_t kHeldForever = INT64_MAX;

}  // namespace gputwin
