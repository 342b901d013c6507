// A hand-made results database whose answers can be worked out by hand, shared by the dashboard and
// slurmrestd-compatible API tests (tests/ui/hand_made_run.hpp) and the web fuzzers (fuzz/).
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "tests/support/hand_made_results.hpp"

namespace gputwin {

// Two nodes of 8 H100s; five jobs:
//   1: submit 0, start 10, end 110, COMPLETED, 8 GPUs on n1
//   2: submit 5, start 110, end 300, FAILED, 4 GPUs on n1
//   3: submit 20, never started, cancelled at 50 (CANCELLED)
//   4: submit 30, start 200, still running at the end (RUNNING), 8 GPUs on n2
//   5: submit 400 (after the end of interest), PENDING at the end
// n2 is DRAINED from 120 to 180. job_gpus places job 2 on GPUs 0-3 of n1.
inline constexpr const char* kHandMadeDatabase = R"sql(
CREATE TABLE runs (run_id INTEGER PRIMARY KEY, scenario TEXT NOT NULL, scenario_file TEXT, seed INTEGER NOT NULL,
  policy TEXT NOT NULL, version TEXT NOT NULL, wall_time_s REAL NOT NULL, events INTEGER NOT NULL, parameters TEXT);
INSERT INTO runs VALUES (1, 'hand', NULL, 7, 'slurm', 'test', 0, 0, NULL);
CREATE TABLE jobs (job_id INTEGER NOT NULL, name TEXT, user TEXT, account TEXT, partition TEXT, qos TEXT,
  submit_time INTEGER NOT NULL, start_time INTEGER, end_time INTEGER, state TEXT NOT NULL, nodes INTEGER NOT NULL,
  cpus INTEGER NOT NULL, gpus INTEGER NOT NULL, time_limit INTEGER NOT NULL, node_list TEXT, priority INTEGER,
  reason TEXT, wait_time INTEGER, run_time INTEGER, array_job_id INTEGER, array_task_id INTEGER,
  trace_run_time INTEGER NOT NULL, leaf_switches INTEGER);
INSERT INTO jobs VALUES (1, 'train-a', 'alice', 'ml', 'gpu', 'normal', 0, 10, 110, 'COMPLETED', 1, 8, 8, 600, 'n1', 50, NULL, 10, 100, NULL, NULL, 100, NULL);
INSERT INTO jobs VALUES (2, 'train-b', 'bob', 'ml', 'gpu', 'normal', 5, 110, 300, 'FAILED', 1, 4, 4, 600, 'n1', 40, NULL, 105, 190, NULL, NULL, 190, NULL);
INSERT INTO jobs VALUES (3, 'eval-c', 'alice', 'ml', 'gpu', 'normal', 20, NULL, 50, 'CANCELLED', 1, 1, 1, 600, NULL, 30, 'Priority', NULL, NULL, NULL, NULL, 10, NULL);
INSERT INTO jobs VALUES (4, 'train-d', 'carol', 'cv', 'gpu', 'normal', 30, 200, NULL, 'RUNNING', 1, 8, 8, 3600, 'n2', 60, NULL, 170, NULL, NULL, NULL, 500, NULL);
INSERT INTO jobs VALUES (5, 'eval-e', 'bob', 'cv', 'gpu', 'normal', 400, NULL, NULL, 'PENDING', 1, 8, 8, 600, NULL, 20, 'Resources', NULL, NULL, NULL, NULL, 10, NULL);
CREATE TABLE nodes (node_index INTEGER PRIMARY KEY, name TEXT NOT NULL, cpus INTEGER NOT NULL,
  memory_mb INTEGER NOT NULL, gpus INTEGER NOT NULL, gpu_type TEXT, weight INTEGER NOT NULL);
INSERT INTO nodes VALUES (0, 'n1', 64, 1000, 8, 'h100', 1), (1, 'n2', 64, 1000, 8, 'h100', 1);
CREATE TABLE node_events (time INTEGER NOT NULL, node_index INTEGER NOT NULL, state TEXT NOT NULL,
  node_count INTEGER NOT NULL);
INSERT INTO node_events VALUES (10, 0, 'ALLOCATED', 1), (110, 0, 'MIXED', 1), (120, 1, 'DRAINED', 1),
  (180, 1, 'IDLE', 1), (200, 1, 'ALLOCATED', 1), (300, 0, 'IDLE', 1);
CREATE TABLE job_reasons (time INTEGER NOT NULL, job_id INTEGER NOT NULL, reason TEXT NOT NULL);
INSERT INTO job_reasons VALUES (5, 2, 'Resources'), (30, 4, 'Priority'), (150, 4, 'Resources');
CREATE TABLE partitions (name TEXT NOT NULL, nodes TEXT, is_default INTEGER NOT NULL, default_time INTEGER,
  max_time INTEGER, state TEXT, priority_tier INTEGER, priority_job_factor INTEGER, total_nodes INTEGER,
  total_cpus INTEGER);
INSERT INTO partitions VALUES ('gpu', 'n[1-2]', 1, NULL, 86400, 'UP', 1, 1, 2, 128);
CREATE TABLE metrics_info (key TEXT PRIMARY KEY, value REAL);
INSERT INTO metrics_info VALUES ('horizon_s', 500), ('cluster_step_s', 100), ('gpu_step_s', 100), ('epoch_unix_s', 0);
CREATE TABLE cluster_metrics (time INTEGER PRIMARY KEY, nodes_idle INTEGER NOT NULL, nodes_mixed INTEGER NOT NULL,
  nodes_alloc INTEGER NOT NULL, nodes_down INTEGER NOT NULL, nodes_drain INTEGER NOT NULL,
  jobs_pending INTEGER NOT NULL, jobs_running INTEGER NOT NULL, cpus_alloc INTEGER NOT NULL,
  gpus_alloc INTEGER NOT NULL, gpu_power_w REAL NOT NULL, gpu_energy_j REAL NOT NULL, gpus_free INTEGER NOT NULL,
  gpus_free_fragmented INTEGER NOT NULL, nodes_powered_down INTEGER NOT NULL);
INSERT INTO cluster_metrics VALUES (0,2,0,0,0,0,1,0,0,0,0,0,16,0,0), (100,1,0,1,0,0,3,1,8,8,0,0,8,0,0),
  (200,0,1,1,0,0,0,2,12,12,0,0,4,0,0), (300,1,0,1,0,0,0,1,8,8,0,0,8,0,0), (400,1,0,1,0,0,1,1,8,8,0,0,8,0,0),
  (500,1,0,1,0,0,1,1,8,8,0,0,8,0,0);
CREATE TABLE gpu_metrics (node_index INTEGER NOT NULL, gpu INTEGER NOT NULL, time INTEGER NOT NULL, job_id INTEGER,
  util_pct REAL NOT NULL, fb_used_mib REAL NOT NULL, power_w REAL NOT NULL, temp_c REAL NOT NULL,
  nvlink_tx_bytes_per_s REAL NOT NULL, energy_mj REAL NOT NULL, xid INTEGER NOT NULL,
  PRIMARY KEY (node_index, gpu, time)) WITHOUT ROWID;
CREATE TABLE costs (time REAL NOT NULL, scope TEXT NOT NULL, burn_usd_per_h REAL NOT NULL, total_usd REAL NOT NULL);
INSERT INTO costs VALUES (0, 'cluster', 36, 0), (100, 'cluster', 36, 1), (100, 'idle', 18, 0.5), (200, 'cluster', 72, 2);
CREATE TABLE job_gpus (job_id INTEGER NOT NULL, node_index INTEGER NOT NULL, gpus TEXT NOT NULL,
  start_time INTEGER NOT NULL);
INSERT INTO job_gpus VALUES (1, 0, '0-7', 10), (2, 0, '0-3', 110), (4, 1, '0-7', 200);
INSERT INTO gpu_metrics VALUES (0, 0, 100, 1, 90, 1024, 600, 60, 0, 0, 0), (0, 1, 100, 1, 70, 1024, 600, 60, 0, 0, 79),
  (1, 0, 100, NULL, 0, 0, 60, 30, 0, 0, 0), (0, 0, 200, 2, 50, 0, 300, 50, 0, 0, 0), (0, 0, 300, NULL, 0, 0, 60, 30, 0, 0, 0);
)sql";

/// Writes the hand-made run into `dir` (results.sqlite stamped as write_results stamps it, and summary.json);
/// returns SQLite's message on failure, empty on success.
inline std::string write_hand_made_run(const std::filesystem::path& dir) {
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open((dir / "results.sqlite").c_str(), &db) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
  } else {
    char* message = nullptr;
    if (sqlite3_exec(db, (testing::results_stamp_sql() + kHandMadeDatabase).c_str(), nullptr, nullptr, &message) !=
        SQLITE_OK) {
      error = message != nullptr ? message : "sqlite3_exec failed";
      sqlite3_free(message);
    }
  }
  sqlite3_close(db);
  if (error.empty()) testing::write_summary_marker(dir);
  return error;
}

}  // namespace gputwin
