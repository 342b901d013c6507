#include "scheduler/slurm_scheduler.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scheduler/cpu_versions.hpp"
#include "scheduler/job_policy.hpp"
#include "scheduler/job_queue.hpp"
#include "scheduler/node_bitmap.hpp"
#include "scheduler/node_selection.hpp"
#include "scheduler/release_index.hpp"
#include "scheduler/resource_scratch.hpp"

namespace gputwin {
namespace {

constexpr TimerId kBatchTick = 0;     // _slurmctld_background's 1 s tick serving queued schedule() requests
constexpr TimerId kFullSchedule = 1;  // full-queue pass every sched_interval
constexpr TimerId kBackfill = 2;      // backfill_agent wake-up
constexpr TimerId kPriorityCalc = 3;  // priority/multifactor decay thread, every PriorityCalcPeriod
constexpr TimerId kHoldRelease = 4;   // a held job's release (scontrol release)
constexpr TimerId kReservation = 5;   // an advance reservation starts or ends

constexpr std::int64_t kPeriodicTimeoutS = 30;   // slurmctld.h PERIODIC_TIMEOUT
constexpr std::size_t kUnknownCount = SIZE_MAX;  // a bitmap's node count not computed on the way

std::int64_t floor_to(std::int64_t t, std::int64_t res) {
  return (t >= 0 ? t / res : -((-t + res - 1) / res)) * res;
}

/// Floors simulated time `t` to a multiple of `res` on the wall clock whose Unix time at t = 0 is `epoch`: slurmctld
/// rounds time_t values (backfill.c: `(start_time / backfill_resolution) * backfill_resolution`), so the grid's
/// phase is the epoch's, not the first submission's.
std::int64_t floor_on_clock(std::int64_t t, std::int64_t res, std::int64_t epoch) {
  const std::int64_t shift = epoch % res;
  return floor_to(t + shift, res) - shift;
}

/// End of the first 30 s will-run window after a running job ending at `end_s` (job_test.c:_will_run_test aligns
/// the windows on the wall clock: `end_time + (time_window - end_time % time_window)`).
std::int64_t will_run_anchor(std::int64_t end_s, std::int64_t epoch) {
  const std::int64_t shift = epoch % 30;
  return end_s + (30 - (((end_s + shift) % 30) + 30) % 30);
}

/// One slice of backfill's node_space map: [begin, end) seconds and the whole nodes still free for reservations.
struct Slice {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  NodeBitmap avail;
  /// Nodes free in the next slice but not in this one (0 for the last slice): where backfill's growth test can
  /// first succeed. Kept up to date by add_reservation.
  std::uint32_t grows = 0;
  /// Nodes free in every slice from the map's first to this one: a window that starts at the map's first slice (every
  /// record's first TRY_LATER step) is this slice's prefix, without ANDing the slices before it. Kept by
  /// add_reservation (shortcuts only).
  NodeBitmap prefix;
};

// The first element of `items` for which `before` is false, where `before` holds for a prefix of them (as
// std::partition_point), searched from `from`: doubling steps, then a binary search within the last one, so an answer
// a few elements on costs a few reads. A `from` past the answer (its element before fails `before`) is ignored.
template <typename T, typename Before>
std::size_t gallop(const std::vector<T>& items, std::size_t from, const Before& before) {
  const std::size_t count = items.size();
  std::size_t lo = from <= count && (from == 0 || before(items[from - 1])) ? from : 0;
  std::size_t step = 1;
  while (lo + step - 1 < count) {
    const std::size_t probe = lo + step - 1;
    if (!before(items[probe])) {  // the answer is in [lo, probe]
      return static_cast<std::size_t>(std::partition_point(items.begin() + static_cast<std::ptrdiff_t>(lo),
                                                           items.begin() + static_cast<std::ptrdiff_t>(probe), before) -
                                      items.begin());
    }
    lo = probe + 1;
    step *= 2;
  }
  return static_cast<std::size_t>(
      std::partition_point(items.begin() + static_cast<std::ptrdiff_t>(lo), items.end(), before) - items.begin());
}

/// The change in the number of nodes of `chosen` free in `next` but not in `prev` (two neighbouring slices' words)
/// when the chosen nodes leave `prev` (prev_loses) and `next` (next_loses): a slice's `grows` count after
/// add_reservation. Built with POPCNT too (the baseline's popcount is a library call per word).
GPUTWIN_POPCNT_CLONES std::int64_t grows_delta(const std::uint64_t* prev, const std::uint64_t* next,
                                               const SparseNodeSet& chosen, bool prev_loses, bool next_loses) {
  std::int64_t delta = 0;
  for (const auto& [w, bits] : chosen.words()) {
    const std::uint64_t p = prev[w], n = next[w];
    const std::uint64_t p_after = prev_loses ? p & ~bits : p;
    const std::uint64_t n_after = next_loses ? n & ~bits : n;
    delta += std::popcount(n_after & ~p_after & bits) - std::popcount(n & ~p & bits);
  }
  return delta;
}

/// AND of a window of consecutive slices, for windows whose both ends only move forward (one job's TRY_LATER
/// steps over an unchanging map): the two-stack sliding-window aggregate, O(1) bitmap ANDs per slice amortised
/// instead of one per slice per step.
class SlidingAnd {
 public:
  /// Forgets the window (the map changed).
  void reset() { valid_ = false; }
  /// avail &= the AND of slices[a..b], a <= b.
  void and_into(const std::vector<Slice>& slices, std::size_t a, std::size_t b, NodeBitmap& avail) {
    advance(slices, a, b);
    if (mid_ == hi_) {
      avail.and_with(front_[a - front_lo_]);  // the back part is empty (all ones)
    } else {
      avail.and_with_both(front_[a - front_lo_], back_);
    }
  }
  /// avail = the AND of slices[a..b], a <= b; returns the number of nodes in it.
  std::size_t assign_into(const std::vector<Slice>& slices, std::size_t a, std::size_t b, NodeBitmap& avail) {
    advance(slices, a, b);
    const NodeBitmap& front = front_[a - front_lo_];
    return avail.assign_and_count(front, mid_ == hi_ ? front : back_);  // an empty back part is all ones
  }

 private:
  // Moves the window to [a, b]: the back part takes the new slices, the front part is rebuilt when used up.
  void advance(const std::vector<Slice>& slices, std::size_t a, std::size_t b) {
    const std::size_t nodes = slices.front().avail.words().size() * 64;
    if (!valid_ || a < lo_ || b + 1 < hi_) {
      if (back_.words().size() * 64 != nodes) back_ = NodeBitmap(nodes);
      lo_ = front_lo_ = mid_ = hi_ = a;
      back_.fill();
      valid_ = true;
    }
    if (a < mid_) {
      for (; hi_ <= b; ++hi_) back_.and_with(slices[hi_].avail);
    } else {  // the front part is used up: rebuild suffix ANDs over [a, hi_), which take in the new slices directly
      hi_ = std::max(hi_, b + 1);
      const std::size_t count = hi_ - a;
      if (front_.size() < count) front_.resize(count);
      for (std::size_t i = hi_; i-- > a;) {
        NodeBitmap& f = front_[i - a];
        if (f.words().size() * 64 != nodes) f = NodeBitmap(nodes);
        if (i + 1 < hi_) {
          f.assign_and(slices[i].avail, front_[i + 1 - a]);
        } else {
          f.assign(slices[i].avail);
        }
      }
      front_lo_ = a;
      mid_ = hi_;
      back_.fill();
    }
    lo_ = a;
  }

  bool valid_ = false;
  std::size_t lo_ = 0, front_lo_ = 0, mid_ = 0, hi_ = 0;  // front covers [front_lo_, mid_), back [mid_, hi_)
  std::vector<NodeBitmap> front_;                         // front_[i - front_lo_] = AND of slices[i .. mid_ - 1]
  NodeBitmap back_;                                       // AND of slices[mid_ .. hi_ - 1] (all ones when empty)
};

class SlurmScheduler final : public Scheduler {
 public:
  SlurmScheduler(const SchedulerConfig& config, const AccountingConfig& accounting, World& world)
      : params_(config.slurm),
        world_(world),
        state_(world.state()),
        policy_(state_, accounting, config.priority),
        selector_(state_.config(), &state_),
        scratch_(state_),
        key_scratch_(state_),
        pass_avail_(state_.node_count()),
        partition_failed_(state_.config().partitions.size(), 0),
        releases_(state_) {
    for (const ReservationConfig& r : state_.config().reservations) {
      NodeBitmap b(state_.node_count());
      for (NodeIndex n : r.nodes) b.set(n);
      resv_bits_.push_back(std::move(b));
    }
    if (!resv_bits_.empty()) job_resv_.assign(state_.job_count(), -1);
    const auto& parts = state_.config().partitions;
    partition_bitmaps_.reserve(parts.size());
    for (const auto& p : parts) {
      NodeBitmap b(state_.node_count());
      for (NodeIndex n : p.nodes) b.set(n);
      partition_bitmaps_.push_back(std::move(b));
    }
  }

  void on_start() override {
    const SimTime origin = -from_seconds(params_.phase_s);  // slurmctld started phase_s before t = 0
    last_sched_time_ = origin;
    if (params_.sched_interval_s > 0) {
      world_.set_timer(ControllerId::kScheduler, kFullSchedule,
                       next_tick_at_or_after(world_.now(), origin, from_seconds(params_.sched_interval_s)));
    }
    if (params_.bf_interval_s > 0) {
      last_backfill_end_ = origin;
      bf_update_mark_ = state_.job_update_count();
      world_.set_timer(ControllerId::kScheduler, kBackfill,
                       next_tick_at_or_after(world_.now(), origin + from_seconds(params_.bf_interval_s),
                                             from_seconds(params_.bf_interval_s)));
    }
    for (const ReservationConfig& r : state_.config().reservations) {
      world_.expect_activity(from_seconds(r.start_s));
      world_.expect_activity(from_seconds(r.end_s));
    }
    arm_reservation_timer();
    if (policy_.multifactor()) {
      // _decay_thread: absolute cadence from slurmctld start.
      policy_.start_clock(to_seconds(origin));
      const SimTime period = from_seconds(policy_.calc_period_s());
      world_.set_timer(ControllerId::kScheduler, kPriorityCalc,
                       next_tick_at_or_after(world_.now(), origin + period, period));
    }
  }

  void on_job_submitted(JobIndex j) override {
    grow_job_records(j);  // a job a live run added to the table
    JobRuntime& rt = state_mut().job_mut(j);
    const JobSpec& spec = state_.spec(j);
    const auto& part = state_.config().partitions[rt.partition];
    rt.time_limit_s = effective_time_limit_s(spec, part);
    if (!spec.reservation.empty() && !admit_to_reservation(j)) {
      world_.reject_job(j, PendingReason::kInvalidReservation);  // "Access denied to requested reservation"
      return;
    }
    if (const PendingReason r = policy_.submit(j, to_seconds(world_.now())); r != PendingReason::kNone) {
      world_.reject_job(j, r);  // slurmctld refuses the submission; no job record, no scheduling
      return;
    }
    rt.priority = policy_.priority(j);
    queue_.insert(queue_key(j));
    if (policy_.has_conditions(j)) {
      conditional_.push_back(j);
      arm_hold_release();
      if (spec.begin_s > 0) world_.expect_activity(from_seconds(spec.begin_s));
      if (spec.hold_until_s >= 0 && spec.hold_until_s != kHeldForever)
        world_.expect_activity(from_seconds(spec.hold_until_s));
    }
    // queue_job_scheduler(): served by the next background tick once batch_sched_delay has passed.
    ++job_sched_count_;
    arm_batch_tick();
    note_change();
  }

  void on_job_requeued(JobIndex j) override {
    const std::int64_t now = to_seconds(world_.now());
    policy_.requeue(j, now);
    JobRuntime& rt = state_mut().job_mut(j);
    rt.priority = policy_.priority(j);
    being_preempted_.erase(j);
    queue_.insert(queue_key(j));
    conditional_.push_back(j);
    world_.expect_activity(from_seconds(now + 121));
    ++job_sched_count_;
    arm_batch_tick();
    note_change();
  }

  void on_job_adopted(JobIndex j) override {
    grow_job_records(j);
    JobRuntime& rt = state_mut().job_mut(j);
    rt.time_limit_s = effective_time_limit_s(state_.spec(j), state_.config().partitions[rt.partition]);
    (void)policy_.submit(j, to_seconds(rt.start));  // association, QOS, limits: slurmctld admitted it long ago
    rt.priority = policy_.priority(j);
    policy_.on_start(j, state_.allocation(j), to_seconds(rt.start));
    running_list_.push_back(ListedRun{j, rt.restarts});
    note_change();
  }

  void on_job_released(JobIndex j) override {
    policy_.on_end(j);
    // Epilog complete: _slurm_rpc_epilog_complete calls schedule() at once.
    note_change();
    schedule(false);
  }

  void on_timer(TimerId timer) override {
    switch (timer) {
      case kBatchTick:
        batch_tick_armed_ = false;
        if (job_sched_count_ > 0) {
          if (world_.now() - last_sched_time_ >= from_seconds(params_.batch_sched_delay_s)) {
            job_sched_count_ = 0;
            schedule(false);
          } else {
            arm_batch_tick();
          }
        }
        break;
      case kFullSchedule:
        schedule(true);
        world_.set_timer(ControllerId::kScheduler, kFullSchedule,
                         world_.now() + from_seconds(params_.sched_interval_s));
        break;
      case kBackfill:
        backfill_wakeup();
        break;
      case kPriorityCalc:
        recalculate_priorities();
        world_.set_timer(ControllerId::kScheduler, kPriorityCalc, world_.now() + from_seconds(policy_.calc_period_s()));
        break;
      case kReservation:
        // A reservation starting or ending changes which nodes jobs may use: a node update.
        state_mut().note_job_update();
        ++job_sched_count_;
        arm_batch_tick();
        note_change();
        arm_reservation_timer();
        break;
      case kHoldRelease:
        hold_armed_ = false;
        if (policy_.release_due(to_seconds(world_.now()))) {
          resort_queue();
          // scontrol release: a job update that queues a scheduler run.
          state_mut().note_job_update();
          ++job_sched_count_;
          arm_batch_tick();
          note_change();
        }
        arm_hold_release();
        break;
      default:
        break;
    }
  }

  [[nodiscard]] SchedulerStats stats() const override { return stats_; }
  [[nodiscard]] const JobPolicy* job_policy() const override { return &policy_; }

  // scancel of a pending job: it leaves the queue and its submit counts (acct_policy_remove_job_submit).
  void on_job_cancelled(JobIndex j) override {
    queue_.remove_job(j);
    policy_.on_end(j);
    being_preempted_.erase(j);
    state_mut().note_job_update();
    note_change();
  }

  // scontrol hold/release/update priority: the record changes (priority 0 while held, JobHeldAdmin), the queue is
  // sorted again, and the job update queues a scheduler run (update_job -> queue_job_scheduler()).
  void on_job_updated(JobIndex j, const JobUpdate& update) override {
    const std::int64_t now = to_seconds(world_.now());
    switch (update.kind) {
      case JobUpdate::Kind::kHold:
        if (!policy_.has_conditions(j)) conditional_.push_back(j);
        policy_.hold(j);
        blocked_[j] = true;
        world_.annotate_job(j, 0, PendingReason::kJobHeldAdmin);
        break;
      case JobUpdate::Kind::kRelease:
        policy_.release(j, now);
        break;
      case JobUpdate::Kind::kPriority:
        policy_.set_priority(j, update.priority);
        break;
      case JobUpdate::Kind::kTimeLimit:
        state_mut().job_mut(j).time_limit_s = update.time_limit_s;  // job_ptr->time_limit: the next passes read it
        break;
    }
    state_mut().job_mut(j).priority = policy_.priority(j);
    resort_queue();
    state_mut().note_job_update();
    ++job_sched_count_;
    arm_batch_tick();
    note_change();
  }

  // A node drained, went DOWN or came back: node_mgr.c's updates set last_node_update and queue_job_scheduler().
  void on_node_changed(NodeIndex, NodeCondition, NodeCondition) override {
    up_nodes_ = NodeBitmap();
    ++job_sched_count_;
    arm_batch_tick();
    note_change();
  }

 private:
  ClusterState& state_mut() { return const_cast<ClusterState&>(state_); }

  // sort_job_queue2: PriorityTier descending, priority descending, submit time, job id (array tasks: ArrayJobID,
  // then task id).
  QueueKey queue_key(JobIndex j) const {
    const JobSpec& spec = state_.spec(j);
    const auto& part = state_.config().partitions[state_.job(j).partition];
    const std::uint64_t id = spec.array_job_id != 0 ? spec.array_job_id : spec.id;
    // With preempt/qos, jobs that may preempt sort first (sort_job_queue2's preempt_g_job_preempt_check), then
    // jobs in a reservation.
    const std::uint64_t preemptor = policy_.is_preemptor(j) ? 0 : 1ULL << 33;
    const std::uint64_t in_resv = spec.reservation.empty() ? 1ULL << 32 : 0;
    return QueueKey{preemptor | in_resv | (UINT32_MAX - part.priority_tier),
                    UINT32_MAX - static_cast<std::uint64_t>(policy_.priority(j)), spec.submit_s,
                    (id << 22) | static_cast<std::uint64_t>(std::max(spec.array_task_id, 0)), j};
  }

  void resort_queue() {
    queue_.compact();
    queue_.rebuild([this](QueueKey& key) { key = queue_key(key.job); });
  }

  // The decay thread: new usage, fair share, pending priorities. Changed priorities are a job update.
  void recalculate_priorities() {
    queue_.compact();
    pending_scratch_.clear();
    for (const QueueKey& k : queue_.entries()) pending_scratch_.push_back(k.job);
    if (policy_.recalculate(to_seconds(world_.now()), pending_scratch_)) {
      resort_queue();
      for (JobIndex j : pending_scratch_) state_mut().job_mut(j).priority = policy_.priority(j);
      state_mut().note_job_update();
      note_change();
    }
  }

  // TRES of a reservation's planned nodes as the job would use them (for post-select limit checks).
  void fill_planned_tres(const JobSpec& spec) {
    const std::size_t n = planned_.size();
    if (n == 0) return;
    for (std::size_t i = 0; i < n; ++i) {
      NodeAllocation& a = planned_[i];
      a.gpus = spec.gpus_per_node;
      a.mem_mb = spec.mem_per_node_mb;
      a.cpus = spec.exclusive ? state_.config().nodes[a.node].cpus
                              : static_cast<std::uint32_t>(spec.cpus / n + (i < spec.cpus % n ? 1 : 0));
    }
  }

  // select_nodes with preemption: running jobs `j` may preempt, lowest rank (QOS priority or partition tier)
  // and youngest first, are taken until `j` fits on its partition; then any the fit does not need are dropped
  // (fewest preemptees). The chosen ones end PREEMPTED after their GraceTime and are requeued or cancelled.
  void try_preempt(JobIndex j) {
    const SimTime now_t = world_.now();
    if (auto it = preempt_wait_.find(j); it != preempt_wait_.end() && it->second > now_t) return;  // in progress
    const std::int64_t now = to_seconds(now_t);
    refresh_running();
    std::vector<JobIndex> candidates;
    for (const ListedRun& listed : running_list_) {
      const JobIndex b = listed.job;
      if (!being_preempted_.count(b) && policy_.can_preempt(j, b, now)) candidates.push_back(b);
    }
    if (candidates.empty()) return;
    std::sort(candidates.begin(), candidates.end(), [&](JobIndex a, JobIndex b) {
      const auto ra = policy_.preempt_rank(a), rb = policy_.preempt_rank(b);
      if (ra != rb) return ra < rb;
      if (state_.job(a).start != state_.job(b).start) return state_.job(a).start > state_.job(b).start;
      return a > b;
    });
    const SelectRequest request = select_request(state_.spec(j));
    const std::uint64_t* partition = state_.partition_bits(state_.job(j).partition);
    auto fits_without = [&](const std::vector<JobIndex>& gone) {
      scratch_.reset();
      scratch_.track(request, selector_, partition);
      for (JobIndex b : gone) scratch_.add_back(state_.allocation(b));
      const bool fits = scratch_.fits();
      scratch_.reset();
      return fits;
    };
    std::vector<JobIndex> chosen;
    bool fits = false;
    scratch_.reset();
    scratch_.track(request, selector_, partition);
    for (JobIndex b : candidates) {
      chosen.push_back(b);
      scratch_.add_back(state_.allocation(b));
      if ((fits = scratch_.fits())) break;
    }
    scratch_.reset();
    if (!fits) return;
    for (std::size_t i = chosen.size(); i-- > 0;) {  // keep only the preemptees the fit needs
      std::vector<JobIndex> fewer = chosen;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
      if (fits_without(fewer)) chosen = std::move(fewer);
    }
    SimTime last_end = now_t;
    for (JobIndex b : chosen) {
      const bool requeue = policy_.preempt_mode(b) == PreemptMode::kRequeue && state_.spec(b).requeue;
      const SimTime end = std::min(state_.job(b).planned_end, now_t + from_seconds(policy_.grace_time_s(b)));
      world_.preempt_job(b, end, requeue, j);
      being_preempted_.insert(b);
      last_end = std::max(last_end, end);
      ++stats_.preemptions;
    }
    preempt_wait_[j] = last_end + from_seconds(params_.epilog_s) + kMicrosPerSecond;
  }

  // The per-job records follow the job table, which a live run may extend (SimWorld::submit_job): grown once job
  // `j` is past them.
  void grow_job_records(JobIndex j) {
    if (j < blocked_.size()) return;
    blocked_.resize(state_.job_count(), 0);
    sorted_run_.resize(state_.job_count(), UINT32_MAX);
    if (!job_resv_.empty()) job_resv_.resize(state_.job_count(), -1);
    if (!wait4switch_start_.empty()) wait4switch_start_.resize(state_.job_count(), -1);
  }

  // Users=/Accounts= of the requested reservation admit the job (job_mgr.c: "Access denied").
  bool admit_to_reservation(JobIndex j) {
    const JobSpec& spec = state_.spec(j);
    const auto& all = state_.config().reservations;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].name != spec.reservation) continue;
      const auto& users = all[r].users;
      const auto& accounts = all[r].accounts;
      if (std::find(users.begin(), users.end(), spec.user) == users.end() &&
          std::find(accounts.begin(), accounts.end(), spec.account) == accounts.end())
        return false;
      job_resv_[j] = static_cast<std::int32_t>(r);
      return true;
    }
    return false;
  }

  void arm_reservation_timer() {
    const SimTime now = world_.now();
    SimTime next = kNever;
    for (const ReservationConfig& r : state_.config().reservations) {
      for (std::int64_t t : {r.start_s, r.end_s}) {
        if (from_seconds(t) > now) next = std::min(next, from_seconds(t));
      }
    }
    if (next != kNever) world_.set_timer(ControllerId::kScheduler, kReservation, next);
  }

  // job_test_resv: the nodes job `j` may use now. A job in a reservation uses only its nodes while it is active
  // (false before it starts or after it ends: reason Reservation); any other job avoids the nodes of every
  // reservation its run [now, now + limit) would overlap. Returns the mask to select within.
  bool reservation_mask(JobIndex j, const NodeBitmap& avail, const std::uint64_t*& mask) {
    mask = avail.words().data();
    if (resv_bits_.empty()) return true;
    const auto& all = state_.config().reservations;
    const std::int64_t now = to_seconds(world_.now());
    const std::int32_t own = job_resv_[j];
    if (own >= 0) {
      const ReservationConfig& r = all[static_cast<std::size_t>(own)];
      if (now < r.start_s || now >= r.end_s) return false;
      job_avail_.assign(avail);
      job_avail_.and_with(resv_bits_[static_cast<std::size_t>(own)]);
      mask = job_avail_.words().data();
      return true;
    }
    const std::int64_t end = now + state_.job(j).time_limit_s;
    bool copied = false;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].start_s >= end || all[r].end_s <= now) continue;
      if (!copied) {
        job_avail_.assign(avail);
        copied = true;
      }
      job_avail_.and_not(resv_bits_[r]);
    }
    if (copied) mask = job_avail_.words().data();
    return true;
  }

  void arm_hold_release() {
    const std::int64_t at = policy_.next_release_s();
    if (at == INT64_MAX || (hold_armed_ && hold_at_ <= at)) return;
    hold_armed_ = true;
    hold_at_ = at;
    world_.set_timer(ControllerId::kScheduler, kHoldRelease, std::max(world_.now(), from_seconds(at)));
  }

  // build_job_queue: held, dependent and not-yet-begun jobs are not queued. Evaluated for every such job at the
  // start of each pass, so a job's eligibility (and accrue time) does not depend on how far a pass gets.
  void refresh_eligibility() {
    if (conditional_.empty()) return;
    const std::int64_t now = to_seconds(world_.now());
    std::size_t out = 0;
    for (JobIndex j : conditional_) {
      if (state_.job(j).state != JobState::kPending) continue;
      const PendingReason r = policy_.eligibility(j, now);
      blocked_[j] = r != PendingReason::kNone && r != PendingReason::kJobArrayTaskLimit;
      if (blocked_[j]) world_.annotate_job(j, policy_.priority(j), r);
      conditional_[out++] = j;
    }
    conditional_.resize(out);
  }

  // Why queued record j may not be considered now (kNone if it may): eligibility, then the array throttle.
  PendingReason ineligible(JobIndex j) {
    if (!policy_.has_conditions(j)) return PendingReason::kNone;
    if (blocked_[j]) return state_.job(j).reason;
    return policy_.eligibility(j, to_seconds(world_.now()));
  }

  void arm_batch_tick() {
    if (batch_tick_armed_) return;
    const SimTime origin = -from_seconds(params_.phase_s);
    const SimTime earliest = std::max(world_.now() + 1, last_sched_time_ + from_seconds(params_.batch_sched_delay_s));
    world_.set_timer(ControllerId::kScheduler, kBatchTick, next_tick_at_or_after(earliest, origin, kMicrosPerSecond));
    batch_tick_armed_ = true;
  }

  // A job, node or partition changed: backfill_agent's _more_work() becomes true.
  void note_change() {
    if (bf_waiting_) {
      bf_waiting_ = false;
      // The agent polls every second after its last wake-up; it runs on the first poll at or after this change.
      SimTime at = next_tick_at_or_after(world_.now(), bf_wait_since_, kMicrosPerSecond);
      if (at <= bf_wait_since_) at = bf_wait_since_ + kMicrosPerSecond;
      world_.set_timer(ControllerId::kScheduler, kBackfill, at);
    }
  }

  SimTime kill_time(SimTime start, std::int64_t limit_s) const override {
    return slurm_timeout_kill_time(start, limit_s, params_);
  }

  void start_job(JobIndex j, const std::vector<NodeAllocation>& allocation) {
    const JobRuntime& rt = state_.job(j);
    policy_.on_start(j, allocation, to_seconds(world_.now()));
    world_.start_job(j, allocation, kill_time(world_.now(), rt.time_limit_s));
    running_list_.push_back(ListedRun{j, rt.restarts});
  }

  bool may_fit_now(const JobSpec& spec, std::uint32_t partition) const {
    return gputwin::may_fit_now(state_, spec, partition);
  }

  // ---- main scheduler: job_scheduler.c:_schedule -------------------------------------------------------------

  void schedule(bool full_queue) {
    ++stats_.passes;
    const auto& parts = state_.config().partitions;
    std::fill(partition_failed_.begin(), partition_failed_.end(), 0);
    pass_avail_.assign(up_nodes());
    std::uint32_t depth = 0;
    bool started = false;
    const auto& entries = queue_.entries();
    refresh_eligibility();
    for (std::size_t pos = 0; pos < entries.size(); ++pos) {
      const JobIndex j = entries[pos].job;
      if (const PendingReason r = ineligible(j); r != PendingReason::kNone) {  // not in the job queue
        world_.annotate_job(j, policy_.priority(j), r);
        continue;
      }
      if (!full_queue && depth++ > params_.default_queue_depth) break;
      const JobSpec& spec = state_.spec(j);
      JobRuntime& rt = state_mut().job_mut(j);
      const std::uint32_t p = rt.partition;
      const PartitionConfig& part = parts[p];
      if (part.state != PartitionState::kUp) {
        world_.annotate_job(j, rt.priority, PendingReason::kPartitionDown);
        continue;
      }
      if (part.max_time_s >= 0 && rt.time_limit_s > part.max_time_s) {
        world_.annotate_job(j, rt.priority, PendingReason::kPartitionTimeLimit);
        continue;
      }
      if (partition_failed_[p]) {
        if (rt.reason == PendingReason::kNone || rt.reason == PendingReason::kResources) {
          world_.annotate_job(j, rt.priority, PendingReason::kPriority);
        }
        continue;
      }
      // Limits: ESLURM_ACCOUNTING_POLICY does not fail the partition (no assoc_limit_stop).
      if (const PendingReason r = policy_.pre_select(j); r != PendingReason::kNone) {
        world_.annotate_job(j, rt.priority, r);
        continue;
      }
      const std::uint64_t* mask = nullptr;
      if (!reservation_mask(j, pass_avail_, mask)) {  // its reservation is not active: only that is flagged
        world_.annotate_job(j, rt.priority, PendingReason::kReservation);
        continue;
      }
      ++stats_.jobs_tested;
      if (may_fit_now(spec, p) &&
          selector_.select(run_now_request(j, to_seconds(world_.now())), partition_nodes(state_, p), mask,
                           live_resources(state_), allocation_)) {
        if (const PendingReason r = policy_.post_select(j, allocation_); r != PendingReason::kNone) {
          world_.annotate_job(j, rt.priority, r);
          continue;
        }
        start_job(j, allocation_);
        queue_.remove_at(pos);
        ++stats_.main_starts;
        started = true;
        continue;
      }
      // ESLURM_NODES_BUSY: with preemption, select_nodes first asks running preemptable jobs to leave; the job
      // still waits (preempt_in_progress) and starts when their resources are released.
      if (policy_.preemption_enabled()) try_preempt(j);
      // The partition fails for this pass and its nodes leave the pass's avail_node_bitmap.
      world_.annotate_job(j, rt.priority, PendingReason::kResources);
      partition_failed_[p] = 1;
      pass_avail_.and_not(partition_bitmaps_[p]);
      // Once every partition has failed no later record can start, but the pass still walks them (up to the
      // depth) to set their reasons (Priority), as slurmctld does: squeue and the reason history show them.
    }
    queue_.compact();
    last_sched_time_ = world_.now();
    if (started) note_change();
  }

  // ---- backfill: backfill.c:backfill_agent / _attempt_backfill ---------------------------------------------

  void backfill_wakeup() {
    const SimTime now = world_.now();
    const bool more_work = state_.job_update_count() != bf_update_mark_ || bf_left_estimates_;
    if (!more_work) {
      bf_waiting_ = true;
      bf_wait_since_ = now;
      return;
    }
    attempt_backfill();
    last_backfill_end_ = world_.now();
    bf_update_mark_ = state_.job_update_count();
    world_.set_timer(ControllerId::kScheduler, kBackfill, last_backfill_end_ + from_seconds(params_.bf_interval_s));
  }

  // Position of the last queue record that could possibly start now (by the partitions' counters), or -1.
  // Free resources only shrink during a cycle, so records after it can never start in this cycle.
  // Whether the plain cycle would leave a start estimate (_more_work) is testable_from's question.
  std::int64_t last_startable_record() {
    const auto& entries = queue_.entries();
    for (std::int64_t pos = static_cast<std::int64_t>(entries.size()) - 1; pos >= 0; --pos) {
      const JobIndex j = entries[static_cast<std::size_t>(pos)].job;
      if (!backfill_testable(j)) continue;
      if (may_fit_now(state_.spec(j), state_.job(j).partition)) return pos;
    }
    return -1;
  }

  // Shortcut (with the start bound): the last record that could start now (by the partitions' counters) among the
  // first bf_max_job_test testable ones, or -1. Later records are never tested: before any start the records'
  // testability is what it is now, so the plain cycle's test budget ends at the same record, and it can start
  // nothing unless one of these can. False (stop_after untouched) if a record with eligibility conditions comes
  // first: its testability may change as jobs start (an array throttle), and the whole queue is scanned instead.
  // Shortcut (shortcut_keep_index): the answer is kept for the next cycle. It reads the queue's order, the records'
  // conditions, reservations and time limits, partition states and the partitions' free counters; each change of
  // those comes with a job update (submit, start, end, node change, requeue, cancel, hold, priority or time-limit
  // update), so an unchanged job_update_count and queue length give the same answer.
  bool first_startable_within_budget(std::int64_t& stop_after) {
    const auto& entries = queue_.entries();
    if (params_.shortcut_keep_index && scan_kept_ && scan_updates_ == state_.job_update_count() &&
        scan_size_ == entries.size()) {
      if (scan_stop_ == kScanConditional) return false;
      stop_after = scan_stop_;
      return true;
    }
    scan_kept_ = true;
    scan_updates_ = state_.job_update_count();
    scan_size_ = entries.size();
    scan_stop_ = kScanConditional;
    std::int64_t last_fit = -1;
    std::uint32_t counted = 0;
    for (std::size_t pos = 0; pos < entries.size() && counted < params_.bf_max_job_test; ++pos) {
      const JobIndex j = entries[pos].job;
      if (policy_.has_conditions(j)) return false;
      if (!backfill_testable(j)) continue;
      ++counted;
      if (may_fit_now(state_.spec(j), state_.job(j).partition)) last_fit = static_cast<std::int64_t>(pos);
    }
    stop_after = last_fit;
    scan_stop_ = last_fit;
    return true;
  }

  // True if a record at or after `pos` is testable now: the plain cycle would test it and leave a start estimate.
  bool testable_from(std::size_t pos) {
    const auto& entries = queue_.entries();
    for (; pos < entries.size(); ++pos) {
      if (backfill_testable(entries[pos].job)) return true;
    }
    return false;
  }

  // Backfill tests a record only if it is eligible, its partition is UP and its limit fits the partition's MaxTime.
  // Jobs in an advance reservation are left to the main scheduler (which runs when the reservation starts).
  bool backfill_testable(JobIndex j) {
    if (!resv_bits_.empty() && job_resv_[j] >= 0) return false;
    return ineligible(j) == PendingReason::kNone && partition_admits(state_, j);
  }

  void attempt_backfill() {
    ++stats_.backfill_cycles;
    bf_left_estimates_ = false;
    const SimTime now_t = world_.now();
    const std::int64_t now = to_seconds(now_t);
    const std::int64_t res = params_.bf_resolution_s;
    const std::int64_t window_end = floor_on_clock(now + params_.bf_window_min * 60, res, params_.epoch_unix_s);
    const std::size_t node_count = state_.node_count();

    refresh_eligibility();
    std::int64_t stop_after = static_cast<std::int64_t>(queue_.size()) - 1;
    // With limits enforced, a limit-blocked record leaves no estimate, which the shortcut cannot foresee.
    // The start bound below (flat topology: no --switches trace left by records tested without starting).
    const bool bound_possible =
        params_.shortcuts && !policy_.limits_enforced() && state_.config().topology.slurm.kind == TopologyKind::kFlat;
    if (params_.shortcuts && !policy_.limits_enforced()) {
      if (!bound_possible || !first_startable_within_budget(stop_after)) stop_after = last_startable_record();
      if (stop_after < 0) {
        // Nothing can start now: the plain cycle would only compute reservations, which do not outlive it.
        ++stats_.backfill_skipped;
        bf_left_estimates_ = testable_from(0);
        return;
      }
    }

    // node_space[0]: every UP node, from floor(now/res) to the end of the window.
    slices_.clear();
    Slice first{floor_on_clock(now, res, params_.epoch_unix_s), window_end, NodeBitmap(node_count), 0, NodeBitmap()};
    for (NodeIndex n = 0; n < node_count; ++n) {
      if (state_.node_schedulable(n)) first.avail.set(n);
    }
    map_nodes_ = first.avail;
    if (params_.shortcuts) first.prefix = first.avail;
    slices_.push_back(std::move(first));
    // Shortcut: track which nodes stay free from now on, to stop the cycle once no later record could start (see
    // start_bound_passes). Not with topology (--switches leaves a trace, wait4switch_start, on records tested).
    bound_on_ = bound_possible;
    if (bound_on_) {
      bound_now_ = now;
      free_until_.assign(node_count, INT64_MAX);
      collect_bound_candidates();
    }
    partition_covers_.assign(partition_bitmaps_.size(), -1);
    // Advance reservations: their nodes are not available to backfilled jobs while they last.
    const auto& reservations = state_.config().reservations;
    for (std::size_t r = 0; r < reservations.size(); ++r) {
      if (reservations[r].end_s <= now || reservations[r].start_s >= window_end) continue;
      chosen_.clear();
      for (NodeIndex n = 0; n < node_count; ++n) {
        if (resv_bits_[r].test(n)) chosen_.add(n);
      }
      add_reservation(std::max(reservations[r].start_s, slices_.front().begin), reservations[r].end_s, 1);
    }

    sort_running();
    next_seq_ = static_cast<std::uint32_t>(running_.size());
    if (params_.shortcuts && !index_unchanged()) {
      releases_.rebuild(running_);
      reset_key_scratch();
      remember_index();
    }

    std::uint32_t tested = 0;
    std::uint32_t started = 0;
    const auto& entries = queue_.entries();
    if (bound_on_) tighten_stop_after(stop_after, -1);
    for (std::size_t pos = 0; pos < entries.size(); ++pos) {
      if (tested >= params_.bf_max_job_test) break;
      if (slices_.size() >= params_.bf_max_job_test) break;  // bf_node_space_size: table full ends the cycle
      if (params_.bf_max_job_start > 0 && started >= params_.bf_max_job_start) break;
      if (static_cast<std::int64_t>(pos) > stop_after) {
        // Shortcut: the rest can only reserve. The plain cycle would still test the next testable record, if any,
        // and leave it pending with a start estimate, which is what _more_work sees.
        bf_left_estimates_ = bf_left_estimates_ || testable_from(pos);
        break;
      }
      const JobIndex j = entries[pos].job;
      if (!backfill_testable(j)) continue;
      ++tested;
      ++stats_.jobs_tested;
      if (const PendingReason r = policy_.pre_select(j); r != PendingReason::kNone) {
        world_.annotate_job(j, policy_.priority(j), r);  // skipped: no reservation without assoc_limit_stop
        continue;
      }
      const BackfillOutcome outcome = backfill_job(j, now, window_end);
      if (outcome == BackfillOutcome::kStarted) {
        queue_.remove_at(pos);
        ++started;
        ++stats_.backfill_starts;
        if (bound_on_) drop_full_candidates(j);  // the started job's nodes may be full now
      } else {
        bf_left_estimates_ = true;
      }
      if (bound_on_ && bound_dirty_) tighten_stop_after(stop_after, static_cast<std::int64_t>(pos));
    }
    bound_on_ = false;
    queue_.compact();
    if (started > 0) note_change();
  }

  enum class BackfillOutcome { kStarted, kReserved, kNotPlaced };

  // Running jobs by expected end (start + limit), equal ends in start order: _cr_job_list_sort over the running
  // list; seq numbers the result. Shortcut: the last sorted list (with the jobs its cycle started) is kept, less the
  // runs that ended since, and only the runs started since are sorted and merged in. Those follow every kept run in
  // start order, so on equal ends they come after, as the stable sort puts them (std::merge takes the first range's
  // first). Without the shortcuts, or when a kept run's expected end changed (a time limit update), nothing is kept
  // and every run is sorted.
  void sort_running() {
    refresh_running();
    if (!params_.shortcuts || !running_sorted_ || !keep_sorted_runs()) {
      running_.clear();
      listed_sorted_ = 0;
    }
    started_since_.clear();
    for (std::size_t i = listed_sorted_; i < running_list_.size(); ++i) {
      const ListedRun& listed = running_list_[i];
      started_since_.push_back(RunningJob{expected_end(listed.job), 0, listed.job});
      sorted_run_[listed.job] = listed.run;
    }
    const auto by_end = [](const RunningJob& a, const RunningJob& b) { return a.end_s < b.end_s; };
    std::stable_sort(started_since_.begin(), started_since_.end(), by_end);
    merged_running_.clear();
    std::merge(running_.begin(), running_.end(), started_since_.begin(), started_since_.end(),
               std::back_inserter(merged_running_), by_end);
    running_.swap(merged_running_);
    running_sorted_ = true;
    listed_sorted_ = running_list_.size();
    for (std::size_t i = 0; i < running_.size(); ++i) running_[i].seq = static_cast<std::uint32_t>(i);
  }

  // Drops from the last sorted list the runs that ended (or were requeued) since; false if a kept run's expected
  // end changed.
  bool keep_sorted_runs() {
    std::size_t out = 0;
    for (const RunningJob& r : running_) {
      const JobRuntime& rt = state_.job(r.job);
      if (rt.state != JobState::kRunning || rt.restarts != sorted_run_[r.job]) continue;  // ended, or requeued
      if (expected_end(r.job) != r.end_s) return false;
      running_[out++] = r;
    }
    running_.resize(out);
    return true;
  }

  // A running job's expected end, seconds: start + time limit.
  std::int64_t expected_end(JobIndex j) const {
    const JobRuntime& rt = state_.job(j);
    return to_seconds(rt.start) + rt.time_limit_s;
  }

  // Drops runs that ended from the running list (it grows as jobs start). A job requeued and started again since
  // the last refresh is listed twice, and only the entry of its current run stays: will-run counts its release
  // once. (The plain cycle refreshes every bf_interval; a skipped cycle does not, so without the run count a
  // restart after skipped cycles was counted twice, and the shortcuts changed schedules.)
  void refresh_running() {
    std::size_t out = 0, sorted_kept = 0;
    for (std::size_t i = 0; i < running_list_.size(); ++i) {
      const ListedRun& listed = running_list_[i];
      const JobRuntime& rt = state_.job(listed.job);
      if (rt.state == JobState::kRunning && rt.restarts == listed.run) {
        running_list_[out++] = listed;
        if (i < listed_sorted_) ++sorted_kept;
      }
    }
    running_list_.resize(out);
    listed_sorted_ = sorted_kept;
  }

  BackfillOutcome backfill_job(JobIndex j, std::int64_t now, std::int64_t window_end) {
    const JobSpec& spec = state_.spec(j);
    const JobRuntime& rt = state_.job(j);
    const SelectRequest request = select_request(spec);
    const std::int64_t res = params_.bf_resolution_s;
    const std::int64_t limit = rt.time_limit_s;
    const std::size_t node_count = state_.node_count();
    // Reused between tests (every path below assigns both before reading them).
    if (bf_avail_.words().size() != (node_count + 63) / 64) bf_avail_ = NodeBitmap(node_count);
    if (bf_base_.words().size() != (node_count + 63) / 64) bf_base_ = NodeBitmap(node_count);
    NodeBitmap& avail = bf_avail_;
    NodeBitmap& base = bf_base_;
    window_and_.reset();
    slot_and_.reset();
    base.assign(partition_bitmaps_[rt.partition]);
    base.and_with(up_nodes());
    std::int64_t later_start = now;
    std::int64_t last_try = -1;
    std::size_t first_hint = 0;
    window_end_hint_ = 0;
    bound_pos_hint_ = 0;
    while (true) {  // TRY_LATER
      const std::int64_t start_res = later_start;
      if (start_res <= last_try) return BackfillOutcome::kNotPlaced;  // no progress (cannot happen; guard)
      last_try = start_res;
      later_start = 0;
      if (start_res > window_end) return BackfillOutcome::kNotPlaced;
      const std::int64_t end_time = std::max(start_res, now) + limit;
      // avail = partition nodes that are UP, ANDed with every slice overlapping [start_res, end_time]; later_start
      // = the first slice boundary after which more of the candidate nodes (base) become free.
      // start_res only grows within a record's steps (and the map does not change), so neither does `first`.
      first_hint = first_slice_ending_after(start_res, first_hint);
      const auto first = slices_.begin() + static_cast<std::ptrdiff_t>(first_hint);
      std::size_t avail_count = kUnknownCount;
      if (params_.shortcuts) {
        avail_count = window_slices(first, end_time, base, covers_map(rt.partition), avail, later_start);
      } else {
        avail.assign(base);
      }
      for (std::size_t s = static_cast<std::size_t>(first - slices_.begin()); !params_.shortcuts && s < slices_.size();
           ++s) {
        const Slice& slice = slices_[s];
        const bool has_next = s + 1 < slices_.size();
        if (slice.begin <= end_time) {
          if (has_next && later_start == 0) {
            if (avail.and_with_growth(slice.avail, base, slices_[s + 1].avail)) later_start = slice.end;
          } else {
            avail.and_with(slice.avail);
          }
        } else {
          if (has_next && later_start == 0 && avail.grows_after(slice.avail, base, slices_[s + 1].avail)) {
            later_start = slice.end;
          }
          if (later_start == 0 && has_next && s + 2 < slices_.size()) later_start = slices_[s + 1].end;
          break;
        }
      }
      const std::uint32_t min_nodes = std::max<std::uint32_t>(spec.nodes, 1);
      std::int64_t start_time = -1;
      bool may_fit = avail_count != kUnknownCount ? avail_count >= min_nodes : avail.has_at_least(min_nodes);
      // Shortcut: a CPU count needs nodes whose CPUs add up to it; no node gives more than it has, so on a
      // partition of equal nodes fewer than cpus / cpus-per-node nodes can never fit (will-run's answer: -1).
      if (may_fit && spec.nodes == 0 && params_.shortcuts && params_.shortcut_cpu_count) {
        const std::uint32_t node_cpus = uniform_cpus(rt.partition);
        if (node_cpus > 0) {
          if (avail_count == kUnknownCount) avail_count = avail.count();
          may_fit = std::uint64_t{avail_count} * node_cpus >= request.cpus;
        }
      }
      if (may_fit) {
        start_time = will_run(request, rt.partition, avail, start_res, later_start, now);
      }
      if (start_time < 0) {
        if (later_start != 0) continue;  // SKIP_OR_TRY_LATER
        return BackfillOutcome::kNotPlaced;
      }
      start_time = std::max(start_time, start_res);
      // Chosen nodes are in chosen_ (set by will_run, or by choose_nodes when will_run left the choice pending).
      bool overlap_tested = false;
      std::int64_t slot_start = 0, slot_end = 0;
      if (start_time > now) {
        // Shortcut: a start past the window gets no reservation, and neither does one that overlaps (its next
        // step begins past window_end): the outcome is known without the nodes.
        if (index_answer_ && params_.shortcut_overlap_by_count && start_time > now + params_.bf_window_min * 60) {
          return BackfillOutcome::kNotPlaced;
        }
        set_slot_time(start_time, limit, res, slot_start, slot_end);
        bool overlaps = false;
        if (index_answer_ && params_.shortcut_overlap_by_count && overlap_is_certain(slot_start, slot_end)) {
          overlaps = true;
          if (params_.cross_check_will_run) {  // tests: the choice (made already) must overlap indeed
            if (!reservation_overlaps(slot_start, slot_end)) {
              throw std::logic_error("backfill: overlap by count wrong at t=" + std::to_string(now));
            }
          }
          choice_pending_ = false;
        } else {
          choose_nodes();
          overlaps = reservation_overlaps(slot_start, slot_end);
        }
        if (overlaps) {
          later_start = start_time;
          if (start_res == start_time) later_start += res;  // "inf loop detect"
          continue;
        }
        overlap_tested = true;
      }
      if (start_time <= now) {
        // _start_job: select_nodes among the pre-will-run avail_bitmap (others excluded).
        const bool ok = selector_.select(run_now_request(j, now), partition_nodes(state_, rt.partition),
                                         avail.words().data(), live_resources(state_), allocation_);
        if (ok && policy_.post_select(j, allocation_) != PendingReason::kNone) {
          world_.annotate_job(j, policy_.priority(j), policy_.post_select(j, allocation_));
          return BackfillOutcome::kNotPlaced;  // limits: skipped, no reservation
        }
        if (ok) {
          start_job(j, allocation_);
          const std::int64_t end_s = now + limit;
          // Started jobs become running jobs for later will-run tests of this cycle.
          auto it = std::upper_bound(running_.begin(), running_.end(), end_s,
                                     [](std::int64_t e, const RunningJob& r) { return e < r.end_s; });
          const RunningJob started{end_s, next_seq_++, j};
          running_.insert(it, started);
          sorted_run_[j] = rt.restarts;
          listed_sorted_ = running_list_.size();
          if (params_.shortcuts) releases_.add_started(started);
          reset_key_scratch();
          index_kept_ = false;
          return BackfillOutcome::kStarted;
        }
        start_time = now;  // could not start after all: reserve from now
        later_start = 0;
      }
      choose_nodes();
      if (later_start != 0 && start_time > later_start) continue;  // could start earlier once a reservation ends
      if (!overlap_tested) set_slot_time(start_time, limit, res, slot_start, slot_end);
      if (start_time > now + params_.bf_window_min * 60) return BackfillOutcome::kNotPlaced;
      if (!overlap_tested && reservation_overlaps(slot_start, slot_end)) {
        later_start = start_time;
        continue;
      }
      if (policy_.limits_enforced()) {  // acct_policy_job_runnable_post_select with the planned nodes
        planned_.clear();
        for (const auto& [word, bits] : chosen_.words()) {
          for (std::uint64_t b = bits; b != 0; b &= b - 1) {
            const auto n = static_cast<NodeIndex>(word * 64U + static_cast<unsigned>(std::countr_zero(b)));
            planned_.push_back(NodeAllocation{n, 0, 0, 0});
          }
        }
        fill_planned_tres(spec);
        if (const PendingReason r = policy_.post_select(j, planned_); r != PendingReason::kNone) {
          world_.annotate_job(j, policy_.priority(j), r);
          return BackfillOutcome::kNotPlaced;
        }
      }
      add_reservation(slot_start, slot_end, res);
      return BackfillOutcome::kReserved;
    }
  }

  // ---- shortcut: the last record that could still start in this cycle ----------------------------------------
  //
  // A record starts in a backfill cycle only on its first TRY_LATER step (start_res = now; later steps have
  // start_res > now, so start_time > now), by selecting on the live free resources among `avail`: the partition's
  // UP nodes present in every slice that overlaps [now, now + limit]. A node is missing from some such slice
  // exactly when a reservation of this cycle covers it over [s, e) with e > now and s <= now + limit (slices are
  // contiguous and reservations are unions of slices), so free_until_[n] (the earliest such s) > now + limit is
  // necessary. Only nodes with a free CPU (or no job) now can take part (bound_candidate_), each with at most its free
  // CPUs (all of them when idle, as an exclusive job counts it). So a record can start only if enough candidate nodes
  // (fixed count), or their CPUs (floating count), stay free past now + limit. Both only shrink during the cycle
  // (reservations are only added, starts only take resources), so a record failing the test now fails it when
  // reached: once every record after the current one fails, the plain cycle would start nothing more, and its
  // remaining tests only compute reservations that die with the cycle. What it would leave behind is a start
  // estimate for the next testable record (_more_work), which the loop's stop already accounts for.

  // True if node n has a free CPU (or no job) now.
  bool bound_candidate(NodeIndex n) const {
    return state_.node_schedulable(n) && (state_.free_cpus()[n] != 0 || state_.node_jobs()[n] == 0);
  }

  // Nodes with a free CPU (or no job) now.
  void collect_bound_candidates() {
    const std::size_t node_count = state_.node_count();
    bound_candidate_.assign(node_count, 0);
    bound_nodes_.clear();
    for (NodeIndex n = 0; n < node_count; ++n) {
      if (!bound_candidate(n)) continue;
      bound_candidate_[n] = 1;
      bound_nodes_.push_back(n);
    }
    bound_dirty_ = true;
  }

  // After job j started in this cycle, as collect_bound_candidates would leave them: only its nodes can have stopped
  // being candidates (a start only takes resources, and nothing else changes within the cycle), so they alone are
  // tested again. The order of bound_nodes_ plays no part (refresh_bound sorts it, and the prefix sums read from it
  // are sums over sets). Their free CPUs changed, so the order is refreshed in any case.
  void drop_full_candidates(JobIndex j) {
    bool dropped = false;
    for (const NodeAllocation& a : state_.allocation(j)) {
      if (bound_candidate_[a.node] != 0 && !bound_candidate(a.node)) {
        bound_candidate_[a.node] = 0;
        dropped = true;
      }
    }
    if (dropped) std::erase_if(bound_nodes_, [&](NodeIndex n) { return bound_candidate_[n] == 0; });
    bound_dirty_ = true;
    if (params_.cross_check_will_run) {  // tests: the same candidates, in the same order, as a full collection
      const std::vector<NodeIndex> kept = bound_nodes_;
      collect_bound_candidates();
      if (kept != bound_nodes_) throw std::logic_error("backfill bound: candidates after a start differ from a scan");
    }
  }

  // Sorts the candidates by free_until_, latest first, with running counts and CPU sums.
  void refresh_bound() {
    bound_order_.clear();
    for (NodeIndex n : bound_nodes_) {
      const std::uint32_t jobs = state_.node_jobs()[n];
      const std::uint32_t cpus =
          jobs == 0 ? std::max(state_.free_cpus()[n], state_.config().nodes[n].cpus) : state_.free_cpus()[n];
      bound_order_.emplace_back(free_until_[n], cpus);
    }
    std::sort(bound_order_.begin(), bound_order_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    bound_cpus_.assign(bound_order_.size() + 1, 0);
    for (std::size_t i = 0; i < bound_order_.size(); ++i) bound_cpus_[i + 1] = bound_cpus_[i] + bound_order_[i].second;
    bound_dirty_ = false;
  }

  // The necessary condition above for record j (testable, flat topology).
  bool start_bound_passes(JobIndex j) const {
    const JobSpec& spec = state_.spec(j);
    const std::int64_t until = bound_now_ + state_.job(j).time_limit_s;
    // Candidates free past `until`: a prefix of bound_order_.
    const auto count = static_cast<std::size_t>(
        std::partition_point(bound_order_.begin(), bound_order_.end(),
                             [until](const std::pair<std::int64_t, std::uint32_t>& e) { return e.first > until; }) -
        bound_order_.begin());
    if (spec.nodes > 0) return count >= spec.nodes;
    return count >= 1 && bound_cpus_[count] >= std::max<std::uint32_t>(spec.cpus, 1);
  }

  // Lowers stop_after to the last record after `pos` that could still start (pos if none).
  void tighten_stop_after(std::int64_t& stop_after, std::int64_t pos) {
    if (bound_dirty_) refresh_bound();
    const auto& entries = queue_.entries();
    for (; stop_after > pos; --stop_after) {
      const JobIndex j = entries[static_cast<std::size_t>(stop_after)].job;
      if (policy_.has_conditions(j)) break;  // its testability may change during the cycle: kept
      if (backfill_testable(j) && may_fit_now(state_.spec(j), state_.job(j).partition) && start_bound_passes(j)) {
        break;
      }
    }
  }

  const NodeBitmap& up_nodes() {
    if (up_nodes_.words().empty()) {
      up_nodes_ = NodeBitmap(state_.node_count());
      for (NodeIndex n = 0; n < state_.node_count(); ++n) {
        if (state_.node_schedulable(n)) up_nodes_.set(n);
      }
    }
    return up_nodes_;
  }

  // The CPUs of every node of the partition if they are all equal, else 0.
  std::uint32_t uniform_cpus(std::uint32_t partition) {
    if (uniform_cpus_.empty()) {
      const auto& parts = state_.config().partitions;
      uniform_cpus_.assign(parts.size(), 0);
      for (std::size_t p = 0; p < parts.size(); ++p) {
        std::uint32_t c = 0;
        bool same = true;
        for (NodeIndex n : parts[p].nodes) {
          const std::uint32_t cpus = state_.config().nodes[n].cpus;
          if (c != 0 && cpus != c) same = false;
          c = cpus;
        }
        uniform_cpus_[p] = same ? c : 0;
      }
    }
    return uniform_cpus_[partition];
  }

  // True if the partition's UP nodes include every node of this cycle's map, so that base & slice = slice.
  bool covers_map(std::uint32_t partition) {
    std::int8_t& c = partition_covers_[partition];
    if (c < 0) {
      // map \ (partition & up) must be empty. (Before issue 16 this was map & ~partition & ~up, empty whenever the
      // map's nodes are UP, so a partition smaller than the map counted as covering it and avail took in nodes
      // outside the partition: the will-run index then counted them, and the shortcut schedule could differ from
      // the plain one on clusters with such partitions.)
      NodeBitmap inside(state_.node_count());
      inside.assign(partition_bitmaps_[partition]);
      inside.and_with(up_nodes());
      NodeBitmap outside(state_.node_count());
      outside.assign(map_nodes_);
      outside.and_not(inside);
      c = outside.count() == 0 ? 1 : 0;
    }
    return c != 0;
  }

  // True if a node of `base` is free in slice t + 1 but not in slice t (t + 1 < slices_.size()).
  bool pair_grows(std::size_t t, const NodeBitmap& base, bool covers) const {
    if (slices_[t].grows == 0) return false;
    return covers || slices_[t].avail.grows_after(slices_[t].avail, base, slices_[t + 1].avail);
  }

  // The slice walk of one TRY_LATER step: the same avail and later_start as the plain walk. The plain walk finds
  // growth at slice s exactly when some slice t in [first, s] has a node of base free in slice t + 1 but not in
  // slice t (the last slice before s + 1 that misses the growing node is such a t), so later_start is the end of
  // the first such t, read from the slices' `grows` counts; the window's AND comes from the sliding aggregate.
  // Sets avail (base ANDed with the window's slices) and returns the number of its nodes, or kUnknownCount.
  std::size_t window_slices(std::vector<Slice>::const_iterator first, std::int64_t end_time, const NodeBitmap& base,
                            bool covers, NodeBitmap& avail, std::int64_t& later_start) {
    const std::size_t count = slices_.size();
    const std::size_t f = static_cast<std::size_t>(first - slices_.begin());
    if (f >= count) {
      avail.assign(base);
      return kUnknownCount;
    }
    // last: the last slice beginning at or before end_time (slices are contiguous, so f <= last). end_time only
    // grows within a record's steps, so the first slice beginning after it does too.
    window_end_hint_ = first_slice_beginning_after(end_time, std::max(f + 1, window_end_hint_));
    const std::size_t last = window_end_hint_ - 1;
    // Every slice is within the map, so when base covers the map the window's AND is avail as it is.
    std::size_t avail_count = kUnknownCount;
    if (f == 0) {  // the window starts at the map's first slice: its AND is the last slice's prefix
      const NodeBitmap& prefix = slices_[last].prefix;
      if (covers) {
        avail_count = avail.assign_and_count(prefix, prefix);
      } else {
        avail.assign_and(base, prefix);
      }
    } else if (covers) {
      avail_count = window_and_.assign_into(slices_, f, last, avail);
    } else {
      avail.assign(base);
      window_and_.and_into(slices_, f, last, avail);
    }
    for (std::size_t t = f; t <= last && t + 1 < count; ++t) {
      if (pair_grows(t, base, covers)) {
        later_start = slices_[t].end;
        return avail_count;
      }
    }
    // No growth inside the window: the first slice after it decides, as in the plain walk's else branch.
    const std::size_t after = last + 1;
    if (after < count) {
      const bool has_next = after + 1 < count;
      if (has_next && pair_grows(after, base, covers)) later_start = slices_[after].end;
      if (later_start == 0 && has_next && after + 2 < count) later_start = slices_[after + 1].end;
    }
    return avail_count;
  }

  // The first slice ending after t (slices_.size() if none), searched from `from` (see gallop).
  std::size_t first_slice_ending_after(std::int64_t t, std::size_t from) const {
    return gallop(slices_, from, [&](const Slice& x) { return x.end <= t; });
  }

  // The first slice ending after t, by binary search over the whole map (no earlier answer to start from).
  std::vector<Slice>::const_iterator first_slice_ending_after(std::int64_t t) const {
    return std::partition_point(slices_.begin(), slices_.end(), [&](const Slice& x) { return x.end <= t; });
  }

  // The first slice beginning after t (slices_.size() if none), searched from `from` (see gallop).
  std::size_t first_slice_beginning_after(std::int64_t t, std::size_t from) const {
    return gallop(slices_, from, [&](const Slice& x) { return x.begin <= t; });
  }

  // _set_slot_time (24.11): start floored, end = ceil of the unrounded start plus the limit, both on the wall clock.
  // Before 24.11 the end was floored too (22.05 backfill.c:_attempt_backfill: `end_reserve = (end_reserve /
  // backfill_resolution) * backfill_resolution`); _add_reservation still gives every reservation one resolution.
  void set_slot_time(std::int64_t start, std::int64_t limit, std::int64_t res, std::int64_t& slot_start,
                     std::int64_t& slot_end) const {
    slot_start = floor_on_clock(start, res, params_.epoch_unix_s);
    const std::int64_t round_up = params_.slurm_version >= 2411 ? res - 1 : 0;
    slot_end = floor_on_clock(start + limit + round_up, res, params_.epoch_unix_s);
  }

  // _test_resv_overlap: the chosen nodes are not all free in some slice overlapping [start, end).
  // Slices are contiguous and in time order: the first with end > start is found by binary search and the walk
  // stops at the first beginning at or after end.
  bool reservation_overlaps(std::int64_t start, std::int64_t end) const {
    for (auto it = first_slice_ending_after(start); it != slices_.end() && it->begin < end; ++it) {
      if (!it->avail.contains_all(chosen_)) return true;
    }
    return false;
  }

  // _add_reservation: split slices at start and end, remove the chosen whole nodes in between, merge once.
  // Also keeps every slice's `grows` count: splits make equal neighbours (no growth between them) and removing the
  // chosen nodes changes the counts only on the boundaries of the changed slices, in the chosen nodes' words.
  void add_reservation(std::int64_t start, std::int64_t end, std::int64_t res) {
    start = std::max(start, slices_.front().begin);
    if (end < start + res) end = start + res;
    // The chosen nodes are missing from the map over [start, end) (clipped to the map's end, which is after now).
    if (bound_on_ && start < slices_.back().end && std::min(end, slices_.back().end) > bound_now_) {
      for (const auto& [w, bits] : chosen_.words()) {
        for (std::uint64_t b = bits; b != 0; b &= b - 1) {
          const auto n = static_cast<NodeIndex>(w * 64U + static_cast<unsigned>(std::countr_zero(b)));
          if (start < free_until_[n]) {
            free_until_[n] = start;
            bound_dirty_ = bound_dirty_ || bound_candidate_[n] != 0;
          }
        }
      }
    }
    // The first slice ending at or after start (the loop below would skip every earlier one).
    std::size_t i =
        static_cast<std::size_t>(std::lower_bound(slices_.begin(), slices_.end(), start,
                                                  [](const Slice& x, std::int64_t t) { return x.end < t; }) -
                                 slices_.begin());
    bool placed = false;
    // Slurm splits a slice that begins at `start` too, leaving a zero-length slice that is dropped before the merge
    // (which then looks one slice further): that slice is not made here, and the merge range is widened instead.
    bool zero_split = false;
    std::size_t a = 0;  // the first slice losing the chosen nodes
    for (; i < slices_.size(); ++i) {
      if (slices_[i].end > start) {
        if (slices_[i].begin == start) {
          zero_split = true;
          a = i;
        } else {
          split_slice(i, start);
          a = i + 1;
        }
        placed = true;
        break;
      }
      if (slices_[i].end == start) {
        a = i + 1;
        placed = true;
        break;
      }
    }
    const std::size_t one_before = i;
    std::size_t one_after = slices_.size();
    if (placed && a < slices_.size()) {
      std::size_t b = slices_.size() - 1;  // the last slice losing the chosen nodes
      for (std::size_t k = a; k < slices_.size(); ++k) {
        if (end < slices_[k].end) split_slice(k, end);
        if (end == slices_[k].end) {
          b = k;
          one_after = k + 1;
          break;
        }
      }
      remove_chosen(a, b);
    }
    const std::size_t last = std::min(one_after + (zero_split ? 1 : 0), slices_.size() - 1);
    for (std::size_t k = one_before > 0 ? one_before - 1 : 0; k < last && k + 1 < slices_.size(); ++k) {
      if (slices_[k].avail == slices_[k + 1].avail) {
        slices_[k].end = slices_[k + 1].end;
        slices_[k].grows = slices_[k + 1].grows;
        slices_.erase(slices_.begin() + static_cast<std::ptrdiff_t>(k) + 1);
        break;
      }
    }
    if (params_.cross_check_will_run) check_map();
  }

  // Tests: every slice's `grows` and `prefix` must be what the bitmaps give; throws std::logic_error if not.
  void check_map() const {
    NodeBitmap prefix = slices_.front().avail;
    for (std::size_t t = 0; t < slices_.size(); ++t) {
      prefix.and_with(slices_[t].avail);
      if (params_.shortcuts && !(slices_[t].prefix == prefix)) {
        throw std::logic_error("backfill map: slice " + std::to_string(t) + "'s prefix is not the AND of slices 0.." +
                               std::to_string(t));
      }
      std::size_t expected = 0;
      if (t + 1 < slices_.size()) {
        NodeBitmap g = slices_[t + 1].avail;
        g.and_not(slices_[t].avail);
        expected = g.count();
      }
      if (slices_[t].grows != expected) {
        throw std::logic_error("backfill map: slice " + std::to_string(t) + " grows " +
                               std::to_string(slices_[t].grows) + ", expected " + std::to_string(expected));
      }
    }
  }

  // Splits slice k at time t (strictly inside it) into two equal slices.
  void split_slice(std::size_t k, std::int64_t t) {
    // The two halves have the same nodes, so the same prefix.
    Slice copy{t, slices_[k].end, slices_[k].avail, slices_[k].grows, slices_[k].prefix};
    slices_[k].end = t;
    slices_[k].grows = 0;
    slices_.insert(slices_.begin() + static_cast<std::ptrdiff_t>(k) + 1, std::move(copy));
  }

  // Removes the chosen nodes from slices a..b, updating `grows` on the boundaries from a - 1 to b: each chosen bit
  // counts on a boundary when it is set in the later slice and clear in the earlier one, before and after.
  void remove_chosen(std::size_t a, std::size_t b) {
    const std::size_t from = a > 0 ? a - 1 : 0;
    const std::size_t to = std::min(b, slices_.size() - 2);  // boundary t is between slices t and t + 1
    for (std::size_t t = from; t <= to && t + 1 < slices_.size(); ++t) {
      const std::uint64_t* prev = slices_[t].avail.words().data();
      const std::uint64_t* next = slices_[t + 1].avail.words().data();
      const bool prev_loses = t >= a;  // t <= b always holds here
      const bool next_loses = t + 1 <= b;
      const std::int64_t delta = grows_delta(prev, next, chosen_, prev_loses, next_loses);
      slices_[t].grows = static_cast<std::uint32_t>(static_cast<std::int64_t>(slices_[t].grows) + delta);
    }
    for (std::size_t k = a; k <= b; ++k) slices_[k].avail.remove_all(chosen_);
    // Every window reaching slice a lost the chosen nodes: the prefixes from a to the map's end.
    if (params_.shortcuts) {
      for (std::size_t k = a; k < slices_.size(); ++k) slices_[k].prefix.remove_all(chosen_);
    }
  }

  // _will_run_test / _future_run_test: the earliest start (seconds) of `request` on `avail` given running jobs
  // ending at start + limit, removed in 30 s-aligned, doubling groups. -1 if it never fits. Sets chosen_.
  std::int64_t will_run(const SelectRequest& request, std::uint32_t partition, const NodeBitmap& avail,
                        std::int64_t start_res, std::int64_t bound_end, std::int64_t now) {
    // Fixed node counts: the order statistic of usable nodes (also on count-based topologies). Floating requests
    // (nodes = 0, the CPUs decide): the first key at which the usable nodes' CPUs add up, without topology.
    const bool indexed = params_.shortcuts && (request.nodes > 0 ? !selector_.uses_topology(request) ||
                                                                       selector_.feasibility_is_count_based()
                                                                 : !selector_.uses_topology(request));
    choice_pending_ = false;
    index_answer_ = false;
    const std::int64_t result = indexed ? will_run_indexed(request, partition, avail, start_res, bound_end, now)
                                        : will_run_replay(request, partition, avail, start_res, bound_end, now);
    if (params_.cross_check_will_run && indexed) {
      choose_nodes();  // the replay's nodes are compared too
      cross_check(request, partition, avail, start_res, bound_end, now, result);
    }
    if (result >= 0 && !choice_pending_) set_chosen();
    return result;
  }

  void set_chosen() {
    chosen_.clear();
    for (const NodeAllocation& a : allocation_) chosen_.add(a.node);
  }

  // The node choice will_run_indexed left pending (the releases up to pending_.key given back, then the selector):
  // made only when the nodes are needed. Sets chosen_ and allocation_.
  void choose_nodes() {
    if (!choice_pending_) return;
    choice_pending_ = false;
    const PendingChoice& c = pending_;
    ResourceScratch* scratch = &scratch_;
    if (params_.shortcut_key_scratch) {
      move_key_scratch(c.key);
      scratch = &key_scratch_;
    } else {
      scratch_.reset();
      if (c.key != kUsableNow) releases_.apply(scratch_, c.request, *c.avail, c.key);
    }
    const bool ok = selector_.select(c.request, partition_nodes(state_, c.partition), c.avail->words().data(),
                                     scratch->view_for(c.request), allocation_);
    assert(ok);
    (void)ok;
    set_chosen();
  }

  // Shortcut: key_scratch_ holds the live resources plus every release with key <= `key`, on every node, moved
  // there from where the last choice left it (releases given back or taken back in key order) instead of being
  // rebuilt. The selector sees the same as after ReleaseIndex::apply: it reads only nodes of avail that are usable,
  // a node is usable after the releases up to `key` exactly when its usable key is <= `key` (resources only grow
  // with releases), and apply gives such a node every release up to `key`. Other nodes differ but stay unusable.
  void move_key_scratch(std::int64_t key) {
    const auto target =
        static_cast<std::size_t>(std::upper_bound(running_.begin(), running_.end(), key,
                                                  [](std::int64_t k, const RunningJob& r) { return k < r.key(); }) -
                                 running_.begin());
    for (; key_scratch_pos_ < target; ++key_scratch_pos_) {
      key_scratch_.add_back(state_.allocation(running_[key_scratch_pos_].job));
    }
    for (; key_scratch_pos_ > target; --key_scratch_pos_) {
      key_scratch_.take_back(state_.allocation(running_[key_scratch_pos_ - 1].job));
    }
  }

  // Shortcut: the release index (and key_scratch_) of the last cycle answer this one too when the running jobs and
  // their expected ends (in the same order) and every node's resources, state and weight (node_version) are what
  // they were when it was built, and no job started since: it is a function of exactly those.
  bool index_unchanged() const {
    if (!params_.shortcut_keep_index || !index_kept_ || kept_running_.size() != running_.size()) return false;
    for (std::size_t i = 0; i < running_.size(); ++i) {
      if (kept_running_[i].job != running_[i].job || kept_running_[i].key() != running_[i].key()) return false;
    }
    for (NodeIndex n = 0; n < state_.node_count(); ++n) {
      if (kept_versions_[n] != state_.node_version(n)) return false;
    }
    return true;
  }

  void remember_index() {
    kept_running_.assign(running_.begin(), running_.end());
    kept_versions_.resize(state_.node_count());
    for (NodeIndex n = 0; n < state_.node_count(); ++n) kept_versions_[n] = state_.node_version(n);
    index_kept_ = true;
  }

  // Forgets key_scratch_'s releases (the live resources or the running list changed).
  void reset_key_scratch() {
    key_scratch_.reset();
    key_scratch_pos_ = 0;
  }

  // Shortcut: true if every node choice will_run could make for the pending request overlaps a reservation in
  // [slot_start, slot_end), so the choice need not be made. The selector takes nodes of `avail` usable by the
  // pending key, and a fixed request takes exactly `nodes` of them, a floating one nodes whose CPUs (as the index
  // counts them) add up to at least its CPUs. If too few of those nodes (or CPUs) are free in every slice
  // overlapping the slot, any choice holds a node that some slice lacks: _test_resv_overlap's answer is known.
  bool overlap_is_certain(std::int64_t slot_start, std::int64_t slot_end) {
    const PendingChoice& c = pending_;
    const NodeBitmap& avail = *c.avail;
    if (slot_avail_.words().size() != avail.words().size()) slot_avail_ = NodeBitmap(state_.node_count());
    slot_avail_.assign(avail);
    // The slices overlapping [slot_start, slot_end): [a, b). A record's later steps mostly move the slot forward (a
    // step after an overlap begins at or after its start), so the sliding aggregate ANDs each slice about once; a
    // slot that moves back makes it start again (SlidingAnd::advance), with the same AND.
    const auto a = static_cast<std::size_t>(first_slice_ending_after(slot_start) - slices_.begin());
    const std::size_t b = a + static_cast<std::size_t>(
                                  std::partition_point(slices_.begin() + static_cast<std::ptrdiff_t>(a), slices_.end(),
                                                       [&](const Slice& x) { return x.begin < slot_end; }) -
                                  (slices_.begin() + static_cast<std::ptrdiff_t>(a)));
    if (a < b) slot_and_.and_into(slices_, a, b - 1, slot_avail_);
    if (c.request.nodes > 0) return !releases_.usable_by(c.request, slot_avail_, c.request.nodes, c.key);
    return releases_.fit_key(c.request, slot_avail_, c.key) > c.key;
  }

  // Tests: the index must give exactly the replay's answer (start and nodes); throws std::logic_error if not.
  void cross_check(const SelectRequest& request, std::uint32_t partition, const NodeBitmap& avail,
                   std::int64_t start_res, std::int64_t bound_end, std::int64_t now, std::int64_t indexed) {
    const std::vector<NodeAllocation> from_index = allocation_;
    const std::int64_t replayed = will_run_replay(request, partition, avail, start_res, bound_end, now);
    bool same = replayed == indexed && (indexed < 0 || from_index.size() == allocation_.size());
    for (std::size_t i = 0; same && indexed >= 0 && i < from_index.size(); ++i) {
      same = from_index[i].node == allocation_[i].node && from_index[i].cpus == allocation_[i].cpus;
    }
    if (!same) {
      throw std::logic_error("will-run index disagrees with replay at t=" + std::to_string(now) + ": start " +
                             std::to_string(indexed) + " vs " + std::to_string(replayed) + " (nodes " +
                             std::to_string(request.nodes) + ", cpus " + std::to_string(request.cpus) + ", gpus " +
                             std::to_string(request.gpus_per_node) + (request.exclusive ? ", exclusive" : "") +
                             ", start_res " + std::to_string(start_res) + ", bound " + std::to_string(bound_end) + ")");
    }
  }

  // The plain algorithm: replay removals on a scratch copy of the free resources.
  std::int64_t will_run_replay(const SelectRequest& request, std::uint32_t partition, const NodeBitmap& avail,
                               std::int64_t start_res, std::int64_t bound_end, std::int64_t now) {
    const PartitionConfig& part = state_.config().partitions[partition];
    const std::uint64_t* allowed = avail.words().data();
    std::int64_t result = -1;
    const FreeResources live = live_resources(state_);
    if (start_res <= now &&
        selector_.select(request, NodeSet{part.nodes, state_.partition_bits(partition)}, allowed, live, allocation_)) {
      result = now;
    } else {
      scratch_.reset();
      scratch_.track(request, selector_, allowed);
      auto overlaps = [&](JobIndex r) {
        for (const NodeAllocation& a : state_.allocation(r)) {
          if (avail.test(a.node)) return true;
        }
        return false;
      };
      std::size_t idx = 0;
      // _future_run_test (24.11+): jobs expected to end before start_res (will_run->start) are removed up front
      // in _build_cr_job_list, then the job is tested ("all preemptable jobs gone" test, taken whenever
      // will_run->start is set, i.e. also when start_res <= now): a fit gives start = now. On the first step
      // (start_res = now) that is jobs already past their expected end; the caller then fails to start the job
      // on the live resources and reserves from now.
      while (idx < running_.size() && running_[idx].end_s < start_res) {
        if (overlaps(running_[idx].job)) scratch_.add_back(state_.allocation(running_[idx].job));
        ++idx;
      }
      if ((start_res > now || idx > 0) && scratch_.fits()) {
        result = now;
      } else {
        std::int64_t time_window = 30;
        std::int64_t anchor = 0;
        bool more = true;
        while (more) {
          const RunningJob* last = nullptr;
          while (true) {
            if (idx >= running_.size() || (bound_end != 0 && running_[idx].end_s > bound_end)) {
              more = false;
              break;
            }
            const RunningJob& r = running_[idx++];
            if (!overlaps(r.job)) continue;
            if (anchor == 0) anchor = will_run_anchor(r.end_s, params_.epoch_unix_s);
            last = &r;
            scratch_.add_back(state_.allocation(r.job));
            if (idx >= running_.size()) {
              more = false;
              break;
            }
            if (running_[idx].end_s > anchor + time_window) break;
          }
          if (last == nullptr) break;
          if (scratch_.fits()) {
            result = last->end_s <= now ? guess_job_end(*last, now) : last->end_s;
            break;
          }
          do {
            time_window *= 2;
          } while (idx < running_.size() && running_[idx].end_s > anchor + time_window);
        }
      }
      if (result >= 0) {
        const bool ok = selector_.select(request, partition_nodes(state_, partition), allowed,
                                         scratch_.view_for(request), allocation_);
        assert(ok);
        (void)ok;
      }
    }
    return result;
  }

  // The same answer from the release index (fixed node counts): the request fits after the removals up to key K
  // exactly when at least `nodes` allowed nodes become usable by K, so K* (the nodes-th smallest usable key) tells
  // at which removal group the replay's fits() would first hold. Only the group boundaries are walked.
  std::int64_t will_run_indexed(const SelectRequest& request, std::uint32_t partition, const NodeBitmap& avail,
                                std::int64_t start_res, std::int64_t bound_end, std::int64_t now) {
    const std::uint64_t* allowed = avail.words().data();
    const auto by_end = [](const RunningJob& r, std::int64_t e) { return r.end_s < e; };
    const auto end_after = [](std::int64_t e, const RunningJob& r) { return e < r.end_s; };
    const std::size_t size = running_.size();
    // The first running job ending after bound_end; bound_end only grows within a record's steps.
    if (bound_end != 0) {
      bound_pos_hint_ = gallop(running_, bound_pos_hint_, [&](const RunningJob& r) { return r.end_s <= bound_end; });
    }
    const std::size_t bound_pos = bound_end != 0 ? bound_pos_hint_ : size;
    // The walk below only succeeds at a removal before bound_pos, i.e. when K* <= the key of the last of them: with
    // too few nodes usable by then (the common TRY_LATER step) it fails, which one bitmap count tells.
    std::int64_t kstar = kNeverUsable;
    if (request.nodes > 0) {
      if (bound_end != 0 && !releases_.usable_by(request, avail, request.nodes,
                                                 bound_pos > 0 ? running_[bound_pos - 1].key() : kUsableNow)) {
        return -1;
      }
      kstar = releases_.kth_usable_key(request, avail, request.nodes);
    } else {
      // Walks the CPU steps only up to the bound: a fit after it is no fit here (the fixed form's usable_by).
      const std::int64_t bound_key =
          bound_end != 0 ? (bound_pos > 0 ? running_[bound_pos - 1].key() : kUsableNow) : kNeverUsable;
      kstar = releases_.fit_key(request, avail, bound_key);
      if (kstar > bound_key) return -1;
    }
    if (kstar == kNeverUsable) return -1;
    if (start_res <= now && kstar == kUsableNow) {
      const bool ok =
          selector_.select(request, partition_nodes(state_, partition), allowed, live_resources(state_), allocation_);
      assert(ok);
      (void)ok;
      return now;
    }
    auto overlaps = [&](std::size_t pos) {
      for (const NodeAllocation& a : state_.allocation(running_[pos].job)) {
        if (avail.test(a.node)) return true;
      }
      return false;
    };
    // 24.11: jobs expected to end before start_res are removed first.
    std::size_t idx = static_cast<std::size_t>(std::lower_bound(running_.begin(), running_.end(), start_res, by_end) -
                                               running_.begin());
    std::int64_t result = -1;
    std::int64_t applied_key = kUsableNow;
    if ((start_res > now || idx > 0) && (kstar == kUsableNow || (idx > 0 && kstar <= running_[idx - 1].key()))) {
      result = now;
      applied_key = idx > 0 ? running_[idx - 1].key() : kUsableNow;
    } else {
      std::int64_t time_window = 30;
      std::int64_t anchor = 0;
      while (true) {
        std::size_t p = idx;
        while (p < bound_pos && !overlaps(p)) ++p;
        if (p >= bound_pos) break;  // nothing more to remove: the replay's `last == nullptr`
        if (anchor == 0) anchor = will_run_anchor(running_[p].end_s, params_.epoch_unix_s);
        // The group closes at the first overlapping removal whose successor ends after anchor + window.
        const auto close_from = static_cast<std::size_t>(
            std::upper_bound(running_.begin(), running_.end(), anchor + time_window, end_after) - running_.begin());
        std::size_t q = std::max(p, close_from > 0 ? close_from - 1 : 0);
        while (q < bound_pos && !overlaps(q)) ++q;
        std::size_t last;
        bool more = true;
        if (q < bound_pos) {
          last = q;
          more = q + 1 < size;
        } else {  // a job past bound_end (or the list's end) comes first: test what was removed so far
          last = bound_pos - 1;
          while (!overlaps(last)) --last;  // p < bound_pos overlaps, so this stops
          more = false;
        }
        if (kstar <= running_[last].key()) {
          result = running_[last].end_s <= now ? guess_job_end(running_[last], now) : running_[last].end_s;
          applied_key = running_[last].key();
          break;
        }
        if (!more) break;
        idx = last + 1;
        do {
          time_window *= 2;
        } while (idx < size && running_[idx].end_s > anchor + time_window);
      }
    }
    if (result >= 0) {
      pending_ = PendingChoice{request, partition, &avail, applied_key};
      choice_pending_ = true;
      index_answer_ = true;
    }
    return result;
  }

  // The request of job `j` for starting now: with --switches on a topology, the leaf count is enforced until the
  // job has waited its max-time (capped by max_switch_wait) since it was first evaluated (wait4switch_start).
  SelectRequest run_now_request(JobIndex j, std::int64_t now) {
    const JobSpec& spec = state_.spec(j);
    SelectRequest request = select_request(spec);
    if (spec.switches == 0 || !selector_.uses_topology(request)) return request;
    if (wait4switch_start_.empty()) wait4switch_start_.assign(state_.job_count(), -1);
    if (wait4switch_start_[j] < 0) wait4switch_start_[j] = now;
    const std::int64_t cap = state_.config().topology.slurm.max_switch_wait_s;
    const std::int64_t max_wait = spec.switch_wait_s < 0 ? cap : std::min(spec.switch_wait_s, cap);
    request.switch_wait_over = now - wait4switch_start_[j] >= max_wait;
    return request;
  }

  // _guess_job_end: a job past its expected end is assumed to end after KillWait (+ OverTimeLimit).
  std::int64_t guess_job_end(const RunningJob& r, std::int64_t now) const {
    std::int64_t end = r.end_s + params_.kill_wait_s + params_.over_time_limit_min * 60;
    if (end <= now) end = now + 1;
    return end;
  }

 private:
  SlurmParameters params_;
  World& world_;
  const ClusterState& state_;
  JobPolicy policy_;
  NodeSelector selector_;
  std::vector<std::int64_t> wait4switch_start_;  // per job: first evaluation with --switches, -1 before
  ResourceScratch scratch_;
  ResourceScratch key_scratch_;      // live resources plus the releases of running_[0, key_scratch_pos_)
  std::size_t key_scratch_pos_ = 0;  // (see move_key_scratch)
  // first_startable_within_budget's last answer and when it was computed.
  static constexpr std::int64_t kScanConditional = -2;  // the answer was false
  bool scan_kept_ = false;
  std::uint64_t scan_updates_ = 0;
  std::size_t scan_size_ = 0;
  std::int64_t scan_stop_ = kScanConditional;
  // What the release index was built from (see index_unchanged).
  bool index_kept_ = false;
  std::vector<RunningJob> kept_running_;
  std::vector<std::uint32_t> kept_versions_;
  JobQueue queue_;
  std::vector<NodeAllocation> allocation_;
  NodeBitmap pass_avail_;  // the main scheduler's avail_node_bitmap for one pass
  std::vector<std::uint8_t> partition_failed_;
  std::vector<NodeBitmap> partition_bitmaps_;
  NodeBitmap up_nodes_;
  SparseNodeSet chosen_;  // the nodes will-run chose, to test and reserve
  // A node choice will_run_indexed found a start for but did not make yet (see choose_nodes).
  struct PendingChoice {
    SelectRequest request;
    std::uint32_t partition = 0;
    const NodeBitmap* avail = nullptr;  // backfill_job's avail, unchanged until the choice is made or dropped
    std::int64_t key = kUsableNow;      // releases up to this key are given back
  };
  PendingChoice pending_;
  bool choice_pending_ = false;              // pending_'s nodes are not chosen yet
  bool index_answer_ = false;                // pending_ describes the last will_run answer (from the release index)
  std::vector<std::uint32_t> uniform_cpus_;  // per partition (see uniform_cpus)
  NodeBitmap slot_avail_;                    // overlap_is_certain's avail AND the slot's slices
  std::vector<Slice> slices_;
  NodeBitmap map_nodes_;                       // the nodes of this cycle's map (its first slice, before reservations)
  std::vector<std::int8_t> partition_covers_;  // per partition: covers_map's answer this cycle, -1 unknown
  std::size_t window_end_hint_ = 0;  // within a record's steps: the first slice beginning after the last window's end
  std::size_t bound_pos_hint_ = 0;   // within a record's steps: the first running job ending after the last bound
  SlidingAnd window_and_;  // AND over the current job's windows (reset per job: the map changes only between jobs)
  SlidingAnd slot_and_;    // AND over the current job's reservation slots (overlap_is_certain), reset likewise
  std::vector<RunningJob> running_;
  ReleaseIndex releases_;
  std::uint32_t next_seq_ = 0;
  // A run as the running list holds it: the job and its restart count when it started.
  struct ListedRun {
    JobIndex job;
    std::uint32_t run;
  };
  std::vector<ListedRun> running_list_;  // in start order, with ended runs until refresh_running drops them
  // running_ between cycles (shortcut, see sort_running): whether it holds a sorted list, the runs of
  // running_list_ it holds (the first listed_sorted_), and per job the run it holds.
  bool running_sorted_ = false;
  std::size_t listed_sorted_ = 0;
  std::vector<std::uint32_t> sorted_run_ = std::vector<std::uint32_t>(state_.job_count(), UINT32_MAX);
  std::vector<RunningJob> started_since_, merged_running_;
  SchedulerStats stats_;
  std::vector<JobIndex> conditional_;  // pending jobs with eligibility conditions
  std::vector<std::uint8_t> blocked_ = std::vector<std::uint8_t>(state_.job_count(), 0);
  std::vector<JobIndex> pending_scratch_;
  std::vector<NodeAllocation> planned_;
  std::vector<NodeBitmap> resv_bits_;   // nodes of each advance reservation
  std::vector<std::int32_t> job_resv_;  // per job: its reservation's index, or -1 (empty without reservations)
  NodeBitmap job_avail_ = NodeBitmap(state_.node_count());
  std::unordered_set<JobIndex> being_preempted_;        // running jobs told to leave
  std::unordered_map<JobIndex, SimTime> preempt_wait_;  // preemptor -> when its preemptees are gone
  bool hold_armed_ = false;
  std::int64_t hold_at_ = 0;
  std::uint64_t job_sched_count_ = 0;
  bool batch_tick_armed_ = false;
  SimTime last_sched_time_ = 0;
  SimTime last_backfill_end_ = 0;
  std::uint64_t bf_update_mark_ = 0;
  bool bf_left_estimates_ = false;
  bool bf_waiting_ = false;
  SimTime bf_wait_since_ = 0;
  NodeBitmap bf_avail_, bf_base_;  // backfill_job's avail and base bitmaps
  // The start bound of a backfill cycle (shortcut; see start_bound_passes).
  bool bound_on_ = false;
  bool bound_dirty_ = false;
  std::int64_t bound_now_ = 0;
  std::vector<std::int64_t> free_until_;       // per node: earliest start of a reservation on it this cycle
  std::vector<std::uint8_t> bound_candidate_;  // per node: 1 if it has a free CPU now
  std::vector<NodeIndex> bound_nodes_;         // those nodes
  std::vector<std::pair<std::int64_t, std::uint32_t>> bound_order_;  // (free_until_, CPUs), latest first
  std::vector<std::uint64_t> bound_cpus_;                            // CPU sums of bound_order_'s prefixes
};

}  // namespace

SimTime slurm_timeout_kill_time(SimTime start, std::int64_t limit_s, const SlurmParameters& params) {
  const SimTime due = start + from_seconds(limit_s + params.over_time_limit_min * 60);
  return next_tick_at_or_after(due, -from_seconds(params.phase_s), from_seconds(kPeriodicTimeoutS));
}

std::unique_ptr<Scheduler> make_slurm_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                                World& world) {
  return std::make_unique<SlurmScheduler>(config, accounting, world);
}

}  // namespace gputwin
