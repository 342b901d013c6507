// A run's results written while it goes on (ResultsStream) are the results written after it: jobs.csv byte for byte,
// the jobs, node_events and job_reasons tables row for row by rowid. Rows that changed after they were written are
// dropped and written again; a stream that never finishes leaves no file behind.
#include "results/results_stream.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "model/scenario.hpp"
#include "results/results_store.hpp"
#include "sim/runner.hpp"
#include "sim/stream_gate.hpp"
#include "tests/support/file_text.hpp"

namespace gputwin {
namespace {

using testing::slurp;

/// Every row of `table` in rowid order, with its rowid, one line each.
std::string dump(const std::filesystem::path& db_path, const std::string& table) {
  return testing::sqlite_rows(db_path, "SELECT rowid, * FROM " + table + " ORDER BY rowid");
}

/// 64 GPU nodes, 3,000 jobs, faults 50 times the llama3 rates with periodic health checks whose detections requeue
/// jobs, and a 30 s epilog: jobs end, and some end again after a requeue, well before the run does.
Scenario faulty_cluster() {
  Scenario s = load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/health-check-interval.json",
                             {"/cluster/nodes/0/count=64", "/workload/synthetic/jobs=3000", "/faults/rate_scale=50",
                              R"(/faults/active_checks=[{"checks":["dcgm_diag_3"],"period":"01:00:00","phase":600}])",
                              "/faults/requeue_on_detection=true"});
  s.scheduler.slurm.epilog_s = 30;
  return s;
}

class ResultsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(GPUTWIN_BINARY_DIR) / "results-stream-test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  /// Expects the same jobs.csv and jobs, node_events and job_reasons tables in folders `a` and `b`.
  void expect_same_results(const std::filesystem::path& a, const std::filesystem::path& b) {
    EXPECT_EQ(slurp(a / "jobs.csv"), slurp(b / "jobs.csv"));
    for (const char* table : {"jobs", "node_events", "job_reasons"}) {
      EXPECT_EQ(dump(a / "results.sqlite", table), dump(b / "results.sqlite", table)) << table;
    }
  }
  std::filesystem::path dir_;
};

TEST_F(ResultsStreamTest, WrittenWhileTheRunGoesOnEqualsWrittenAfterIt) {
  StreamGate gate(dir_ / "streamed", 16);
  RunOptions streamed_options;
  streamed_options.gate = &gate;
  const RunOutcome streamed = run_scenario(faulty_cluster(), streamed_options);
  write_results(dir_ / "streamed", run_info(streamed), *streamed.state, streamed.summary, *streamed.recorder, nullptr,
                nullptr, nullptr, nullptr, gate.stream());
  const RunOutcome after = run_scenario(faulty_cluster(), RunOptions{});
  write_results(dir_ / "after", run_info(after), *after.state, after.summary, *after.recorder);

  // The run requeued jobs (some ends were not final), and the stream wrote most rows before it ended.
  EXPECT_GT(after.summary.requeues, 0u);
  const ResultsStream::Stats& stats = gate.stream()->stats();
  EXPECT_FALSE(stats.dropped);
  EXPECT_GT(stats.jobs, 1000u);
  EXPECT_LT(stats.jobs, after.state->job_count());
  EXPECT_GT(stats.node_events, 1000u);
  EXPECT_GT(stats.reasons, 0u);
  expect_same_results(dir_ / "streamed", dir_ / "after");
  for (const char* name : kResultsTemporaryFiles) EXPECT_FALSE(std::filesystem::exists(dir_ / "streamed" / name));
}

TEST_F(ResultsStreamTest, ASmallRunIsHandedOverInSmallBatchesWhileItGoesOn) {
  // 3,000 jobs: fewer than one batch of kBatchJobs, so a fixed batch of that size would leave every row for after
  // the run; the adapted batch (256 jobs) hands them over during it.
  EXPECT_EQ(ResultsStream::adapted_batch_jobs(3000), 256u);
  EXPECT_EQ(ResultsStream::adapted_batch_jobs(10'000), 312u);  // about 32 batches
  EXPECT_EQ(ResultsStream::adapted_batch_jobs(1'000'000), ResultsStream::kBatchJobs);
  StreamGate gate(dir_ / "streamed");
  RunOptions options;
  options.gate = &gate;
  const RunOutcome o = run_scenario(faulty_cluster(), options);
  write_results(dir_ / "streamed", run_info(o), *o.state, o.summary, *o.recorder, nullptr, nullptr, nullptr, nullptr,
                gate.stream());
  const ResultsStream::Stats& stats = gate.stream()->stats();
  EXPECT_FALSE(stats.dropped);
  EXPECT_GT(stats.jobs, 2000u);
  EXPECT_GT(stats.node_events, 1000u);
  const RunOutcome after = run_scenario(faulty_cluster(), RunOptions{});
  write_results(dir_ / "after", run_info(after), *after.state, after.summary, *after.recorder);
  expect_same_results(dir_ / "streamed", dir_ / "after");
}

TEST_F(ResultsStreamTest, RowsChangedAfterTheyWereWrittenAreWrittenAgain) {
  // A stream that hands nothing over during the run, then everything settled after it.
  StreamGate gate(dir_ / "streamed", SIZE_MAX);
  RunOptions options;
  options.gate = &gate;
  RunOutcome o = run_scenario(faulty_cluster(), options);
  ResultsStream& stream = *gate.stream();
  stream.take_all_settled(kNever - 1);
  // A row the stream has written changes (as a run that altered an ended job would).
  o.state->job_mut(0).priority += 1;
  write_results(dir_ / "streamed", run_info(o), *o.state, o.summary, *o.recorder, nullptr, nullptr, nullptr, nullptr,
                &stream);
  EXPECT_TRUE(stream.stats().dropped);
  EXPECT_EQ(stream.stats().jobs, o.state->job_count());  // every job had ended
  write_results(dir_ / "after", run_info(o), *o.state, o.summary, *o.recorder);
  expect_same_results(dir_ / "streamed", dir_ / "after");
  EXPECT_NE(
      dump(dir_ / "streamed" / "results.sqlite", "jobs").find("|" + std::to_string(o.state->job(0).priority) + "|"),
      std::string::npos);
}

TEST_F(ResultsStreamTest, AStreamNeverFinishedLeavesNoFiles) {
  {
    StreamGate gate(dir_, 16);
    RunOptions options;
    options.gate = &gate;
    const RunOutcome o = run_scenario(faulty_cluster(), options);
    EXPECT_TRUE(std::filesystem::exists(dir_ / kResultsTemporaryFiles[0]));
    EXPECT_TRUE(std::filesystem::exists(dir_ / kResultsTemporaryFiles[1]));
  }  // the run failed: write_results never came
  for (const char* name : kResultsTemporaryFiles) EXPECT_FALSE(std::filesystem::exists(dir_ / name));
}

TEST_F(ResultsStreamTest, AFolderThatCannotBeCreatedIsAResultsError) {
  RunOutcome o = run_scenario(faulty_cluster(), RunOptions{});
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "not a folder";
  EXPECT_THROW(ResultsStream(dir_ / "file" / "out", *o.state, *o.recorder, 0), ResultsError);
}

}  // namespace
}  // namespace gputwin
