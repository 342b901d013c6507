// Slurm's topology.conf (topology/tree: SwitchName/Switches/Nodes/LinkSpeed; topology/block: BlockName/Nodes and
// BlockSizes), read into SlurmTopology and written back, plus builders for common fabrics (a fat tree of leaves
// and spines, NVL72-style blocks) over a cluster's nodes in index order. Switch distances are hop counts on the
// switch graph (Boost.Graph breadth-first search), as topology/tree's switches_dist.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.hpp"

namespace gputwin {

/// One switch as written (before levels and node sets are worked out).
struct SwitchSpec {
  std::string name;                   ///< SwitchName.
  std::vector<std::string> switches;  ///< Switches= (child switch names).
  std::vector<std::string> nodes;     ///< Nodes= (host names).
  std::string link_speed;             ///< LinkSpeed= as written.
  /// Field-by-field equality (a topology.yaml and its topology.conf give equal specs).
  friend bool operator==(const SwitchSpec&, const SwitchSpec&) = default;
};

/// One base block as written.
struct BlockSpec {
  std::string name;                ///< BlockName.
  std::vector<std::string> nodes;  ///< Nodes=.
  /// Field-by-field equality.
  friend bool operator==(const BlockSpec&, const BlockSpec&) = default;
};

/// topology.conf as written: a tree (switches) or blocks; neither is a flat topology.
struct TopologySpec {
  std::vector<SwitchSpec> switches;        ///< SwitchName lines, in file order.
  std::vector<BlockSpec> blocks;           ///< BlockName lines, in file order.
  std::vector<std::uint32_t> block_sizes;  ///< BlockSizes=, in nodes.
  /// Field-by-field equality.
  friend bool operator==(const TopologySpec&, const TopologySpec&) = default;
};

/// Parses topology.conf text; `file` names it in ConfigError messages ("topology.conf: line 3: ...").
TopologySpec parse_topology_conf(std::string_view text, const std::string& file);
/// Reads and parses a topology.conf file.
TopologySpec read_topology_conf(const std::string& path);

/// Resolves a spec against the node table (`node_names` in index order): levels, parents, node sets, distances,
/// leaf and block of every node. Throws ConfigError (line 0) naming the switch, block or node at fault: unknown
/// nodes or child switches, a switch with two parents or in a cycle, a node in two leaves or blocks, block sizes
/// that are not the base size times a power of two.
SlurmTopology resolve_topology(const TopologySpec& spec, const std::vector<std::string>& node_names,
                               const std::string& file);

/// topology.conf text for `topology` (hostlist-compressed Nodes= and Switches=).
std::string to_topology_conf(const SlurmTopology& topology, const std::vector<std::string>& node_names);

/// A fat tree over `nodes` nodes in index order: leaves of `nodes_per_leaf`, spines over `leaves_per_spine`
/// leaves each, and one core switch above the spines when there is more than one.
TopologySpec fat_tree_spec(const std::vector<std::string>& node_names, std::uint32_t nodes_per_leaf,
                           std::uint32_t leaves_per_spine);

/// Base blocks of `nodes_per_block` nodes in index order (an NVL72 rack is 18 trays) with `block_sizes`.
TopologySpec block_spec(const std::vector<std::string>& node_names, std::uint32_t nodes_per_block,
                        std::vector<std::uint32_t> block_sizes);

// Checks shared by the topology.conf and topology.yaml readers (model/topology_yaml.cpp), so both forms accept
// and reject the same values with the same words.
namespace detail {

/// Expands a hostlist expression; throws ConfigError(file, line, "bad hostlist '<expr>': <why>").
std::vector<std::string> expand_topology_hostlist(std::string_view expr, const std::string& file, std::uint64_t line);
/// A block size or other count of at most 9 decimal digits; throws ConfigError(file, line, "bad number '<text>'").
std::uint32_t parse_topology_count(std::string_view text, const std::string& file, std::uint64_t line);
/// Throws ConfigError(file, line, "<key><size> is not the base block size (<first>) times a power of two") unless
/// every size is the first size times a power of two (block_record.c); `key` is "BlockSizes=" or "block_sizes: ".
void check_block_sizes(const std::vector<std::uint32_t>& sizes, std::string_view key, const std::string& file,
                       std::uint64_t line);

}  // namespace detail

}  // namespace gputwin
