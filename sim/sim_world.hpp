// SimWorld: the World of the discrete-event simulator. It carries out the controllers' actions with simulated
// mechanics (a job ends at start + run time or at its kill time; a reboot, a repair, a cold start take their
// time; a node set DOWN takes its jobs with it, by Slurm's rules), delivers the observations to the control plane
// in time order, and reports what happened to an observer (the results recorder). It decides nothing: every
// choice (which job starts, which node drains, when a node powers up) comes from a controller.
//
// Mechanics that draw random numbers have their own components and streams: FaultMechanics (faults, detection,
// recovery times, checkpoints), PowerMechanics (cold starts and boot failures), CostMeter (prices, spend, spot
// reclaims). Submits are fed lazily from the time-ordered job table, not the heap.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "control/control_plane.hpp"
#include "engine/event_queue.hpp"
#include "model/cloud_config.hpp"
#include "model/cluster_state.hpp"
#include "model/fault_log.hpp"
#include "model/run_observer.hpp"
#include "model/scenario.hpp"
#include "results/gpu_metrics.hpp"
#include "scheduler/scheduler.hpp"
#include "sim/cost_meter.hpp"
#include "sim/fault_mechanics.hpp"
#include "sim/job_speed_model.hpp"
#include "sim/power_mechanics.hpp"
#include "sim/run_gate.hpp"
#include "world/world.hpp"

namespace gputwin {

/// Counters of one run.
struct SimCounters {
  std::uint64_t events = 0;    ///< Events processed (submits, job ends, releases, timers).
  std::uint64_t instants = 0;  ///< Distinct instants at which something happened.
};

/// A job already running when a run begins (a twin's forecast starts from a live cluster's state).
struct RunningAtStart {
  JobIndex job = 0;                        ///< The job (its spec's submit time is at or before the start).
  std::vector<NodeAllocation> allocation;  ///< Where it runs.
  SimTime start = 0;                       ///< When its run began (<= the first instant).
  SimTime end = 0;                         ///< When it is expected to end by itself (> the first instant).
  SimTime kill_at = kNever;                ///< When it is killed for its time limit.
};

/// A node out of service when a run begins, and when it is expected back.
struct NodeOutAtStart {
  NodeIndex node = 0;                               ///< The node.
  NodeCondition condition = NodeCondition::kDrain;  ///< DRAIN, DOWN, FAIL, REBOOTING, POWERED_DOWN.
  std::string reason;                               ///< Slurm's reason.
  SimTime back_at = kNever;                         ///< When it returns to service by itself (kNever: not in the run).
};

/// The simulated world.
/// A run reached a bound on what the simulator models (model/input_limits.hpp): simulated time, or requeues of one
/// job. The runner reports it against the scenario file.
class SimulationBoundError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run reached kMaxSimulatedSeconds: its inputs chain times past what the simulator models.
class SimulatedTimeLimitError : public SimulationBoundError {
 public:
  using SimulationBoundError::SimulationBoundError;
};

/// A job was requeued more than kMaxRequeuesPerJob times: no run of it gets to finish.
class RequeueLimitError : public SimulationBoundError {
 public:
  using SimulationBoundError::SimulationBoundError;
};

class SimWorld final : public World {
 public:
  /// World over `state`; `observer` may be null.
  SimWorld(ClusterState& state, const SlurmParameters& slurm, RunObserver* observer);

  /// Sets the controllers (must be set before run()); `scheduler` is the plane's scheduler (for its kill times).
  void set_control_plane(ControlPlane* plane, Scheduler* scheduler);
  /// Sets the placement-aware speed model (may be null: every job runs its trace run time).
  void set_speed_model(JobSpeedModel* model) { speed_model_ = model; }
  /// Sets the fault mechanics (faults, detection, recovery times, checkpoints); may be null (no faults).
  void set_fault_mechanics(FaultMechanics* faults);
  /// Sets the cost meter (prices, spend, spot reclaims); may be null.
  void set_cost_meter(CostMeter* meter);
  /// Sets the cloud pool's power mechanics (cold starts, boot failures, power saving); may be null.
  void set_power_mechanics(PowerMechanics* power);
  /// Nodes an operation adds later: absent (POWERED_DOWN, deleted) until then.
  void set_absent_nodes(std::vector<NodeIndex> nodes) { absent_at_start_ = std::move(nodes); }
  /// Starts the run from a live state: these jobs are running (in start order) and these nodes out of service
  /// before the first submit; the controllers hear of the jobs through on_job_adopted.
  void set_initial_state(std::vector<RunningAtStart> running, std::vector<NodeOutAtStart> nodes_out) {
    running_at_start_ = std::move(running);
    nodes_out_at_start_ = std::move(nodes_out);
  }
  /// Tells the controllers that an instant ended after every event instead (SchedulingPoint::kEvent), so the
  /// classic policies run a pass after each submit, job end or timer.
  void set_scheduling_point(SchedulingPoint point) { pass_after_every_event_ = point == SchedulingPoint::kEvent; }
  /// Keeps the list of running jobs per node (the operations controller ends them; faults and costs need it too).
  void track_jobs_on_nodes();
  /// Runs until no event is left. `progress` (may be empty) is called every `progress_every` events.
  void run(const std::function<void(const SimWorld&)>& progress, std::uint64_t progress_every = 1u << 16);

  // ---- World ----
  [[nodiscard]] SimTime now() const override { return now_; }
  [[nodiscard]] const ClusterState& state() const override { return state_; }
  [[nodiscard]] Spend user_spend(std::string_view user) const override;
  void set_timer(ControllerId controller, TimerId timer, SimTime at) override;
  void expect_activity(SimTime at) override { expected_activity_ = std::max(expected_activity_, at); }
  void expect_node_return(SimTime at) override { latest_return_ = std::max(latest_return_, at); }
  void start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) override;
  void annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) override;
  void reject_job(JobIndex job, PendingReason reason) override;
  void preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) override;
  void cancel_job(JobIndex job, PendingReason reason) override;
  void hold_job(JobIndex job) override;
  void release_job(JobIndex job) override;
  void set_job_priority(JobIndex job, std::uint32_t priority) override;
  void drain_node(NodeIndex n, std::string_view reason) override;
  void fail_node(NodeIndex n, std::string_view reason) override;
  std::uint32_t down_nodes(std::span<const NodeIndex> nodes, InterruptionCause cause, std::string_view reason) override;
  using World::down_node;
  void resume_node(NodeIndex n) override;
  std::uint32_t requeue_jobs_on(NodeIndex n, InterruptionCause cause, std::string_view reason) override;
  std::uint32_t reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                             const RebootOptions& options) override;
  using World::reboot_node;
  void reset_gpus(NodeIndex n, std::string_view reason) override;
  void send_to_repair(NodeIndex n, std::string_view reason) override;
  void power_up_node(NodeIndex n, std::optional<double> duration_s) override;
  void power_down_node(NodeIndex n) override;
  void delete_node(NodeIndex n, std::string_view reason) override;

  // ---- Operator actions of a live run (a RunGate calls them between instants) ----
  /// Submits `spec` now (its submit time becomes now), in partition `partition`: the job is appended to the job
  /// table (a stable index, ClusterState::add_job) and goes through the checks a loaded job goes through: one that
  /// no node of its partition could ever hold is rejected (BadConstraints), the controllers may refuse it
  /// (association, QOS, limits, quotas), else it pends and the run's policy schedules it. Returns its index.
  JobIndex submit_job(JobSpec spec, std::uint32_t partition);
  /// Sets pending job `job`'s time limit (scontrol update TimeLimit=, seconds); false if it is not pending.
  bool set_job_time_limit(JobIndex job, std::int64_t time_limit_s);

  // ---- For the mechanics (sim/ only) ----
  /// The slurm.conf parameters of the run.
  [[nodiscard]] const SlurmParameters& slurm_parameters() const { return slurm_; }
  /// Schedules FaultMechanics::on_event(target, generation) at `at` (>= now).
  void push_fault(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Schedules CostMeter::on_event(target, generation) at `at` (>= now).
  void push_cost(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Tells the controllers of a health observation.
  void report_health(const HealthEvent& event) { plane_->on_health_event(event); }
  /// Ends every job running on node `n` NODE_FAIL (requeued by Slurm's rule, --requeue) for `cause` (not a fault:
  /// recorded in interruptions()); returns how many.
  std::uint32_t fail_jobs_on(NodeIndex n, InterruptionCause cause);
  /// Runs fail_jobs_on ended, in time order.
  [[nodiscard]] const std::vector<InterruptionRecord>& interruptions() const { return interruptions_; }
  /// The provider reclaims (spot) node `n`: its jobs end NODE_FAIL (requeued by Slurm's rule) and the node goes
  /// away; a pool node until a controller powers it up again, a static one until the provider replaces it after a
  /// cold start.
  void reclaim_node(NodeIndex n);
  /// Running jobs on node `n` (with track_jobs_on_nodes only).
  [[nodiscard]] std::span<const JobIndex> jobs_on(NodeIndex n) const { return node_job_list_[n]; }
  /// Ends running job `job` now with `state` because of a fault; it is requeued once released if `requeue`. A
  /// job that stalled made no progress after `progress_until` (kNever: it progressed until now). Returns the
  /// run's record (fault and cause left for the caller).
  InterruptionRecord interrupt_job(JobIndex job, JobState state, bool requeue, SimTime progress_until);
  /// A GPU reported an XID now (for the metrics).
  void note_xid(NodeIndex node, std::uint32_t gpu, std::uint32_t xid) { xids_.push_back({now_, node, gpu, xid}); }
  /// XIDs reported so far, in time order.
  [[nodiscard]] const std::vector<XidEvent>& xids() const { return xids_; }
  /// Node condition changes so far (drain, down, reboot, return to service), in time order, for the metrics.
  [[nodiscard]] const std::vector<NodeConditionEvent>& condition_changes() const { return condition_changes_; }

  /// Stops the run after the last instant at or before `at`.
  void set_stop_at(SimTime at) { stop_at_ = at; }
  /// Asks `gate` before each instant (a live run: pause, pace, operator actions); null (the default) for none.
  void set_gate(RunGate* gate) { gate_ = gate; }
  /// Moves the clock to `t` between instants (from a gate: now() <= t <= the next instant), so that an action
  /// taken then is dated `t`.
  void advance_clock(SimTime t) { now_ = std::max(now_, t); }
  /// Counters so far.
  [[nodiscard]] const SimCounters& counters() const { return counters_; }
  /// Jobs submitted so far (the workload's and those submit_job added).
  [[nodiscard]] std::uint64_t submitted() const { return next_submit_ + added_; }
  /// Jobs ended so far.
  [[nodiscard]] std::uint64_t ended() const { return ended_; }

 private:
  enum EventKind : std::uint32_t {
    kJobEnd = 1,
    kRelease = 2,
    kTimer = 3,
    kFault = 4,
    kPower = 5,
    kCost = 6,
    kReplaced = 7,
    kRecovered = 8,
    kReturned = 9,
  };
  // Starts the run's initial running jobs and takes its initial nodes out (set_initial_state).
  void apply_initial_state();
  // Weight bit of a POWERED_DOWN node under power saving: above every configured Weight, so it is used last.
  static constexpr std::uint32_t kPoweredDownWeight = 1U << 31;
  void push_component(SimTime at, EventKind kind, std::uint64_t target, std::uint32_t generation);
  void set_node_condition(NodeIndex n, NodeCondition condition, std::string_view reason = {});
  // Tells the scheduler of an operator's change to `job`, if it is pending (Slurm updates pending jobs only).
  void update_pending_job(JobIndex job, const JobUpdate& update);
  // Seconds the recovery `action` of node `n` takes, from the fault mechanics for a node with a reported fault.
  double recovery_seconds(NodeIndex n, FaultEffect action);
  // Ends the jobs on node `n` for `cause`: a fault of the node (through the fault mechanics, as detected `by`)
  // or something else (fail_jobs_on).
  std::uint32_t end_jobs_on(NodeIndex n, InterruptionCause cause, bool node_down);
  // A recovery of node `n` starts and lasts `seconds`.
  void begin_recovery(NodeIndex n, double seconds);
  void on_recovered(NodeIndex n, std::uint32_t generation);
  void on_power_event(NodeIndex n, std::uint32_t generation);
  // The part of a job's start that begins its run (work, checkpoints, costs, end event).
  void begin_run(JobIndex job, SimTime kill_at);
  // True if none of the job's nodes is still powered down or booting.
  bool nodes_powered_up(JobIndex job) const;
  // Begins the runs of CONFIGURING jobs on node `n` whose nodes are all up now.
  void begin_configured_runs(NodeIndex n);
  void requeue_job(JobIndex job, double lost_s, bool by_fault);
  // Job `job` (in the table, not yet submitted) is submitted now; false if a controller refused it.
  bool submit(JobIndex job);
  void start_run();
  void dispatch(const Event& event);
  void end_job(JobIndex job, JobState state, bool completed, SimTime progress_until = kNever);
  void release_resources(JobIndex job);
  void update_node_states(JobIndex job);
  void update_node_state(NodeIndex n);
  double elapsed_reference_s(JobIndex job, SimTime at) const;
  void stop_speed(JobIndex job);
  void apply_speed_changes();
  void plan_end(JobIndex job);
  [[nodiscard]] bool power_saved(NodeIndex n) const { return power_ != nullptr && power_->power_saved(n); }

  /// A running job's progress under a speed model.
  struct Progress {
    double work_left_us = 0;   ///< Run time still to go at reference speed, µs.
    double speed = 1;          ///< Current speed.
    SimTime since = 0;         ///< When work_left_us was last brought up to date.
    SimTime kill_at = kNever;  ///< Time limit (or preemption) end.
    SimTime natural_end = 0;   ///< When the work runs out at the current speed.
  };

  ClusterState& state_;
  SlurmParameters slurm_;
  RunObserver* observer_;
  ControlPlane* plane_ = nullptr;
  Scheduler* scheduler_ = nullptr;
  JobSpeedModel* speed_model_ = nullptr;
  FaultMechanics* faults_ = nullptr;
  CostMeter* cost_ = nullptr;
  PowerMechanics* power_ = nullptr;
  std::vector<Progress> progress_;                          // per job, with a speed model
  std::vector<std::pair<JobIndex, double>> speed_changes_;  // scratch
  EventQueue events_;
  SimTime now_ = 0;
  std::uint64_t next_submit_ = 0;
  std::uint64_t added_ = 0;  // jobs submit_job appended to the table
  std::uint64_t ended_ = 0;
  std::uint64_t started_ = 0;
  SimTime last_activity_ = 0;
  SimTime idle_horizon_ = 0;
  SimTime expected_activity_ = 0;
  SimTime stop_at_ = kNever;
  RunGate* gate_ = nullptr;
  std::array<std::vector<std::uint32_t>, kControllerCount> timer_generation_;  // per controller, per timer
  std::vector<std::uint8_t> preempting_;  // per job: 0, or 1 (ends PREEMPTED) / 2 (then requeued)
  std::vector<NodeState> node_state_;
  SimCounters counters_;
  std::vector<std::vector<JobIndex>> node_job_list_;  // with track_jobs_on_nodes: running jobs per node
  std::vector<std::uint8_t> fault_requeue_;           // with track_jobs_on_nodes: per job, requeue at release
  std::vector<double> run_lost_s_;                    // with track_jobs_on_nodes: per job, wall s its last run lost
  std::vector<std::uint32_t> recovery_generation_;    // per node: a recovery's end is stale once this moved on
  std::vector<NodeIndex> absent_at_start_;
  std::vector<RunningAtStart> running_at_start_;
  std::vector<NodeOutAtStart> nodes_out_at_start_;
  std::vector<XidEvent> xids_;
  std::vector<InterruptionRecord> interruptions_;      // runs ended by fail_jobs_on
  std::vector<NodeConditionEvent> condition_changes_;  // every set_node_condition change (a few per fault)
  bool power_save_ = false;                            // Slurm power saving: jobs wait CONFIGURING for nodes
  bool pass_after_every_event_ = false;                // SchedulingPoint::kEvent
  std::int64_t pending_ = 0;                           // submitted jobs waiting to start
  SimTime latest_return_ = 0;
};

}  // namespace gputwin
