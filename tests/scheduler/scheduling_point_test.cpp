// The scheduling point of the classic policies: one pass per instant (after every event at that time, the
// default) or one pass after every event (scheduling_point "event", as CQSim does). Jobs are (id, submit, nodes,
// CPUs, GPUs per node, limit, run).
#include <gtest/gtest.h>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;
using testing::start_times;

RunOutcome run(SchedulerPolicy policy, SchedulingPoint point, std::vector<JobSpec> jobs) {
  Scenario s = make_scenario(2, 1, 0, policy);
  s.scheduler.scheduling_point = point;
  return run_jobs(std::move(s), std::move(jobs), RunOptions{});
}

// 2 nodes x 1 CPU. J1 and J2 (t=0, 1 node each, limit 1000 s) both end early, at 100. H (t=1, 2 nodes, 100 s)
// waits for both; B (t=2, 1 node, limit and run 300 s) waits behind it.
std::vector<JobSpec> two_jobs_end_together() {
  return {make_job(1, 0, 1, 1, 0, 1000, 100), make_job(2, 0, 1, 1, 0, 1000, 100), make_job(3, 1, 2, 2, 0, 100, 100),
          make_job(4, 2, 1, 1, 0, 300, 300)};
}

TEST(SchedulingPoint, TwoJobsEndingTogetherFreeTheirNodesAtOnceOnlyPerInstant) {
  for (SchedulerPolicy policy : {SchedulerPolicy::kEasy, SchedulerPolicy::kEasyTextbook}) {
    // instant: at 100 both ends are delivered, then one pass: H gets both nodes at 100; B follows at 200.
    EXPECT_EQ(start_times(run(policy, SchedulingPoint::kInstant, two_jobs_end_together())),
              (std::vector<std::int64_t>{0, 0, 100, 200}))
        << policy_name(policy);
    // event: J1's end comes first (ends at one time come in start order) and a pass runs with one node free. H
    // needs 2; its shadow time is J2's expected end, 0 + 1000; B would end at 400 <= 1000, so it is backfilled
    // onto J1's node at 100. J2's end then frees the other node, but H now waits for B: it starts at 400.
    EXPECT_EQ(start_times(run(policy, SchedulingPoint::kEvent, two_jobs_end_together())),
              (std::vector<std::int64_t>{0, 0, 400, 100}))
        << policy_name(policy);
  }
}

TEST(SchedulingPoint, FcfsStartsTheSameJobsEitherWay) {
  // Without backfilling nothing may pass H after the first end, so H starts at 100 and B at 200 either way.
  for (SchedulingPoint point : {SchedulingPoint::kInstant, SchedulingPoint::kEvent}) {
    EXPECT_EQ(start_times(run(SchedulerPolicy::kFcfs, point, two_jobs_end_together())),
              (std::vector<std::int64_t>{0, 0, 100, 200}))
        << scheduling_point_name(point);
  }
}

TEST(SchedulingPoint, EventPointRunsAPassAfterEverySubmit) {
  // Three jobs submitted at t=0 on 2 free nodes: a pass per instant sees all three at once, a pass per event
  // one after another; both start J1 and J2 at 0 and J3 (2 nodes) at 50. The event point runs more passes.
  const std::vector<JobSpec> jobs{make_job(1, 0, 1, 1, 0, 50, 50), make_job(2, 0, 1, 1, 0, 50, 50),
                                  make_job(3, 0, 2, 2, 0, 50, 50)};
  const RunOutcome instant = run(SchedulerPolicy::kEasyTextbook, SchedulingPoint::kInstant, jobs);
  const RunOutcome event = run(SchedulerPolicy::kEasyTextbook, SchedulingPoint::kEvent, jobs);
  EXPECT_EQ(start_times(instant), (std::vector<std::int64_t>{0, 0, 50}));
  EXPECT_EQ(start_times(event), (std::vector<std::int64_t>{0, 0, 50}));
  EXPECT_GT(event.scheduler_stats.passes, instant.scheduler_stats.passes);
}

}  // namespace
}  // namespace gputwin
