// The Jobs table's sorts by a column that depends on the time (run time, state) walk to the requested page instead
// of sorting (RunView::jobs): checked against a plain sort of every job's row at that time, on random runs with many
// ties (equal durations, equal starts, jobs that end as they start, states sharing a prefix).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "results/run_view.hpp"
#include "tests/ui/hand_made_run.hpp"

namespace gputwin {
namespace {

/// Replaces the hand-made run's jobs with `count` random ones.
void write_random_jobs(const std::filesystem::path& dir, std::mt19937& rng, int count) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "results.sqlite").c_str(), &db), SQLITE_OK);
  std::string sql = "BEGIN; DELETE FROM jobs;";
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* ended_states[] = {"COMPLETED", "COMPLETING", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL"};
  std::int64_t id = 0;
  for (int n = 0; n < count; ++n) {
    id += pick(1, 3);
    const int submit = pick(0, 50) * 10;
    std::string start = "NULL", end = "NULL", state;
    if (pick(0, 9) < 7) {  // started
      const int s = submit + pick(0, 10) * 10;
      start = std::to_string(s);
      if (pick(0, 9) < 8) {
        end = std::to_string(s + pick(0, 15) * 20);
        state = ended_states[pick(0, 5)];
      } else {
        state = "RUNNING";
      }
    } else if (pick(0, 1) == 0) {  // cancelled or rejected before it started
      end = std::to_string(submit + pick(0, 10) * 10);
      state = pick(0, 1) == 0 ? "CANCELLED" : "REJECTED";
    } else {
      state = "PENDING";
    }
    sql += "INSERT INTO jobs VALUES (" + std::to_string(id) + ", 'j', 'u', 'a', 'gpu', 'normal', " +
           std::to_string(submit) + ", " + start + ", " + end + ", '" + state + "', 1, 1, 1, 600, " +
           (start == "NULL" ? "NULL" : "'n1'") + ", 1, NULL, NULL, NULL, NULL, NULL, 100, NULL);";
  }
  sql += "COMMIT;";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

/// The page as a plain sort of every job's row at `at_s` gives it: by the key, ties in job id order.
std::vector<std::int64_t> sorted_page(const RunView& view, const std::vector<std::int64_t>& ids, const JobQuery& q) {
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> keyed;  // run time, state, id
  for (const std::int64_t id : ids) {
    const auto row = view.job(id, q.at_s);
    if (!row || row->state.empty()) continue;  // not submitted yet
    if (q.filter != JobFilter::kAll && job_state_group(row->state) != q.filter) continue;
    keyed.emplace_back(q.descending ? -row->run_time_s : row->run_time_s, row->state, id);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (q.sort == JobSort::kRunTime) return std::get<0>(a) < std::get<0>(b);
    return q.descending ? std::get<1>(b) < std::get<1>(a) : std::get<1>(a) < std::get<1>(b);
  });
  std::vector<std::int64_t> out;
  for (std::size_t k = q.offset; k < keyed.size() && k < q.offset + q.limit; ++k) out.push_back(std::get<2>(keyed[k]));
  return out;
}

TEST_F(HandMadeRun, SortsThatDependOnTheTimeMatchAPlainSort) {
  std::mt19937 rng(20261125);
  std::size_t pages = 0, rows = 0;
  for (int run = 0; run < 12; ++run) {
    write_random_jobs(dir_, rng, 40 + 40 * run);
    const RunView view(dir_);
    std::vector<std::int64_t> ids;
    JobQuery all;
    all.at_s = 10'000;
    all.limit = 10'000;
    for (const JobRow& r : view.jobs(all).rows) ids.push_back(r.job_id);
    for (int probe = 0; probe < 60; ++probe) {
      JobQuery q;
      q.at_s = std::uniform_int_distribution<int>(-10, 900)(rng);
      q.sort = probe % 2 == 0 ? JobSort::kRunTime : JobSort::kState;
      q.descending = probe % 4 >= 2;
      q.filter = static_cast<JobFilter>(std::uniform_int_distribution<int>(0, 5)(rng));
      q.offset = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 60)(rng));
      q.limit = static_cast<std::size_t>(std::uniform_int_distribution<int>(1, 80)(rng));
      std::vector<std::int64_t> got;
      for (const JobRow& r : view.jobs(q).rows) got.push_back(r.job_id);
      const auto want = sorted_page(view, ids, q);
      ASSERT_EQ(got, want) << "run " << run << " t " << q.at_s << " sort " << static_cast<int>(q.sort) << " desc "
                           << q.descending << " filter " << static_cast<int>(q.filter) << " offset " << q.offset;
      ++pages;
      rows += got.size();
    }
  }
  EXPECT_EQ(pages, 720u);
  EXPECT_GT(rows, 5'000u);  // the pages are not mostly empty
}

}  // namespace
}  // namespace gputwin
