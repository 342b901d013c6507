// Hand-worked schedules for fcfs, sjf, easy and conservative on 4 single-CPU nodes. Each job is
// (id, submit, nodes, limit, run); limits equal run times unless said otherwise. Policies re-plan at the end of
// every instant at which something happened and plan on limits.
#include <gtest/gtest.h>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;
using testing::start_times;

// J1 (t=0, 3 nodes, 100 s)   J2 (t=1, 3 nodes, 100 s)   J3 (t=2, 4 nodes, 100 s)   J4 (t=3, 1 node, 300 s)
std::vector<JobSpec> easy_vs_conservative_jobs() {
  return {make_job(1, 0, 3, 3, 0, 100, 100), make_job(2, 1, 3, 3, 0, 100, 100), make_job(3, 2, 4, 4, 0, 100, 100),
          make_job(4, 3, 1, 1, 0, 300, 300)};
}

RunOutcome run(SchedulerPolicy policy, std::vector<JobSpec> jobs) {
  return run_jobs(make_scenario(4, 1, 0, policy), std::move(jobs), RunOptions{});
}

TEST(ClassicPolicies, FcfsBlocksBehindTheFirstJobThatDoesNotFit) {
  // t=0 J1 on n[001-003]. t=1 J2 needs 3, only n004 free: blocks J3 and J4 behind it.
  // t=100 J1 ends: J2 starts; J3 (4 nodes) blocks. t=200 J2 ends: J3 starts. t=300 J3 ends: J4 starts.
  EXPECT_EQ(start_times(run(SchedulerPolicy::kFcfs, easy_vs_conservative_jobs())),
            (std::vector<std::int64_t>{0, 100, 200, 300}));
}

TEST(ClassicPolicies, EasyProtectsOnlyTheHeadJob) {
  // t=1: head J2's shadow time is 100 (J1 ends), on nodes n[001-003]; n004 is an extra node.
  // t=3: J4 (1 node, ends 303 > shadow) fits on the extra node n004: it starts at 3.
  // t=100: J2 starts. t=200: J2 ends; head J3 needs all 4 nodes, n004 is busy until 303. J3 starts at 303.
  EXPECT_EQ(start_times(run(SchedulerPolicy::kEasy, easy_vs_conservative_jobs())),
            (std::vector<std::int64_t>{0, 100, 303, 3}));
}

TEST(ClassicPolicies, ConservativeProtectsEveryQueuedJob) {
  // Reservations at t=3: J2 [100,200) on n[001-003], J3 [200,300) on all nodes. J4 needs one node for 300 s:
  // n004 is free only in [3,200), too short, so J4's earliest slot is 300. Nothing is delayed by J4.
  EXPECT_EQ(start_times(run(SchedulerPolicy::kConservative, easy_vs_conservative_jobs())),
            (std::vector<std::int64_t>{0, 100, 200, 300}));
}

TEST(ClassicPolicies, EasyBackfillsAJobThatEndsBeforeTheShadowTime) {
  // J1 (t=0, 2 nodes, 100 s) runs on n[001-002]. J2 (t=1, 4 nodes) is the head, shadow 100 on all nodes.
  // J3 (t=2, 1 node, 80 s) ends at 82 <= 100: backfilled at 2. J4 (t=3, 2 nodes, 200 s) would end after the
  // shadow time and there are no extra nodes: it waits. J2 runs [100,150), then J4 at 150.
  std::vector<JobSpec> jobs{make_job(1, 0, 2, 2, 0, 100, 100), make_job(2, 1, 4, 4, 0, 50, 50),
                            make_job(3, 2, 1, 1, 0, 80, 80), make_job(4, 3, 2, 2, 0, 200, 200)};
  EXPECT_EQ(start_times(run(SchedulerPolicy::kEasy, jobs)), (std::vector<std::int64_t>{0, 100, 2, 150}));
  // FCFS: J3 and J4 wait behind J2; both start when J2 ends at 150.
  EXPECT_EQ(start_times(run(SchedulerPolicy::kFcfs, jobs)), (std::vector<std::int64_t>{0, 100, 150, 150}));
}

TEST(ClassicPolicies, SjfOrdersByRequestedTimeWithoutBackfilling) {
  // J1 (t=0, 4 nodes, 100 s) holds the machine until 100. Queued at 100: J2 (300 s, 2 nodes), J3 (50 s, 4 nodes),
  // J4 (200 s, 1 node). SJF order: J3, J4, J2. J3 runs [100,150); J4 and J2 start at 150 (1 + 2 nodes fit).
  std::vector<JobSpec> jobs{make_job(1, 0, 4, 4, 0, 100, 100), make_job(2, 1, 2, 2, 0, 300, 300),
                            make_job(3, 2, 4, 4, 0, 50, 50), make_job(4, 3, 1, 1, 0, 200, 200)};
  EXPECT_EQ(start_times(run(SchedulerPolicy::kSjf, jobs)), (std::vector<std::int64_t>{0, 150, 100, 150}));
  // FCFS at 100: J2 runs [100,400) on 2 nodes; J3 needs 4 and blocks J4. J3 starts at 400, J4 at 450.
  EXPECT_EQ(start_times(run(SchedulerPolicy::kFcfs, jobs)), (std::vector<std::int64_t>{0, 100, 400, 450}));
}

TEST(ClassicPolicies, ConservativeWaitsForNodesInTheirEpilog) {
  // 2 nodes x 1 CPU, epilog 50 s. J1 (1 node) ends at its limit 100 and holds n001 until 150; J2 (2 nodes, t=120)
  // must wait for the release at 150.
  Scenario s = make_scenario(2, 1, 0, SchedulerPolicy::kConservative);
  s.scheduler.slurm.epilog_s = 50;
  auto o = run_jobs(s, {make_job(1, 0, 1, 1, 0, 100, 100), make_job(2, 120, 2, 2, 0, 100, 100)}, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{0, 150}));
}

TEST(ClassicPolicies, JobsRunIntoTheirLimitAreTimedOut) {
  // Limit 60 s, would run 100 s: killed at exactly start + limit under the classic policies.
  auto o = run(SchedulerPolicy::kFcfs, {make_job(1, 0, 1, 1, 0, 60, 100)});
  EXPECT_EQ(o.state->job(0).state, JobState::kTimeout);
  EXPECT_EQ(to_seconds(o.state->job(0).end), 60);
}

}  // namespace
}  // namespace gputwin
