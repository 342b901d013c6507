// --switches on a topology/tree cluster under the `slurm` policy: the leaf count is enforced until the job has
// waited its max-time (wait4switch), then any spread is accepted (slurm-semantics.md 3.3).
#include <gtest/gtest.h>

#include <numeric>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;
using testing::node_lists;
using testing::start_times;

// 8 nodes: leaf s0 = n[001-004], leaf s1 = n[005-008], root s2 above both.
Scenario two_leaf_cluster() {
  Scenario s = make_scenario(8, 1, 0, SchedulerPolicy::kSlurm);
  s.cluster.topology.slurm = testing::two_leaf_tree();
  return s;
}

// A: 3 nodes for 100 s (n[001-003]), B: 3 nodes for 1000 s (n[005-007]); at t=10 only n004 and n008 are free,
// one on each leaf. C asks for 2 nodes at t=10.
std::vector<JobSpec> jobs_with_c(const char* switches) {
  std::vector<JobSpec> jobs{make_job(1, 0, 3, 3, 0, 100, 100), make_job(2, 0, 3, 3, 0, 1000, 1000),
                            make_job(3, 10, 2, 2, 0, 100, 100)};
  if (switches != nullptr) {
    EXPECT_TRUE(parse_switches_spec(switches, jobs[2].switches, jobs[2].switch_wait_s));
  }
  return jobs;
}

TEST(Switches, WithoutTheOptionAJobSpansTwoLeaves) {
  auto o = run_jobs(two_leaf_cluster(), jobs_with_c(nullptr), RunOptions{});
  EXPECT_EQ(node_lists(o)[2], "n[004,008]");
  EXPECT_LT(start_times(o)[2], 20);  // the first pass after its submit
}

TEST(Switches, OneLeafWithinTheWaitWaitsForALeafToFree) {
  // switches=1@10:00: n004 + n008 span 2 leaves, so C waits; at t=100 A ends and s0 has 4 free nodes: C takes
  // n[001-002] (the leaf's nodes in index order) within its 600 s.
  auto o = run_jobs(two_leaf_cluster(), jobs_with_c("1@10:00"), RunOptions{});
  EXPECT_EQ(node_lists(o)[2], "n[001-002]");
  EXPECT_GE(start_times(o)[2], 100);
  EXPECT_LT(start_times(o)[2], 10 + 600);
}

TEST(Switches, AfterTheWaitAnySpreadIsAccepted) {
  // switches=1@0:30 (max-time in Slurm's time format: 30 alone would be 30 minutes, capped by max_switch_wait):
  // first evaluated at t=11, the wait is over from t=41; the 2-leaf allocation is taken at the next pass (the
  // backfill cycle at t=60), before A ends at 100.
  auto o = run_jobs(two_leaf_cluster(), jobs_with_c("1@0:30"), RunOptions{});
  EXPECT_EQ(node_lists(o)[2], "n[004,008]");
  EXPECT_EQ(start_times(o)[2], 60);
}

TEST(Switches, SpecSyntax) {
  std::uint32_t count = 0;
  std::int64_t wait = 0;
  EXPECT_TRUE(parse_switches_spec("2", count, wait));
  EXPECT_EQ(count, 2U);
  EXPECT_EQ(wait, -1);
  EXPECT_TRUE(parse_switches_spec("1@1:00:00", count, wait));
  EXPECT_EQ(wait, 3600);
  EXPECT_TRUE(parse_switches_spec("1@30", count, wait));  // minutes, as --time
  EXPECT_EQ(wait, 1800);
  EXPECT_FALSE(parse_switches_spec("x@1", count, wait));
  EXPECT_FALSE(parse_switches_spec("1@soon", count, wait));
}

}  // namespace
}  // namespace gputwin
