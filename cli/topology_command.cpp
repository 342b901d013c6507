#include "cli/topology_command.hpp"

#include "model/hostlist.hpp"
#include "model/topology_conf.hpp"

namespace gputwin {

int print_topology(const Scenario& scenario, const std::string& format, std::ostream& out, std::ostream& err) {
  const SlurmTopology& t = scenario.cluster.topology.slurm;
  std::vector<std::string> names;
  for (const NodeConfig& n : scenario.cluster.nodes) names.push_back(n.name);
  if (format == "conf") {
    if (t.kind == TopologyKind::kFlat) out << "# " << scenario.name << ": no topology (topology/flat)\n";
    out << to_topology_conf(t, names);
    return 0;
  }
  if (format != "dot") {
    err << "gputwin topology: --format: expected conf or dot, got '" << format << "'\n";
    return 2;
  }
  // Switches (and blocks) as boxes, each leaf's nodes as one hostlist vertex.
  out << "graph \"" << scenario.name << "\" {\n  node [shape=box];\n";
  auto nodes_label = [&](const std::vector<NodeIndex>& nodes) {
    std::vector<std::string> list;
    for (NodeIndex n : nodes) list.push_back(names[n]);
    return format_hostlist(list);
  };
  if (t.kind == TopologyKind::kTree) {
    for (std::size_t i = 0; i < t.switches.size(); ++i) {
      const TopologySwitch& s = t.switches[i];
      out << "  s" << i << " [label=\"" << s.name << "\"];\n";
      if (s.parent >= 0) out << "  s" << s.parent << " -- s" << i << ";\n";
      if (s.children.empty()) {
        out << "  n" << i << " [shape=ellipse, label=\"" << nodes_label(s.nodes) << "\"];\n";
        out << "  s" << i << " -- n" << i << ";\n";
      }
    }
  } else if (t.kind == TopologyKind::kBlock) {
    for (std::size_t i = 0; i < t.blocks.size(); ++i) {
      out << "  b" << i << " [label=\"" << t.blocks[i].name << "\\n" << nodes_label(t.blocks[i].nodes) << "\"];\n";
    }
  }
  out << "}\n";
  return 0;
}

}  // namespace gputwin
