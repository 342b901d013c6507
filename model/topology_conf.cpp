#include "model/topology_conf.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/input_file.hpp"
#include "model/text.hpp"

namespace gputwin {
namespace detail {

std::vector<std::string> expand_topology_hostlist(std::string_view expr, const std::string& file, std::uint64_t line) {
  try {
    return expand_hostlist(expr);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(file, line, std::string("bad hostlist '") + std::string(expr) + "': " + e.what());
  }
}

std::uint32_t parse_topology_count(std::string_view text, const std::string& file, std::uint64_t line) {
  std::uint64_t v = 0;
  if (text.empty() || text.size() > 9) throw ConfigError(file, line, "bad number '" + std::string(text) + "'");
  for (char c : text) {
    if (c < '0' || c > '9') throw ConfigError(file, line, "bad number '" + std::string(text) + "'");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return static_cast<std::uint32_t>(v);
}

void check_block_sizes(const std::vector<std::uint32_t>& sizes, std::string_view key, const std::string& file,
                       std::uint64_t line) {
  if (sizes.empty()) return;
  const std::uint32_t base = sizes.front();
  for (std::uint32_t size : sizes) {
    const std::uint32_t multiple = base == 0 ? 0 : size / base;
    if (base == 0 || size % base != 0 || (multiple & (multiple - 1)) != 0)
      throw ConfigError(file, line,
                        std::string(key) + std::to_string(size) + " is not the base block size (" +
                            std::to_string(base) + ") times a power of two");
  }
}

}  // namespace detail

using detail::expand_topology_hostlist;
using detail::parse_topology_count;

TopologySpec parse_topology_conf(std::string_view text, const std::string& file) {
  TopologySpec spec;
  std::istringstream in{std::string(text)};
  std::string raw;
  std::uint64_t line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    if (const auto hash = raw.find('#'); hash != std::string::npos) raw.erase(hash);
    std::istringstream words(raw);
    std::string word;
    std::vector<std::pair<std::string, std::string>> pairs;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ConfigError(file, line_no, "expected Key=Value, got '" + word + "'");
      pairs.emplace_back(lower(word.substr(0, eq)), word.substr(eq + 1));
    }
    if (pairs.empty()) continue;
    const std::string& first = pairs.front().first;
    if (first == "switchname") {
      SwitchSpec s;
      s.name = pairs.front().second;
      if (s.name.empty()) throw ConfigError(file, line_no, "empty SwitchName");
      for (std::size_t i = 1; i < pairs.size(); ++i) {
        const auto& [key, value] = pairs[i];
        if (key == "switches")
          s.switches = expand_topology_hostlist(value, file, line_no);
        else if (key == "nodes")
          s.nodes = expand_topology_hostlist(value, file, line_no);
        else if (key == "linkspeed")
          s.link_speed = value;
        else
          throw ConfigError(file, line_no, "unknown key '" + key + "' on a SwitchName line");
      }
      if (s.switches.empty() && s.nodes.empty())
        throw ConfigError(file, line_no, "switch " + s.name + " has neither Switches= nor Nodes=");
      spec.switches.push_back(std::move(s));
    } else if (first == "blockname") {
      BlockSpec b;
      b.name = pairs.front().second;
      for (std::size_t i = 1; i < pairs.size(); ++i) {
        if (pairs[i].first != "nodes")
          throw ConfigError(file, line_no, "unknown key '" + pairs[i].first + "' on a BlockName line");
        b.nodes = expand_topology_hostlist(pairs[i].second, file, line_no);
      }
      if (b.nodes.empty()) throw ConfigError(file, line_no, "block " + b.name + " has no Nodes=");
      spec.blocks.push_back(std::move(b));
    } else if (first == "blocksizes") {
      std::string_view v = pairs.front().second;
      while (!v.empty()) {
        const auto comma = v.find(',');
        spec.block_sizes.push_back(parse_topology_count(v.substr(0, comma), file, line_no));
        v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
      }
    } else {
      throw ConfigError(file, line_no,
                        "unknown line '" + pairs.front().first +
                            "=' (expected SwitchName, BlockName "
                            "or BlockSizes)");
    }
  }
  if (!spec.switches.empty() && !spec.blocks.empty())
    throw ConfigError(file, 0, "both switches and blocks: a topology is a tree or blocks, not both");
  return spec;
}

TopologySpec read_topology_conf(const std::string& path) {
  if (const auto problem = input_file_problem(path, "configuration", kMaxConfigBytes)) {
    throw ConfigError(path, 0, *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_topology_conf(buffer.str(), path);
}

SlurmTopology resolve_topology(const TopologySpec& spec, const std::vector<std::string>& node_names,
                               const std::string& file) {
  SlurmTopology t;
  std::unordered_map<std::string, NodeIndex> node_index;
  for (std::size_t i = 0; i < node_names.size(); ++i) node_index.emplace(node_names[i], static_cast<NodeIndex>(i));
  auto node_of = [&](const std::string& name, const std::string& owner) {
    const auto it = node_index.find(name);
    if (it == node_index.end()) throw ConfigError(file, 0, owner + ": no node named '" + name + "'");
    return it->second;
  };
  if (!spec.blocks.empty()) {
    t.kind = TopologyKind::kBlock;
    t.block_of_node.assign(node_names.size(), -1);
    for (std::size_t b = 0; b < spec.blocks.size(); ++b) {
      TopologyBlock block{spec.blocks[b].name, {}};
      for (const std::string& n : spec.blocks[b].nodes) {
        const NodeIndex i = node_of(n, "block " + block.name);
        // (t.blocks holds only the blocks before this one, so a node listed twice here must be caught first)
        if (t.block_of_node[i] == static_cast<int>(b))
          throw ConfigError(file, 0, "block " + block.name + " lists node " + n + " twice");
        if (t.block_of_node[i] >= 0)
          throw ConfigError(file, 0,
                            "node " + n + " is in blocks " +
                                t.blocks[static_cast<std::size_t>(t.block_of_node[i])].name + " and " + block.name);
        t.block_of_node[i] = static_cast<int>(b);
        block.nodes.push_back(i);
      }
      std::sort(block.nodes.begin(), block.nodes.end());
      t.blocks.push_back(std::move(block));
    }
    const auto base =
        static_cast<std::uint32_t>(spec.block_sizes.empty() ? t.blocks.front().nodes.size() : spec.block_sizes.front());
    detail::check_block_sizes(spec.block_sizes, "BlockSizes=", file, 0);
    for (const TopologyBlock& b : t.blocks) {
      if (b.nodes.size() < base)
        throw ConfigError(file, 0,
                          "block " + b.name + " has fewer nodes than the base block size " + std::to_string(base));
    }
    t.block_sizes = spec.block_sizes;
    if (t.block_sizes.empty()) t.block_sizes.push_back(base);
    return t;
  }
  if (spec.switches.empty()) return t;  // flat
  t.kind = TopologyKind::kTree;
  const std::size_t count = spec.switches.size();
  std::unordered_map<std::string, std::uint32_t> switch_index;
  for (std::size_t i = 0; i < count; ++i) {
    if (!switch_index.emplace(spec.switches[i].name, static_cast<std::uint32_t>(i)).second)
      throw ConfigError(file, 0, "switch " + spec.switches[i].name + " is defined twice");
    t.switches.push_back(TopologySwitch{spec.switches[i].name, 0, -1, {}, {}, spec.switches[i].link_speed});
  }
  t.leaf_of_node.assign(node_names.size(), -1);
  for (std::size_t i = 0; i < count; ++i) {
    for (const std::string& child : spec.switches[i].switches) {
      const auto it = switch_index.find(child);
      if (it == switch_index.end())
        throw ConfigError(file, 0, "switch " + spec.switches[i].name + ": no switch named '" + child + "'");
      TopologySwitch& c = t.switches[it->second];
      if (c.parent >= 0)
        throw ConfigError(file, 0,
                          "switch " + child + " has two parents: " +
                              t.switches[static_cast<std::size_t>(c.parent)].name + " and " + spec.switches[i].name);
      if (it->second == i) throw ConfigError(file, 0, "switch " + child + " lists itself");
      c.parent = static_cast<int>(i);
      t.switches[i].children.push_back(it->second);
    }
    for (const std::string& n : spec.switches[i].nodes) {
      const NodeIndex node = node_of(n, "switch " + spec.switches[i].name);
      if (t.leaf_of_node[node] >= 0)
        throw ConfigError(file, 0,
                          "node " + n + " is under leaf switches " +
                              t.switches[static_cast<std::size_t>(t.leaf_of_node[node])].name + " and " +
                              spec.switches[i].name);
      t.leaf_of_node[node] = static_cast<int>(i);
      t.switches[i].nodes.push_back(node);
    }
  }
  // Levels bottom-up (leaf 0, parent 1 + max child) and node sets; a cycle never settles.
  std::vector<std::uint8_t> done(count, 0);
  for (std::size_t pass = 0, settled = 0; settled < count; ++pass) {
    if (pass > count) {
      for (std::size_t i = 0; i < count; ++i) {
        if (!done[i]) throw ConfigError(file, 0, "switch " + t.switches[i].name + " is part of a cycle");
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (done[i]) continue;
      TopologySwitch& s = t.switches[i];
      if (!std::all_of(s.children.begin(), s.children.end(), [&](std::uint32_t c) { return done[c] != 0; })) continue;
      for (std::uint32_t c : s.children) {
        s.level = std::max(s.level, t.switches[c].level + 1);
        s.nodes.insert(s.nodes.end(), t.switches[c].nodes.begin(), t.switches[c].nodes.end());
      }
      std::sort(s.nodes.begin(), s.nodes.end());
      if (std::adjacent_find(s.nodes.begin(), s.nodes.end()) != s.nodes.end())
        throw ConfigError(file, 0, "switch " + s.name + " reaches a node twice");
      done[i] = 1;
      ++settled;
    }
  }
  // switches_dist: hops between switches on the switch graph (unreachable: UINT32_MAX).
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Graph graph(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (t.switches[i].parent >= 0) boost::add_edge(i, static_cast<std::size_t>(t.switches[i].parent), graph);
  }
  constexpr std::uint32_t kUnreachable = std::numeric_limits<std::uint32_t>::max();
  t.switch_distance.assign(count, std::vector<std::uint32_t>(count, kUnreachable));
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<std::uint32_t>& dist = t.switch_distance[i];
    dist[i] = 0;
    boost::breadth_first_search(
        graph, boost::vertex(i, graph),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
  }
  return t;
}

std::string to_topology_conf(const SlurmTopology& topology, const std::vector<std::string>& node_names) {
  std::ostringstream out;
  auto names_of = [&](const std::vector<NodeIndex>& nodes) {
    std::vector<std::string> names;
    for (NodeIndex n : nodes) names.push_back(node_names[n]);
    return format_hostlist(names);
  };
  if (topology.kind == TopologyKind::kTree) {
    for (const TopologySwitch& s : topology.switches) {
      out << "SwitchName=" << s.name;
      if (!s.children.empty()) {
        std::vector<std::string> children;
        for (std::uint32_t c : s.children) children.push_back(topology.switches[c].name);
        out << " Switches=" << format_hostlist(children);
      } else {
        out << " Nodes=" << names_of(s.nodes);
      }
      if (!s.link_speed.empty()) out << " LinkSpeed=" << s.link_speed;
      out << "\n";
    }
  } else if (topology.kind == TopologyKind::kBlock) {
    for (const TopologyBlock& b : topology.blocks)
      out << "BlockName=" << b.name << " Nodes=" << names_of(b.nodes) << "\n";
    if (!topology.block_sizes.empty()) {
      out << "BlockSizes=";
      for (std::size_t i = 0; i < topology.block_sizes.size(); ++i) out << (i ? "," : "") << topology.block_sizes[i];
      out << "\n";
    }
  }
  return out.str();
}

TopologySpec fat_tree_spec(const std::vector<std::string>& node_names, std::uint32_t nodes_per_leaf,
                           std::uint32_t leaves_per_spine) {
  TopologySpec spec;
  const std::size_t n = node_names.size();
  const std::size_t leaves = (n + nodes_per_leaf - 1) / nodes_per_leaf;
  const std::size_t spines = (leaves + leaves_per_spine - 1) / leaves_per_spine;
  for (std::size_t l = 0; l < leaves; ++l) {
    SwitchSpec s;
    s.name = "leaf" + std::to_string(l);
    for (std::size_t i = l * nodes_per_leaf; i < std::min(n, (l + 1) * nodes_per_leaf); ++i)
      s.nodes.push_back(node_names[i]);
    spec.switches.push_back(std::move(s));
  }
  if (leaves <= 1) return spec;
  for (std::size_t p = 0; p < spines; ++p) {
    SwitchSpec s;
    s.name = "spine" + std::to_string(p);
    for (std::size_t l = p * leaves_per_spine; l < std::min(leaves, (p + 1) * leaves_per_spine); ++l)
      s.switches.push_back("leaf" + std::to_string(l));
    spec.switches.push_back(std::move(s));
  }
  if (spines > 1) {
    SwitchSpec core;
    core.name = "core";
    for (std::size_t p = 0; p < spines; ++p) core.switches.push_back("spine" + std::to_string(p));
    spec.switches.push_back(std::move(core));
  }
  return spec;
}

TopologySpec block_spec(const std::vector<std::string>& node_names, std::uint32_t nodes_per_block,
                        std::vector<std::uint32_t> block_sizes) {
  TopologySpec spec;
  const std::size_t n = node_names.size();
  for (std::size_t b = 0; b * nodes_per_block < n; ++b) {
    BlockSpec block;
    block.name = "block" + std::to_string(b);
    for (std::size_t i = b * nodes_per_block; i < std::min(n, (b + 1) * nodes_per_block); ++i)
      block.nodes.push_back(node_names[i]);
    spec.blocks.push_back(std::move(block));
  }
  spec.block_sizes = std::move(block_sizes);
  return spec;
}

}  // namespace gputwin
