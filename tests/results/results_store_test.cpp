// The results store writes real SQLite files, transactionally, with Slurm's names and hostlists.
#include "results/results_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "sim/runner.hpp"

namespace gputwin {
namespace {

class ResultsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(GPUTWIN_BINARY_DIR) / "results-store-test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    outcome_ = run_scenario(load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/tests/golden/four_nodes_fcfs.json"),
                            RunOptions{});
  }
  std::string query(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2((dir_ / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        out += (c ? "|" : "") + std::string(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out += "\n";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }
  std::filesystem::path dir_;
  RunOutcome outcome_;
};

TEST_F(ResultsStoreTest, JobsTableHasSacctLikeColumnsAndHostlists) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(query("SELECT job_id, user, partition, submit_time, start_time, end_time, state, nodes, cpus, gpus, "
                  "time_limit, node_list FROM jobs ORDER BY job_id"),
            "1|u1|batch|0|0|100|COMPLETED|3|3|0|100|n[001-003]\n"
            "2|u2|batch|1|100|200|COMPLETED|3|3|0|100|n[001-003]\n"
            "3|u3|batch|2|200|300|COMPLETED|4|4|0|100|n[001-004]\n"
            "4|u1|batch|3|300|600|COMPLETED|1|1|0|300|n001\n");
  EXPECT_EQ(query("SELECT scenario, seed, policy FROM runs"), "four-nodes-fcfs|1|fcfs\n");
  EXPECT_EQ(query("SELECT value FROM summary WHERE key='makespan_s'"), "600.0\n");
  // Node history of n001: every job uses it; at each job end it is released (IDLE) and taken again.
  EXPECT_EQ(query("SELECT time, state FROM node_events WHERE node_index=0 ORDER BY rowid"),
            "0|ALLOCATED\n100|IDLE\n100|ALLOCATED\n200|IDLE\n200|ALLOCATED\n300|IDLE\n300|ALLOCATED\n600|IDLE\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "summary.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "jobs.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / ".results.sqlite.tmp"));
}

TEST_F(ResultsStoreTest, FailureLeavesNoPartialResults) {
  std::filesystem::create_directories(dir_.parent_path());
  std::ofstream(dir_) << "a file where the folder should be";
  EXPECT_THROW(write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder),
               ResultsError);
  std::filesystem::remove(dir_);
}

TEST_F(ResultsStoreTest, RewritingReplacesTheOldResultsWhole) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(query("SELECT count(*) FROM jobs"), "4\n");
}

}  // namespace
}  // namespace gputwin
