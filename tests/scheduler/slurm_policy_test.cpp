// Hand-worked schedules for the `slurm` policy on 2 nodes x (64 CPUs, 8 GPUs), slurmctld started at t=0
// (phase 0): background tick every 1 s, batch_sched_delay 3 s, full pass every 60 s, backfill every 30 s,
// bf_resolution 60 s, time-limit checks every 30 s. Jobs are (id, submit, nodes, CPUs, GPUs/node, limit, run).
#include <gtest/gtest.h>

#include "scheduler/slurm_scheduler.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;
using testing::node_lists;
using testing::start_times;

Scenario gpu_pair() {
  return make_scenario(2, 64, 8, SchedulerPolicy::kSlurm);
}

// J1 holds n001 (all 8 GPUs) from 11 to 311 with a 600 s limit; J2 wants both nodes and blocks the partition.
std::vector<JobSpec> blocked_head(std::int64_t j3_limit, std::uint32_t j2_gpus_per_node = 8) {
  return {make_job(1, 10, 1, 8, 8, 600, 300), make_job(2, 20, 2, 16, j2_gpus_per_node, 600, 100),
          make_job(3, 25, 1, 4, 4, j3_limit, 100)};
}

TEST(SlurmPolicy, MainSchedulerBlocksThePartitionAndBackfillStartsWhatFits) {
  // Submit at 10 -> first background tick at or after max(10, last pass 0 + 3) -> J1 starts at 11 on n001.
  // J2 (2 nodes) at tick 21: NODES_BUSY, reason Resources, the partition fails for the pass.
  // J3 at tick 26: J2 fails the partition first, J3 gets reason Priority: the main scheduler never starts it.
  // Backfill at 30: J2's will-run start is J1's expected end 11 + 600 = 611: whole nodes n[001-002] reserved
  // in [floor(611/60)*60, ceil((611+600)/60)*60) = [600, 1260). J3 (limit 300) needs [30, 330]: fits now on n002.
  // J1 ends at 311 -> epilog -> schedule(): J2 starts at 311 (J3 ended at 130).
  auto jobs = blocked_head(300);
  auto o = run_jobs(gpu_pair(), jobs, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 311, 30}));
  EXPECT_EQ(node_lists(o), (std::vector<std::string>{"n001", "n[001-002]", "n002"}));
  EXPECT_EQ(o.scheduler_stats.backfill_starts, 1u);
}

TEST(SlurmPolicy, BfResolutionRoundsTheReservationStartDown) {
  // J3 with a 580 s limit needs [30, 610]. J2's reservation starts at floor(611/60)*60 = 600 < 610, so J3 cannot
  // backfill; it waits for the main scheduler: J2 runs [311, 411), then J3 starts at 411.
  auto o = run_jobs(gpu_pair(), blocked_head(580), RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 311, 411}));
  // With bf_resolution=1 the reservation starts at 611 > 610: J3 backfills at 30.
  Scenario fine = gpu_pair();
  fine.scheduler.slurm.bf_resolution_s = 1;
  auto o2 = run_jobs(fine, blocked_head(580), RunOptions{});
  EXPECT_EQ(start_times(o2), (std::vector<std::int64_t>{11, 311, 30}));
}

TEST(SlurmPolicy, BfResolutionRoundsOnTheWallClock) {
  // slurmctld floors time_t values, so the bf_resolution grid is on the wall clock. With t = 0 at Unix 1795548289
  // (49 s past a minute), J2's will-run start 611 is Unix ...289 + 611 = ...900, a whole minute: the reservation
  // starts at 611 itself, after J3's [30, 610], and J3 backfills at 30 (on a grid from t = 0 it was 600: blocked).
  Scenario shifted = gpu_pair();
  shifted.scheduler.slurm.epoch_unix_s = 1795548289;
  auto o = run_jobs(shifted, blocked_head(580), RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 311, 30}));
  // One second earlier on the clock (48 s past): floor(611 + 48, 60) - 48 = 552 < 610, blocked again.
  shifted.scheduler.slurm.epoch_unix_s = 1795548288;
  auto o2 = run_jobs(shifted, blocked_head(580), RunOptions{});
  EXPECT_EQ(start_times(o2), (std::vector<std::int64_t>{11, 311, 411}));
}

TEST(SlurmPolicy, BackfillReservesWholeNodes) {
  // J2 wants 4 GPUs on each of 2 nodes; J3 (1 node, 4 GPUs, limit 1200) would fit beside J2 on n002 at GPU
  // granularity, but backfill reserves whole nodes n[001-002] from 600, and J3's window [30, 1230] overlaps it.
  // J3 therefore starts only when the main scheduler runs at J1's end: 311, next to J2.
  auto jobs = blocked_head(1200, 4);
  jobs[2].time_limit_s = 1200;
  auto o = run_jobs(gpu_pair(), jobs, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 311, 311}));
  // EASY at GPU granularity starts J3 as soon as it is submitted? No: our EASY also keeps the head's nodes,
  // but it is event-driven: J3 starts when J1 ends as well. The difference to Slurm is the timing of J1 and J2.
  Scenario easy = gpu_pair();
  easy.scheduler.policy = SchedulerPolicy::kEasy;
  auto e = run_jobs(easy, jobs, RunOptions{});
  EXPECT_EQ(start_times(e), (std::vector<std::int64_t>{10, 310, 310}));
}

TEST(SlurmPolicy, ABlockedPartitionDoesNotBlockAnotherPartitionsNodes) {
  // Partitions a = n001 and b = n002. J2 blocks partition a; J3 in b still starts in the same pass at 26.
  Scenario s = gpu_pair();
  s.cluster.partitions[0].name = "a";
  s.cluster.partitions[0].nodes = {0};
  PartitionConfig b = s.cluster.partitions[0];
  b.name = "b";
  b.is_default = false;
  b.nodes = {1};
  s.cluster.partitions.push_back(b);
  std::vector<JobSpec> jobs{make_job(1, 10, 1, 8, 8, 600, 300), make_job(2, 20, 1, 8, 8, 600, 100),
                            make_job(3, 25, 1, 4, 4, 600, 100)};
  jobs[2].partition = "b";
  auto o = run_jobs(s, jobs, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 311, 26}));
}

TEST(SlurmPolicy, TimeLimitIsEnforcedAtThe30SecondCheckAfterLimitPlusOverTimeLimit) {
  // Started at 11 with a 600 s limit: due at 611, killed by the check at 630 (TIMEOUT, end 630).
  auto o = run_jobs(gpu_pair(), {make_job(1, 10, 1, 8, 8, 600, 700)}, RunOptions{});
  EXPECT_EQ(o.state->job(0).state, JobState::kTimeout);
  EXPECT_EQ(to_seconds(o.state->job(0).end), 630);
  // A job that overruns its limit but exits before the next check completes normally (ends 11 + 615 = 626).
  auto o2 = run_jobs(gpu_pair(), {make_job(1, 10, 1, 8, 8, 600, 615)}, RunOptions{});
  EXPECT_EQ(o2.state->job(0).state, JobState::kCompleted);
  EXPECT_EQ(to_seconds(o2.state->job(0).end), 626);
  // OverTimeLimit=1: due at 671, killed at 690.
  Scenario s = gpu_pair();
  s.scheduler.slurm.over_time_limit_min = 1;
  auto o3 = run_jobs(s, {make_job(1, 10, 1, 8, 8, 600, 700)}, RunOptions{});
  EXPECT_EQ(to_seconds(o3.state->job(0).end), 690);
}

TEST(SlurmPolicy, DrainedNodesAreNeverAllocated) {
  // n001 is configured DRAIN: both 8-GPU jobs run on n002, one after the other (J1 11-111, J2 from 111).
  Scenario s = gpu_pair();
  s.cluster.nodes[0].available = false;
  auto o = run_jobs(s, {make_job(1, 10, 1, 8, 8, 600, 100), make_job(2, 10, 1, 8, 8, 600, 100)}, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 111}));
  EXPECT_EQ(node_lists(o), (std::vector<std::string>{"n002", "n002"}));
  // A 2-node job cannot fit the partition any more: rejected at submit, as slurmctld does.
  auto rejected = run_jobs(s, {make_job(1, 10, 2, 16, 8, 600, 100)}, RunOptions{});
  EXPECT_EQ(rejected.rejected, 1u);
}

TEST(SlurmPolicy, ShortcutsKeepBackfillTimingWhenOnlyUntestableJobsRemain) {
  // MaxTime 1000 s: J9 (limit 2000) can never be tested by backfill. Once the testable jobs are gone, the plain
  // agent waits for a change and runs on the next 1 s poll; the shortcut must do the same.
  std::vector<JobSpec> jobs{make_job(1, 10, 1, 8, 8, 600, 300), make_job(9, 12, 2, 16, 8, 2000, 100),
                            make_job(2, 100, 2, 16, 8, 600, 100), make_job(3, 100, 1, 4, 4, 300, 100)};
  std::vector<std::int64_t> starts[2];
  for (int shortcuts = 0; shortcuts < 2; ++shortcuts) {
    Scenario s = gpu_pair();
    s.cluster.partitions[0].max_time_s = 1000;
    s.scheduler.slurm.shortcuts = shortcuts == 1;
    starts[shortcuts] = start_times(run_jobs(s, jobs, RunOptions{}));
  }
  EXPECT_EQ(starts[0], starts[1]);
  EXPECT_EQ(starts[1][3], -1);  // J9 (last by id: 1, 2, 3, 9) never starts
}

TEST(SlurmPolicy, KillTimeFollowsThePhaseOfTheCheck) {
  SlurmParameters p;
  p.phase_s = 7;  // slurmctld started at -7 s: checks at 23, 53, ...
  EXPECT_EQ(slurm_timeout_kill_time(from_seconds(0), 30, p), from_seconds(53));
  EXPECT_EQ(slurm_timeout_kill_time(from_seconds(0), 23, p), from_seconds(23));
}

TEST(SlurmPolicy, SubmitsWaitForTheBackgroundTickAndBatchSchedDelay) {
  // Two jobs that fit at once: J1 at 10 starts at tick 11; J2 submitted at 12 would be served at tick 13, but
  // the last pass ran at 11 and batch_sched_delay is 3 s: first tick with now - 11 >= 3 is 14.
  auto o = run_jobs(gpu_pair(), {make_job(1, 10, 1, 8, 1, 600, 100), make_job(2, 12, 1, 8, 1, 600, 100)}, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{11, 14}));
  Scenario s = gpu_pair();
  s.scheduler.slurm.batch_sched_delay_s = 0;
  auto o2 = run_jobs(s, {make_job(1, 10, 1, 8, 1, 600, 100), make_job(2, 12, 1, 8, 1, 600, 100)}, RunOptions{});
  EXPECT_EQ(start_times(o2), (std::vector<std::int64_t>{11, 13}));
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

TEST(SlurmPolicy, AJobPastItsLimitStillBlocksBackfillForTheHeadJob) {
  // One node, 8 GPUs. J1 (4 GPUs, limit 60 s, would run 1000 s) starts at 3; its expected end 63 passes, and
  // the 30 s time-limit check kills it at 90. J2 (all 8 GPUs) waits from 1. J3 (4 GPUs, limit 600 s) arrives at
  // 65. In the backfill cycles after 63, J2's will-run (_future_run_test) removes J1 up front (it ends before
  // start_res = now), the test fits, so J2's start is "now"; it cannot start on the live resources and reserves
  // the node from now, so J3 cannot backfill. J1 dies at 90, J2 starts at 90 and ends at 190, then J3 starts.
  // bf_interval 5 (as on the dev-1 recording's Slurm): cycles run at 65, 70, ... while J1 is overdue.
  Scenario s = make_scenario(1, 64, 8, SchedulerPolicy::kSlurm);
  s.scheduler.slurm.bf_interval_s = 5;
  std::vector<JobSpec> jobs{make_job(1, 0, 1, 4, 4, 60, 1000), make_job(2, 1, 1, 8, 8, 600, 100),
                            make_job(3, 65, 1, 4, 4, 600, 100)};
  auto o = run_jobs(s, jobs, RunOptions{});
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 90, 190}));
  EXPECT_EQ(o.state->job(0).state, JobState::kTimeout);
}

}  // namespace
}  // namespace gputwin
