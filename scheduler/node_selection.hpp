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

namespace gputwin {

/// What a job asks of the node selector.
struct SelectRequest {
  std::uint32_t nodes = 0;            ///< Exact node count; 0 = as few or as many as the CPUs need.
  std::uint32_t cpus = 1;             ///< Total CPUs.
  std::uint32_t gpus_per_node = 0;    ///< GPUs on every allocated node.
  std::uint64_t mem_per_node_mb = 0;  ///< Memory on every allocated node.
  bool exclusive = false;             ///< Whole nodes only.
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
};

/// The live cluster's free resources.
FreeResources live_resources(const ClusterState& state);

/// Stateless node selector over one cluster configuration; keeps scratch buffers to avoid allocation.
class NodeSelector {
 public:
  /// Selector for `config` (kept by reference).
  explicit NodeSelector(const ClusterConfig& config) : config_(config) {}

  /// True if `node` could host the request on `free` right now.
  [[nodiscard]] bool usable(const SelectRequest& request, const FreeResources& free, NodeIndex node) const;

  /// Chooses nodes for `request` among `candidates` (ascending indices) whose `allowed` byte is non-zero
  /// (allowed may be null = all). On success fills `out` and returns true.
  bool select(const SelectRequest& request, std::span<const NodeIndex> candidates, const std::uint8_t* allowed,
              const FreeResources& free, std::vector<NodeAllocation>& out);

 private:
  struct Run {
    std::uint32_t first = 0;  // position in candidates
    std::uint32_t count = 0;  // usable nodes in the run
    std::uint64_t cpus = 0;   // available CPUs in the run
    std::uint32_t weight = 0;
    bool used = false;
  };
  const ClusterConfig& config_;
  std::vector<Run> runs_;
  std::vector<std::uint32_t> positions_;  // candidate positions of usable nodes, run by run
};

}  // namespace gputwin
