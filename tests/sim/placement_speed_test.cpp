// PlacementSpeedModel: the network a placement crosses, the profile's speed there, and contention between jobs
// that share an oversubscribed uplink (hand-worked shares; the speeds themselves come from gpu/job_speed, whose
// numbers are tested in tests/gpu).
#include "sim/placement_speed.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model/errors.hpp"
#include "results/gpu_metrics.hpp"
#include "sim/runner.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;

// 8 H100 nodes (8 NICs x 47 GB/s = 376 GB/s each), leaves s0 = n[001-004], s1 = n[005-008], root s2.
Scenario two_leaves_h100() {
  Scenario s = make_scenario(8, 112, 8, SchedulerPolicy::kSlurm);
  for (NodeConfig& n : s.cluster.nodes) n.gpu_type = "h100";
  s.cluster.topology.slurm = testing::two_leaf_tree();
  s.performance.enabled = true;
  s.performance.network.oversubscription = {4};  // leaf uplinks: 4 x 376 / 4 = 376 GB/s
  DataParallelProfile dp;
  dp.parameters_billion = 7;
  dp.compute_s = 0.5;
  s.performance.profiles.push_back(ProfileRule{"dp", 0, UINT32_MAX, "", dp});
  return s;
}

std::vector<NodeAllocation> on(std::initializer_list<NodeIndex> nodes) {
  std::vector<NodeAllocation> out;
  for (NodeIndex n : nodes) out.push_back({n, 112, 8, 0});
  return out;
}

TEST(PlacementNetwork, PathCrossingAnOversubscribedLevel) {
  const Scenario s = two_leaves_h100();
  const PlacementNetwork net(s.cluster, s.performance.network);
  const std::vector<NodeIndex> same_leaf{0, 1};
  const std::vector<NodeIndex> two_leaves{3, 4};
  const CommPath in_leaf = net.path(same_leaf, 8);
  EXPECT_DOUBLE_EQ(in_leaf.inter_node_gbps, 376);  // 8 x 47
  EXPECT_EQ(in_leaf.switch_hops, 1U);              // node, leaf, node
  const CommPath across = net.path(two_leaves, 8);
  EXPECT_DOUBLE_EQ(across.inter_node_gbps, 94);    // 376 / 4 (static rule: the oversubscription of level 0)
  EXPECT_EQ(across.switch_hops, 3U);               // leaf, root, leaf
  EXPECT_DOUBLE_EQ(across.inter_latency_us, 1.8);  // 3 x 0.6
  EXPECT_DOUBLE_EQ(net.path(two_leaves, 8, false).inter_node_gbps, 376);
  EXPECT_EQ(net.leaves(two_leaves), 2U);
  // 4 GPUs of a node get half its NICs.
  EXPECT_DOUBLE_EQ(net.path(same_leaf, 4).inter_node_gbps, 188);
}

TEST(PlacementSpeedModel, StaticRuleSlowsACrossLeafJob) {
  const Scenario s = two_leaves_h100();
  const ClusterState state(s.cluster, {make_job(1, 0, 2, 224, 8, 100, 100), make_job(2, 0, 2, 224, 8, 100, 100)});
  PlacementSpeedModel model(state, s.performance);
  const double packed = model.start(0, on({0, 1}));
  const double spread = model.start(1, on({3, 4}));
  EXPECT_DOUBLE_EQ(packed, 1.0);  // the reference placement itself
  const std::vector<NodeIndex> ref{0, 1}, act{3, 4};
  const double expected = speed_factor(s.performance.profiles[0].profile, model.network().path(act, 8),
                                       model.network().path(ref, 8), nccl_options_for_nvlink(4));
  EXPECT_DOUBLE_EQ(spread, expected);
  EXPECT_LT(spread, 0.95);  // a quarter of the bandwidth for 14 GB of gradients per step is felt
}

TEST(PlacementSpeedModel, JobsSharingAnUplinkSlowEachOther) {
  // Contention on: A on n004+n005 crosses both leaf uplinks (376 GB/s each way) with one flow each way: alone it
  // gets the NICs' 376 GB/s, share 1. B on n003+n006 adds one flow per uplink direction: 376 / 2 = 188 each,
  // share 0.5 for both (equal split and max-min agree here). When B stops, A is back to 1.
  for (ContentionKind kind : {ContentionKind::kAnalytic, ContentionKind::kSimGrid}) {
    Scenario s = two_leaves_h100();
    s.performance.contention = kind;
    const ClusterState state(s.cluster, {make_job(1, 0, 2, 224, 8, 100, 100), make_job(2, 0, 2, 224, 8, 100, 100)});
    PlacementSpeedModel model(state, s.performance);
    const double alone = model.start(0, on({3, 4}));
    // The links carry the oversubscription: alone the uplink is not the bottleneck, only the extra switch hops
    // (1.8 µs instead of 0.6) cost a little.
    const std::vector<NodeIndex> ref{0, 1}, across{3, 4};
    const CommPath reference = model.network().path(ref, 8, false);
    const CommPath path = model.network().path(across, 8, false);
    const JobProfile& profile = s.performance.profiles[0].profile;
    EXPECT_DOUBLE_EQ(alone, speed_factor(profile, path, reference, nccl_options_for_nvlink(4)));
    EXPECT_GT(alone, 0.99);
    const double b = model.start(1, on({2, 5}));
    std::vector<std::pair<JobIndex, double>> changes;
    model.take_changes(changes);
    ASSERT_EQ(changes.size(), 1U);
    EXPECT_EQ(changes[0].first, 0U);
    EXPECT_DOUBLE_EQ(changes[0].second, b);  // same placement shape, same share
    CommPath half = path;
    half.inter_node_gbps *= 0.5;
    EXPECT_NEAR(b, speed_factor(profile, half, reference, nccl_options_for_nvlink(4)), 1e-9);
    EXPECT_LT(b, alone);
    model.stop(1);
    changes.clear();
    model.take_changes(changes);
    ASSERT_EQ(changes.size(), 1U);
    EXPECT_NEAR(changes[0].second, alone, 1e-9);
  }
}

TEST(PlacementSpeedModel, WholeRunStretchesTheCrossLeafJob) {
  // Through the runner, with TopoOptional so that placement ignores the tree (the network does not): job 1 (3
  // nodes) takes n[001-003] inside s0 and runs its 1000 s; job 2 (2 nodes) takes n[004-005] across the leaves
  // and its 1000 s at the reference stretch to ceil(1000 / f) with f the profile's speed there.
  Scenario s = two_leaves_h100();
  s.cluster.topology.slurm.topo_optional = true;
  auto o = run_jobs(s, {make_job(1, 0, 3, 336, 8, 5000, 1000), make_job(2, 0, 2, 224, 8, 5000, 1000)}, RunOptions{});
  EXPECT_EQ(testing::node_lists(o)[1], "n[004-005]");
  EXPECT_EQ(to_seconds(o.state->job(0).end) - to_seconds(o.state->job(0).start), 1000);
  const std::vector<NodeIndex> ref{0, 1}, act{3, 4};
  const PlacementNetwork net(s.cluster, s.performance.network);
  const double f =
      speed_factor(s.performance.profiles[0].profile, net.path(act, 8), net.path(ref, 8), nccl_options_for_nvlink(4));
  // SimWorld rounds the stretched time up to the microsecond: end = start + ceil(1000e6 / f) µs.
  const SimTime expected_end = o.state->job(1).start + static_cast<SimTime>(std::ceil(1000e6 / f));
  EXPECT_EQ(o.state->job(1).end, expected_end);
  EXPECT_GT(to_seconds(o.state->job(1).end - o.state->job(1).start), 1000);
  // Placement in the summary: 2 multi-node jobs, 1 across the leaves, (1 + 2) / 2 = 1.5 leaves each; placement
  // added 16 GPUs x (its time - 1000 s) of GPU time.
  EXPECT_EQ(o.summary.multi_node_jobs, 2U);
  EXPECT_EQ(o.summary.cross_leaf_jobs, 1U);
  EXPECT_DOUBLE_EQ(o.summary.leaves_per_multi_node_job, 1.5);
  EXPECT_NEAR(o.summary.placement_gpu_hours,
              16 * (to_seconds_f(o.state->job(1).end - o.state->job(1).start) - 1000) / 3600, 1e-9);
}

TEST(PlacementSpeedModel, CrossLeafTrafficOfARun) {
  // The run above: job 1 stays in leaf s0, job 2 spans s0 and s1. Its DDP ring over 16 GPUs crosses the leaves
  // twice per step, each crossing carrying 2 x 15/16 of the 14 GB of bf16 gradients: 52.5 GB per step. Compute work
  // is fixed, so whatever its speed the job runs 1000 s / step(reference) steps: the run's cross-leaf traffic is
  // 52.5e9 x 1000 / step(reference) bytes; job 1 adds nothing.
  Scenario s = two_leaves_h100();
  s.cluster.topology.slurm.topo_optional = true;
  auto o = run_jobs(s, {make_job(1, 0, 3, 336, 8, 5000, 1000), make_job(2, 0, 2, 224, 8, 5000, 1000)}, RunOptions{});
  const JobProfile& dp = s.performance.profiles[0].profile;
  EXPECT_DOUBLE_EQ(cross_leaf_bytes_per_step(dp, 16, 2), 52.5e9);
  EXPECT_DOUBLE_EQ(cross_leaf_bytes_per_step(dp, 16, 1), 0.0);
  const MetricsInput input = metrics_input(o);
  ASSERT_TRUE(input.load);
  EXPECT_DOUBLE_EQ(input.load(0, o.state->allocation(0))->job_cross_leaf_bytes_per_s, 0.0);
  const PlacementNetwork net(s.cluster, s.performance.network);
  const std::vector<NodeIndex> ref{0, 1};
  const double step_ref = step_time_s(dp, net.path(ref, 8), nccl_options_for_nvlink(4));
  EXPECT_NEAR(input.load(1, o.state->allocation(1))->job_cross_leaf_bytes_per_s, 52.5e9 / step_ref, 1e-3);
  // Compute share at the reference: 0.5 s of compute in the reference step.
  EXPECT_NEAR(input.load(1, o.state->allocation(1))->compute_share, 0.5 / step_ref, 1e-12);
  MetricsTotals totals;
  const GpuBinding binding(*o.state, input.horizon);
  build_metrics(*o.state, binding, input.horizon, input.config, input.load, {}, {}, {}, totals);
  EXPECT_NEAR(totals.cross_leaf_traffic_tb, 52.5e9 * 1000 / step_ref / 1e12, 1e-9);
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

TEST(PlacementSpeedModel, SameScenarioSameSeedIdenticalWithEveryContentionModel) {
  // 40 jobs of 1-4 nodes on the two-leaf cluster with a 4:1 uplink: runs under each contention model repeat
  // exactly (start, end, nodes), and contention changes the schedule against the static rule.
  std::vector<JobSpec> jobs;
  for (std::uint64_t i = 0; i < 40; ++i) {
    const auto nodes = static_cast<std::uint32_t>(1 + (i * 7) % 4);
    jobs.push_back(testing::make_job(i + 1, static_cast<std::int64_t>(i * 13), nodes, nodes * 112, 8, 3000,
                                     200 + static_cast<std::int64_t>((i * 37) % 500)));
  }
  auto ends = [&](ContentionKind kind) {
    Scenario s = two_leaves_h100();
    s.cluster.topology.slurm.topo_optional = true;  // let jobs spread over both leaves
    s.performance.contention = kind;
    auto o = run_jobs(s, jobs, RunOptions{});
    std::vector<SimTime> out;
    for (JobIndex j = 0; j < o.state->job_count(); ++j) {
      out.push_back(o.state->job(j).start);
      out.push_back(o.state->job(j).end);
    }
    return out;
  };
  const auto none = ends(ContentionKind::kNone);
  const auto analytic = ends(ContentionKind::kAnalytic);
  const auto simgrid = ends(ContentionKind::kSimGrid);
  EXPECT_EQ(none, ends(ContentionKind::kNone));
  EXPECT_EQ(analytic, ends(ContentionKind::kAnalytic));
  EXPECT_EQ(simgrid, ends(ContentionKind::kSimGrid));
  EXPECT_NE(none, analytic);
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

TEST(PlacementNetwork, DegradedLinksRemoveCapacity) {
  // Half of s0's uplink cables fail: a job across the leaves gets 376 / 4 (oversubscription) x 0.5 = 47 GB/s
  // under the static rule; with contention the uplink's capacity is 376 x 0.5 = 188 GB/s, below one ring flow's
  // 376: the job alone gets share 0.5. A node with half its NICs down gives a job on it 188 GB/s.
  Scenario s = two_leaves_h100();
  s.performance.network.degraded = {DegradedLink{"s0", "", 0.5}, DegradedLink{"", "n008", 0.5}};
  const PlacementNetwork net(s.cluster, s.performance.network);
  const std::vector<NodeIndex> across{3, 4}, in_s1{6, 7}, in_s1_ok{4, 5};
  EXPECT_DOUBLE_EQ(net.path(across, 8).inter_node_gbps, 47);
  EXPECT_DOUBLE_EQ(net.path(in_s1, 8).inter_node_gbps, 188);
  EXPECT_DOUBLE_EQ(net.path(in_s1_ok, 8).inter_node_gbps, 376);
  s.performance.contention = ContentionKind::kAnalytic;
  const ClusterState state(s.cluster, {testing::make_job(1, 0, 2, 224, 8, 100, 100)});
  PlacementSpeedModel model(state, s.performance);
  const double speed = model.start(0, on({3, 4}));
  CommPath half = model.network().path(across, 8, false);
  half.inter_node_gbps *= 0.5;
  const std::vector<NodeIndex> ref{0, 1};
  EXPECT_NEAR(speed,
              speed_factor(s.performance.profiles[0].profile, half, model.network().path(ref, 8, false),
                           nccl_options_for_nvlink(4)),
              1e-9);
}

TEST(PlacementNetwork, DegradedPartsMustExist) {
  const std::string text = R"({"name": "t", "cluster": {"nodes": [{"prefix": "n", "count": 8, "cpus": 4, "gpus": 8}],
    "partitions": [{"name": "p", "nodes": "ALL", "default": true}], "topology": {"fat_tree": {"nodes_per_leaf": 4}}},
    "workload": {"jobs": [{"id": 1, "run_time": 10}]}, "scheduler": {"policy": "slurm"},
    "performance": {"network": {"degraded": [{"switch": "leaf9", "remaining": 0.5}]}}})";
  try {
    parse_scenario(text, "d.json", ".");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(e.what(),
                 "d.json: /performance/network/degraded/0/switch: no switch named 'leaf9' with an uplink in the "
                 "topology tree");
  }
}

}  // namespace
}  // namespace gputwin
