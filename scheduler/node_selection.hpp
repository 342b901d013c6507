// Node selection in the manner of select/cons_tres without topology (eval_nodes.c:_eval_nodes_consec):
// usable nodes are grouped into runs of consecutive indices with equal Weight; the lowest weight wins, then the
// first sufficient run with the fewest CPUs (best fit), else the run with the most CPUs; nodes are taken in index
// order, and when one node is still needed, the usable node with the fewest available CPUs. CPUs and GPUs are
// allocated per core and per GPU; memory per node.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster_state.hpp"
#include "scheduler/topology_selection.hpp"

namespace gputwin {

/// What a job asks of the node selector.
struct SelectRequest {
  std::uint32_t nodes = 0;            ///< Exact node count; 0 = as few or as many as the CPUs need.
  std::uint32_t cpus = 1;             ///< Total CPUs.
  std::uint32_t gpus_per_node = 0;    ///< GPUs on every allocated node.
  std::uint64_t mem_per_node_mb = 0;  ///< Memory on every allocated node.
  bool exclusive = false;             ///< Whole nodes only.
  std::uint32_t switches = 0;         ///< --switches count: most leaf switches the job may span; 0 = any.
  bool switch_wait_over = true;       ///< The job has waited its --switches max-time (any spread is accepted).
};

/// The request of a job specification.
SelectRequest select_request(const JobSpec& spec);

/// Free resources the selector reads: the live cluster's or a will-run scratch copy.
struct FreeResources {
  const std::uint32_t* cpus = nullptr;        ///< Free CPUs per node.
  const std::uint32_t* gpus = nullptr;        ///< Free GPUs per node.
  const std::uint64_t* mem_mb = nullptr;      ///< Free memory per node.
  const std::uint32_t* jobs = nullptr;        ///< Jobs on each node (for exclusive requests).
  const std::uint8_t* schedulable = nullptr;  ///< 1 where the node can take work.
  const ClusterState* live = nullptr;         ///< The live cluster when these are its resources (enables bitmaps).
  const std::uint64_t* superset = nullptr;    ///< Bitmap holding every node that may be usable, when known.
  /// Bitmap of the schedulable nodes whose free resources in these arrays are their configuration's, when known:
  /// a set bit lets the selector skip reading the node, so it must be exact for every node the selector reads. Only
  /// live_resources() sets it (the live cluster's untouched_bits); a will-run's scratch copy leaves it null (keeping
  /// such a bitmap there cost more than the shortcut saved: BENCHMARKS.md).
  const std::uint64_t* untouched = nullptr;
};

/// The nodes a selection may use: a partition's node list and, when known, its bitmap.
struct NodeSet {
  std::span<const NodeIndex> nodes;     ///< Ascending node indices.
  const std::uint64_t* bits = nullptr;  ///< The same set as a bitmap (64 nodes per word), or null.
};

/// The node set of partition `p` of the live cluster.
NodeSet partition_nodes(const ClusterState& state, std::uint32_t p);

/// Fast necessary condition from the partition's counters: false means `spec` cannot fit partition `p` now.
bool may_fit_now(const ClusterState& state, const JobSpec& spec, std::uint32_t p);

/// True if job `j`'s partition takes it at all: the partition is UP and the job's limit is within MaxTime
/// (otherwise slurmctld leaves it pending, PartitionDown / PartitionTimeLimit).
bool partition_admits(const ClusterState& state, JobIndex j);

/// True if partition `part` could ever host `spec` on its available nodes, however busy (slurmctld refuses other
/// jobs at submit: "Requested node configuration is not available", reason BadConstraints).
bool can_ever_fit(const JobSpec& spec, const PartitionConfig& part, const ClusterConfig& cluster);

/// The live cluster's free resources.
FreeResources live_resources(const ClusterState& state);

/// Stateless node selector over one cluster configuration; keeps scratch buffers to avoid allocation.
class NodeSelector {
 public:
  /// Selector over `config`'s nodes (kept by reference); when `live` is given, its current node weights
  /// (ClusterState::node_weights, changed by scontrol-style updates) override the configured Weight.
  explicit NodeSelector(const ClusterConfig& config, const ClusterState* live = nullptr)
      : config_(config), topology_(config.topology.slurm), live_(live) {}

  /// True if `node` could host the request on `free` right now.
  [[nodiscard]] bool usable(const SelectRequest& r, const FreeResources& free, NodeIndex n) const {
    if (!free.schedulable[n]) return false;
    if (r.exclusive) {
      return free.jobs[n] == 0 && config_.nodes[n].gpus >= r.gpus_per_node &&
             config_.nodes[n].memory_mb >= r.mem_per_node_mb;
    }
    const std::uint32_t cpn = r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1;
    return (free.gpus[n] >= r.gpus_per_node) & (free.mem_mb[n] >= r.mem_per_node_mb) & (free.cpus[n] >= cpn);
  }

  /// Chooses nodes for `request` among `candidates` that are in the `allowed` bitmap (64 nodes per word; null =
  /// all).
  /// On success fills `out` (ascending nodes) and returns true. On the live cluster with a candidate bitmap it
  /// visits only nodes with enough free GPUs, so a busy cluster costs little.
  bool select(const SelectRequest& request, const NodeSet& candidates, const std::uint64_t* allowed,
              const FreeResources& free, std::vector<NodeAllocation>& out);

  /// True if the request goes through the topology plugin (tree or block; with TopoOptional only --switches).
  [[nodiscard]] bool uses_topology(const SelectRequest& request) const {
    const SlurmTopology& t = config_.topology.slurm;
    return t.kind != TopologyKind::kFlat && (!t.topo_optional || request.switches > 0);
  }
  /// True if whether a request fits depends only on how many nodes are usable (flat, or a single-rooted tree).
  [[nodiscard]] bool feasibility_is_count_based() const { return topology_.feasibility_is_count_based(); }
  /// Turns the range-based topology choice on or off (tests compare both; they must agree).
  void set_fast_topology(bool on) { fast_topology_ = on; }
  /// Picks runs of free nodes one walk over all runs per pick, as Slurm's loop does, instead of by one sort after
  /// the first pick (tests compare both; they must agree).
  void set_reference_picks(bool on) { reference_picks_ = on; }
  /// Groups usable nodes into runs node by node, as the node-list walk does, instead of a bitmap word at a time
  /// (tests compare both; they must agree).
  void set_reference_walk(bool on) { reference_walk_ = on; }
  /// Leaf switches (tree) or base blocks (block) of the last successful topology selection; 0 without one.
  [[nodiscard]] std::uint32_t last_leaves_used() const { return last_leaves_; }

 private:
  struct Run {
    NodeIndex first = 0;         // first node of the run; the run is [first, first + count)
    std::uint32_t count = 0;     // nodes in the run
    std::uint64_t cpus = 0;      // available CPUs in the run
    std::uint32_t max_cpus = 0;  // most available CPUs of one node in the run
    std::uint32_t weight = 0;
    bool used = false;
  };
  // The runs of the usable nodes among filter & candidates & allowed (bitmaps; allowed may be null), a word at a
  // time: the filter's promise checked, then each stretch of consecutive set bits added as runs, cut where weights
  // change.
  void runs_from_bits(const SelectRequest& r, const FreeResources& free, const std::uint64_t* filter,
                      const std::uint64_t* candidates, const std::uint64_t* allowed,
                      const std::vector<std::uint32_t>& weights);
  // Marks the words of 64 nodes that all have the same CPUs, GPUs and memory (uniform_words_).
  void find_uniform_words();
  const ClusterConfig& config_;
  TopologySelector topology_;
  std::vector<std::uint8_t> uniform_words_;  // per word: 1 if its 64 nodes are configured alike
  // The node weights in force: the live cluster's, else the configured ones (copied flat on first use). Also
  // brings weight_breaks_ up to date.
  const std::vector<std::uint32_t>& current_weights();
  std::vector<std::uint32_t> weights_;         // configured node weights, flat
  const ClusterState* live_ = nullptr;         // the cluster whose weights are read, when given
  std::vector<std::uint64_t> weight_breaks_;   // bit n: node n's weight differs from node n - 1's (and bit 0)
  std::uint64_t breaks_version_ = UINT64_MAX;  // live_'s node_update_count when weight_breaks_ was made
  std::vector<Run> runs_;
  std::vector<UsableNode> usable_;                    // usable nodes for the topology choice
  std::vector<NodeIndex> topo_order_;                 // the topology's choice, in taking order
  std::vector<UsableRange> ranges_;                   // the same as the runs, for the range-based choice
  bool fast_topology_ = true;                         // try the range-based choice first (tests turn it off)
  static constexpr int kWholeWordTestFrom = 12;       // set bits in a word from which all 64 nodes are tested at once
  static constexpr std::size_t kSortedPicksFrom = 8;  // fewer runs: every pick walks them all
  bool reference_picks_ = false;                      // tests: always walk all runs per pick
  bool reference_walk_ = false;                       // tests: group the bitmap's nodes node by node
  std::vector<std::uint32_t> order_;                  // pick_sorted: unused runs by weight, most CPUs, visit order
  std::vector<std::uint32_t> by_count_;               // pick_sorted: one weight's runs by most nodes
  std::uint32_t last_leaves_ = 0;
};

}  // namespace gputwin
