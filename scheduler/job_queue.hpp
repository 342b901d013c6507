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

  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    if (a.k1 != b.k1) return a.k1 < b.k1;
    if (a.k2 != b.k2) return a.k2 < b.k2;
    if (a.submit_s != b.submit_s) return a.submit_s < b.submit_s;
    if (a.job_id != b.job_id) return a.job_id < b.job_id;
    return a.job < b.job;
  }
};

/// Pending jobs in key order. Removal is deferred: remove() marks, compact() erases.
class JobQueue {
 public:
  /// Inserts a job with its key (binary search; appending in submit order is O(1)).
  void insert(const QueueKey& key) {
    if (entries_.empty() || entries_.back() < key) {
      entries_.push_back(key);
    } else {
      entries_.insert(std::upper_bound(entries_.begin(), entries_.end(), key), key);
    }
  }
  /// Removes job `job` wherever it is (a linear scan: for rare events such as a cancellation); false if absent.
  bool remove_job(JobIndex job) {
    compact();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].job != job) continue;
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    return false;
  }
  /// Marks position `pos` removed; call compact() after the pass.
  void remove_at(std::size_t pos) { removed_.push_back(static_cast<std::uint32_t>(pos)); }
  /// Erases all marked entries.
  void compact() {
    if (removed_.empty()) return;
    std::sort(removed_.begin(), removed_.end());
    std::size_t out = removed_.front();
    std::size_t r = 0;
    for (std::size_t in = removed_.front(); in < entries_.size(); ++in) {
      if (r < removed_.size() && removed_[r] == in) {
        ++r;
        continue;
      }
      entries_[out++] = entries_[in];
    }
    entries_.resize(out);
    removed_.clear();
  }
  /// Rewrites every key with `rekey(QueueKey&)` and re-sorts (after priorities change). Call compact() first.
  template <typename Rekey>
  void rebuild(Rekey rekey) {
    for (QueueKey& key : entries_) rekey(key);
    std::sort(entries_.begin(), entries_.end());
  }
  /// Entries in order (including ones marked but not yet compacted).
  [[nodiscard]] const std::vector<QueueKey>& entries() const { return entries_; }
  /// Number of entries.
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  /// True when empty.
  [[nodiscard]] bool empty() const { return entries_.empty(); }

 private:
  std::vector<QueueKey> entries_;
  std::vector<std::uint32_t> removed_;
};

}  // namespace gputwin
