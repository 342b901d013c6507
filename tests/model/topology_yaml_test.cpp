// topology.yaml (Slurm 25.05): the examples of topology.conf(5) written as topology.yaml give the same spec and the
// same resolved topology as the topology.conf text; choosing a topology; flat; round trip; errors name file:line.
#include "model/topology_yaml.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/errors.hpp"
#include "model/scenario.hpp"

namespace gputwin {
namespace {

using ::testing::StartsWith;

const std::string kData = std::string(GPUTWIN_SOURCE_DIR) + "/tests/model/data/topology";

std::vector<std::string> names(const std::string& prefix, int first, int last) {
  std::vector<std::string> out;
  for (int i = first; i <= last; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// The topology/tree EXAMPLE of topology.conf(5), and the same as topology.yaml.
constexpr const char* kTreeConf = R"(# topology/tree
SwitchName=s0 Nodes=dev[0-5]
SwitchName=s1 Nodes=dev[6-11]
SwitchName=s2 Nodes=dev[12-17]
SwitchName=s3 Switches=s[0-2]
)";
constexpr const char* kTreeYaml = R"(# topology/tree
- topology: tree
  cluster_default: true
  tree:
    switches:
      - switch: s0
        nodes: dev[0-5]
      - switch: s1
        nodes: dev[6-11]
      - switch: s2
        nodes: dev[12-17]
      - switch: s3
        children: s[0-2]
)";

// The topology/block EXAMPLE of topology.conf(5) (base blocks of 32 nodes, BlockSizes=30,120), and as topology.yaml.
constexpr const char* kBlockConf = R"(BlockName=block1 Nodes=node[1-32]
BlockName=block2 Nodes=node[33-64]
BlockName=block3 Nodes=node[65-96]
BlockName=block4 Nodes=node[97-128]
BlockSizes=30,120
)";
constexpr const char* kBlockYaml = R"(- topology: block
  cluster_default: true
  block:
    block_sizes: [30, 120]
    blocks:
      - block: block1
        nodes: node[1-32]
      - block: block2
        nodes: node[33-64]
      - block: block3
        nodes: node[65-96]
      - block: block4
        nodes: node[97-128]
)";

TEST(TopologyYaml, TreeExampleMatchesTopologyConf) {
  const TopologySpec conf = parse_topology_conf(kTreeConf, "topology.conf");
  const TopologySpec yaml = parse_topology_yaml(kTreeYaml, "topology.yaml");
  EXPECT_EQ(yaml, conf);
  const std::vector<std::string> nodes = names("dev", 0, 17);
  const SlurmTopology a = resolve_topology(conf, nodes, "topology.conf");
  const SlurmTopology b = resolve_topology(yaml, nodes, "topology.yaml");
  ASSERT_EQ(b.kind, TopologyKind::kTree);
  ASSERT_EQ(b.switches.size(), 4U);
  for (std::size_t i = 0; i < a.switches.size(); ++i) {
    EXPECT_EQ(b.switches[i].name, a.switches[i].name);
    EXPECT_EQ(b.switches[i].level, a.switches[i].level);
    EXPECT_EQ(b.switches[i].parent, a.switches[i].parent);
    EXPECT_EQ(b.switches[i].children, a.switches[i].children);
    EXPECT_EQ(b.switches[i].nodes, a.switches[i].nodes);
  }
  EXPECT_EQ(b.leaf_of_node, a.leaf_of_node);
  EXPECT_EQ(b.switch_distance, a.switch_distance);
  // s0-s2 are leaves (level 0) of 6 nodes each under s3 (level 1), which holds all 18.
  EXPECT_EQ(b.switches[3].level, 1U);
  EXPECT_EQ(b.switches[3].children, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(b.switches[1].nodes, (std::vector<NodeIndex>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(b.switches[3].nodes.size(), 18U);
  EXPECT_EQ(b.leaf_of_node[17], 2);
  EXPECT_EQ(b.switch_distance[0][2], 2U);  // s0 - s3 - s2
}

TEST(TopologyYaml, BlockExampleMatchesTopologyConf) {
  const TopologySpec conf = parse_topology_conf(kBlockConf, "topology.conf");
  const TopologySpec yaml = parse_topology_yaml(kBlockYaml, "topology.yaml");
  EXPECT_EQ(yaml, conf);
  const std::vector<std::string> nodes = names("node", 1, 128);
  const SlurmTopology a = resolve_topology(conf, nodes, "topology.conf");
  const SlurmTopology b = resolve_topology(yaml, nodes, "topology.yaml");
  ASSERT_EQ(b.kind, TopologyKind::kBlock);
  ASSERT_EQ(b.blocks.size(), 4U);
  for (std::size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(b.blocks[i].name, a.blocks[i].name);
    EXPECT_EQ(b.blocks[i].nodes, a.blocks[i].nodes);
  }
  EXPECT_EQ(b.block_of_node, a.block_of_node);
  EXPECT_EQ(b.block_sizes, (std::vector<std::uint32_t>{30, 120}));
  EXPECT_EQ(b.blocks[3].nodes.front(), 96U);  // node97
  EXPECT_EQ(b.block_of_node[127], 3);
}

TEST(TopologyYaml, ChoosesTheNamedThenTheClusterDefaultThenTheFirst) {
  // topology.yaml(5)'s EXAMPLE: topo1 (tree, cluster_default: True), topo2 (block), topo3 (flat).
  const std::string file = kData + "/slurm-example.yaml";
  TopologySpec spec = read_topology_yaml(file);
  ASSERT_EQ(spec.switches.size(), 1U);
  EXPECT_EQ(spec.switches[0].name, "sw_root");
  spec = read_topology_yaml(file, "topo2");
  ASSERT_EQ(spec.blocks.size(), 4U);
  EXPECT_EQ(spec.block_sizes, (std::vector<std::uint32_t>{4, 16}));
  EXPECT_EQ(spec.blocks[3].nodes, (std::vector<std::string>{"node13", "node14", "node15", "node16"}));
  EXPECT_EQ(read_topology_yaml(file, "topo3"), TopologySpec{});  // flat
  EXPECT_EQ(read_topology_file(file, "topo2"), read_topology_yaml(file, "topo2"));

  // Several cluster_default: the first of them; none: the first topology (Slurm's tctx[0]).
  const char* two_defaults = R"(
- {topology: a, block: {blocks: [{block: a, nodes: "n[1-2]"}]}}
- {topology: b, cluster_default: true, block: {blocks: [{block: b, nodes: "n[3-4]"}]}}
- {topology: c, cluster_default: yes, block: {blocks: [{block: c, nodes: "n[5-6]"}]}}
)";
  EXPECT_EQ(parse_topology_yaml(two_defaults, "t.yaml").blocks[0].name, "b");
  const char* no_default = "- {topology: x, flat: true}\n- {topology: y, tree: {switches: [{switch: s, nodes: n1}]}}\n";
  EXPECT_EQ(parse_topology_yaml(no_default, "t.yaml"), TopologySpec{});
  EXPECT_EQ(parse_topology_yaml(no_default, "t.yaml", "y").switches.size(), 1U);
  // One topology as a bare mapping, and one switch as a bare mapping: Slurm's data_parser takes both.
  const TopologySpec bare =
      parse_topology_yaml("topology: solo\ntree:\n  switches:\n    switch: s\n    nodes: n[1-4]\n", "t.yaml");
  ASSERT_EQ(bare.switches.size(), 1U);
  EXPECT_EQ(bare.switches[0].nodes.size(), 4U);
}

TEST(TopologyYaml, FlatIsAFlatTopology) {
  const TopologySpec spec = parse_topology_yaml("- topology: none\n  flat: true\n", "topology.yaml");
  EXPECT_EQ(spec, TopologySpec{});
  EXPECT_EQ(resolve_topology(spec, names("n", 1, 4), "topology.yaml").kind, TopologyKind::kFlat);
  EXPECT_EQ(write_topology_yaml(spec, "none"), "- topology: none\n  cluster_default: true\n  flat: true\n");
}

TEST(TopologyYaml, RoundTrip) {
  TopologySpec tree = parse_topology_conf(kTreeConf, "topology.conf");
  tree.switches[0].link_speed = "400";
  const std::string text = write_topology_yaml(tree, "fabric");
  EXPECT_EQ(text,
            "- topology: fabric\n"
            "  cluster_default: true\n"
            "  tree:\n"
            "    switches:\n"
            "      - switch: s0\n"
            "        nodes: dev[0-5]\n"
            "        link_speed: 400\n"
            "      - switch: s1\n"
            "        nodes: dev[6-11]\n"
            "      - switch: s2\n"
            "        nodes: dev[12-17]\n"
            "      - switch: s3\n"
            "        children: s[0-2]\n");
  EXPECT_EQ(parse_topology_yaml(text, "a.yaml"), tree);
  EXPECT_EQ(parse_topology_yaml(text, "a.yaml", "fabric"), tree);

  const TopologySpec blocks = parse_topology_conf(kBlockConf, "topology.conf");
  EXPECT_EQ(parse_topology_yaml(write_topology_yaml(blocks, "nvl"), "b.yaml"), blocks);
  TopologySpec no_sizes = blocks;
  no_sizes.block_sizes.clear();
  EXPECT_EQ(parse_topology_yaml(write_topology_yaml(no_sizes, "nvl"), "c.yaml"), no_sizes);
  // Names that need quoting in YAML survive.
  TopologySpec odd;
  odd.switches.push_back(SwitchSpec{"#1: top", {}, {"n1", "n2"}, "100 Gb/s"});
  EXPECT_EQ(parse_topology_yaml(write_topology_yaml(odd, "x"), "d.yaml"), odd);
}

TEST(TopologyYaml, ErrorsNameTheFileTheLineAndTheKey) {
  auto message = [](const std::string& text, const std::string& name = "") {
    try {
      parse_topology_yaml(text, "topology.yaml", name);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "- topology: t\n  tree:\n    switches:\n";
  EXPECT_EQ(message(head + "      - switch: s0\n        nodes: n[1-2]\n        colour: red\n"),
            "topology.yaml: line 6: unknown key 'colour' in a switch (expected switch, children, nodes or link_speed)");
  EXPECT_EQ(message("- topology: t\n  Tree: {}\n"),
            "topology.yaml: line 2: unknown key 'Tree' in a topology (expected topology, cluster_default, tree, block "
            "or flat)");
  EXPECT_EQ(message(head + "      - switch: s0\n        nodes: n1\n      - switch: s1\n        link_speed: 10\n"),
            "topology.yaml: line 6: switch s1 has neither children nor nodes");
  EXPECT_EQ(message("- topology: t\n  block:\n    blocks:\n      - block: b1\n"),
            "topology.yaml: line 4: block b1 has no nodes");
  EXPECT_EQ(message(head + "      - switch: s0\n        nodes: [n1, n2]\n"),
            "topology.yaml: line 5: nodes: expected a hostlist expression such as node[01-04] (a string, not a list)");
  EXPECT_THAT(message(head + "      - switch: s0\n        nodes: n[1-2\n"),
              StartsWith("topology.yaml: line 5: nodes: bad hostlist 'n[1-2': "));
  const std::string blocks = "    blocks:\n      - block: b1\n        nodes: n[1-4]\n";
  EXPECT_EQ(message("- topology: t\n  block:\n    block_sizes: [4, twelve]\n" + blocks),
            "topology.yaml: line 3: block_sizes: bad number 'twelve'");
  EXPECT_EQ(message("- topology: t\n  block:\n    block_sizes:\n      - 4\n      - 12\n" + blocks),
            "topology.yaml: line 3: block_sizes: 12 is not the base block size (4) times a power of two");
  EXPECT_EQ(message("- topology: t\n  block:\n    block_sizes: [0]\n" + blocks),
            "topology.yaml: line 3: block_sizes: a block size is at least 1 node");
  EXPECT_EQ(message("- topology: a\n  flat: true\n- topology: b\n  flat: true\n", "c"),
            "topology.yaml: line 1: no topology named 'c' (the file has a, b)");
  EXPECT_EQ(message("- topology: a\n  flat: true\n- topology: a\n  flat: true\n"),
            "topology.yaml: line 3: topology a is defined twice");
  EXPECT_EQ(message("- topology: a\n  flat: true\n  block: {blocks: [{block: b, nodes: n1}]}\n"),
            "topology.yaml: line 3: topology a: flat and block are mutually exclusive (one of tree, block, flat)");
  EXPECT_EQ(message("- topology: a\n  flat: false\n"),
            "topology.yaml: line 1: topology a defines none of tree, block or flat: true");
  EXPECT_EQ(message("- topology: a\n  cluster_default: maybe\n  flat: true\n"),
            "topology.yaml: line 2: cluster_default: expected true or false");
  EXPECT_EQ(message("- cluster_default: true\n  flat: true\n"),
            "topology.yaml: line 1: a topology without a 'topology:' name");
  EXPECT_EQ(message("- topology: a\n  flat: true\n  flat: true\n"),
            "topology.yaml: line 3: key 'flat' given twice in a topology");
  EXPECT_EQ(message(""), "topology.yaml: expected a list of topologies (- topology: NAME ...)");
  EXPECT_EQ(message(head + "      - switch: s0\n        nodes: [n1\n"),
            "topology.yaml: line 6: malformed YAML at column 1: end of sequence flow not found");
  EXPECT_THAT(message("- topology: a\n\tflat: true\n"), StartsWith("topology.yaml: line 2: malformed YAML at column"));
  try {
    read_topology_yaml(kData + "/no-such-file.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problem(), "cannot open: No such file or directory");
  }
  try {
    read_topology_file("topology.conf", "fabric");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problem(), "topology name 'fabric' given, but only a topology.yaml (.yaml/.yml) has names");
  }
  EXPECT_TRUE(is_topology_yaml_path("/etc/slurm/topology.YML"));
  EXPECT_FALSE(is_topology_yaml_path("/etc/slurm/topology.conf"));
}

TEST(TopologyYaml, ScenarioConfKeyTakesTopologyYaml) {
  const std::string base = R"({"name": "t", "cluster": {"nodes": [{"prefix": "node", "count": 16, "cpus": 4,
    "digits": 2}], "partitions": [{"name": "p", "nodes": "ALL", "default": true}], "topology": )";
  const std::string tail = R"(}, "workload": {"jobs": [{"id": 1, "run_time": 10}]}, "scheduler": {"policy": "slurm"}})";
  Scenario s = parse_scenario(base + R"({"conf": "slurm-example.yaml"})" + tail, "s.json", kData);
  EXPECT_EQ(s.cluster.topology.slurm.kind, TopologyKind::kTree);
  EXPECT_EQ(s.cluster.topology.slurm.switches.size(), 1U);
  s = parse_scenario(base + R"({"conf": "slurm-example.yaml", "topology_name": "topo2"})" + tail, "s.json", kData);
  EXPECT_EQ(s.cluster.topology.slurm.kind, TopologyKind::kBlock);
  EXPECT_EQ(s.cluster.topology.slurm.block_of_node[15], 3);
  s = parse_scenario(base + R"({"conf": "slurm-example.yaml", "topology_name": "topo3"})" + tail, "s.json", kData);
  EXPECT_EQ(s.cluster.topology.slurm.kind, TopologyKind::kFlat);
  try {
    parse_scenario(base + R"({"conf": "slurm-example.yaml", "topology_name": "gpu"})" + tail, "s.json", kData);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problem(), "no topology named 'gpu' (the file has topo1, topo2, topo3)");
    EXPECT_EQ(e.line(), 2U);
  }
  try {
    parse_scenario(base + R"({"nvl72": {}, "topology_name": "topo2"})" + tail, "s.json", kData);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: /cluster/topology/topology_name: only with a topology.yaml (.yaml or .yml) \"conf\"");
  }
}

}  // namespace
}  // namespace gputwin
