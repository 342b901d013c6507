// The dashboard's twin pages (/api/forecasts, /api/actions), its compare tab (/api/compare...) and a twin's folder
// served while it polls (FolderFeed, `gputwin twin ... --serve`), on hand-made results whose answers are worked out
// by hand next to them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "model/errors.hpp"
#include "tests/ui/hand_made_database.hpp"
#include "twin/twin_runner.hpp"
#include "twin/twin_score.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/folder_feed.hpp"
#include "ui/http_server.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {
namespace {

using nlohmann::json;

// The hand-made run (tests/ui/hand_made_database.hpp) as a twin's folder: job 6 added (submit 100, start 4000, end
// 4100 on n1), and the twin's tables. Forecast rows (made_at, job, predicted, slurmctld estimate, actual start), with
// gputwin's and slurmctld's signed errors (predicted - actual) and the lead (actual - made):
//   r1  0    1    20   600   10   | gputwin +10   slurmctld +590   lead 10    <10min
//   r2  0    2   100  NULL  110   |         -10                -    lead 110   <10min
//   r3  60   2   130   700  110   |         +20             +590   lead 50    <10min
//   r4  60   4   100  2000  200   |        -100            +1800   lead 140   <10min
//   r6  100  6  3000  7000 4000   |       -1000            +3000   lead 3900  1h-6h
//   r5  120  4   260   250  200   |         +60              +50   lead 80    <10min
//   r7  450  5   800   900 NULL   (job 5 still pending: not scored)
// twin-score (absolute errors, nearest-rank quantiles):
//   gputwin <10min: 10 10 20 60 100: n 5, mean 200/5 = 40, median (rank 3) 20, p90 (rank 5) 100, <=1min 4/5
//   gputwin all: + 1000: n 6, mean 1200/6 = 200, median (rank 3) 20, p90 (rank 6) 1000, <=1min 4/6, <=10min 5/6
//   slurmctld <10min: 50 590 590 1800: n 4, mean 3030/4 = 757.5, median (rank 2) 590, p90 (rank 4) 1800
//   slurmctld all: + 3000: n 5, mean 6030/5 = 1206, median (rank 3) 590, p90 (rank 5) 3000
// Signed gputwin errors by lead: <10min sorted -100 -10 10 20 60: mean -20/5 = -4, p10 (rank 1) -100, p25 (rank 2)
// -10, p50 (rank 3) 10, p75 (rank 4) 20, p90 (rank 5) 60; all: -1000 -100 -10 10 20 60: mean -1020/6 = -170,
// p10 (rank 1) -1000, p25 (rank 2) -100, p50 (rank 3) -10, p75 (rank 5) 20, p90 (rank 6) 60.
constexpr const char* kTwinTables = R"sql(
INSERT INTO jobs VALUES (6, 'long-f', 'dave', 'ml', 'gpu', 'normal', 100, 4000, 4100, 'COMPLETED', 1, 1, 1, 600, 'n1', 10, NULL, 3900, 100, NULL, NULL, 100, NULL);
CREATE TABLE twin_info (key TEXT PRIMARY KEY, value TEXT);
INSERT INTO twin_info VALUES ('epoch_unix', '1700000000'), ('mode', 'dry-run'), ('predictor', 'recent'),
  ('controllers', 'health'), ('polls', '3'), ('slurmrestd', 'http://slurm:6820'), ('api_version', 'v0.0.44');
CREATE TABLE polls (time INTEGER NOT NULL, fetch_s REAL NOT NULL, mirror_s REAL NOT NULL, forecast_s REAL NOT NULL,
  write_s REAL NOT NULL, nodes INTEGER NOT NULL, jobs INTEGER NOT NULL, pending INTEGER NOT NULL,
  running INTEGER NOT NULL, error TEXT);
INSERT INTO polls VALUES (0, 0.1, 0.1, 0.1, 0, 2, 3, 2, 1, NULL), (60, 0.1, 0.1, 0.1, 0, 2, 4, 2, 1, NULL),
  (90, 0.1, 0, 0, 0, 0, 0, 0, 0, 'GET /slurm/v0.0.44/jobs: timed out');
CREATE TABLE forecasts (made_at INTEGER NOT NULL, job_id INTEGER NOT NULL, horizon_s INTEGER,
  predicted_start INTEGER, slurm_estimate INTEGER, actual_start INTEGER);
INSERT INTO forecasts VALUES (0, 1, 20, 20, 600, 10), (0, 2, 100, 100, NULL, 110), (60, 2, 70, 130, 700, 110),
  (60, 4, 40, 100, 2000, 200), (100, 6, 2900, 3000, 7000, 4000), (120, 4, 140, 260, 250, 200),
  (450, 5, 350, 800, 900, NULL);
CREATE TABLE actions (time INTEGER NOT NULL, controller TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL,
  reason TEXT, outcome TEXT NOT NULL, call TEXT);
INSERT INTO actions VALUES (100, 'health', 'drain', 'n2', 'XID 79', 'dry-run', 'POST /slurm/v0.0.44/node/n2'),
  (150, 'health', 'resume', 'n2', 'repaired', 'done', 'POST /slurm/v0.0.44/node/n2'),
  (200, 'quota', 'hold', '4', 'over quota', 'refused (max 10 actions per minute)', '');
)sql";

// A fresh folder per test, removed after it.
class Folders : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("gputwin-pages-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // The hand-made run in root_/`name`, with `extra` SQL run after it.
  std::filesystem::path folder(const std::string& name, const std::string& extra = "") {
    const auto dir = root_ / name;
    std::filesystem::create_directories(dir);
    EXPECT_EQ(write_hand_made_run(dir), "");
    if (!extra.empty()) exec(dir / "results.sqlite", extra);
    return dir;
  }
  static void exec(const std::filesystem::path& file, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
    sqlite3_free(message);
    sqlite3_close(db);
  }
  std::filesystem::path root_;
};

HttpRequest get(const std::string& path, std::map<std::string, std::string> query = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  r.query = std::move(query);
  return r;
}

json answer(const DashboardApi& api, const std::string& path, std::map<std::string, std::string> query = {}) {
  return json::parse(api.handle(get(path, std::move(query))).body);
}

int status_of(const DashboardApi& api, const HttpRequest& r) {
  try {
    api.handle(r);
    return 200;
  } catch (const HttpError& e) {
    return e.status();
  }
}

// ---- a twin's pages ------------------------------------------------------------------------------------------------

TEST_F(Folders, ForecastsPageScoresAsTwinScoreDoes) {
  const auto dir = folder("twin", kTwinTables);
  const DashboardApi api(dir, root_ / "no-assets");
  EXPECT_EQ(answer(api, "/api/info")["kind"], "twin");
  const json f = answer(api, "/api/forecasts");
  EXPECT_EQ(f["twin"]["mode"], "dry-run");
  EXPECT_EQ(f["twin"]["poll_rows"], 3);
  EXPECT_EQ(f["twin"]["failed_polls"], 1);
  EXPECT_EQ(f["score"]["forecasts"], 7);
  EXPECT_EQ(f["score"]["scored"], 6);
  EXPECT_EQ(f["score"]["jobs"], 4);  // 1, 2, 4, 6
  const json& g = f["score"]["cells"]["gputwin"];
  EXPECT_EQ(g["<10min"]["n"], 5);
  EXPECT_DOUBLE_EQ(g["<10min"]["mean"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(g["<10min"]["median"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(g["<10min"]["p90"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(g["<10min"]["within_1min"].get<double>(), 0.8);
  EXPECT_EQ(g["10min-1h"]["n"], 0);
  EXPECT_TRUE(g["10min-1h"]["mean"].is_null());
  EXPECT_EQ(g["1h-6h"]["n"], 1);
  EXPECT_DOUBLE_EQ(g["1h-6h"]["mean"].get<double>(), 1000);
  EXPECT_EQ(g["all"]["n"], 6);
  EXPECT_DOUBLE_EQ(g["all"]["mean"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(g["all"]["p90"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(g["all"]["within_1min"].get<double>(), 4.0 / 6);
  EXPECT_DOUBLE_EQ(g["all"]["within_10min"].get<double>(), 5.0 / 6);
  const json& s = f["score"]["cells"]["slurmctld"];
  EXPECT_EQ(s["<10min"]["n"], 4);
  EXPECT_DOUBLE_EQ(s["<10min"]["mean"].get<double>(), 757.5);
  EXPECT_DOUBLE_EQ(s["<10min"]["median"].get<double>(), 590);
  EXPECT_DOUBLE_EQ(s["<10min"]["p90"].get<double>(), 1800);
  EXPECT_DOUBLE_EQ(s["all"]["mean"].get<double>(), 1206);
  EXPECT_DOUBLE_EQ(s["all"]["p90"].get<double>(), 3000);
  // The same numbers as `gputwin twin-score` (the same code over the same folder), every cell.
  const TwinScore score = score_twin(dir);
  for (std::size_t k = 0; k < kForecasters.size(); ++k) {
    for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) {
      const json& cell = f["score"]["cells"][kForecasters[k]][kLeadBuckets[b]];
      EXPECT_EQ(cell["n"], score.cells[k][b].n) << kForecasters[k] << " " << kLeadBuckets[b];
      if (score.cells[k][b].n > 0) {
        EXPECT_DOUBLE_EQ(cell["mean"].get<double>(), score.cells[k][b].mean_s);
      }
    }
  }
}

TEST_F(Folders, ForecastsPageErrorsByLeadAndPerJob) {
  const DashboardApi api(folder("twin", kTwinTables), root_ / "no-assets");
  const json f = answer(api, "/api/forecasts");
  const json& under10 = f["by_lead"]["gputwin"][0];
  EXPECT_EQ(under10["n"], 5);
  EXPECT_DOUBLE_EQ(under10["mean"].get<double>(), -4);
  EXPECT_EQ(under10["p10"], -100);
  EXPECT_EQ(under10["p25"], -10);
  EXPECT_EQ(under10["p50"], 10);
  EXPECT_EQ(under10["p75"], 20);
  EXPECT_EQ(under10["p90"], 60);
  const json& all = f["by_lead"]["gputwin"][4];
  EXPECT_DOUBLE_EQ(all["mean"].get<double>(), -170);
  EXPECT_EQ(all["p10"], -1000);
  EXPECT_EQ(all["p25"], -100);
  EXPECT_EQ(all["p50"], -10);
  EXPECT_EQ(all["p75"], 20);
  EXPECT_EQ(all["p90"], 60);
  EXPECT_EQ(f["by_lead"]["slurmctld"][4]["p90"], 3000);  // +50 +590 +590 +1800 +3000: rank 5
  // Every scored forecast with a gputwin prediction, by lead.
  EXPECT_EQ(f["points"]["lead"], json({10, 50, 80, 110, 140, 3900}));
  EXPECT_EQ(f["points"]["error"], json({10, 20, 60, -10, -100, -1000}));
  EXPECT_EQ(answer(api, "/api/forecasts", {{"points", "2"}})["points"]["lead"], json({10, 3900}));
  // Jobs in id order: the first and the last forecast against the start.
  EXPECT_EQ(f["counts"], json({{"all", 5}, {"started", 4}, {"waiting", 1}}));
  ASSERT_EQ(f["jobs"].size(), 5u);
  const json& j2 = f["jobs"][1];
  EXPECT_EQ(j2["job_id"], 2);
  EXPECT_EQ(j2["forecasts"], 2);
  EXPECT_EQ(j2["first_made_at"], 0);
  EXPECT_EQ(j2["first_error"], -10);
  EXPECT_EQ(j2["last_made_at"], 60);
  EXPECT_EQ(j2["last_predicted"], 130);
  EXPECT_EQ(j2["last_error"], 20);
  EXPECT_EQ(j2["slurm_estimate"], 700);
  EXPECT_EQ(j2["slurm_error"], 590);
  EXPECT_EQ(j2["actual_start"], 110);
  EXPECT_EQ(j2["name"], "train-b");
  const json& j4 = f["jobs"][2];  // two forecasts, the later made at 120 (rows are not in made_at order per job)
  EXPECT_EQ(j4["last_made_at"], 120);
  EXPECT_EQ(j4["last_error"], 60);
  EXPECT_EQ(j4["first_error"], -100);
  const json waiting = answer(api, "/api/forecasts", {{"filter", "waiting"}});
  ASSERT_EQ(waiting["jobs"].size(), 1u);
  EXPECT_EQ(waiting["jobs"][0]["job_id"], 5);
  EXPECT_EQ(waiting["jobs"][0]["state"], "PENDING");
  EXPECT_TRUE(waiting["jobs"][0]["actual_start"].is_null());
  EXPECT_TRUE(waiting["jobs"][0]["last_error"].is_null());
  const json page = answer(api, "/api/forecasts", {{"filter", "started"}, {"offset", "1"}, {"limit", "2"}});
  EXPECT_EQ(page["total"], 4);
  ASSERT_EQ(page["jobs"].size(), 2u);
  EXPECT_EQ(page["jobs"][0]["job_id"], 2);
  EXPECT_EQ(page["jobs"][1]["job_id"], 4);
}

TEST_F(Folders, ActionsPageListsTheTwinsActions) {
  const DashboardApi api(folder("twin", kTwinTables), root_ / "no-assets");
  const json a = answer(api, "/api/actions");
  EXPECT_EQ(a["mode"], "dry-run");
  EXPECT_EQ(a["total"], 3);
  EXPECT_EQ(a["outcomes"], json({{"dry-run", 1}, {"done", 1}, {"refused", 1}}));
  EXPECT_EQ(a["actions"][0]["target"], "n2");
  EXPECT_EQ(a["actions"][0]["call"], "POST /slurm/v0.0.44/node/n2");
  const json done = answer(api, "/api/actions", {{"outcome", "done"}});
  ASSERT_EQ(done["actions"].size(), 1u);
  EXPECT_EQ(done["actions"][0]["action"], "resume");
  EXPECT_EQ(answer(api, "/api/actions", {{"offset", "2"}})["actions"][0]["controller"], "quota");
}

TEST_F(Folders, TwinPagesRefuseBadRequestsAndARunsFolder) {
  const DashboardApi twin(folder("twin", kTwinTables), root_ / "no-assets");
  EXPECT_EQ(status_of(twin, get("/api/forecasts", {{"filter", "late"}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/forecasts", {{"limit", "0"}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/forecasts", {{"offset", "-1"}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/forecasts", {{"points", "many"}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/actions", {{"limit", "abc"}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/actions", {{"outcome", std::string(200, 'x')}})), 400);
  EXPECT_EQ(status_of(twin, get("/api/compare")), 404);  // one folder: nothing to compare
  const DashboardApi run(folder("run"), root_ / "no-assets");
  try {
    run.handle(get("/api/forecasts"));
    FAIL() << "a run's folder has no forecasts";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_NE(std::string(e.what()).find("not a twin"), std::string::npos) << e.what();
  }
  EXPECT_EQ(status_of(run, get("/api/actions")), 404);
  // A twin folder whose forecasts table is missing (twin_info says twin): 404 naming the problem, not a crash.
  const DashboardApi broken(folder("broken", "CREATE TABLE twin_info (key TEXT PRIMARY KEY, value TEXT);"),
                            root_ / "no-assets");
  try {
    broken.handle(get("/api/forecasts"));
    FAIL() << "no forecasts table";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_NE(std::string(e.what()).find("forecasts"), std::string::npos) << e.what();
  }
}

// ---- runs side by side ---------------------------------------------------------------------------------------------

// Run A: the hand-made run with a summary. Run B: job 1 waited 20 s (not 10) and job 4 belongs to account "ai".
// Mean wait by account (wait_time column): A ml (10 + 105) / 2 = 57.5, cv 170; B ml (20 + 105) / 2 = 62.5, ai 170.
constexpr const char* kSummaryA = R"sql(
CREATE TABLE summary (key TEXT PRIMARY KEY, value REAL);
INSERT INTO summary VALUES ('jobs', 5), ('wait_mean_s', 95), ('gpu_utilization', 0.5);
)sql";
constexpr const char* kSummaryB = R"sql(
CREATE TABLE summary (key TEXT PRIMARY KEY, value REAL);
INSERT INTO summary VALUES ('jobs', 5), ('wait_mean_s', 98.5), ('makespan_s', 500);
UPDATE jobs SET wait_time = 20 WHERE job_id = 1;
UPDATE jobs SET account = 'ai' WHERE job_id = 4;
)sql";

TEST_F(Folders, CompareShowsTheRunsSideBySide) {
  const auto a = folder("policy-a", kSummaryA);
  const auto b = folder("policy-b", kSummaryB);
  const DashboardApi api(std::vector<std::filesystem::path>{a, b}, root_ / "no-assets");
  EXPECT_EQ(answer(api, "/api/info")["compare"], 2);
  EXPECT_EQ(answer(api, "/api/info")["scenario"], "hand");  // the other tabs show the first run
  const json c = answer(api, "/api/compare");
  ASSERT_EQ(c["runs"].size(), 2u);
  EXPECT_EQ(c["runs"][0]["name"], "policy-a");
  EXPECT_EQ(c["runs"][1]["name"], "policy-b");
  // Summary rows in `gputwin compare`'s order, a key one run lacks as null.
  EXPECT_EQ(c["summary"], json::parse(R"js([
    {"key": "jobs", "label": "jobs", "values": [5.0, 5.0]},
    {"key": "wait_mean_s", "label": "wait mean (s)", "values": [95.0, 98.5]
},
    {"key": "gpu_utilization", "label": "GPU utilisation", "values": [0.5, null]},
    {"key": "makespan_s", "label": "makespan (s)", "values": [null, 500.0]}])js"));
  EXPECT_EQ(c["wait_by_account"], json::parse(R"js([
    {"key": "ai", "label": "ai", "values": [null, 170.0]},
    {"key": "cv", "label": "cv", "values": [170.0, null]},
    {"key": "ml", "label": "ml", "values": [57.5, 62.5]}])js"));
  // gpu: (10 + 105 + 170) / 3 = 95, (20 + 105 + 170) / 3
  EXPECT_EQ(c["wait_by_partition"][0]["values"], json({95.0, 295.0 / 3}));
  // Waits by start - submit of the jobs started by each run's end: 10, 105, 170 in both.
  const json w = answer(api, "/api/compare/waits");
  ASSERT_EQ(w["runs"].size(), 2u);
  EXPECT_EQ(w["runs"][0]["jobs"], 3);
  EXPECT_EQ(w["runs"][1]["p50"], 105);
  const json s = answer(api, "/api/compare/series");
  EXPECT_EQ(s["runs"][1]["pending"], json({1, 3, 0, 0, 1, 1}));
  EXPECT_EQ(s["runs"][0]["time"], json({0, 100, 200, 300, 400, 500}));
  EXPECT_EQ(s["runs"][0]["gpu_util_pct"][2], 75.0);
  EXPECT_EQ(status_of(api, get("/api/compare/waits", {{"points", "0"}})), 400);
  EXPECT_EQ(status_of(api, get("/api/compare/nothing")), 404);
}

TEST_F(Folders, CompareReadsEveryFolderAsServeDoes) {
  const auto a = folder("a", kSummaryA);
  const auto no_summary = folder("no-summary");
  try {
    DashboardApi api(std::vector<std::filesystem::path>{a, no_summary}, root_ / "no-assets");
    FAIL() << "a folder without a summary table";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("summary"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DashboardApi(std::vector<std::filesystem::path>{a, root_ / "missing"}, root_ / "no-assets"), InputError);
  const auto damaged = root_ / "damaged";
  std::filesystem::create_directories(damaged);
  std::ofstream(damaged / "results.sqlite") << "not a database";
  EXPECT_THROW(DashboardApi(std::vector<std::filesystem::path>{a, damaged}, root_ / "no-assets"), InputError);
}

// ---- a twin's folder served while it polls -------------------------------------------------------------------------

// Writes the hand-made twin folder into `dir` as the twin does: a whole new results.sqlite renamed over the old one.
void rewrite(const std::filesystem::path& dir, const std::string& extra) {
  const auto tmp = dir.parent_path() / (dir.filename().string() + "-new");
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  ASSERT_EQ(write_hand_made_run(tmp), "");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((tmp / "results.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, extra.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::filesystem::create_directories(dir);
  std::filesystem::rename(tmp / "results.sqlite", dir / "results.sqlite");
  std::filesystem::rename(tmp / "summary.json", dir / "summary.json");
  std::filesystem::remove_all(tmp);
}

TEST_F(Folders, FolderFeedRereadsTheFolderAfterEachWrite) {
  const auto dir = root_ / "twin";
  FolderFeed feed(dir);
  const DashboardApi api(feed, root_ / "no-assets");
  // Before the first poll: 503 saying so, and a status without a clock.
  EXPECT_EQ(status_of(api, get("/api/info")), 503);
  EXPECT_EQ(status_of(api, get("/api/forecasts")), 503);
  EXPECT_EQ(json::parse(api.handle(get("/api/live")).body)["state"], "running");
  rewrite(dir, kTwinTables);
  feed.written();
  json info = answer(api, "/api/info");
  EXPECT_EQ(info["kind"], "twin");
  EXPECT_EQ(info["live"], true);
  EXPECT_EQ(info["controls"], false);
  EXPECT_EQ(info["jobs"], 6);
  EXPECT_EQ(answer(api, "/api/forecasts")["score"]["forecasts"], 7);
  const auto first = api.snapshot();
  // The next poll: job 5 started at 480; its forecast is scored (|800 - 480| = 320 s, lead 30).
  rewrite(dir, std::string(kTwinTables) +
                   "UPDATE jobs SET start_time = 480, state = 'RUNNING', node_list = 'n1' WHERE job_id = 5;"
                   "UPDATE forecasts SET actual_start = 480 WHERE job_id = 5;");
  EXPECT_EQ(answer(api, "/api/forecasts")["score"]["scored"], 6);  // not re-read before written()
  feed.written();
  const json f = answer(api, "/api/forecasts", {{"filter", "waiting"}});
  EXPECT_EQ(f["score"]["scored"], 7);
  EXPECT_EQ(f["counts"]["waiting"], 0);
  EXPECT_EQ(answer(api, "/api/jobs/5")["state"], "RUNNING");
  EXPECT_NE(api.snapshot(), first);
  // The earlier snapshot still reads its own file (the pending reason of job 4 at 150 comes from its database).
  const auto job4 = first->view->job(4, 150);
  ASSERT_TRUE(job4.has_value());
  EXPECT_EQ(job4->reason, "Resources");
  // No controls on a twin's dashboard.
  HttpRequest drain = get("/api/control/node/drain");
  drain.method = "POST";
  drain.headers["authorization"] = "Bearer x";
  EXPECT_EQ(status_of(api, drain), 403);
  // A damaged write: the last good read answers on; the status says what went wrong.
  std::ofstream(dir / "results.sqlite", std::ios::trunc) << "garbage";
  feed.written();
  EXPECT_EQ(answer(api, "/api/forecasts")["score"]["scored"], 7);
  EXPECT_NE(json::parse(api.handle(get("/api/live")).body)["error"].get<std::string>().find("results.sqlite"),
            std::string::npos);
  // The twin stops: the view is no longer live.
  rewrite(dir, kTwinTables);
  feed.written();
  feed.finished();
  EXPECT_EQ(answer(api, "/api/info")["live"], false);
  EXPECT_EQ(json::parse(api.handle(get("/api/live")).body)["state"], "ended");
}

/// A twin polling `url` every half second into the feed's folder, as `gputwin twin --serve` sets it up.
TwinOptions twin_options(const std::string& url, FolderFeed& feed) {
  TwinOptions options;
  options.client.url = url;
  options.client.user = "root";
  options.client.token = "unchecked";
  options.client.retries = 0;
  options.client.on_warning = [](const std::string&) {};
  options.out = feed.folder();
  options.interval_s = 0.5;
  options.history_days = 0;
  options.policy.name = "twin";
  options.results_mutex = &feed.write_mutex();
  options.on_written = [&feed] { feed.written(); };
  return options;
}

TEST_F(Folders, TwinServedWhileItPollsShowsEachPoll) {
  // gputwin's own slurmrestd-compatible API over the hand-made run stands in for the cluster: at simulated second
  // 150 first (job 4 pending, job 2 running), then at 500 (job 4 running since 200). The twin polls it every half
  // second and writes its folder, served through a FolderFeed as `gputwin twin --serve` does.
  const auto run = folder("cluster");
  std::mutex mutex;
  std::shared_ptr<const RunSnapshot> cluster = finished_snapshot(run, 150);
  HttpServer::Options server_options;
  server_options.listen = "127.0.0.1:0";
  HttpServer slurmrestd(server_options, [&](const HttpRequest& r) {
    std::shared_ptr<const RunSnapshot> snap;
    {
      std::lock_guard lock(mutex);
      snap = cluster;
    }
    return SlurmApi(snap->slurm(), SlurmApiOptions{}).handle(r);
  });
  const auto out = root_ / "twin";
  FolderFeed feed(out);
  TwinOptions options = twin_options(slurmrestd.url(), feed);
  std::atomic<bool> stop{false};
  std::ostringstream log;
  int status = -1;
  std::thread twin([&] {
    status = run_twin(options, log, stop);
    feed.finished();
  });
  const DashboardApi api(feed, root_ / "no-assets");
  const auto wait_for = [&](std::uint64_t writes) {
    for (int i = 0; i < 200 && feed.writes() < writes; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return feed.writes() >= writes;
  };
  ASSERT_TRUE(wait_for(1)) << log.str();
  json info = answer(api, "/api/info");
  EXPECT_EQ(info["kind"], "twin");
  EXPECT_EQ(info["live"], true);
  json f = answer(api, "/api/forecasts");
  EXPECT_GE(f["counts"]["waiting"].get<int>(), 1) << f.dump();  // job 4 pending, forecast
  EXPECT_EQ(f["counts"]["started"], 0);
  {
    std::lock_guard lock(mutex);
    cluster = finished_snapshot(run, 500);
  }
  const std::uint64_t seen = feed.writes();
  ASSERT_TRUE(wait_for(seen + 2)) << log.str();
  stop = true;
  twin.join();
  EXPECT_EQ(status, 0) << log.str();
  // Job 4 started between the polls: its forecasts now have an actual start, scored.
  f = answer(api, "/api/forecasts", {{"filter", "started"}});
  ASSERT_GE(f["jobs"].size(), 1u) << f.dump();
  EXPECT_EQ(f["jobs"][0]["job_id"], 4);
  EXPECT_FALSE(f["jobs"][0]["actual_start"].is_null());
  EXPECT_GE(f["score"]["scored"].get<int>(), 1);
  EXPECT_EQ(answer(api, "/api/jobs/4")["state"], "RUNNING");
  EXPECT_EQ(answer(api, "/api/info")["live"], false);
  EXPECT_EQ(json::parse(api.handle(get("/api/live")).body)["state"], "ended");
}

TEST_F(Folders, TwinStopsAfterItsPolls) {
  // --polls 3: three polls written, then the twin returns by itself (no stop, no duration).
  const std::shared_ptr<const RunSnapshot> cluster = finished_snapshot(folder("cluster"), 150);
  HttpServer::Options server_options;
  server_options.listen = "127.0.0.1:0";
  HttpServer slurmrestd(server_options,
                        [&](const HttpRequest& r) { return SlurmApi(cluster->slurm(), SlurmApiOptions{}).handle(r); });
  FolderFeed feed(root_ / "twin-polls");
  TwinOptions options = twin_options(slurmrestd.url(), feed);
  options.max_polls = 3;
  std::atomic<bool> stop{false};
  std::thread watchdog([&stop] {  // a twin that ignored max_polls stops here, with far more than 3 writes
    for (int i = 0; i < 200 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  std::ostringstream log;
  const int status = run_twin(options, log, stop);
  stop = true;
  watchdog.join();
  EXPECT_EQ(status, 0) << log.str();
  EXPECT_EQ(feed.writes(), 3u) << log.str();
}

}  // namespace
}  // namespace gputwin
