// Summary numbers of the golden FCFS run, worked by hand:
// J1 [0,100) 3 CPUs, J2 [100,200) 3 CPUs, J3 [200,300) 4 CPUs, J4 [300,600) 1 CPU; submits 0, 1, 2, 3.
#include "results/summary.hpp"

#include <gtest/gtest.h>

#include "sim/runner.hpp"

namespace gputwin {
namespace {

RunOutcome golden_fcfs() {
  return run_scenario(load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/tests/golden/four_nodes_fcfs.json"),
                      RunOptions{});
}

TEST(Summary, GoldenFcfsNumbersByHand) {
  const RunSummary s = golden_fcfs().summary;
  EXPECT_EQ(s.jobs, 4u);
  EXPECT_EQ(s.by_state.at("COMPLETED"), 4u);
  EXPECT_DOUBLE_EQ(s.makespan_s, 600.0);                        // last end 600 - first submit 0
  EXPECT_DOUBLE_EQ(s.cpu_utilization, 1300.0 / (4.0 * 600.0));  // 300 + 300 + 400 + 300 CPU-s
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.0);
  EXPECT_DOUBLE_EQ(s.wait_mean_s, (0.0 + 99 + 198 + 297) / 4);  // 148.5
  EXPECT_DOUBLE_EQ(s.wait_p50_s, 99.0);                         // nearest rank ceil(0.50 * 4) = 2
  EXPECT_DOUBLE_EQ(s.wait_p95_s, 297.0);                        // ceil(0.95 * 4) = 4
  EXPECT_DOUBLE_EQ(s.wait_p99_s, 297.0);
  // Bounded slowdowns: 100/100 = 1, 199/100, 298/100, 597/300 = 1.99 -> mean 7.96 / 4.
  EXPECT_DOUBLE_EQ(s.bounded_slowdown_mean, (1.0 + 1.99 + 2.98 + 1.99) / 4);
  EXPECT_DOUBLE_EQ(s.cpu_hours, 1300.0 / 3600.0);
}

TEST(Summary, NearestRankPercentile) {
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(nearest_rank_percentile(v, 50), 5);
  EXPECT_EQ(nearest_rank_percentile(v, 95), 10);
  EXPECT_EQ(nearest_rank_percentile(v, 10), 1);
  EXPECT_EQ(nearest_rank_percentile({}, 50), 0);
}

TEST(Summary, BoundedSlowdownUsesTenSecondThreshold) {
  // One 2 s job waiting 8 s: max(1, (8 + 2) / max(2, 10)) = 1; waiting 28 s: 30 / 10 = 3.
  Scenario s;
  s.name = "t";
  s.cluster.nodes.push_back(NodeConfig{"n1", 1, 0, 0, "", 1});
  PartitionConfig part;
  part.name = "p";
  part.nodes = {0};
  part.is_default = true;
  s.cluster.partitions.push_back(part);
  s.scheduler.policy = SchedulerPolicy::kFcfs;
  JobSpec blocker;
  blocker.id = 1;
  blocker.time_limit_s = 28;
  blocker.run_time_s = 28;
  JobSpec small = blocker;
  small.id = 2;
  small.time_limit_s = 2;
  small.run_time_s = 2;
  const RunOutcome o = run_jobs(s, {blocker, small}, RunOptions{});
  // blocker: 1; small waits 28 s: (28 + 2) / 10 = 3.
  EXPECT_DOUBLE_EQ(o.summary.bounded_slowdown_mean, (1.0 + 3.0) / 2);
}

}  // namespace
}  // namespace gputwin
