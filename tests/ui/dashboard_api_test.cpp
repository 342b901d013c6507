// RunView (a results folder as of any time), the dashboard's API over it, and the HTTP server, on a hand-made
// results database whose answers can be worked out by hand.
#include "ui/dashboard_api.hpp"

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "results/run_view.hpp"
#include "tests/ui/hand_made_run.hpp"
#include "ui/http_server.hpp"

namespace gputwin {
namespace {

std::vector<std::int64_t> ids(const JobPage& page) {
  std::vector<std::int64_t> out;
  for (const JobRow& r : page.rows) out.push_back(r.job_id);
  return out;
}

TEST_F(HandMadeRun, JobStatesFollowTheClock) {
  const RunView view(dir_);
  EXPECT_EQ(view.info().end_s, 500);
  EXPECT_EQ(view.info().scenario, "hand");
  EXPECT_EQ(view.info().total_gpus, 16u);
  JobQuery q;
  q.at_s = 25;  // 1 running, 2 pending, 3 pending (cancelled only at 50), 4 and 5 not submitted
  JobPage page = view.jobs(q);
  EXPECT_EQ(ids(page), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(page.rows[0].state, "RUNNING");
  EXPECT_EQ(page.rows[0].run_time_s, 15);
  EXPECT_EQ(page.rows[1].state, "PENDING");
  EXPECT_EQ(page.rows[1].reason, "Resources");  // from job_reasons at 5
  EXPECT_EQ(page.rows[2].state, "PENDING");
  EXPECT_EQ(page.counts[static_cast<int>(JobFilter::kPending)], 2u);
  q.at_s = 150;  // 1 COMPLETED, 2 RUNNING, 3 CANCELLED (FAILED tab), 4 PENDING with reason Resources (150)
  page = view.jobs(q);
  EXPECT_EQ(page.rows[0].state, "COMPLETED");
  EXPECT_EQ(page.rows[0].run_time_s, 100);
  EXPECT_EQ(page.rows[1].state, "RUNNING");
  EXPECT_EQ(page.rows[2].state, "CANCELLED");
  EXPECT_EQ(page.rows[2].start_s, -1);
  EXPECT_EQ(page.rows[3].state, "PENDING");
  EXPECT_EQ(page.rows[3].reason, "Resources");
  EXPECT_EQ(page.counts[static_cast<int>(JobFilter::kAll)], 4u);
  EXPECT_EQ(page.counts[static_cast<int>(JobFilter::kCompleted)], 1u);
  EXPECT_EQ(page.counts[static_cast<int>(JobFilter::kFailed)], 1u);
  EXPECT_EQ(page.counts[static_cast<int>(JobFilter::kRunning)], 1u);
  q.at_s = 500;  // the end: 2 FAILED, 4 still RUNNING (300 s), 5 PENDING
  q.filter = JobFilter::kFailed;
  page = view.jobs(q);
  EXPECT_EQ(ids(page), (std::vector<std::int64_t>{2, 3}));
  q.filter = JobFilter::kRunning;
  page = view.jobs(q);
  ASSERT_EQ(page.rows.size(), 1u);
  EXPECT_EQ(page.rows[0].run_time_s, 300);
  EXPECT_EQ(page.rows[0].node_list, "n2");
}

TEST_F(HandMadeRun, SortsSearchesAndPages) {
  const RunView view(dir_);
  JobQuery q;
  q.at_s = 500;
  q.sort = JobSort::kGpus;
  q.descending = true;  // 8-GPU jobs 1, 4, 5 first, in job id order among themselves; then 2 (4), then 3 (1)
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{1, 4, 5, 2, 3}));
  q.descending = false;
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{3, 2, 1, 4, 5}));
  q.sort = JobSort::kRunTime;  // at 500: 1 ran 100, 2 ran 190, 3 and 5 none, 4 runs 300
  q.descending = true;
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{4, 2, 1, 3, 5}));
  q.offset = 1;
  q.limit = 2;
  JobPage page = view.jobs(q);
  EXPECT_EQ(ids(page), (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(page.total, 5u);
  q = JobQuery{};
  q.at_s = 500;
  q.search = "ALICE";  // case-insensitive, user column
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{1, 3}));
  q.search = "eval";  // name column
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{3, 5}));
  q.search = "4";  // a job id
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{4}));
  q.search.clear();
  q.user = "bob";
  EXPECT_EQ(ids(view.jobs(q)), (std::vector<std::int64_t>{2, 5}));
  q.user = "nobody";
  EXPECT_EQ(view.jobs(q).total, 0u);
}

TEST_F(HandMadeRun, NodesOverviewPartitionsAndSeries) {
  const RunView view(dir_);
  auto nodes = view.nodes(150);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].state, "MIXED");
  EXPECT_EQ(nodes[1].state, "DRAINED");
  EXPECT_EQ(nodes[1].group, "DRAIN");
  nodes = view.nodes(100);  // GPU sample at 100: n1 GPUs 90 and 70 (XID 79 on GPU 1), n2 GPU 0 idle
  EXPECT_DOUBLE_EQ(nodes[0].gpu_util_pct, 80);
  EXPECT_EQ(nodes[0].xid, 79);
  EXPECT_DOUBLE_EQ(nodes[0].gpu_mem_pct, 100.0 * 2048 / (2 * 80 * 1024));  // H100: 80 GB
  const Overview o = view.overview(150);
  EXPECT_EQ(o.running_jobs, 1);
  EXPECT_EQ(o.pending_jobs, 1);
  EXPECT_EQ(o.allocated_gpus, 4);
  EXPECT_EQ(o.node_groups[1], 1);  // MIXED
  EXPECT_EQ(o.node_groups[3], 1);  // DRAIN
  const auto parts = view.partitions(150);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].total_nodes, 2);
  EXPECT_EQ(parts[0].avail_nodes, 1);  // n2 is drained
  EXPECT_EQ(parts[0].total_gpus, 16);
  EXPECT_EQ(parts[0].max_time_s, 86400);
  const auto series = view.cluster_series(0, 500, 3);  // 6 samples thinned by 2: 0, 200, 400
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[1].time, 200);
  EXPECT_EQ(series[1].jobs_running, 2);
  EXPECT_DOUBLE_EQ(series[1].gpu_util_pct, 75);
  const auto gpu = view.gpu_series(0, 100, 300, 10);
  EXPECT_EQ(gpu.size(), 4u);  // GPU 0 at 100, 200, 300; GPU 1 at 100
}

HttpRequest get(const std::string& path, std::map<std::string, std::string> query = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  r.query = std::move(query);
  return r;
}

TEST_F(HandMadeRun, GanttIsExactWhenItFitsAndADensityGridWhenNot) {
  const RunView view(dir_);
  // Runs on nodes: job 1 on n1 [10, 110), job 2 on n1 [110, 300), job 4 on n2 [200, 500: still running at the end).
  GanttQuery q;
  q.from_s = 0;
  q.to_s = 500;
  q.node_from = 0;
  q.node_to = 2;
  q.width = 5;
  q.height = 10;
  GanttView g = view.gantt(q);
  ASSERT_TRUE(g.exact);
  EXPECT_EQ(g.jobs_in_view, 3u);
  ASSERT_EQ(g.segments.size(), 3u);
  EXPECT_EQ(g.segments[0].job_id, 1);
  EXPECT_EQ(g.segments[1].start_s, 110);
  EXPECT_EQ(g.segments[2].row, 1);
  EXPECT_EQ(g.segments[2].end_s, 500);
  // A window that cuts runs: [150, 250) holds job 2 (clipped to 150-250) and job 4 (200-250).
  q.from_s = 150;
  q.to_s = 250;
  g = view.gantt(q);
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_EQ(g.segments[0].start_s, 150);
  EXPECT_EQ(g.segments[0].end_s, 250);
  EXPECT_EQ(g.segments[1].start_s, 200);
  // One pixel row for two nodes: a grid of 1 x 5 cells of 100 s x 2 nodes = 200 node-seconds each.
  // [0,100): job 1's 90 s -> 0.45 -> 115; [100,200): 10 + 90 -> 0.5 -> 128; [200,300): 100 + 100 -> 255;
  // [300,400) and [400,500): job 4's 100 s -> 128.
  q.from_s = 0;
  q.to_s = 500;
  q.height = 1;
  g = view.gantt(q);
  ASSERT_FALSE(g.exact);
  EXPECT_EQ(g.rows, 1);
  EXPECT_EQ(g.nodes_per_row, 2);
  EXPECT_EQ(g.busy, (std::vector<std::uint8_t>{115, 128, 255, 128, 128}));
  // The API sends the grid as base64, one byte per cell.
  const DashboardApi api(dir_, dir_ / "no-assets");
  const auto body = nlohmann::json::parse(
      api.handle(get("/api/gantt", {{"from", "0"}, {"to", "500"}, {"width", "5"}, {"height", "1"}})).body);
  EXPECT_EQ(body.at("busy"), "c4D/gIA=");
  EXPECT_EQ(body.at("jobs_in_view"), 3);
  EXPECT_THROW((void)api.handle(get("/api/gantt", {{"width", "0"}})), HttpError);  // served as a 400
}

// A node_list that is not a hostlist (a damaged results.sqlite) draws its job on no node instead of throwing out of
// the Gantt (std::invalid_argument became a 500; found by fuzz_results_sql).
TEST_F(HandMadeRun, GanttLeavesOutAJobWhoseNodeListIsNotAHostlist) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE jobs SET node_list = 'n[001-000]' WHERE job_id = 2", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const RunView view(dir_);
  GanttQuery q;
  q.to_s = 500;
  q.node_to = 2;
  q.width = 5;
  q.height = 10;
  const GanttView g = view.gantt(q);
  EXPECT_EQ(g.jobs_in_view, 2u);  // jobs 1 and 4
}

TEST_F(HandMadeRun, WaitsAndCosts) {
  const RunView view(dir_);
  // Started by 500: job 1 waited 10 s, job 2 105 s, job 4 170 s (3 and 5 never started).
  WaitDistribution w = view.waits(500, 10);
  EXPECT_EQ(w.jobs, 3u);
  EXPECT_DOUBLE_EQ(w.mean_s, 95.0);
  EXPECT_EQ(w.p50_s, 105);  // nearest rank: ceil(0.5 x 3) = the 2nd
  EXPECT_EQ(w.p90_s, 170);
  EXPECT_EQ(w.max_s, 170);
  ASSERT_EQ(w.cdf.size(), 3u);
  EXPECT_EQ(w.cdf[0], (std::pair<std::int64_t, double>{10, 1.0 / 3}));
  EXPECT_EQ(w.cdf[2], (std::pair<std::int64_t, double>{170, 1.0}));
  w = view.waits(500, 2);  // two equal shares: the 2nd and the 3rd job
  ASSERT_EQ(w.cdf.size(), 2u);
  EXPECT_EQ(w.cdf[0].first, 105);
  EXPECT_EQ(view.waits(5, 10).jobs, 0u);  // nothing started by 5
  // Costs: two scopes; cluster's series within [0, 150], and thinned to its ends.
  EXPECT_EQ(view.costs().scopes(), (std::vector<std::string>{"cluster", "idle"}));
  const auto part = view.costs().points("cluster", 0, 150, 10);
  ASSERT_EQ(part.size(), 2u);
  EXPECT_DOUBLE_EQ(part[1].total_usd, 1.0);
  const auto ends = view.costs().points("cluster", 0, 500, 2);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].time, 0);
  EXPECT_EQ(ends[1].time, 200);
  const DashboardApi api(dir_, dir_ / "no-assets");
  const auto body = nlohmann::json::parse(api.handle(get("/api/waits", {{"t", "500"}})).body);
  EXPECT_EQ(body.at("p95"), 170);
  EXPECT_THROW((void)api.handle(get("/api/costs", {{"scope", "nope"}})), HttpError);
}

TEST_F(HandMadeRun, EventsAreTheLastLinesUpToTheTime) {
  const RunView view(dir_);
  const auto events = view.events(120, 4, "");
  // Up to 120: submits 0, 5, 20, 30; starts 10, 110; end 50 (job 3), 110 (job 1); node events 10, 110, 120.
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events.back().time, 120);
  EXPECT_EQ(events.back().subject, "n2");
  for (std::size_t i = 1; i < events.size(); ++i) EXPECT_LE(events[i - 1].time, events[i].time);
  const auto jobs_only = view.events(500, 100, "job");
  EXPECT_EQ(jobs_only.size(), 5u + 3u + 3u);  // 5 submits, 3 starts, 3 ends
}

TEST_F(HandMadeRun, ControllerRecordsAreEventKindsInTimeOrder) {
  // The hand-made run with a preemption, the autoscaler's records, quota events and an operation's steps added (a
  // cloud run's tables, as write_results writes them: REAL times, shown as whole seconds at or before the time).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, R"sql(
    CREATE TABLE preemptions (time INTEGER NOT NULL, job_id INTEGER NOT NULL, preemptor_id INTEGER NOT NULL,
      end_time INTEGER NOT NULL, mode TEXT NOT NULL);
    INSERT INTO preemptions VALUES (150, 2, 4, 160, 'REQUEUE');
    CREATE TABLE scaling (time REAL NOT NULL, node TEXT NOT NULL, action TEXT NOT NULL, demand INTEGER);
    INSERT INTO scaling VALUES (40, 'n2', 'create', 1), (130, 'n2', 'ready', NULL), (450.5, 'n2', 'remove', 0);
    CREATE TABLE quota_events (time REAL NOT NULL, user TEXT NOT NULL, action TEXT NOT NULL, job_id INTEGER,
      spend_usd REAL NOT NULL, projected_usd REAL NOT NULL);
    INSERT INTO quota_events VALUES (60, 'bob', 'warn', NULL, 12.5, 20), (70, 'bob', 'refuse', 5, 13, 21.25);
    CREATE TABLE operations (time REAL NOT NULL, action TEXT NOT NULL, step TEXT NOT NULL, node TEXT, name TEXT,
      jobs_killed INTEGER NOT NULL);
    INSERT INTO operations VALUES (90, 'restart_workers', 'start', NULL, 'nightly', 2),
      (95, 'restart_workers', 'node_restarted', 'n1', 'nightly', 0);)sql",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  const RunView view(dir_);
  const auto lines = [&](std::int64_t t, std::string_view kind) {
    std::string out;
    for (const EventLine& e : view.events(t, 100, kind))
      out += std::to_string(e.time) + "|" + e.kind + "|" + e.subject + "|" + e.text + "\n";
    return out;
  };
  EXPECT_EQ(
      lines(500, "scaling"),
      "40|scaling|n2|create (demand 1 node(s))\n130|scaling|n2|ready\n450|scaling|n2|remove (demand 0 node(s))\n");
  EXPECT_EQ(lines(450, "scaling"), "40|scaling|n2|create (demand 1 node(s))\n130|scaling|n2|ready\n");  // 450.5 > 450
  EXPECT_EQ(lines(500, "quota"),
            "60|quota|bob|warn: spend 12.50 USD, projected 20.00 USD\n"
            "70|quota|bob|refuse job 5: spend 13.00 USD, projected 21.25 USD\n");
  EXPECT_EQ(lines(500, "operation"),
            "90|operation|cluster|restart_workers nightly: start, 2 job run(s) ended\n"
            "95|operation|n1|restart_workers nightly: node_restarted\n");
  EXPECT_EQ(lines(149, "preemption"), "");
  EXPECT_EQ(lines(150, "preemption"), "150|preemption|2|preempted by 4 (REQUEUE), ends at 160\n");
  // Every kind together, in time order: up to 160 the last four are n2's drain (120), its ready (130), the
  // preemption (150), and before them the three lines at 110 (job 2's start, job 1's end, n1 MIXED).
  const auto all = view.events(160, 4, "");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].time, 110);
  EXPECT_EQ(all[1].kind + " " + all[1].subject, "node n2");
  EXPECT_EQ(all[2].kind + " " + std::to_string(all[2].time), "scaling 130");
  EXPECT_EQ(all[3].kind + " " + std::to_string(all[3].time), "preemption 150");
  const auto everything = view.events(500, 1000, "");
  for (std::size_t i = 1; i < everything.size(); ++i) EXPECT_LE(everything[i - 1].time, everything[i].time);
  // 11 job lines, 6 node events, then 3 scaling, 2 quota, 2 operation and 1 preemption lines.
  EXPECT_EQ(everything.size(), 11u + 6u + 3u + 2u + 2u + 1u);
  // The API takes the new kinds (and still refuses others).
  const DashboardApi api(dir_, dir_ / "no-assets");
  const auto body = nlohmann::json::parse(api.handle(get("/api/events", {{"t", "500"}, {"kind", "quota"}})).body);
  ASSERT_EQ(body.at("events").size(), 2u);
  EXPECT_EQ(body.at("events")[1].at("subject"), "bob");
  EXPECT_THROW((void)api.handle(get("/api/events", {{"kind", "scaler"}})), HttpError);
}

TEST_F(HandMadeRun, AllNodesOverlayIsEachNodesMeanOverItsGpus) {
  // gpu_metrics every 100 s: n1 has GPUs 0 and 1 at 100 s (90 and 70: 80), GPU 0 at 200 s (50) and 300 s (0); n2
  // GPU 0 at 100 s (0). So n1's line is 80, 50, 0 (mean 43.33) and n2's 0 (mean 0); across nodes at 100 s the band is
  // 0-80 with mean 40 over 2 nodes, at 200 and 300 s n1 alone; 0, 400 and 500 s have no sample (null).
  const DashboardApi api(dir_, dir_ / "no-assets");
  auto body = nlohmann::json::parse(api.handle(get("/api/series/nodes", {{"from", "0"}, {"to", "500"}})).body);
  using nlohmann::json;
  EXPECT_EQ(body.at("time"), json({0, 100, 200, 300, 400, 500}));
  EXPECT_EQ(body.at("min"), json({nullptr, 0.0, 50.0, 0.0, nullptr, nullptr}));
  EXPECT_EQ(body.at("max"), json({nullptr, 80.0, 50.0, 0.0, nullptr, nullptr}));
  EXPECT_EQ(body.at("mean"), json({nullptr, 40.0, 50.0, 0.0, nullptr, nullptr}));
  EXPECT_EQ(body.at("sampled"), json({0, 2, 1, 1, 0, 0}));
  EXPECT_EQ(body.at("nodes_sampled"), 2);
  EXPECT_EQ(body.at("all_nodes"), true);
  ASSERT_EQ(body.at("lines").size(), 2u);
  EXPECT_EQ(body.at("lines")[0].at("node"), "n1");
  EXPECT_EQ(body.at("lines")[0].at("util"), json({nullptr, 80.0, 50.0, 0.0, nullptr, nullptr}));
  EXPECT_EQ(body.at("lines")[0].at("mean"), 43.33);
  EXPECT_EQ(body.at("lines")[1].at("node"), "n2");
  EXPECT_EQ(body.at("lines")[1].at("util"), json({nullptr, 0.0, nullptr, nullptr, nullptr, nullptr}));

  // The same numbers straight from the database: each node's mean over its GPUs at each time.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir_ / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT n.name, m.time, avg(m.util_pct) FROM gpu_metrics m JOIN nodes n ON "
                               "n.node_index = m.node_index GROUP BY m.node_index, m.time",
                               -1, &q, nullptr),
            SQLITE_OK);
  int rows = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    const json& line = body.at("lines")[name == "n1" ? 0 : 1];
    const auto i = static_cast<std::size_t>(sqlite3_column_int64(q, 1) / 100);
    EXPECT_DOUBLE_EQ(line.at("util")[i].get<double>(), sqlite3_column_double(q, 2)) << name << " " << i;
    ++rows;
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  EXPECT_EQ(rows, 4);

  // Bounded: one line asked for, the busiest (n1) only; a band still over both nodes.
  body = nlohmann::json::parse(api.handle(get("/api/series/nodes", {{"lines", "1"}})).body);
  EXPECT_EQ(body.at("all_nodes"), false);
  ASSERT_EQ(body.at("lines").size(), 1u);
  EXPECT_EQ(body.at("lines")[0].at("node"), "n1");
  EXPECT_EQ(body.at("sampled")[1], 2);
  // Thinned to 3 points (every other sample: 0, 200, 400 s), and a window (200 and 300 s).
  body = nlohmann::json::parse(api.handle(get("/api/series/nodes", {{"points", "3"}})).body);
  EXPECT_EQ(body.at("time"), json({0, 200, 400}));
  EXPECT_EQ(body.at("lines")[0].at("util"), json({nullptr, 50.0, nullptr}));
  EXPECT_EQ(body.at("lines")[0].at("mean"), 50.0);
  EXPECT_EQ(body.at("nodes_sampled"), 1);  // n2 has no sample at those times
  body = nlohmann::json::parse(api.handle(get("/api/series/nodes", {{"from", "150"}, {"to", "350"}})).body);
  EXPECT_EQ(body.at("time"), json({200, 300}));
  EXPECT_EQ(body.at("mean"), json({50.0, 0.0}));
  EXPECT_THROW((void)api.handle(get("/api/series/nodes", {{"lines", "65"}})), HttpError);
  EXPECT_THROW((void)api.handle(get("/api/series/nodes", {{"points", "0"}})), HttpError);
}

TEST_F(HandMadeRun, NodesSummaryCountsHealthyFailedXidAndGpus) {
  // At 150 s n2 is DRAINED (120-180) and n1 shows XID 79 on GPU 1 in its sample at 100 s: no healthy node, one
  // failed (drained), one with XID errors, 16 GPUs none of them on a healthy node. At 250 s n2 runs job 4 and n1's
  // sample at 200 s has no XID: both healthy.
  const DashboardApi api(dir_, dir_ / "no-assets");
  auto body = nlohmann::json::parse(api.handle(get("/api/nodes", {{"t", "150"}})).body);
  EXPECT_EQ(body.at("summary"), nlohmann::json::parse(R"({"nodes": 2, "healthy": 0, "failed": 1, "drain": 1,
      "down": 0, "xid": 1, "gpus": 16, "healthy_gpus": 0})"));
  body = nlohmann::json::parse(api.handle(get("/api/nodes", {{"t", "250"}, {"filter", "failed"}})).body);
  EXPECT_EQ(body.at("summary"), nlohmann::json::parse(R"({"nodes": 2, "healthy": 2, "failed": 0, "drain": 0,
      "down": 0, "xid": 0, "gpus": 16, "healthy_gpus": 16})"));  // the whole cluster whatever the filter
  EXPECT_TRUE(body.at("nodes").empty());
}

TEST(RunViewErrors, AFolderWithoutResultsNamesTheFile) {
  try {
    RunView view("/nonexistent/folder");
    FAIL() << "expected an InputError";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folder/results.sqlite"), std::string::npos) << e.what();
  }
}

TEST_F(HandMadeRun, ApiAnswersAndRefusesBadRequests) {
  const DashboardApi api(dir_, dir_ / "no-assets");
  auto body = nlohmann::json::parse(api.handle(get("/api/jobs", {{"t", "150"}, {"filter", "pending"}})).body);
  EXPECT_EQ(body["total"], 1);
  EXPECT_EQ(body["jobs"][0]["job_id"], 4);
  EXPECT_EQ(body["counts"]["ALL"], 4);
  body = nlohmann::json::parse(api.handle(get("/api/jobs/2", {{"t", "150"}})).body);
  EXPECT_EQ(body["state"], "RUNNING");
  body = nlohmann::json::parse(api.handle(get("/api/nodes", {{"t", "150"}, {"filter", "failed"}})).body);
  ASSERT_EQ(body["nodes"].size(), 1u);
  EXPECT_EQ(body["nodes"][0]["name"], "n2");
  const auto status_of = [&](const HttpRequest& r) {
    try {
      api.handle(r);
      return 200;
    } catch (const HttpError& e) {
      return e.status();
    }
  };
  EXPECT_EQ(status_of(get("/api/jobs", {{"t", "soon"}})), 400);
  EXPECT_EQ(status_of(get("/api/jobs", {{"t", "99999999999999999999"}})), 400);
  EXPECT_EQ(status_of(get("/api/jobs", {{"filter", "exploded"}})), 400);
  EXPECT_EQ(status_of(get("/api/jobs", {{"sort", "1; DROP TABLE jobs"}})), 400);
  EXPECT_EQ(status_of(get("/api/jobs", {{"limit", "0"}})), 400);
  EXPECT_EQ(status_of(get("/api/jobs/77")), 404);
  EXPECT_EQ(status_of(get("/api/jobs/x")), 400);
  EXPECT_EQ(status_of(get("/api/nodes/n9/gpus")), 404);
  EXPECT_EQ(status_of(get("/api/nothing")), 404);
  EXPECT_EQ(status_of(get("/../results.sqlite")), 404);
  EXPECT_EQ(status_of(get("/..%2fresults.sqlite")), 404);
  HttpRequest post = get("/api/jobs");
  post.method = "POST";
  EXPECT_EQ(status_of(post), 405);
  // Without built pages, / explains how to build them.
  const HttpResponse index = api.handle(get("/"));
  EXPECT_NE(index.body.find("not built"), std::string::npos);
  // An empty path is the index as well (substr(1) of it threw std::out_of_range; found by fuzz_dashboard_http).
  EXPECT_NE(api.handle(get("")).body.find("not built"), std::string::npos);
}

std::size_t append(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

/// GET (or POST `body`) `url` with libcurl: the status and body.
std::pair<long, std::string> fetch(const std::string& url, const std::string* body = nullptr) {
  CURL* curl = curl_easy_init();
  std::string out;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
  if (body != nullptr) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  long status = 0;
  if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  return {status, out};
}

TEST_F(HandMadeRun, ServerAnswersOverHttp) {
  const DashboardApi api(dir_, dir_ / "no-assets");
  HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.max_body_bytes = 1000;
  HttpServer server(options, [&](const HttpRequest& r) { return api.handle(r); });
  auto [status, body] = fetch(server.url() + "/api/overview?t=150");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(nlohmann::json::parse(body)["running_jobs"], 1);
  std::tie(status, body) = fetch(server.url() + "/api/jobs?search=train%2Da");  // URL-decoded
  EXPECT_EQ(nlohmann::json::parse(body)["total"], 1);
  std::tie(status, body) = fetch(server.url() + "/api/jobs?t=x");
  EXPECT_EQ(status, 400);
  EXPECT_NE(nlohmann::json::parse(body)["error"].get<std::string>().find("'t'"), std::string::npos);
  const std::string big(5000, 'x');
  std::tie(status, body) = fetch(server.url() + "/api/jobs", &big);
  EXPECT_EQ(status, 413);
  std::tie(status, body) = fetch(server.url() + "/metrics?t=100");
  EXPECT_EQ(status, 200);  // Prometheus text at t = 100: the cluster_metrics row of 100
  EXPECT_NE(body.find("\nslurm_jobs_pending 3\n"), std::string::npos) << body.substr(0, 400);
  std::tie(status, body) = fetch(server.url() + "/metrics?t=100000");
  EXPECT_EQ(status, 400);  // outside the run
  // An error quoting a path that is not UTF-8 (%ff decodes to byte 0xff) is answered with U+FFFD in its place; the
  // server used to end on it (nlohmann's dump threw type_error 316 out of the request thread), found by following
  // fuzz_slurmrestd_http's finding of the same kind.
  const std::string empty;
  std::tie(status, body) = fetch(server.url() + "/%ff", &empty);
  EXPECT_EQ(status, 405);
  EXPECT_NE(nlohmann::json::parse(body)["error"].get<std::string>().find("POST /\xEF\xBF\xBD"), std::string::npos);
  std::tie(status, body) = fetch(server.url() + "/api/info");
  EXPECT_EQ(status, 200);  // still serving
}

TEST(HttpServerThreads, AnswerAtTheNicenessAskedFor) {
  // A live run's readers yield the CPU to the simulation: each worker thread raises its own niceness (Linux keeps
  // one per thread) before its first answer; the process's other threads keep theirs.
  errno = 0;
  const int base = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (base > 14) GTEST_SKIP() << "the test runs at niceness " << base << ": no room for +5";
  HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  options.thread_nice = 5;
  HttpServer server(options, [](const HttpRequest&) {
    HttpResponse response;
    response.body = std::to_string(::getpriority(PRIO_PROCESS, 0));
    return response;
  });
  for (int i = 0; i < 3; ++i) {  // once per thread, however many answer
    const auto [status, body] = fetch(server.url() + "/");
    EXPECT_EQ(status, 200);
    EXPECT_EQ(body, std::to_string(base + 5));
  }
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), base);  // this thread unchanged
}

TEST(ListenSpec, ParsesAndRefuses) {
  EXPECT_EQ(listen_spec("127.0.0.1:8080"), "127.0.0.1:8080");
  EXPECT_EQ(listen_spec(":9000"), "127.0.0.1:9000");
  EXPECT_EQ(listen_spec("localhost:1"), "127.0.0.1:1");
  EXPECT_EQ(listen_spec("[::1]:8080"), "[::1]:8080x");
  EXPECT_THROW(listen_spec("8080"), std::invalid_argument);
  EXPECT_THROW(listen_spec("127.0.0.1:99999"), std::invalid_argument);
  EXPECT_THROW(listen_spec("127.0.0.1:80a"), std::invalid_argument);
  EXPECT_THROW(listen_spec("example.com:80"), std::invalid_argument);
}

}  // namespace
}  // namespace gputwin
