// topology.conf: tree and block forms read, resolved against a node table, written back; errors name file:line.
#include "model/topology_conf.hpp"

#include <gtest/gtest.h>

#include "model/errors.hpp"
#include "model/scenario.hpp"

namespace gputwin {
namespace {

std::vector<std::string> tux(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back("tux" + std::to_string(i));
  return names;
}

// Three levels, in the manner of the topology guide: four leaves of 4 nodes, two spines of two leaves, a core.
constexpr const char* kTree = R"(# topology/tree
SwitchName=s0 Nodes=tux[0-3] LinkSpeed=400
SwitchName=s1 Nodes=tux[4-7]
SwitchName=s2 Nodes=tux[8-11]
SwitchName=s3 Nodes=tux[12-15]
SwitchName=s4 Switches=s[0-1]
SwitchName=s5 Switches=s[2-3]
SwitchName=s6 Switches=s[4-5]   # core
)";

TEST(TopologyConf, TreeLevelsNodeSetsAndDistances) {
  const SlurmTopology t = resolve_topology(parse_topology_conf(kTree, "topology.conf"), tux(16), "topology.conf");
  ASSERT_EQ(t.kind, TopologyKind::kTree);
  ASSERT_EQ(t.switches.size(), 7U);
  EXPECT_EQ(t.switches[0].level, 0U);
  EXPECT_EQ(t.switches[4].level, 1U);
  EXPECT_EQ(t.switches[6].level, 2U);
  EXPECT_EQ(t.switches[0].parent, 4);
  EXPECT_EQ(t.switches[6].parent, -1);
  EXPECT_EQ(t.switches[5].nodes, (std::vector<NodeIndex>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(t.switches[6].nodes.size(), 16U);
  EXPECT_EQ(t.leaf_of_node[5], 1);
  EXPECT_EQ(t.switches[0].link_speed, "400");
  // Hops on the switch graph: s0-s1 via s4 = 2; s0-s2 via s4, s6, s5 = 4; s0-s6 = 2; self 0.
  EXPECT_EQ(t.switch_distance[0][1], 2U);
  EXPECT_EQ(t.switch_distance[0][2], 4U);
  EXPECT_EQ(t.switch_distance[0][6], 2U);
  EXPECT_EQ(t.switch_distance[3][3], 0U);
}

TEST(TopologyConf, TreeRoundTrip) {
  const SlurmTopology t = resolve_topology(parse_topology_conf(kTree, "a"), tux(16), "a");
  const std::string text = to_topology_conf(t, tux(16));
  EXPECT_EQ(text,
            "SwitchName=s0 Nodes=tux[0-3] LinkSpeed=400\nSwitchName=s1 Nodes=tux[4-7]\nSwitchName=s2 Nodes=tux[8-11]\n"
            "SwitchName=s3 Nodes=tux[12-15]\nSwitchName=s4 Switches=s[0-1]\nSwitchName=s5 Switches=s[2-3]\n"
            "SwitchName=s6 Switches=s[4-5]\n");
  const SlurmTopology again = resolve_topology(parse_topology_conf(text, "b"), tux(16), "b");
  EXPECT_EQ(again.switch_distance, t.switch_distance);
  EXPECT_EQ(again.leaf_of_node, t.leaf_of_node);
}

TEST(TopologyConf, BlocksAndSizes) {
  const char* text = "BlockName=b1 Nodes=tux[0-3]\nBlockName=b2 Nodes=tux[4-7]\nBlockSizes=4,8\n";
  const SlurmTopology t = resolve_topology(parse_topology_conf(text, "t"), tux(8), "t");
  ASSERT_EQ(t.kind, TopologyKind::kBlock);
  EXPECT_EQ(t.blocks.size(), 2U);
  EXPECT_EQ(t.block_of_node[6], 1);
  EXPECT_EQ(t.block_sizes, (std::vector<std::uint32_t>{4, 8}));
  EXPECT_EQ(to_topology_conf(t, tux(8)), text);
}

TEST(TopologyConf, ErrorsNameTheFileAndLineOrTheCulprit) {
  auto message = [](const std::string& text, int nodes) {
    try {
      resolve_topology(parse_topology_conf(text, "topology.conf"), tux(nodes), "topology.conf");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("SwitchName=s0 Nodes=tux[0-1]\nSwitchName=s1 Colour=red\n", 2),
            "topology.conf: line 2: unknown key 'colour' on a SwitchName line");
  EXPECT_EQ(message("SwitchName=s0 Nodes=tux[0-1\n", 2).rfind("topology.conf: line 1: bad hostlist", 0), 0U);
  EXPECT_EQ(message("SwitchName=s0 Nodes=tux[0-2]\n", 2), "topology.conf: switch s0: no node named 'tux2'");
  EXPECT_EQ(message("SwitchName=s0 Nodes=tux0\nSwitchName=s1 Nodes=tux0\n", 1),
            "topology.conf: node tux0 is under leaf switches s0 and s1");
  EXPECT_EQ(message("SwitchName=s0 Nodes=tux0\nSwitchName=a Switches=s0\nSwitchName=b Switches=s0\n", 1),
            "topology.conf: switch s0 has two parents: a and b");
  EXPECT_EQ(message("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", 1),
            "topology.conf: switch a is part of a cycle");
  // A node twice in one block: named, where it read past the blocks resolved so far (found by fuzz_topology_yaml).
  EXPECT_EQ(message("BlockName=b1 Nodes=tux[0-1]\nBlockName=b2 Nodes=tux[2-3],tux2\n", 4),
            "topology.conf: block b2 lists node tux2 twice");
  EXPECT_EQ(message("BlockName=b Nodes=tux[0-3]\nBlockSizes=4,12\n", 4),
            "topology.conf: BlockSizes=12 is not the base block size (4) times a power of two");
  EXPECT_EQ(message("Frobnicate=1\n", 1).rfind("topology.conf: line 1: unknown line", 0), 0U);
}

TEST(TopologyConf, FatTreeBuilderMatchesItsShape) {
  // 4,096 nodes, 32 per leaf, 8 leaves per spine: 128 leaves, 16 spines, one core; 3 levels.
  std::vector<std::string> names;
  for (int i = 0; i < 4096; ++i) names.push_back("gpu" + std::to_string(i));
  const SlurmTopology t = resolve_topology(fat_tree_spec(names, 32, 8), names, "fat_tree");
  EXPECT_EQ(t.switches.size(), 128U + 16U + 1U);
  EXPECT_EQ(t.switches.back().name, "core");
  EXPECT_EQ(t.switches.back().level, 2U);
  EXPECT_EQ(t.leaf_of_node[4095], 127);
  EXPECT_EQ(t.switch_distance[0][127], 4U);  // leaf, spine, core, spine, leaf
}

TEST(TopologyConf, ScenarioKeys) {
  const std::string base = R"({"name": "t", "cluster": {"nodes": [{"prefix": "n", "count": 8, "cpus": 4}],
    "partitions": [{"name": "p", "nodes": "ALL", "default": true}], "topology": )";
  const std::string tail = R"(}, "workload": {"jobs": [{"id": 1, "run_time": 10}]}, "scheduler": {"policy": "slurm"}})";
  Scenario s =
      parse_scenario(base + R"({"fat_tree": {"nodes_per_leaf": 4}, "max_switch_wait": 600})" + tail, "s.json", ".");
  EXPECT_EQ(s.cluster.topology.slurm.kind, TopologyKind::kTree);
  EXPECT_EQ(s.cluster.topology.slurm.switches.size(), 3U);  // two leaves and one spine
  EXPECT_EQ(s.cluster.topology.slurm.max_switch_wait_s, 600);
  s = parse_scenario(
      base + R"({"switches": [{"name": "a", "nodes": "n[001-008]"}], "TopologyParam": "TopoOptional"})" + tail,
      "s.json", ".");
  EXPECT_TRUE(s.cluster.topology.slurm.topo_optional);
  s = parse_scenario(base + R"({"nvl72": {"nodes_per_block": 4, "block_sizes": [4, 8]}})" + tail, "s.json", ".");
  EXPECT_EQ(s.cluster.topology.slurm.blocks.size(), 2U);
  try {
    parse_scenario(base + R"({"switches": [{"name": "a", "nodes": "n[001-009]"}]})" + tail, "s.json", ".");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(), "s.json: /cluster/topology: switch a: no node named 'n009'");
  }
}

}  // namespace
}  // namespace gputwin
