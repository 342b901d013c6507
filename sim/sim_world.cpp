#include "sim/sim_world.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "model/input_limits.hpp"
#include "scheduler/node_selection.hpp"

namespace gputwin {

SimWorld::SimWorld(ClusterState& state, const SlurmParameters& slurm, RunObserver* observer)
    : state_(state),
      slurm_(slurm),
      observer_(observer),
      node_state_(state.node_count(), NodeState::kIdle),
      recovery_generation_(state.node_count(), 0) {
  events_.reserve(1024);
  const std::int64_t longest_period = std::max<std::int64_t>({slurm.sched_interval_s, slurm.bf_interval_s, 1});
  idle_horizon_ = from_seconds(2 * longest_period + slurm.batch_sched_delay_s + slurm.epilog_s + 2);
}

void SimWorld::set_control_plane(ControlPlane* plane, Scheduler* scheduler) {
  plane_ = plane;
  scheduler_ = scheduler;
}

void SimWorld::track_jobs_on_nodes() {
  if (!node_job_list_.empty()) return;
  node_job_list_.assign(state_.node_count(), {});
  fault_requeue_.assign(state_.job_count(), 0);
  run_lost_s_.assign(state_.job_count(), -1);
}

void SimWorld::set_fault_mechanics(FaultMechanics* faults) {
  faults_ = faults;
  if (faults_ != nullptr) track_jobs_on_nodes();
}

void SimWorld::set_cost_meter(CostMeter* meter) {
  cost_ = meter;
  if (cost_ != nullptr) track_jobs_on_nodes();
}

void SimWorld::set_power_mechanics(PowerMechanics* power) {
  power_ = power;
  power_save_ = power_ != nullptr && power_->power_save();
  if (power_save_) track_jobs_on_nodes();
}

void SimWorld::push_component(SimTime at, EventKind kind, std::uint64_t target, std::uint32_t generation) {
  assert(at >= now_);
  events_.push(at, kind, target, generation);
}

void SimWorld::push_fault(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kFault, target, generation);
}

void SimWorld::push_cost(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kCost, target, generation);
}

Spend SimWorld::user_spend(std::string_view user) const {
  return cost_ != nullptr ? cost_->spend(user, now_) : Spend{};
}

void SimWorld::set_timer(ControllerId controller, TimerId timer, SimTime at) {
  assert(at >= now_);
  std::vector<std::uint32_t>& generations = timer_generation_[static_cast<std::size_t>(controller)];
  if (timer >= generations.size()) generations.resize(static_cast<std::size_t>(timer) + 1, 0);
  push_component(at, kTimer, (static_cast<std::uint64_t>(controller) << 32) | timer, ++generations[timer]);
}

// ---- Jobs ----

void SimWorld::cancel_job(JobIndex job, PendingReason reason) {
  JobRuntime& rt = state_.job_mut(job);
  if (rt.state == JobState::kRunning) {
    rt.planned_end = now_;
    end_job(job, JobState::kCancelled, false);
  } else if (rt.state == JobState::kPending && rt.submitted) {
    state_.end_pending(job, JobState::kCancelled, now_);
    rt.reason = reason;
    --pending_;
    last_activity_ = now_;
    if (observer_ != nullptr) observer_->on_job_reason(job, rt.reason, now_);
    plane_->on_job_cancelled(job);
  }
}

void SimWorld::update_pending_job(JobIndex job, const JobUpdate& update) {
  const JobRuntime& rt = state_.job(job);
  if (rt.state != JobState::kPending || !rt.submitted) return;  // Slurm updates pending jobs only
  plane_->on_job_updated(job, update);
}

void SimWorld::hold_job(JobIndex job) {
  update_pending_job(job, JobUpdate{JobUpdate::Kind::kHold, 0});
}

void SimWorld::release_job(JobIndex job) {
  update_pending_job(job, JobUpdate{JobUpdate::Kind::kRelease, 0});
}

void SimWorld::set_job_priority(JobIndex job, std::uint32_t priority) {
  if (priority == 0) return;  // 0 is a hold, not a priority
  update_pending_job(job, JobUpdate{JobUpdate::Kind::kPriority, priority});
}

std::uint32_t SimWorld::fail_jobs_on(NodeIndex n, InterruptionCause cause) {
  const auto on_node = jobs_on(n);
  const std::vector<JobIndex> jobs(on_node.begin(), on_node.end());  // ending a job edits the list
  for (JobIndex j : jobs) {
    InterruptionRecord rec = interrupt_job(j, JobState::kNodeFail, state_.spec(j).requeue, kNever);
    rec.cause = cause;
    interruptions_.push_back(rec);
  }
  return static_cast<std::uint32_t>(jobs.size());
}

std::uint32_t SimWorld::end_jobs_on(NodeIndex n, InterruptionCause cause, bool node_down) {
  if (node_job_list_.empty()) return 0;
  const auto count = static_cast<std::uint32_t>(jobs_on(n).size());
  if (cause == InterruptionCause::kFault && faults_ != nullptr && faults_->reported(n)) {
    faults_->kill_jobs_on(*this, n, node_down ? DetectedBy::kSlurmdTimeout : faults_->reported_by(n));
    return count;
  }
  return fail_jobs_on(n, cause == InterruptionCause::kFault ? InterruptionCause::kOperation : cause);
}

// ---- Nodes ----

void SimWorld::set_node_condition(NodeIndex n, NodeCondition condition, std::string_view reason) {
  const NodeCondition before = state_.node_condition(n);
  if (before == condition) {
    if (!reason.empty()) state_.set_node_condition(n, condition, reason);
    return;
  }
  if (cost_ != nullptr) cost_->on_node_condition(now_, n, before, condition);
  if (faults_ != nullptr) {
    if (condition == NodeCondition::kPoweredDown) faults_->on_node_removed(*this, n);
    if (before == NodeCondition::kNone) faults_->on_left_service(n, now_);
  }
  state_.set_node_condition(n, condition, reason);
  condition_changes_.push_back(NodeConditionEvent{now_, n, condition});
  // Power saving offers POWERED_DOWN nodes to the scheduler, weighted to be used last (node_mgr.c); a node taken
  // out of the cluster (deleted) is not offered.
  const bool saved = power_saved(n);
  const bool allocatable =
      condition == NodeCondition::kNone || (saved && condition == NodeCondition::kPoweredDown && !power_->deleted(n));
  if (saved) {
    const std::uint32_t weight = state_.config().nodes[n].weight;
    state_.set_node_weight(n, condition == NodeCondition::kPoweredDown ? weight | kPoweredDownWeight : weight);
  }
  state_.set_node_schedulable(n, allocatable && state_.config().nodes[n].available);
  last_activity_ = now_;
  update_node_state(n);
  plane_->on_node_changed(n, before, condition);
  if (saved && condition == NodeCondition::kNone) begin_configured_runs(n);
}

void SimWorld::drain_node(NodeIndex n, std::string_view reason) {
  set_node_condition(n, NodeCondition::kDrain, reason);
}

void SimWorld::fail_node(NodeIndex n, std::string_view reason) {
  set_node_condition(n, NodeCondition::kFail, reason);
}

std::uint32_t SimWorld::down_nodes(std::span<const NodeIndex> nodes, InterruptionCause cause, std::string_view reason) {
  for (NodeIndex n : nodes) set_node_condition(n, NodeCondition::kDown, reason);
  // Slurm ends the jobs of a DOWN node (job_mgr.c:kill_running_job_by_node_ptr).
  std::uint32_t ended = 0;
  for (NodeIndex n : nodes) ended += end_jobs_on(n, cause, true);
  return ended;
}

void SimWorld::resume_node(NodeIndex n) {
  if (faults_ != nullptr) faults_->on_resumed(*this, n);
  set_node_condition(n, NodeCondition::kNone);
}

std::uint32_t SimWorld::requeue_jobs_on(NodeIndex n, InterruptionCause cause, std::string_view reason) {
  (void)reason;
  return end_jobs_on(n, cause, false);
}

void SimWorld::begin_recovery(NodeIndex n, double seconds) {
  const SimTime back = now_ + from_seconds_f(seconds);
  events_.push(back, kRecovered, n, ++recovery_generation_[n]);
  expect_node_return(back);
}

std::uint32_t SimWorld::reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                                     const RebootOptions& options) {
  std::vector<double> seconds;
  seconds.reserve(nodes.size());
  for (NodeIndex n : nodes) {
    seconds.push_back(options.duration_s ? *options.duration_s : recovery_seconds(n, FaultEffect::kRebootNode));
    set_node_condition(n, NodeCondition::kRebooting, reason);
  }
  // A restart of the slurmd workers ends the jobs running there once every node shows REBOOTING.
  std::uint32_t ended = 0;
  if (options.kill_jobs) {
    for (NodeIndex n : nodes) ended += end_jobs_on(n, InterruptionCause::kOperation, true);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) begin_recovery(nodes[i], seconds[i]);
  return ended;
}

double SimWorld::recovery_seconds(NodeIndex n, FaultEffect action) {
  // A node with a reported fault recovers in the fault mechanics' time (a repair drawn once per fault); another
  // node (no /faults) in the default times.
  if (faults_ != nullptr && faults_->reported(n)) return faults_->begin_recovery(n, action);
  const RepairTimes defaults;
  return action == FaultEffect::kRebootNode ? defaults.reboot_s
         : action == FaultEffect::kResetGpu ? defaults.gpu_reset_s
                                            : defaults.auto_repair_s;
}

void SimWorld::reset_gpus(NodeIndex n, std::string_view reason) {
  (void)reason;
  begin_recovery(n, recovery_seconds(n, FaultEffect::kResetGpu));
}

void SimWorld::send_to_repair(NodeIndex n, std::string_view reason) {
  (void)reason;
  begin_recovery(n, recovery_seconds(n, FaultEffect::kRepairNode));
}

void SimWorld::on_recovered(NodeIndex n, std::uint32_t generation) {
  if (generation != recovery_generation_[n]) return;  // a later recovery replaced it
  if (faults_ != nullptr) faults_->end_recovery(n);
  // Powered down or deleted meanwhile: it stays so, and the fault went with the node.
  if (!held_out(state_.node_condition(n)) && faults_ != nullptr) faults_->on_resumed(*this, n);
  plane_->on_node_recovered(n);
}

void SimWorld::power_up_node(NodeIndex n, std::optional<double> duration_s) {
  set_node_condition(n, NodeCondition::kPoweringUp);
  const double seconds = power_->begin_boot(n, duration_s);
  const SimTime ready = now_ + from_seconds_f(seconds);
  events_.push(ready, kPower, n, power_->generation(n));
  expect_node_return(ready);
}

void SimWorld::power_down_node(NodeIndex n) {
  set_node_condition(n, NodeCondition::kPoweringDown);
  const double seconds = power_->begin_power_down(n);
  events_.push(now_ + from_seconds_f(seconds), kPower, n, power_->generation(n));
}

void SimWorld::delete_node(NodeIndex n, std::string_view reason) {
  power_->cancel(n);
  power_->set_deleted(n, true);
  set_node_condition(n, NodeCondition::kPoweredDown, reason);
  plane_->on_node_deleted(n);
}

void SimWorld::on_power_event(NodeIndex n, std::uint32_t generation) {
  if (generation != power_->generation(n)) return;  // the node was taken, reclaimed or acted on again
  const NodeCondition c = state_.node_condition(n);
  if (c == NodeCondition::kPoweringUp) {
    if (!power_->boot_succeeds(n)) {
      // The node never registers: it is deleted (it cost its boot); the jobs waiting CONFIGURING for it are
      // requeued (requeue_on_resume_failure).
      fail_jobs_on(n, InterruptionCause::kResumeFailure);
      set_node_condition(n, NodeCondition::kPoweredDown);
      plane_->on_node_booted(n, false);
      return;
    }
    set_node_condition(n, NodeCondition::kNone);
    plane_->on_node_booted(n, true);
  } else if (c == NodeCondition::kPoweringDown) {
    set_node_condition(n, NodeCondition::kPoweredDown);
    plane_->on_node_powered_down(n);
  }
}

void SimWorld::reclaim_node(NodeIndex n) {
  fail_jobs_on(n, InterruptionCause::kSpotReclaim);
  const bool pool = power_ != nullptr && power_->in_pool(n);
  if (pool) power_->cancel(n);  // a boot or power-down of it in progress is void; it may be powered up again
  set_node_condition(n, NodeCondition::kPoweredDown);
  if (!pool) {  // a static node: the provider replaces it after a cold start
    const SimTime back = now_ + from_seconds_f(PowerMechanics::replacement_s());
    events_.push(back, kReplaced, n, 0);
    expect_node_return(back);
  }
  plane_->on_node_reclaimed(n);
}

InterruptionRecord SimWorld::interrupt_job(JobIndex job, JobState state, bool requeue, SimTime progress_until) {
  JobRuntime& rt = state_.job_mut(job);
  assert(rt.state == JobState::kRunning);
  InterruptionRecord rec;
  rec.time = now_;
  rec.job = job;
  rec.state = state;
  rec.run_s = to_seconds_f(now_ - rt.start);
  const double gpus = state_.allocated_gpus(job);
  rt.planned_end = now_;
  fault_requeue_[job] = requeue ? 1 : 0;
  if (!preempting_.empty()) preempting_[job] = 0;  // a fault during GraceTime ends the job by the fault's rules
  ++rt.interruptions;
  end_job(job, state, false, progress_until);
  rec.lost_s = std::max(0.0, run_lost_s_[job]);
  rec.lost_gpu_s = rec.lost_s * gpus;
  rec.requeued = requeue;
  if (!requeue) state_.job_mut(job).fault_lost_gpu_s += rec.lost_gpu_s;  // requeued runs count it at requeue
  return rec;
}

void SimWorld::annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) {
  JobRuntime& rt = state_.job_mut(job);
  rt.priority = priority;
  if (rt.reason != reason && observer_ != nullptr) observer_->on_job_reason(job, reason, now_);
  rt.reason = reason;
}

void SimWorld::reject_job(JobIndex job, PendingReason reason) {
  state_.end_pending(job, JobState::kCancelled, now_);
  --pending_;
  JobRuntime& rt = state_.job_mut(job);
  rt.rejected = true;
  rt.reason = reason;
  rt.time_limit_s = effective_time_limit_s(state_.spec(job), state_.config().partitions[rt.partition]);
  if (observer_ != nullptr) observer_->on_job_reason(job, reason, now_);
}

void SimWorld::preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) {
  JobRuntime& rt = state_.job_mut(job);
  if (rt.state != JobState::kRunning) return;
  if (preempting_.size() < state_.job_count()) preempting_.resize(state_.job_count(), 0);
  preempting_[job] = requeue ? 2 : 1;
  // A CONFIGURING job has no processes yet to give a grace time to: it ends at once.
  rt.planned_end = rt.configuring ? now_ : std::max(now_, std::min(at, rt.planned_end));
  if (speed_model_ != nullptr && !rt.configuring)
    progress_[job].kill_at = std::min(progress_[job].kill_at, rt.planned_end);
  events_.push(rt.planned_end, kJobEnd, job, 0);
  if (observer_) observer_->on_job_preempted(job, preemptor, rt.planned_end, requeue, now_);
}

void SimWorld::start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) {
  state_.allocate(job, allocation, now_);
  ++started_;
  --pending_;
  last_activity_ = now_;
  JobRuntime& rt = state_.job_mut(job);
  rt.reason = PendingReason::kNone;
  rt.run_length_s = static_cast<double>(state_.spec(job).run_time_s);
  if (!node_job_list_.empty()) {
    for (const NodeAllocation& a : allocation) node_job_list_[a.node].push_back(job);
  }
  // Power saving: a job given POWERED_DOWN nodes holds them CONFIGURING while they resume (power_save.c,
  // job_config_fini); its run begins when the last one is up. The scaling controller resumes them.
  if (power_save_ && !nodes_powered_up(job)) {
    rt.configuring = true;
    rt.planned_end = kNever;
    update_node_states(job);
  } else {
    begin_run(job, kill_at);
    update_node_states(job);
  }
  plane_->on_job_started(job);
}

bool SimWorld::nodes_powered_up(JobIndex job) const {
  // A node drained meanwhile counts as up: DRAIN keeps the jobs allocated to it, as in Slurm.
  for (const NodeAllocation& a : state_.allocation(job)) {
    const NodeCondition c = state_.node_condition(a.node);
    if (c == NodeCondition::kPoweredDown || c == NodeCondition::kPoweringUp) return false;
  }
  return true;
}

void SimWorld::begin_configured_runs(NodeIndex n) {
  const auto on_node = jobs_on(n);
  const std::vector<JobIndex> jobs(on_node.begin(), on_node.end());  // a run's start may edit the list
  for (JobIndex job : jobs) {
    JobRuntime& rt = state_.job_mut(job);
    if (!rt.configuring) continue;
    if (!nodes_powered_up(job)) continue;
    rt.configuring = false;
    // job_config_fini: the start is reset to now and the time limit counts from it.
    rt.start = now_;
    begin_run(job, scheduler_->kill_time(now_, rt.time_limit_s));
    last_activity_ = now_;
  }
}

void SimWorld::begin_run(JobIndex job, SimTime kill_at) {
  JobRuntime& rt = state_.job_mut(job);
  const JobSpec& spec = state_.spec(job);
  const auto allocation = state_.allocation(job);
  if (cost_ != nullptr) cost_->on_job_start(now_, job);
  if (faults_ != nullptr) {
    const RunCheckpointing plan = faults_->on_job_start(*this, job);
    rt.run_length_s = run_length_s(plan, std::max(0.0, static_cast<double>(spec.run_time_s) - rt.work_saved_s));
  }
  if (speed_model_ != nullptr) {
    if (progress_.size() < state_.job_count()) progress_.resize(state_.job_count());
    Progress& p = progress_[job];
    p.work_left_us = rt.run_length_s * 1e6;
    p.speed = speed_model_->start(job, allocation);
    p.since = now_;
    p.kill_at = kill_at;
    plan_end(job);
    apply_speed_changes();
  } else {
    const SimTime natural_end = now_ + from_seconds_f(rt.run_length_s);
    rt.planned_end = natural_end <= kill_at ? natural_end : kill_at;
    events_.push(rt.planned_end, kJobEnd, job, 0);
  }
  if (observer_) observer_->on_job_started(job, now_);
}

void SimWorld::plan_end(JobIndex job) {
  Progress& p = progress_[job];
  const double us = p.work_left_us / p.speed;
  p.natural_end = now_ + static_cast<SimTime>(std::ceil(us));
  JobRuntime& rt = state_.job_mut(job);
  rt.planned_end = std::max(now_, std::min(p.natural_end, p.kill_at));
  events_.push(rt.planned_end, kJobEnd, job, 0);
}

void SimWorld::apply_speed_changes() {
  speed_changes_.clear();
  speed_model_->take_changes(speed_changes_);
  for (const auto& [job, speed] : speed_changes_) {
    if (state_.job(job).state != JobState::kRunning) continue;
    Progress& p = progress_[job];
    if (speed == p.speed) continue;
    p.work_left_us = std::max(0.0, p.work_left_us - static_cast<double>(now_ - p.since) * p.speed);
    p.since = now_;
    p.speed = speed;
    plan_end(job);
  }
}

void SimWorld::stop_speed(JobIndex job) {
  if (speed_model_ == nullptr) return;
  speed_model_->stop(job);
  apply_speed_changes();
}

void SimWorld::update_node_states(JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) update_node_state(a.node);
}

void SimWorld::update_node_state(NodeIndex n) {
  const bool busy = state_.node_jobs()[n] != 0;
  NodeState s = NodeState::kMixed;
  switch (state_.node_condition(n)) {
    case NodeCondition::kDrain:
      s = busy ? NodeState::kDraining : NodeState::kDrained;
      break;
    case NodeCondition::kFail:
      s = busy ? NodeState::kFailing : NodeState::kFail;
      break;
    case NodeCondition::kDown:
      s = NodeState::kDown;
      break;
    case NodeCondition::kRebooting:
      s = NodeState::kRebooting;
      break;
    case NodeCondition::kPoweredDown:
      s = NodeState::kPoweredDown;
      break;
    case NodeCondition::kPoweringUp:
      s = NodeState::kPoweringUp;
      break;
    case NodeCondition::kPoweringDown:
      s = NodeState::kPoweringDown;
      break;
    case NodeCondition::kNone:
      if (!busy)
        s = NodeState::kIdle;
      else if (state_.free_cpus()[n] == 0)
        s = NodeState::kAllocated;
      break;
  }
  if (s != node_state_[n]) {
    node_state_[n] = s;
    if (observer_) observer_->on_node_state(n, s, now_);
  }
}

double SimWorld::elapsed_reference_s(JobIndex job, SimTime at) const {
  const JobRuntime& rt = state_.job(job);
  if (speed_model_ == nullptr) return to_seconds_f(at - rt.start);
  const Progress& p = progress_[job];
  const double left_us = std::max(0.0, p.work_left_us - static_cast<double>(at - p.since) * p.speed);
  return rt.run_length_s - left_us / 1e6;
}

void SimWorld::end_job(JobIndex job, JobState state, bool completed, SimTime progress_until) {
  const bool configuring = state_.job(job).configuring;
  if (configuring) {
    // Ended while its nodes were resuming: it never ran (no work, no cost share, no speed).
    state_.job_mut(job).configuring = false;
    if (!run_lost_s_.empty()) run_lost_s_[job] = 0;
  } else if (faults_ != nullptr) {
    // Progress up to the stall (if any), at the run's speeds; the stalled time after it is all lost.
    const SimTime start = state_.job(job).start;
    const SimTime until = std::clamp(progress_until, start, now_);
    const double elapsed = elapsed_reference_s(job, until);
    const RunSplit split = faults_->account_run(state_, job, elapsed, completed);
    const double wall = to_seconds_f(until - start);
    run_lost_s_[job] = (elapsed > 0 ? split.lost_s * wall / elapsed : wall) + to_seconds_f(now_ - until);
  } else if (!run_lost_s_.empty()) {
    run_lost_s_[job] = to_seconds_f(now_ - state_.job(job).start);  // no checkpoints: the whole run
  }
  if (cost_ != nullptr && !configuring) cost_->on_job_end(now_, job);
  if (!node_job_list_.empty()) {
    for (const NodeAllocation& a : state_.allocation(job)) {
      auto& list = node_job_list_[a.node];
      auto it = std::find(list.begin(), list.end(), job);
      if (it != list.end()) {
        *it = list.back();
        list.pop_back();
      }
    }
  }
  state_.finish(job, state, now_);
  if (!configuring) stop_speed(job);
  ++ended_;
  last_activity_ = now_;
  if (observer_) observer_->on_job_ended(job, now_);
  if (slurm_.epilog_s > 0) {
    events_.push(now_ + from_seconds(slurm_.epilog_s), kRelease, job, 0);
  } else {
    release_resources(job);
  }
}

void SimWorld::release_resources(JobIndex job) {
  state_.release(job);
  update_node_states(job);
  if (faults_ != nullptr) {
    for (const NodeAllocation& a : state_.allocation(job)) faults_->epilog_check(*this, a.node);
  }
  plane_->on_job_released(job);
  const double lost_s = !run_lost_s_.empty() ? run_lost_s_[job] : -1;  // -1: the whole run
  if (!preempting_.empty() && preempting_[job] != 0) {
    // A job that finished on its own during the grace time is not requeued.
    const bool requeue = preempting_[job] == 2 && state_.job(job).state == JobState::kPreempted &&
                         plane_->admit(job) == PendingReason::kNone;
    preempting_[job] = 0;
    if (requeue) requeue_job(job, lost_s, false);
  } else if (!fault_requeue_.empty() && fault_requeue_[job] != 0) {
    fault_requeue_[job] = 0;
    if (plane_->admit(job) != PendingReason::kNone) return;  // refused (a quota blocked the user): no new run
    requeue_job(job, lost_s, true);
  }
}

void SimWorld::requeue_job(JobIndex job, double lost_s, bool by_fault) {
  state_.requeue(job, now_, lost_s, by_fault);
  // A run with a stop time (--until) is bounded by it, however often a job is requeued before then.
  if (state_.job(job).restarts > kMaxRequeuesPerJob && stop_at_ == kNever) {
    throw RequeueLimitError(
        "job " + std::to_string(state_.spec(job).id) + " was requeued more than " + std::to_string(kMaxRequeuesPerJob) +
        " times, the last at " + std::to_string(to_seconds(now_)) + " s by " +
        (by_fault ? "an interruption (a fault, spot reclaim, node failure or operation)" : "preemption") +
        ", without a run that finished: it cannot finish between interruptions, so the run would requeue it until "
        "the bound on simulated time; fewer interruptions or nodes per job, or --until, bound the run");
  }
  ++pending_;
  last_activity_ = now_;
  plane_->on_job_requeued(job);
}

bool SimWorld::submit(JobIndex job) {
  state_.job_mut(job).submitted = true;
  ++counters_.events;
  ++pending_;
  if (const PendingReason refusal = plane_->admit(job); refusal != PendingReason::kNone) {
    reject_job(job, refusal);  // a controller refused it (a quota blocked the user)
    return false;
  }
  state_.note_job_update();
  last_activity_ = now_;
  plane_->on_job_submitted(job);
  return true;
}

JobIndex SimWorld::submit_job(JobSpec spec, std::uint32_t partition) {
  spec.submit_s = to_seconds(now_);
  const JobIndex job = state_.add_job(std::move(spec), partition);
  ++added_;
  // The mechanics' per-job records grow with the table (the controllers grow theirs when they first hear of it).
  if (!node_job_list_.empty()) {
    fault_requeue_.push_back(0);
    run_lost_s_.push_back(-1);
  }
  if (faults_ != nullptr) faults_->on_jobs_added();
  if (cost_ != nullptr) cost_->on_jobs_added();
  const ClusterConfig& cluster = state_.config();
  if (!can_ever_fit(state_.spec(job), cluster.partitions[partition], cluster)) {
    // As the runner does for a loaded job: slurmctld refuses it at submit; never queued, ended now.
    state_.end_pending(job, JobState::kCancelled, now_);
    JobRuntime& rt = state_.job_mut(job);
    rt.submitted = true;
    rt.rejected = true;
    rt.reason = PendingReason::kBadConstraints;
    rt.time_limit_s = effective_time_limit_s(state_.spec(job), cluster.partitions[partition]);
    ++counters_.events;
    return job;
  }
  submit(job);
  return job;
}

bool SimWorld::set_job_time_limit(JobIndex job, std::int64_t time_limit_s) {
  const JobRuntime& rt = state_.job(job);
  if (rt.state != JobState::kPending || !rt.submitted) return false;
  plane_->on_job_updated(job, JobUpdate{JobUpdate::Kind::kTimeLimit, 0, time_limit_s});
  return true;
}

void SimWorld::start_run() {
  // The order in which components arm their first events is part of the run (events of one instant fire in push
  // order), so it stays as it has always been: scheduler, operations, costs, quotas, spot reclaims, the pool's
  // initial state and its scaling, then faults.
  plane_->start(ControllerId::kScheduler);
  for (NodeIndex n : absent_at_start_) {  // nodes an operation adds later are not there yet
    power_->set_deleted(n, true);
    set_node_condition(n, NodeCondition::kPoweredDown);
    plane_->on_node_deleted(n);
  }
  plane_->start(ControllerId::kOperations);
  if (cost_ != nullptr) cost_->start(*this);
  plane_->start(ControllerId::kQuota);
  if (cost_ != nullptr) cost_->start_spot(*this);
  if (power_ != nullptr) {
    for (NodeIndex n : power_->initially_powered_down()) set_node_condition(n, NodeCondition::kPoweredDown);
  }
  plane_->start(ControllerId::kScaling);
  if (faults_ != nullptr) faults_->start(*this);
  plane_->start(ControllerId::kHealth);
}

void SimWorld::apply_initial_state() {
  for (const NodeOutAtStart& out : nodes_out_at_start_) {
    set_node_condition(out.node, out.condition, out.reason);
    if (out.back_at != kNever) {
      events_.push(std::max(out.back_at, now_), kReturned, out.node, 0);
      expect_node_return(out.back_at);
    }
  }
  for (const RunningAtStart& run : running_at_start_) {
    const JobIndex job = run.job;
    JobRuntime& rt = state_.job_mut(job);
    rt.submitted = true;
    state_.allocate(job, run.allocation, run.start);
    ++started_;
    rt.reason = PendingReason::kNone;
    rt.run_length_s = to_seconds_f(run.end - run.start);
    rt.planned_end = std::max(now_, std::min(run.end, run.kill_at));
    if (!node_job_list_.empty()) {
      for (const NodeAllocation& a : run.allocation) node_job_list_[a.node].push_back(job);
    }
    events_.push(rt.planned_end, kJobEnd, job, 0);
    update_node_states(job);
    if (observer_) observer_->on_job_started(job, run.start);
    plane_->on_job_adopted(job);
  }
  last_activity_ = now_;
}

void SimWorld::dispatch(const Event& event) {
  ++counters_.events;
  switch (event.kind) {
    case kJobEnd: {
      const auto job = static_cast<JobIndex>(event.target);
      const JobRuntime& rt = state_.job(job);
      if (rt.state != JobState::kRunning || rt.planned_end != event.time) return;  // stale
      const JobSpec& spec = state_.spec(job);
      const bool finished =
          !rt.configuring && (speed_model_ != nullptr ? progress_[job].natural_end <= now_
                                                      : rt.start + from_seconds_f(rt.run_length_s) <= now_);
      const bool preempted = !preempting_.empty() && preempting_[job] != 0;
      if (finished && faults_ != nullptr) {
        // A job stalled by a fault (hang, dead host) makes no progress: its interrupt ends it, not its work.
        const SimTime until = faults_->stalled_until(job, now_);
        if (until != kNever && until > now_) {
          state_.job_mut(job).planned_end = until;
          return;
        }
      }
      end_job(job, finished ? spec.outcome : (preempted ? JobState::kPreempted : JobState::kTimeout), finished);
      break;
    }
    case kRelease:
      release_resources(static_cast<JobIndex>(event.target));
      break;
    case kFault:
      faults_->on_event(*this, event.target, event.generation);
      break;
    case kPower:
      on_power_event(static_cast<NodeIndex>(event.target), event.generation);
      break;
    case kCost:
      cost_->on_event(*this, event.target, event.generation);
      break;
    case kRecovered:
      on_recovered(static_cast<NodeIndex>(event.target), event.generation);
      break;
    case kReturned:
      if (held_out(state_.node_condition(static_cast<NodeIndex>(event.target))) ||
          state_.node_condition(static_cast<NodeIndex>(event.target)) == NodeCondition::kPoweredDown)
        set_node_condition(static_cast<NodeIndex>(event.target), NodeCondition::kNone);
      break;
    case kReplaced:
      if (state_.node_condition(static_cast<NodeIndex>(event.target)) == NodeCondition::kPoweredDown)
        set_node_condition(static_cast<NodeIndex>(event.target), NodeCondition::kNone);
      break;
    case kTimer: {
      const auto controller = static_cast<std::size_t>(event.target >> 32);
      const auto timer = static_cast<TimerId>(event.target & 0xffffffffU);
      if (event.generation != timer_generation_[controller][timer]) return;  // replaced by a later set_timer
      plane_->on_timer(static_cast<ControllerId>(controller), timer);
      break;
    }
    default:
      break;
  }
}

void SimWorld::run(const std::function<void(const SimWorld&)>& progress, std::uint64_t progress_every) {
  assert(plane_ != nullptr && scheduler_ != nullptr);
  // The loaded jobs, in submit order (jobs a live run adds later are submitted as they come). Looked up through the
  // state each time, not held: add_job replaces the specs' vector while a live run's copy shares the old one, which
  // goes when the copy does.
  const std::uint64_t job_count = state_.job_count();
  now_ = job_count > 0 ? from_seconds(state_.spec(0).submit_s) : 0;
  start_run();
  if (!running_at_start_.empty() || !nodes_out_at_start_.empty()) apply_initial_state();
  std::uint64_t next_progress = progress_every;
  while (true) {
    const bool have_submit = next_submit_ < job_count;
    if (!have_submit && events_.empty()) break;
    SimTime t = kNever;
    if (have_submit) t = from_seconds(state_.spec(static_cast<JobIndex>(next_submit_)).submit_s);
    if (!events_.empty() && events_.top().time < t) t = events_.top().time;
    // Only the scheduler's periodic timers are left, nothing runs, and a full round of passes has already
    // looked at whatever is still pending: nothing can change any more.
    // Nodes coming back from repair can start jobs that wait for them.
    const SimTime expected = pending_ > 0 ? std::max(expected_activity_, latest_return_) : expected_activity_;
    if (!have_submit && started_ == ended_ && t > std::max(last_activity_, expected) + idle_horizon_) break;
    if (t > stop_at_) {
      now_ = stop_at_;
      break;
    }
    if (gate_ != nullptr && gate_->before_instant(*this, t)) {
      // An operator acted between two instants (at the paced time now()): that is an instant of its own, whose end
      // the controllers hear (a classic policy plans a submitted job now, not at the next event); then look for the
      // next instant again, which an action may have brought forward.
      plane_->on_instant_end();
      continue;
    }
    if (t > from_seconds(kMaxSimulatedSeconds)) {
      throw SimulatedTimeLimitError(
          "the run reached " + std::to_string(kMaxSimulatedSeconds) + " simulated seconds (about 3,170 years) with " +
          std::to_string(job_count - ended_) + " jobs not ended, the bound on simulated time; its jobs' times chain " +
          "past what the simulator models");
    }
    now_ = t;
    ++counters_.instants;
    // At one instant: heap events (ends, releases, timers) in push order, then submits; repeat while any remain.
    // With scheduling_point "event" the controllers hear of an instant's end after each of them.
    while (true) {
      if (!events_.empty() && events_.top().time == t) {
        dispatch(events_.pop());
        if (pass_after_every_event_) plane_->on_instant_end();
        continue;
      }
      if (next_submit_ < job_count && from_seconds(state_.spec(static_cast<JobIndex>(next_submit_)).submit_s) == t) {
        const auto job = static_cast<JobIndex>(next_submit_++);
        if (state_.job(job).submitted) continue;  // running at the start (set_initial_state)
        if (submit(job) && pass_after_every_event_) plane_->on_instant_end();
        continue;
      }
      break;
    }
    plane_->on_instant_end();
    if (progress && counters_.events >= next_progress) {
      next_progress = counters_.events + progress_every;
      progress(*this);
    }
  }
}

}  // namespace gputwin
