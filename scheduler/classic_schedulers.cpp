#include "scheduler/classic_schedulers.hpp"

#include <algorithm>
#include <cassert>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "scheduler/availability_profile.hpp"
#include "scheduler/job_policy.hpp"
#include "scheduler/job_queue.hpp"
#include "scheduler/node_bitmap.hpp"
#include "scheduler/node_selection.hpp"
#include "scheduler/resource_scratch.hpp"

namespace gputwin {
namespace {

/// CPUs and GPUs counted together: textbook EASY's "extra" resources and what a job takes of them.
struct ResourceCount {
  std::int64_t cpus = 0;
  std::int64_t gpus = 0;

  ResourceCount& operator+=(const ResourceCount& o) {
    cpus += o.cpus;
    gpus += o.gpus;
    return *this;
  }
  ResourceCount& operator-=(const ResourceCount& o) {
    cpus -= o.cpus;
    gpus -= o.gpus;
    return *this;
  }
  /// True if this fits within `o` in both units.
  bool operator<=(const ResourceCount& o) const { return cpus <= o.cpus && gpus <= o.gpus; }
};

/// Free resources of every node during one slice of a conservative-backfilling profile.
struct ProfileSlice {
  SimTime begin = 0;
  std::vector<std::uint32_t> cpus, gpus, jobs;
  std::vector<std::uint64_t> mem;
};

class ClassicScheduler final : public Scheduler {
 public:
  ClassicScheduler(const SchedulerConfig& config, const AccountingConfig& accounting, World& world)
      : policy_(config.policy),
        shortcuts_(config.slurm.shortcuts && !config.priority.multifactor),
        queue_skip_(config.slurm.shortcut_queue_skip),
        world_(world),
        state_(world.state()),
        jobs_(state_, accounting, config.priority),
        selector_(state_.config(), &state_),
        scratch_(state_),
        allowed_(state_.node_count()),
        kept_profile_(state_.config()),
        flat_topology_(state_.config().topology.slurm.kind == TopologyKind::kFlat),
        whole_taken_(state_.node_count()),
        whole_taken_sorted_(state_.node_count(), 1) {}

  void on_job_submitted(JobIndex j) override {
    JobRuntime& rt = const_cast<ClusterState&>(state_).job_mut(j);
    const JobSpec& spec = state_.spec(j);
    rt.time_limit_s = effective_time_limit_s(spec, state_.config().partitions[rt.partition]);
    const std::int64_t now = to_seconds(world_.now());
    if (const PendingReason r = jobs_.submit(j, now); r != PendingReason::kNone) {
      world_.reject_job(j, r);
      return;
    }
    rt.priority = jobs_.multifactor() ? jobs_.priority(j) : 0;
    queue_.insert(queue_key(j));
    if (jobs_.has_conditions(j)) {
      shortcuts_ = false;  // eligibility changes over time: every pass looks at the whole queue
      wake_at(spec.begin_s);
      wake_at(spec.hold_until_s);
    }
    dirty_ = true;
  }
  void on_start() override {
    if (!jobs_.multifactor()) return;
    jobs_.start_clock(to_seconds(world_.now()));
    world_.set_timer(ControllerId::kScheduler, kPriorityCalc, world_.now() + from_seconds(jobs_.calc_period_s()));
  }
  void on_job_adopted(JobIndex j) override {
    JobRuntime& rt = const_cast<ClusterState&>(state_).job_mut(j);
    rt.time_limit_s = effective_time_limit_s(state_.spec(j), state_.config().partitions[rt.partition]);
    (void)jobs_.submit(j, to_seconds(rt.start));  // association, QOS, limits: admitted long ago
    jobs_.on_start(j, state_.allocation(j), to_seconds(rt.start));
    running_.push_back(j);
    ++resource_version_;
    plan_valid_ = false;
    dirty_ = true;
  }

  void on_job_released(JobIndex j) override {
    if (plan_valid_) released_jobs_.push_back(j);
    jobs_.on_end(j);
    dirty_ = true;
    ++resource_version_;
    running_.erase(std::find(running_.begin(), running_.end(), j));
  }
  void on_timer(TimerId timer) override {
    plan_valid_ = false;
    const std::int64_t now = to_seconds(world_.now());
    if (timer == kPriorityCalc) {
      queue_.compact();
      pending_.clear();
      for (const QueueKey& k : queue_.entries()) pending_.push_back(k.job);
      if (jobs_.recalculate(now, pending_)) {
        queue_.rebuild([this](QueueKey& key) { key = queue_key(key.job); });
        dirty_ = true;
      }
      world_.set_timer(ControllerId::kScheduler, kPriorityCalc, world_.now() + from_seconds(jobs_.calc_period_s()));
      return;
    }
    // kWake: a --begin time or a hold release is due.
    if (jobs_.release_due(now)) queue_.rebuild([this](QueueKey& key) { key = queue_key(key.job); });
    while (!wakeups_.empty() && wakeups_.top() <= now) wakeups_.pop();
    if (!wakeups_.empty()) world_.set_timer(ControllerId::kScheduler, kWake, from_seconds(wakeups_.top()));
    dirty_ = true;
  }
  [[nodiscard]] const JobPolicy* job_policy() const override { return &jobs_; }
  // A node entering or leaving service changes what fits: the next pass looks at the whole queue again (a node back
  // from a reboot may start the blocked head).
  void on_node_changed(NodeIndex, NodeCondition, NodeCondition) override {
    plan_valid_ = false;
    dirty_ = true;
    ++resource_version_;
  }
  // A requeued job (preemption, node failure): back in the queue, eligible 121 s later (job_requeue_internal).
  void on_job_requeued(JobIndex j) override {
    const std::int64_t now = to_seconds(world_.now());
    plan_valid_ = false;
    jobs_.requeue(j, now);
    JobRuntime& rt = const_cast<ClusterState&>(state_).job_mut(j);
    rt.priority = jobs_.multifactor() ? jobs_.priority(j) : 0;
    queue_.insert(queue_key(j));
    shortcuts_ = false;  // eligibility changes over time: every pass looks at the whole queue
    wake_at(now + 121);
    world_.expect_activity(from_seconds(now + 121));
    dirty_ = true;
  }
  void on_job_cancelled(JobIndex j) override {
    plan_valid_ = false;
    queue_.remove_job(j);
    jobs_.on_end(j);
    dirty_ = true;
  }
  // An operator held, released or prioritised a pending job: the queue is sorted again.
  void on_job_updated(JobIndex j, const JobUpdate& update) override {
    plan_valid_ = false;
    switch (update.kind) {
      case JobUpdate::Kind::kHold:
        jobs_.hold(j);
        world_.annotate_job(j, 0, PendingReason::kJobHeldAdmin);
        shortcuts_ = false;  // eligibility changes over time: every pass looks at the whole queue
        break;
      case JobUpdate::Kind::kRelease:
        jobs_.release(j, to_seconds(world_.now()));
        break;
      case JobUpdate::Kind::kPriority:
        jobs_.set_priority(j, update.priority);
        shortcuts_ = false;  // the queue's order no longer follows submission alone
        break;
      case JobUpdate::Kind::kTimeLimit:
        const_cast<ClusterState&>(state_).job_mut(j).time_limit_s = update.time_limit_s;
        shortcuts_ = false;  // sjf's order and every plan depend on it
        break;
    }
    JobRuntime& rt = const_cast<ClusterState&>(state_).job_mut(j);
    rt.priority = jobs_.multifactor() || jobs_.fixed_priority(j) != 0 ? jobs_.priority(j) : 0;
    queue_.compact();
    queue_.rebuild([this](QueueKey& key) { key = queue_key(key.job); });
    dirty_ = true;
  }
  void on_instant_end() override {
    if (!dirty_) return;
    dirty_ = false;
    ++stats_.passes;
    if (policy_ == SchedulerPolicy::kConservative) {
      plan_conservative();
    } else {
      plan_list();
    }
    queue_.compact();
  }
  [[nodiscard]] SchedulerStats stats() const override { return stats_; }

 private:
  // A queued job in the kept conservative plan (plan_conservative).
  enum class PlanKind : std::uint8_t { kNone, kNotRunnable, kNoFit, kReserved };
  struct PlannedJob {
    PlanKind kind = PlanKind::kNone;  // kNone: not in the plan
    SimTime begin = 0, end = 0;
    std::vector<NodeAllocation> allocation;
    std::vector<std::uint64_t> usable;  // the partition's nodes usable for it over its window (a bitmap)
  };

  const PartitionConfig& partition_of(JobIndex j) const { return state_.config().partitions[state_.job(j).partition]; }

  bool may_fit_now(JobIndex j) const { return gputwin::may_fit_now(state_, state_.spec(j), state_.job(j).partition); }

  // Queue order: multifactor priority when asked (PriorityType=priority/multifactor), or a priority an operator
  // set (before every other job), then the policy's own order (sjf: requested time), then submit time and job id.
  QueueKey queue_key(JobIndex j) const {
    const JobSpec& spec = state_.spec(j);
    const std::uint64_t priority = jobs_.multifactor() ? jobs_.priority(j) : jobs_.fixed_priority(j);
    const std::uint64_t k1 = UINT32_MAX - priority;
    const std::uint64_t k2 =
        policy_ == SchedulerPolicy::kSjf ? static_cast<std::uint64_t>(state_.job(j).time_limit_s) : 0;
    // What may_fit_now asks to be free, at least: CPUs (for a CPU count) and GPUs, summed over the nodes.
    const std::uint64_t cpus = spec.nodes > 0 ? 0 : spec.cpus;
    const std::uint64_t gpus = std::uint64_t{spec.gpus_per_node} * std::max<std::uint32_t>(spec.nodes, 1);
    const JobRuntime& rt = state_.job(j);
    return QueueKey{k1,
                    k2,
                    spec.submit_s,
                    spec.id,
                    j,
                    static_cast<std::uint16_t>(std::min<std::uint64_t>(cpus, UINT16_MAX)),
                    static_cast<std::uint16_t>(std::min<std::uint64_t>(gpus, UINT16_MAX)),
                    static_cast<std::uint32_t>(std::clamp<std::int64_t>(rt.time_limit_s, 0, UINT32_MAX)),
                    static_cast<std::uint16_t>(std::min<std::uint32_t>(rt.partition, UINT16_MAX))};
  }

  // Which queued jobs may start in a backfill walk now (QueueKey's least needs): none needing more CPUs than are
  // free in one partition, or more GPUs than are free on all nodes; and of those not ending by the shadow time,
  // for easy-textbook none of the head's partition needing more than the extra resources, for easy none needing
  // more than is free off the head's nodes. Taken again after a start.
  FitFilter fit_filter() const {
    FitFilter filter;
    if (!shortcuts_) return filter;
    std::uint64_t free_cpus = 0;
    for (std::uint32_t p = 0; p < state_.config().partitions.size(); ++p)
      free_cpus = std::max<std::uint64_t>(free_cpus, state_.partition_free_cpus(p));
    const std::uint64_t free_gpus = state_.total_free_gpus();
    const auto clamp32 = [](std::int64_t v) {
      return static_cast<std::uint32_t>(std::clamp<std::int64_t>(v, 0, UINT32_MAX));
    };
    const auto saturate32 = [](std::uint64_t v) {
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX));
    };
    filter.free_cpus = saturate32(free_cpus);
    filter.free_gpus = saturate32(free_gpus);
    // ends_by_shadow: now + limit <= shadow, i.e. limit <= (shadow - now) in whole seconds.
    filter.limit_s = clamp32((shadow_ - world_.now()) / kMicrosPerSecond);
    if (policy_ == SchedulerPolicy::kEasyTextbook && head_partition_ < UINT16_MAX) {
      filter.partition = head_partition_;
      filter.spare_cpus = clamp32(spare_.cpus);
      filter.spare_gpus = clamp32(spare_.gpus);
    } else if (policy_ == SchedulerPolicy::kEasy) {
      // A job not ending by the shadow time selects among the nodes off the head's (allowed_): what is free there.
      std::uint64_t spare_cpus = 0, spare_gpus = 0;
      for (NodeIndex n = 0; n < state_.node_count(); ++n) {
        if (!allowed_.test(n)) continue;
        spare_cpus += state_.free_cpus()[n];
        spare_gpus += state_.free_gpus()[n];
      }
      filter.partition = FitFilter::kAllPartitions;
      filter.spare_cpus = saturate32(spare_cpus);
      filter.spare_gpus = saturate32(spare_gpus);
    }
    return filter;
  }
  // The next queued position at or after `pos` that `filter` admits. With shortcuts, the positions passed over
  // are jobs the walk would look at and leave: may_fit_now fails for them, or they neither end by the shadow time
  // nor fit in what the policy leaves them (easy-textbook: the extra resources; easy: what is free off the head's
  // nodes); and runnable() has no side effect without eligibility conditions (which turn shortcuts off).
  std::size_t next_fit_candidate(std::size_t pos, const FitFilter& filter) const {
    return shortcuts_ && queue_skip_ ? queue_.next_candidate(pos, filter) : pos;
  }

  void wake_at(std::int64_t t_s) {
    if (t_s < 0 || t_s == kHeldForever || t_s <= to_seconds(world_.now())) return;
    world_.expect_activity(from_seconds(t_s));
    if (wakeups_.empty() || t_s < wakeups_.top()) world_.set_timer(ControllerId::kScheduler, kWake, from_seconds(t_s));
    wakeups_.push(t_s);
  }

  // Eligible (not held, begun, dependencies met, array throttle) and admitted by its partition.
  bool runnable(JobIndex j) {
    if (jobs_.has_conditions(j)) {
      const PendingReason r = jobs_.eligibility(j, to_seconds(world_.now()));
      if (r != PendingReason::kNone) {
        world_.annotate_job(j, state_.job(j).priority, r);
        return false;
      }
    }
    return partition_admits(state_, j);
  }

  bool try_start(JobIndex j, const std::uint64_t* allowed) {
    if (!select_now(j, allowed)) return false;
    start(j, allocation_);
    return true;
  }

  // Chooses nodes for job `j` on the free resources now (within `allowed`, null = any), into allocation_.
  bool select_now(JobIndex j, const std::uint64_t* allowed = nullptr) {
    ++stats_.jobs_tested;
    if (!may_fit_now(j)) return false;
    return selector_.select(select_request(state_.spec(j)), partition_nodes(state_, state_.job(j).partition), allowed,
                            live_resources(state_), allocation_);
  }

  void start(JobIndex j, const std::vector<NodeAllocation>& allocation) {
    jobs_.on_start(j, allocation, to_seconds(world_.now()));
    world_.start_job(j, allocation, world_.now() + from_seconds(state_.job(j).time_limit_s));
    running_.push_back(j);
    ++resource_version_;
    ++stats_.main_starts;
  }

  // fcfs and sjf: start in queue order until the first job that does not fit. easy and easy-textbook: then backfill
  // behind it.
  void plan_list() {
    const auto& entries = queue_.entries();
    // If no job started or ended since the last pass, only submissions happened: FCFS and EASY append them to the
    // queue, and every job looked at before would get the same answer (free resources and the shadow time are
    // the same, and a later `now` only makes backfilling harder). So only the new jobs need a look.
    // easy-textbook: a job started on the extra count may leave spare CPUs split across nodes so that the head no
    // longer fits at its shadow time; a full pass then finds a later shadow time, so it cannot be skipped.
    const bool unchanged =
        shortcuts_ && policy_ != SchedulerPolicy::kSjf && resource_version_ == planned_version_ && !extra_used_;
    extra_used_ = false;
    std::size_t pos = 0;
    std::size_t scan_from = 0;
    std::size_t removed_before_head = 0;
    if (unchanged && blocked_head_) {
      pos = head_pos_;
      scan_from = scanned_;
    } else {
      if (unchanged) pos = scanned_;
      for (; pos < entries.size(); ++pos) {
        const JobIndex j = entries[pos].job;
        if (!runnable(j)) continue;
        if (!try_start(j, nullptr)) break;
        queue_.remove_at(pos);
        ++removed_before_head;
      }
      blocked_head_ = pos < entries.size();
      if (blocked_head_ && policy_ == SchedulerPolicy::kEasy) {
        shadow_ = kNever;
        for (NodeIndex n = 0; n < state_.node_count(); ++n) allowed_.set(n);
        if (compute_shadow(entries[pos].job, shadow_)) {
          for (const NodeAllocation& a : allocation_) allowed_.clear(a.node);  // the head's nodes at the shadow time
        }
      }
      if (blocked_head_ && policy_ == SchedulerPolicy::kEasyTextbook) reserve_by_count(entries[pos].job);
      scan_from = pos + 1;
    }
    if (policy_ == SchedulerPolicy::kEasy && blocked_head_) backfill_behind_head(scan_from);
    if (policy_ == SchedulerPolicy::kEasyTextbook && blocked_head_) backfill_by_count(scan_from);
    // Remember where the head is once the started jobs are gone from the queue.
    queue_.compact();
    head_pos_ = pos - removed_before_head;
    scanned_ = entries.size();
    planned_version_ = resource_version_;
  }

  // EASY: start jobs behind the blocked head that fit now and either end by the shadow time or keep off the
  // head's nodes.
  void backfill_behind_head(std::size_t from) {
    const auto& entries = queue_.entries();
    const SimTime shadow = shadow_;
    FitFilter filter = fit_filter();
    for (std::size_t pos = next_fit_candidate(from, filter); pos < entries.size();
         pos = next_fit_candidate(pos + 1, filter)) {
      const JobIndex j = entries[pos].job;
      if (!runnable(j) || !may_fit_now(j)) continue;
      const bool ends_by_shadow = world_.now() + from_seconds(state_.job(j).time_limit_s) <= shadow;
      if (try_start(j, ends_by_shadow ? nullptr : allowed_.words().data())) {
        queue_.remove_at(pos);
        ++stats_.backfill_starts;
        --stats_.main_starts;
        filter = fit_filter();
      }
    }
  }

  // EASY's reservation for the blocked head: the earliest time running jobs (ending at start + limit) free
  // enough resources, and (if `choose_nodes`) the nodes it would get then (left in allocation_). False if it can
  // never fit. The jobs ended by then are by_end_[0, released_).
  bool compute_shadow(JobIndex head, SimTime& shadow, bool choose_nodes = true) {
    by_end_ = running_;
    auto limit_end = [&](JobIndex j) { return state_.job(j).start + from_seconds(state_.job(j).time_limit_s); };
    std::sort(by_end_.begin(), by_end_.end(), [&](JobIndex a, JobIndex b) {
      return limit_end(a) < limit_end(b) || (limit_end(a) == limit_end(b) && a < b);
    });
    const SelectRequest request = select_request(state_.spec(head));
    scratch_.reset();
    scratch_.track(request, selector_, state_.partition_bits(state_.job(head).partition));
    bool found = scratch_.fits();
    std::size_t i = 0;
    while (!found && i < by_end_.size()) {
      const SimTime t = limit_end(by_end_[i]);
      while (i < by_end_.size() && limit_end(by_end_[i]) == t) scratch_.add_back(state_.allocation(by_end_[i++]));
      if (scratch_.fits()) {
        shadow = std::max(t, world_.now());
        found = true;
      }
    }
    if (found && choose_nodes) {
      const bool ok = selector_.select(request, partition_nodes(state_, state_.job(head).partition), nullptr,
                                       scratch_.view_for(request), allocation_);
      assert(ok);
      (void)ok;
    }
    scratch_.reset();
    released_ = i;
    return found;
  }

  // Textbook EASY (Mu'alem and Feitelson 2001, as CQSim, SchedGym and AccaSim count processors): the head's
  // shadow time as for easy, and the "extra" resources: what is free in the head's partition at the shadow time
  // minus what the head takes then. Counted in CPUs and GPUs, the units jobs ask for; which nodes they are on is
  // not tracked (that is what the node-aware easy adds).
  void reserve_by_count(JobIndex head) {
    shadow_ = kNever;
    spare_ = {};
    head_partition_ = state_.job(head).partition;
    const std::optional<ResourceCount> head_count = count_without_nodes(select_request(state_.spec(head)));
    if (!compute_shadow(head, shadow_, !head_count)) return;  // never fits: nothing to protect
    const std::uint64_t* in_partition = state_.partition_bits(head_partition_);
    // What is free on the partition's schedulable nodes now (the state keeps both sums).
    spare_.cpus += static_cast<std::int64_t>(state_.partition_free_cpus(head_partition_));
    spare_.gpus += static_cast<std::int64_t>(state_.partition_free_gpus(head_partition_));
    for (std::size_t k = 0; k < released_; ++k) {
      for (const NodeAllocation& a : state_.allocation(by_end_[k])) {
        if (!state_.node_schedulable(a.node) || !((in_partition[a.node >> 6] >> (a.node & 63)) & 1ULL)) continue;
        spare_.cpus += a.cpus;
        spare_.gpus += a.gpus;
      }
    }
    spare_ -= head_count ? *head_count : count_on(allocation_, in_partition);
  }

  // With shortcuts, what a request takes when that does not depend on which nodes it gets (so the head's nodes at
  // the shadow time need not be chosen): a shared request for a node count takes its CPUs per node and GPUs per
  // node on each of its nodes (NodeSelector's take), a shared one for a CPU count without GPUs takes its CPUs.
  std::optional<ResourceCount> count_without_nodes(const SelectRequest& r) const {
    if (!shortcuts_ || r.exclusive) return std::nullopt;
    if (r.nodes > 0) {
      const std::int64_t cpus_per_node = (r.cpus + r.nodes - 1) / r.nodes;
      return ResourceCount{cpus_per_node * r.nodes, std::int64_t{r.gpus_per_node} * r.nodes};
    }
    if (r.gpus_per_node == 0) return ResourceCount{r.cpus, 0};
    return std::nullopt;
  }

  // Textbook EASY's backfilling: a job behind the head starts now if it fits now and either ends by the shadow
  // time or takes no more than the extra CPUs and GPUs, which it then uses up.
  void backfill_by_count(std::size_t from) {
    const auto& entries = queue_.entries();
    const std::uint64_t* in_partition = state_.partition_bits(head_partition_);
    FitFilter filter = fit_filter();
    for (std::size_t pos = next_fit_candidate(from, filter); pos < entries.size();
         pos = next_fit_candidate(pos + 1, filter)) {
      const JobIndex j = entries[pos].job;
      if (!runnable(j) || !may_fit_now(j)) continue;
      const bool ends_by_shadow = world_.now() + from_seconds(state_.job(j).time_limit_s) <= shadow_;
      if (!ends_by_shadow && state_.job(j).partition == head_partition_ && !(least_count(j) <= spare_)) continue;
      if (!select_now(j)) continue;
      if (!ends_by_shadow) {
        const ResourceCount used = count_on(allocation_, in_partition);
        if (!(used <= spare_)) continue;
        spare_ -= used;
        extra_used_ = true;
      }
      start(j, allocation_);
      queue_.remove_at(pos);
      ++stats_.backfill_starts;
      --stats_.main_starts;
      filter = fit_filter();
    }
  }

  // CPUs and GPUs of `allocation` on the nodes of bitmap `nodes`.
  static ResourceCount count_on(std::span<const NodeAllocation> allocation, const std::uint64_t* nodes) {
    ResourceCount c;
    for (const NodeAllocation& a : allocation) {
      if (!((nodes[a.node >> 6] >> (a.node & 63)) & 1ULL)) continue;
      c.cpus += a.cpus;
      c.gpus += a.gpus;
    }
    return c;
  }

  // The fewest CPUs and GPUs any allocation of job `j` takes (more for whole nodes).
  ResourceCount least_count(JobIndex j) const {
    const JobSpec& spec = state_.spec(j);
    return ResourceCount{std::max<std::int64_t>(spec.cpus, 1),
                         std::int64_t{spec.gpus_per_node} * std::max<std::int64_t>(spec.nodes, 1)};
  }

  // Conservative backfilling, the plain algorithm (the reference the kept plan must reproduce; used without
  // shortcuts and with a topology): every queued job, in order, gets the earliest reservation that delays no
  // earlier reservation, on a profile rebuilt from the running jobs; jobs whose reservation starts now start.
  void plan_conservative_reference() {
    build_profile();
    const auto& entries = queue_.entries();
    for (std::size_t pos = 0; pos < entries.size(); ++pos) {
      const JobIndex j = entries[pos].job;
      if (!runnable(j)) continue;
      ++stats_.jobs_tested;
      const SelectRequest request = select_request(state_.spec(j));
      const SimTime length = from_seconds(state_.job(j).time_limit_s);
      for (std::size_t s = 0; s < profile_.size(); ++s) {
        const SimTime begin = profile_[s].begin;
        window_min(s, begin + length);
        const FreeResources view{min_.cpus.data(), min_.gpus.data(), min_.mem.data(), min_.jobs.data(),
                                 state_.schedulable().data()};
        if (!selector_.select(request, NodeSet{partition_of(j).nodes, nullptr}, nullptr, view, allocation_)) continue;
        reserve(begin, begin + length, allocation_);
        if (begin == world_.now()) {
          start(j, allocation_);
          queue_.remove_at(pos);
        }
        break;
      }
    }
  }

  // Conservative backfilling with the plan kept between passes: the same reservations, and so the same starts,
  // as plan_conservative_reference, which re-plans every queued job on a rebuilt profile. What a re-plan at
  // `now` computes for a job depends only on the profile it sees (running jobs' expected ends and the
  // reservations of the jobs ahead of it) and its request. The pass walks the queue in order, keeping track of
  // how that profile changed since the last pass (freed and taken rectangles: nodes x time); a job whose
  // reservation provably comes out the same keeps it (keeps_reservation), any other is planned again. README
  // "Scheduling policies" gives the rules.
  void plan_conservative() {
    if (!shortcuts_ || !flat_topology_) {
      plan_valid_ = false;
      plan_conservative_reference();
      return;
    }
    const SimTime now = world_.now();
    if (planned_.size() < state_.job_count()) {
      planned_.resize(state_.job_count());
      profile_end_.resize(state_.job_count(), kNever);
    }
    bool keep = plan_valid_ && state_.node_weights() == plan_weights_;
    // A job still running at its expected end ends "at now + 1" in a rebuilt profile: that moves with now.
    for (std::size_t k = 0; keep && k < running_.size(); ++k) keep = profile_end_[running_[k]] > now;
    changes_.clear();
    change_nodes_.clear();
    if (keep) {
      // The profile is not brought up to date: nothing reads it before the first job planned again rebuilds it.
      // Jobs that ended before their expected end freed their nodes from now to that end.
      for (const JobIndex r : released_jobs_) {
        if (profile_end_[r] <= now) continue;
        add_change(now, profile_end_[r], state_.allocation(r), true, SIZE_MAX);
      }
      // A job backfilled at the last pass is a running job now, which a re-plan places before every queued job:
      // for the jobs that were queued ahead of it, it takes its nodes until its expected end.
      for (const StartedJob& s : started_) {
        if (profile_end_[s.job] > now)
          add_change(now, profile_end_[s.job], state_.allocation(s.job), false, s.queued_before);
      }
    } else {
      kept_profile_.reset(now, live_resources(state_));
      for (const JobIndex j : running_) {
        // A job past its limit still holds its nodes (epilog) until released: never count them free now.
        profile_end_[j] = std::max(now + 1, state_.job(j).start + from_seconds(state_.job(j).time_limit_s));
        kept_profile_.add_release(profile_end_[j], state_.allocation(j));
      }
      for (const JobIndex j : plan_order_) planned_[j].kind = PlanKind::kNone;
      plan_order_.clear();
    }
    released_jobs_.clear();
    started_.clear();
    last_pass_ = now;
    plan_weights_ = state_.node_weights();
    plan_valid_ = true;
    for (auto& taken : whole_taken_) taken.clear();
    std::fill(whole_taken_sorted_.begin(), whole_taken_sorted_.end(), 1);

    // Until the first job planned again (detached false), no job reads the profile; that job rebuilds it (running
    // jobs and the reservations of the jobs ahead), and from then on each job walked puts its reservation in (kept)
    // or takes a new one, so that a job planned again sees exactly the jobs ahead of it.
    const auto& entries = queue_.entries();
    bool detached = !keep;
    std::size_t old_position = 0;  // position in the last pass's plan order
    std::size_t out = 0;           // jobs still queued so far in this pass's plan order
    order_scratch_.clear();
    for (std::size_t pos = 0; pos < entries.size(); ++pos) {
      const JobIndex j = entries[pos].job;
      PlannedJob& pj = planned_[j];
      const bool was_planned = pj.kind != PlanKind::kNone;
      const std::size_t old_pos = was_planned ? old_position++ : SIZE_MAX;
      const bool is_runnable = runnable(j);
      bool kept = false;
      if (keep && was_planned && is_runnable == (pj.kind != PlanKind::kNotRunnable)) {
        kept = pj.kind != PlanKind::kReserved || keeps_reservation(j, pj, now, old_pos, detached);
      }
      if (kept) {
        if (pj.kind == PlanKind::kReserved) {
          if (detached) kept_profile_.reserve(pj.begin, pj.end, pj.allocation);
          note_whole_nodes(pj.begin, pj.end, pj.allocation);
          if (pj.begin == now) {
            started_.push_back(StartedJob{j, out});
            start(j, pj.allocation);
            profile_end_[j] = pj.end;
            pj.kind = PlanKind::kNone;
            queue_.remove_at(pos);
            continue;
          }
        }
        order_scratch_.push_back(j);
        ++out;
        continue;
      }
      // Planned again: first build the profile this job sees (once): running jobs and the reservations of the
      // jobs ahead. Building it anew costs less than giving back every later reservation on the kept profile,
      // whose later slices are many.
      const bool had = keep && pj.kind == PlanKind::kReserved;
      if (!detached) {
        detached = true;
        steps_.clear();
        for (const JobIndex r : running_) steps_.push_back(ProfileStep{profile_end_[r], state_.allocation(r), false});
        for (const JobIndex a : order_scratch_) {
          const PlannedJob& ahead = planned_[a];
          if (ahead.kind != PlanKind::kReserved) continue;
          steps_.push_back(ProfileStep{ahead.begin, ahead.allocation, true});
          steps_.push_back(ProfileStep{ahead.end, ahead.allocation, false});
        }
        kept_profile_.rebuild(now, live_resources(state_), steps_);
      }
      if (!is_runnable) {
        if (had) add_change(pj.begin, pj.end, pj.allocation, true, SIZE_MAX);
        pj.kind = PlanKind::kNotRunnable;
        order_scratch_.push_back(j);
        ++out;
        continue;
      }
      ++stats_.jobs_tested;
      const SimTime length = from_seconds(state_.job(j).time_limit_s);
      const SimTime begin = kept_profile_.earliest_start(selector_, select_request(state_.spec(j)),
                                                         partition_nodes(state_, state_.job(j).partition),
                                                         state_.schedulable().data(), length, allocation_);
      const bool same =
          had && begin == pj.begin &&
          std::equal(allocation_.begin(), allocation_.end(), pj.allocation.begin(), pj.allocation.end(),
                     [](const NodeAllocation& x, const NodeAllocation& y) {
                       return x.node == y.node && x.cpus == y.cpus && x.gpus == y.gpus && x.mem_mb == y.mem_mb;
                     });
      if (had && !same) add_change(pj.begin, pj.end, pj.allocation, true, SIZE_MAX);
      if (begin == kNever) {
        pj.kind = PlanKind::kNoFit;
        order_scratch_.push_back(j);
        ++out;
        continue;
      }
      kept_profile_.reserve(begin, begin + length, allocation_);
      if (!same) add_change(begin, begin + length, allocation_, false, SIZE_MAX);
      note_whole_nodes(begin, begin + length, allocation_);
      if (begin == now) {
        started_.push_back(StartedJob{j, out});
        start(j, allocation_);
        profile_end_[j] = begin + length;
        pj.kind = PlanKind::kNone;
        queue_.remove_at(pos);
        continue;
      }
      pj.kind = PlanKind::kReserved;
      pj.begin = begin;
      pj.end = begin + length;
      pj.allocation = allocation_;
      pj.usable = kept_profile_.last_usable();
      order_scratch_.push_back(j);
      ++out;
    }
    plan_order_.swap(order_scratch_);
  }

  // A change of the profile since the last pass: `allocation`'s nodes freed or taken over [from, to), for the
  // jobs at last-pass plan positions below `before` (SIZE_MAX: every job walked after it).
  void add_change(SimTime from, SimTime to, std::span<const NodeAllocation> allocation, bool freed,
                  std::size_t before) {
    const auto first = static_cast<std::uint32_t>(change_nodes_.size());
    for (const NodeAllocation& a : allocation) change_nodes_.push_back(a.node);
    changes_.push_back(Change{from, to, first, static_cast<std::uint32_t>(change_nodes_.size()), freed, before});
  }

  // A reservation (or a start) of a job ahead that takes all CPUs of a node over [begin, end): the node is usable
  // by no job then. Kept per node, by begin.
  void note_whole_nodes(SimTime begin, SimTime end, const std::vector<NodeAllocation>& allocation) {
    if (changes_.size() > kMaxChangesToProve) return;  // no proof later in this pass reads them
    for (const NodeAllocation& a : allocation) {
      if (a.cpus != state_.config().nodes[a.node].cpus) continue;
      std::vector<std::pair<SimTime, SimTime>>& taken = whole_taken_[a.node];
      if (!taken.empty() && taken.back().first > begin) whole_taken_sorted_[a.node] = 0;  // sorted when read
      taken.emplace_back(begin, end);
    }
  }

  // True if every window [t, t + length) with now <= t < before holds a time at which a job ahead takes all of
  // node n (note_whole_nodes).
  bool whole_node_blocks_windows(NodeIndex n, SimTime now, SimTime length, SimTime before) {
    if (!whole_taken_sorted_[n]) {
      std::sort(whole_taken_[n].begin(), whole_taken_[n].end());
      whole_taken_sorted_[n] = 1;
    }
    SimTime reach = now;  // every window starting before reach is blocked
    for (const auto& [begin, end] : whole_taken_[n]) {
      if (reach >= before) return true;
      if (begin >= reach + length) return false;  // the window [reach, reach + length) is free of it
      reach = std::max(reach, end);
    }
    return reach >= before;
  }

  // True if a re-plan at `now` gives job j the reservation pj again, given the changes since the last pass of
  // the profile it sees (changes_; `old_pos`: its position in the last pass's plan order). Proof, for a selector
  // whose choice depends only on which nodes are usable and their free resources, and which is monotone (a
  // request that fits on less free resources fits on more):
  //  - begin is still a slice boundary: a boundary disappears only where a freed rectangle begins or ends (a
  //    running job's end, a moved reservation's begin or end); `detached`: the profile is exactly the one j sees,
  //    so ask it.
  //  - the window's usable nodes and their free resources are the same, so the selector picks the same nodes: no
  //    change overlaps [begin, end) on a node that was usable (pj.usable), a taken node that was not usable stays
  //    so, and a freed one that was not usable stays so when a reservation ahead takes the whole node inside the
  //    window (below);
  //  - no earlier start fits: every window starting before begin failed at the last pass (a start between two
  //    boundaries is no better than the boundary before it), and only a freed rectangle can make one fit. A
  //    freed node helps no window if the node is unusable in every window that overlaps the freed time and
  //    starts before begin: a reservation ahead that takes the whole node from w >= min(freed end, begin), with
  //    now + length past w, is inside every such window (and inside [begin, end)).
  bool keeps_reservation(JobIndex j, const PlannedJob& pj, SimTime now, std::size_t old_pos, bool detached) {
    if (pj.begin < now) return false;  // not expected: keep the plan only where it is proven
    // After many changes the proof costs more than planning the job again (cheap with the profile's memo), and
    // rarely succeeds: on the loaded HPC2N trace most jobs planned again do move.
    if (changes_.size() > kMaxChangesToProve) return false;
    const std::uint64_t* in_partition = state_.partition_bits(state_.job(j).partition);
    auto in_part = [&](NodeIndex n) { return ((in_partition[n >> 6] >> (n & 63)) & 1ULL) != 0; };
    auto was_usable = [&](NodeIndex n) { return ((pj.usable[n >> 6] >> (n & 63)) & 1ULL) != 0; };
    const SimTime length = pj.end - pj.begin;
    const bool whole_node_blocks = state_.spec(j).cpus > 0 || state_.spec(j).exclusive;
    for (const Change& c : changes_) {
      if (c.freed) {
        if (pj.begin > now && (pj.begin == c.from || pj.begin == c.to) &&
            (!detached || !kept_profile_.is_boundary(pj.begin)))
          return false;
        if (c.to <= now || c.from >= pj.end) continue;
        for (std::uint32_t i = c.first; i < c.last; ++i) {
          const NodeIndex n = change_nodes_[i];
          if (!in_part(n)) continue;
          if (c.to > pj.begin && was_usable(n)) return false;  // more free on a node it may use
          // Windows before begin that overlap the freed time, and its own window if they overlap.
          const SimTime before = c.to > pj.begin ? pj.begin + 1 : c.to;
          if (!whole_node_blocks || !whole_node_blocks_windows(n, now, length, before)) return false;
        }
      } else {
        if (old_pos >= c.before || c.to <= pj.begin || c.from >= pj.end) continue;
        for (std::uint32_t i = c.first; i < c.last; ++i) {
          if (was_usable(change_nodes_[i])) return false;
        }
      }
    }
    return true;
  }

  void build_profile() {
    profile_.clear();
    ProfileSlice now;
    now.begin = world_.now();
    now.cpus.assign(state_.free_cpus().begin(), state_.free_cpus().end());
    now.gpus.assign(state_.free_gpus().begin(), state_.free_gpus().end());
    now.jobs.assign(state_.node_jobs().begin(), state_.node_jobs().end());
    now.mem.assign(state_.free_mem_mb().begin(), state_.free_mem_mb().end());
    profile_.push_back(std::move(now));
    for (JobIndex j : running_) {
      // A job past its limit still holds its nodes (epilog) until released: never count them free now.
      const SimTime end = std::max(world_.now() + 1, state_.job(j).start + from_seconds(state_.job(j).time_limit_s));
      const std::size_t s = split(end);
      for (std::size_t k = s; k < profile_.size(); ++k) {
        for (const NodeAllocation& a : state_.allocation(j)) {
          profile_[k].cpus[a.node] += a.cpus;
          profile_[k].gpus[a.node] += a.gpus;
          profile_[k].mem[a.node] += a.mem_mb;
          profile_[k].jobs[a.node] -= 1;
        }
      }
    }
  }

  // Index of the slice that begins at t, splitting the slice containing t if needed.
  std::size_t split(SimTime t) {
    std::size_t s = 0;
    while (s + 1 < profile_.size() && profile_[s + 1].begin <= t) ++s;
    if (profile_[s].begin == t) return s;
    ProfileSlice copy = profile_[s];
    copy.begin = t;
    profile_.insert(profile_.begin() + static_cast<std::ptrdiff_t>(s) + 1, std::move(copy));
    return s + 1;
  }

  void reserve(SimTime begin, SimTime end, const std::vector<NodeAllocation>& allocation) {
    const std::size_t first = split(begin);
    const std::size_t last = split(end);
    for (std::size_t k = first; k < last; ++k) {
      for (const NodeAllocation& a : allocation) {
        profile_[k].cpus[a.node] -= a.cpus;
        profile_[k].gpus[a.node] -= a.gpus;
        profile_[k].mem[a.node] -= a.mem_mb;
        profile_[k].jobs[a.node] += 1;
      }
    }
  }

  // Element-wise minimum of free resources over the slices overlapping [profile_[first].begin, end).
  void window_min(std::size_t first, SimTime end) {
    min_ = profile_[first];
    for (std::size_t k = first + 1; k < profile_.size() && profile_[k].begin < end; ++k) {
      for (std::size_t n = 0; n < min_.cpus.size(); ++n) {
        min_.cpus[n] = std::min(min_.cpus[n], profile_[k].cpus[n]);
        min_.gpus[n] = std::min(min_.gpus[n], profile_[k].gpus[n]);
        min_.mem[n] = std::min(min_.mem[n], profile_[k].mem[n]);
        min_.jobs[n] = std::max(min_.jobs[n], profile_[k].jobs[n]);
      }
    }
  }

  static constexpr std::size_t kMaxChangesToProve = 32;  // keeps_reservation: 8-128 cost the same on loaded HPC2N
  static constexpr TimerId kPriorityCalc = 0;
  static constexpr TimerId kWake = 1;

  SchedulerPolicy policy_;
  bool shortcuts_;
  bool queue_skip_;  // shortcut_queue_skip (tests only)
  World& world_;
  const ClusterState& state_;
  JobPolicy jobs_;
  std::vector<JobIndex> pending_;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> wakeups_;
  NodeSelector selector_;
  ResourceScratch scratch_;
  JobQueue queue_;
  std::vector<NodeAllocation> allocation_;
  NodeBitmap allowed_;
  std::vector<JobIndex> running_;      // jobs holding resources, in start order
  std::vector<JobIndex> by_end_;       // running_ by expected end (start + limit), for EASY's shadow time
  std::vector<ProfileSlice> profile_;  // plan_conservative_reference's profile, rebuilt at every pass
  ProfileSlice min_;
  // The kept conservative plan (plan_conservative).
  AvailabilityProfile kept_profile_;     // the profile jobs planned again see (read only after a rebuild or reset)
  bool plan_valid_ = false;              // false: the next pass rebuilds the profile
  bool flat_topology_ = true;            // with a topology the plain algorithm plans
  std::vector<PlannedJob> planned_;      // by job
  std::vector<SimTime> profile_end_;     // by job: a running job's expected end in the profile
  std::vector<JobIndex> plan_order_;     // queued jobs in the plan, in queue order
  std::vector<JobIndex> released_jobs_;  // jobs released since the last pass
  std::vector<JobIndex> order_scratch_;  // plan_conservative: the new plan order
  std::vector<ProfileStep> steps_;       // plan_conservative: the profile a job planned again sees, to rebuild
  struct Change {
    SimTime from, to;
    std::uint32_t first, last;  // its nodes: change_nodes_[first, last)
    bool freed;
    std::size_t before;  // applies to jobs at last-pass plan positions below this
  };
  std::vector<Change> changes_;  // plan_conservative: the profile's changes since the last pass
  std::vector<NodeIndex> change_nodes_;
  struct StartedJob {
    JobIndex job;
    std::size_t queued_before;  // jobs still queued ahead of it after its pass
  };
  std::vector<StartedJob> started_;  // jobs started at the last pass
  SimTime last_pass_ = 0;
  std::vector<std::vector<std::pair<SimTime, SimTime>>> whole_taken_;  // plan_conservative: see note_whole_nodes
  std::vector<std::uint8_t> whole_taken_sorted_;                       // per node: whole_taken_ is by begin
  std::vector<std::uint32_t> plan_weights_;
  SchedulerStats stats_;
  bool dirty_ = false;
  std::uint64_t resource_version_ = 0;     // starts + releases so far
  std::uint64_t planned_version_ = ~0ULL;  // resource_version_ at the end of the last pass
  bool blocked_head_ = false;              // the last pass stopped at a job that did not fit
  std::size_t head_pos_ = 0;               // its queue position
  std::size_t scanned_ = 0;                // queue size at the end of the last pass
  SimTime shadow_ = kNever;                // EASY: the head's shadow time (allowed_ holds the nodes it spares)
  std::size_t released_ = 0;               // compute_shadow: running jobs (by_end_ order) ended by the shadow time
  std::uint32_t head_partition_ = 0;       // easy-textbook: the blocked head's partition
  ResourceCount spare_;                    // easy-textbook: extra CPUs and GPUs left at the shadow time
  bool extra_used_ = false;                // easy-textbook: the last pass started a job on the extra count
};

}  // namespace

std::unique_ptr<Scheduler> make_classic_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                                  World& world) {
  return std::make_unique<ClassicScheduler>(config, accounting, world);
}

}  // namespace gputwin
