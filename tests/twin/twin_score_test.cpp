// score_twin on a results.sqlite written by hand (only the forecasts table and the jobs columns it reads): every
// statistic of every forecaster worked out on paper, next to the rows.
#include "twin/twin_score.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "model/errors.hpp"
#include "results/results_store.hpp"
#include "tests/support/hand_made_results.hpp"

namespace gputwin {
namespace {

// A fresh folder under the temp directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gputwin-score-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `dir`/results.sqlite by running `sql`; returns the file.
std::filesystem::path write_db(const std::filesystem::path& dir, const std::string& sql) {
  const std::filesystem::path file = dir / "results.sqlite";
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(file.string().c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, (testing::results_stamp_sql() + sql).c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  testing::write_summary_marker(dir);
  return file;
}

constexpr const char* kTables = R"sql(
CREATE TABLE jobs (job_id INTEGER NOT NULL, submit_time INTEGER NOT NULL, start_time INTEGER);
CREATE TABLE forecasts (made_at INTEGER NOT NULL, job_id INTEGER NOT NULL, horizon_s INTEGER,
  predicted_start INTEGER, slurm_estimate INTEGER, actual_start INTEGER);
)sql";

// Jobs (submit, start, wait), by start:
//   1: 0, 100, 100     2: 50, 350, 300     10: 100, 530, 430     11: 300, 1400, 1100
//   3: 400, 5000, 4600     12: 350, 8000, 7650     13: 5500, 29000, 23500     4: 1000, never
// The mean wait of the jobs started at or before t (the now+mean_wait forecast is made_at + that):
//   t=200: job 1: 100.    t=350 and t=500: jobs 1, 2: (100 + 300) / 2 = 200.
//   t=6000: jobs 1, 2, 10, 11, 3: (100 + 300 + 430 + 1100 + 4600) / 5 = 6530 / 5 = 1306.
//
// Forecasts, with the absolute error of each forecaster (gputwin, slurmctld, now = |actual - made|,
// now+mean_wait = |made + mean wait - actual|) and the lead (actual - made) bucket:
//   made  job  predicted  estimate  actual | gputwin slurmctld   now  now+mean      lead bucket
//   200   10      500        800      530  |    30      270       330  |300-530|=230   330 <10min
//   500   10      520        600      530  |    10       70        30  |700-530|=170    30 <10min
//   350   11     2000       NULL     1400  |   600        -      1050  |550-1400|=850 1050 10min-1h
//   350   12     NULL      10000     8000  |     -     2000      7650  |550-8000|=7450 7650 1h-6h
//   6000  13    30000      28000    29000  |  1000     1000     23000  |7306-29000|=21694 23000 >6h
//   6000  14     7000       7500     NULL  (not started: not scored)
constexpr const char* kRows = R"sql(
INSERT INTO jobs VALUES (1, 0, 100), (2, 50, 350), (10, 100, 530), (11, 300, 1400), (3, 400, 5000),
  (12, 350, 8000), (13, 5500, 29000), (4, 1000, NULL);
INSERT INTO forecasts VALUES (200, 10, 300, 500, 800, 530), (500, 10, 20, 520, 600, 530),
  (350, 11, 1650, 2000, NULL, 1400), (350, 12, NULL, NULL, 10000, 8000), (6000, 13, 24000, 30000, 28000, 29000),
  (6000, 14, 1000, 7000, 7500, NULL);
)sql";

constexpr std::size_t kGputwin = 0;
constexpr std::size_t kSlurmctld = 1;
constexpr std::size_t kNow = 2;
constexpr std::size_t kNowMeanWait = 3;
constexpr std::size_t kUnder10Min = 0;
constexpr std::size_t k10MinTo1H = 1;
constexpr std::size_t k1HTo6H = 2;
constexpr std::size_t kOver6H = 3;
constexpr std::size_t kAll = 4;

TwinScore score_of_the_rows() {
  TempDir dir;
  return score_twin(write_db(dir.path(), std::string(kTables) + kRows));
}

TEST(TwinScore, CountsRowsScoredRowsAndJobs) {
  // 6 rows; 5 of jobs that started (job 14 has not); jobs 10 (twice), 11, 12, 13.
  const TwinScore s = score_of_the_rows();
  EXPECT_EQ(s.forecasts, 6u);
  EXPECT_EQ(s.scored, 5u);
  EXPECT_EQ(s.jobs, 4u);
}

TEST(TwinScore, RowsWithoutAnActualStartAreNotScored) {
  // Job 14's row (made 6000, lead unknown) would add a 6th error to "now"; every forecaster has one per scored row
  // at most, and none in any bucket beyond the five scored rows.
  const TwinScore s = score_of_the_rows();
  EXPECT_EQ(s.cells[kNow][kAll].n, 5u);
  EXPECT_EQ(s.cells[kNowMeanWait][kAll].n, 5u);
  EXPECT_EQ(
      s.cells[kNow][kUnder10Min].n + s.cells[kNow][k10MinTo1H].n + s.cells[kNow][k1HTo6H].n + s.cells[kNow][kOver6H].n,
      5u);
}

TEST(TwinScore, GputwinErrorsOverAllLeads) {
  // Errors 10, 30, 600, 1000 (job 12 has no prediction). Mean 1640 / 4 = 410; nearest-rank median: rank
  // ceil(0.5 * 4) = 2 -> 30; p90: rank ceil(0.9 * 4) = 4 -> 1000; <= 60 s: 2 of 4; <= 600 s: 3 of 4 (600 counts).
  const ScoreCell c = score_of_the_rows().cells[kGputwin][kAll];
  EXPECT_EQ(c.n, 4u);
  EXPECT_DOUBLE_EQ(c.mean_s, 410);
  EXPECT_DOUBLE_EQ(c.median_s, 30);
  EXPECT_DOUBLE_EQ(c.p90_s, 1000);
  EXPECT_DOUBLE_EQ(c.within_1min, 0.5);
  EXPECT_DOUBLE_EQ(c.within_10min, 0.75);
}

TEST(TwinScore, GputwinErrorsByLeadBucket) {
  // <10min: 10, 30: mean 20, median rank 1 -> 10, p90 rank 2 -> 30, all within a minute. 10min-1h: 600.
  // 1h-6h: job 12 had no prediction. >6h: 1000.
  const TwinScore s = score_of_the_rows();
  const ScoreCell& near = s.cells[kGputwin][kUnder10Min];
  EXPECT_EQ(near.n, 2u);
  EXPECT_DOUBLE_EQ(near.mean_s, 20);
  EXPECT_DOUBLE_EQ(near.median_s, 10);
  EXPECT_DOUBLE_EQ(near.p90_s, 30);
  EXPECT_DOUBLE_EQ(near.within_1min, 1);
  EXPECT_DOUBLE_EQ(near.within_10min, 1);
  EXPECT_EQ(s.cells[kGputwin][k10MinTo1H].n, 1u);
  EXPECT_DOUBLE_EQ(s.cells[kGputwin][k10MinTo1H].mean_s, 600);
  EXPECT_EQ(s.cells[kGputwin][k1HTo6H].n, 0u);
  EXPECT_EQ(s.cells[kGputwin][kOver6H].n, 1u);
  EXPECT_DOUBLE_EQ(s.cells[kGputwin][kOver6H].median_s, 1000);
}

TEST(TwinScore, SlurmctldErrorsSkipRowsWithoutAnEstimate) {
  // Errors 270, 70, 2000, 1000 (job 11 had no estimate): sorted 70, 270, 1000, 2000. Mean 3340 / 4 = 835; median
  // rank 2 -> 270; p90 rank 4 -> 2000; none within a minute; 70 and 270 within 10 min.
  const TwinScore s = score_of_the_rows();
  const ScoreCell& c = s.cells[kSlurmctld][kAll];
  EXPECT_EQ(c.n, 4u);
  EXPECT_DOUBLE_EQ(c.mean_s, 835);
  EXPECT_DOUBLE_EQ(c.median_s, 270);
  EXPECT_DOUBLE_EQ(c.p90_s, 2000);
  EXPECT_DOUBLE_EQ(c.within_1min, 0);
  EXPECT_DOUBLE_EQ(c.within_10min, 0.5);
  EXPECT_EQ(s.cells[kSlurmctld][k10MinTo1H].n, 0u);
  EXPECT_EQ(s.cells[kSlurmctld][k1HTo6H].n, 1u);
  EXPECT_DOUBLE_EQ(s.cells[kSlurmctld][k1HTo6H].mean_s, 2000);
}

TEST(TwinScore, NowBaselineErrorIsTheLead) {
  // actual - made: 330, 30, 1050, 7650, 23000; sorted 30, 330, 1050, 7650, 23000. Mean 32060 / 5 = 6412; median
  // rank ceil(2.5) = 3 -> 1050; p90 rank ceil(4.5) = 5 -> 23000; 1 of 5 within a minute, 2 of 5 within 10 min.
  const TwinScore s = score_of_the_rows();
  const ScoreCell& c = s.cells[kNow][kAll];
  EXPECT_EQ(c.n, 5u);
  EXPECT_DOUBLE_EQ(c.mean_s, 6412);
  EXPECT_DOUBLE_EQ(c.median_s, 1050);
  EXPECT_DOUBLE_EQ(c.p90_s, 23000);
  EXPECT_DOUBLE_EQ(c.within_1min, 0.2);
  EXPECT_DOUBLE_EQ(c.within_10min, 0.4);
  EXPECT_DOUBLE_EQ(s.cells[kNow][k1HTo6H].mean_s, 7650);
  EXPECT_DOUBLE_EQ(s.cells[kNow][kOver6H].mean_s, 23000);
}

TEST(TwinScore, NowPlusMeanWaitUsesTheWaitsOfJobsStartedByThen) {
  // Errors 230, 170, 850, 7450, 21694 (see the table above; job 2, started at 350, counts for forecasts made at
  // 350; job 10, started at 530, does not for the one made at 500). Sorted 170, 230, 850, 7450, 21694: mean
  // 30394 / 5 = 6078.8; median 850; p90 21694; none within a minute; 170 and 230 within 10 min.
  const TwinScore s = score_of_the_rows();
  const ScoreCell& c = s.cells[kNowMeanWait][kAll];
  EXPECT_EQ(c.n, 5u);
  EXPECT_DOUBLE_EQ(c.mean_s, 6078.8);
  EXPECT_DOUBLE_EQ(c.median_s, 850);
  EXPECT_DOUBLE_EQ(c.p90_s, 21694);
  EXPECT_DOUBLE_EQ(c.within_1min, 0);
  EXPECT_DOUBLE_EQ(c.within_10min, 0.4);
  EXPECT_DOUBLE_EQ(s.cells[kNowMeanWait][k10MinTo1H].mean_s, 850);
  EXPECT_DOUBLE_EQ(s.cells[kNowMeanWait][kOver6H].mean_s, 21694);
}

TEST(TwinScore, NowPlusMeanWaitIsNowBeforeAnyJobStarted) {
  // The only started job starts at 500, after the forecast made at 100: no wait known, so now+mean_wait = now, and
  // both are off by 400.
  TempDir dir;
  const TwinScore s = score_twin(write_db(dir.path(), std::string(kTables) + R"sql(
INSERT INTO jobs VALUES (1, 50, 500);
INSERT INTO forecasts VALUES (100, 1, 350, 450, NULL, 500);
)sql"));
  EXPECT_EQ(s.cells[kNowMeanWait][kAll].n, 1u);
  EXPECT_DOUBLE_EQ(s.cells[kNowMeanWait][kAll].mean_s, 400);
  EXPECT_DOUBLE_EQ(s.cells[kNow][kAll].mean_s, 400);
  EXPECT_DOUBLE_EQ(s.cells[kGputwin][kAll].mean_s, 50);
}

TEST(TwinScore, AFolderWithoutForecastsIsNotATwin) {
  // A simulation's results folder has a jobs table but no forecasts: the folder (not the file) is given.
  TempDir dir;
  write_db(dir.path(), "CREATE TABLE jobs (job_id INTEGER, submit_time INTEGER, start_time INTEGER);");
  try {
    score_twin(dir.path());
    FAIL() << "expected ResultsError";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("not a twin"), std::string::npos) << e.what();
  }
}

TEST(TwinScore, AMissingDatabaseIsAnError) {
  TempDir dir;
  // Bad input like any results folder (results_db.hpp): an InputError naming the file, exit status 2.
  try {
    score_twin(dir.path());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (dir.path() / "results.sqlite").string());
  }
}

}  // namespace
}  // namespace gputwin
