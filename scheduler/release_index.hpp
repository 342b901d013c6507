// ReleaseIndex: for one backfill cycle, the order in which running jobs are expected to end (start + time
// limit) and, per request shape, the point in that order at which each node becomes usable. Will-run then finds
// the first removal group after which a job fits with an order statistic instead of replaying every removal,
// which is what makes backfill cheap on thousands of nodes and running jobs. Exact: it answers the same
// questions the replay (ResourceScratch) answers; the `shortcuts` tests compare the two.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster_state.hpp"
#include "scheduler/node_bitmap.hpp"
#include "scheduler/node_selection.hpp"
#include "scheduler/resource_scratch.hpp"

namespace gputwin {

/// A running job as will-run sees it: expected end (start + limit) and its place among equal ends.
struct RunningJob {
  std::int64_t end_s = 0;  ///< Expected end, seconds.
  std::uint32_t seq = 0;   ///< Order among jobs with the same end (earlier first).
  JobIndex job = 0;        ///< The job.
  /// Total order of removals: by end, then seq.
  [[nodiscard]] std::int64_t key() const { return (end_s << 24) | seq; }
};

/// Sentinel keys: usable before any removal / never usable.
inline constexpr std::int64_t kUsableNow = INT64_MIN;
inline constexpr std::int64_t kNeverUsable = INT64_MAX;

/// Per-node release lists and per-shape usable keys for one backfill cycle.
class ReleaseIndex {
 public:
  /// Index over `state` (kept by reference).
  explicit ReleaseIndex(const ClusterState& state);

  /// Rebuilds from `running`, sorted by key(); forgets every shape.
  void rebuild(std::span<const RunningJob> running);
  /// Adds a job started during the cycle (already allocated in the live state).
  void add_started(const RunningJob& job);
  /// For every node, the key of the removal after which it is usable for `request` (kUsableNow, kNeverUsable).
  std::span<const std::int64_t> usable_keys(const SelectRequest& request);
  /// The `count`-th smallest usable key over the nodes of `nodes` (kNeverUsable if fewer can ever be usable).
  /// Binary-searches the shape's prefix bitmaps for the block of the key order that holds it, then walks that
  /// block: a few bitmap ANDs and at most kBlock steps, however many nodes `nodes` leaves out.
  std::int64_t kth_usable_key(const SelectRequest& request, const NodeBitmap& nodes, std::uint32_t count);
  /// True if at least `count` nodes of `nodes` are usable for `request` by key `key`, i.e. the `count`-th smallest
  /// usable key is <= `key`. One prefix bitmap count and part of a block: cheaper than kth_usable_key.
  bool usable_by(const SelectRequest& request, const NodeBitmap& nodes, std::uint32_t count, std::int64_t key);
  /// The smallest removal key after which `request` fits on the nodes of `nodes` (kUsableNow: fits now;
  /// kNeverUsable: never), for any request: a fixed node count is kth_usable_key's order statistic; a floating
  /// one (nodes = 0: as many nodes as the CPUs need) is the first key at which the CPUs of the usable nodes add
  /// up to the request, as ResourceScratch::fits counts them (usable nodes' free CPUs, whole nodes if exclusive).
  /// Keys above `max_key` are not looked at: kNeverUsable stands for "after max_key" then.
  std::int64_t fit_key(const SelectRequest& request, const NodeBitmap& nodes, std::int64_t max_key = kNeverUsable);
  /// Gives back to `scratch` the releases with key <= `key` on the nodes of `nodes` that become usable for
  /// `request` by then, so the selector sees those nodes as will-run's replay would.
  void apply(ResourceScratch& scratch, const SelectRequest& request, const NodeBitmap& nodes, std::int64_t key);

 private:
  struct Release {
    std::int64_t key;
    std::uint32_t cpus, gpus;
    std::uint64_t mem_mb;
  };
  struct Shape {
    SelectRequest request;  // nodes and cpus only matter through cpus per node
    std::vector<std::int64_t> keys;
    std::vector<std::pair<std::int64_t, NodeIndex>> sorted;  // (key, node) at creation, ascending, no kNeverUsable
    std::vector<std::uint8_t> changed_flag;  // 1 for nodes whose key changed since (their `sorted` entry is stale)
    std::vector<NodeIndex> changed;
    // prefix[c]: the nodes of sorted[0, (c + 1) * kBlock) whose entry is not stale.
    std::vector<NodeBitmap> prefix;
    std::vector<std::uint32_t> rank;  // position of each node in `sorted` (kNoRank if absent)
  };
  // A floating request's shape (GPUs and memory per node, exclusive): every step by which a node's contribution
  // to the CPU count grows, by removal key (kUsableNow first). Rebuilt when a job starts during the cycle.
  struct FloatEvent {
    std::int64_t key;
    NodeIndex node;
    std::uint32_t cpus;
  };
  // kBlock events in a row whose nodes are distinct and add the same CPUs each: their sum over a node set is that
  // weight times one bitmap count, so the walk skips whole blocks that do not reach the request.
  struct FloatBlock {
    NodeBitmap nodes;
    std::uint32_t weight = 0;  // the CPUs each event adds; 0 if they differ or a node repeats (walked one by one)
  };
  struct FloatShape {
    SelectRequest request;
    std::vector<FloatEvent> events;
    std::vector<FloatBlock> blocks;  // blocks[b] covers events [b * kFloatBlock, (b + 1) * kFloatBlock)
  };
  static constexpr std::size_t kFloatBlock = 64;
  FloatShape& float_shape_for(const SelectRequest& request);
  static constexpr std::size_t kBlock = 32;
  static constexpr std::uint32_t kNoRank = UINT32_MAX;
  static bool same_shape(const SelectRequest& a, const SelectRequest& b);
  /// Number of entries of `shape.sorted` with keys <= `key`.
  static std::size_t sorted_end(const Shape& shape, std::int64_t key);
  Shape& shape_for(const SelectRequest& request);
  std::int64_t compute_key(const SelectRequest& request, NodeIndex n) const;

  const ClusterState& state_;
  std::vector<std::vector<Release>> releases_;  // per node, by key
  std::vector<NodeIndex> used_nodes_;           // nodes with releases (to clear cheaply)
  std::vector<RunningJob> running_;             // every job with releases, by key
  // (key, node) of every allocation of the running jobs at the last rebuild, and of those started since, each
  // ascending: what shape_for reads instead of the jobs' allocations.
  std::vector<std::pair<std::int64_t, NodeIndex>> running_nodes_, started_nodes_;
  std::vector<Shape> shapes_;
  std::size_t last_shape_ = 0;  // index of the shape found last (shapes_ only grows between rebuilds)
  std::vector<FloatShape> float_shapes_;
  std::vector<std::pair<std::int64_t, NodeIndex>> merge_buffer_;
};

}  // namespace gputwin
