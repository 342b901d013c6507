// Same scenario and seed give bit-identical results; the scheduler's shortcuts give exactly the plain
// algorithm's schedule.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/runner.hpp"
#include "tests/support/file_text.hpp"

namespace gputwin {
namespace {

using testing::slurp;

/// Every job's id, start, end, state and node list, one line each.
std::string schedule_text(const RunOutcome& o) {
  std::ostringstream out;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    const auto& rt = o.state->job(j);
    out << o.state->spec(j).id << ' ' << rt.start << ' ' << rt.end << ' ' << job_state_name(rt.state) << ' '
        << job_node_list(*o.state, j) << '\n';
  }
  return out.str();
}

Scenario busy_gpu_cluster(std::uint64_t jobs, double load) {
  Scenario s = load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/quickstart.json");
  s.synthetic.jobs = jobs;
  s.synthetic.load = load;
  return s;
}

TEST(Determinism, SameSeedGivesIdenticalResultFiles) {
  const auto base = std::filesystem::path(GPUTWIN_BINARY_DIR) / "determinism";
  for (int run = 0; run < 2; ++run) {
    RunOutcome o = run_scenario(busy_gpu_cluster(1500, 0.95), RunOptions{});
    write_results(base / std::to_string(run), run_info(o), *o.state, o.summary, *o.recorder);
  }
  EXPECT_EQ(slurp(base / "0" / "jobs.csv"), slurp(base / "1" / "jobs.csv"));
  EXPECT_FALSE(slurp(base / "0" / "jobs.csv").empty());
}

TEST(Determinism, DifferentSeedGivesADifferentWorkload) {
  RunOptions a, b;
  a.seed = 1;
  b.seed = 2;
  EXPECT_NE(schedule_text(run_scenario(busy_gpu_cluster(300, 0.9), a)),
            schedule_text(run_scenario(busy_gpu_cluster(300, 0.9), b)));
}

class ShortcutEquivalence : public ::testing::TestWithParam<std::tuple<double, std::uint32_t>> {};

TEST_P(ShortcutEquivalence, ShortcutsGiveThePlainAlgorithmsSchedule) {
  const auto [load, max_job_test] = GetParam();
  Scenario plain = busy_gpu_cluster(2500, load);
  plain.scheduler.slurm.bf_max_job_test = max_job_test;
  plain.scheduler.slurm.shortcuts = false;
  Scenario fast = plain;
  fast.scheduler.slurm.shortcuts = true;
  // Every will-run answered from the release index is also replayed and must agree (throws otherwise).
  fast.scheduler.slurm.cross_check_will_run = true;
  const RunOutcome p = run_scenario(plain, RunOptions{});
  const RunOutcome f = run_scenario(fast, RunOptions{});
  EXPECT_EQ(schedule_text(p), schedule_text(f));
  EXPECT_GT(f.scheduler_stats.backfill_skipped, 0u);  // the shortcut did take effect
  EXPECT_GT(p.scheduler_stats.jobs_tested, f.scheduler_stats.jobs_tested);
}

// The whole policy at once: multifactor priority with Fair Tree over the synthetic users, QOS and account limits,
// a maintenance reservation and an account reservation. Shortcuts give the plain schedule, and two runs agree.
TEST(FullPolicy, ShortcutsAndDeterminismWithPriorityLimitsAndReservations) {
  Scenario plain = busy_gpu_cluster(2000, 1.1);
  PriorityConfig& p = plain.scheduler.priority;
  p.multifactor = true;
  p.weight_age = 1000;
  p.weight_fairshare = 5000;
  p.weight_job_size = 200;
  p.weight_tres_gpu = 300;
  plain.accounting.enforce.limits = plain.accounting.enforce.associations = true;
  QosConfig normal;
  normal.name = "normal";
  normal.limits.max_jobs_per_user = 6;
  normal.limits.max_tres_per_user.gpu = 48;
  plain.accounting.qos.push_back(normal);
  ReservationConfig maint;
  maint.name = "maint";
  maint.maint = true;
  maint.start_s = 30000;
  maint.end_s = 37200;
  maint.nodes = {0, 1, 2, 3};
  plain.cluster.reservations.push_back(maint);
  plain.scheduler.slurm.shortcuts = false;
  Scenario fast = plain;
  fast.scheduler.slurm.shortcuts = true;
  fast.scheduler.slurm.cross_check_will_run = true;
  const RunOutcome a = run_scenario(plain, RunOptions{});
  const RunOutcome b = run_scenario(fast, RunOptions{});
  const RunOutcome c = run_scenario(fast, RunOptions{});
  EXPECT_EQ(schedule_text(a), schedule_text(b));
  EXPECT_EQ(schedule_text(b), schedule_text(c));
  // The features did act: some job waited on a limit, and none ran on the reserved nodes during the window.
  std::uint64_t limited = 0;
  for (const ReasonEvent& e : b.recorder->reason_events()) {
    limited += e.reason == PendingReason::kQosMaxJobsPerUser || e.reason == PendingReason::kQosMaxGresPerUser;
  }
  EXPECT_GT(limited, 0u);
  for (JobIndex j = 0; j < b.state->job_count(); ++j) {
    const JobRuntime& rt = b.state->job(j);
    if (rt.start < 0) continue;
    const bool overlaps = to_seconds(rt.start) < maint.end_s && to_seconds(rt.end) > maint.start_s;
    for (const NodeAllocation& n : b.state->allocation(j)) EXPECT_FALSE(overlaps && n.node < 4) << j;
  }
}

INSTANTIATE_TEST_SUITE_P(LoadsAndDepths, ShortcutEquivalence,
                         ::testing::Values(std::make_tuple(0.7, 500u), std::make_tuple(1.2, 500u),
                                           std::make_tuple(1.5, 20u)));

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

class ClassicShortcutEquivalence : public ::testing::TestWithParam<SchedulerPolicy> {};

TEST_P(ClassicShortcutEquivalence, IncrementalPassesGiveTheFullRePlansSchedule) {
  // The real HPC2N trace (3,170 jobs) on its own machine size: 120 nodes x 2 CPUs.
  const std::string text = R"({"name": "hpc2n", "cluster": {"nodes": [{"prefix": "n", "count": 120, "cpus": 2}],
     "partitions": [{"name": "batch", "nodes": "ALL", "default": true}]},
     "workload": {"trace": {"path": ")" +
                           std::string(GPUTWIN_SHARED_DIR) + R"(/traces/hpc2n-subset.swf"}},
     "scheduler": {"policy": "fcfs"}})";
  Scenario plain = parse_scenario(text, "hpc2n.json", ".");
  plain.scheduler.policy = GetParam();
  plain.scheduler.slurm.shortcuts = false;
  Scenario fast = plain;
  fast.scheduler.slurm.shortcuts = true;
  const RunOutcome p = run_scenario(plain, RunOptions{});
  const RunOutcome f = run_scenario(fast, RunOptions{});
  EXPECT_EQ(schedule_text(p), schedule_text(f));
  EXPECT_GT(p.scheduler_stats.jobs_tested, f.scheduler_stats.jobs_tested);
  EXPECT_GT(f.summary.started, 3000u);
}

INSTANTIATE_TEST_SUITE_P(Policies, ClassicShortcutEquivalence,
                         ::testing::Values(SchedulerPolicy::kFcfs, SchedulerPolicy::kEasy,
                                           SchedulerPolicy::kEasyTextbook));

// The classic policies on a busy GPU cluster (quickstart's nodes and synthetic jobs at load 1.3), at both
// scheduling points: shortcuts give the plain algorithm's schedule, and two runs agree.
class ClassicGpuEquivalence : public ::testing::TestWithParam<std::tuple<SchedulerPolicy, SchedulingPoint>> {};

TEST_P(ClassicGpuEquivalence, ShortcutsAndDeterminism) {
  const auto [policy, point] = GetParam();
  Scenario plain = load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/quickstart.json");
  plain.synthetic.jobs = 1500;
  plain.synthetic.load = 1.3;
  plain.scheduler.policy = policy;
  plain.scheduler.scheduling_point = point;
  plain.scheduler.slurm.shortcuts = false;
  Scenario fast = plain;
  fast.scheduler.slurm.shortcuts = true;
  const RunOutcome p = run_scenario(plain, RunOptions{});
  const RunOutcome f = run_scenario(fast, RunOptions{});
  const RunOutcome again = run_scenario(fast, RunOptions{});
  EXPECT_EQ(schedule_text(p), schedule_text(f));
  EXPECT_EQ(schedule_text(f), schedule_text(again));
  EXPECT_GT(f.summary.started, 1000u);
  EXPECT_GT(f.scheduler_stats.backfill_starts, 0u);
}

INSTANTIATE_TEST_SUITE_P(PoliciesAndPoints, ClassicGpuEquivalence,
                         ::testing::Combine(::testing::Values(SchedulerPolicy::kEasy, SchedulerPolicy::kEasyTextbook),
                                            ::testing::Values(SchedulingPoint::kInstant, SchedulingPoint::kEvent)));

}  // namespace
}  // namespace gputwin
