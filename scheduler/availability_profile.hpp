// The availability profile of conservative backfilling: the free resources of every node from now on, as slices
// [begin, next begin) whose boundaries are the expected ends of running jobs and the begins and ends of
// reservations. It is built in one sweep (rebuild) or from a reset, grows reservation by reservation, and answers
// "the earliest boundary at which this request fits for this long, and on which nodes" with the same node selector
// and the same window view (per-node minimum over the window) as the plain algorithm's profile, without copying
// per-node state for the slices it skips.
//
//   AvailabilityProfile p(config);
//   p.reset(now, live_resources(state));
//   p.add_release(end_of_running_job, its_allocation);
//   SimTime begin = p.earliest_start(selector, request, partition_nodes, length, allocation);
//   if (begin != kNever) p.reserve(begin, begin + length, allocation);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster_state.hpp"
#include "scheduler/node_selection.hpp"

namespace gputwin {

/// One change of a profile built in one sweep (AvailabilityProfile::rebuild): `allocation` taken (`take`) or
/// given back from `at` on.
struct ProfileStep {
  SimTime at = 0;                              ///< When the change happens (>= the profile's start).
  std::span<const NodeAllocation> allocation;  ///< What is taken or given back on each node.
  bool take = false;                           ///< True: taken (a reservation's begin); false: given back.
};

/// Free CPUs, GPUs, memory and job counts of every node over future time, in slices.
class AvailabilityProfile {
 public:
  /// An empty profile for the nodes of `config` (kept by reference).
  explicit AvailabilityProfile(const ClusterConfig& config);

  /// Starts over at `now` with the free resources `live` (one slice, no boundary after it).
  void reset(SimTime now, const FreeResources& live);
  /// The profile reset(now, live) and then add_release and reserve give, for `steps` (each add_release one step,
  /// each reserve two: the take at its begin and the give-back at its end), built in one sweep over the steps in
  /// time order: every slice is created once, at the end, and gets its row from the one before (sorts `steps`).
  void rebuild(SimTime now, const FreeResources& live, std::vector<ProfileStep>& steps);
  /// A running job's `allocation` becomes free at `at` (> start()): its expected end.
  void add_release(SimTime at, std::span<const NodeAllocation> allocation);
  /// Takes `allocation` over [begin, end); `begin` is start() or a boundary.
  void reserve(SimTime begin, SimTime end, std::span<const NodeAllocation> allocation);

  /// The earliest slice begin at which `request` fits on `candidates` (schedulable nodes only) during
  /// [begin, begin + length), and the nodes `selector` chooses on the window's per-node minimum (in `out`); kNever
  /// if it fits nowhere. Slices are tried in time order, as a rebuilt profile would be, after the windows known to
  /// fail (from earlier queries since the profile last gained free resources: see TotalsMemo).
  SimTime earliest_start(NodeSelector& selector, const SelectRequest& request, const NodeSet& candidates,
                         const std::uint8_t* schedulable, SimTime length, std::vector<NodeAllocation>& out);

  /// The candidate nodes usable for the request in the window of the last earliest_start that found one.
  [[nodiscard]] const std::vector<std::uint64_t>& last_usable() const { return usable_; }

  /// The profile's start (the time of the last reset or rebuild).
  [[nodiscard]] SimTime start() const { return slices_.front().begin; }
  /// True if a slice begins at `t`.
  [[nodiscard]] bool is_boundary(SimTime t) const;
  /// Number of slices (for tests and statistics).
  [[nodiscard]] std::size_t slice_count() const { return slices_.size(); }
  /// Free CPUs of node `n` in the slice holding `t` (for tests).
  [[nodiscard]] std::uint32_t free_cpus_at(SimTime t, NodeIndex n) const;

 private:
  // One slice: its begin and the row holding its per-node state.
  struct Slice {
    SimTime begin = 0;
    std::uint32_t row = 0;
  };

  std::size_t slice_holding(SimTime t) const;
  std::size_t split(SimTime t);
  void apply(std::size_t first, std::size_t last, std::span<const NodeAllocation> allocation, bool take);
  void make_columns_vary(bool gpus, bool mem);
  std::uint32_t take_row();
  std::uint32_t copy_row(std::uint32_t from);
  void build_capable_mask(const SelectRequest& request, const NodeSet& candidates, const std::uint8_t* schedulable);

  const ClusterConfig& config_;
  std::size_t nodes_ = 0;
  std::size_t words_ = 0;
  std::vector<Slice> slices_;  // by begin
  // Rows of per-node state (row * nodes_ + node), and per row: nodes with a free CPU (bitmap), total free CPUs
  // and GPUs (for fast necessary tests).
  std::vector<std::uint32_t> cpus_, gpus_, jobs_;
  std::vector<std::uint64_t> mem_;
  // GPUs and memory change in no slice until an allocation holding some is applied (never, on CPU-only traces):
  // until then every row holds the reset's values, kept once in reset_gpus_ and reset_mem_, and the rows'
  // columns are neither copied, updated nor read (a new row is 8 instead of 20 bytes a node).
  bool gpus_vary_ = false, mem_vary_ = false;
  std::vector<std::uint32_t> reset_gpus_;
  std::vector<std::uint64_t> reset_mem_;
  std::vector<std::uint64_t> with_cpu_;
  std::vector<std::int64_t> total_cpus_, total_gpus_;
  std::vector<std::uint32_t> spare_rows_;
  // Query scratch: the nodes that could host the request at all, the window AND, and the window's view.
  std::vector<std::uint64_t> capable_, window_;
  std::vector<std::uint64_t> front_, back_;  // the sliding window's two stacks (earliest_start)
  std::vector<std::uint64_t> usable_;        // last_usable()
  // What earliest_start learnt since the profile last gained free resources: for a request needing `cpus` and
  // `gpus` in total for `length`, no window starting before first_window has them in every slice, and `request`
  // on `candidates` fits in no window starting before first_fit.
  struct TotalsMemo {
    std::int64_t cpus, gpus;
    SimTime length, first_window, first_fit;
    SelectRequest request;
    const NodeIndex* candidates;
  };
  static constexpr std::size_t kTotalsMemoSize = 64;
  // build_capable_mask's cache: request shapes (candidate list, CPUs per node, GPUs, memory, exclusive) and masks.
  struct CapableKey {
    const NodeIndex* nodes;
    std::size_t count;
    std::uint32_t cpus_per_node, gpus_per_node;
    std::uint64_t mem_per_node_mb;
    bool exclusive;
    bool operator==(const CapableKey&) const = default;
  };
  static constexpr std::size_t kCapableCacheSize = 32;
  std::vector<CapableKey> capable_keys_;
  std::vector<std::uint64_t> capable_cache_;
  std::vector<TotalsMemo> totals_memo_;
  std::size_t memo_next_ = 0;
  std::vector<std::uint32_t> view_cpus_, view_gpus_, view_jobs_;
  std::vector<std::uint64_t> view_mem_;
  std::vector<std::uint64_t> one_cpu_;  // nodes of one CPU (bitmap): their window minimum needs no reading
};

}  // namespace gputwin
