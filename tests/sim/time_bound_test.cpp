// A run whose jobs chain past the bound on simulated time stops with an error naming the scenario instead of
// ticking on or overflowing (model/input_limits.hpp, kMaxSimulatedSeconds); so does one that would requeue a job
// for ever (kMaxRequeuesPerJob).
#include <gtest/gtest.h>

#include <string>

#include "model/errors.hpp"
#include "model/input_limits.hpp"
#include "model/scenario.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

/// One node and `jobs` whole-node jobs of `limit_minutes` each, all submitted at 0: they run one after another.
Scenario chain(int jobs, std::int64_t limit_minutes) {
  std::string list;
  for (int i = 1; i <= jobs; ++i) {
    list += (i > 1 ? "," : "") + std::string(R"({"id": )") + std::to_string(i) +
            R"(, "cpus": 4, "run_time": 1000000000, "time_limit": )" + std::to_string(limit_minutes) + "}";
  }
  return parse_scenario(R"({"name": "chain", "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 4}],
    "partitions": [{"name": "p", "nodes": "ALL", "default": true}]}, "workload": {"jobs": [)" +
                            list + R"(]}, "scheduler": {"policy": "fcfs"}})",
                        "chain.json", "/base");
}

TEST(SimulatedTimeBound, JobsChainedPastTheBoundStopTheRunWithAnError) {
  // 101 jobs killed at 16,666,666 minutes (999,999,960 s) each: the last would end at 1.01e11 s, past the 1e11 s
  // bound.
  try {
    run_scenario(chain(101, 16'666'666), RunOptions{});
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("the run reached 100000000000 simulated seconds"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("1 jobs not ended"), std::string::npos) << e.what();
  }
}

TEST(SimulatedTimeBound, JobsWithinTheBoundRunToTheEnd) {
  // 100 such jobs end at 9.9999996e10 s, inside the bound: every one ends (TIMEOUT at its limit).
  const RunOutcome outcome = run_scenario(chain(100, 16'666'666), RunOptions{});
  EXPECT_EQ(outcome.summary.by_state.at("TIMEOUT"), 100u);
  EXPECT_LE(outcome.summary.makespan_s, static_cast<double>(kMaxSimulatedSeconds));
}

/// Two autoscaled spot nodes, each reclaimed about 24 times a day, and one job needing both for `run_s` seconds.
Scenario spot_pair(std::int64_t run_s) {
  const std::string run = std::to_string(run_s);
  return parse_scenario(R"({"name": "spot-pair", "seed": 3,
    "cluster": {"nodes": [{"prefix": "s", "count": 2, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100"}],
                "partitions": [{"name": "p", "nodes": "ALL", "default": true}]},
    "workload": {"jobs": [{"id": 7, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": )" +
                            run + R"(, "time_limit": )" + run + R"(}]},
    "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
    "autoscaler": {"poll_s": 20, "idle_window_s": 300, "scale_down_s": 30},
    "cost": {"prices": [{"usd_per_gpu_hour": 1, "model": "spot"}], "spot_interruptions_per_node_day": 24}})",
                        "spot-pair.json", "/base");
}

TEST(RequeueBound, AJobThatNoRunCanFinishStopsTheRunWithAnErrorNamingIt) {
  // A 10-day job: every run is lost to a reclaim and the nodes come back, so Slurm would requeue it for ever
  // (node-DOWN requeues are not counted against MaxBatchRequeue). The run stops after kMaxRequeuesPerJob requeues.
  try {
    run_scenario(spot_pair(864000), RunOptions{});
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("job 7 was requeued more than " + std::to_string(kMaxRequeuesPerJob) + " times"),
              std::string::npos)
        << what;
  }
}

TEST(RequeueBound, ARunWithAStopTimeIsBoundedByIt) {
  // The same loop with --until 60 days: the run stops there, the job requeued more often than the bound by then.
  RunOptions options;
  options.stop_at = from_seconds(60LL * 86400);
  const RunOutcome outcome = run_scenario(spot_pair(864000), options);
  EXPECT_GT(outcome.state->job(0).restarts, kMaxRequeuesPerJob);
  EXPECT_NE(outcome.state->job(0).state, JobState::kCompleted);
}

TEST(RequeueBound, AJobRequeuedFewerTimesFinishes) {
  // A 10-minute job: a run gets through between reclaims, and the job completes.
  const RunOutcome outcome = run_scenario(spot_pair(600), RunOptions{});
  EXPECT_EQ(outcome.summary.by_state.at("COMPLETED"), 1u);
}

}  // namespace
}  // namespace gputwin
