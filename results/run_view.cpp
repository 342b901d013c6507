#include "results/run_view.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "gpu/gpu_catalogue.hpp"
#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/text.hpp"
#include "results/gpu_metrics.hpp"

namespace gputwin {

namespace {

std::int64_t column_int(sqlite3_stmt* row, int i, std::int64_t null_value) {
  return sqlite3_column_type(row, i) == SQLITE_NULL ? null_value : sqlite3_column_int64(row, i);
}

std::size_t group_index(std::string_view group) {
  for (std::size_t g = 0; g < kNodeGroups.size(); ++g) {
    if (kNodeGroups[g] == group) return g;
  }
  return kNodeGroups.size() - 1;
}

/// Which samples of a series of period `step` a window [from_s, to_s] keeps for at most `max_points`: every
/// `stride`-th from sample index `first`.
struct Thinning {
  std::int64_t first = 0;
  std::int64_t stride = 1;
};

Thinning thinning(std::int64_t from_s, std::int64_t to_s, std::int64_t step, std::size_t max_points) {
  Thinning t;
  t.first = (std::max<std::int64_t>(0, from_s) + step - 1) / step;
  const std::int64_t count = std::max<std::int64_t>(0, to_s / step - t.first + 1);
  const auto max = static_cast<std::int64_t>(max_points);
  t.stride = std::max<std::int64_t>(1, (count + max - 1) / max);
  return t;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> node_range(std::int64_t first, std::int64_t count, std::size_t nodes) {
  const auto total = static_cast<std::int64_t>(nodes);
  if (count <= 0 || first >= total) return {0, 0};
  if (first < 0) {  // opposite signs: no overflow
    count += first;
    first = 0;
    if (count <= 0) return {0, 0};
  }
  return {first, first + std::min(count, total - first)};
}

std::string_view node_state_group(std::string_view state) {
  if (state == "IDLE" || state == "POWERED_DOWN" || state == "POWERING_UP" || state == "POWERING_DOWN") return "IDLE";
  if (state == "MIXED") return "MIXED";
  if (state == "ALLOCATED" || state == "COMPLETING") return "ALLOCATED";
  if (state == "DRAINING" || state == "DRAINED" || state == "DRAIN" || state == "FAILING" || state == "FAIL") {
    return "DRAIN";
  }
  if (state == "DOWN" || state == "REBOOTING") return "DOWN";
  return "UNKNOWN";
}

struct RunView::NodeInfo {
  std::string name, gpu_type;
  std::int32_t cpus = 0, gpus = 0;
  std::int64_t memory_mb = 0;
  double fb_total_mib = 0;
};

RunView::RunView(const std::filesystem::path& results_dir, ResultsCheck check) : dir_(results_dir) {
  const auto file = results_dir / "results.sqlite";
  if (!std::filesystem::is_regular_file(file)) {
    throw InputError(file.string(), "", "no results database (is this a results folder?)");
  }
  db_ = std::make_unique<ResultsDb>(file, check);
  db_->require_columns(
      "jobs", {"job_id", "name", "user", "account", "partition", "qos", "submit_time", "start_time", "end_time",
               "state", "nodes", "cpus", "gpus", "time_limit", "node_list", "priority", "reason"});
  db_->require_columns("nodes", {"node_index", "name", "cpus", "memory_mb", "gpus", "gpu_type"});
  db_->require_columns("node_events", {"time", "node_index", "state"});
  node_event_ranges_ = db_->has_column("node_events", "node_count");

  if (db_->has_table("runs")) {
    db_->query("SELECT scenario, policy, seed FROM runs ORDER BY run_id LIMIT 1", {}, [&](sqlite3_stmt* row) {
      info_.scenario = column_text(row, 0);
      info_.policy = column_text(row, 1);
      info_.seed = static_cast<std::uint64_t>(sqlite3_column_int64(row, 2));
    });
  }
  info_.kind = db_->has_table("twin_info") ? "twin" : "run";
  std::int64_t horizon = -1;
  if (db_->has_table("metrics_info")) {
    db_->query("SELECT key, value FROM metrics_info", {}, [&](sqlite3_stmt* row) {
      const std::string key = column_text(row, 0);
      const double v = sqlite3_column_double(row, 1);
      if (!std::isfinite(v)) return;
      if (key == "horizon_s") horizon = static_cast<std::int64_t>(v);
      if (key == "epoch_unix_s") info_.epoch_unix_s = static_cast<std::int64_t>(v);
      if (key == "cluster_step_s") info_.cluster_step_s = static_cast<std::int64_t>(v);
      if (key == "gpu_step_s") info_.gpu_step_s = static_cast<std::int64_t>(v);
    });
  }
  if (!db_->has_table("gpu_metrics")) info_.gpu_step_s = 0;
  if (!db_->has_table("cluster_metrics")) info_.cluster_step_s = 0;
  has_job_gpus_ = db_->has_table("job_gpus") && db_->has_column("job_gpus", "start_time");
  load_nodes();
  load_jobs();
  std::int64_t last = 0;
  for (const Job& j : table_->rows()) last = std::max({last, j.submit, j.start, j.end});
  if (!node_event_time_.empty())
    last = std::max(last, *std::max_element(node_event_time_.begin(), node_event_time_.end()));
  info_.end_s = horizon >= 0 ? std::max(horizon, last) : last;
  info_.jobs = table_->rows().size();
  info_.nodes = nodes_.size();
}

RunView::~RunView() = default;

void RunView::load_nodes() {
  db_->query("SELECT node_index, name, cpus, memory_mb, gpus, gpu_type FROM nodes ORDER BY node_index", {},
             [&](sqlite3_stmt* row) {
               NodeInfo n;
               n.name = column_text(row, 1);
               n.cpus = static_cast<std::int32_t>(sqlite3_column_int64(row, 2));
               n.memory_mb = sqlite3_column_int64(row, 3);
               n.gpus = static_cast<std::int32_t>(sqlite3_column_int64(row, 4));
               n.gpu_type = column_text(row, 5);
               n.fb_total_mib = gpu_fb_total_mib(n.gpu_type);
               node_by_name_.emplace(n.name, static_cast<std::int32_t>(nodes_.size()));
               info_.total_gpus += static_cast<std::size_t>(std::max(0, n.gpus));
               nodes_.push_back(std::move(n));
             });
  // Node events, grouped per node (a counting sort keeps each node's events in table order, which is time order).
  // A row covers node_count consecutive nodes (schema 2; a version 1 file has one node per row).
  std::vector<std::int64_t> times;
  std::vector<std::uint32_t> node_of, states;
  // Rows in time order with rowids 1, 2, ... (as this build writes them) let the event log find the rows up to a
  // second by bisecting rowids; otherwise it searches the time column.
  const std::string sql = std::string("SELECT time, node_index, state, ") + (node_event_ranges_ ? "node_count" : "1") +
                          ", rowid FROM node_events ORDER BY rowid";
  node_event_rows_in_time_order_ = true;
  node_event_rows_ = 0;
  std::int64_t previous_time = std::numeric_limits<std::int64_t>::min();
  db_->query(sql.c_str(), {}, [&](sqlite3_stmt* row) {
    const auto [lo, hi] = node_range(sqlite3_column_int64(row, 1), sqlite3_column_int64(row, 3), nodes_.size());
    const std::uint32_t state = strings_.intern(column_text(row, 2));
    const std::int64_t time = sqlite3_column_int64(row, 0);
    ++node_event_rows_;
    if (time < previous_time || sqlite3_column_int64(row, 4) != node_event_rows_)
      node_event_rows_in_time_order_ = false;
    previous_time = time;
    for (std::int64_t node = lo; node < hi; ++node) {
      times.push_back(time);
      node_of.push_back(static_cast<std::uint32_t>(node));
      states.push_back(state);
    }
  });
  node_event_begin_.assign(nodes_.size() + 1, 0);
  for (std::uint32_t n : node_of) ++node_event_begin_[n + 1];
  std::partial_sum(node_event_begin_.begin(), node_event_begin_.end(), node_event_begin_.begin());
  std::vector<std::uint32_t> fill(node_event_begin_.begin(), node_event_begin_.end() - 1);
  node_event_time_.resize(times.size());
  node_event_state_.resize(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    const std::uint32_t at = fill[node_of[i]]++;
    node_event_time_[at] = times[i];
    node_event_state_[at] = states[i];
  }
  for (std::size_t n = 0; n < nodes_.size(); ++n) {  // table order is time order; make sure of it per node
    const std::uint32_t b = node_event_begin_[n], e = node_event_begin_[n + 1];
    if (std::is_sorted(node_event_time_.begin() + b, node_event_time_.begin() + e)) continue;
    std::vector<std::uint32_t> idx(e - b);
    std::iota(idx.begin(), idx.end(), b);
    std::stable_sort(idx.begin(), idx.end(), [&](auto x, auto y) { return node_event_time_[x] < node_event_time_[y]; });
    std::vector<std::int64_t> t2;
    std::vector<std::uint32_t> s2;
    for (auto i : idx) {
      t2.push_back(node_event_time_[i]);
      s2.push_back(node_event_state_[i]);
    }
    std::copy(t2.begin(), t2.end(), node_event_time_.begin() + b);
    std::copy(s2.begin(), s2.end(), node_event_state_.begin() + b);
  }
}

void RunView::load_jobs() {
  table_ = std::make_unique<JobTable>();
  db_->query(
      "SELECT job_id, name, user, account, partition, qos, submit_time, start_time, end_time, state, nodes, cpus, "
      "gpus, time_limit, node_list, priority, reason FROM jobs ORDER BY job_id",
      {}, [&](sqlite3_stmt* row) {
        const std::string name = column_text(row, 1), user = column_text(row, 2), account = column_text(row, 3),
                          partition = column_text(row, 4), qos = column_text(row, 5), state = column_text(row, 9),
                          node_list = column_text(row, 14), reason = column_text(row, 16);
        JobRecord j;
        j.job_id = sqlite3_column_int64(row, 0);
        j.name = name;
        j.user = user;
        j.account = account;
        j.partition = partition;
        j.qos = qos;
        j.submit_s = sqlite3_column_int64(row, 6);
        j.start_s = column_int(row, 7, -1);
        j.end_s = column_int(row, 8, -1);
        j.state = state;
        j.nodes = static_cast<std::int32_t>(sqlite3_column_int64(row, 10));
        j.cpus = static_cast<std::int32_t>(sqlite3_column_int64(row, 11));
        j.gpus = static_cast<std::int32_t>(sqlite3_column_int64(row, 12));
        j.time_limit_s = sqlite3_column_int64(row, 13);
        j.node_list = node_list;
        j.priority = column_int(row, 15, 0);
        j.reason = reason;
        table_->add(j);
      });
  JobTable::ReasonAt reasons;
  if (db_->has_table("job_reasons")) {
    reasons = [this](std::int64_t job_id, std::int64_t at_s) {
      std::string reason;
      std::lock_guard lock(db_mutex_);
      db_->query("SELECT reason FROM job_reasons WHERE job_id = ? AND time <= ? ORDER BY time DESC LIMIT 1",
                 {job_id, at_s}, [&](sqlite3_stmt* q) { reason = column_text(q, 0); });
      return reason;
    };
  }
  table_->finish(std::move(reasons));
}

JobPhase job_phase_at(std::int64_t submit_s, std::int64_t start_s, std::int64_t end_s, std::int64_t at_s) {
  if (at_s < submit_s) return JobPhase::kNotSubmitted;
  if (start_s >= 0 && at_s >= start_s) {
    if (end_s >= 0 && at_s >= end_s) return JobPhase::kRecorded;
    return JobPhase::kRunning;
  }
  if (start_s < 0 && (end_s < 0 || at_s >= end_s)) return JobPhase::kRecorded;
  return JobPhase::kPending;
}

void count_job(Overview& overview, JobPhase phase, std::string_view recorded_state, std::int64_t gpus) {
  if (phase == JobPhase::kRunning || (phase == JobPhase::kRecorded && recorded_state == "RUNNING")) {
    ++overview.running_jobs;
    overview.allocated_gpus += gpus;
  } else if (phase == JobPhase::kPending || (phase == JobPhase::kRecorded && recorded_state == "PENDING")) {
    ++overview.pending_jobs;
  }
}

void count_node(Overview& overview, std::string_view state) {
  ++overview.node_groups[group_index(node_state_group(state))];
  overview.idle_nodes = overview.node_groups[0];
}

double gpu_fb_total_mib(std::string_view gpu_type) {
  const auto model = find_gpu_model(std::string(gpu_type));
  return model ? model->memory_gb * 1024.0 : 0;
}

void set_gpu_use(std::vector<NodeRow>& rows, std::span<const NodeGpuSample> samples,
                 std::span<const double> fb_total_mib) {
  for (std::size_t n = 0; n < samples.size() && n < rows.size(); ++n) {
    const NodeGpuSample& g = samples[n];
    if (g.gpus == 0) continue;
    rows[n].gpu_util_pct = g.util / g.gpus;
    const double total = fb_total_mib[n];
    rows[n].gpu_mem_pct = total > 0 ? 100.0 * g.fb_used_mib / (total * g.gpus) : -1;
    rows[n].xid = g.xid;
  }
}

void set_gpu_use(Overview& overview, std::span<const NodeGpuSample> samples, std::span<const double> fb_total_mib) {
  double util = 0, fb = 0, fb_total = 0;
  std::int64_t sampled = 0;
  for (std::size_t n = 0; n < samples.size(); ++n) {
    util += samples[n].util;
    fb += samples[n].fb_used_mib;
    fb_total += fb_total_mib[n] * samples[n].gpus;
    sampled += samples[n].gpus;
  }
  if (sampled > 0) {
    overview.gpu_util_pct = util / static_cast<double>(sampled);
    if (fb_total > 0) overview.gpu_mem_pct = 100.0 * fb / fb_total;
  }
}

void set_partition_nodes(PartitionRow& p, std::span<const std::int32_t> members, std::span<const NodeRow> nodes) {
  std::set<std::string> types;
  p.total_nodes = 0;
  p.total_gpus = 0;
  p.avail_nodes = 0;
  for (const std::int32_t n : members) {
    const NodeRow& node = nodes[static_cast<std::size_t>(n)];
    ++p.total_nodes;
    p.total_gpus += node.gpus;
    if (!node.gpu_type.empty()) types.insert(node.gpu_type);
    if (node.group == "IDLE" || node.group == "MIXED") ++p.avail_nodes;
  }
  p.gpu_type.clear();
  for (const std::string& t : types) p.gpu_type += (p.gpu_type.empty() ? "" : ",") + t;
}

void RunView::read_database(const std::function<void(ResultsDb&)>& read) const {
  std::lock_guard lock(db_mutex_);
  read(*db_);
}

void RunView::prepare_orders() const {
  table_->prepare_orders();
  std::lock_guard lock(cache_mutex_);
  if (!gantt_) gantt_.emplace(*table_, node_by_name_, nodes_.size(), info_.end_s);
}

JobPage RunView::jobs(const JobQuery& query) const {
  return table_->jobs(query);
}

std::optional<JobRow> RunView::job(std::int64_t job_id, std::int64_t at_s) const {
  return table_->job(job_id, at_s);
}

std::vector<JobRow> RunView::controller_jobs(std::int64_t at_s, std::int64_t min_job_age_s) const {
  return table_->controller_jobs(at_s, min_job_age_s);
}

std::vector<JobRow> RunView::jobs_between(std::int64_t at_s, std::int64_t from_s, std::int64_t to_s,
                                          std::size_t max_jobs) const {
  return table_->jobs_between(at_s, from_s, to_s, max_jobs);
}

std::vector<std::pair<std::int32_t, std::string>> RunView::job_gpus(std::int64_t job_id, std::int64_t start_s) const {
  std::vector<std::pair<std::int32_t, std::string>> out;
  if (!has_job_gpus_) return out;
  std::lock_guard lock(db_mutex_);
  db_->query("SELECT node_index, gpus FROM job_gpus WHERE job_id = ? AND start_time = ? ORDER BY node_index",
             {job_id, start_s}, [&](sqlite3_stmt* q) {
               const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q, 1));
               out.emplace_back(static_cast<std::int32_t>(sqlite3_column_int64(q, 0)), text == nullptr ? "" : text);
             });
  return out;
}

std::vector<std::pair<std::string, std::string>> RunView::account_users() const {
  return table_->account_users();
}

std::vector<std::string> RunView::qos_names() const {
  return table_->qos_names();
}

std::int32_t RunView::node_index(std::string_view name) const {
  const auto it = node_by_name_.find(std::string(name));
  return it == node_by_name_.end() ? -1 : it->second;
}

std::string RunView::node_state_at(std::size_t node, std::int64_t at_s) const {
  const auto b = node_event_time_.begin() + node_event_begin_[node];
  const auto e = node_event_time_.begin() + node_event_begin_[node + 1];
  const auto it = std::upper_bound(b, e, at_s);
  if (it == b) return "IDLE";
  return std::string(text(node_event_state_[static_cast<std::size_t>(it - node_event_time_.begin()) - 1]));
}

namespace {

/// A prepared statement of `db`, finalized when it goes.
struct Prepared {
  Prepared(ResultsDb& db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db.handle(), sql, -1, &stmt, nullptr) != SQLITE_OK) db.fail("query");
  }
  ~Prepared() { sqlite3_finalize(stmt); }
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  /// Steps once: true for a row, false when done; fails (throws) on an error.
  bool step() {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) db_.fail("query");
    return false;
  }
  ResultsDb& db_;
  sqlite3_stmt* stmt = nullptr;
};

/// One read transaction over `db` while it lives: the statements inside take the file's shared lock once, not
/// once each (a lock and an fstat per statement).
struct ReadTransaction {
  explicit ReadTransaction(ResultsDb& db) : db_(db) {
    if (sqlite3_exec(db.handle(), "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) db.fail("BEGIN");
  }
  ~ReadTransaction() { sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr); }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ResultsDb& db_;
};

}  // namespace

std::vector<NodeGpuSample> RunView::gpu_samples(std::int64_t at_s) const {
  if (info_.gpu_step_s <= 0) return {};
  const std::int64_t t = std::max<std::int64_t>(0, at_s / info_.gpu_step_s * info_.gpu_step_s);
  // The Overview asks for the same sample twice (its cards, then the node grid), and every reader of a live run
  // asks for the same second: the last sample read is kept, and a second reader of it waits for the first.
  std::lock_guard samples_lock(samples_mutex_);
  if (samples_time_ == t) return samples_;
  std::vector<NodeGpuSample> samples(nodes_.size());
  std::lock_guard lock(db_mutex_);
  ReadTransaction transaction(*db_);
  // One seek per GPU on the primary key (node_index, gpu, time). `gpu >= 0 AND time = ?` would walk every row of
  // the node (SQLite seeks on a range of gpu, then filters time): 0.4-0.6 s at 4,096 nodes against 0.0x s.
  Prepared point(*db_,
                 "SELECT util_pct, fb_used_mib, xid FROM gpu_metrics WHERE node_index = ?1 AND gpu = ?2 AND time = ?3");
  // The writer samples GPUs 0 .. min(gpus, 64) - 1 (gpu_metrics.cpp); a node with rows beyond its count (a file
  // written otherwise) is read whole as before.
  Prepared beyond(*db_, "SELECT 1 FROM gpu_metrics WHERE node_index = ?1 AND gpu >= ?2 LIMIT 1");
  Prepared whole(*db_,
                 "SELECT util_pct, fb_used_mib, xid FROM gpu_metrics WHERE node_index = ?1 AND gpu >= 0 AND time = ?2");
  const auto add = [](NodeGpuSample& sample, sqlite3_stmt* q) {
    sample.add(sqlite3_column_double(q, 0), sqlite3_column_double(q, 1),
               static_cast<std::int32_t>(sqlite3_column_int64(q, 2)));
  };
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    NodeGpuSample& sample = samples[node];
    const auto index = static_cast<sqlite3_int64>(node);
    const std::int32_t gpus = std::clamp(nodes_[node].gpus, 0, 64);
    sqlite3_reset(beyond.stmt);
    sqlite3_bind_int64(beyond.stmt, 1, index);
    sqlite3_bind_int64(beyond.stmt, 2, gpus);
    if (beyond.step()) {
      sqlite3_reset(whole.stmt);
      sqlite3_bind_int64(whole.stmt, 1, index);
      sqlite3_bind_int64(whole.stmt, 2, t);
      while (whole.step()) add(sample, whole.stmt);
      continue;
    }
    for (std::int32_t gpu = 0; gpu < gpus; ++gpu) {
      sqlite3_reset(point.stmt);
      sqlite3_bind_int64(point.stmt, 1, index);
      sqlite3_bind_int64(point.stmt, 2, gpu);
      sqlite3_bind_int64(point.stmt, 3, t);
      while (point.step()) add(sample, point.stmt);
    }
  }
  samples_ = samples;
  samples_time_ = t;
  return samples;
}

std::vector<NodeRow> RunView::nodes(std::int64_t at_s, bool with_gpu_use) const {
  std::vector<NodeRow> rows;
  rows.reserve(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    NodeRow r;
    r.index = static_cast<std::int32_t>(n);
    r.name = nodes_[n].name;
    r.state = node_state_at(n, at_s);
    r.group = std::string(node_state_group(r.state));
    r.cpus = nodes_[n].cpus;
    r.gpus = nodes_[n].gpus;
    r.memory_mb = nodes_[n].memory_mb;
    r.gpu_type = nodes_[n].gpu_type;
    rows.push_back(std::move(r));
  }
  if (!with_gpu_use) return rows;
  set_gpu_use(rows, gpu_samples(at_s), fb_totals());
  return rows;
}

std::vector<double> RunView::fb_totals() const {
  std::vector<double> totals;
  totals.reserve(nodes_.size());
  for (const NodeInfo& n : nodes_) totals.push_back(n.fb_total_mib);
  return totals;
}

std::vector<PartitionRow> RunView::partitions(std::int64_t at_s) const {
  std::vector<PartitionRow> rows;
  std::lock_guard lock(db_mutex_);
  if (!db_->has_table("partitions")) return rows;
  db_->query("SELECT name, nodes, is_default, default_time, max_time, state, total_nodes FROM partitions", {},
             [&](sqlite3_stmt* q) {
               PartitionRow p;
               p.name = column_text(q, 0);
               p.nodes = column_text(q, 1);
               p.is_default = sqlite3_column_int64(q, 2) != 0;
               p.default_time_s = column_int(q, 3, -1);
               p.max_time_s = column_int(q, 4, -1);
               p.state = column_text(q, 5);
               p.total_nodes = static_cast<std::int32_t>(column_int(q, 6, 0));
               rows.push_back(std::move(p));
             });
  // Members from the hostlist; availability and GPUs from the nodes.
  if (rows.empty()) return rows;
  const std::vector<NodeRow> nodes = this->nodes(at_s, false);
  for (PartitionRow& p : rows) {
    std::vector<std::string> names;
    try {
      names = expand_hostlist(p.nodes);
    } catch (const std::exception&) {
      names.clear();
    }
    std::vector<std::int32_t> members;
    for (const std::string& name : names) {
      const auto it = node_by_name_.find(name);
      if (it != node_by_name_.end()) members.push_back(it->second);
    }
    set_partition_nodes(p, members, nodes);
  }
  return rows;
}

Overview RunView::overview(std::int64_t at_s) const {
  Overview o;
  o.at_s = at_s;
  o.total_gpus = static_cast<std::int64_t>(info_.total_gpus);
  o.total_nodes = static_cast<std::int64_t>(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) count_node(o, node_state_at(n, at_s));
  for (const Job& j : table_->rows()) {
    count_job(o, job_phase_at(j.submit, j.start, j.end, at_s), table_->text(j.final_state), j.gpus);
  }
  set_gpu_use(o, gpu_samples(at_s), fb_totals());
  return o;
}

namespace {
double cluster_gpu_util_pct(std::int64_t gpus_alloc, std::size_t total_gpus) {
  return total_gpus > 0 ? 100.0 * static_cast<double>(gpus_alloc) / static_cast<double>(total_gpus) : -1;
}
}  // namespace

ClusterPoint cluster_point(const ClusterSample& sample, std::size_t total_gpus) {
  ClusterPoint p;
  p.time = sample.time_s;
  p.jobs_pending = static_cast<std::int64_t>(sample.jobs_pending);
  p.jobs_running = static_cast<std::int64_t>(sample.jobs_running);
  p.gpus_alloc = static_cast<std::int64_t>(sample.gpus_alloc);
  p.nodes_down = sample.nodes_down;
  p.nodes_drain = sample.nodes_drain;
  p.gpu_power_w = sample.gpu_power_w;
  p.gpu_util_pct = cluster_gpu_util_pct(p.gpus_alloc, total_gpus);
  return p;
}

std::vector<ClusterPoint> cluster_points(std::span<const std::int64_t> times, std::span<const ClusterPoint> rows,
                                         std::int64_t step_s, std::int64_t from_s, std::int64_t to_s,
                                         std::int64_t end_s, std::size_t max_points) {
  std::vector<ClusterPoint> points;
  if (step_s <= 0 || to_s < from_s || max_points == 0) return points;
  const auto [first, stride] = thinning(from_s, to_s, step_s, max_points);
  expand_cluster_samples(times, step_s, first * step_s, std::min(to_s, end_s), stride,
                         [&](std::int64_t t, std::size_t i) {
                           ClusterPoint& p = points.emplace_back(rows[i]);
                           p.time = t;
                         });
  return points;
}

std::vector<ClusterPoint> RunView::cluster_series(std::int64_t from_s, std::int64_t to_s,
                                                  std::size_t max_points) const {
  if (info_.cluster_step_s <= 0 || to_s < from_s || max_points == 0) return {};
  const std::int64_t step = info_.cluster_step_s;
  const std::int64_t first = thinning(from_s, to_s, step, max_points).first;
  // The stored rows are the samples after a change (schema 2): read from the last one at or before the first point.
  std::vector<std::int64_t> times;
  std::vector<ClusterPoint> rows;
  {
    std::lock_guard lock(db_mutex_);
    db_->query(
        "SELECT time, jobs_pending, jobs_running, gpus_alloc, nodes_down, nodes_drain, gpu_power_w FROM "
        "cluster_metrics "
        "WHERE time >= IFNULL((SELECT max(time) FROM cluster_metrics WHERE time <= ?1), 0) AND time <= ?2 "
        "ORDER BY time",
        {first * step, to_s}, [&](sqlite3_stmt* q) {
          ClusterPoint p;
          p.time = sqlite3_column_int64(q, 0);
          p.jobs_pending = sqlite3_column_int64(q, 1);
          p.jobs_running = sqlite3_column_int64(q, 2);
          p.gpus_alloc = sqlite3_column_int64(q, 3);
          p.nodes_down = sqlite3_column_int64(q, 4);
          p.nodes_drain = sqlite3_column_int64(q, 5);
          p.gpu_power_w = sqlite3_column_double(q, 6);
          p.gpu_util_pct = cluster_gpu_util_pct(p.gpus_alloc, info_.total_gpus);
          times.push_back(p.time);
          rows.push_back(p);
        });
  }
  return cluster_points(times, rows, step, from_s, to_s, info_.end_s, max_points);
}

std::vector<GpuPoint> gpu_series_of(const GpuSampleReader& read, std::int64_t step_s, std::size_t nodes,
                                    std::int32_t node, std::int64_t from_s, std::int64_t to_s, std::size_t max_points) {
  std::vector<GpuPoint> points;
  if (step_s <= 0 || node < 0 || static_cast<std::size_t>(node) >= nodes || to_s < from_s || max_points == 0) {
    return points;
  }
  const auto [first, stride] = thinning(from_s, to_s, step_s, max_points);
  read(node, step_s, first, stride, to_s, [&](const GpuPoint& p) { points.push_back(p); });
  return points;
}

NodeUtilSeries node_util_series_of(const GpuSampleReader& read, std::int64_t step_s, std::size_t nodes,
                                   std::int64_t end_s, std::int64_t from_s, std::int64_t to_s, std::size_t max_points,
                                   std::size_t max_lines) {
  NodeUtilSeries out;
  to_s = std::min(to_s, end_s);
  if (step_s <= 0 || to_s < from_s || max_points == 0) return out;
  const std::int64_t step = step_s;
  // Plain names, not a structured binding: the lambda below uses them, which clang 14 (the sanitizer build) refuses.
  const auto thinned = thinning(from_s, to_s, step, max_points);
  const std::int64_t first = thinned.first;
  const std::int64_t stride = thinned.stride;
  for (std::int64_t k = first; k * step <= to_s; k += stride) out.time.push_back(k * step);
  const std::size_t n = out.time.size();
  if (n == 0) return out;
  out.min.assign(n, -1);
  out.mean.assign(n, 0);
  out.max.assign(n, -1);
  out.sampled.assign(n, 0);
  // Per node: its GPUs' sum and count at each time, then its line; the busiest `max_lines` kept (a min-heap on
  // mean, so memory is max_lines lines whatever the node count).
  std::vector<double> sum(n);
  std::vector<std::int32_t> count(n);
  // a before b: busier (ties: the lower node). As a heap's order, its front is the quietest line kept.
  const auto busier = [](const NodeUtilSeries::Line& a, const NodeUtilSeries::Line& b) {
    return a.mean_pct != b.mean_pct ? a.mean_pct > b.mean_pct : a.node < b.node;
  };
  std::vector<NodeUtilSeries::Line> kept;
  for (std::size_t node = 0; node < nodes; ++node) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    bool any = false;
    read(static_cast<std::int32_t>(node), step, first, stride, to_s, [&](const GpuPoint& p) {
      if (p.time % step != 0) return;
      const auto i = static_cast<std::size_t>((p.time / step - first) / stride);
      if (i >= n) return;
      sum[i] += p.util_pct;
      ++count[i];
      any = true;
    });
    if (!any) continue;
    ++out.nodes_sampled;
    NodeUtilSeries::Line line;
    line.node = static_cast<std::int32_t>(node);
    line.util_pct.assign(n, -1);
    double total = 0;
    std::size_t points = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (count[i] == 0) continue;
      const double v = sum[i] / count[i];
      line.util_pct[i] = v;
      total += v;
      ++points;
      out.min[i] = out.sampled[i] == 0 ? v : std::min(out.min[i], v);
      out.max[i] = std::max(out.max[i], v);
      out.mean[i] += v;
      ++out.sampled[i];
    }
    line.mean_pct = total / static_cast<double>(points);
    if (max_lines == 0) continue;
    if (kept.size() < max_lines) {
      kept.push_back(std::move(line));
      std::push_heap(kept.begin(), kept.end(), busier);
    } else if (busier(line, kept.front())) {
      std::pop_heap(kept.begin(), kept.end(), busier);
      kept.back() = std::move(line);
      std::push_heap(kept.begin(), kept.end(), busier);
    }
  }
  for (std::size_t i = 0; i < n; ++i) out.mean[i] = out.sampled[i] > 0 ? out.mean[i] / out.sampled[i] : -1;
  out.all_nodes = out.nodes_sampled <= max_lines;
  if (out.all_nodes) {
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  } else {
    std::sort(kept.begin(), kept.end(), busier);
  }
  out.lines = std::move(kept);
  return out;
}

void RunView::read_gpu_samples(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride,
                               std::int64_t to_s, const std::function<void(const GpuPoint&)>& sink) const {
  db_->query(
      "SELECT gpu, time, util_pct, fb_used_mib, power_w, temp_c, xid, job_id FROM gpu_metrics WHERE node_index = ? "
      "AND gpu >= 0 AND time >= ? AND time <= ? AND ((time / ?) - ?) % ? = 0 ORDER BY gpu, time",
      {node, first * step, to_s, step, first, stride}, [&](sqlite3_stmt* q) {
        GpuPoint p;
        p.gpu = static_cast<std::int32_t>(sqlite3_column_int64(q, 0));
        p.time = sqlite3_column_int64(q, 1);
        p.util_pct = sqlite3_column_double(q, 2);
        p.fb_used_mib = sqlite3_column_double(q, 3);
        p.power_w = sqlite3_column_double(q, 4);
        p.temp_c = sqlite3_column_double(q, 5);
        p.xid = static_cast<std::int32_t>(sqlite3_column_int64(q, 6));
        p.job_id = column_int(q, 7, -1);
        sink(p);
      });
}

void RunView::read_gpu_utils(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride,
                             std::int64_t to_s, const std::function<void(const GpuPoint&)>& sink) const {
  GpuPoint p;
  db_->query(
      "SELECT time, util_pct FROM gpu_metrics WHERE node_index = ? AND gpu >= 0 AND time >= ? AND time <= ? AND "
      "((time / ?) - ?) % ? = 0",
      {node, first * step, to_s, step, first, stride}, [&](sqlite3_stmt* q) {
        p.time = sqlite3_column_int64(q, 0);
        p.util_pct = sqlite3_column_double(q, 1);
        sink(p);
      });
}

std::vector<GpuPoint> RunView::gpu_series(std::int32_t node, std::int64_t from_s, std::int64_t to_s,
                                          std::size_t max_points) const {
  std::lock_guard lock(db_mutex_);
  return gpu_series_of([this](auto... args) { read_gpu_samples(args...); }, info_.gpu_step_s, nodes_.size(), node,
                       from_s, to_s, max_points);
}

NodeUtilSeries RunView::node_util_series(std::int64_t from_s, std::int64_t to_s, std::size_t max_points,
                                         std::size_t max_lines) const {
  std::lock_guard lock(db_mutex_);
  return node_util_series_of([this](auto... args) { read_gpu_utils(args...); }, info_.gpu_step_s, nodes_.size(),
                             info_.end_s, from_s, to_s, max_points, max_lines);
}

std::string scaling_event_text(std::string_view action, std::int64_t demand) {
  std::string t(action);
  if (demand >= 0) t += " (demand " + std::to_string(demand) + " node(s))";
  return t;
}

std::string quota_event_text(std::string_view action, std::int64_t job_id, double spend_usd, double projected_usd) {
  std::string t(action);
  if (job_id > 0) t += " job " + std::to_string(job_id);
  return t + fmt::format(": spend {:.2f} USD, projected {:.2f} USD", spend_usd, projected_usd);
}

std::string operation_event_text(std::string_view action, std::string_view name, std::string_view step,
                                 std::int64_t jobs_killed) {
  std::string t(action);
  if (!name.empty()) t += " " + std::string(name);
  t += ": " + std::string(step);
  if (jobs_killed > 0) t += ", " + std::to_string(jobs_killed) + " job run(s) ended";
  return t;
}

std::string preemption_event_text(std::int64_t preemptor_id, std::string_view mode, std::int64_t end_s) {
  return "preempted by " + std::to_string(preemptor_id) + " (" + std::string(mode) + "), ends at " +
         std::to_string(end_s);
}

JobEventOrders job_event_orders(const JobTable& table) {
  using Job = JobTable::Job;
  const auto sorted = [&](auto key) {
    std::vector<std::uint32_t> v;
    for (std::uint32_t i = 0; i < table.rows().size(); ++i) {
      if (key(table.rows()[i]) >= 0) v.push_back(i);
    }
    std::stable_sort(v.begin(), v.end(), [&](auto a, auto b) { return key(table.rows()[a]) < key(table.rows()[b]); });
    return v;
  };
  return JobEventOrders{sorted([](const Job& j) { return j.submit; }), sorted([](const Job& j) { return j.start; }),
                        sorted([](const Job& j) { return j.end; })};
}

void append_job_events(const JobTable& table, const JobEventOrders& orders, std::int64_t at_s, std::size_t limit,
                       std::vector<EventLine>& out) {
  using Job = JobTable::Job;
  const auto take = [&](const std::vector<std::uint32_t>& order, auto key, auto describe) {
    const auto it = std::upper_bound(order.begin(), order.end(), at_s,
                                     [&](std::int64_t t, std::uint32_t i) { return t < key(table.rows()[i]); });
    const std::size_t n = static_cast<std::size_t>(it - order.begin());
    for (std::size_t k = n > limit ? n - limit : 0; k < n; ++k) {
      const Job& j = table.rows()[order[k]];
      out.push_back(EventLine{key(j), "job", std::to_string(j.job_id), describe(j)});
    }
  };
  take(
      orders.by_submit, [](const Job& j) { return j.submit; },
      [&](const Job& j) {
        return "submitted: " + std::string(table.name(j)) + " by " + std::string(table.text(j.user)) + ", " +
               std::to_string(j.gpus) + " GPUs on " + std::to_string(j.nodes) + " node(s), partition " +
               std::string(table.text(j.partition));
      });
  take(
      orders.by_start, [](const Job& j) { return j.start; },
      [&](const Job& j) {
        return "started on " + std::string(table.node_list(j)) + " after waiting " +
               std::to_string(j.start - j.submit) + " s";
      });
  take(
      orders.by_end, [](const Job& j) { return j.end; },
      [&](const Job& j) {
        std::string s = "ended " + std::string(table.text(j.final_state));
        if (j.start >= 0) s += " after running " + std::to_string(j.end - j.start) + " s";
        if (!table.text(j.reason).empty()) s += " (" + std::string(table.text(j.reason)) + ")";
        return s;
      });
}

std::vector<EventLine> RunView::events(std::int64_t at_s, std::size_t limit, std::string_view kind) const {
  std::vector<EventLine> out;
  limit = std::min<std::size_t>(limit, 100000);
  if (limit == 0) return out;
  const bool all = kind.empty();
  if (all || kind == "job") {
    {
      std::lock_guard lock(cache_mutex_);
      if (!job_orders_) job_orders_ = job_event_orders(*table_);
    }
    append_job_events(*table_, *job_orders_, at_s, limit, out);
  }
  std::lock_guard lock(db_mutex_);
  if (all || kind == "node") {
    const auto before = out.size();
    // Newest first: a row of node_count nodes gives its changes last node first, until `limit` are taken.
    // In time order, the rows up to at_s are those up to the last rowid whose time is at most at_s (the writer then
    // builds no time index).
    std::string sql = std::string("SELECT time, node_index, state, ") + (node_event_ranges_ ? "node_count" : "1");
    std::int64_t bound = at_s;
    if (node_event_rows_in_time_order_) {
      std::int64_t lo = 0, hi = node_event_rows_;  // rows 1..lo are at most at_s, rows past hi later
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        std::int64_t time = 0;
        db_->query("SELECT time FROM node_events WHERE rowid = ?", {mid},
                   [&](sqlite3_stmt* q) { time = sqlite3_column_int64(q, 0); });
        if (time <= at_s)
          lo = mid;
        else
          hi = mid - 1;
      }
      bound = lo;
      sql += " FROM node_events WHERE rowid <= ? ORDER BY rowid DESC LIMIT ?";
    } else {
      sql += " FROM node_events WHERE time <= ? ORDER BY time DESC, rowid DESC LIMIT ?";
    }
    db_->query(sql.c_str(), {bound, static_cast<std::int64_t>(limit)}, [&](sqlite3_stmt* q) {
      const auto [lo, hi] = node_range(sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 3), nodes_.size());
      const std::string what = "now " + column_text(q, 2);
      for (std::int64_t node = hi - 1; node >= lo && out.size() - before < limit; --node)
        out.push_back(EventLine{sqlite3_column_int64(q, 0), "node", nodes_[static_cast<std::size_t>(node)].name, what});
    });
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  }
  if ((all || kind == "fault") && db_->has_column("faults", "time")) {
    const auto before = out.size();
    db_->query(
        "SELECT CAST(time AS INTEGER), class, IFNULL(cause, ''), IFNULL(xid, 0), IFNULL(node, ''), IFNULL(gpu, -1), "
        "effect, symptom FROM faults WHERE time <= ? ORDER BY time DESC LIMIT ?",
        {at_s, static_cast<std::int64_t>(limit)}, [&](sqlite3_stmt* q) {
          std::string t = column_text(q, 1);
          if (sqlite3_column_int64(q, 3) != 0) t += " XID " + std::to_string(sqlite3_column_int64(q, 3));
          if (sqlite3_column_int64(q, 5) >= 0) t += " on GPU " + std::to_string(sqlite3_column_int64(q, 5));
          if (!column_text(q, 2).empty()) t += " (" + column_text(q, 2) + ")";
          t += ": " + column_text(q, 7) + ", " + column_text(q, 6);
          out.push_back(EventLine{sqlite3_column_int64(q, 0), "fault", column_text(q, 4), t});
        });
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  }
  if ((all || kind == "action") && db_->has_column("actions", "controller")) {
    const auto before = out.size();
    db_->query(
        "SELECT time, controller, action, target, IFNULL(reason, ''), outcome FROM actions WHERE time <= ? "
        "ORDER BY time DESC LIMIT ?",
        {at_s, static_cast<std::int64_t>(limit)}, [&](sqlite3_stmt* q) {
          std::string t = column_text(q, 1) + ": " + column_text(q, 2);
          if (!column_text(q, 4).empty()) t += " (" + column_text(q, 4) + ")";
          t += " -> " + column_text(q, 5);
          out.push_back(EventLine{sqlite3_column_int64(q, 0), "action", column_text(q, 3), t});
        });
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  }
  // The controllers' records: the last `limit` rows of `sql` (newest first) at or before `at_s`, each a line.
  const auto records = [&](const char* table, const char* sql, auto line) {
    if (!db_->has_column(table, "time")) return;
    const auto before = out.size();
    db_->query(sql, {at_s, static_cast<std::int64_t>(limit)}, [&](sqlite3_stmt* q) { out.push_back(line(q)); });
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  };
  if (all || kind == "preemption") {
    records("preemptions",
            "SELECT time, job_id, preemptor_id, end_time, mode FROM preemptions WHERE time <= ? "
            "ORDER BY time DESC, rowid DESC LIMIT ?",
            [](sqlite3_stmt* q) {
              return EventLine{
                  sqlite3_column_int64(q, 0), "preemption", std::to_string(sqlite3_column_int64(q, 1)),
                  preemption_event_text(sqlite3_column_int64(q, 2), column_text(q, 4), sqlite3_column_int64(q, 3))};
            });
  }
  if (all || kind == "scaling") {
    records("scaling",
            "SELECT CAST(time AS INTEGER), node, action, demand FROM scaling WHERE time <= ? "
            "ORDER BY time DESC, rowid DESC LIMIT ?",
            [](sqlite3_stmt* q) {
              const std::int64_t demand = sqlite3_column_type(q, 3) != SQLITE_NULL ? sqlite3_column_int64(q, 3) : -1;
              return EventLine{sqlite3_column_int64(q, 0), "scaling", column_text(q, 1),
                               scaling_event_text(column_text(q, 2), demand)};
            });
  }
  if (all || kind == "quota") {
    records("quota_events",
            "SELECT CAST(time AS INTEGER), user, action, job_id, spend_usd, projected_usd FROM quota_events "
            "WHERE time <= ? ORDER BY time DESC, rowid DESC LIMIT ?",
            [](sqlite3_stmt* q) {
              const std::int64_t job = sqlite3_column_type(q, 3) != SQLITE_NULL ? sqlite3_column_int64(q, 3) : 0;
              return EventLine{
                  sqlite3_column_int64(q, 0), "quota", column_text(q, 1),
                  quota_event_text(column_text(q, 2), job, sqlite3_column_double(q, 4), sqlite3_column_double(q, 5))};
            });
  }
  if (all || kind == "operation") {
    records("operations",
            "SELECT CAST(time AS INTEGER), action, step, IFNULL(node, ''), IFNULL(name, ''), jobs_killed "
            "FROM operations WHERE time <= ? ORDER BY time DESC, rowid DESC LIMIT ?",
            [](sqlite3_stmt* q) {
              const std::string node = column_text(q, 3);
              return EventLine{sqlite3_column_int64(q, 0), "operation", node.empty() ? "cluster" : node,
                               operation_event_text(column_text(q, 1), column_text(q, 4), column_text(q, 2),
                                                    sqlite3_column_int64(q, 5))};
            });
  }
  std::stable_sort(out.begin(), out.end(), [](const EventLine& a, const EventLine& b) { return a.time < b.time; });
  if (out.size() > limit) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(limit));
  return out;
}

// The Gantt view: jobs on nodes over a window, at a level of detail that keeps the answer within the canvas.
GanttView RunView::gantt(const GanttQuery& query) const {
  {
    std::lock_guard lock(cache_mutex_);
    if (!gantt_) gantt_.emplace(*table_, node_by_name_, nodes_.size(), info_.end_s);
  }
  return gantt_->view(query);
}

WaitDistribution RunView::waits(std::int64_t at_s, std::size_t points) const {
  return wait_distribution(*table_, at_s, points);
}

WaitDistribution wait_distribution(const JobTable& table, std::int64_t at_s, std::size_t points) {
  WaitDistribution d;
  std::vector<std::int64_t> waits;
  for (const JobTable::Job& j : table.rows()) {
    if (j.start >= 0 && j.start <= at_s) waits.push_back(j.start - j.submit);
  }
  if (waits.empty()) return d;
  std::sort(waits.begin(), waits.end());
  const std::size_t n = waits.size();
  d.jobs = n;
  double sum = 0;
  for (const std::int64_t w : waits) sum += static_cast<double>(w);
  d.mean_s = sum / static_cast<double>(n);
  // Nearest rank: the smallest wait at least q of the jobs did not exceed.
  const auto rank = [&](double q) { return waits[std::min(n - 1, static_cast<std::size_t>(std::ceil(q * n)) - 1)]; };
  d.p50_s = rank(0.50);
  d.p90_s = rank(0.90);
  d.p95_s = rank(0.95);
  d.p99_s = rank(0.99);
  d.max_s = waits.back();
  const std::size_t m = std::max<std::size_t>(1, std::min(points, n));
  for (std::size_t k = 1; k <= m; ++k) {
    const std::size_t idx = (k * n + m - 1) / m - 1;  // the last job of the k-th of m equal shares
    d.cdf.emplace_back(waits[idx], static_cast<double>(idx + 1) / static_cast<double>(n));
  }
  return d;
}

void RunView::load_costs() const {
  costs_loaded_ = true;
  if (!db_->has_table("costs")) return;
  std::vector<CostRow> rows;
  std::lock_guard lock(db_mutex_);
  db_->query("SELECT scope, time, burn_usd_per_h, total_usd FROM costs ORDER BY rowid", {}, [&](sqlite3_stmt* q) {
    const auto* scope = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    rows.push_back({scope == nullptr ? "" : scope, sqlite3_column_double(q, 1), sqlite3_column_double(q, 2),
                    sqlite3_column_double(q, 3)});
  });
  costs_ = CostSeries(std::move(rows));
}

const CostSeries& RunView::costs() const {
  std::lock_guard lock(cache_mutex_);
  if (!costs_loaded_) load_costs();
  return costs_;
}

}  // namespace gputwin
