#include "results/results_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <future>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "model/hostlist.hpp"
#include "model/run_observer.hpp"
#include "results/results_db.hpp"
#include "results/results_sqlite.hpp"
#include "results/results_stream.hpp"
#include "results/run_rows.hpp"

namespace gputwin {
namespace {

using results_sqlite::BatchInsert;
using results_sqlite::Database;
using results_sqlite::Statement;

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

constexpr const char* kFaultSchema = R"sql(
CREATE TABLE faults (fault_id INTEGER PRIMARY KEY, time REAL NOT NULL, class TEXT NOT NULL, cause TEXT, xid INTEGER,
  component TEXT NOT NULL, node TEXT, gpu INTEGER, grp INTEGER, nodes_hit INTEGER NOT NULL, effect TEXT NOT NULL,
  symptom TEXT NOT NULL, detected_by TEXT, detected_time REAL, return_time REAL, jobs_hit INTEGER NOT NULL,
  lost_gpu_hours REAL NOT NULL);
CREATE TABLE job_checkpoints (job_id INTEGER NOT NULL, gpus INTEGER NOT NULL, interval_s REAL, write_s REAL NOT NULL,
  restart_s REAL NOT NULL, mttf_h REAL, young_s REAL, daly_s REAL, blocking INTEGER NOT NULL);
)sql";

constexpr const char* kInterruptionsSchema = R"sql(
CREATE TABLE job_interruptions (time REAL NOT NULL, job_id INTEGER NOT NULL, cause TEXT NOT NULL, fault_id INTEGER,
  state TEXT NOT NULL, stopped_by TEXT NOT NULL, run_s REAL NOT NULL, lost_s REAL NOT NULL,
  lost_gpu_hours REAL NOT NULL, requeued INTEGER NOT NULL, black_hole INTEGER NOT NULL);
)sql";

constexpr const char* kCloudSchema = R"sql(
CREATE TABLE scaling (time REAL NOT NULL, node TEXT NOT NULL, action TEXT NOT NULL, demand INTEGER);
CREATE TABLE costs (time REAL NOT NULL, scope TEXT NOT NULL, burn_usd_per_h REAL NOT NULL, total_usd REAL NOT NULL);
CREATE TABLE quota_events (time REAL NOT NULL, user TEXT NOT NULL, action TEXT NOT NULL, job_id INTEGER,
  spend_usd REAL NOT NULL, projected_usd REAL NOT NULL);
CREATE TABLE operations (time REAL NOT NULL, action TEXT NOT NULL, step TEXT NOT NULL, node TEXT, name TEXT,
  jobs_killed INTEGER NOT NULL);
)sql";

void bind_optional_time(sqlite3_stmt* s, int i, SimTime t) {
  if (t == kNever)
    sqlite3_bind_null(s, i);
  else
    sqlite3_bind_double(s, i, to_seconds_f(t));
}

void bind_finite(sqlite3_stmt* s, int i, double v) {
  if (std::isfinite(v))
    sqlite3_bind_double(s, i, v);
  else
    sqlite3_bind_null(s, i);  // no fault profile: no MTTF, no optimum
}

void replace_file(const std::filesystem::path& tmp, const std::filesystem::path& final_path) {
  std::error_code ec;
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) throw ResultsError(final_path.string() + ": cannot move into place: " + ec.message());
}

std::vector<std::pair<std::string, double>> metrics_numbers(const MetricsTotals& t) {
  return {{"gpu_energy_kwh", t.gpu_energy_kwh},
          {"gpu_power_mean_w", t.gpu_power_mean_w},
          {"gpu_fragmentation_mean", t.fragmentation_mean},
          {"socket_split_jobs", static_cast<double>(t.socket_split_jobs)},
          {"cross_leaf_traffic_tb", t.cross_leaf_traffic_tb},
          {"metrics_gpu_step_s", t.gpu_step_s},
          {"metrics_cluster_step_s", t.cluster_step_s}};
}

constexpr const char* kMetricsSchema = R"sql(
CREATE TABLE metrics_info (key TEXT PRIMARY KEY, value REAL);
CREATE TABLE gpu_metrics (node_index INTEGER NOT NULL, gpu INTEGER NOT NULL, time INTEGER NOT NULL, job_id INTEGER,
  util_pct REAL NOT NULL, fb_used_mib REAL NOT NULL, power_w REAL NOT NULL, temp_c REAL NOT NULL,
  nvlink_tx_bytes_per_s REAL NOT NULL, energy_mj REAL NOT NULL, xid INTEGER NOT NULL,
  PRIMARY KEY (node_index, gpu, time)) WITHOUT ROWID;
CREATE TABLE cluster_metrics (time INTEGER PRIMARY KEY, nodes_idle INTEGER NOT NULL, nodes_mixed INTEGER NOT NULL,
  nodes_alloc INTEGER NOT NULL, nodes_down INTEGER NOT NULL, nodes_drain INTEGER NOT NULL,
  jobs_pending INTEGER NOT NULL, jobs_running INTEGER NOT NULL, cpus_alloc INTEGER NOT NULL,
  gpus_alloc INTEGER NOT NULL, gpu_power_w REAL NOT NULL, gpu_energy_j REAL NOT NULL, gpus_free INTEGER NOT NULL,
  gpus_free_fragmented INTEGER NOT NULL, nodes_powered_down INTEGER NOT NULL);
CREATE TABLE job_gpus (job_id INTEGER NOT NULL, node_index INTEGER NOT NULL, gpus TEXT NOT NULL,
  start_time INTEGER NOT NULL);
)sql";

// The run's metrics, built on a thread of their own while the writer's thread inserts rows: the per-GPU samples
// come over in batches through a short queue (the build runs at most kQueued batches ahead), then the cluster series
// is built while the writer goes on with other tables. Destroyed early (the writer failed), it stops the build.
class MetricsBuild {
 public:
  MetricsBuild(const ClusterState& state, const MetricsInput& input)
      : thread_([this, &state, &input] { build(state, input); }) {}
  MetricsBuild(const MetricsBuild&) = delete;
  MetricsBuild& operator=(const MetricsBuild&) = delete;
  ~MetricsBuild() {
    {
      std::lock_guard lock(mutex_);
      abandoned_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  /// The next batch of per-GPU samples (GPU by GPU, time ascending); empty once all are taken. Rethrows what the
  /// build threw.
  std::vector<GpuSample> next_gpu_batch() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queue_.empty() || gpu_done_ || error_; });
    if (error_) std::rethrow_exception(error_);
    if (queue_.empty()) return {};
    std::vector<GpuSample> batch = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return batch;
  }
  /// Waits for the whole build; rethrows what it threw. Then binding(), cluster and totals are ready.
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  /// The GPU binding the build made: made before the per-GPU samples, so ready once next_gpu_batch() has come back
  /// empty (or after wait()).
  [[nodiscard]] const GpuBinding& binding() const { return *binding_; }
  std::vector<ClusterSample> cluster;  ///< The cluster series (after wait()).
  MetricsTotals totals;                ///< What the build produced beyond the samples (after wait()).

 private:
  static constexpr std::size_t kBatch = 16384;
  static constexpr std::size_t kQueued = 4;
  struct Abandoned {};

  void build(const ClusterState& state, const MetricsInput& input) {
    try {
      binding_.emplace(state, input.horizon);
      std::vector<GpuSample> batch;
      const auto hand_over = [&] {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return queue_.size() < kQueued || abandoned_; });
        if (abandoned_) throw Abandoned{};
        if (!batch.empty()) queue_.push_back(std::move(batch));
        batch = {};
        batch.reserve(kBatch);
        changed_.notify_all();
      };
      cluster = build_metrics(
          state, *binding_, input.horizon, input.config, input.load, input.xids, input.node_conditions,
          [&](const GpuSample& sample) {
            batch.push_back(sample);
            if (batch.size() == kBatch) hand_over();
          },
          totals, ClusterRows::kChanges,
          [&] {
            hand_over();
            std::lock_guard lock(mutex_);
            gpu_done_ = true;
          });
    } catch (const Abandoned&) {
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      gpu_done_ = done_ = true;
    }
    changed_.notify_all();
  }

  std::optional<GpuBinding> binding_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<GpuSample>> queue_;
  bool gpu_done_ = false, done_ = false, abandoned_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once every member above exists
};

/// Creates the metrics tables and inserts the per-GPU samples as `build` hands them over.
void write_gpu_metrics(Database& db, MetricsBuild& build) {
  db.exec(kMetricsSchema);
  BatchInsert ins(db, "gpu_metrics", 11);
  for (std::vector<GpuSample> batch = build.next_gpu_batch(); !batch.empty(); batch = build.next_gpu_batch()) {
    for (const GpuSample& s : batch) {
      ins.int64(1, s.node);
      ins.int64(2, s.gpu);
      ins.int64(3, s.time_s);
      if (s.job_id != 0)
        ins.int64(4, static_cast<sqlite3_int64>(s.job_id));
      else
        ins.null(4);
      ins.real(5, s.util_pct);
      ins.real(6, s.fb_used_mib);
      ins.real(7, s.power_w);
      ins.real(8, s.temp_c);
      ins.real(9, s.nvlink_tx_bytes_per_s);
      ins.real(10, s.energy_mj);
      ins.int64(11, s.xid);
      ins.end_row();
    }
  }
  ins.finish();
}

/// Inserts each job's GPUs from the binding `build` made (once write_gpu_metrics has taken every per-GPU sample), and
/// their index: while these go in, the build goes on with the cluster series.
void write_job_gpus(Database& db, const ClusterState& state, const MetricsBuild& build) {
  const GpuBinding& binding = build.binding();
  // One row per node and run: a requeued job has the rows of each of its runs (start_time tells them apart).
  BatchInsert ins(db, "job_gpus", 4);
  const auto write_run = [&](JobIndex j, SimTime start, std::uint32_t offset, std::span<const NodeAllocation> alloc) {
    for (std::size_t k = 0; k < alloc.size(); ++k) {
      if (alloc[k].gpus == 0) continue;
      ins.int64(1, static_cast<sqlite3_int64>(state.spec(j).id));
      ins.int64(2, alloc[k].node);
      ins.text(3, gpu_index_list(binding.mask_at(offset + k)));
      ins.int64(4, to_seconds(start));
      ins.end_row();
    }
  };
  for (const PastRun& run : state.past_runs()) write_run(run.job, run.start, run.alloc_offset, state.allocation(run));
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (rt.start >= 0) write_run(j, rt.start, rt.alloc_offset, state.allocation(j));
  }
  ins.finish();
  db.exec("CREATE INDEX job_gpus_by_job ON job_gpus(job_id);");
}

/// Inserts the rest of the metrics once `build` is done: the cluster series and the assumptions.
MetricsTotals write_cluster_metrics(Database& db, const MetricsInput& input, MetricsBuild& build) {
  build.wait();
  const std::vector<ClusterSample>& cluster = build.cluster;
  const MetricsTotals totals = build.totals;
  {
    BatchInsert ins(db, "cluster_metrics", 15);
    for (const ClusterSample& c : cluster) {
      const sqlite3_int64 ints[] = {c.time_s,
                                    c.nodes_idle,
                                    c.nodes_mixed,
                                    c.nodes_alloc,
                                    c.nodes_down,
                                    c.nodes_drain,
                                    static_cast<sqlite3_int64>(c.jobs_pending),
                                    static_cast<sqlite3_int64>(c.jobs_running),
                                    static_cast<sqlite3_int64>(c.cpus_alloc),
                                    static_cast<sqlite3_int64>(c.gpus_alloc)};
      for (int i = 0; i < 10; ++i) ins.int64(i + 1, ints[i]);
      ins.real(11, c.gpu_power_w);
      ins.real(12, c.gpu_energy_j);
      ins.int64(13, static_cast<sqlite3_int64>(c.gpus_free));
      ins.int64(14, static_cast<sqlite3_int64>(c.gpus_free_fragmented));
      ins.int64(15, static_cast<sqlite3_int64>(c.nodes_powered_down));
      ins.end_row();
    }
    ins.finish();
  }
  {
    const TelemetryAssumptions& a = input.config.telemetry;
    Statement st{db.prepare("INSERT INTO metrics_info VALUES (?,?)")};
    const std::pair<const char*, double> rows[] = {{"interval_s", input.config.interval_s},
                                                   {"gpu_step_s", totals.gpu_step_s},
                                                   {"cluster_step_s", totals.cluster_step_s},
                                                   {"horizon_s", totals.horizon_s},
                                                   {"epoch_unix_s", static_cast<double>(input.config.epoch_unix_s)},
                                                   {"per_gpu", input.config.per_gpu ? 1.0 : 0.0},
                                                   {"busy_util_pct", a.busy_util_pct},
                                                   {"compute_power_share", a.compute_power_share},
                                                   {"comm_power_share", a.comm_power_share},
                                                   {"idle_temp_c", a.idle_temp_c},
                                                   {"full_power_temp_c", a.full_power_temp_c},
                                                   {"thermal_time_constant_s", a.thermal_time_constant_s},
                                                   {"fb_used_fraction", a.fb_used_fraction}};
    for (const auto& [key, value] : rows) {
      bind_text(st.stmt, 1, key);
      sqlite3_bind_double(st.stmt, 2, value);
      db.step(st.stmt);
    }
  }
  return totals;
}

std::vector<std::pair<std::string, double>> summary_numbers(const RunSummary& s) {
  return {{"jobs", static_cast<double>(s.jobs)},
          {"rejected", static_cast<double>(s.rejected)},
          {"started", static_cast<double>(s.started)},
          {"first_submit_s", s.first_submit_s},
          {"last_submit_s", s.last_submit_s},
          {"makespan_s", s.makespan_s},
          {"cpu_utilization", s.cpu_utilization},
          {"gpu_utilization", s.gpu_utilization},
          {"gpu_hours", s.gpu_hours},
          {"requeues", static_cast<double>(s.requeues)},
          {"lost_gpu_hours", s.lost_gpu_hours},
          {"cpu_hours", s.cpu_hours},
          {"wait_mean_s", s.wait_mean_s},
          {"wait_p50_s", s.wait_p50_s},
          {"wait_p95_s", s.wait_p95_s},
          {"wait_p99_s", s.wait_p99_s},
          {"wait_max_s", s.wait_max_s},
          {"bounded_slowdown_mean", s.bounded_slowdown_mean},
          {"multi_node_jobs", static_cast<double>(s.multi_node_jobs)},
          {"cross_leaf_jobs", static_cast<double>(s.cross_leaf_jobs)},
          {"leaves_per_multi_node_job", s.leaves_per_multi_node_job},
          {"placement_gpu_hours", s.placement_gpu_hours}};
}

/// The node lifecycle's figures (only for runs with /faults, so other runs' summaries are unchanged).
std::vector<std::pair<std::string, double>> lifecycle_numbers(const RunSummary& s) {
  std::vector<std::pair<std::string, double>> v;
  if (!s.lifecycle) return v;
  v = {{"faults", static_cast<double>(s.faults)},
       {"faults_suppressed", static_cast<double>(s.faults_suppressed)},
       {"job_interruptions", static_cast<double>(s.job_interruptions)},
       {"black_hole_interruptions", static_cast<double>(s.black_hole_interruptions)},
       {"allocated_gpu_hours", s.allocated_gpu_hours},
       {"gpu_hours_lost_fault_work", s.gpu_hours_lost_fault_work},
       {"gpu_hours_lost_restart", s.gpu_hours_lost_restart},
       {"gpu_hours_checkpoint", s.gpu_hours_checkpoint},
       {"goodput", s.goodput},
       {"node_availability", s.node_availability}};
  for (const auto& [cls, hours] : s.lost_gpu_hours_by_class) v.emplace_back("lost_gpu_hours_class_" + cls, hours);
  return v;
}

/// The autoscaler's and the cost model's figures (only for runs that have them).
std::vector<std::pair<std::string, double>> cloud_numbers(const RunSummary& s) {
  std::vector<std::pair<std::string, double>> v;
  if (s.autoscaled) {
    v.insert(v.end(), {{"nodes_created", static_cast<double>(s.nodes_created)},
                       {"boot_failures", static_cast<double>(s.boot_failures)},
                       {"nodes_removed", static_cast<double>(s.nodes_removed)},
                       {"pool_node_hours", s.pool_node_hours},
                       {"cold_start_s", s.cold_start_s}});
  }
  if (s.costed) {
    v.insert(v.end(), {{"cost_total_usd", s.cost_total_usd},
                       {"cost_idle_usd", s.cost_idle_usd},
                       {"cost_per_used_gpu_hour", s.cost_per_used_gpu_hour},
                       {"spot_interruptions", static_cast<double>(s.spot_interruptions)},
                       {"quota_cancels", static_cast<double>(s.quota_cancels)}});
  }
  if (s.autoscaled || s.costed || s.cloud_job_interruptions > 0) {
    v.insert(v.end(), {{"cloud_job_interruptions", static_cast<double>(s.cloud_job_interruptions)},
                       {"gpu_hours_lost_cloud", s.gpu_hours_lost_cloud}});
  }
  return v;
}

/// Writes the node lifecycle's tables: faults, job_interruptions, job_checkpoints.
void write_fault_tables(Database& db, const ClusterState& state, const FaultLog& log) {
  db.exec(kFaultSchema);
  const auto& nodes = state.config().nodes;
  {
    Statement st{db.prepare("INSERT INTO faults VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")};
    for (std::size_t i = 0; i < log.faults.size(); ++i) {
      const FaultRecord& f = log.faults[i];
      sqlite3_bind_int64(st.stmt, 1, static_cast<sqlite3_int64>(i));
      sqlite3_bind_double(st.stmt, 2, to_seconds_f(f.time));
      bind_text(st.stmt, 3, f.fault_class);
      bind_text(st.stmt, 4, f.cause);
      sqlite3_bind_int64(st.stmt, 5, f.xid);
      bind_text(st.stmt, 6, std::string(to_string(f.component)));
      if (f.node < nodes.size())
        bind_text(st.stmt, 7, nodes[f.node].name);
      else
        sqlite3_bind_null(st.stmt, 7);
      if (f.gpu != UINT32_MAX)
        sqlite3_bind_int64(st.stmt, 8, f.gpu);
      else
        sqlite3_bind_null(st.stmt, 8);
      if (f.group != UINT32_MAX)
        sqlite3_bind_int64(st.stmt, 9, f.group);
      else
        sqlite3_bind_null(st.stmt, 9);
      sqlite3_bind_int64(st.stmt, 10, f.nodes_hit);
      bind_text(st.stmt, 11, std::string(to_string(f.effect)));
      bind_text(st.stmt, 12, std::string(to_string(f.symptom)));
      if (f.detected == kNever)
        sqlite3_bind_null(st.stmt, 13);
      else
        bind_text(st.stmt, 13, f.found_by_people ? "people" : std::string(to_string(f.detected_by)));
      bind_optional_time(st.stmt, 14, f.detected);
      bind_optional_time(st.stmt, 15, f.returned);
      sqlite3_bind_int64(st.stmt, 16, f.jobs_hit);
      sqlite3_bind_double(st.stmt, 17, f.lost_gpu_s / 3600.0);
      db.step(st.stmt);
    }
  }
  {
    Statement st{db.prepare("INSERT INTO job_checkpoints VALUES (?,?,?,?,?,?,?,?,?)")};
    for (const CheckpointRecord& c : log.checkpoints) {
      sqlite3_bind_int64(st.stmt, 1, static_cast<sqlite3_int64>(state.spec(c.job).id));
      sqlite3_bind_int64(st.stmt, 2, c.gpus);
      bind_finite(st.stmt, 3, c.interval_s);
      sqlite3_bind_double(st.stmt, 4, c.write_s);
      sqlite3_bind_double(st.stmt, 5, c.restart_s);
      bind_finite(st.stmt, 6, c.mttf_s / 3600.0);
      bind_finite(st.stmt, 7, c.young_s);
      bind_finite(st.stmt, 8, c.daly_s);
      sqlite3_bind_int(st.stmt, 9, c.blocking ? 1 : 0);
      db.step(st.stmt);
    }
  }
}

/// Writes job_interruptions: runs ended by faults, then by the cloud side (spot reclaims, operations, resumes).
void write_interruptions(Database& db, const ClusterState& state, const FaultLog* faults, const CloudLog* cloud) {
  db.exec(kInterruptionsSchema);
  Statement st{db.prepare("INSERT INTO job_interruptions VALUES (?,?,?,?,?,?,?,?,?,?,?)")};
  const auto write = [&](const InterruptionRecord& r) {
    sqlite3_bind_double(st.stmt, 1, to_seconds_f(r.time));
    sqlite3_bind_int64(st.stmt, 2, static_cast<sqlite3_int64>(state.spec(r.job).id));
    bind_text(st.stmt, 3, std::string(to_string(r.cause)));
    if (r.cause == InterruptionCause::kFault)
      sqlite3_bind_int64(st.stmt, 4, r.fault);
    else
      sqlite3_bind_null(st.stmt, 4);
    bind_text(st.stmt, 5, std::string(job_state_name(r.state)));
    bind_text(st.stmt, 6, r.cause == InterruptionCause::kFault ? std::string(to_string(r.by)) : "node_fail");
    sqlite3_bind_double(st.stmt, 7, r.run_s);
    sqlite3_bind_double(st.stmt, 8, r.lost_s);
    sqlite3_bind_double(st.stmt, 9, r.lost_gpu_s / 3600.0);
    sqlite3_bind_int(st.stmt, 10, r.requeued ? 1 : 0);
    sqlite3_bind_int(st.stmt, 11, r.black_hole ? 1 : 0);
    db.step(st.stmt);
  };
  if (faults != nullptr) std::for_each(faults->interruptions.begin(), faults->interruptions.end(), write);
  if (cloud != nullptr) std::for_each(cloud->interruptions.begin(), cloud->interruptions.end(), write);
  db.exec("CREATE INDEX job_interruptions_by_job ON job_interruptions(job_id);");
}

/// Writes the cloud tables: scaling, costs, quota_events.
void write_cloud_tables(Database& db, const ClusterState& state, const CloudLog& log) {
  db.exec(kCloudSchema);
  const auto& nodes = state.config().nodes;
  {
    Statement st{db.prepare("INSERT INTO scaling VALUES (?,?,?,?)")};
    for (const ScalingRecord& r : log.scaling) {
      sqlite3_bind_double(st.stmt, 1, to_seconds_f(r.time));
      bind_text(st.stmt, 2, nodes[r.node].name);
      bind_text(st.stmt, 3, std::string(to_string(r.action)));
      if (r.action == ScalingRecord::Action::kCreate || r.action == ScalingRecord::Action::kRemove)
        sqlite3_bind_int64(st.stmt, 4, r.demand);
      else
        sqlite3_bind_null(st.stmt, 4);  // not a decision: no demand behind it
      db.step(st.stmt);
    }
  }
  {
    Statement st{db.prepare("INSERT INTO costs VALUES (?,?,?,?)")};
    for (const CostSample& c : log.costs) {
      sqlite3_bind_double(st.stmt, 1, to_seconds_f(c.time));
      bind_text(st.stmt, 2, c.scope);
      sqlite3_bind_double(st.stmt, 3, c.burn_usd_per_h);
      sqlite3_bind_double(st.stmt, 4, c.total_usd);
      db.step(st.stmt);
    }
  }
  {
    Statement op{db.prepare("INSERT INTO operations VALUES (?,?,?,?,?,?)")};
    for (const OperationRecord& r : log.operations) {
      sqlite3_bind_double(op.stmt, 1, to_seconds_f(r.time));
      bind_text(op.stmt, 2, r.action);
      bind_text(op.stmt, 3, r.step);
      if (r.node < nodes.size())
        bind_text(op.stmt, 4, nodes[r.node].name);
      else
        sqlite3_bind_null(op.stmt, 4);
      if (!r.name.empty())
        bind_text(op.stmt, 5, r.name);
      else
        sqlite3_bind_null(op.stmt, 5);
      sqlite3_bind_int64(op.stmt, 6, r.jobs_killed);
      db.step(op.stmt);
    }
  }
  {
    Statement st{db.prepare("INSERT INTO quota_events VALUES (?,?,?,?,?,?)")};
    for (const QuotaEvent& e : log.quota_events) {
      sqlite3_bind_double(st.stmt, 1, to_seconds_f(e.time));
      bind_text(st.stmt, 2, e.user);
      bind_text(st.stmt, 3, e.action);
      if (e.job_id != 0)
        sqlite3_bind_int64(st.stmt, 4, static_cast<sqlite3_int64>(e.job_id));
      else
        sqlite3_bind_null(st.stmt, 4);
      sqlite3_bind_double(st.stmt, 5, e.spend_usd);
      sqlite3_bind_double(st.stmt, 6, e.projected_usd);
      db.step(st.stmt);
    }
  }
}

// Each job's node list, formatted once, by the jobs.csv thread in job order, for jobs.csv and the jobs table both.
// Lists are published a block of kBlock jobs at a time; a reader of job j waits for its block (or for the writer's
// failure, which it then reports).
class NodeLists {
 public:
  explicit NodeLists(std::size_t jobs) : blocks_((jobs + kBlock - 1) / kBlock) {}

  /// Writer: appends the next job's list (empty for a job that never started).
  void add(std::string_view list) {
    Block& block = blocks_[added_ / kBlock];
    block.text += list;
    block.ends.push_back(static_cast<std::uint32_t>(block.text.size()));
    if (++added_ % kBlock == 0) publish(added_ / kBlock);
  }
  /// Writer: publishes every list added (the last block may be partial).
  void finish() { publish(blocks_.size()); }
  /// Writer: the lists will not all come; readers waiting or to come throw.
  void fail() {
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
    }
    published_cv_.notify_all();
  }
  /// Reader: job `j`'s list, once published (a view into storage that lives as long as this object).
  std::string_view get(JobIndex j) {
    const std::size_t b = j / kBlock;
    if (b >= published_seen_) {
      std::unique_lock lock(mutex_);
      published_cv_.wait(lock, [&] { return published_ > b || failed_; });
      if (published_ <= b) throw ResultsError("jobs.csv: writing failed, so did the jobs' node lists");
      published_seen_ = published_;
    }
    const Block& block = blocks_[b];
    const std::size_t k = j % kBlock;
    const std::uint32_t begin = k == 0 ? 0 : block.ends[k - 1];
    return std::string_view(block.text).substr(begin, block.ends[k] - begin);
  }

 private:
  static constexpr std::size_t kBlock = 4096;
  struct Block {
    std::string text;                 // the lists one after another
    std::vector<std::uint32_t> ends;  // where each ends in text
  };
  void publish(std::size_t blocks) {
    {
      std::lock_guard lock(mutex_);
      published_ = blocks;
    }
    published_cv_.notify_all();
  }

  std::vector<Block> blocks_;       // sized once: a block never moves
  std::size_t added_ = 0;           // writer's
  std::size_t published_seen_ = 0;  // reader's copy of published_
  std::mutex mutex_;
  std::condition_variable published_cv_;
  std::size_t published_ = 0;  // blocks readable
  bool failed_ = false;
};

// Writes the run's tables into `db` (begun by start_results_database) and commits; the metrics tables from `build`
// (with `metrics`: the per-GPU samples go in as they come, the cluster series is built while the jobs and node events
// go in). Without `node_lists`, the jobs, node_events and job_reasons tables are in already (a ResultsStream wrote
// them).
std::optional<MetricsTotals> write_sqlite(Database& db, const RunInfo& info, const ClusterState& state,
                                          const RunSummary& summary, const RunRecorder& recorder,
                                          const MetricsInput* metrics, std::optional<MetricsBuild>& build,
                                          const FaultLog* faults, const CloudLog* cloud, const ExtraTablesWriter* extra,
                                          const JobRowFormat& format, NodeLists* node_lists) {
  {
    Statement st{db.prepare("INSERT INTO runs VALUES (1,?,?,?,?,?,?,?,?)")};
    bind_text(st.stmt, 1, info.scenario);
    bind_text(st.stmt, 2, info.scenario_file);
    sqlite3_bind_int64(st.stmt, 3, static_cast<sqlite3_int64>(info.seed));
    bind_text(st.stmt, 4, info.policy);
    bind_text(st.stmt, 5, info.version);
    sqlite3_bind_double(st.stmt, 6, info.wall_time_s);
    sqlite3_bind_int64(st.stmt, 7, static_cast<sqlite3_int64>(info.events));
    bind_text(st.stmt, 8, info.parameters_json);
    db.step(st.stmt);
  }
  {
    Statement st{db.prepare("INSERT INTO nodes VALUES (?,?,?,?,?,?,?)")};
    const auto& nodes = state.config().nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      sqlite3_bind_int64(st.stmt, 1, static_cast<sqlite3_int64>(i));
      bind_text(st.stmt, 2, nodes[i].name);
      sqlite3_bind_int64(st.stmt, 3, nodes[i].cpus);
      sqlite3_bind_int64(st.stmt, 4, static_cast<sqlite3_int64>(nodes[i].memory_mb));
      sqlite3_bind_int64(st.stmt, 5, nodes[i].gpus);
      if (nodes[i].gpu_type.empty())
        sqlite3_bind_null(st.stmt, 6);
      else
        bind_text(st.stmt, 6, nodes[i].gpu_type);
      sqlite3_bind_int64(st.stmt, 7, nodes[i].weight);
      db.step(st.stmt);
    }
  }
  {
    // The partitions as configured (a twin replaces these rows with what slurmrestd reports).
    Statement st{db.prepare("INSERT INTO partitions VALUES (?,?,?,?,?,?,?,?,?,?)")};
    const auto& config = state.config();
    for (const PartitionConfig& p : config.partitions) {
      std::vector<std::string> names;
      std::int64_t cpus = 0;
      for (NodeIndex n : p.nodes) {
        names.push_back(config.nodes[n].name);
        cpus += config.nodes[n].cpus;
      }
      bind_text(st.stmt, 1, p.name);
      bind_text(st.stmt, 2, format_hostlist(names));
      sqlite3_bind_int64(st.stmt, 3, p.is_default ? 1 : 0);
      if (p.default_time_s >= 0)
        sqlite3_bind_int64(st.stmt, 4, p.default_time_s);
      else
        sqlite3_bind_null(st.stmt, 4);
      if (p.max_time_s >= 0)
        sqlite3_bind_int64(st.stmt, 5, p.max_time_s);
      else
        sqlite3_bind_null(st.stmt, 5);
      bind_text(st.stmt, 6, std::string(partition_state_name(p.state)));
      sqlite3_bind_int64(st.stmt, 7, p.priority_tier);
      sqlite3_bind_int64(st.stmt, 8, p.priority_job_factor);
      sqlite3_bind_int64(st.stmt, 9, static_cast<sqlite3_int64>(p.nodes.size()));
      sqlite3_bind_int64(st.stmt, 10, cpus);
      db.step(st.stmt);
    }
  }
  if (build) {
    write_gpu_metrics(db, *build);
    write_job_gpus(db, state, *build);
  }
  if (node_lists != nullptr) {
    {
      BatchInsert ins(db, "jobs", 23);
      std::vector<NodeIndex> nodes;
      for (JobIndex j = 0; j < state.job_count(); ++j) {
        nodes.clear();
        const JobRunRecord record = job_run_record(state, j, nodes);
        // The node list was formatted by the jobs.csv thread.
        format.add_jobs_row(ins, state.spec(j), record, node_lists->get(j), nodes);
        ins.end_row();
      }
      ins.finish();
    }
    {
      // A row is a change of node_count consecutive nodes at one time to one state, as the recorder merged them.
      BatchInsert ins(db, "node_events", 4);
      for (const NodeEvent& e : recorder.node_events()) add_node_event_row(ins, e);
      ins.finish();
    }
    {
      BatchInsert ins(db, "job_reasons", 3);
      for (const ReasonEvent& e : recorder.reason_events()) add_reason_row(ins, e, state.spec(e.job).id);
      ins.finish();
    }
  }
  {
    Statement st{db.prepare("INSERT INTO preemptions VALUES (?,?,?,?,?)")};
    for (const PreemptionEvent& e : recorder.preemptions()) {
      sqlite3_bind_int64(st.stmt, 1, to_seconds(e.time));
      sqlite3_bind_int64(st.stmt, 2, static_cast<sqlite3_int64>(state.spec(e.job).id));
      sqlite3_bind_int64(st.stmt, 3, static_cast<sqlite3_int64>(state.spec(e.preemptor).id));
      sqlite3_bind_int64(st.stmt, 4, to_seconds(e.end));
      bind_text(st.stmt, 5, e.requeue ? "REQUEUE" : "CANCEL");
      db.step(st.stmt);
    }
  }
  std::optional<MetricsTotals> totals;
  if (build) totals = write_cluster_metrics(db, *metrics, *build);
  if (faults != nullptr) write_fault_tables(db, state, *faults);
  if (cloud != nullptr) write_cloud_tables(db, state, *cloud);
  if (faults != nullptr || cloud != nullptr) write_interruptions(db, state, faults, cloud);
  {
    Statement st{db.prepare("INSERT INTO summary VALUES (?,?)")};
    auto numbers = summary_numbers(summary);
    const auto lifecycle = lifecycle_numbers(summary);
    numbers.insert(numbers.end(), lifecycle.begin(), lifecycle.end());
    const auto cloud_figures = cloud_numbers(summary);
    numbers.insert(numbers.end(), cloud_figures.begin(), cloud_figures.end());
    if (totals) {
      const auto more = metrics_numbers(*totals);
      numbers.insert(numbers.end(), more.begin(), more.end());
    }
    for (const auto& [key, value] : numbers) {
      bind_text(st.stmt, 1, key);
      sqlite3_bind_double(st.stmt, 2, value);
      db.step(st.stmt);
    }
    for (const auto& [state_name, count] : summary.by_state) {
      bind_text(st.stmt, 1, "jobs_" + state_name);
      sqlite3_bind_double(st.stmt, 2, static_cast<double>(count));
      db.step(st.stmt);
    }
  }
  if (extra != nullptr && *extra) (*extra)(db.handle());
  if (node_lists != nullptr) db.exec(results_sqlite::kJobIndexes);  // (a stream's database has them already)
  // Rows in time order (as the recorder keeps them) are found by time through their rowids (RunView bisects them),
  // so the time index, about a third of writing node_events, is built only for rows out of order.
  const auto& node_events = recorder.node_events();
  if (!std::is_sorted(node_events.begin(), node_events.end(),
                      [](const NodeEvent& a, const NodeEvent& b) { return to_seconds(a.time) < to_seconds(b.time); }))
    db.exec("CREATE INDEX node_events_by_time ON node_events(time);");
  db.exec("COMMIT");
  return totals;
}

void write_csv(const std::filesystem::path& path, const ClusterState& state, const JobRowFormat& format,
               NodeLists& node_lists) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw ResultsError(path.string() + ": cannot open for writing");
  out << kJobsCsvHeader;
  // Lines gather in a buffer written out about every kJobsCsvFlushBytes.
  std::string buffer;
  buffer.reserve(2 * kJobsCsvFlushBytes);
  std::vector<NodeIndex> nodes;
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    nodes.clear();
    const JobRunRecord record = job_run_record(state, j, nodes);
    const std::string list = format.node_list(nodes);
    node_lists.add(list);
    format.append_csv_line(buffer, state.spec(j), record, list);
    if (buffer.size() >= kJobsCsvFlushBytes) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  node_lists.finish();
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  out.flush();
  if (!out) throw ResultsError(path.string() + ": write failed");
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw ResultsError(path.string() + ": cannot open for writing");
  out << text;
  out.flush();
  if (!out) throw ResultsError(path.string() + ": write failed");
}

}  // namespace

JobTres job_tres(const ClusterState& state, JobIndex j) {
  JobTres t;
  const auto alloc = state.allocation(j);
  if (state.job(j).start >= 0) {
    t.nodes = alloc.size();
    for (const auto& a : alloc) {
      t.cpus += a.cpus;
      t.gpus += a.gpus;
    }
  } else {
    const JobSpec& spec = state.spec(j);
    t.nodes = spec.nodes;
    t.cpus = spec.cpus;
    t.gpus = static_cast<std::uint64_t>(std::max<std::uint32_t>(spec.nodes, 1)) * spec.gpus_per_node;
  }
  return t;
}

std::string_view partition_state_name(PartitionState state) {
  static constexpr std::string_view kStateNames[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
  return kStateNames[static_cast<int>(state)];
}

std::string_view recorded_state_name(const JobRuntime& job) {
  return recorded_state_name(job.state, job.rejected);
}

std::string_view recorded_state_name(JobState state, bool rejected) {
  return rejected ? std::string_view("REJECTED") : job_state_name(state);
}

std::string job_node_list(const ClusterState& state, JobIndex job) {
  if (state.job(job).start < 0) return {};
  std::vector<std::string> names;
  for (const auto& a : state.allocation(job)) names.push_back(state.config().nodes[a.node].name);
  return format_hostlist(names);
}

HostlistFormatter node_list_formatter(const ClusterState& state) {
  return node_list_formatter(state.config());
}

HostlistFormatter node_list_formatter(const ClusterConfig& config) {
  std::vector<std::string> names;
  names.reserve(config.nodes.size());
  for (const NodeConfig& node : config.nodes) names.push_back(node.name);
  return HostlistFormatter(std::move(names));
}

std::string job_node_list(const ClusterState& state, JobIndex job, const HostlistFormatter& nodes) {
  if (state.job(job).start < 0) return {};
  thread_local std::vector<std::uint32_t> indices;
  indices.clear();
  for (const auto& a : state.allocation(job)) indices.push_back(a.node);
  return nodes.format(indices);
}

std::string summary_json(const RunInfo& info, const RunSummary& summary, const MetricsTotals* totals) {
  nlohmann::ordered_json j;
  j["scenario"] = info.scenario;
  j["seed"] = info.seed;
  j["policy"] = info.policy;
  j["version"] = info.version;
  j["wall_time_s"] = info.wall_time_s;
  j["events"] = info.events;
  for (const auto& [key, value] : summary_numbers(summary)) j[key] = value;
  for (const auto& [key, value] : lifecycle_numbers(summary)) j[key] = value;
  for (const auto& [key, value] : cloud_numbers(summary)) j[key] = value;
  if (totals != nullptr) {
    for (const auto& [key, value] : metrics_numbers(*totals)) j[key] = value;
  }
  j["jobs_by_state"] = summary.by_state;
  j["parameters"] = nlohmann::json::parse(info.parameters_json.empty() ? "{}" : info.parameters_json);
  return j.dump(2) + "\n";
}

void write_results(const std::filesystem::path& out_dir, const RunInfo& info, const ClusterState& state,
                   const RunSummary& summary, const RunRecorder& recorder, const MetricsInput* metrics,
                   const FaultLog* faults, const CloudLog* cloud, const ExtraTablesWriter* extra,
                   ResultsStream* stream) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw ResultsError(out_dir.string() + ": cannot create: " + ec.message());
  const auto db_tmp = out_dir / kResultsTemporaryFiles[0];
  const auto csv_tmp = out_dir / kResultsTemporaryFiles[1];
  const auto json_tmp = out_dir / kResultsTemporaryFiles[2];
  try {
    const JobRowFormat format(state.config());
    std::optional<MetricsTotals> totals;
    // The metrics are built on a thread of their own from the start (while the stream writes its last rows).
    std::optional<MetricsBuild> build;
    if (metrics != nullptr) build.emplace(state, *metrics);
    // The stream's database, with the jobs, node events and reasons in, and jobs.csv whole; null if it had to drop
    // them (the check at the end failed).
    std::unique_ptr<Database> streamed = stream != nullptr ? stream->finish() : nullptr;
    if (streamed) {
      totals = write_sqlite(*streamed, info, state, summary, recorder, metrics, build, faults, cloud, extra, format,
                            nullptr);
    } else {
      // jobs.csv is written on a thread of its own beside the database (both only read the finished run); the
      // future's destructor waits for it on every path out of this block, so no file is removed while written.
      // It formats each job's node list once, for both.
      NodeLists node_lists(state.job_count());
      std::future<void> csv = std::async(std::launch::async, [&] {
        try {
          write_csv(csv_tmp, state, format, node_lists);
        } catch (...) {
          node_lists.fail();
          throw;
        }
      });
      std::exception_ptr sqlite_error;
      try {
        std::filesystem::remove(db_tmp, ec);  // a leftover temporary from a crashed run; absence is fine
        Database db(db_tmp);
        results_sqlite::start_results_database(db);
        totals =
            write_sqlite(db, info, state, summary, recorder, metrics, build, faults, cloud, extra, format, &node_lists);
      } catch (...) {
        sqlite_error = std::current_exception();
      }
      csv.get();  // jobs.csv's error first: when it failed, the database's is only that the node lists never came
      if (sqlite_error) std::rethrow_exception(sqlite_error);
    }
    write_text(json_tmp, summary_json(info, summary, totals ? &*totals : nullptr));
  } catch (...) {
    std::filesystem::remove(db_tmp, ec);
    std::filesystem::remove(csv_tmp, ec);
    std::filesystem::remove(json_tmp, ec);
    throw;
  }
  // summary.json marks a whole set: it goes first and comes back last, so a run killed between the renames leaves
  // a folder without it, which the readers refuse as incomplete, never one run's database beside another's files.
  std::filesystem::remove(out_dir / "summary.json", ec);
  if (ec) throw ResultsError((out_dir / "summary.json").string() + ": cannot remove: " + ec.message());
  replace_file(db_tmp, out_dir / "results.sqlite");
  replace_file(csv_tmp, out_dir / "jobs.csv");
  replace_file(json_tmp, out_dir / "summary.json");
}

}  // namespace gputwin
