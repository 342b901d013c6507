// `gputwin report` on a results.sqlite written by hand: every table the report reads, with rows chosen so the
// figures can be worked out on paper (the derivations are next to the rows and the checks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/report_command.hpp"
#include "model/errors.hpp"
#include "results/report_data.hpp"
#include "tests/support/hand_made_results.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The run: horizon 108000 s (job 4 ends at 90000 + 18000), so 2 days and a default step of 1800 s (the smallest
// of the steps that makes at most 100 buckets: 108000 / 900 = 120 > 100, 108000 / 1800 = 60).
constexpr const char* kTables = R"sql(
CREATE TABLE runs (run_id INTEGER PRIMARY KEY, scenario TEXT NOT NULL, scenario_file TEXT, seed INTEGER NOT NULL,
  policy TEXT NOT NULL, version TEXT NOT NULL, wall_time_s REAL NOT NULL, events INTEGER NOT NULL, parameters TEXT);
INSERT INTO runs VALUES (1, 'handmade', 'handmade.json', 7, 'slurm', '0.1.0', 1.5, 100, '{}');
CREATE TABLE summary (key TEXT PRIMARY KEY, value REAL);
INSERT INTO summary VALUES ('jobs', 6), ('started', 5), ('jobs_COMPLETED', 4), ('jobs_PENDING', 1),
  ('jobs_NODE_FAIL', 1), ('gpu_utilization', 0.5), ('cpu_utilization', 0.25), ('gpu_hours', 1000), ('allocated_gpu_hours', 1100),
  ('wait_mean_s', 41400), ('wait_p95_s', 99600), ('lost_gpu_hours', 10), ('goodput', 0.9), ('faults', 5),
  ('job_interruptions', 4), ('node_availability', 0.995), ('gpu_hours_lost_fault_work', 50),
  ('gpu_hours_lost_restart', 20), ('gpu_hours_checkpoint', 30), ('lost_gpu_hours_class_gpu_hbm3', 40),
  ('lost_gpu_hours_class_software_bug', 30), ('cost_total_usd', 12345.5), ('cost_gpu_usd', 10000), ('cost_per_used_gpu_hour', 2.5),
  ('brand_new_figure', 42);
CREATE TABLE jobs (job_id INTEGER NOT NULL, name TEXT, user TEXT, account TEXT, partition TEXT, qos TEXT,
  submit_time INTEGER NOT NULL, start_time INTEGER, end_time INTEGER, state TEXT NOT NULL, nodes INTEGER NOT NULL,
  cpus INTEGER NOT NULL, gpus INTEGER NOT NULL, time_limit INTEGER NOT NULL, node_list TEXT, priority INTEGER,
  reason TEXT, wait_time INTEGER, run_time INTEGER, array_job_id INTEGER, array_task_id INTEGER,
  trace_run_time INTEGER NOT NULL, leaf_switches INTEGER);
-- job, gpus, submit, start, end, run_time:  waits 0, 3500, 5200, 89700, 99600
INSERT INTO jobs (job_id, submit_time, start_time, end_time, state, nodes, cpus, gpus, time_limit, wait_time,
                  run_time, trace_run_time) VALUES
  (1, 0, 0, 36000, 'COMPLETED', 1, 8, 8, 40000, 0, 36000, 36000),
  (2, 100, 3600, 75600, 'COMPLETED', 2, 16, 16, 80000, 3500, 72000, 72000),
  (3, 200, 5400, 41400, 'COMPLETED', 8, 64, 64, 40000, 5200, 36000, 36000),
  (4, 300, 90000, 108000, 'NODE_FAIL', 16, 128, 128, 20000, 89700, 18000, 18000),
  (5, 400, 100000, 103600, 'COMPLETED', 128, 1024, 1024, 4000, 99600, 3600, 3600),
  (6, 500, NULL, NULL, 'PENDING', 1, 4, 4, 4000, NULL, NULL, 100);
CREATE TABLE cluster_metrics (time INTEGER PRIMARY KEY, nodes_idle INTEGER NOT NULL, nodes_mixed INTEGER NOT NULL,
  nodes_alloc INTEGER NOT NULL, nodes_down INTEGER NOT NULL, nodes_drain INTEGER NOT NULL,
  jobs_pending INTEGER NOT NULL, jobs_running INTEGER NOT NULL, cpus_alloc INTEGER NOT NULL,
  gpus_alloc INTEGER NOT NULL, gpu_power_w REAL NOT NULL, gpu_energy_j REAL NOT NULL, gpus_free INTEGER NOT NULL,
  gpus_free_fragmented INTEGER NOT NULL, nodes_powered_down INTEGER NOT NULL);
INSERT INTO cluster_metrics VALUES (0, 2, 0, 2, 0, 0, 1, 1, 8, 16, 1000, 0, 16, 0, 4),
  (1800, 0, 0, 4, 0, 0, 0, 2, 16, 32, 2000, 0, 0, 0, 2), (3600, 1, 1, 1, 1, 0, 0, 2, 16, 12, 2000, 0, 12, 4, 6);
CREATE TABLE faults (fault_id INTEGER, time REAL, class TEXT, cause TEXT, xid INTEGER, component TEXT, node TEXT,
  gpu INTEGER, effect TEXT, symptom TEXT, detected_by TEXT, detected_time REAL, return_time REAL,
  jobs_hit INTEGER, lost_gpu_hours REAL);
-- delays: 300 (health_check), 0 (at_once), 900 (health_check), undetected, 600 (health_check)
INSERT INTO faults VALUES
  (1, 4000, 'gpu_hbm3', 'HBM3 DBE', 48, 'gpu', 'g001', 3, 'reset_gpu', 'gpu_error', 'health_check', 4300, 6000, 1, 16),
  (2, 19000, 'software_bug', 'Software bug', NULL, 'software', 'g002', NULL, 'restart_app', 'app_error', 'at_once',
   19000, 19000, 1, 8),
  (3, 94000, 'gpu_hbm3', 'HBM3 DBE', 48, 'gpu', 'g003', 0, 'reset_gpu', 'gpu_error', 'health_check', 94900, 95500,
   1, 64),
  (4, 95500, 'nvlink <x>', 'NVLink', 74, 'nvlink', 'g004', 1, 'none', 'none', NULL, NULL, NULL, 0, 0),
  (5, 100000, 'gpu_sram', 'SRAM', 94, 'gpu', 'g001', 2, 'reboot_node', 'gpu_error', 'health_check', 100600, 101000,
   0, 2.5);
CREATE TABLE job_interruptions (time REAL, job_id INTEGER, fault_id INTEGER, state TEXT, run_s REAL, lost_s REAL,
  lost_gpu_hours REAL, requeued INTEGER);
INSERT INTO job_interruptions VALUES (5000, 2, 1, 'NODE_FAIL', 14400, 3600, 16, 1),
  (20000, 2, 2, 'FAILED', 21600, 1800, 8, 1), (95000, 4, 3, 'NODE_FAIL', 7200, 1800, 64, 0),
  (96000, 99, 4, 'FAILED', 3600, 60, 1, 0);
CREATE TABLE costs (time REAL, scope TEXT, burn_usd_per_h REAL, total_usd REAL);
INSERT INTO costs VALUES (0, 'cluster', 100, 0), (3600, 'cluster', 200, 150), (7200, 'cluster', 300, 400),
  (3600, 'user:alice', 10, 50), (7200, 'user:alice', 10, 120), (7200, 'user:bob', 50, 300),
  (7200, 'account:ml', 60, 420);
CREATE TABLE job_checkpoints (job_id INTEGER NOT NULL, gpus INTEGER NOT NULL, interval_s REAL, write_s REAL NOT NULL,
  restart_s REAL NOT NULL, mttf_h REAL, young_s REAL, daly_s REAL);
-- Job 4: write 72 s, MTTF 1 h: Young sqrt(2 x 72 x 3600) = 720 s; Daly with x = 72 / 7200 = 0.01:
-- 720 (1 + 0.1 / 3 + 0.01 / 9) - 72 = 672.8 s. Jobs 2 and 3 share a plan: write 32 s, MTTF 4 h: Young
-- sqrt(2 x 32 x 14400) = 960 s, Daly 960 (1 + 1/90 + 1/8100) - 32 = 938.785 s. Job 5 has no MTTF (no profile).
INSERT INTO job_checkpoints VALUES (2, 16, 600, 32, 120, 4, 960, 938.785), (3, 16, 600, 32, 120, 4, 960, 938.785),
  (4, 128, 1800, 72, 600, 1, 720, 672.8), (5, 1024, NULL, 72, 600, NULL, NULL, NULL);
CREATE TABLE scaling (time REAL NOT NULL, node TEXT NOT NULL, action TEXT NOT NULL, demand INTEGER NOT NULL);
-- 1800 s buckets: 0 (three creates, two ready, a boot failure), 1 (c003 again), 2 (an action the report does not
-- know), 5 (c001 removed by the autoscaler, c002 reclaimed: removed without remove).
INSERT INTO scaling VALUES (100, 'c001', 'create', 3), (100, 'c002', 'create', 3), (100, 'c003', 'create', 3),
  (400, 'c001', 'ready', 0), (400, 'c002', 'ready', 0), (400, 'c003', 'boot_failed', 0), (2000, 'c003', 'create', 1),
  (2300, 'c003', 'ready', 0), (3700, 'c004', 'power_cycle', 0), (9000, 'c001', 'remove', 0),
  (9030, 'c001', 'removed', 0), (9100, 'c002', 'removed', 0);
CREATE TABLE quota_events (time REAL NOT NULL, user TEXT NOT NULL, action TEXT NOT NULL, job_id INTEGER,
  spend_usd REAL NOT NULL, projected_usd REAL NOT NULL);
INSERT INTO quota_events VALUES (600, 'alice', 'warn', NULL, 80, 95), (1200, 'alice', 'block', NULL, 101, 110),
  (1200, 'alice', 'cancel', 2, 101, 110), (1200, 'alice', 'cancel', 3, 101, 110),
  (1200, 'alice', 'refuse', 6, 101, 110), (3000, 'bob', 'warn', NULL, 40, 45);
CREATE TABLE operations (time REAL NOT NULL, action TEXT NOT NULL, step TEXT NOT NULL, node TEXT, name TEXT,
  jobs_killed INTEGER NOT NULL);
INSERT INTO operations VALUES (1000, 'update_image', 'start', NULL, 'img:v2', 0),
  (5000, 'maintenance', 'start', NULL, NULL, 2), (8600, 'maintenance', 'node_back', 'g001', NULL, 0),
  (8600, 'maintenance', 'node_back', 'g002', NULL, 0), (20000, 'attach_volume', 'start', NULL, 'scratch', 1),
  (20600, 'attach_volume', 'node_restarted', 'g003', 'scratch', 0);
)sql";

/// Options with a step of `step_s` seconds.
ReportOptions options_with_step(double step_s) {
  ReportOptions options;
  options.step_s = step_s;
  return options;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(GPUTWIN_BINARY_DIR) / "report-test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  /// Writes results.sqlite from `sql`.
  void make_db(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    // No fsync per statement: the file is scratch, and the tests stay fast on a busy disk.
    const int rc = sqlite3_exec(db, ("PRAGMA synchronous = OFF;" + testing::results_stamp_sql() + sql).c_str(), nullptr,
                                nullptr, &err);
    testing::write_summary_marker(dir_);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << msg;
  }
  std::filesystem::path dir_;
};

TEST_F(ReportTest, WaitsPerStartBucketByHand) {
  make_db(kTables);
  const ReportData d = load_report_data(dir_, 3600);
  // Starts 0, 3600, 5400, 90000, 100000 -> buckets 0, 1, 1, 25, 27 of 3600 s.
  ASSERT_EQ(d.waits.size(), 28u);
  EXPECT_EQ(d.started_jobs, 5u);
  EXPECT_EQ(d.waits[0].jobs, 1u);
  EXPECT_EQ(d.waits[1].jobs, 2u);
  EXPECT_DOUBLE_EQ(d.waits[1].mean_s, (3500.0 + 5200) / 2);  // 4350
  EXPECT_DOUBLE_EQ(d.waits[1].p95_s, 5200);                  // rank ceil(0.95 x 2) = 2
  EXPECT_EQ(d.waits[2].jobs, 0u);
  EXPECT_DOUBLE_EQ(d.waits[27].mean_s, 99600);
  EXPECT_DOUBLE_EQ(d.horizon_s, 108000);
  EXPECT_DOUBLE_EQ(load_report_data(dir_, 0).step_s, 1800);
}

TEST_F(ReportTest, ClusterSamplesAveragedPerBucket) {
  make_db(kTables);
  const ReportData d = load_report_data(dir_, 3600);
  // Samples at 0 and 1800 share the first bucket: allocated nodes (2 + 4) / 2 = 3, GPUs (16 + 32) / 2 = 24.
  ASSERT_EQ(d.cluster.size(), 2u);
  EXPECT_DOUBLE_EQ(d.cluster[0].nodes_alloc, 3);
  EXPECT_DOUBLE_EQ(d.cluster[0].gpus_alloc, 24);
  EXPECT_DOUBLE_EQ(d.cluster[0].jobs_running, 1.5);
  EXPECT_DOUBLE_EQ(d.cluster[1].start_s, 3600);
  EXPECT_DOUBLE_EQ(d.cluster[1].nodes_down, 1);
  EXPECT_EQ(d.cluster_samples, 3u);
  // Powered down: (4 + 2) / 2 = 3 in the first bucket, 6 in the second.
  EXPECT_DOUBLE_EQ(d.cluster[0].nodes_powered_down, 3);
  EXPECT_DOUBLE_EQ(d.cluster[1].nodes_powered_down, 6);
}

TEST_F(ReportTest, PoweredDownNodesInTheNodeStatesPlotAndText) {
  make_db(kTables);
  const Report r = build_report(dir_, options_with_step(3600));
  // Bucket means 3 and 6: 4.5 on average.
  EXPECT_THAT(r.text, HasSubstr("cluster    node states, GPUs and jobs from 3 samples, 2 buckets of 1 h; nodes powered "
                                "down 4.5 on average, 6.0 in the highest bucket\n"));
  EXPECT_THAT(r.plots[1].svg, HasSubstr(">powered down</text>"));
}

TEST_F(ReportTest, ClusterMetricsWithoutPoweredDownColumnStillLoads) {
  // Results written before the cloud tables have no nodes_powered_down: read as 0, and no series for it.
  make_db(std::string(kTables) + "ALTER TABLE cluster_metrics DROP COLUMN nodes_powered_down;");
  const ReportData d = load_report_data(dir_, 3600);
  ASSERT_EQ(d.cluster.size(), 2u);
  EXPECT_DOUBLE_EQ(d.cluster[0].nodes_alloc, 3);
  EXPECT_DOUBLE_EQ(d.cluster[0].nodes_powered_down, 0);
  EXPECT_DOUBLE_EQ(d.cluster[1].nodes_powered_down, 0);
  const Report r = build_report(dir_, options_with_step(3600));
  EXPECT_THAT(r.plots[1].svg, Not(HasSubstr("powered down")));
  EXPECT_THAT(r.text, HasSubstr("2 buckets of 1 h\n"));
  // A column the report needs is still required.
  make_db("ALTER TABLE cluster_metrics DROP COLUMN gpus_free;");
  try {
    load_report_data(dir_, 0);
    ADD_FAILURE() << "no error for a cluster_metrics without gpus_free";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "table cluster_metrics");
    EXPECT_EQ(e.problem(), "missing column(s) gpus_free");
  }
}

TEST_F(ReportTest, ScalingCountsPerActionAndBucketByHand) {
  make_db(kTables);
  const ScalingReport r = *load_report_data(dir_, 0).scaling;
  EXPECT_EQ(r.rows, 12u);
  // The autoscaler's order, then the unknown action; distinct nodes: c001-c003 created, c001 and c002 removed.
  ASSERT_EQ(r.actions.size(), 6u);
  std::vector<std::string> names;
  std::vector<std::size_t> rows, nodes;
  for (const ScalingAction& a : r.actions) {
    names.push_back(a.action);
    rows.push_back(a.rows);
    nodes.push_back(a.nodes);
  }
  EXPECT_THAT(names, ElementsAre("create", "ready", "boot_failed", "remove", "removed", "power_cycle"));
  EXPECT_THAT(rows, ElementsAre(4, 3, 1, 1, 2, 1));
  EXPECT_THAT(nodes, ElementsAre(3, 3, 1, 1, 2, 1));
  // Last row at 9100 s: bucket 5 of 1800 s, so 6 buckets.
  EXPECT_THAT(r.actions[0].per_bucket, ElementsAre(3, 1, 0, 0, 0, 0));
  EXPECT_THAT(r.actions[1].per_bucket, ElementsAre(2, 1, 0, 0, 0, 0));
  EXPECT_THAT(r.actions[4].per_bucket, ElementsAre(0, 0, 0, 0, 0, 2));
  EXPECT_THAT(r.actions[5].per_bucket, ElementsAre(0, 0, 1, 0, 0, 0));
  EXPECT_THAT(r.created, ElementsAre(3, 4, 4, 4, 4, 4));
  // Demand of create and remove rows only: 3 in bucket 0, 1 in bucket 1, the remove's 0 in bucket 5.
  ASSERT_EQ(r.demand_max.size(), 6u);
  EXPECT_DOUBLE_EQ(r.demand_max[0], 3);
  EXPECT_DOUBLE_EQ(r.demand_max[1], 1);
  EXPECT_TRUE(std::isnan(r.demand_max[2]));
  EXPECT_TRUE(std::isnan(r.demand_max[4]));
  EXPECT_DOUBLE_EQ(r.demand_max[5], 0);
}

TEST_F(ReportTest, QuotaEventsPerUserByHand) {
  // Job 6 (refused while pending: a refuse row) and job 7 (refused at submission: no row) of alice.
  make_db(std::string(kTables) +
          "UPDATE jobs SET user = 'alice', reason = 'AssocGrpBillingMinutes', state = 'CANCELLED' WHERE job_id = 6;"
          "INSERT INTO jobs (job_id, user, submit_time, state, nodes, cpus, gpus, time_limit, trace_run_time, reason) "
          "VALUES (7, 'alice', 1500, 'CANCELLED', 1, 4, 4, 4000, 100, 'AssocGrpBillingMinutes');");
  const QuotaReport q = *load_report_data(dir_, 0).quota;
  EXPECT_EQ(q.events, 6u);
  ASSERT_EQ(q.users.size(), 2u);
  const QuotaUser& alice = q.users[0];
  EXPECT_EQ(alice.user, "alice");
  EXPECT_EQ(alice.warnings, 1u);
  EXPECT_EQ(alice.blocks, 1u);
  EXPECT_EQ(alice.cancelled, 2u);
  EXPECT_EQ(alice.refused, 1u);
  EXPECT_EQ(alice.refused_at_submit, 1u);  // job 7 only: job 6 has its refuse row
  EXPECT_EQ(alice.other, 0u);
  EXPECT_DOUBLE_EQ(*alice.blocked_s, 1200);
  EXPECT_DOUBLE_EQ(alice.last_s, 1200);
  EXPECT_DOUBLE_EQ(alice.spend_usd, 101);
  EXPECT_DOUBLE_EQ(alice.projected_usd, 110);
  const QuotaUser& bob = q.users[1];
  EXPECT_EQ(bob.user, "bob");
  EXPECT_EQ(bob.warnings, 1u);
  EXPECT_EQ(bob.blocks, 0u);
  EXPECT_FALSE(bob.blocked_s.has_value());
  EXPECT_EQ(bob.refused_at_submit, 0u);
  EXPECT_DOUBLE_EQ(bob.spend_usd, 40);
  EXPECT_DOUBLE_EQ(bob.projected_usd, 45);
}

TEST_F(ReportTest, OperationsTimelineMergesPerNodeSteps) {
  make_db(kTables);
  const OperationsReport o = *load_report_data(dir_, 0).operations;
  EXPECT_EQ(o.rows, 6u);
  EXPECT_EQ(o.jobs_killed, 3);
  EXPECT_THAT(o.started, ElementsAre(std::pair<std::string, std::size_t>{"attach_volume", 1},
                                     std::pair<std::string, std::size_t>{"maintenance", 1},
                                     std::pair<std::string, std::size_t>{"update_image", 1}));
  // The two node_back rows at 8600 s are one step of nodes g001 and g002.
  ASSERT_EQ(o.timeline.size(), 5u);
  EXPECT_EQ(o.timeline[0].name, "img:v2");
  EXPECT_TRUE(o.timeline[0].nodes.empty());
  EXPECT_EQ(o.timeline[1].jobs_killed, 2);
  EXPECT_EQ(o.timeline[2].step, "node_back");
  EXPECT_THAT(o.timeline[2].nodes, ElementsAre("g001", "g002"));
  EXPECT_EQ(o.timeline[4].step, "node_restarted");
  EXPECT_THAT(o.timeline[4].nodes, ElementsAre("g003"));
}

TEST_F(ReportTest, CheckpointPlansAgainstYoungAndDalyByHand) {
  make_db(kTables);
  const CheckpointsReport c = *load_report_data(dir_, 0).checkpoints;
  EXPECT_EQ(c.jobs, 4u);
  // Most GPUs first; jobs 2 and 3 share one plan.
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.groups[0].gpus, 1024);
  EXPECT_FALSE(c.groups[0].interval_s.has_value());
  EXPECT_FALSE(c.groups[0].goodput.has_value());
  const CheckpointGroup& g = c.groups[1];
  EXPECT_EQ(g.gpus, 128);
  EXPECT_THAT(g.job_ids, ElementsAre(4));
  EXPECT_DOUBLE_EQ(*g.young_s, 720);
  EXPECT_DOUBLE_EQ(*g.daly_s, 672.8);
  // Daly's expected wall time per unit of work: M e^(R/M) (e^((tau + write)/M) - 1) / tau. At tau 1800 s, write
  // 72 s, restart 600 s, M 3600 s: 2 e^(1/6) (e^0.52 - 1) = 2 x 1.181360 x 0.682028 = 1.611441, goodput
  // 1 / 1.611441 = 0.620563; at Daly's 672.8 s: 3600 x 1.181360 x (e^(744.8/3600) - 1) / 672.8 = 1.452903,
  // goodput 0.688279.
  EXPECT_NEAR(*g.goodput, 0.620563, 1e-6);
  EXPECT_NEAR(*g.goodput_at_daly, 0.688279, 1e-6);
  EXPECT_THAT(c.groups[2].job_ids, ElementsAre(2, 3));
  EXPECT_EQ(c.groups[2].gpus, 16);
  // tau 600 s, write 32 s, restart 120 s, M 14400 s: 14400 e^(1/120) (e^(632/14400) - 1) / 600 = 1.085801, goodput
  // 0.920979; at Daly's 938.785 s: 0.927049.
  EXPECT_NEAR(*c.groups[2].goodput, 0.920979, 1e-6);
  EXPECT_NEAR(*c.groups[2].goodput_at_daly, 0.927049, 1e-6);
}

TEST_F(ReportTest, CloudAndCheckpointSectionsOnThePageAndInTheText) {
  make_db(kTables);
  const Report r = build_report(dir_, ReportOptions{});
  const std::string& h = r.html;
  // Checkpoints: the 128-GPU plan, interval / Daly = 1800 / 672.8 = 2.68.
  EXPECT_THAT(h, HasSubstr("<tr><td>128</td><td class=\"n\">4</td><td class=\"n\">1,800 s</td>"
                           "<td class=\"n\">720 s</td><td class=\"n\">673 s</td><td class=\"n\">2.68</td>"
                           "<td class=\"n\">72 s</td><td class=\"n\">600 s</td><td class=\"n\">1.00</td>"
                           "<td class=\"n\">62.06%</td><td class=\"n\">68.83%</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>16</td><td class=\"n\">2, 3</td>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>1,024</td><td class=\"n\">5</td><td class=\"n\">-</td>"));
  // Scaling: counts and distinct nodes per action.
  EXPECT_THAT(h, HasSubstr("<tr><td>create</td><td class=\"n\">4</td><td class=\"n\">3</td>"
                           "<td class=\"n\">node requested (power saving: resumed)</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>power_cycle</td><td class=\"n\">1</td><td class=\"n\">1</td>"
                           "<td class=\"n\"></td></tr>"));
  // Quota: alice blocked at 1200 s with 2 cancelled and 1 refused; spend and projection at her last event.
  EXPECT_THAT(
      h,
      HasSubstr(
          "<tr><td>alice</td><td class=\"n\">1</td><td class=\"n\">1</td>"
          "<td class=\"n\">1,200 s</td><td class=\"n\">2</td><td class=\"n\">1</td>"
          "<td class=\"n\">0</td><td class=\"n\">1,200 s</td><td class=\"n\">$101.00</td><td class=\"n\">$110.00</td>"
          "</tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>bob</td><td class=\"n\">1</td><td class=\"n\">0</td><td class=\"n\">-</td>"));
  // Operations: one line for the two nodes back from maintenance.
  EXPECT_THAT(h, HasSubstr("<tr><td>8,600 s (2.4 h)</td><td class=\"n\">maintenance</td><td class=\"n\">-</td>"
                           "<td class=\"n\">node_back</td><td class=\"n\">g001, g002</td><td class=\"n\">0</td>"
                           "</tr>"));
  EXPECT_THAT(h, HasSubstr("<p>3 operations (attach_volume 1, maintenance 1, update_image 1), 3 job runs killed.</p>"));
  const std::string& t = r.text;
  // The text names the largest plan with an MTTF (128 GPUs; the 1,024-GPU job has none).
  EXPECT_THAT(t, HasSubstr("checkpoint 4 checkpointed jobs, 3 plans; 128 GPUs: interval 1,800 s, Young 720 s, Daly "
                           "673 s, expected goodput 62.06% (68.83% at Daly's)\n"));
  EXPECT_THAT(t, HasSubstr("scaling    12 actions (create 4, ready 3, boot_failed 1, remove 1, removed 2, "
                           "power_cycle 1); nodes created and demand over time, actions per 30 min\n"));
  EXPECT_THAT(t, HasSubstr("quota      6 events for 2 users: 2 warnings, 1 blocks, 2 running jobs cancelled, 1 "
                           "pending jobs refused, 0 submissions refused\n"));
  EXPECT_THAT(t, HasSubstr("operations 3 operations (attach_volume 1, maintenance 1, update_image 1), 5 steps, 3 job "
                           "runs killed\n"));
  // The goodput curve is drawn for the largest plan with an MTTF (128 GPUs).
  const auto plot =
      std::find_if(r.plots.begin(), r.plots.end(), [](const ReportPlot& p) { return p.name == "checkpoint_interval"; });
  ASSERT_NE(plot, r.plots.end());
  EXPECT_THAT(plot->svg, HasSubstr("(128 GPUs)"));
}

TEST_F(ReportTest, EmptyCloudTablesGiveOneLineAndNoSection) {
  make_db(std::string(kTables) +
          "DELETE FROM scaling; DELETE FROM quota_events; DELETE FROM operations; DELETE FROM job_checkpoints;");
  const Report r = build_report(dir_, ReportOptions{});
  EXPECT_THAT(r.text, HasSubstr("scaling    no scaling actions in the scaling table\n"));
  EXPECT_THAT(r.text, HasSubstr("quota      no quota events\n"));
  EXPECT_THAT(r.text, HasSubstr("operations no cluster operations\n"));
  EXPECT_THAT(r.text, HasSubstr("checkpoint no checkpointed jobs in job_checkpoints\n"));
  for (const char* id : {"scaling", "quota", "operations", "checkpoints"}) {
    EXPECT_THAT(r.html, Not(HasSubstr(std::string("<section id=\"") + id + "\">")));
  }
}

TEST_F(ReportTest, InterruptionsMttfByJobSizeByHand) {
  make_db(kTables);
  const InterruptionsReport r = *load_report_data(dir_, 0).interruptions;
  EXPECT_EQ(r.interruptions, 4u);
  EXPECT_EQ(r.requeued, 2u);
  EXPECT_DOUBLE_EQ(r.lost_gpu_hours, 16 + 8 + 64 + 1);
  EXPECT_THAT(r.per_day, ElementsAre(2, 2));  // 5000, 20000 | 95000, 96000
  ASSERT_EQ(r.by_size.size(), 5u);
  // 1-8: jobs 1 (8 GPUs, 10 h) and 6 (4 GPUs, never ran); no interruption, so no MTTF.
  EXPECT_EQ(r.by_size[0].label, "1-8");
  EXPECT_EQ(r.by_size[0].jobs, 2u);
  EXPECT_DOUBLE_EQ(r.by_size[0].run_s, 36000);
  EXPECT_FALSE(r.by_size[0].mttf_h.has_value());
  // 9-64: jobs 2 and 3, 72000 + 36000 s of final runs plus job 2's interrupted runs 14400 + 21600 s = 144000 s =
  // 40 h over 2 interruptions: 20 h.
  EXPECT_EQ(r.by_size[1].interruptions, 2u);
  EXPECT_DOUBLE_EQ(r.by_size[1].run_s, 144000);
  EXPECT_DOUBLE_EQ(*r.by_size[1].mttf_h, 20);
  // 65-512: job 4, 18000 + 7200 s = 7 h over 1.
  EXPECT_DOUBLE_EQ(*r.by_size[2].mttf_h, 7);
  // 513+: job 5, 1 h, not interrupted.
  EXPECT_EQ(r.by_size[3].jobs, 1u);
  EXPECT_FALSE(r.by_size[3].mttf_h.has_value());
  // Job 99 is not in jobs: its own row, 3600 s over 1.
  EXPECT_EQ(r.by_size[4].label, "job not in jobs");
  EXPECT_DOUBLE_EQ(*r.by_size[4].mttf_h, 1);
}

TEST_F(ReportTest, InterruptionsNotByFaultsAreCountedApart) {
  // The cause column (results since spot reclaims and operations were recorded): the two new rows (a spot reclaim
  // losing 32 GPU-hours, an operation losing 4) are counted by cause and left out of the fault figures above.
  make_db(std::string(kTables) + R"sql(
ALTER TABLE job_interruptions ADD COLUMN cause TEXT NOT NULL DEFAULT 'fault';
INSERT INTO job_interruptions VALUES (97000, 3, NULL, 'NODE_FAIL', 1000, 1000, 32, 1, 'spot_reclaim'),
  (98000, 4, NULL, 'NODE_FAIL', 500, 500, 4, 1, 'operation');
)sql");
  const InterruptionsReport r = *load_report_data(dir_, 0).interruptions;
  EXPECT_EQ(r.interruptions, 4u);
  EXPECT_DOUBLE_EQ(r.lost_gpu_hours, 16 + 8 + 64 + 1);
  EXPECT_EQ(r.other_causes.size(), 2u);
  EXPECT_EQ(r.other_causes.at("spot_reclaim"), 1u);
  EXPECT_EQ(r.other_causes.at("operation"), 1u);
  EXPECT_DOUBLE_EQ(r.other_lost_gpu_hours, 36);
  EXPECT_DOUBLE_EQ(*r.by_size[1].mttf_h, 20);  // unchanged: job 3's reclaimed run is not a failure
  EXPECT_THAT(build_report(dir_, ReportOptions{}).text, HasSubstr("; not by faults: operation 1, spot_reclaim 1\n"));
}

TEST_F(ReportTest, FaultsByClassXidDayAndDetectionDelayByHand) {
  make_db(kTables);
  const FaultsReport f = *load_report_data(dir_, 0).faults;
  EXPECT_EQ(f.faults, 5u);
  EXPECT_DOUBLE_EQ(f.lost_gpu_hours, 16 + 8 + 64 + 0 + 2.5);
  // Effects present, in the simulator's order (no repair_node); day 0: faults 1, 2; day 1: faults 3, 4, 5.
  EXPECT_THAT(f.effects, ElementsAre("restart_app", "reset_gpu", "reboot_node", "none"));
  EXPECT_THAT(f.per_day[0], ElementsAre(1, 0));
  EXPECT_THAT(f.per_day[1], ElementsAre(1, 1));
  EXPECT_THAT(f.per_day[2], ElementsAre(0, 1));
  EXPECT_THAT(f.per_day[3], ElementsAre(0, 1));
  ASSERT_EQ(f.by_class.size(), 4u);
  EXPECT_EQ(f.by_class[0].key, "gpu_hbm3");  // 2 faults first, then the others by name
  EXPECT_EQ(f.by_class[0].faults, 2u);
  EXPECT_EQ(f.by_class[0].jobs_hit, 2);
  EXPECT_DOUBLE_EQ(f.by_class[0].lost_gpu_hours, 80);
  EXPECT_EQ(f.by_class[1].key, "gpu_sram");
  ASSERT_EQ(f.by_xid.size(), 4u);
  EXPECT_EQ(f.by_xid[0].key, "48");
  EXPECT_EQ(f.by_xid[3].key, "none");  // the software bug has no XID
  // Detection: (none) 1 undetected; at_once 0 s; health_check 300, 900, 600 -> mean 600, p50 rank 2 of
  // {300, 600, 900} = 600, p95 rank 3 = 900; all four detected {0, 300, 600, 900}: mean 450, p50 rank 2 = 300,
  // p95 rank ceil(3.8) = 4 = 900.
  ASSERT_EQ(f.detection.size(), 4u);
  EXPECT_EQ(f.detection[0].detected_by, "(none)");
  EXPECT_EQ(f.detection[0].detected, 0u);
  EXPECT_EQ(f.detection[2].detected_by, "health_check");
  EXPECT_DOUBLE_EQ(f.detection[2].mean_s, 600);
  EXPECT_DOUBLE_EQ(f.detection[2].p50_s, 600);
  EXPECT_DOUBLE_EQ(f.detection[2].p95_s, 900);
  EXPECT_EQ(f.detection[3].detected_by, "all");
  EXPECT_EQ(f.detection[3].faults, 5u);
  EXPECT_EQ(f.detection[3].detected, 4u);
  EXPECT_DOUBLE_EQ(f.detection[3].mean_s, 450);
  EXPECT_DOUBLE_EQ(f.detection[3].p50_s, 300);
  EXPECT_DOUBLE_EQ(f.detection[3].p95_s, 900);
}

TEST_F(ReportTest, CostsFinalTotals) {
  make_db(kTables);
  const CostsReport c = *load_report_data(dir_, 0).costs;
  // Cluster samples at 0, 3600, 7200 fall in 1800 s buckets 0, 2, 4.
  ASSERT_EQ(c.cluster.size(), 3u);
  EXPECT_DOUBLE_EQ(c.cluster[1].start_s, 3600);
  EXPECT_DOUBLE_EQ(c.cluster[1].burn_usd_per_h, 200);
  EXPECT_DOUBLE_EQ(*c.cluster_total_usd, 400);
  // alice's last total is 120 (not 50); bob's 300 comes first.
  EXPECT_THAT(c.users,
              ElementsAre(std::pair<std::string, double>{"bob", 300}, std::pair<std::string, double>{"alice", 120}));
  EXPECT_THAT(c.accounts, ElementsAre(std::pair<std::string, double>{"ml", 420}));
}

TEST_F(ReportTest, PageShowsTheFiguresWorkedByHand) {
  make_db(kTables);
  const Report r = build_report(dir_, ReportOptions{});
  const std::string& h = r.html;
  // Headline: new keys known to the report, the per-class losses, costs, and a key it does not know.
  EXPECT_THAT(h, HasSubstr("<tr><td>goodput</td><td class=\"n\">90.00%</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>node availability</td><td class=\"n\">99.50%</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>GPU-hours lost to gpu_hbm3</td><td class=\"n\">40.0</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>total cost</td><td class=\"n\">$12,345.50</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>cost: gpu_usd</td><td class=\"n\">$10,000.00</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>cost per used GPU-hour</td><td class=\"n\">$2.50</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><th>Other figures</th><th class=\"n\"></th></tr>\n"
                           "<tr><td>brand_new_figure</td><td class=\"n\">42</td></tr>"));
  // Losses: useful = allocated 1100 - (50 + 20 + 30 + 10) = 990 GPU-hours, 90.00% of allocated (= goodput).
  EXPECT_THAT(h, HasSubstr("<tr><td>useful</td><td class=\"n\">990.0</td><td class=\"n\">90.00%</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>checkpoint writes</td><td class=\"n\">30.0</td><td class=\"n\">2.73%</td></tr>"));
  // MTTF of 9-64 GPU jobs: 40 run hours / 2 interruptions.
  EXPECT_THAT(h, HasSubstr("<tr><td>9-64</td><td class=\"n\">2</td><td class=\"n\">2</td><td class=\"n\">40.0</td>"
                           "<td class=\"n\">20.0</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>1-8</td><td class=\"n\">2</td><td class=\"n\">0</td><td class=\"n\">10.0</td>"
                           "<td class=\"n\">-</td></tr>"));
  // Detection delay of health checks and of all faults.
  EXPECT_THAT(h, HasSubstr("<tr><td>health_check</td><td class=\"n\">3</td><td class=\"n\">3</td>"
                           "<td class=\"n\">600 s</td><td class=\"n\">600 s</td><td class=\"n\">900 s</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>all</td><td class=\"n\">5</td><td class=\"n\">4</td>"
                           "<td class=\"n\">450 s</td><td class=\"n\">300 s</td><td class=\"n\">900 s</td></tr>"));
  EXPECT_THAT(h,
              HasSubstr("<tr><td>gpu_hbm3</td><td class=\"n\">2</td><td class=\"n\">2</td><td class=\"n\">80.0</td>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>bob</td><td class=\"n\">$300.00</td></tr>"));
  // A class name is escaped.
  EXPECT_THAT(h, HasSubstr("nvlink &lt;x&gt;"));
  EXPECT_THAT(h, Not(HasSubstr("nvlink <x>")));
  // Self-contained: no script, nothing to fetch.
  EXPECT_THAT(h, Not(HasSubstr("<script")));
  EXPECT_THAT(h, Not(HasSubstr("src=")));
  EXPECT_THAT(h, Not(HasSubstr("href=\"http")));
  // Every section has its plots, in page order.
  std::vector<std::string> names;
  for (const ReportPlot& p : r.plots) names.push_back(p.name);
  EXPECT_THAT(names, ElementsAre("waits", "node_states", "gpus", "jobs", "gpu_hours_by_cause", "lost_by_fault_class",
                                 "faults_per_day", "interruptions_per_day", "checkpoint_interval", "cost_burn_rate",
                                 "cost_total", "scaling_actions", "scaling_nodes"));
  // Same results, same bytes.
  EXPECT_EQ(build_report(dir_, ReportOptions{}).html, h);
}

TEST_F(ReportTest, UsefulGpuHoursWithoutAllocatedKey) {
  // A summary without allocated_gpu_hours (runs before the node lifecycle): allocated = gpu_hours 1000 + requeued
  // runs 10 = 1010; useful = 1010 - 110 = 900 (89.11%).
  make_db(std::string(kTables) + "DELETE FROM summary WHERE key = 'allocated_gpu_hours';");
  EXPECT_THAT(build_report(dir_, ReportOptions{}).html,
              HasSubstr("<tr><td>useful</td><td class=\"n\">900.0</td><td class=\"n\">89.11%</td></tr>"));
}

TEST_F(ReportTest, TextSummaryHasHeadlineAndOneLinePerSection) {
  make_db(kTables);
  const std::string t = build_report(dir_, ReportOptions{}).text;
  EXPECT_THAT(t, HasSubstr("report     scenario handmade, seed 7, policy slurm, gputwin 0.1.0\n"));
  EXPECT_THAT(t, HasSubstr("goodput    goodput 90.00%  node availability 99.50%  faults 5  job interruptions 4\n"));
  EXPECT_THAT(t, HasSubstr("(1 not known to the report, under \"Other figures\")"));
  EXPECT_THAT(t, HasSubstr("waits      mean and p95 wait of 5 started jobs by start time, 56 buckets of 30 min\n"));
  EXPECT_THAT(t, HasSubstr("faults     5 faults over 2 days: per day by effect, 4 classes, 4 XIDs, detection delay "
                           "by 3 mechanisms (all: p50 300 s, p95 900 s)\n"));
  EXPECT_THAT(
      t, HasSubstr("interrupts 4 job interruptions by faults: per day, MTTF by job size (9-64 GPUs 20.0 h, 65-512 GPUs "
                   "7.0 h, job not in jobs 1.0 h)\n"));
  EXPECT_THAT(t, HasSubstr("cost       cluster total $400.00; burn rate and cumulative cost over time; final totals of "
                           "2 users and 1 accounts\n"));
}

TEST_F(ReportTest, SectionsWithoutTablesAreSkipped) {
  // Only what every run writes: summary and jobs.
  std::string sql = kTables;
  for (const char* table : {"faults", "job_interruptions", "costs", "cluster_metrics", "runs", "job_checkpoints",
                            "scaling", "quota_events", "operations"}) {
    sql += std::string("DROP TABLE ") + table + ";";
  }
  sql += "DELETE FROM summary WHERE key NOT IN ('jobs', 'gpu_hours');";
  make_db(sql);
  const Report r = build_report(dir_, ReportOptions{});
  EXPECT_THAT(r.text, HasSubstr("faults     skipped: no faults table in results.sqlite\n"));
  EXPECT_THAT(r.text, HasSubstr("losses     skipped: no fault, checkpoint or preemption losses in the summary\n"));
  EXPECT_THAT(r.html, Not(HasSubstr("<section id=\"faults\">")));
  EXPECT_THAT(r.html, HasSubstr("<section id=\"waits\">"));
  ASSERT_EQ(r.plots.size(), 1u);
  // The cloud and checkpoint sections are left out altogether, in the text too.
  for (const char* name : {"checkpoint", "scaling", "quota", "operations"}) {
    EXPECT_THAT(r.text, Not(HasSubstr(std::string("\n") + name + " "))) << name;
    EXPECT_THAT(r.html, Not(HasSubstr(std::string("<section id=\"") + name))) << name;
  }
}

TEST_F(ReportTest, MissingOrMalformedResultsNameTheFile) {
  const std::filesystem::path missing = dir_ / "nope";
  try {
    build_report(missing, ReportOptions{});
    ADD_FAILURE() << "no error for a missing folder";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (missing / "results.sqlite").string());
  }
  // A faults table without the effect column.
  make_db(std::string(kTables) + "ALTER TABLE faults DROP COLUMN effect;");
  try {
    build_report(dir_, ReportOptions{});
    ADD_FAILURE() << "no error for a malformed table";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "table faults");
    EXPECT_EQ(e.problem(), "missing column(s) effect");
  }
  // A scaling table without demand.
  std::filesystem::remove(dir_ / "results.sqlite");
  make_db(std::string(kTables) + "ALTER TABLE scaling DROP COLUMN demand;");
  try {
    build_report(dir_, ReportOptions{});
    ADD_FAILURE() << "no error for a malformed scaling table";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "table scaling");
    EXPECT_EQ(e.problem(), "missing column(s) demand");
  }
  // Not a database at all.
  std::ofstream(dir_ / "results.sqlite", std::ios::trunc) << "this is not sqlite, just text long enough to be read";
  EXPECT_THROW(build_report(dir_, ReportOptions{}), InputError);
}

TEST_F(ReportTest, SvgFormatWritesOnePlotPerFileAndRemovesStaleOnes) {
  make_db(kTables);
  const std::filesystem::path out = dir_ / "plots";
  std::filesystem::create_directories(out);
  std::ofstream(out / "faults_per_day.svg") << "stale";
  std::ofstream(out / "notes.txt") << "mine";
  ReportOptions options;
  options.format = ReportFormat::kSvg;
  options.out = out;
  std::ostringstream text;
  EXPECT_EQ(write_report(dir_, options, text), 0);
  EXPECT_TRUE(std::filesystem::exists(out / "waits.svg"));
  EXPECT_TRUE(std::filesystem::exists(out / "cost_total.svg"));
  EXPECT_TRUE(std::filesystem::exists(out / "notes.txt"));  // not ours: kept
  std::stringstream faults;
  faults << std::ifstream(out / "faults_per_day.svg").rdbuf();
  EXPECT_THAT(faults.str(), HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(text.str(), HasSubstr("wrote      13 plots in "));
  EXPECT_TRUE(std::filesystem::exists(out / "scaling_actions.svg"));
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    EXPECT_FALSE(entry.path().filename().string().ends_with(".tmp")) << entry.path();
  }
  // Without faults, the faults plot of the earlier report goes.
  make_db("DROP TABLE faults;");
  text.str("");
  write_report(dir_, options, text);
  EXPECT_FALSE(std::filesystem::exists(out / "faults_per_day.svg"));
}

}  // namespace
}  // namespace gputwin
