// Scenario files: the JSON a user writes (cluster, workload, scheduler), checked on load so that every
// error names the file and the JSON pointer of the bad value. The schema is scenarios/SCHEMA.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/accounting.hpp"
#include "model/cloud_config.hpp"
#include "model/cluster.hpp"
#include "model/faults_config.hpp"
#include "model/job.hpp"
#include "model/performance.hpp"
#include "model/swf.hpp"
#include "model/synthetic.hpp"

namespace gputwin {

/// Scheduling policies (scenario key /scheduler/policy). kEasy reserves the blocked head job's nodes; kEasyTextbook
/// counts spare CPUs and GPUs instead (Mu'alem and Feitelson's rule); README "Scheduling policies" has both rules.
enum class SchedulerPolicy : std::uint8_t { kFcfs, kSjf, kEasy, kEasyTextbook, kConservative, kSlurm };

/// The policy's scenario name ("fcfs", "easy", "easy-textbook", ...).
std::string_view policy_name(SchedulerPolicy policy);
/// Parses a policy name; false if unknown.
bool parse_policy(std::string_view name, SchedulerPolicy& out);
/// Every policy name, comma-separated ("fcfs, sjf, ..."), for messages and help.
std::string policy_names();

/// When the classic policies run a scheduling pass (scenario key /scheduler/scheduling_point).
enum class SchedulingPoint : std::uint8_t {
  kInstant,  ///< Once per simulated instant, after every event at that time (submits, ends) has been delivered.
  kEvent,    ///< After every event, as CQSim and several published simulators do.
};

/// The scheduling point's scenario name ("instant" or "event").
std::string_view scheduling_point_name(SchedulingPoint point);

/// slurmctld parameters the `slurm` policy honours, with Slurm's names and defaults (slurm.conf(5)).
struct SlurmParameters {
  std::int64_t sched_interval_s = 60;       ///< SchedulerParameters=sched_interval: full main-scheduler pass period.
  std::uint32_t default_queue_depth = 100;  ///< SchedulerParameters=default_queue_depth: event-triggered pass depth.
  std::int64_t batch_sched_delay_s = 3;     ///< SchedulerParameters=batch_sched_delay: min gap before a submit pass.
  std::int64_t bf_interval_s = 30;          ///< SchedulerParameters=bf_interval; -1 disables backfill.
  std::int64_t bf_window_min = 1440;        ///< SchedulerParameters=bf_window, minutes.
  std::int64_t bf_resolution_s = 60;        ///< SchedulerParameters=bf_resolution.
  std::uint32_t bf_max_job_test = 500;      ///< SchedulerParameters=bf_max_job_test.
  std::uint32_t bf_max_job_start = 0;       ///< SchedulerParameters=bf_max_job_start; 0 = unlimited.
  bool bf_continue = false;                 ///< SchedulerParameters=bf_continue (no effect: cycles cost no time here).
  std::int64_t over_time_limit_min = 0;     ///< OverTimeLimit, minutes.
  std::int64_t kill_wait_s = 30;            ///< KillWait: SIGTERM-to-SIGKILL gap, used in will-run end guesses.
  std::int64_t epilog_s = 0;                ///< Time nodes stay COMPLETING after a job ends (simulator knob).
  std::int64_t phase_s = 0;                 ///< Offset of slurmctld start before t=0: shifts every periodic activity.
  std::uint32_t slurm_version = 2411;       ///< Slurm release modelled, YYMM (2205 = 22.05) where behaviour changed:
                                            ///< before 24.11 backfill floors a reservation's end (24.11: ceil).
  std::int64_t epoch_unix_s = 0;            ///< Unix time of t=0: slurmctld rounds backfill reservations to
                                            ///< bf_resolution and will-run ends to 30 s on the wall clock.
  bool cross_check_will_run = false;        ///< Tests only: run backfill's will-run both ways and compare.
  bool shortcuts = true;                    ///< Skip work that provably cannot change the schedule (all policies).
  bool shortcut_overlap_by_count = true;    ///< Tests only (with shortcuts): slurm backfill skips a reservation's
                                            ///< node choice when counts show every choice overlaps the map.
  bool shortcut_key_scratch = true;         ///< Tests only (with shortcuts): slurm backfill moves one scratch between
                                            ///< will-run keys instead of rebuilding it for every node choice.
  bool shortcut_keep_index = true;          ///< Tests only (with shortcuts): slurm backfill keeps its release index
                                            ///< (and its scan of the first testable records) for the next cycle
                                            ///< when nothing they are computed from changed.
  bool shortcut_cpu_count = true;           ///< Tests only (with shortcuts): a CPU-count request is not sent to
                                            ///< will-run when the window's nodes cannot hold its CPUs at all.
  bool shortcut_queue_skip = true;          ///< Tests only (with shortcuts): easy's and easy-textbook's walk behind
                                            ///< the head passes over jobs that cannot start (JobQueue).
};

/// Which scheduler runs and with what parameters (/scheduler).
struct SchedulerConfig {
  SchedulerPolicy policy = SchedulerPolicy::kSlurm;              ///< Policy name.
  SchedulingPoint scheduling_point = SchedulingPoint::kInstant;  ///< When the classic policies run a pass.
  SlurmParameters slurm;                                         ///< Parameters of the `slurm` policy.
  PriorityConfig priority;                                       ///< PriorityType and the multifactor parameters.
};

/// A trace workload (/workload/trace).
struct TraceWorkload {
  std::filesystem::path path;   ///< Trace file, resolved against the scenario's folder.
  std::string format = "swf";   ///< Trace format; "swf" for now.
  SwfImportOptions options;     ///< How SWF processors map to resources.
  std::int64_t limit_jobs = 0;  ///< Replay only the first N jobs (0 = all).
};

/// One loaded scenario.
struct Scenario {
  std::filesystem::path file;                ///< Where it was loaded from (empty when parsed from a string).
  std::string name;                          ///< Scenario name.
  std::string description;                   ///< Free text.
  std::uint64_t seed = 1;                    ///< Seed of every random stream.
  ClusterConfig cluster;                     ///< Nodes and partitions.
  bool has_trace = false;                    ///< True for a trace workload, false for a synthetic one.
  TraceWorkload trace;                       ///< The trace workload, when has_trace.
  SyntheticWorkload synthetic;               ///< The synthetic workload, when neither has_trace nor has_inline_jobs.
  bool has_inline_jobs = false;              ///< True when the jobs are written in the scenario (/workload/jobs).
  std::vector<JobSpec> inline_jobs;          ///< The inline jobs, when has_inline_jobs.
  std::uint32_t workload_switches = 0;       ///< /workload/switches: --switches count given to every multi-node job.
  std::int64_t workload_switch_wait_s = -1;  ///< Its max-time (-1: max_switch_wait).
  AccountingConfig accounting;               ///< Accounts, users, QOS, limits and their enforcement.
  SchedulerConfig scheduler;                 ///< Scheduling policy and parameters.
  PerformanceConfig performance;             ///< Placement-aware job speed (/performance).
  MetricsConfig metrics;                     ///< GPU and cluster metrics sampling (/metrics).
  FaultsConfig faults;                       ///< Node lifecycle: faults, detection, repair, checkpoints (/faults).
  AutoscalerConfig autoscaler;               ///< Cloud node autoscaling with cold starts (/autoscaler).
  CostConfig cost;                           ///< Prices, spot, quotas (/cost).
  std::vector<ClusterOperation> operations;  ///< Cluster operations at given times (/operations).
};

/// Loads and checks a scenario file; throws ScenarioError naming the file and JSON pointer. Each override is
/// "JSON-pointer=value" (`/scheduler/priority/PriorityWeightFairshare=20000`): the value (JSON, else a string)
/// replaces or adds that member before the scenario is checked, for what-if runs.
Scenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides = {});
/// Parses scenario JSON text; `file` names it in errors, relative paths resolve against `base_dir`.
Scenario parse_scenario(const std::string& text, const std::string& file, const std::filesystem::path& base_dir,
                        const std::vector<std::string>& overrides = {});
/// Materialises the scenario's jobs (reads the trace or runs the generator), checked against the cluster.
/// Throws TraceError / ScenarioError on bad input.
std::vector<JobSpec> load_workload(const Scenario& scenario);

/// Parses a Slurm time string ("UNLIMITED", "minutes", "mm:ss", "hh:mm:ss", "d-hh", "d-hh:mm", "d-hh:mm:ss")
/// into seconds; -1 for UNLIMITED/INFINITE. Returns false if malformed.
bool parse_slurm_time(std::string_view text, std::int64_t& seconds);

}  // namespace gputwin
