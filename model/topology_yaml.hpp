// Slurm 25.05's topology.yaml (topology.yaml(5)): several named topologies in one file, each a tree (switches with
// children or nodes), blocks (block_sizes and blocks) or flat. One of them is read into the TopologySpec that the
// equivalent topology.conf gives (model/topology_conf.hpp), so everything downstream (resolve_topology, the
// scenario's /cluster/topology, `gputwin import --topology`) treats both forms alike.
//
//   - topology: fabric          # read_topology_yaml("topology.yaml") picks the cluster_default one,
//     cluster_default: true     # read_topology_yaml("topology.yaml", "nvl") the one named nvl
//     tree:
//       switches:
//         - switch: leaf1
//           nodes: gpu[001-018]
//   - topology: nvl
//     block:
//       block_sizes: [18, 72]
//       blocks:
//         - block: rack1
//           nodes: gpu[001-018]
//
// Sources: Slurm's src/interfaces/topology.c:_parse_yaml and the TOPOLOGY_* parsers of
// src/plugins/data_parser/v0.0.43/parsers.c; the differences from the man page are listed in topology_yaml.cpp.
#pragma once

#include <string>
#include <string_view>

#include "model/topology_conf.hpp"

namespace gputwin {

/// Parses topology.yaml text and returns one topology: the one called `name` if given, else the first with
/// `cluster_default: true`, else the first in the file. `flat: true` gives an empty (flat) spec. Throws ConfigError
/// naming `file`, the line and the key at fault (malformed YAML, unknown or repeated keys, a switch without children
/// or nodes, a block without nodes, bad block_sizes, two topology types, no topology called `name`).
TopologySpec parse_topology_yaml(std::string_view text, const std::string& file, const std::string& name = "");
/// Reads and parses a topology.yaml file (see parse_topology_yaml).
TopologySpec read_topology_yaml(const std::string& path, const std::string& name = "");

/// topology.yaml text holding `spec` as one topology called `name` (cluster_default: true), with hostlist-compressed
/// nodes and children; parse_topology_yaml gives `spec` back when its node and child lists are in sorted order.
std::string write_topology_yaml(const TopologySpec& spec, const std::string& name);

/// Whether `path` names a topology.yaml rather than a topology.conf: it ends in .yaml or .yml (any case).
bool is_topology_yaml_path(std::string_view path);
/// Reads `path` as topology.yaml (is_topology_yaml_path) or else as topology.conf; `name` selects a topology in a
/// topology.yaml and must be empty for a topology.conf (ConfigError otherwise).
TopologySpec read_topology_file(const std::string& path, const std::string& name = "");

}  // namespace gputwin
