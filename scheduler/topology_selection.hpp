// Topology-aware node choice as Slurm's topology plugins make it (slurm-semantics.md 3.3-3.4):
// - topology/tree, eval_nodes_tree.c:_eval_nodes_topo: a top switch that holds enough usable nodes of the
//   lowest weight, whole weight groups under it, leaves already holding chosen nodes filled first, then further
//   leaves by summed switch distance and tightest fit (_topo_choose_best_switch), nodes within a leaf in index
//   order; --switches counts the leaves used.
// - topology/block, eval_nodes_block.c: the smallest enabled block level that can hold the job, one block at
//   that level (lowest weight, then fewest available nodes, ties to the later block), base blocks within it
//   by fit (a base block that holds the remainder with the fewest nodes, else the one with the most).
// Both work on the usable nodes the flat selector found; they decide only which of them the job gets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/topology.hpp"

namespace gputwin {

/// One usable node as the topology choice sees it.
struct UsableNode {
  NodeIndex node = 0;        ///< Node index.
  std::uint32_t cpus = 0;    ///< CPUs the node can give this job.
  std::uint32_t weight = 0;  ///< Scheduling weight (lower first).
};

/// A run of consecutive usable nodes of one weight: [first, first + count).
struct UsableRange {
  NodeIndex first = 0;       ///< First node.
  std::uint32_t count = 0;   ///< Nodes in the run.
  std::uint32_t weight = 0;  ///< Their scheduling weight.
};

/// What the job needs: nodes and CPUs still to cover (fixed node count, or one node and a CPU total).
struct TopologyNeed {
  std::uint32_t nodes = 1;          ///< Nodes: exact count for fixed requests, 1 (a minimum) otherwise.
  std::uint64_t cpus = 1;           ///< CPUs in total.
  bool fixed = true;                ///< True when `nodes` is exact (no more nodes may be taken).
  std::uint32_t cpus_per_node = 1;  ///< CPUs each node gives a fixed request.
};

/// Chooses nodes over a Slurm topology; keeps scratch buffers between calls.
class TopologySelector {
 public:
  /// Selector over `topology` (kept by reference).
  explicit TopologySelector(const SlurmTopology& topology) : topology_(topology) {}

  /// Orders the chosen nodes of `usable` (ascending node index) into `out`, in the order the plugin takes them;
  /// false if the topology cannot satisfy `need`. `leaves_used` receives the leaf switches (tree) or base
  /// blocks (block) the choice spans.
  bool choose(std::span<const UsableNode> usable, const TopologyNeed& need, std::vector<NodeIndex>& out,
              std::uint32_t& leaves_used);

  /// The same choice as choose() for a fixed node count on a tree whose leaves are index ranges, with every
  /// usable node of one weight, computed from runs of usable nodes (cost O(runs + switches), not O(nodes)).
  /// Returns nothing when those conditions do not hold (use choose()).
  std::optional<bool> choose_ranges(std::span<const UsableRange> usable, const TopologyNeed& need,
                                    std::vector<NodeIndex>& out, std::uint32_t& leaves_used);

  /// True if whether a job fits depends only on how many nodes are usable, not on which (a tree with a single
  /// top switch): count-based shortcuts stay exact.
  [[nodiscard]] bool feasibility_is_count_based() const;

 private:
  bool choose_tree(std::span<const UsableNode> usable, const TopologyNeed& need, std::vector<NodeIndex>& out,
                   std::uint32_t& leaves_used);
  bool choose_block(std::span<const UsableNode> usable, const TopologyNeed& need, std::vector<NodeIndex>& out,
                    std::uint32_t& leaves_used);

  void index_leaves();
  // Lowers the best-node counts of switch `from` and its ancestors by `taken` (_decrement_node_cnt).
  void decrement_up(std::int64_t taken, std::size_t from);
  // Adds switch `from`'s distances to every switch (_topo_add_dist).
  void add_distance(std::size_t from);
  // _topo_compare_switches: 1 if i fits better, -1 if j does, 0 if neither; i_fit as Slurm leaves it.
  [[nodiscard]] int compare_switches(std::size_t i, std::size_t j, std::int64_t rem_nodes, std::int64_t rem_cpus,
                                     bool& i_fit) const;
  // The next leaf to take nodes from (_topo_choose_best_switch over the leaves not yet required); -1 if none.
  int best_leaf(std::int64_t rem_nodes, std::int64_t rem_cpus);
  [[nodiscard]] bool compute_count_based() const;

  const SlurmTopology& topology_;
  bool leaves_indexed_ = false;
  mutable int count_based_ = -1;                          // feasibility_is_count_based(), once known
  bool leaves_are_ranges_ = false;                        // every leaf holds exactly the nodes [first, last]
  std::vector<std::array<std::uint32_t, 3>> leaf_spans_;  // (first, last, leaf) sorted by first
  std::vector<std::uint32_t> by_level_;                   // switches in ascending level
  std::vector<std::uint32_t> leaves_in_order_;            // leaf switches in table order
  std::vector<std::uint32_t> cpus_of_;                    // per node: CPUs if usable, else 0
  std::vector<std::uint32_t> weight_of_;                  // per node: weight if usable
  std::vector<std::uint8_t> in_best_;                     // per node: in the best-nodes set
  std::vector<std::uint8_t> taken_;                       // per node: taken
  std::vector<std::int64_t> switch_nodes_;                // per switch: usable best nodes under it
  std::vector<std::uint64_t> switch_cpus_;                // per switch: their CPUs
  std::vector<std::uint8_t> switch_required_;
  std::vector<std::uint64_t> dist_;
  std::vector<std::uint32_t> lowest_weight_;  // per switch: lowest weight of its usable nodes
  std::vector<std::uint8_t> under_top_;       // per switch: under (or equal to) the top switch
  std::vector<UsableNode> usable_;            // the usable nodes inside the topology
};

}  // namespace gputwin
