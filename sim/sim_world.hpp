// SimWorld: the World of the discrete-event simulator. It turns controller actions into future events (a job's
// end at start + run time or at its kill time, timers) and advances virtual time; it reports what happened to
// an observer (the results recorder). Submits are fed lazily from the time-ordered job table, not the heap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "model/cluster_state.hpp"
#include "model/fault_log.hpp"
#include "model/run_observer.hpp"
#include "model/scenario.hpp"
#include "results/gpu_metrics.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/world.hpp"
#include "sim/autoscaler.hpp"
#include "sim/cost_meter.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/job_speed_model.hpp"
#include "sim/node_lifecycle.hpp"
#include "sim/operations.hpp"

namespace gputwin {

/// Counters of one run.
struct SimCounters {
  std::uint64_t events = 0;    ///< Events processed (submits, job ends, releases, timers).
  std::uint64_t instants = 0;  ///< Distinct instants at which something happened.
};

/// The simulated world.
class SimWorld final : public World {
 public:
  /// World over `state`; `observer` may be null.
  SimWorld(ClusterState& state, const SlurmParameters& slurm, RunObserver* observer);

  /// Sets the controller that reacts to events (must be set before run()).
  void set_scheduler(Scheduler* scheduler) { scheduler_ = scheduler; }
  /// Sets the placement-aware speed model (may be null: every job runs its trace run time).
  void set_speed_model(JobSpeedModel* model) { speed_model_ = model; }
  /// Sets the node lifecycle (faults, drain, repair, checkpoints); may be null (no faults).
  void set_lifecycle(NodeLifecycle* lifecycle);
  /// Sets the cloud autoscaler; may be null (a static cluster).
  void set_autoscaler(Autoscaler* autoscaler);
  /// Sets the cost meter (prices, quotas, spot reclaims); may be null.
  void set_cost_meter(CostMeter* meter);
  /// Sets the cluster operations (/operations); may be null.
  void set_operations(ClusterOperations* operations);
  /// Schedules ClusterOperations::on_event(target, generation) at `at` (>= now).
  void push_operation(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Runs until no event is left. `progress` (may be empty) is called every `progress_every` events.
  void run(const std::function<void(const SimWorld&)>& progress, std::uint64_t progress_every = 1u << 16);

  [[nodiscard]] SimTime now() const override { return now_; }
  [[nodiscard]] const ClusterState& state() const override { return state_; }
  void start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) override;
  void annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) override;
  void set_timer(TimerId timer, SimTime at) override;
  void reject_job(JobIndex job, PendingReason reason) override;
  void preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) override;
  void expect_activity(SimTime at) override { expected_activity_ = std::max(expected_activity_, at); }

  /// The slurm.conf parameters of the run.
  [[nodiscard]] const SlurmParameters& slurm_parameters() const { return slurm_; }

  // ---- for the node lifecycle ----
  /// Schedules NodeLifecycle::on_event(target, generation) at `at` (>= now).
  void push_lifecycle(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Schedules Autoscaler::on_event(target, generation) at `at` (>= now).
  void push_autoscaler(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Schedules CostMeter::on_event(target, generation) at `at` (>= now).
  void push_cost(SimTime at, std::uint64_t target, std::uint32_t generation);
  /// Cancels job `job` (scancel): a running job ends CANCELLED, a pending one leaves the queue.
  void cancel_job(JobIndex job);
  /// Ends every job running on node `n` NODE_FAIL (requeued by Slurm's rule, --requeue) for `cause` (not a fault:
  /// recorded in interruptions()); returns how many.
  std::uint32_t fail_jobs_on(NodeIndex n, InterruptionCause cause);
  /// Runs fail_jobs_on ended, in time order.
  [[nodiscard]] const std::vector<InterruptionRecord>& interruptions() const { return interruptions_; }
  /// The provider reclaims (spot) node `n`: its jobs end NODE_FAIL (requeued by Slurm's rule) and the node goes
  /// away; the autoscaler may create it again, else the provider replaces it after a cold start.
  void reclaim_node(NodeIndex n);
  /// Jobs submitted or requeued and maybe still pending (with an autoscaler; it drops those no longer pending).
  [[nodiscard]] std::vector<JobIndex>& pending_list() { return pending_list_; }
  /// Marks a job as no longer in pending_list() (the autoscaler compacted it out).
  void unlist_pending(JobIndex job) { listed_[job] = 0; }
  /// A node's condition (kNone without a lifecycle or autoscaler).
  [[nodiscard]] NodeCondition node_condition(NodeIndex n) const {
    return node_condition_.empty() ? NodeCondition::kNone : node_condition_[n];
  }
  /// Running jobs on node `n` (with a lifecycle only).
  [[nodiscard]] std::span<const JobIndex> jobs_on(NodeIndex n) const { return node_job_list_[n]; }
  /// Ends running job `job` now with `state` because of a fault; it is requeued once released if `requeue`. A
  /// job that stalled made no progress after `progress_until` (kNever: it progressed until now). Returns the
  /// run's record (fault and cause left for the caller).
  InterruptionRecord interrupt_job(JobIndex job, JobState state, bool requeue, SimTime progress_until);
  /// Sets a node's condition: out of scheduling unless kNone; the scheduler hears of it as a node update.
  void set_node_condition(NodeIndex n, NodeCondition condition);
  /// A node out of service returns at `at`: the run must not end as idle before then while jobs wait.
  void note_node_return(SimTime at) { latest_return_ = std::max(latest_return_, at); }
  /// A GPU reported an XID now (for the metrics).
  void note_xid(NodeIndex node, std::uint32_t gpu, std::uint32_t xid) { xids_.push_back({now_, node, gpu, xid}); }
  /// XIDs reported so far, in time order.
  [[nodiscard]] const std::vector<XidEvent>& xids() const { return xids_; }
  /// Node condition changes so far (drain, down, reboot, return to service), in time order, for the metrics.
  [[nodiscard]] const std::vector<NodeConditionEvent>& condition_changes() const { return condition_changes_; }

  /// Stops the run after the last instant at or before `at`.
  void set_stop_at(SimTime at) { stop_at_ = at; }
  /// Counters so far.
  [[nodiscard]] const SimCounters& counters() const { return counters_; }
  /// Jobs submitted so far.
  [[nodiscard]] std::uint64_t submitted() const { return next_submit_; }
  /// Jobs ended so far.
  [[nodiscard]] std::uint64_t ended() const { return ended_; }

 private:
  enum EventKind : std::uint32_t {
    kJobEnd = 1,
    kRelease = 2,
    kTimer = 3,
    kLifecycle = 4,
    kAutoscaler = 5,
    kCost = 6,
    kReplaced = 7,
    kOperation = 8
  };
  // Weight bit of a POWERED_DOWN node under power saving: above every configured Weight, so it is used last.
  static constexpr std::uint32_t kPoweredDownWeight = 1U << 31;
  void push_component(SimTime at, EventKind kind, std::uint64_t target, std::uint32_t generation);
  // The part of a job's start that begins its run (work, checkpoints, costs, end event).
  void begin_run(JobIndex job, SimTime kill_at);
  // True if none of the job's nodes is still powered down or booting.
  bool nodes_powered_up(JobIndex job) const;
  // Begins the runs of CONFIGURING jobs on node `n` whose nodes are all up now.
  void begin_configured_runs(NodeIndex n);
  void requeue_job(JobIndex job, double lost_s, bool by_fault);
  void enable_node_conditions();
  void enable_job_tracking();
  void list_pending(JobIndex job);
  void dispatch(const Event& event);
  void end_job(JobIndex job, JobState state, bool completed, SimTime progress_until = kNever);
  void release_job(JobIndex job);
  void update_node_states(JobIndex job);
  void update_node_state(NodeIndex n);
  double elapsed_reference_s(JobIndex job, SimTime at) const;
  void stop_speed(JobIndex job);
  void apply_speed_changes();
  void plan_end(JobIndex job);

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
  Scheduler* scheduler_ = nullptr;
  JobSpeedModel* speed_model_ = nullptr;
  std::vector<Progress> progress_;                          // per job, with a speed model
  std::vector<std::pair<JobIndex, double>> speed_changes_;  // scratch
  EventQueue events_;
  SimTime now_ = 0;
  std::uint64_t next_submit_ = 0;
  std::uint64_t ended_ = 0;
  std::uint64_t started_ = 0;
  SimTime last_activity_ = 0;
  SimTime idle_horizon_ = 0;
  SimTime expected_activity_ = 0;
  SimTime stop_at_ = kNever;
  std::vector<std::uint32_t> timer_generation_;
  std::vector<std::uint32_t> end_generation_;
  std::vector<std::uint8_t> preempting_;  // per job: 0, or 1 (ends PREEMPTED) / 2 (then requeued)
  std::vector<NodeState> node_state_;
  SimCounters counters_;
  NodeLifecycle* lifecycle_ = nullptr;
  Autoscaler* autoscaler_ = nullptr;
  CostMeter* cost_ = nullptr;
  ClusterOperations* operations_ = nullptr;
  std::vector<JobIndex> pending_list_;                // with an autoscaler
  std::vector<std::uint8_t> listed_;                  // with an autoscaler: per job, in pending_list_
  std::vector<NodeCondition> node_condition_;         // with a lifecycle: per node
  std::vector<std::vector<JobIndex>> node_job_list_;  // with a lifecycle: running jobs per node
  std::vector<std::uint8_t> fault_requeue_;           // with a lifecycle: per job, requeue at release
  std::vector<double> run_lost_s_;                    // with a lifecycle: per job, wall seconds its last run lost
  bool power_save_ = false;                           // the autoscaler is Slurm power saving (CONFIGURING jobs)
  std::vector<XidEvent> xids_;
  std::vector<InterruptionRecord> interruptions_;      // runs ended by fail_jobs_on
  std::vector<NodeConditionEvent> condition_changes_;  // every set_node_condition change (a few per fault)
  std::int64_t pending_ = 0;                           // submitted jobs waiting to start
  SimTime latest_return_ = 0;
};

}  // namespace gputwin
