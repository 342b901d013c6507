// Forecasts from a mirrored state, worked by hand: running jobs end at their predicted run time (never past their
// limit), pending jobs start as the policy places them, nodes out of service stay out.
#include "twin/forecast.hpp"

#include <gtest/gtest.h>

#include "tests/twin/twin_fixtures.hpp"

namespace gputwin {
namespace {

using test::gpu_node;
using test::gpu_partition;
using test::pending_job;
using test::running_job;

Scenario policy(SchedulerPolicy p) {
  Scenario s;
  s.name = "forecast-test";
  s.scheduler.policy = p;
  return s;
}

const JobForecast& find(const Forecast& f, std::uint64_t id) {
  for (const JobForecast& j : f.jobs) {
    if (j.job_id == id) return j;
  }
  throw std::runtime_error("no forecast for job " + std::to_string(id));
}

// Two 8-GPU nodes at t = 1000: job 1 (alice) on gpu01 since 900, limit 600; job 2 (bob) on gpu02 since 500, limit
// 3600. Pending: job 3 (alice) and job 4 (bob), one whole node each, limit 600.
Mirror two_busy_nodes(std::int64_t prio3 = 100, std::int64_t prio4 = 50) {
  Mirror m;
  RestJob j3 = pending_job(3, "alice", 950, 600, prio3);
  j3.start_time = 1500;  // slurmctld's own estimate
  m.apply(Snapshot{1000,
                   {gpu_node("gpu01", "ALLOCATED"), gpu_node("gpu02", "ALLOCATED")},
                   {gpu_partition("gpu[01-02]")},
                   {running_job(1, "alice", "gpu01", 900, 600), running_job(2, "bob", "gpu02", 500, 3600), j3,
                    pending_job(4, "bob", 960, 600, prio4)}});
  return m;
}

TEST(Forecast, OnTimeLimitsJobsStartWhenLimitsEnd) {
  // Limits as run times: job 1 ends at 900 + 600 = 1500, job 3 runs 1500-2100 on gpu01, job 4 follows at 2100
  // (gpu02 frees only at 500 + 3600 = 4100).
  const Mirror m = two_busy_nodes();
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  const Forecast f = forecast(m, RuntimeHistory{}, policy(SchedulerPolicy::kFcfs), o);
  EXPECT_EQ(f.made_at, 1000);
  EXPECT_EQ(f.running, 2u);
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(find(f, 3).predicted_start, 1500);
  EXPECT_EQ(find(f, 3).slurm_estimate, 1500);
  EXPECT_EQ(find(f, 4).predicted_start, 2100);
}

TEST(Forecast, RecentRunsPredictEarlierEnds) {
  // alice's last two runs took 100 and 200 s: mean 150. Job 1 (elapsed 100) ends at 900 + 150 = 1050; job 3
  // (alice, 150 s) runs 1050-1200; job 4 (bob, no history: his limit) starts at 1200.
  const Mirror m = two_busy_nodes();
  RuntimeHistory h;
  h.add("alice", "ml", "train", 100, 600);
  h.add("alice", "ml", "train", 200, 600);
  ForecastOptions o;
  o.predictor = RuntimePredictor::kUserRecent;
  const Forecast f = forecast(m, h, policy(SchedulerPolicy::kFcfs), o);
  EXPECT_EQ(find(f, 3).predicted_start, 1050);
  EXPECT_EQ(find(f, 4).predicted_start, 1200);
}

TEST(Forecast, AJobPastItsPredictionEndsAQuarterOfItsElapsedTimeLater) {
  // alice's runs take 50 s, but job 1 has run 100 s: it is expected to end max(60, 100 / 4) = 60 s from now.
  const Mirror m = two_busy_nodes();
  RuntimeHistory h;
  h.add("alice", "ml", "train", 50, 600);
  ForecastOptions o;
  o.predictor = RuntimePredictor::kUserRecent;
  const Forecast f = forecast(m, h, policy(SchedulerPolicy::kFcfs), o);
  EXPECT_EQ(find(f, 3).predicted_start, 1060);
}

TEST(Forecast, SlurmPolicyStartsTheHigherPriorityFirst) {
  // slurmctld's priorities are kept: job 4 (priority 500) goes before job 3 (100) when gpu01 frees at 1500.
  const Mirror m = two_busy_nodes(100, 500);
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  const Forecast f = forecast(m, RuntimeHistory{}, policy(SchedulerPolicy::kSlurm), o);
  const std::int64_t s3 = find(f, 3).predicted_start;
  const std::int64_t s4 = find(f, 4).predicted_start;
  EXPECT_GE(s4, 1500);
  EXPECT_LE(s4, 1500 + 60);  // the main scheduler runs on the job's end (within its batch delay)
  EXPECT_GE(s3, 2100);
  EXPECT_LE(s3, 2100 + 60);
}

TEST(Forecast, DrainedNodesTakeNoJobsAndHaveNoPredictedReturn) {
  Mirror m;
  RestNode drained = gpu_node("gpu02");
  drained.flags = {"DRAIN"};
  drained.reason = "maintenance";
  m.apply(Snapshot{1000,
                   {gpu_node("gpu01", "ALLOCATED"), drained},
                   {gpu_partition("gpu[01-02]")},
                   {running_job(1, "alice", "gpu01", 900, 600), pending_job(3, "bob", 950, 600, 10)}});
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  const Forecast f = forecast(m, RuntimeHistory{}, policy(SchedulerPolicy::kFcfs), o);
  EXPECT_EQ(find(f, 3).predicted_start, 1500);  // waits for gpu01, not the idle drained gpu02
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].node, "gpu02");
  EXPECT_EQ(f.nodes[0].state, "DRAINED");
  EXPECT_EQ(f.nodes[0].predicted_return, -1);
}

TEST(Forecast, ARebootingNodeReturnsAfterTheRebootTime) {
  Mirror m;
  RestNode rebooting = gpu_node("gpu02", "DOWN");
  rebooting.flags = {"REBOOT_ISSUED"};
  m.apply(Snapshot{1000,
                   {gpu_node("gpu01", "ALLOCATED"), rebooting},
                   {gpu_partition("gpu[01-02]")},
                   {running_job(1, "alice", "gpu01", 900, 3600), pending_job(3, "bob", 950, 600, 10)}});
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  o.reboot_s = 240;
  const Forecast f = forecast(m, RuntimeHistory{}, policy(SchedulerPolicy::kFcfs), o);
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].predicted_return, 1240);
  EXPECT_EQ(find(f, 3).predicted_start, 1240);
}

TEST(Forecast, HorizonBoundsThePrediction) {
  const Mirror m = two_busy_nodes();
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  o.horizon_s = 900;  // job 3 starts at +500, job 4 at +1100: beyond
  const Forecast f = forecast(m, RuntimeHistory{}, policy(SchedulerPolicy::kFcfs), o);
  EXPECT_EQ(find(f, 3).predicted_start, 1500);
  EXPECT_EQ(find(f, 4).predicted_start, -1);
}

TEST(RuntimeHistory, RatioIsALeastSquaresFitThroughTheOrigin) {
  RuntimeHistory h;
  h.add("alice", "ml", "train", 50, 100);
  h.add("alice", "ml", "train", 100, 200);
  // (50*100 + 100*200) / (100^2 + 200^2) = 25000 / 50000 = 0.5
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRatio, "alice", "ml", "train", 600), 300);
  // bob has no history: the account's fit applies; a stranger in another account gets the cluster's.
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRatio, "bob", "ml", "train", 1000), 500);
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRatio, "carol", "physics", "train", 1000), 500);
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRecent, "carol", "physics", "train", 1000), 1000);
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRecent, "alice", "ml", "train", 1000), 75);
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRecent, "alice", "ml", "train", 60), 60);  // capped at the limit
  EXPECT_EQ(h.predict(RuntimePredictor::kTimeLimit, "alice", "ml", "train", 1000), 1000);
}

TEST(RuntimeHistory, RecentKeepsTheLastTwoRuns) {
  RuntimeHistory h;
  h.add("alice", "ml", "train", 1000, 5000);
  h.add("alice", "ml", "train", 100, 5000);
  h.add("alice", "ml", "train", 300, 5000);
  EXPECT_EQ(h.predict(RuntimePredictor::kUserRecent, "alice", "ml", "train", 5000), 200);
}

TEST(RuntimePredictor, NamesRoundTrip) {
  for (auto p : {RuntimePredictor::kTimeLimit, RuntimePredictor::kUserRecent, RuntimePredictor::kUserRatio})
    EXPECT_EQ(parse_runtime_predictor(runtime_predictor_name(p)), p);
  EXPECT_FALSE(parse_runtime_predictor("oracle").has_value());
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

TEST(Forecast, AShortJobIsBackfilledBeforeABlockedWideJobsReservation) {
  // gpu01 busy until 1300 by its limit, gpu02 and gpu04 until 1900; gpu03 idle. Job 10 (2 nodes, priority 1000)
  // waits for two nodes: its reservation is gpu03 and gpu01 at 1300. Job 11 (8 GPUs, limit 600) would delay it; job
  // 12 (2 GPUs, limit 120) ends before 1300, so backfill starts it at once, as slurmctld does. Job 11 then starts
  // when gpu02 or gpu04 frees, at 1900.
  Mirror m;
  RestJob wide = pending_job(10, "root", 900, 600, 1000);
  wide.node_count = 2;
  wide.tres_req = "cpu=2,mem=0,node=2,billing=2,gres/gpu=16";
  wide.cpus = 2;
  RestJob long_job = pending_job(11, "nobody", 910, 600, 500);
  RestJob short_job = pending_job(12, "root", 920, 120, 100);
  short_job.gpus_per_node = 2;
  short_job.tres_req = "cpu=1,mem=0,node=1,billing=1,gres/gpu=2";
  m.apply(Snapshot{1000,
                   {gpu_node("gpu01", "ALLOCATED"), gpu_node("gpu02", "ALLOCATED"), gpu_node("gpu03"),
                    gpu_node("gpu04", "ALLOCATED")},
                   {gpu_partition("gpu[01-04]")},
                   {running_job(1, "a", "gpu01", 700, 600), running_job(2, "a", "gpu02", 700, 1200),
                    running_job(4, "a", "gpu04", 700, 1200), wide, long_job, short_job}});
  ForecastOptions o;
  o.predictor = RuntimePredictor::kTimeLimit;
  Scenario p = policy(SchedulerPolicy::kSlurm);
  p.scheduler.slurm.bf_interval_s = 5;
  const Forecast f = forecast(m, RuntimeHistory{}, p, o);
  EXPECT_LE(find(f, 12).predicted_start, 1000 + 10);
  EXPECT_GE(find(f, 10).predicted_start, 1300);
  EXPECT_LE(find(f, 10).predicted_start, 1300 + 10);
  EXPECT_GE(find(f, 11).predicted_start, 1900);
  EXPECT_LE(find(f, 11).predicted_start, 1900 + 10);
}

}  // namespace
}  // namespace gputwin
