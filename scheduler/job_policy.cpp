#include "scheduler/job_policy.hpp"

#include <algorithm>
#include <limits>

#include "scheduler/scheduler.hpp"

namespace gputwin {
namespace {

constexpr std::int64_t kNoRelease = std::numeric_limits<std::int64_t>::max();

bool is_final(JobState s) {
  return s != JobState::kPending && s != JobState::kRunning;
}

}  // namespace

JobPolicy::JobPolicy(const ClusterState& state, const AccountingConfig& accounting, const PriorityConfig& priority)
    : state_(state), accounting_(accounting), priority_(priority), enforce_limits_(accounting.enforce.limits) {
  // QOS table: "normal" first (as defined, or Slurm's default), then the others in definition order.
  QosConfig normal;
  normal.name = "normal";
  for (const QosConfig& q : accounting_.qos) {
    if (q.name == "normal") normal = q;
  }
  qos_.push_back(normal);
  for (const QosConfig& q : accounting_.qos) {
    if (q.name != "normal") qos_.push_back(q);
  }
  if (enforce_limits_) limits_ = std::make_unique<LimitTracker>(tree_, qos_);
  qos_preempts_.assign(qos_.size(), std::vector<std::uint8_t>(qos_.size(), 0));
  for (std::size_t a = 0; a < qos_.size(); ++a) {
    for (const std::string& name : qos_[a].preempt) {
      const std::int64_t b = qos_index(name);
      if (b >= 0) qos_preempts_[a][static_cast<std::size_t>(b)] = 1;
    }
  }
  assoc_priority_.push_back(0);  // root
  for (const AccountConfig& a : accounting_.accounts) {
    const auto parent = static_cast<AssocId>(tree_.find_account(a.parent));
    const AssocId id = tree_.add_account(a.name, parent, a.fairshare, a.fairshare_parent);
    assoc_priority_.push_back(a.priority != 0 ? a.priority : assoc_priority_[parent]);
    if (limits_) limits_->set_assoc_limits(id, a.limits);
  }
  for (const UserAssocConfig& u : accounting_.users) {
    const auto account = static_cast<AssocId>(tree_.find_account(u.account));
    const AssocId id = tree_.add_user(u.user, account, u.fairshare, u.fairshare_parent);
    assoc_priority_.push_back(u.priority != 0 ? u.priority : assoc_priority_[account]);
    if (limits_) limits_->set_assoc_limits(id, u.limits);
    if (!u.default_qos.empty()) default_qos_[id] = u.default_qos;
  }
  if (priority_.multifactor) {
    engine_ = std::make_unique<PriorityEngine>(priority_, state_.config(), qos_, tree_, assoc_priority_);
  }
  acct_.resize(state_.job_count());
}

JobPolicy::~JobPolicy() = default;

std::int64_t JobPolicy::qos_index(const std::string& name) const {
  for (std::size_t i = 0; i < qos_.size(); ++i) {
    if (qos_[i].name == name) return static_cast<std::int64_t>(i);
  }
  return -1;
}

AssocId JobPolicy::resolve_association(const JobSpec& spec, bool& ok) {
  ok = true;
  const std::string account_name = spec.account.empty() ? "default" : spec.account;
  std::int64_t account = tree_.find_account(account_name);
  if (account < 0) {
    if (!accounting_.auto_associations && accounting_.enforce.associations) {
      ok = false;
      return 0;
    }
    account = tree_.add_account(account_name, 0, 1);
    assoc_priority_.push_back(0);
  }
  const std::string user_name = spec.user.empty() ? "user" : spec.user;
  std::int64_t user = tree_.find_user(user_name, static_cast<AssocId>(account));
  if (user < 0) {
    if (!accounting_.auto_associations && accounting_.enforce.associations) {
      ok = false;
      return 0;
    }
    user = tree_.add_user(user_name, static_cast<AssocId>(account), 1);
    assoc_priority_.push_back(assoc_priority_[static_cast<std::size_t>(account)]);
  }
  return static_cast<AssocId>(user);
}

PendingReason JobPolicy::submit(JobIndex j, std::int64_t now_s) {
  if (j >= acct_.size()) acct_.resize(state_.job_count());  // a job a live run added to the table
  const JobSpec& spec = state_.spec(j);
  JobAcct& a = acct_[j];
  bool ok = true;
  a.assoc = resolve_association(spec, ok);
  if (!ok) return PendingReason::kInvalidAccount;
  const std::string user_name = spec.user.empty() ? "user" : spec.user;
  a.user = user_ids_.try_emplace(user_name, static_cast<std::uint32_t>(user_ids_.size())).first->second;

  std::string qos_name = spec.qos;
  if (qos_name.empty()) {
    if (const auto it = default_qos_.find(a.assoc); it != default_qos_.end()) qos_name = it->second;
  }
  if (qos_name.empty()) qos_name = "normal";
  std::int64_t qos = qos_index(qos_name);
  if (qos < 0) {
    if (accounting_.enforce.qos) return PendingReason::kInvalidQos;
    qos = 0;
  }
  a.qos = static_cast<std::uint32_t>(qos);
  const PartitionConfig& part = state_.config().partitions[state_.job(j).partition];
  a.part_qos = part.qos.empty() ? -1 : static_cast<std::int32_t>(qos_index(part.qos));

  if (limits_) {
    if (const PendingReason r = limits_->check_submit(subject(j), requested_tres(j)); r != PendingReason::kNone)
      return r;
    limits_->add_submitted(subject(j));
  }

  a.held = spec.hold_until_s >= 0;
  if (a.held && spec.hold_until_s != kHeldForever) {
    hold_releases_.emplace_back(spec.hold_until_s, j);
    std::push_heap(hold_releases_.begin(), hold_releases_.end(), std::greater<>());
  }
  if (!spec.dependency.empty()) {
    Dependency dep;
    std::string error;
    parse_dependency(spec.dependency, dep, error);  // checked when the workload was loaded
    a.dependency = static_cast<std::int32_t>(dependencies_.size());
    dependencies_.push_back(std::move(dep));
    if (job_by_id_.empty()) {
      for (JobIndex k = 0; k < state_.job_count(); ++k) {
        const JobSpec& s = state_.spec(k);
        job_by_id_.emplace(s.id, k);
        if (s.array_job_id != 0) array_tasks_[s.array_job_id].push_back(k);
      }
    }
    const auto& terms = dependencies_.back().terms;
    const bool singleton = std::any_of(terms.begin(), terms.end(),
                                       [](const DependencyTerm& t) { return t.type == DependencyType::kSingleton; });
    if (singleton && singleton_groups_.empty()) {
      for (JobIndex k = 0; k < state_.job_count(); ++k) {
        singleton_groups_[state_.spec(k).user + '\n' + state_.spec(k).name].push_back(k);
      }
    }
  }
  a.conditions = a.held || spec.begin_s > now_s || a.dependency >= 0 || spec.array_max_running > 0;
  if (priority_.accrue_always) {
    a.accrue_s = spec.submit_s;
  } else if (!a.held && a.dependency < 0) {
    a.accrue_s = std::max(spec.submit_s, spec.begin_s);  // accrue_time = begin_time (the eligible time)
  }
  a.eligible_once = !a.conditions || (!a.held && a.dependency < 0 && spec.begin_s <= now_s);

  if (spec.priority > 0) {
    a.fixed_priority = true;  // sbatch --priority=N (an operator's): the decay thread leaves it
    a.admin_priority = spec.priority;
  }
  a.priority = a.held ? 0 : fresh_priority(j, now_s);
  return PendingReason::kNone;
}

std::uint32_t JobPolicy::fresh_priority(JobIndex j, std::int64_t now_s) {
  const JobAcct& a = acct_[j];
  if (a.fixed_priority) return a.admin_priority;
  if (engine_) return engine_->factors(state_.spec(j), inputs(j), now_s).priority;
  return next_basic_priority_ > 1 ? --next_basic_priority_ : 1;  // priority/basic: by submission, or release
}

std::uint32_t JobPolicy::priority(JobIndex j) const {
  return acct_[j].priority;
}

PriorityInputs JobPolicy::inputs(JobIndex j) const {
  const JobAcct& a = acct_[j];
  return PriorityInputs{a.assoc, a.qos, state_.job(j).partition, a.accrue_s, state_.job(j).time_limit_s};
}

LimitSubject JobPolicy::subject(JobIndex j) const {
  const JobAcct& a = acct_[j];
  return LimitSubject{a.assoc, a.user, a.qos, a.part_qos, state_.job(j).time_limit_s};
}

TresCount JobPolicy::tres_of(std::span<const NodeAllocation> allocation) {
  TresCount t;
  for (const NodeAllocation& n : allocation) {
    t.cpu += n.cpus;
    t.mem_mb += static_cast<std::int64_t>(n.mem_mb);
    t.gpu += n.gpus;
    t.node += 1;
  }
  return t;
}

TresCount JobPolicy::requested_tres(JobIndex j) const {
  const JobSpec& s = state_.spec(j);
  const std::int64_t nodes = std::max<std::uint32_t>(s.nodes, 1);
  return TresCount{s.cpus, static_cast<std::int64_t>(s.mem_per_node_mb) * nodes, nodes,
                   static_cast<std::int64_t>(s.gpus_per_node) * nodes};
}

DependencyStatus JobPolicy::target_status(const DependencyTerm& term, std::uint64_t id, std::int64_t now_s) {
  std::vector<JobIndex> targets;
  if (const auto it = array_tasks_.find(id); it != array_tasks_.end()) {
    targets = it->second;
  } else if (const auto jt = job_by_id_.find(id); jt != job_by_id_.end()) {
    targets.push_back(jt->second);
  } else {
    return DependencyStatus::kSatisfied;  // not in the workload: ended before the trace began
  }
  DependencyStatus result = DependencyStatus::kSatisfied;
  for (JobIndex t : targets) {
    const JobRuntime& rt = state_.job(t);
    const bool ended = is_final(rt.state);
    DependencyStatus s = DependencyStatus::kWaiting;
    switch (term.type) {
      case DependencyType::kAfter:
        if (ended || (rt.start >= 0 && now_s >= to_seconds(rt.start) + term.after_delay_s))
          s = DependencyStatus::kSatisfied;
        break;
      case DependencyType::kAfterAny:
        if (ended) s = DependencyStatus::kSatisfied;
        break;
      case DependencyType::kAfterOk:
        if (ended) s = rt.state == JobState::kCompleted ? DependencyStatus::kSatisfied : DependencyStatus::kNever;
        break;
      case DependencyType::kAfterNotOk:
        if (ended) s = rt.state == JobState::kCompleted ? DependencyStatus::kNever : DependencyStatus::kSatisfied;
        break;
      case DependencyType::kSingleton:
        break;
    }
    if (s == DependencyStatus::kNever) return s;
    if (s == DependencyStatus::kWaiting) result = s;
  }
  return result;
}

DependencyStatus JobPolicy::dependency_status(JobIndex j, std::int64_t now_s) {
  const Dependency& dep = dependencies_[static_cast<std::size_t>(acct_[j].dependency)];
  std::vector<DependencyStatus> terms;
  for (const DependencyTerm& term : dep.terms) {
    if (term.type == DependencyType::kSingleton) {
      // Any other unfinished job of the same user and name that is running, or pending and submitted earlier.
      const JobSpec& spec = state_.spec(j);
      DependencyStatus s = DependencyStatus::kSatisfied;
      for (JobIndex k : singleton_groups_[spec.user + '\n' + spec.name]) {
        if (k == j) continue;
        const JobRuntime& rt = state_.job(k);
        if (!rt.submitted || is_final(rt.state)) continue;
        if (rt.state == JobState::kRunning || k < j) s = DependencyStatus::kWaiting;
      }
      terms.push_back(s);
      continue;
    }
    DependencyStatus s = DependencyStatus::kSatisfied;
    for (std::uint64_t id : term.job_ids) {
      const DependencyStatus t = target_status(term, id, now_s);
      if (t == DependencyStatus::kNever) {
        s = t;
        break;
      }
      if (t == DependencyStatus::kWaiting) s = t;
    }
    terms.push_back(s);
  }
  return combine_dependency(dep.any, terms);
}

PendingReason JobPolicy::eligibility(JobIndex j, std::int64_t now_s) {
  JobAcct& a = acct_[j];
  if (!a.conditions) return PendingReason::kNone;
  if (a.admin_held) return PendingReason::kJobHeldAdmin;
  const JobSpec& spec = state_.spec(j);
  if (!a.eligible_once) {
    if (a.held) return PendingReason::kJobHeldUser;
    if (spec.begin_s > now_s || a.requeue_begin_s > now_s) return PendingReason::kBeginTime;
    if (a.dependency >= 0) {
      const DependencyStatus s = dependency_status(j, now_s);
      if (s == DependencyStatus::kWaiting) return PendingReason::kDependency;
      if (s == DependencyStatus::kNever) return PendingReason::kDependencyNeverSatisfied;
    }
    a.eligible_once = true;
    if (!priority_.accrue_always && a.accrue_s < 0) {
      a.accrue_s = a.dependency >= 0 ? now_s : std::max({spec.submit_s, spec.begin_s, a.requeue_begin_s});
    }
  }
  if (spec.array_max_running > 0) {
    const auto it = array_running_.find(spec.array_job_id);
    if (it != array_running_.end() && it->second >= spec.array_max_running) return PendingReason::kJobArrayTaskLimit;
  }
  return PendingReason::kNone;
}

PendingReason JobPolicy::pre_select(JobIndex j) const {
  return limits_ ? limits_->check_pre_select(subject(j)) : PendingReason::kNone;
}

PendingReason JobPolicy::post_select(JobIndex j, std::span<const NodeAllocation> allocation) const {
  return limits_ ? limits_->check_post_select(subject(j), tres_of(allocation)) : PendingReason::kNone;
}

void JobPolicy::on_start(JobIndex j, std::span<const NodeAllocation> allocation, std::int64_t now_s) {
  (void)now_s;
  JobAcct& a = acct_[j];
  const JobSpec& spec = state_.spec(j);
  if (limits_) limits_->add_running(subject(j), tres_of(allocation));
  if (spec.array_max_running > 0) ++array_running_[spec.array_job_id];
  if (engine_) {
    const TresCount t = tres_of(allocation);
    a.billing = engine_->billing(state_.job(j).partition, static_cast<std::uint64_t>(t.cpu),
                                 static_cast<std::uint64_t>(t.mem_mb), static_cast<std::uint64_t>(t.node),
                                 static_cast<std::uint64_t>(t.gpu));
    a.running_pos = static_cast<std::uint32_t>(running_.size());
    running_.push_back(j);
  }
}

void JobPolicy::on_end(JobIndex j) {
  JobAcct& a = acct_[j];
  const JobSpec& spec = state_.spec(j);
  const JobRuntime& rt = state_.job(j);
  if (rt.start < 0) {  // left the queue without running
    if (limits_) limits_->remove_submitted(subject(j));
    return;
  }
  if (limits_) limits_->remove_running(subject(j), tres_of(state_.allocation(j)));
  if (spec.array_max_running > 0) --array_running_[spec.array_job_id];
  if (engine_) {
    engine_->charge_end(UsageCharge{a.assoc, a.qos, to_seconds(rt.start), a.billing}, to_seconds(rt.end));
    const JobIndex last = running_.back();
    running_[a.running_pos] = last;
    acct_[last].running_pos = a.running_pos;
    running_.pop_back();
  }
}

void JobPolicy::start_clock(std::int64_t start_s) {
  if (engine_) engine_->tick(start_s, {});
}

bool JobPolicy::recalculate(std::int64_t now_s, std::span<const JobIndex> pending) {
  if (!engine_) return false;
  std::vector<UsageCharge> charges;
  charges.reserve(running_.size());
  for (JobIndex j : running_) {
    const JobAcct& a = acct_[j];
    charges.push_back(UsageCharge{a.assoc, a.qos, to_seconds(state_.job(j).start), a.billing});
  }
  engine_->tick(now_s, charges);
  bool changed = false;
  for (JobIndex j : pending) {
    JobAcct& a = acct_[j];
    if (a.held || a.admin_held || a.fixed_priority) continue;  // held jobs keep priority 0, fixed ones theirs
    const std::uint32_t p = engine_->factors(state_.spec(j), inputs(j), now_s).priority;
    changed = changed || p != a.priority;
    a.priority = p;
  }
  return changed;
}

std::int64_t JobPolicy::next_release_s() const {
  return hold_releases_.empty() ? kNoRelease : hold_releases_.front().first;
}

bool JobPolicy::release_due(std::int64_t now_s) {
  bool any = false;
  while (!hold_releases_.empty() && hold_releases_.front().first <= now_s) {
    std::pop_heap(hold_releases_.begin(), hold_releases_.end(), std::greater<>());
    const JobIndex j = hold_releases_.back().second;
    hold_releases_.pop_back();
    JobAcct& a = acct_[j];
    a.held = false;
    const JobSpec& spec = state_.spec(j);
    if (!priority_.accrue_always && a.dependency < 0) a.accrue_s = std::max(now_s, spec.begin_s);
    if (a.admin_held) continue;  // an operator's hold keeps it at 0
    a.priority = fresh_priority(j, now_s);
    any = true;
  }
  return any;
}

void JobPolicy::hold(JobIndex j) {
  JobAcct& a = acct_[j];
  a.admin_held = true;
  a.conditions = true;
  a.priority = 0;
}

void JobPolicy::release(JobIndex j, std::int64_t now_s) {
  JobAcct& a = acct_[j];
  if (!a.admin_held) return;
  a.admin_held = false;
  if (a.held) return;  // still held by its own --hold until its release time
  // slurmctld recomputes a released job's priority (_release_job_rec -> set_job_prio).
  a.priority = fresh_priority(j, now_s);
}

void JobPolicy::set_priority(JobIndex j, std::uint32_t priority) {
  JobAcct& a = acct_[j];
  a.fixed_priority = true;
  a.admin_priority = priority;
  if (!a.admin_held && !a.held) a.priority = priority;
}

bool JobPolicy::can_preempt(JobIndex a, JobIndex b, std::int64_t now_s) const {
  if (!preemption_enabled() || a == b) return false;
  const JobRuntime& rb = state_.job(b);
  if (rb.state != JobState::kRunning) return false;
  if (now_s - to_seconds(rb.start) < accounting_.preempt_exempt_time_s) return false;  // PreemptExemptTime
  if (preempt_mode(b) == PreemptMode::kOff) return false;
  if (accounting_.preempt_qos) return qos_preempts_[acct_[a].qos][acct_[b].qos] != 0;
  const auto& parts = state_.config().partitions;
  return parts[state_.job(a).partition].priority_tier > parts[rb.partition].priority_tier;
}

PreemptMode JobPolicy::preempt_mode(JobIndex b) const {
  PreemptMode own = accounting_.preempt_qos ? qos_[acct_[b].qos].preempt_mode
                                            : state_.config().partitions[state_.job(b).partition].preempt_mode;
  return own != PreemptMode::kOff ? own : accounting_.preempt_mode;
}

std::int64_t JobPolicy::grace_time_s(JobIndex b) const {
  return accounting_.preempt_qos ? qos_[acct_[b].qos].grace_time_s
                                 : state_.config().partitions[state_.job(b).partition].grace_time_s;
}

std::uint32_t JobPolicy::preempt_rank(JobIndex b) const {
  return accounting_.preempt_qos ? qos_[acct_[b].qos].priority
                                 : state_.config().partitions[state_.job(b).partition].priority_tier;
}

bool JobPolicy::is_preemptor(JobIndex a) const {
  return preemption_enabled() && accounting_.preempt_qos && !qos_[acct_[a].qos].preempt.empty();
}

void JobPolicy::requeue(JobIndex j, std::int64_t now_s) {
  JobAcct& a = acct_[j];
  // job_requeue_internal: begin_time = now + requeue delay (120 s) + 1; accrue_time is reset.
  a.requeue_begin_s = now_s + 121;
  a.conditions = true;
  a.eligible_once = false;
  a.accrue_s = priority_.accrue_always ? state_.spec(j).submit_s : -1;
  if (limits_) limits_->add_submitted(subject(j));
  if (engine_) a.priority = engine_->factors(state_.spec(j), inputs(j), now_s).priority;
}

PriorityFactors JobPolicy::factors(JobIndex j, std::int64_t now_s) const {
  if (!engine_) {
    PriorityFactors f;
    f.priority = acct_[j].priority;
    return f;
  }
  return engine_->factors(state_.spec(j), inputs(j), now_s);
}

}  // namespace gputwin
