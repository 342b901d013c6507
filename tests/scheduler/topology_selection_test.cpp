// Hand-worked node choices of topology/tree (eval_nodes_tree.c:_eval_nodes_topo) and topology/block
// (eval_nodes_block.c), on small topologies written out by hand.
#include "scheduler/topology_selection.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "model/topology_conf.hpp"

namespace gputwin {
namespace {

// Tree: leaves s0 = n[0-3], s1 = n[4-7], s2 = n[8-11]; s3 = {s0, s1} (level 1); s4 = {s3, s2} (level 2, root).
// Hops: s0-s1 2 (via s3), s0-s2 and s1-s2 3 (via s3 and s4).
SlurmTopology three_leaf_tree() {
  SlurmTopology t;
  t.kind = TopologyKind::kTree;
  auto range = [](NodeIndex a, NodeIndex b) {
    std::vector<NodeIndex> v(b - a + 1);
    std::iota(v.begin(), v.end(), a);
    return v;
  };
  t.switches = {{"s0", 0, 3, {}, range(0, 3), ""},
                {"s1", 0, 3, {}, range(4, 7), ""},
                {"s2", 0, 4, {}, range(8, 11), ""},
                {"s3", 1, 4, {0, 1}, range(0, 7), ""},
                {"s4", 2, -1, {3, 2}, range(0, 11), ""}};
  t.switch_distance = {{0, 2, 3, 1, 2}, {2, 0, 3, 1, 2}, {3, 3, 0, 2, 1}, {1, 1, 2, 0, 1}, {2, 2, 1, 1, 0}};
  t.leaf_of_node = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  return t;
}

std::vector<UsableNode> free_nodes(std::initializer_list<NodeIndex> nodes, std::uint32_t weight = 1) {
  std::vector<UsableNode> out;
  for (NodeIndex n : nodes) out.push_back({n, 8, weight});
  return out;
}

TopologyNeed nodes(std::uint32_t n) {
  return TopologyNeed{n, n * 8ULL, true, 8};
}

TEST(TreeSelection, AllFreeTakesTheFirstLeafInIndexOrder) {
  // Top switch s4 (highest level with enough nodes). No leaf is required; distances are all 0; s0 is the first
  // leaf with nodes and s1, s2 tie with it (equal counts and levels), so s0 stays: n0, n1.
  const SlurmTopology t = three_leaf_tree();
  TopologySelector sel(t);
  std::vector<NodeIndex> out;
  std::uint32_t leaves = 0;
  ASSERT_TRUE(sel.choose(free_nodes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), nodes(2), out, leaves));
  EXPECT_EQ(out, (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(leaves, 1U);
}

TEST(TreeSelection, TightestFittingLeafWins) {
  // Free: s0 {3} (1 node), s1 {4-7} (4), s2 {10, 11} (2). Job of 2: s0 does not fit; s1 fits and replaces it;
  // s2 fits with fewer nodes (2 < 4), so _topo_compare_switches prefers it: n10, n11.
  const SlurmTopology t = three_leaf_tree();
  TopologySelector sel(t);
  std::vector<NodeIndex> out;
  std::uint32_t leaves = 0;
  ASSERT_TRUE(sel.choose(free_nodes({3, 4, 5, 6, 7, 10, 11}), nodes(2), out, leaves));
  EXPECT_EQ(out, (std::vector<NodeIndex>{10, 11}));
  EXPECT_EQ(leaves, 1U);
}

TEST(TreeSelection, ParentFitDecidesBetweenLeavesThatDoNotFit) {
  // Same free nodes, job of 6. No leaf fits. s1 (4) beats s0 (1): neither fits, their parents are both s3, so
  // the larger count wins. s2 (2) against s1: neither fits, parents s4 (7 nodes, fits 6) and s3 (5, does not),
  // so s2 wins on its parent's fit: take n10, n11 (4 to go). Distances become s0 3, s1 3; s1 fits 4 and beats
  // s0: n4-n7. Two leaves.
  const SlurmTopology t = three_leaf_tree();
  TopologySelector sel(t);
  std::vector<NodeIndex> out;
  std::uint32_t leaves = 0;
  ASSERT_TRUE(sel.choose(free_nodes({3, 4, 5, 6, 7, 10, 11}), nodes(6), out, leaves));
  EXPECT_EQ(out, (std::vector<NodeIndex>{10, 11, 4, 5, 6, 7}));
  EXPECT_EQ(leaves, 2U);
}

TEST(TreeSelection, LowerWeightGroupsComeFirstAndAreRequired) {
  // n[0-3] weight 10, the rest weight 1. Job of 2: the weight-1 group (8 nodes) covers it, so s0's nodes are not
  // among the best; s1 is the first leaf with best nodes: n4, n5.
  const SlurmTopology t = three_leaf_tree();
  TopologySelector sel(t);
  auto usable = free_nodes({0, 1, 2, 3}, 10);
  for (const UsableNode& u : free_nodes({4, 5, 6, 7, 8, 9, 10, 11}, 1)) usable.push_back(u);
  std::sort(usable.begin(), usable.end(), [](const UsableNode& a, const UsableNode& b) { return a.node < b.node; });
  std::vector<NodeIndex> out;
  std::uint32_t leaves = 0;
  ASSERT_TRUE(sel.choose(usable, nodes(2), out, leaves));
  EXPECT_EQ(out, (std::vector<NodeIndex>{4, 5}));
  // Job of 10: weight 1 gives 8 (not enough), so all 8 become required and 2 weight-10 nodes are added. The
  // required nodes are taken first (n4-n11); s0 is then the only leaf with best nodes left: n0, n1.
  ASSERT_TRUE(sel.choose(usable, nodes(10), out, leaves));
  EXPECT_EQ(out, (std::vector<NodeIndex>{4, 5, 6, 7, 8, 9, 10, 11, 0, 1}));
  EXPECT_EQ(leaves, 3U);
}

TEST(TreeSelection, DisjointTreesCannotShareAJob) {
  // Two roots: s0 = n[0-1] and s1 = n[2-3] with no common switch. A 3-node job has no top switch.
  SlurmTopology t;
  t.kind = TopologyKind::kTree;
  t.switches = {{"s0", 0, -1, {}, {0, 1}, ""}, {"s1", 0, -1, {}, {2, 3}, ""}};
  t.switch_distance = {{0, UINT32_MAX}, {UINT32_MAX, 0}};
  t.leaf_of_node = {0, 0, 1, 1};
  TopologySelector sel(t);
  EXPECT_FALSE(sel.feasibility_is_count_based());
  std::vector<NodeIndex> out;
  std::uint32_t leaves = 0;
  EXPECT_FALSE(sel.choose(free_nodes({0, 1, 2, 3}), nodes(3), out, leaves));
  EXPECT_TRUE(sel.choose(free_nodes({0, 1, 2, 3}), nodes(2), out, leaves));
  EXPECT_TRUE(TopologySelector(three_leaf_tree()).feasibility_is_count_based());
}

// Block: base blocks b0 = n[0-3], b1 = n[4-7], b2 = n[8-11], b3 = n[12-15]; BlockSizes=4,8,16 (levels 0, 1, 2).
SlurmTopology four_blocks() {
  SlurmTopology t;
  t.kind = TopologyKind::kBlock;
  for (NodeIndex b = 0; b < 4; ++b) {
    t.blocks.push_back({"b" + std::to_string(b), {4 * b, 4 * b + 1, 4 * b + 2, 4 * b + 3}});
  }
  t.block_sizes = {4, 8, 16};
  for (NodeIndex n = 0; n < 16; ++n) t.block_of_node.push_back(static_cast<int>(n / 4));
  return t;
}

TEST(BlockSelection, SmallJobGoesToTheLaterOfEqualBlocks) {
  // 2 nodes: ceil(2/4) = 1 base block, level 0. All four blocks have 4 free nodes; ties go to the later block
  // (the comparison is <=): b3, n12, n13.
  const SlurmTopology t = four_blocks();
  TopologySelector sel(t);
  std::vector<UsableNode> all;
  for (NodeIndex n = 0; n < 16; ++n) all.push_back({n, 8, 1});
  std::vector<NodeIndex> out;
  std::uint32_t used = 0;
  ASSERT_TRUE(sel.choose(all, nodes(2), out, used));
  EXPECT_EQ(out, (std::vector<NodeIndex>{12, 13}));
  EXPECT_EQ(used, 1U);
}

TEST(BlockSelection, FewestFreeSufficientBlockThenFewestBaseBlocks) {
  // 6 nodes: ceil(6/4) = 2 base blocks, level 1: blocks {b0,b1} and {b2,b3}. n0 busy: 7 vs 8 free, the fewest
  // sufficient is {b0,b1}. Within it neither base block holds 6; b1 (4) has the most: n4-n7; then b0 (3 >= 2
  // fits): n1, n2.
  const SlurmTopology t = four_blocks();
  TopologySelector sel(t);
  std::vector<UsableNode> usable;
  for (NodeIndex n = 1; n < 16; ++n) usable.push_back({n, 8, 1});
  std::vector<NodeIndex> out;
  std::uint32_t used = 0;
  ASSERT_TRUE(sel.choose(usable, nodes(6), out, used));
  EXPECT_EQ(out, (std::vector<NodeIndex>{4, 5, 6, 7, 1, 2}));
  EXPECT_EQ(used, 2U);
}

TEST(BlockSelection, AJobMustFitOneBlockOfItsLevel) {
  // Two free nodes per base block (8 in all). A 5-node job needs level 1 (2 base blocks), whose blocks hold 4
  // free nodes each: it does not fit, although 8 nodes are free. Whether a job fits is not a count here.
  const SlurmTopology t = four_blocks();
  TopologySelector sel(t);
  EXPECT_FALSE(sel.feasibility_is_count_based());
  std::vector<UsableNode> usable;
  for (NodeIndex n : {2, 3, 6, 7, 10, 11, 14, 15}) usable.push_back({n, 8, 1});
  std::vector<NodeIndex> out;
  std::uint32_t used = 0;
  EXPECT_FALSE(sel.choose(usable, nodes(5), out, used));
  // 4 nodes: ceil(4/4) = 1 base block, level 0, and no base block has 4 free: no fit either.
  EXPECT_FALSE(sel.choose(usable, nodes(4), out, used));
  // 2 nodes fit level 0: every base block holds exactly 2; ties go to the later, b3.
  ASSERT_TRUE(sel.choose(usable, nodes(2), out, used));
  EXPECT_EQ(out, (std::vector<NodeIndex>{14, 15}));
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

TEST(TreeSelectionProperty, RangeBasedChoiceEqualsTheNodeByNodeChoice) {
  // Random fat trees (leaves are index ranges), random free nodes of one weight, random fixed requests: the
  // range-based fast path must give exactly the node-by-node algorithm's nodes, order and leaf count.
  std::mt19937 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::uint32_t per_leaf = 1 + rng() % 6;
    const std::uint32_t per_spine = 1 + rng() % 4;
    const std::uint32_t nodes = 4 + rng() % 60;
    std::vector<std::string> names;
    for (std::uint32_t i = 0; i < nodes; ++i) names.push_back("n" + std::to_string(i));
    const SlurmTopology t = resolve_topology(fat_tree_spec(names, per_leaf, per_spine), names, "fat");
    TopologySelector fast(t);
    TopologySelector slow(t);
    std::vector<UsableNode> usable;
    std::vector<UsableRange> ranges;
    const unsigned density = 1 + rng() % 9;
    for (NodeIndex n = 0; n < nodes; ++n) {
      if (rng() % 10 >= density) continue;
      usable.push_back({n, 8, 1});
      if (!ranges.empty() && ranges.back().first + ranges.back().count == n)
        ++ranges.back().count;
      else
        ranges.push_back({n, 1, 1});
    }
    const std::uint32_t want = 1 + rng() % 12;
    const TopologyNeed need{want, want * 8ULL, true, 8};
    std::vector<NodeIndex> a, b;
    std::uint32_t la = 0, lb = 0;
    const std::optional<bool> fa = fast.choose_ranges(ranges, need, a, la);
    ASSERT_TRUE(fa.has_value());
    const bool fb = slow.choose(usable, need, b, lb);
    ASSERT_EQ(*fa, fb) << "trial " << trial;
    if (fb) {
      ASSERT_EQ(a, b) << "trial " << trial;
      ASSERT_EQ(la, lb) << "trial " << trial;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

}  // namespace
}  // namespace gputwin
