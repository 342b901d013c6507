// topology.yaml reader and writer. What Slurm 25.05's code accepts (src/interfaces/topology.c:_parse_yaml, the
// TOPOLOGY_* and SWITCH_CONFIG/BLOCK_CONFIG parsers of src/plugins/data_parser/v0.0.43/parsers.c) and where it
// differs from topology.yaml(5):
// - The top level is a list of topologies; the code also takes one topology written as a bare mapping, and so do we.
// - tree/switches and block/blocks may likewise be one mapping instead of a list; block_sizes a single number.
// - nodes and children are hostlist strings (data_parser STRING), never YAML lists.
// - Keys are matched exactly. The man page says `topology` "must be the first attribute"; the code reads a
//   mapping, so order does not matter (nor here).
// - The man page says names are unique and required; the code checks neither (it takes the first match). We
//   require `topology`, `switch` and `block` names and reject a repeated topology name.
// - The code only warns about unknown keys ("Ignoring unknown field") and goes on; we reject them, with their line.
// - `link_speed` is not in the man page and the code skips it (add_skip(link_speed)), so Slurm ignores it with
//   that warning. We keep it as SwitchSpec::link_speed, like topology.conf's LinkSpeed= (informational in Slurm).
// - Which topology is the cluster's: the code sorts cluster_default ones first (qsort) and uses the first entry;
//   with none marked, that is the first in the file. The man page only speaks of "the first ... cluster_default".
// - A topology with none of tree, block or `flat: true` gets no plugin and slurmctld fails to start; an error here.
#include "model/topology_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <vector>

#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/input_file.hpp"
#include "model/text.hpp"

namespace gputwin {
namespace {

/// 1-based line of `node`, 0 when yaml-cpp has none (an empty document).
std::uint64_t line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : static_cast<std::uint64_t>(mark.line) + 1;
}

/// One `key: value` of a mapping, with the key's node for its line.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// One topology of the file, parsed.
struct NamedTopology {
  std::string name;
  bool cluster_default = false;
  TopologySpec spec;
};

/// Reads the YAML tree of one file; every error names the file and the line.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  /// Throws ConfigError at `at`'s line.
  [[noreturn]] void fail(const YAML::Node& at, const std::string& problem) const {
    throw ConfigError(file_, line_of(at), problem);
  }

  /// The entries of mapping `node` (`what` in messages), each key once and among `known`.
  std::vector<Entry> mapping(const YAML::Node& node, const std::string& what,
                             std::initializer_list<std::string_view> known) const {
    if (!node.IsMap()) fail(node, what + ": expected a mapping of key: value");
    std::vector<Entry> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) fail(key, what + ": expected a plain key");
      const std::string& k = key.Scalar();
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        std::string expected;
        std::size_t i = 0;
        for (std::string_view name : known)
          expected += (i++ == 0 ? "" : i == known.size() ? " or " : ", ") + std::string(name);
        fail(key, "unknown key '" + k + "' in " + what + " (expected " + expected + ")");
      }
      for (const Entry& e : out) {
        if (e.key == k) fail(key, "key '" + k + "' given twice in " + what);
      }
      out.push_back(Entry{k, key, it->second});
    }
    return out;
  }

  /// A non-empty scalar, e.g. a name.
  std::string name(const Entry& e) const {
    if (!e.value.IsScalar() || e.value.Scalar().empty()) fail(e.key_node, e.key + ": expected a name");
    return e.value.Scalar();
  }

  /// A hostlist expression string, expanded ("node[01-04]"); a YAML list is refused, as Slurm's STRING parser does.
  std::vector<std::string> hostlist(const Entry& e) const {
    if (!e.value.IsScalar())
      fail(e.key_node, e.key + ": expected a hostlist expression such as node[01-04] (a string, not a list)");
    try {
      return detail::expand_topology_hostlist(e.value.Scalar(), file_, line_of(e.key_node));
    } catch (const ConfigError& error) {
      throw ConfigError(file_, error.line(), e.key + ": " + error.problem());
    }
  }

  /// true/false (yaml-cpp also takes yes/no, on/off).
  bool boolean(const Entry& e) const {
    bool value = false;
    if (!e.value.IsScalar() || !YAML::convert<bool>::decode(e.value, value))
      fail(e.key_node, e.key + ": expected true or false");
    return value;
  }

  /// block_sizes: a list of counts or a single count, each the base block size times a power of two.
  std::vector<std::uint32_t> block_sizes(const Entry& e) const {
    std::vector<YAML::Node> items;
    if (e.value.IsSequence()) {
      for (const YAML::Node& item : e.value) items.push_back(item);
    } else if (e.value.IsScalar()) {
      items.push_back(e.value);
    } else {
      fail(e.key_node, e.key + ": expected a list of node counts, e.g. [18, 72]");
    }
    std::vector<std::uint32_t> sizes;
    for (const YAML::Node& item : items) {
      if (!item.IsScalar()) fail(item, e.key + ": expected a node count");
      std::uint32_t size = 0;
      try {
        size = detail::parse_topology_count(item.Scalar(), file_, line_of(item));
      } catch (const ConfigError& error) {
        throw ConfigError(file_, error.line(), e.key + ": " + error.problem());
      }
      if (size == 0) fail(item, e.key + ": a block size is at least 1 node");
      sizes.push_back(size);
    }
    detail::check_block_sizes(sizes, e.key + ": ", file_, line_of(e.key_node));
    return sizes;
  }

  /// A list of mappings, or a single mapping (data_parser accepts both for switches, blocks and topologies).
  std::vector<YAML::Node> items(const Entry& e, const std::string& item_what) const {
    std::vector<YAML::Node> out;
    if (e.value.IsMap()) {
      out.push_back(e.value);
    } else if (e.value.IsSequence()) {
      for (const YAML::Node& item : e.value) out.push_back(item);
    } else {
      fail(e.key_node, e.key + ": expected a list of " + item_what);
    }
    if (out.empty()) fail(e.key_node, e.key + ": expected at least one " + item_what);
    return out;
  }

  /// One entry of tree/switches.
  SwitchSpec switch_spec(const YAML::Node& node) const {
    SwitchSpec s;
    const std::vector<Entry> entries = mapping(node, "a switch", {"switch", "children", "nodes", "link_speed"});
    for (const Entry& e : entries) {
      if (e.key == "switch") s.name = name(e);
    }
    if (s.name.empty()) fail(node, "a switch without a 'switch:' name");
    for (const Entry& e : entries) {
      if (e.key == "children" && !e.value.IsNull()) {
        s.switches = hostlist(e);
      } else if (e.key == "nodes" && !e.value.IsNull()) {
        s.nodes = hostlist(e);
      } else if (e.key == "link_speed") {
        if (!e.value.IsScalar()) fail(e.key_node, "link_speed: expected a value");
        s.link_speed = e.value.Scalar();
      }
    }
    if (s.switches.empty() && s.nodes.empty()) fail(node, "switch " + s.name + " has neither children nor nodes");
    return s;
  }

  /// One entry of block/blocks.
  BlockSpec block_spec(const YAML::Node& node) const {
    BlockSpec b;
    const std::vector<Entry> entries = mapping(node, "a block", {"block", "nodes"});
    for (const Entry& e : entries) {
      if (e.key == "block") b.name = name(e);
    }
    if (b.name.empty()) fail(node, "a block without a 'block:' name");
    for (const Entry& e : entries) {
      if (e.key == "nodes" && !e.value.IsNull()) b.nodes = hostlist(e);
    }
    if (b.nodes.empty()) fail(node, "block " + b.name + " has no nodes");
    return b;
  }

  /// One topology: its name, cluster_default and exactly one of tree, block, flat: true.
  NamedTopology topology(const YAML::Node& node) const {
    NamedTopology t;
    const std::vector<Entry> entries =
        mapping(node, "a topology", {"topology", "cluster_default", "tree", "block", "flat"});
    for (const Entry& e : entries) {
      if (e.key == "topology") t.name = name(e);
    }
    if (t.name.empty()) fail(node, "a topology without a 'topology:' name");
    const std::string what = "topology " + t.name;
    std::string type;  // the one of tree, block, flat: true seen so far
    auto set_type = [&](const Entry& e) {
      if (!type.empty())
        fail(e.key_node, what + ": " + type + " and " + e.key + " are mutually exclusive (one of tree, block, flat)");
      type = e.key;
    };
    for (const Entry& e : entries) {
      if (e.key == "cluster_default") {
        t.cluster_default = boolean(e);
      } else if (e.key == "flat") {
        if (boolean(e)) set_type(e);
      } else if (e.key == "tree") {
        set_type(e);
        for (const Entry& f : mapping(e.value, what + ": tree", {"switches"})) {
          for (const YAML::Node& item : items(f, "switches")) t.spec.switches.push_back(switch_spec(item));
        }
        if (t.spec.switches.empty()) fail(e.key_node, what + ": tree has no switches");
      } else if (e.key == "block") {
        set_type(e);
        for (const Entry& f : mapping(e.value, what + ": block", {"block_sizes", "blocks"})) {
          if (f.key == "block_sizes") {
            t.spec.block_sizes = block_sizes(f);
          } else {
            for (const YAML::Node& item : items(f, "blocks")) t.spec.blocks.push_back(block_spec(item));
          }
        }
        if (t.spec.blocks.empty()) fail(e.key_node, what + ": block has no blocks");
      }
    }
    if (type.empty()) fail(node, what + " defines none of tree, block or flat: true");
    return t;
  }

  /// Every topology of the file (a list, or one bare mapping), names unique.
  std::vector<NamedTopology> topologies(const YAML::Node& root) const {
    std::vector<YAML::Node> nodes;
    if (root.IsMap()) {
      nodes.push_back(root);
    } else if (root.IsSequence()) {
      for (const YAML::Node& item : root) nodes.push_back(item);
    }
    if (nodes.empty()) fail(root, "expected a list of topologies (- topology: NAME ...)");
    std::vector<NamedTopology> out;
    for (const YAML::Node& node : nodes) {
      NamedTopology t = topology(node);
      for (const NamedTopology& other : out) {
        if (other.name == t.name) fail(node, "topology " + t.name + " is defined twice");
      }
      out.push_back(std::move(t));
    }
    return out;
  }

 private:
  const std::string& file_;
};

void emit_hostlist(YAML::Emitter& out, const char* key, const std::vector<std::string>& names) {
  if (!names.empty()) out << YAML::Key << key << YAML::Value << format_hostlist(names);
}

}  // namespace

TopologySpec parse_topology_yaml(std::string_view text, const std::string& file, const std::string& name) {
  const Reader reader(file);
  YAML::Node root;
  std::vector<NamedTopology> topologies;
  try {
    root = YAML::Load(std::string(text));
    topologies = reader.topologies(root);
  } catch (const YAML::Exception& e) {
    const std::uint64_t line = e.mark.is_null() || e.mark.line < 0 ? 0 : static_cast<std::uint64_t>(e.mark.line) + 1;
    throw ConfigError(
        file, line,
        "malformed YAML" + (e.mark.is_null() ? "" : " at column " + std::to_string(e.mark.column + 1)) + ": " + e.msg);
  }
  if (!name.empty()) {
    for (NamedTopology& t : topologies) {
      if (t.name == name) return std::move(t.spec);
    }
    std::string known;
    for (const NamedTopology& t : topologies) known += (known.empty() ? "" : ", ") + t.name;
    reader.fail(root, "no topology named '" + name + "' (the file has " + known + ")");
  }
  for (NamedTopology& t : topologies) {
    if (t.cluster_default) return std::move(t.spec);
  }
  return std::move(topologies.front().spec);
}

TopologySpec read_topology_yaml(const std::string& path, const std::string& name) {
  if (const auto problem = input_file_problem(path, "configuration", kMaxConfigBytes)) {
    throw ConfigError(path, 0, *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_topology_yaml(buffer.str(), path, name);
}

std::string write_topology_yaml(const TopologySpec& spec, const std::string& name) {
  YAML::Emitter out;
  out << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "topology" << YAML::Value << (name.empty() ? std::string("default") : name);
  out << YAML::Key << "cluster_default" << YAML::Value << true;
  if (!spec.switches.empty()) {
    out << YAML::Key << "tree" << YAML::Value << YAML::BeginMap << YAML::Key << "switches" << YAML::Value
        << YAML::BeginSeq;
    for (const SwitchSpec& s : spec.switches) {
      out << YAML::BeginMap << YAML::Key << "switch" << YAML::Value << s.name;
      emit_hostlist(out, "children", s.switches);
      emit_hostlist(out, "nodes", s.nodes);
      if (!s.link_speed.empty()) out << YAML::Key << "link_speed" << YAML::Value << s.link_speed;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  } else if (!spec.blocks.empty()) {
    out << YAML::Key << "block" << YAML::Value << YAML::BeginMap;
    if (!spec.block_sizes.empty()) {
      out << YAML::Key << "block_sizes" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (std::uint32_t size : spec.block_sizes) out << size;
      out << YAML::EndSeq;
    }
    out << YAML::Key << "blocks" << YAML::Value << YAML::BeginSeq;
    for (const BlockSpec& b : spec.blocks) {
      out << YAML::BeginMap << YAML::Key << "block" << YAML::Value << b.name;
      emit_hostlist(out, "nodes", b.nodes);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  } else {
    out << YAML::Key << "flat" << YAML::Value << true;
  }
  out << YAML::EndMap << YAML::EndSeq;
  return std::string(out.c_str()) + "\n";
}

bool is_topology_yaml_path(std::string_view path) {
  const std::string p = lower(path);
  auto ends_with = [&](std::string_view suffix) {
    return p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

TopologySpec read_topology_file(const std::string& path, const std::string& name) {
  if (is_topology_yaml_path(path)) return read_topology_yaml(path, name);
  if (!name.empty())
    throw ConfigError(path, 0, "topology name '" + name + "' given, but only a topology.yaml (.yaml/.yml) has names");
  return read_topology_conf(path);
}

}  // namespace gputwin
