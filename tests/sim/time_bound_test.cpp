// A run whose jobs chain past the bound on simulated time stops with an error naming the scenario instead of
// ticking on or overflowing (model/input_limits.hpp, kMaxSimulatedSeconds).
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

}  // namespace
}  // namespace gputwin
