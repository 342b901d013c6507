#include "sim/sim_world.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace gputwin {

SimWorld::SimWorld(ClusterState& state, const SlurmParameters& slurm, RunObserver* observer)
    : state_(state), slurm_(slurm), observer_(observer), node_state_(state.node_count(), NodeState::kIdle) {
  events_.reserve(1024);
  const std::int64_t longest_period = std::max<std::int64_t>({slurm.sched_interval_s, slurm.bf_interval_s, 1});
  idle_horizon_ = from_seconds(2 * longest_period + slurm.batch_sched_delay_s + slurm.epilog_s + 2);
}

void SimWorld::push_component(SimTime at, EventKind kind, std::uint64_t target, std::uint32_t generation) {
  assert(at >= now_);
  events_.push(at, kind, target, generation);
}

void SimWorld::enable_node_conditions() {
  if (node_condition_.empty()) node_condition_.assign(state_.node_count(), NodeCondition::kNone);
}

void SimWorld::set_autoscaler(Autoscaler* autoscaler) {
  autoscaler_ = autoscaler;
  if (autoscaler_ == nullptr) return;
  enable_node_conditions();
  listed_.assign(state_.job_count(), 0);
  if (autoscaler_->allocates_powered_down()) {
    enable_job_tracking();
    power_save_ = true;
  }
}

void SimWorld::push_autoscaler(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kAutoscaler, target, generation);
}

void SimWorld::list_pending(JobIndex job) {
  if (autoscaler_ == nullptr || listed_[job]) return;
  listed_[job] = 1;
  pending_list_.push_back(job);
}

void SimWorld::enable_job_tracking() {
  if (!node_job_list_.empty()) return;
  node_job_list_.assign(state_.node_count(), {});
  fault_requeue_.assign(state_.job_count(), 0);
  run_lost_s_.assign(state_.job_count(), -1);
}

void SimWorld::set_lifecycle(NodeLifecycle* lifecycle) {
  lifecycle_ = lifecycle;
  if (lifecycle_ == nullptr) return;
  enable_node_conditions();
  enable_job_tracking();
}

void SimWorld::set_cost_meter(CostMeter* meter) {
  cost_ = meter;
  if (cost_ == nullptr) return;
  enable_node_conditions();
  enable_job_tracking();
}

void SimWorld::set_operations(ClusterOperations* operations) {
  operations_ = operations;
  if (operations_ == nullptr) return;
  enable_node_conditions();
  enable_job_tracking();
}

void SimWorld::push_operation(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kOperation, target, generation);
}

void SimWorld::push_cost(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kCost, target, generation);
}

void SimWorld::cancel_job(JobIndex job) {
  JobRuntime& rt = state_.job_mut(job);
  if (rt.state == JobState::kRunning) {
    rt.planned_end = now_;
    end_job(job, JobState::kCancelled, false);
  } else if (rt.state == JobState::kPending && rt.submitted) {
    state_.end_pending(job, JobState::kCancelled, now_);
    rt.reason = PendingReason::kAssocGrpBillingMinutes;
    --pending_;
    last_activity_ = now_;
    if (observer_ != nullptr) observer_->on_job_reason(job, rt.reason, now_);
    scheduler_->on_job_cancelled(job);
  }
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

void SimWorld::reclaim_node(NodeIndex n) {
  fail_jobs_on(n, InterruptionCause::kSpotReclaim);
  if (autoscaler_ != nullptr && autoscaler_->owns(n)) {
    autoscaler_->on_node_reclaimed(*this, n);  // powered off first: the POWERED_DOWN node may be created again
    set_node_condition(n, NodeCondition::kPoweredDown);
  } else {
    set_node_condition(n, NodeCondition::kPoweredDown);
    const SimTime back = now_ + from_seconds_f(ColdStart{}.total_s());
    events_.push(back, kReplaced, n, 0);
    note_node_return(back);
  }
}

void SimWorld::push_lifecycle(SimTime at, std::uint64_t target, std::uint32_t generation) {
  push_component(at, kLifecycle, target, generation);
}

void SimWorld::set_node_condition(NodeIndex n, NodeCondition condition) {
  if (node_condition_[n] == condition) return;
  if (cost_ != nullptr) cost_->on_node_condition(now_, n, node_condition_[n], condition);
  if (condition == NodeCondition::kPoweredDown && lifecycle_ != nullptr) lifecycle_->on_node_removed(*this, n);
  if (condition == NodeCondition::kNone && autoscaler_ != nullptr) autoscaler_->on_node_in_service(*this, n);
  node_condition_[n] = condition;
  condition_changes_.push_back(NodeConditionEvent{now_, n, condition});
  // Power saving offers POWERED_DOWN nodes to the scheduler, weighted to be used last (node_mgr.c).
  if (condition == NodeCondition::kPoweredDown && autoscaler_ != nullptr && autoscaler_->owns(n))
    autoscaler_->on_node_taken(*this, n);  // removed by an operation (no effect when the autoscaler did it)
  // Only a node the autoscaler has powered off (not one an operation removed) can be resumed for a job.
  const bool power_saved = power_save_ && autoscaler_->owns(n);
  const bool allocatable = condition == NodeCondition::kNone ||
                           (power_saved && condition == NodeCondition::kPoweredDown && autoscaler_->powered_off(n));
  if (power_saved) {
    const std::uint32_t weight = state_.config().nodes[n].weight;
    state_.set_node_weight(n, condition == NodeCondition::kPoweredDown ? weight | kPoweredDownWeight : weight);
  }
  state_.set_node_schedulable(n, allocatable && state_.config().nodes[n].available);
  last_activity_ = now_;
  update_node_state(n);
  if (scheduler_ != nullptr) scheduler_->on_nodes_changed();
  if (power_saved && condition == NodeCondition::kNone) begin_configured_runs(n);
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

void SimWorld::set_timer(TimerId timer, SimTime at) {
  assert(at >= now_);
  if (timer >= timer_generation_.size()) timer_generation_.resize(timer + 1, 0);
  events_.push(at, kTimer, timer, ++timer_generation_[timer]);
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
  if (power_save_) {
    // Power saving: a job given POWERED_DOWN nodes holds them CONFIGURING while they resume (power_save.c,
    // job_config_fini); its run begins when the last one is up.
    for (const NodeAllocation& a : allocation) {
      if (node_condition(a.node) == NodeCondition::kPoweredDown) autoscaler_->request_resume(*this, a.node, job);
    }
    if (!nodes_powered_up(job)) {
      rt.configuring = true;
      rt.planned_end = kNever;
      update_node_states(job);
      autoscaler_->on_job_start(job);
      return;
    }
  }
  begin_run(job, kill_at);
  update_node_states(job);
  if (autoscaler_ != nullptr) autoscaler_->on_job_start(job);
}

bool SimWorld::nodes_powered_up(JobIndex job) const {
  // A node drained meanwhile counts as up: DRAIN keeps the jobs allocated to it, as in Slurm.
  for (const NodeAllocation& a : state_.allocation(job)) {
    const NodeCondition c = node_condition(a.node);
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
  if (lifecycle_ != nullptr) {
    const RunCheckpointing plan = lifecycle_->on_job_start(*this, job);
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
  switch (node_condition_.empty() ? NodeCondition::kNone : node_condition_[n]) {
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
  } else if (lifecycle_ != nullptr) {
    // Progress up to the stall (if any), at the run's speeds; the stalled time after it is all lost.
    const SimTime start = state_.job(job).start;
    const SimTime until = std::clamp(progress_until, start, now_);
    const double elapsed = elapsed_reference_s(job, until);
    const RunSplit split = lifecycle_->account_run(state_, job, elapsed, completed);
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
    release_job(job);
  }
}

void SimWorld::release_job(JobIndex job) {
  state_.release(job);
  update_node_states(job);
  if (lifecycle_ != nullptr) lifecycle_->on_job_released(*this, job);
  if (autoscaler_ != nullptr) autoscaler_->on_job_released(*this, job);
  if (operations_ != nullptr) operations_->on_job_released(*this, job);
  scheduler_->on_job_released(job);
  const double lost_s = !run_lost_s_.empty() ? run_lost_s_[job] : -1;  // -1: the whole run
  if (!preempting_.empty() && preempting_[job] != 0) {
    // A job that finished on its own during the grace time is not requeued.
    const bool requeue = preempting_[job] == 2 && state_.job(job).state == JobState::kPreempted &&
                         !(cost_ != nullptr && cost_->refuse_run(job, now_));
    preempting_[job] = 0;
    if (requeue) requeue_job(job, lost_s, false);
  } else if (!fault_requeue_.empty() && fault_requeue_[job] != 0) {
    fault_requeue_[job] = 0;
    if (cost_ != nullptr && cost_->refuse_run(job, now_)) return;  // the user is blocked by a quota: no new run
    requeue_job(job, lost_s, true);
  }
}

void SimWorld::requeue_job(JobIndex job, double lost_s, bool by_fault) {
  state_.requeue(job, now_, lost_s, by_fault);
  ++pending_;
  list_pending(job);
  last_activity_ = now_;
  scheduler_->on_job_requeued(job);
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
      if (finished && lifecycle_ != nullptr) {
        // A job stalled by a fault (hang, dead host) makes no progress: its interrupt ends it, not its work.
        const SimTime until = lifecycle_->stalled_until(job, now_);
        if (until != kNever && until > now_) {
          state_.job_mut(job).planned_end = until;
          return;
        }
      }
      end_job(job, finished ? spec.outcome : (preempted ? JobState::kPreempted : JobState::kTimeout), finished);
      break;
    }
    case kRelease:
      release_job(static_cast<JobIndex>(event.target));
      break;
    case kLifecycle:
      lifecycle_->on_event(*this, event.target, event.generation);
      break;
    case kAutoscaler:
      autoscaler_->on_event(*this, event.target, event.generation);
      break;
    case kCost:
      cost_->on_event(*this, event.target, event.generation);
      break;
    case kOperation:
      operations_->on_event(*this, event.target, event.generation);
      break;
    case kReplaced:
      if (node_condition_[event.target] == NodeCondition::kPoweredDown)
        set_node_condition(static_cast<NodeIndex>(event.target), NodeCondition::kNone);
      break;
    case kTimer:
      if (event.generation != timer_generation_[event.target]) return;  // replaced by a later set_timer
      scheduler_->on_timer(static_cast<TimerId>(event.target));
      break;
    default:
      break;
  }
}

void SimWorld::run(const std::function<void(const SimWorld&)>& progress, std::uint64_t progress_every) {
  assert(scheduler_ != nullptr);
  const auto& specs = state_.specs();
  const std::uint64_t job_count = specs.size();
  now_ = job_count > 0 ? from_seconds(specs.front().submit_s) : 0;
  scheduler_->on_start();
  if (operations_ != nullptr) operations_->start(*this);
  if (cost_ != nullptr) cost_->start(*this);
  if (autoscaler_ != nullptr) autoscaler_->start(*this);
  if (lifecycle_ != nullptr) lifecycle_->start(*this);
  std::uint64_t next_progress = progress_every;
  while (true) {
    const bool have_submit = next_submit_ < job_count;
    if (!have_submit && events_.empty()) break;
    SimTime t = kNever;
    if (have_submit) t = from_seconds(specs[next_submit_].submit_s);
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
    now_ = t;
    ++counters_.instants;
    // At one instant: heap events (ends, releases, timers) in push order, then submits; repeat while any remain.
    while (true) {
      if (!events_.empty() && events_.top().time == t) {
        dispatch(events_.pop());
        continue;
      }
      if (next_submit_ < job_count && from_seconds(specs[next_submit_].submit_s) == t) {
        const auto job = static_cast<JobIndex>(next_submit_++);
        state_.job_mut(job).submitted = true;
        ++counters_.events;
        ++pending_;
        if (cost_ != nullptr && cost_->refuse_run(job, t)) {  // a quota blocked the user: the submission is refused
          reject_job(job, PendingReason::kAssocGrpBillingMinutes);
          continue;
        }
        list_pending(job);
        state_.note_job_update();
        last_activity_ = t;
        scheduler_->on_submit(job);
        continue;
      }
      break;
    }
    scheduler_->on_instant_end();
    if (progress && counters_.events >= next_progress) {
      next_progress = counters_.events + progress_every;
      progress(*this);
    }
  }
}

}  // namespace gputwin
