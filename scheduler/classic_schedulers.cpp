#include "scheduler/classic_schedulers.hpp"

#include <algorithm>
#include <cassert>
#include <vector>

#include "scheduler/job_queue.hpp"
#include "scheduler/node_bitmap.hpp"
#include "scheduler/node_selection.hpp"
#include "scheduler/resource_scratch.hpp"

namespace gputwin {
namespace {

/// Free resources of every node during one slice of a conservative-backfilling profile.
struct ProfileSlice {
  SimTime begin = 0;
  std::vector<std::uint32_t> cpus, gpus, jobs;
  std::vector<std::uint64_t> mem;
};

class ClassicScheduler final : public Scheduler {
 public:
  ClassicScheduler(SchedulerPolicy policy, World& world)
      : policy_(policy),
        world_(world),
        state_(world.state()),
        selector_(state_.config()),
        scratch_(state_),
        allowed_(state_.node_count()) {}

  void on_submit(JobIndex j) override {
    JobRuntime& rt = const_cast<ClusterState&>(state_).job_mut(j);
    const JobSpec& spec = state_.spec(j);
    rt.time_limit_s = effective_time_limit_s(spec, state_.config().partitions[rt.partition]);
    rt.priority = 0;
    const std::uint64_t k2 = policy_ == SchedulerPolicy::kSjf ? static_cast<std::uint64_t>(rt.time_limit_s) : 0;
    queue_.insert(QueueKey{0, k2, spec.submit_s, spec.id, j});
    dirty_ = true;
  }
  void on_job_released(JobIndex) override { dirty_ = true; }
  void on_timer(TimerId) override {}
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
  const PartitionConfig& partition_of(JobIndex j) const { return state_.config().partitions[state_.job(j).partition]; }

  bool may_fit_now(JobIndex j) const {
    const JobSpec& spec = state_.spec(j);
    const std::uint32_t p = state_.job(j).partition;
    if (spec.nodes > 0) return state_.nodes_with_free_gpus(p, spec.gpus_per_node) >= spec.nodes;
    return state_.partition_free_cpus(p) >= spec.cpus && state_.nodes_with_free_gpus(p, spec.gpus_per_node) >= 1;
  }

  bool runnable(JobIndex j) const {
    const PartitionConfig& part = partition_of(j);
    return part.state == PartitionState::kUp && (part.max_time_s < 0 || state_.job(j).time_limit_s <= part.max_time_s);
  }

  bool try_start(JobIndex j, const std::uint64_t* allowed) {
    ++stats_.jobs_tested;
    if (!may_fit_now(j)) return false;
    if (!selector_.select(select_request(state_.spec(j)), partition_nodes(state_, state_.job(j).partition), allowed,
                          live_resources(state_), allocation_)) {
      return false;
    }
    start(j, allocation_);
    return true;
  }

  void start(JobIndex j, const std::vector<NodeAllocation>& allocation) {
    world_.start_job(j, allocation, world_.now() + from_seconds(state_.job(j).time_limit_s));
    ++stats_.main_starts;
  }

  // fcfs and sjf: start in queue order until the first job that does not fit. easy: then backfill behind it.
  void plan_list() {
    const auto& entries = queue_.entries();
    std::size_t pos = 0;
    for (; pos < entries.size(); ++pos) {
      const JobIndex j = entries[pos].job;
      if (!runnable(j)) continue;
      if (!try_start(j, nullptr)) break;
      queue_.remove_at(pos);
    }
    if (policy_ != SchedulerPolicy::kEasy || pos >= entries.size()) return;
    const JobIndex head = entries[pos].job;
    SimTime shadow = kNever;
    for (NodeIndex n = 0; n < state_.node_count(); ++n) allowed_.set(n);
    if (compute_shadow(head, shadow)) {
      for (const NodeAllocation& a : allocation_) allowed_.clear(a.node);  // the head's nodes at the shadow time
    }
    for (++pos; pos < entries.size(); ++pos) {
      const JobIndex j = entries[pos].job;
      if (!runnable(j) || !may_fit_now(j)) continue;
      const bool ends_by_shadow = world_.now() + from_seconds(state_.job(j).time_limit_s) <= shadow;
      if (try_start(j, ends_by_shadow ? nullptr : allowed_.words().data())) {
        queue_.remove_at(pos);
        ++stats_.backfill_starts;
        --stats_.main_starts;
      }
    }
  }

  // EASY's reservation for the blocked head: the earliest time running jobs (ending at start + limit) free
  // enough resources, and the nodes it would get then (left in allocation_). False if it can never fit.
  bool compute_shadow(JobIndex head, SimTime& shadow) {
    running_.clear();
    for (JobIndex j = 0; j < state_.job_count(); ++j) {
      if (state_.job(j).state == JobState::kRunning) running_.push_back(j);
    }
    auto limit_end = [&](JobIndex j) { return state_.job(j).start + from_seconds(state_.job(j).time_limit_s); };
    std::stable_sort(running_.begin(), running_.end(),
                     [&](JobIndex a, JobIndex b) { return limit_end(a) < limit_end(b); });
    const SelectRequest request = select_request(state_.spec(head));
    const PartitionConfig& part = partition_of(head);
    scratch_.reset();
    scratch_.track(request, selector_, state_.partition_bits(state_.job(head).partition));
    bool found = scratch_.fits();
    std::size_t i = 0;
    while (!found && i < running_.size()) {
      const SimTime t = limit_end(running_[i]);
      while (i < running_.size() && limit_end(running_[i]) == t) scratch_.add_back(state_.allocation(running_[i++]));
      if (scratch_.fits()) {
        shadow = std::max(t, world_.now());
        found = true;
      }
    }
    if (found) {
      const bool ok = selector_.select(request, NodeSet{part.nodes, nullptr}, nullptr, scratch_.view(), allocation_);
      assert(ok);
      (void)ok;
    }
    scratch_.reset();
    return found;
  }

  // Conservative backfilling: every queued job, in order, gets the earliest reservation that delays no earlier
  // reservation; jobs whose reservation starts now start.
  void plan_conservative() {
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

  void build_profile() {
    profile_.clear();
    ProfileSlice now;
    now.begin = world_.now();
    now.cpus.assign(state_.free_cpus().begin(), state_.free_cpus().end());
    now.gpus.assign(state_.free_gpus().begin(), state_.free_gpus().end());
    now.jobs.assign(state_.node_jobs().begin(), state_.node_jobs().end());
    now.mem.assign(state_.free_mem_mb().begin(), state_.free_mem_mb().end());
    profile_.push_back(std::move(now));
    for (JobIndex j = 0; j < state_.job_count(); ++j) {
      if (state_.job(j).state != JobState::kRunning) continue;
      const SimTime end = std::max(world_.now(), state_.job(j).start + from_seconds(state_.job(j).time_limit_s));
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

  SchedulerPolicy policy_;
  World& world_;
  const ClusterState& state_;
  NodeSelector selector_;
  ResourceScratch scratch_;
  JobQueue queue_;
  std::vector<NodeAllocation> allocation_;
  NodeBitmap allowed_;
  std::vector<JobIndex> running_;
  std::vector<ProfileSlice> profile_;
  ProfileSlice min_;
  SchedulerStats stats_;
  bool dirty_ = false;
};

}  // namespace

std::unique_ptr<Scheduler> make_classic_scheduler(SchedulerPolicy policy, World& world) {
  return std::make_unique<ClassicScheduler>(policy, world);
}

}  // namespace gputwin
