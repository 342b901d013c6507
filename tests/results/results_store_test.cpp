// The results store writes real SQLite files, transactionally, with Slurm's names and hostlists.
#include "results/results_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "results/results_db.hpp"
#include "results/run_view.hpp"
#include "sim/runner.hpp"
#include "tests/support/file_text.hpp"

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
  std::string query(const std::string& sql) { return testing::sqlite_rows(dir_ / "results.sqlite", sql); }
  /// Runs `sql` on the written results.sqlite read-write (a hand edit).
  void edit(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }
  /// What opening the results with the readers' ResultsDb says: "ok", or the error.
  std::string open_error(ResultsCheck check = ResultsCheck::kWhole) {
    try {
      ResultsDb db(dir_ / "results.sqlite", check);
    } catch (const InputError& e) {
      return e.what();
    }
    return "ok";
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

TEST(RunRecorder, MergesTheSameChangeOfConsecutiveNodes) {
  RunRecorder r(true, false);
  const auto alloc = NodeState::kAllocated;
  r.on_node_state(4, alloc, 10);
  r.on_node_state(5, alloc, 10);
  r.on_node_state(6, alloc, 10);
  r.on_node_state(8, alloc, 10);              // not next to 6
  r.on_node_state(9, NodeState::kIdle, 10);   // another state
  r.on_node_state(10, NodeState::kIdle, 11);  // another time
  r.on_node_state(11, NodeState::kIdle, 11);
  r.on_node_state(10, NodeState::kIdle, 11);  // back to an earlier node: told again, kept apart
  std::string got;
  for (const NodeEvent& e : r.node_events())
    got += std::to_string(e.time) + ":" + std::to_string(e.node) + "x" + std::to_string(e.count) + " ";
  EXPECT_EQ(got, "10:4x3 10:8x1 10:9x1 11:10x2 11:10x1 ");
}

TEST_F(ResultsStoreTest, NodeEventRowsCoverConsecutiveNodesAndExpandToEveryChange) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  // Job 1 takes n001-n003 at 0: one row of 3 nodes; job 4 alone on n001 at 300.
  EXPECT_EQ(query("SELECT time, node_index, state, node_count FROM node_events WHERE time IN (0, 300) ORDER BY rowid"),
            "0|0|ALLOCATED|3\n300|0|IDLE|4\n300|0|ALLOCATED|1\n");
  // Expanded, the rows are the recorder's changes in its order.
  std::string expanded, recorded;
  const std::string rows = query("SELECT time, node_index, state, node_count FROM node_events ORDER BY rowid");
  std::istringstream in(rows);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string time, node, state, count;
    std::getline(fields, time, '|');
    std::getline(fields, node, '|');
    std::getline(fields, state, '|');
    std::getline(fields, count, '|');
    for (int k = 0; k < std::stoi(count); ++k)
      expanded += time + " " + std::to_string(std::stoi(node) + k) + " " + state + "\n";
  }
  for (const NodeEvent& e : outcome_.recorder->node_events()) {
    for (std::uint32_t k = 0; k < e.count; ++k)
      recorded += std::to_string(to_seconds(e.time)) + " " + std::to_string(e.node + k) + " " +
                  std::string(node_state_name(e.state)) + "\n";
  }
  EXPECT_EQ(expanded, recorded);
  EXPECT_LT(std::count(rows.begin(), rows.end(), '\n'), std::count(recorded.begin(), recorded.end(), '\n'));
}

TEST_F(ResultsStoreTest, NodeEventLogFindsRowsUpToATimeByRowidAsByTheTimeColumn) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  // Written in time order, node_events gets no time index: the event log bisects rowids instead.
  EXPECT_EQ(query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'node_events'"), "0\n");
  const auto node_log = [&] {
    const RunView view(dir_);
    std::string out;
    for (const std::int64_t t : {-1, 0, 1, 99, 100, 101, 200, 299, 300, 599, 600, 601, 100000}) {
      for (const std::size_t limit : {1, 2, 3, 5, 100}) {
        out += std::to_string(t) + "/" + std::to_string(limit) + ":";
        for (const EventLine& e : view.events(t, limit, "node"))
          out += " " + std::to_string(e.time) + " " + e.subject + " " + e.text + ";";
        out += "\n";
      }
    }
    return out;
  };
  const std::string by_rowid = node_log();
  // Node lines at 100: n001-n003 IDLE then n001-n003 ALLOCATED again (job 2); the newest two are n002 and n003's.
  EXPECT_NE(by_rowid.find("100/2: 100 n002 now ALLOCATED; 100 n003 now ALLOCATED;\n"), std::string::npos) << by_rowid;
  EXPECT_NE(by_rowid.find("-1/100:\n"), std::string::npos);
  // The same rows with rowids 2, 4, 6, ... are found through the time column (and an index on it, as older files
  // have): every answer is the same.
  edit(
      "CREATE TABLE copy AS SELECT rowid AS r, * FROM node_events; DELETE FROM node_events; "
      "INSERT INTO node_events (rowid, time, node_index, state, node_count) "
      "SELECT 2 * r, time, node_index, state, node_count FROM copy; DROP TABLE copy; "
      "CREATE INDEX node_events_by_time ON node_events(time);");
  EXPECT_EQ(node_log(), by_rowid);
}

// jobs.csv quotes a field holding a comma, a quote or a newline (quotes doubled), as RFC 4180 readers expect, and
// leaves every other field bare (time limits are minutes in a scenario, seconds here); the jobs table holds the same
// text unquoted.
TEST_F(ResultsStoreTest, JobsCsvQuotesFieldsWithCommasQuotesAndNewlines) {
  const char* scenario = R"({"name": "csv-quoting", "seed": 1,
    "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 1, "memory_gb": 1, "gpus": 0}],
                "partitions": [{"name": "batch", "nodes": "ALL", "default": true}]},
    "workload": {"jobs": [
      {"id": 7, "name": "train,eval", "user": "a\"b", "submit": 0, "cpus": 1, "time_limit": 10, "run_time": 5},
      {"id": 8, "name": "two\nlines", "user": "plain", "submit": 1, "cpus": 2, "time_limit": 10, "run_time": 5}]},
    "scheduler": {"policy": "fcfs"}})";
  const RunOutcome o = run_scenario(parse_scenario(scenario, "csv.json", dir_), RunOptions{});
  write_results(dir_, run_info(o), *o.state, o.summary, *o.recorder);
  std::ifstream in(dir_ / "jobs.csv", std::ios::binary);
  const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(csv,
            "job_id,name,user,account,partition,submit_time,start_time,end_time,state,nodes,cpus,gpus,time_limit,"
            "node_list,priority\n"
            "7,\"train,eval\",\"a\"\"b\",default,batch,0,0,5,COMPLETED,1,1,0,600,n001,0\n"
            "8,\"two\nlines\",plain,default,batch,1,5,10,COMPLETED,2,2,0,600,n[001-002],0\n");
  EXPECT_EQ(query("SELECT name, user FROM jobs ORDER BY job_id"), "train,eval|a\"b\ntwo\nlines|plain\n");
}

TEST_F(ResultsStoreTest, FailureLeavesNoPartialResults) {
  std::filesystem::create_directories(dir_.parent_path());
  std::ofstream(dir_) << "a file where the folder should be";
  EXPECT_THROW(write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder),
               ResultsError);
  std::filesystem::remove(dir_);
}

// jobs.csv's thread formats the node lists the jobs table takes too: when it cannot write, the write fails with its
// error (not the database's wait for lists that never come), at once, and leaves no results.
TEST_F(ResultsStoreTest, AJobsCsvThatCannotBeWrittenFailsTheWriteWithItsError) {
  std::filesystem::create_directories(dir_ / ".jobs.csv.tmp");  // a folder where the temporary file goes
  try {
    write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
    FAIL() << "the write succeeded";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find(".jobs.csv.tmp: cannot open for writing"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / ".results.sqlite.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "summary.json"));
}

TEST_F(ResultsStoreTest, RewritingReplacesTheOldResultsWhole) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(query("SELECT count(*) FROM jobs"), "4\n");
}

TEST_F(ResultsStoreTest, ReadersTrustOnlyAWholeResultsFileOfThisSchema) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(query("PRAGMA user_version"), std::to_string(kResultsSchemaVersion) + "\n");
  EXPECT_EQ(query("PRAGMA application_id"), std::to_string(kResultsApplicationId) + "\n");
  EXPECT_EQ(open_error(), "ok");
  const std::string file = (dir_ / "results.sqlite").string();
  // What a reader says of a value that is not a finite number.
  const auto not_finite = [&](const std::string& table, const std::string& column, const std::string& value) {
    return file + ": table " + table + ", column " + column + ": holds '" + value +
           "', not a finite number (the file was changed after gputwin wrote it)";
  };
  // The issue's cases: hand-edited non-finite values were read as good and printed by report and compare.
  edit("UPDATE summary SET value = 9e999 WHERE key = 'makespan_s'");
  EXPECT_EQ(open_error(), not_finite("summary", "value", "Inf"));
  edit("UPDATE summary SET value = 'nan' WHERE key = 'makespan_s'");
  EXPECT_EQ(open_error(), not_finite("summary", "value", "nan"));
  edit("UPDATE summary SET value = 600 WHERE key = 'makespan_s'; UPDATE jobs SET start_time = 'soon' WHERE job_id = 2");
  EXPECT_EQ(open_error(), not_finite("jobs", "start_time", "soon"));
  // One scan finds any; the column named is the first at fault in the table's order, whatever the row order.
  edit(
      "UPDATE jobs SET start_time = 100 WHERE job_id = 2; UPDATE jobs SET leaf_switches = -9e999 WHERE job_id = 1;"
      "UPDATE jobs SET run_time = x'41' WHERE job_id = 3");
  EXPECT_EQ(open_error(), not_finite("jobs", "run_time", "A"));
  edit("UPDATE jobs SET run_time = 0 WHERE job_id = 3");
  EXPECT_EQ(open_error(), not_finite("jobs", "leaf_switches", "-Inf"));
  // Extremes that are numbers pass: the largest finite double, the smallest 64-bit integer, NULL where allowed.
  edit(
      "UPDATE jobs SET leaf_switches = NULL WHERE job_id = 1; UPDATE summary SET value = 1.7976931348623157e308 "
      "WHERE key = 'makespan_s'; UPDATE jobs SET priority = -9223372036854775808 WHERE job_id = 4");
  EXPECT_EQ(open_error(), "ok");
  edit("PRAGMA user_version = 99");
  EXPECT_EQ(open_error(), file + ": results schema version 99 is newer than this gputwin reads (" +
                              std::to_string(kResultsSchemaVersion) + "); read it with the gputwin that wrote it");
  edit("PRAGMA user_version = 1; PRAGMA application_id = 0");
  EXPECT_NE(open_error().find("not a gputwin results database (its SQLite application_id is 0"), std::string::npos);
}

TEST_F(ResultsStoreTest, AFileWrittenHereSkipsOnlyTheScans) {
  // A live run's snapshots are opened with kWrittenHere: no quick_check or column scans (written just now by the
  // same process), but the mark, application id and schema version are still checked.
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  edit("UPDATE summary SET value = 'nan' WHERE key = 'makespan_s'");
  EXPECT_NE(open_error(), "ok");
  EXPECT_EQ(open_error(ResultsCheck::kWrittenHere), "ok");
  edit("PRAGMA user_version = 99");
  EXPECT_NE(open_error(ResultsCheck::kWrittenHere).find("results schema version 99"), std::string::npos);
  edit("PRAGMA user_version = 2");
  std::filesystem::remove(dir_ / "summary.json");
  EXPECT_NE(open_error(ResultsCheck::kWrittenHere).find("incomplete results"), std::string::npos);
}

TEST_F(ResultsStoreTest, AWriteStoppedBetweenItsRenamesLeavesAFolderTheReadersRefuse) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(open_error(), "ok");
  // The second write fails after results.sqlite is renamed into place (jobs.csv cannot replace a folder): the
  // folder now holds the new database beside the old jobs.csv, and no summary.json, so readers refuse it.
  std::filesystem::remove(dir_ / "jobs.csv");
  std::filesystem::create_directories(dir_ / "jobs.csv" / "in-the-way");
  EXPECT_THROW(write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder),
               ResultsError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "summary.json"));
  EXPECT_EQ(open_error(), (dir_ / "results.sqlite").string() +
                              ": incomplete results: summary.json beside it is missing (a run was stopped while it "
                              "wrote this folder; run it again)");
  std::filesystem::remove_all(dir_ / "jobs.csv");
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  EXPECT_EQ(open_error(), "ok");
}

TEST_F(ResultsStoreTest, ADamagedFileFailsQuickCheckAndIsNamed) {
  write_results(dir_, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder);
  // Overwrite the middle of the file (its b-tree pages) with garbage, keeping the header: the file still opens.
  const auto path = dir_ / "results.sqlite";
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 8192u);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    const std::string garbage(size - 4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string error = open_error();
  EXPECT_EQ(error.rfind(path.string() + ": ", 0), 0u) << error;
  // Reported as damaged, though the numeric scans beside quick_check meet the garbage too.
  EXPECT_NE(error.find(": damaged: SQLite's quick_check reports: "), std::string::npos) << error;
  // Not a database at all.
  std::ofstream(path, std::ios::trunc) << "hello";
  EXPECT_NE(open_error().find(path.string() + ": "), std::string::npos);
}

TEST_F(ResultsStoreTest, JobsRejectedAtSubmitAreRecordedAsRejectedWithTheirReason) {
  // A 5-node job on a 4-node cluster: slurmctld refuses it at submit (sbatch: Requested node configuration is not
  // available). It is recorded, not dropped, and counted once in the database and the summary.
  Scenario scenario = load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/tests/golden/four_nodes_fcfs.json");
  std::vector<JobSpec> jobs = load_workload(scenario);
  JobSpec too_big = jobs.front();
  too_big.id = 99;
  too_big.nodes = 5;
  too_big.cpus = 5;
  too_big.submit_s = 2;
  jobs.push_back(too_big);
  const RunOutcome outcome = run_jobs(scenario, jobs, RunOptions{});
  write_results(dir_, run_info(outcome), *outcome.state, outcome.summary, *outcome.recorder);
  EXPECT_EQ(query("SELECT job_id, submit_time, start_time, end_time, state, reason FROM jobs WHERE job_id = 99"),
            "99|2|NULL|2|REJECTED|BadConstraints\n");
  EXPECT_EQ(outcome.summary.rejected, 1u);
  EXPECT_EQ(outcome.summary.jobs, 4u);
  EXPECT_EQ(query("SELECT value FROM summary WHERE key = 'rejected'"), "1.0\n");
  EXPECT_EQ(query("SELECT count(*) FROM jobs WHERE state = 'REJECTED'"), "1\n");
  EXPECT_EQ(query("SELECT count(*) FROM jobs WHERE state = 'CANCELLED'"), "0\n");
  // The other four ran as before.
  EXPECT_EQ(query("SELECT job_id, start_time FROM jobs WHERE job_id < 99 ORDER BY job_id"),
            "1|0\n2|100\n3|200\n4|300\n");
}

}  // namespace
}  // namespace gputwin
