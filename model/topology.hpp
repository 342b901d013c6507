// Network topology of a cluster, in two views:
// - Slurm's view, as topology/tree and topology/block see it (switch table with levels, leaf membership and
//   switch distances; base blocks and block sizes), which node selection uses;
// - the physical fabric (NVSwitch domains, leaf/spine/core switches, links with bandwidth and latency and
//   oversubscription), which the job-speed model uses; built on Boost.Graph behind model/fabric.hpp.
// Sources: slurm-semantics.md section 3.3-3.4, topology.conf(5); gpu-domain.md section 4.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gputwin {

/// Index of a node in the cluster's node table.
using NodeIndex = std::uint32_t;
class Fabric;

/// Which Slurm topology plugin the cluster runs (TopologyPlugin / topology.yaml's type).
enum class TopologyKind : std::uint8_t {
  kFlat,   ///< topology/flat (or none): no switch awareness.
  kTree,   ///< topology/tree: SwitchName/Switches/Nodes.
  kBlock,  ///< topology/block: BlockName/Nodes and BlockSizes.
};

/// One switch of topology/tree's switch table (switch_record_table), in topology.conf order.
struct TopologySwitch {
  std::string name;                     ///< SwitchName.
  std::uint32_t level = 0;              ///< 0 for leaves (switches with Nodes=), parent = 1 + max child level.
  int parent = -1;                      ///< Index of the parent switch; -1 for a top switch.
  std::vector<std::uint32_t> children;  ///< Indices of child switches (Switches=), in configuration order.
  std::vector<NodeIndex> nodes;         ///< Every node under this switch, ascending (leaves: its Nodes=).
  std::string link_speed;               ///< LinkSpeed= as written (informational in Slurm), empty if unset.
};

/// One base block of topology/block (BlockName=... Nodes=...), in topology.conf order.
struct TopologyBlock {
  std::string name;              ///< BlockName.
  std::vector<NodeIndex> nodes;  ///< The block's nodes, ascending.
};

/// Slurm's view of the topology: what topology/tree or topology/block reads from topology.conf.
struct SlurmTopology {
  TopologyKind kind = TopologyKind::kFlat;                  ///< The plugin.
  std::vector<TopologySwitch> switches;                     ///< Tree: the switch table.
  std::vector<std::vector<std::uint32_t>> switch_distance;  ///< Tree: hops between switches i and j.
  std::vector<int> leaf_of_node;                            ///< Tree: index of each node's leaf switch, -1 if none.
  std::vector<TopologyBlock> blocks;                        ///< Block: base blocks.
  std::vector<std::uint32_t> block_sizes;  ///< Block: BlockSizes in nodes (the first is the base block size).
  std::vector<int> block_of_node;          ///< Block: index of each node's base block, -1 if none.
  bool topo_optional = false;              ///< TopologyParam=TopoOptional: only --switches jobs use the tree.
  std::int64_t max_switch_wait_s = 300;    ///< SchedulerParameters=max_switch_wait.
};

/// A cluster's topology: Slurm's view plus, when described, the physical fabric.
struct Topology {
  SlurmTopology slurm;                   ///< What node selection sees.
  std::shared_ptr<const Fabric> fabric;  ///< Physical links for the speed model; null when not described.
};

/// Leaf switches (tree) or base blocks (block) holding at least one of `nodes` (ascending or not); 0 for a flat
/// topology or when none of them is in it.
inline std::uint32_t leaves_spanned(const SlurmTopology& topology, std::span<const NodeIndex> nodes) {
  const std::vector<int>& place =
      topology.kind == TopologyKind::kBlock ? topology.block_of_node : topology.leaf_of_node;
  if (topology.kind == TopologyKind::kFlat) return 0;
  std::vector<int> seen;
  for (NodeIndex n : nodes) {
    const int p = n < place.size() ? place[n] : -1;
    if (p >= 0 && std::find(seen.begin(), seen.end(), p) == seen.end()) seen.push_back(p);
  }
  return static_cast<std::uint32_t>(seen.size());
}

}  // namespace gputwin
