// cons_tres-style node selection: consecutive runs, weights, best fit (eval_nodes.c:_eval_nodes_consec).
#include "scheduler/node_selection.hpp"

#include <gtest/gtest.h>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_scenario;

std::vector<NodeIndex> nodes_of(const std::vector<NodeAllocation>& a) {
  std::vector<NodeIndex> out;
  for (const auto& x : a) out.push_back(x.node);
  return out;
}

class NodeSelectionTest : public ::testing::Test {
 protected:
  NodeSelectionTest() : scenario_(make_scenario(6, 8, 4, SchedulerPolicy::kFcfs)) {}
  Scenario scenario_;
};

TEST_F(NodeSelectionTest, TakesLowestIndexNodesFromTheTightestSufficientRun) {
  ClusterState state(scenario_.cluster, {});
  // Occupy node 2 (index 2): usable runs are {0,1} and {3,4,5}.
  std::vector<NodeAllocation> busy{{2, 8, 4, 0}};
  std::vector<JobSpec> jobs{testing::make_job(1, 0, 1, 8, 4, 60, 60)};
  ClusterState s2(scenario_.cluster, jobs);
  s2.allocate(0, busy, 0);
  NodeSelector sel(scenario_.cluster);
  std::vector<NodeAllocation> out;
  // Two nodes: both runs suffice; the run with fewer CPUs ({0,1}: 16 CPUs) is the tighter fit.
  ASSERT_TRUE(sel.select(SelectRequest{2, 2, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s2), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{0, 1}));
  // Three nodes: only {3,4,5} suffices.
  ASSERT_TRUE(sel.select(SelectRequest{3, 3, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s2), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{3, 4, 5}));
  // Five nodes: no run suffices; take the largest run first ({3,4,5}), then {0,1}.
  ASSERT_TRUE(sel.select(SelectRequest{5, 5, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s2), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{0, 1, 3, 4, 5}));
  // Six nodes cannot fit.
  EXPECT_FALSE(sel.select(SelectRequest{6, 6, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                          live_resources(s2), out));
}

TEST_F(NodeSelectionTest, OneNodeJobsGoToTheNodeWithFewestFreeCpus) {
  std::vector<JobSpec> jobs{testing::make_job(1, 0, 1, 6, 1, 60, 60), testing::make_job(2, 0, 1, 2, 1, 60, 60)};
  ClusterState s(scenario_.cluster, jobs);
  s.allocate(0, std::vector<NodeAllocation>{{3, 6, 1, 0}}, 0);  // node 3: 2 CPUs left
  s.allocate(1, std::vector<NodeAllocation>{{4, 2, 1, 0}}, 0);  // node 4: 6 CPUs left
  NodeSelector sel(scenario_.cluster);
  std::vector<NodeAllocation> out;
  ASSERT_TRUE(sel.select(SelectRequest{1, 2, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{3}));  // best fit: the node with 2 free CPUs
  ASSERT_TRUE(sel.select(SelectRequest{1, 4, 1, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{4}));  // 6 free CPUs is the tightest that holds 4
}

TEST_F(NodeSelectionTest, LowerWeightNodesAreUsedFirst) {
  scenario_.cluster.nodes[0].weight = 10;
  scenario_.cluster.nodes[1].weight = 10;
  ClusterState s(scenario_.cluster, {});
  NodeSelector sel(scenario_.cluster);
  std::vector<NodeAllocation> out;
  ASSERT_TRUE(sel.select(SelectRequest{2, 2, 0, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{2, 3}));
}

TEST_F(NodeSelectionTest, GpusPerNodeFilterAndFloatingCpuPacking) {
  std::vector<JobSpec> jobs{testing::make_job(1, 0, 1, 1, 3, 60, 60)};
  ClusterState s(scenario_.cluster, jobs);
  s.allocate(0, std::vector<NodeAllocation>{{0, 1, 3, 0}}, 0);  // node 0: 1 GPU left
  NodeSelector sel(scenario_.cluster);
  std::vector<NodeAllocation> out;
  ASSERT_TRUE(sel.select(SelectRequest{1, 1, 2, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  EXPECT_EQ(nodes_of(out), (std::vector<NodeIndex>{1}));
  EXPECT_EQ(out[0].gpus, 2u);
  // Floating CPUs: 20 CPUs over 8-CPU nodes, packed onto whole nodes in index order: 7 (node 0) + 8 + 5.
  ASSERT_TRUE(sel.select(SelectRequest{0, 20, 0, 0, false}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].node, 0u);
  EXPECT_EQ(out[0].cpus, 7u);
  EXPECT_EQ(out[1].cpus, 8u);
  EXPECT_EQ(out[2].cpus, 5u);
}

TEST_F(NodeSelectionTest, ExclusiveNeedsIdleNodesAndTakesThemWhole) {
  std::vector<JobSpec> jobs{testing::make_job(1, 0, 1, 1, 0, 60, 60)};
  ClusterState s(scenario_.cluster, jobs);
  s.allocate(0, std::vector<NodeAllocation>{{0, 1, 0, 0}}, 0);
  NodeSelector sel(scenario_.cluster);
  std::vector<NodeAllocation> out;
  ASSERT_TRUE(sel.select(SelectRequest{1, 1, 0, 0, true}, scenario_.cluster.partitions[0].nodes, nullptr,
                         live_resources(s), out));
  EXPECT_EQ(out[0].node, 1u);
  EXPECT_EQ(out[0].cpus, 8u);
  EXPECT_EQ(out[0].gpus, 4u);
}

}  // namespace
}  // namespace gputwin
