// The pending queue, kept sorted by a policy's key so passes iterate it in order without re-sorting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/cluster_state.hpp"

namespace gputwin {

/// Sort key of one queued job; smaller sorts first. Policies fill the fields to express their order.
struct QueueKey {
  std::uint64_t k1 = 0;       ///< Primary key (e.g. inverted PriorityTier).
  std::uint64_t k2 = 0;       ///< Secondary key (e.g. inverted priority, or requested time for sjf).
  std::int64_t submit_s = 0;  ///< Submit time.
  std::uint64_t job_id = 0;   ///< Slurm job id, the final tie-breaker.
  JobIndex job = 0;           ///< The job.
  /// What the job needs free, at least, before it can fit (saturated; 0: nothing): JobQueue::next_candidate skips
  /// entries needing more. Not part of the order, nor are the fields after it.
  std::uint16_t least_cpus = 0;
  std::uint16_t least_gpus = 0;  ///< As least_cpus, for GPUs.
  std::uint32_t limit_s = 0;     ///< The job's time limit, seconds (saturated; a lower bound).
  std::uint16_t partition = 0;   ///< The job's partition.

  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    if (a.k1 != b.k1) return a.k1 < b.k1;
    if (a.k2 != b.k2) return a.k2 < b.k2;
    if (a.submit_s != b.submit_s) return a.submit_s < b.submit_s;
    if (a.job_id != b.job_id) return a.job_id < b.job_id;
    return a.job < b.job;
  }
};

/// Which queued jobs a backfill walk wants (JobQueue::next_candidate): those needing at most `free_cpus` and
/// `free_gpus`; of partition `partition` (or of any, kAllPartitions), those among them with a limit over `limit_s`
/// only if they also need at most `spare_cpus` and `spare_gpus` (textbook EASY's extra resources; for node-aware
/// EASY, what is free off the head's nodes). The defaults let every job through.
struct FitFilter {
  static constexpr std::uint32_t kNoPartition = UINT32_MAX;        ///< No job is held to the spare resources.
  static constexpr std::uint32_t kAllPartitions = UINT32_MAX - 1;  ///< Every job is.
  std::uint32_t free_cpus = UINT32_MAX;
  std::uint32_t free_gpus = UINT32_MAX;
  std::uint32_t partition = kNoPartition;  ///< Whose jobs are held to the spare resources past limit_s.
  std::uint32_t limit_s = UINT32_MAX;
  std::uint32_t spare_cpus = UINT32_MAX;
  std::uint32_t spare_gpus = UINT32_MAX;

  /// Whether a job with these least needs, limit and partition passes.
  [[nodiscard]] bool admits(std::uint32_t cpus, std::uint32_t gpus, std::uint32_t limit, std::uint32_t part) const {
    const bool held = partition == kAllPartitions || part == partition;
    return cpus <= free_cpus && gpus <= free_gpus &&
           (!held || limit <= limit_s || (cpus <= spare_cpus && gpus <= spare_gpus));
  }
};

/// Pending jobs in key order. Removal is deferred: remove_at() marks, compact() erases.
///
/// The entries live at the end of one vector, from an offset (head_): compact() closes the gaps by moving whichever
/// side of them is shorter, the entries before the first gap to the right (then the offset moves) or those after it
/// to the left. A pass that starts jobs at the head of a long queue, as every list policy's does, so moves only the
/// few entries ahead of the last one removed instead of the whole queue behind the first.
///
/// Each block of kBlock buffer slots keeps the smallest least_cpus and least_gpus of its entries, so that a walk
/// looking for jobs that could fit in the free resources (next_candidate) passes over whole blocks of larger jobs.
class JobQueue {
 public:
  /// The queued entries in order, read through the queue: valid, and current, across compact() and insert().
  class Entries {
   public:
    explicit Entries(const JobQueue& queue) : queue_(&queue) {}
    /// Number of entries (including ones marked but not yet compacted).
    [[nodiscard]] std::size_t size() const { return queue_->size(); }
    /// The entry at position `pos` (0 is the head).
    const QueueKey& operator[](std::size_t pos) const { return queue_->buf_[queue_->head_ + pos]; }
    /// First entry.
    [[nodiscard]] const QueueKey* begin() const { return queue_->buf_.data() + queue_->head_; }
    /// Past the last entry.
    [[nodiscard]] const QueueKey* end() const { return queue_->buf_.data() + queue_->buf_.size(); }

   private:
    const JobQueue* queue_;
  };

  /// Inserts a job with its key (binary search; appending in submit order, or before the head, is O(1)).
  void insert(const QueueKey& key);
  /// Removes job `job` wherever it is (a linear scan: for rare events such as a cancellation); false if absent.
  bool remove_job(JobIndex job) {
    compact();
    for (std::size_t i = 0; i < size(); ++i) {
      if (buf_[head_ + i].job != job) continue;
      remove_at(i);
      compact();
      return true;
    }
    return false;
  }
  /// Marks position `pos` removed; call compact() after the pass.
  void remove_at(std::size_t pos) { removed_.push_back(static_cast<std::uint32_t>(pos)); }
  /// Erases all marked entries.
  void compact();
  /// Rewrites every key with `rekey(QueueKey&)` and re-sorts (after priorities change). Call compact() first.
  template <typename Rekey>
  void rebuild(Rekey rekey) {
    const auto live = buf_.begin() + static_cast<std::ptrdiff_t>(head_);
    for (auto it = live; it != buf_.end(); ++it) rekey(*it);
    std::sort(live, buf_.end());
    refresh_blocks(head_, buf_.size());
  }
  /// The first position at or after `pos` whose entry `filter` admits (by its least_cpus, least_gpus, limit_s and
  /// partition), or size() if none.
  [[nodiscard]] std::size_t next_candidate(std::size_t pos, const FitFilter& filter) const;
  /// Entries in order (including ones marked but not yet compacted).
  [[nodiscard]] Entries entries() const { return Entries(*this); }
  /// Number of entries.
  [[nodiscard]] std::size_t size() const { return buf_.size() - head_; }
  /// True when empty.
  [[nodiscard]] bool empty() const { return buf_.size() == head_; }

 private:
  std::vector<QueueKey> buf_;  // entries at [head_, size): the slots before head_ are free
  std::size_t head_ = 0;
  std::vector<std::uint32_t> removed_;  // positions (from the head) marked by remove_at
  static constexpr std::size_t kBlock = 64;
  struct BlockLeast {
    std::uint16_t cpus = UINT16_MAX, gpus = UINT16_MAX;
    std::uint32_t limit_s = UINT32_MAX;
    std::uint16_t partition_min = UINT16_MAX, partition_max = 0;

    void add(const QueueKey& key) {
      cpus = std::min(cpus, key.least_cpus);
      gpus = std::min(gpus, key.least_gpus);
      limit_s = std::min(limit_s, key.limit_s);
      partition_min = std::min(partition_min, key.partition);
      partition_max = std::max(partition_max, key.partition);
    }
    // False only if `filter` admits none of the entries whose least needs this block holds.
    [[nodiscard]] bool may_admit(const FitFilter& filter) const {
      if (cpus > filter.free_cpus || gpus > filter.free_gpus) return false;
      const bool all_held = filter.partition == FitFilter::kAllPartitions ||
                            (partition_min == partition_max && partition_min == filter.partition);
      return !all_held || limit_s <= filter.limit_s || (cpus <= filter.spare_cpus && gpus <= filter.spare_gpus);
    }
  };
  std::vector<BlockLeast> blocks_;  // block b: the least needs of the entries in buf_[b * kBlock, (b + 1) * kBlock)

  // Recomputes the blocks holding buffer slots [from, to) (and sizes blocks_ to the buffer).
  void refresh_blocks(std::size_t from, std::size_t to);
};

}  // namespace gputwin
