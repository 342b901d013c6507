// The scenario runner: loads the workload, builds ClusterState, wires the scenario's scheduler into SimWorld,
// runs to the end and computes the summary. The CLI and the golden tests call this, nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "control/control_plane.hpp"
#include "control/health_controller.hpp"
#include "control/operations_controller.hpp"
#include "control/quota_controller.hpp"
#include "control/scaling_controller.hpp"
#include "model/cluster_state.hpp"
#include "model/scenario.hpp"
#include "results/recorder.hpp"
#include "results/results_store.hpp"
#include "results/summary.hpp"
#include "scheduler/scheduler.hpp"
#include "sim/sim_world.hpp"

namespace gputwin {

/// Progress of a running simulation.
struct RunProgress {
  SimTime now = 0;              ///< Simulated time.
  std::uint64_t submitted = 0;  ///< Jobs submitted so far.
  std::uint64_t ended = 0;      ///< Jobs ended so far.
  std::uint64_t total = 0;      ///< Jobs in the workload.
  std::uint64_t events = 0;     ///< Events processed.
  double wall_s = 0;            ///< Wall-clock seconds since the simulation started.
};

/// A job running when a live start begins, by Slurm job id (RunningAtStart before job indices are known).
struct LiveRunningJob {
  std::uint64_t job_id = 0;                ///< The job's id in the job list.
  std::vector<NodeAllocation> allocation;  ///< Where it runs.
  SimTime start = 0;                       ///< When its run began (<= 0).
  SimTime end = 0;                         ///< When it is expected to end by itself (> 0).
  SimTime kill_at = kNever;                ///< When its time limit kills it.
};

/// The state a run starts from instead of an empty cluster (a twin's forecast from a live cluster).
struct LiveStart {
  std::vector<LiveRunningJob> running;    ///< Jobs already running (in start order).
  std::vector<NodeOutAtStart> nodes_out;  ///< Nodes out of service at the start.
};

/// Overrides and hooks for one run.
struct RunOptions {
  std::optional<std::uint64_t> seed;                 ///< Replaces the scenario's seed.
  std::optional<SchedulerPolicy> policy;             ///< Replaces the scenario's policy.
  bool node_history = true;                          ///< Keep node state changes for the results.
  bool reason_history = true;                        ///< Keep pending-reason changes for the results.
  std::optional<SimTime> stop_at;                    ///< Stop after the last event at or before this time.
  std::function<void(const RunProgress&)> progress;  ///< Called now and then during the run (may be empty).
  JobSpeedModel* speed_model = nullptr;              ///< Replaces the scenario's speed model (tests); not owned.
  const LiveStart* live_start = nullptr;             ///< Start from this live state (jobs by id); not owned.
  RunGate* gate = nullptr;                           ///< Drives the run between instants (a live run); not owned.
  RunObserver* observer = nullptr;                   ///< Also told what happens (beside the recorder); not owned.
};

/// Everything a finished run produced.
struct RunOutcome {
  std::unique_ptr<Scenario> scenario;                ///< The scenario as run (with overrides applied).
  std::unique_ptr<ClusterState> state;               ///< Final state: every job's times, allocation and state.
  std::unique_ptr<RunRecorder> recorder;             ///< Node history.
  std::unique_ptr<JobSpeedModel> speed_model;        ///< The placement-aware speed model, if the scenario has one.
  std::unique_ptr<FaultMechanics> faults;            ///< Faults, detection, recovery times, checkpoints (/faults).
  std::unique_ptr<PowerMechanics> power;             ///< Cold starts and boot failures (/autoscaler, /power_save).
  std::unique_ptr<CostMeter> cost;                   ///< Prices, spend and spot reclaims, if the scenario has /cost.
  std::unique_ptr<HealthController> health;          ///< Drain, reboot, repair, resume decisions (/faults).
  std::unique_ptr<ScalingController> scaling;        ///< Power up/down decisions (/autoscaler, /power_save).
  std::unique_ptr<QuotaController> quota;            ///< Spend quotas (/cost/quotas).
  std::unique_ptr<OperationsController> operations;  ///< Operations at given times, if the scenario has /operations.
  ControlPlane plane;                                ///< The controllers, as the world tells them.
  CloudLog cloud;                                    ///< Scaling actions, cost series and quota events.
  std::unique_ptr<SimWorld> world;                   ///< The world (its clock is where the run stopped).
  std::unique_ptr<Scheduler> scheduler;              ///< The policy, for views of its state (sprio, sshare).
  RunSummary summary;                                ///< Headline numbers.
  SchedulerStats scheduler_stats;                    ///< Scheduler work counters.
  SimCounters counters;                              ///< Engine counters.
  std::uint64_t rejected = 0;                        ///< Jobs rejected at load: they could never fit their partition.
  double load_wall_s = 0;                            ///< Wall seconds to load or generate the workload.
  double sim_wall_s = 0;                             ///< Wall seconds of the simulation itself.
};

/// Runs `scenario` to completion.
RunOutcome run_scenario(Scenario scenario, const RunOptions& options);

/// Runs `scenario` on the given jobs instead of its workload (tests, replays built in code).
RunOutcome run_jobs(Scenario scenario, std::vector<JobSpec> jobs, const RunOptions& options);

/// The fault mechanics' log of the run, or null without /faults. Valid while `outcome` lives.
const FaultLog* fault_log(const RunOutcome& outcome);

/// The cloud log (scaling, cost, quotas), or null when the scenario has neither /autoscaler nor /cost.
const CloudLog* cloud_log(const RunOutcome& outcome);

/// The cloud log as the run's end would fill it if the run ended now (a live run's copy; the run goes on), or the
/// end's own once the run has ended; nothing when cloud_log(outcome) is null.
std::optional<CloudLog> cloud_log_so_far(const RunOutcome& outcome);

/// The run's metadata for the results store.
RunInfo run_info(const RunOutcome& outcome);

/// What the results store needs to build the run's metrics tables (the scenario's /metrics, where the run
/// stopped, and the speed model's per-job GPU load). Valid while `outcome` lives.
MetricsInput metrics_input(const RunOutcome& outcome);

/// gputwin's version string.
std::string_view gputwin_version();

}  // namespace gputwin
