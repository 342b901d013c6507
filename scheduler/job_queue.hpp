// The pending queue, kept sorted by a policy's key so passes iterate it in order without re-sorting.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <iterator>
#include <utility>
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
/// The entries live in chunks of at most kChunk (128) consecutive entries, in order; a segment tree over the chunks
/// keeps each subtree's entry count and least needs (QueueKey's least_cpus, least_gpus, limit_s, partition range).
/// So a removal anywhere moves at most one chunk's entries, a position is found in O(log chunks), and a walk looking
/// for jobs that could fit in the free resources (next_candidate) passes over whole subtrees of larger jobs: a walk
/// over a queue of n entries that finds k candidates costs about k log(n), not n. Reading positions in increasing
/// order (as passes do) is O(1) each: the chunk last read is remembered.
class JobQueue {
 public:
  /// The queued entries in order, read through the queue: valid, and current, across compact() and insert().
  class Entries {
   public:
    /// Forward iterator over the entries.
    class Iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = QueueKey;
      using difference_type = std::ptrdiff_t;
      using pointer = const QueueKey*;
      using reference = const QueueKey&;
      Iterator() = default;
      Iterator(const JobQueue* queue, std::size_t pos) : queue_(queue), pos_(pos) {}
      reference operator*() const { return queue_->at(pos_); }
      pointer operator->() const { return &queue_->at(pos_); }
      Iterator& operator++() {
        ++pos_;
        return *this;
      }
      Iterator operator++(int) {
        Iterator old = *this;
        ++pos_;
        return old;
      }
      friend bool operator==(const Iterator& a, const Iterator& b) { return a.pos_ == b.pos_; }
      friend bool operator!=(const Iterator& a, const Iterator& b) { return a.pos_ != b.pos_; }

     private:
      const JobQueue* queue_ = nullptr;
      std::size_t pos_ = 0;
    };

    explicit Entries(const JobQueue& queue) : queue_(&queue) {}
    /// Number of entries (including ones marked but not yet compacted).
    [[nodiscard]] std::size_t size() const { return queue_->size(); }
    /// The entry at position `pos` (0 is the head).
    const QueueKey& operator[](std::size_t pos) const { return queue_->at(pos); }
    /// First entry.
    [[nodiscard]] Iterator begin() const { return Iterator(queue_, 0); }
    /// Past the last entry.
    [[nodiscard]] Iterator end() const { return Iterator(queue_, queue_->size()); }

   private:
    const JobQueue* queue_;
  };

  /// An empty queue whose chunks hold at most `chunk_capacity` entries (tests use small ones to reach every case).
  explicit JobQueue(std::size_t chunk_capacity = kChunk);

  /// Inserts a job with its key (after equal keys).
  void insert(const QueueKey& key);
  /// Removes job `job` wherever it is (a linear scan: for rare events such as a cancellation); false if absent.
  bool remove_job(JobIndex job);
  /// Marks position `pos` removed; call compact() after the pass.
  void remove_at(std::size_t pos) { removed_.push_back(static_cast<std::uint32_t>(pos)); }
  /// Erases all marked entries.
  void compact();
  /// Rewrites every key with `rekey(QueueKey&)` and re-sorts (after priorities change). Call compact() first.
  template <typename Rekey>
  void rebuild(Rekey rekey) {
    std::vector<QueueKey> all;
    all.reserve(size_);
    for (const Chunk& chunk : chunks_) all.insert(all.end(), chunk.keys.begin(), chunk.keys.end());
    for (QueueKey& key : all) rekey(key);
    std::sort(all.begin(), all.end());
    assign(all);
  }
  /// The first position at or after `pos` whose entry `filter` admits (by its least_cpus, least_gpus, limit_s and
  /// partition), or size() if none.
  [[nodiscard]] std::size_t next_candidate(std::size_t pos, const FitFilter& filter) const;
  /// Entries in order (including ones marked but not yet compacted).
  [[nodiscard]] Entries entries() const { return Entries(*this); }
  /// Number of entries.
  [[nodiscard]] std::size_t size() const { return size_; }
  /// True when empty.
  [[nodiscard]] bool empty() const { return size_ == 0; }

 private:
  static constexpr std::size_t kChunk = 64;
  static constexpr std::size_t kNone = SIZE_MAX;
  // The least needs of some entries: the smallest least_cpus, least_gpus, their partition range, and the shortest
  // limit among those needing at most k CPUs for each k up to 32 (then up to each power of two), so a filter's "fits
  // now and ends by limit_s" is tested on the entries that could fit in its free CPUs, not on the shortest limit of
  // any entry.
  struct Least {
    // Bucket k <= 32: exactly k CPUs (0: no CPU count); then 33 + j: 2^(5+j) + 1 .. 2^(6+j) CPUs, up to 2^16.
    static constexpr std::size_t kExact = 32;
    static constexpr std::size_t kBuckets = kExact + 1 + 11;
    std::uint16_t cpus = UINT16_MAX, gpus = UINT16_MAX;
    std::uint16_t partition_min = UINT16_MAX, partition_max = 0;
    std::array<std::uint32_t, kBuckets> limit_s;  // limit_s[k]: shortest limit of entries in bucket k or below

    Least() { limit_s.fill(UINT32_MAX); }
    // The bucket of an entry needing `cpus`; a filter with `cpus` free looks at this bucket and the ones below, which
    // hold every entry needing at most `cpus` (and, past kExact, some needing up to the next power of two).
    static std::size_t bucket(std::uint32_t cpus) {
      if (cpus <= kExact) return cpus;
      return std::min<std::size_t>(kBuckets - 1, kExact + static_cast<std::size_t>(std::bit_width(cpus - 1)) - 5);
    }
    // Adds one entry; call close() after the last.
    void add(const QueueKey& key) {
      cpus = std::min(cpus, key.least_cpus);
      gpus = std::min(gpus, key.least_gpus);
      std::uint32_t& limit = limit_s[bucket(key.least_cpus)];
      limit = std::min(limit, key.limit_s);
      partition_min = std::min(partition_min, key.partition);
      partition_max = std::max(partition_max, key.partition);
    }
    // Adds one entry to a closed summary.
    void add_closed(const QueueKey& key) {
      cpus = std::min(cpus, key.least_cpus);
      gpus = std::min(gpus, key.least_gpus);
      for (std::size_t k = bucket(key.least_cpus); k < kBuckets; ++k) limit_s[k] = std::min(limit_s[k], key.limit_s);
      partition_min = std::min(partition_min, key.partition);
      partition_max = std::max(partition_max, key.partition);
    }
    // After add(key)s: makes limit_s[k] the shortest limit of buckets 0..k.
    void close() {
      for (std::size_t k = 1; k < kBuckets; ++k) limit_s[k] = std::min(limit_s[k], limit_s[k - 1]);
    }
    // Adds another closed summary.
    void add(const Least& other) {
      cpus = std::min(cpus, other.cpus);
      gpus = std::min(gpus, other.gpus);
      for (std::size_t k = 0; k < kBuckets; ++k) limit_s[k] = std::min(limit_s[k], other.limit_s[k]);
      partition_min = std::min(partition_min, other.partition_min);
      partition_max = std::max(partition_max, other.partition_max);
    }
    // False only if `filter` admits none of the entries this summarises.
    [[nodiscard]] bool may_admit(const FitFilter& filter) const {
      if (cpus > filter.free_cpus || gpus > filter.free_gpus) return false;
      const bool all_held = filter.partition == FitFilter::kAllPartitions ||
                            (partition_min == partition_max && partition_min == filter.partition);
      return !all_held || limit_s[bucket(filter.free_cpus)] <= filter.limit_s ||
             (cpus <= filter.spare_cpus && gpus <= filter.spare_gpus);
    }
  };
  struct Node {
    std::uint32_t count = 0;  // entries in the subtree (always current)
    bool stale = false;       // `least` to be recomputed (then so are the ancestors')
    Least least;              // their least needs, when not stale
  };
  struct Chunk {
    std::vector<QueueKey> keys;  // in order
    bool stale = true;           // `least` to be recomputed from the keys
    Least least;                 // theirs, closed, when not stale
    QueueKey bound;              // when emptied: the last key it had

    // Its last key, or the last it had.
    [[nodiscard]] const QueueKey& last() const { return keys.empty() ? bound : keys.back(); }

    // Recomputes `least` from the keys.
    void summarise() {
      least = Least();
      for (const QueueKey& key : keys) least.add(key);
      least.close();
      stale = false;
    }
  };

  // The counts are kept current; the summaries (`least`) are recomputed on the first walk after a change
  // (refresh()), so a policy that never walks (fcfs) never computes them.
  std::size_t capacity_;               // most entries a chunk holds
  mutable std::vector<Chunk> chunks_;  // in order; some may be empty (passed over)
  std::size_t empty_chunks_ = 0;       // how many
  mutable std::vector<Node> tree_;     // tree_[1] the root; the leaves from leaves_: chunk c at leaves_ + c
  std::size_t leaves_ = 1;
  std::size_t size_ = 0;
  std::vector<std::uint32_t> removed_;                        // positions marked by remove_at
  std::vector<std::pair<std::size_t, std::size_t>> touched_;  // compact(): the chunks it erased from, and how many
  // The chunk last located: chunk cached_chunk_ holds positions [cached_begin_, cached_begin_ + cached_size_).
  mutable std::size_t cached_chunk_ = 0, cached_begin_ = 0, cached_size_ = 0;

  const QueueKey& at(std::size_t pos) const {
    if (pos - cached_begin_ >= cached_size_) locate(pos);
    return chunks_[cached_chunk_].keys[pos - cached_begin_];
  }
  // The chunk holding position `pos` (< size()) by the tree's counts, and the position of its first entry.
  void find_position(std::size_t pos, std::size_t* chunk, std::size_t* begin) const;
  // Makes the cache hold the chunk of position `pos` (< size()).
  void locate(std::size_t pos) const;
  void forget() const { cached_size_ = 0; }
  // Replaces the contents with `sorted`, in full chunks.
  void assign(const std::vector<QueueKey>& sorted);
  // Rebuilds the tree over chunks_ (their summaries, or stale leaves where theirs are stale).
  void build_tree();
  // Chunk c's size changed by `delta`: counts it in its leaf and the leaf's ancestors, and marks them stale (and the
  // chunk's own summary too unless `chunk_current`).
  void changed(std::size_t c, std::int64_t delta, bool chunk_current);
  // Recomputes the stale summaries under `node`.
  void refresh(std::size_t node) const;
  // The first chunk at or after `from` whose subtree summary may admit `filter` in subtree `node` covering chunks
  // [lo, hi), or kNone; `base` is the number of entries before chunk lo, and *begin gets the found chunk's.
  std::size_t find_chunk(std::size_t node, std::size_t lo, std::size_t hi, std::size_t base, std::size_t from,
                         const FitFilter& filter, std::size_t* begin) const;
};

}  // namespace gputwin
