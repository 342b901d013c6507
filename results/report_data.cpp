#include "results/report_data.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>

#include "faults/checkpoint.hpp"
#include "model/errors.hpp"
#include "results/gpu_metrics.hpp"
#include "results/results_db.hpp"
#include "results/summary.hpp"

namespace gputwin {
namespace {

constexpr double kDayS = 86400;
constexpr std::size_t kMaxBuckets = 100000;  // a --step this fine is a mistake, not a report

/// Index of the bucket holding time `t` (times before 0 go to the first).
std::size_t bucket_of(double t, double step) {
  return t > 0 ? static_cast<std::size_t>(std::floor(t / step)) : 0;
}

double column_real(sqlite3_stmt* row, int i) {
  return sqlite3_column_double(row, i);
}
bool column_null(sqlite3_stmt* row, int i) {
  return sqlite3_column_type(row, i) == SQLITE_NULL;
}

/// Mean of `values`; 0 when empty.
double mean(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

/// Groups sorted most faults first, then by key.
std::vector<FaultGroup> sorted_groups(const std::map<std::string, FaultGroup>& groups) {
  std::vector<FaultGroup> out;
  for (const auto& [key, g] : groups) out.push_back(g);
  std::stable_sort(out.begin(), out.end(),
                   [](const FaultGroup& a, const FaultGroup& b) { return a.faults > b.faults; });
  return out;
}

DetectionDelay delay_stats(std::string name, std::size_t faults, std::vector<double> delays) {
  std::sort(delays.begin(), delays.end());
  DetectionDelay d{std::move(name), faults, delays.size()};
  d.mean_s = mean(delays);
  d.p50_s = nearest_rank_percentile(delays, 50);
  d.p95_s = nearest_rank_percentile(delays, 95);
  return d;
}

/// Number of whole days covering [0, horizon] and every time in `times`.
std::size_t day_count(double horizon_s, const std::vector<double>& times) {
  std::size_t days = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(horizon_s / kDayS)));
  for (const double t : times) days = std::max(days, bucket_of(t, kDayS) + 1);
  return days;
}

std::vector<std::pair<std::string, double>> largest_first(const std::map<std::string, std::pair<double, double>>& m) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [scope, last] : m) out.emplace_back(scope, last.second);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

struct FaultRow {
  double time;
  std::string cls, effect, detected_by;
  std::optional<std::int64_t> xid;
  std::optional<double> detected_time;
  std::int64_t jobs_hit;
  double lost_gpu_hours;
};

FaultsReport summarise_faults(const std::vector<FaultRow>& rows, double horizon_s) {
  FaultsReport f;
  f.faults = rows.size();
  static constexpr std::array<std::string_view, 5> kEffectOrder{"restart_app", "reset_gpu", "reboot_node",
                                                                "repair_node", "none"};
  std::vector<std::string> others;
  for (const FaultRow& r : rows) {
    const bool known = std::find(kEffectOrder.begin(), kEffectOrder.end(), r.effect) != kEffectOrder.end();
    if (!known && std::find(others.begin(), others.end(), r.effect) == others.end()) others.push_back(r.effect);
  }
  std::sort(others.begin(), others.end());
  for (const std::string_view e : kEffectOrder) {
    if (std::any_of(rows.begin(), rows.end(), [&](const FaultRow& r) { return r.effect == e; })) {
      f.effects.emplace_back(e);
    }
  }
  f.effects.insert(f.effects.end(), others.begin(), others.end());

  std::vector<double> times;
  for (const FaultRow& r : rows) times.push_back(r.time);
  f.per_day.assign(f.effects.size(), std::vector<double>(day_count(horizon_s, times), 0));
  std::map<std::string, FaultGroup> by_class, by_xid;
  std::map<std::string, std::pair<std::size_t, std::vector<double>>> by_detector;
  std::vector<double> all_delays;
  for (const FaultRow& r : rows) {
    const auto e =
        static_cast<std::size_t>(std::find(f.effects.begin(), f.effects.end(), r.effect) - f.effects.begin());
    f.per_day[e][bucket_of(r.time, kDayS)] += 1;
    f.lost_gpu_hours += r.lost_gpu_hours;
    const std::string xid = r.xid && *r.xid != 0 ? std::to_string(*r.xid) : "none";
    for (auto* g : {&by_class[r.cls], &by_xid[xid]}) {
      g->faults += 1;
      g->jobs_hit += r.jobs_hit;
      g->lost_gpu_hours += r.lost_gpu_hours;
    }
    by_class[r.cls].key = r.cls;
    by_xid[xid].key = xid;
    auto& [count, delays] = by_detector[r.detected_by.empty() ? "(none)" : r.detected_by];
    count += 1;
    if (r.detected_time) {
      delays.push_back(*r.detected_time - r.time);
      all_delays.push_back(*r.detected_time - r.time);
    }
  }
  f.by_class = sorted_groups(by_class);
  f.by_xid = sorted_groups(by_xid);
  for (auto& [name, d] : by_detector) f.detection.push_back(delay_stats(name, d.first, std::move(d.second)));
  f.detection.push_back(delay_stats("all", rows.size(), std::move(all_delays)));
  return f;
}

struct InterruptionRow {
  double time;
  std::int64_t job_id;
  double run_s, lost_gpu_hours;
  bool requeued;
  std::string cause;
};

/// jobs.gpus and the sum of jobs.run_time of one job id.
struct JobSize {
  std::int64_t gpus = 0;
  double run_s = 0;
};

InterruptionsReport summarise_interruptions(const std::vector<InterruptionRow>& all_rows,
                                            const std::map<std::int64_t, JobSize>& jobs, double horizon_s) {
  InterruptionsReport r;
  std::vector<InterruptionRow> faults;
  for (const InterruptionRow& row : all_rows) {
    if (row.cause == "fault") {
      faults.push_back(row);
    } else {
      ++r.other_causes[row.cause];
      r.other_lost_gpu_hours += row.lost_gpu_hours;
    }
  }
  const std::vector<InterruptionRow>& rows = faults;
  r.interruptions = rows.size();
  std::vector<double> times;
  for (const InterruptionRow& i : rows) times.push_back(i.time);
  r.per_day.assign(day_count(horizon_s, times), 0);
  // The four GPU-count buckets, then jobs without GPUs and interruptions of jobs the jobs table lacks.
  for (const char* label : {"1-8", "9-64", "65-512", "513+", "no GPU", "job not in jobs"}) {
    r.by_size.emplace_back().label = label;
  }
  const auto bucket = [](std::int64_t gpus) -> std::size_t {
    if (gpus <= 0) return 4;
    return gpus <= 8 ? 0 : gpus <= 64 ? 1 : gpus <= 512 ? 2 : 3;
  };
  for (const auto& [id, job] : jobs) {
    SizeBucket& b = r.by_size[bucket(job.gpus)];
    b.jobs += 1;
    b.run_s += job.run_s;
  }
  for (const InterruptionRow& i : rows) {
    r.per_day[bucket_of(i.time, kDayS)] += 1;
    r.requeued += i.requeued ? 1 : 0;
    r.lost_gpu_hours += i.lost_gpu_hours;
    const auto job = jobs.find(i.job_id);
    SizeBucket& b = r.by_size[job == jobs.end() ? 5 : bucket(job->second.gpus)];
    b.interruptions += 1;
    b.run_s += i.run_s;
  }
  for (SizeBucket& b : r.by_size) {
    if (b.interruptions > 0) b.mttf_h = b.run_s / static_cast<double>(b.interruptions) / 3600;
  }
  // The extra buckets only when something fell into them.
  std::vector<SizeBucket> shown(r.by_size.begin(), r.by_size.begin() + 4);
  for (std::size_t k = 4; k < r.by_size.size(); ++k) {
    if (r.by_size[k].interruptions > 0) shown.push_back(r.by_size[k]);
  }
  r.by_size = std::move(shown);
  return r;
}

/// A column of cluster_metrics and the ClusterBucket field its bucket mean goes to.
struct ClusterColumn {
  std::string_view name;
  double ClusterBucket::*field;
  bool since_cloud;  // absent from files written before the cloud tables: read as 0
};

constexpr ClusterColumn kClusterColumns[] = {
    {"nodes_idle", &ClusterBucket::nodes_idle, false},
    {"nodes_mixed", &ClusterBucket::nodes_mixed, false},
    {"nodes_alloc", &ClusterBucket::nodes_alloc, false},
    {"nodes_down", &ClusterBucket::nodes_down, false},
    {"nodes_drain", &ClusterBucket::nodes_drain, false},
    {"jobs_pending", &ClusterBucket::jobs_pending, false},
    {"jobs_running", &ClusterBucket::jobs_running, false},
    {"gpus_alloc", &ClusterBucket::gpus_alloc, false},
    {"gpus_free", &ClusterBucket::gpus_free, false},
    {"gpus_free_fragmented", &ClusterBucket::gpus_free_fragmented, false},
    {"nodes_powered_down", &ClusterBucket::nodes_powered_down, true},
};

/// The rows of cluster_metrics in time order, each as a ClusterBucket whose start_s is the sample's time.
std::vector<ClusterBucket> read_cluster_samples(ResultsDb& db, double& horizon_s) {
  std::vector<ClusterBucket> samples;
  if (!db.has_table("cluster_metrics")) return samples;
  std::vector<std::string_view> required{"time"};
  std::string sql = "SELECT time";
  for (const ClusterColumn& c : kClusterColumns) {
    if (!c.since_cloud) required.push_back(c.name);
    const bool present = !c.since_cloud || db.has_column("cluster_metrics", c.name);
    sql += present ? ", " + std::string(c.name) : std::string(", 0");
  }
  db.require_columns("cluster_metrics", required);
  std::vector<ClusterBucket> rows;
  std::vector<std::int64_t> times;
  db.query((sql + " FROM cluster_metrics ORDER BY time").c_str(), {}, [&](sqlite3_stmt* row) {
    ClusterBucket& s = rows.emplace_back();
    times.push_back(sqlite3_column_int64(row, 0));
    s.start_s = column_real(row, 0);
    int i = 1;
    for (const ClusterColumn& c : kClusterColumns) s.*c.field = column_real(row, i++);
    horizon_s = std::max(horizon_s, s.start_s);
  });
  // The rows are the samples after a change (schema 2): every sample repeats the last row at or before it.
  std::int64_t step = 0, end = -1;
  if (db.has_table("metrics_info")) {
    db.query("SELECT key, value FROM metrics_info WHERE key IN ('cluster_step_s', 'horizon_s')", {},
             [&](sqlite3_stmt* row) {
               (column_text(row, 0) == "horizon_s" ? end : step) = std::llround(column_real(row, 1));
             });
  }
  if (step <= 0 || end < 0) return rows;
  if (static_cast<std::uint64_t>(end / step) >= kMaxClusterSamples)
    throw InputError(db.path(), "table metrics_info", "horizon_s / cluster_step_s is more samples than gputwin writes");
  expand_cluster_samples(times, step, 0, end, 1, [&](std::int64_t t, std::size_t i) {
    ClusterBucket& s = samples.emplace_back(rows[i]);
    s.start_s = static_cast<double>(t);
    horizon_s = std::max(horizon_s, s.start_s);
  });
  return samples;
}

/// The mean of each bucket's samples (samples in time order); buckets without samples are left out.
std::vector<ClusterBucket> cluster_buckets(const std::vector<ClusterBucket>& samples, double step) {
  std::vector<ClusterBucket> out;
  for (std::size_t i = 0; i < samples.size();) {
    const std::size_t b = bucket_of(samples[i].start_s, step);
    ClusterBucket sum;
    std::size_t n = 0;
    for (; i < samples.size() && bucket_of(samples[i].start_s, step) == b; ++i, ++n) {
      for (const ClusterColumn& c : kClusterColumns) sum.*c.field += samples[i].*c.field;
    }
    for (const ClusterColumn& c : kClusterColumns) sum.*c.field /= static_cast<double>(n);
    sum.start_s = static_cast<double>(b) * step;
    out.push_back(sum);
  }
  return out;
}

std::optional<double> column_optional(sqlite3_stmt* row, int i) {
  return column_null(row, i) ? std::nullopt : std::optional<double>(column_real(row, i));
}

/// The expected goodput of a plan under Daly's model with blocking writes; none without an MTTF or interval.
std::optional<double> expected_goodput(std::optional<double> interval_s, const CheckpointGroup& g) {
  if (!interval_s || !g.mttf_h || !(*interval_s > 0) || !(*g.mttf_h > 0)) return std::nullopt;
  return goodput_daly(CheckpointPlan{*interval_s, g.write_s, g.restart_s, g.blocking}, *g.mttf_h * 3600);
}

/// The job_checkpoints table: jobs with equal plans grouped, most GPUs first.
CheckpointsReport read_checkpoints(ResultsDb& db) {
  db.require_columns("job_checkpoints",
                     {"job_id", "gpus", "interval_s", "write_s", "restart_s", "mttf_h", "young_s", "daly_s"});
  CheckpointsReport r;
  using Key = std::tuple<std::int64_t, std::optional<double>, double, double, std::optional<double>, bool>;
  // Files written before the blocking column: every write blocked.
  const bool has_blocking = db.has_column("job_checkpoints", "blocking");
  std::map<Key, CheckpointGroup> groups;
  const std::string sql =
      std::string("SELECT job_id, gpus, interval_s, write_s, restart_s, mttf_h, young_s, daly_s, ") +
      (has_blocking ? "blocking" : "1") + " FROM job_checkpoints ORDER BY job_id, rowid";
  db.query(sql.c_str(), {}, [&](sqlite3_stmt* row) {
    CheckpointGroup g;
    g.gpus = sqlite3_column_int64(row, 1);
    g.interval_s = column_optional(row, 2);
    g.write_s = column_real(row, 3);
    g.restart_s = column_real(row, 4);
    g.mttf_h = column_optional(row, 5);
    g.young_s = column_optional(row, 6);
    g.daly_s = column_optional(row, 7);
    g.blocking = sqlite3_column_int64(row, 8) != 0;
    const auto [it, added] =
        groups.try_emplace(Key{g.gpus, g.interval_s, g.write_s, g.restart_s, g.mttf_h, g.blocking}, g);
    it->second.job_ids.push_back(sqlite3_column_int64(row, 0));
    ++r.jobs;
  });
  for (auto& [key, g] : groups) {
    g.goodput = expected_goodput(g.interval_s, g);
    g.goodput_at_daly = expected_goodput(g.daly_s, g);
    r.groups.push_back(std::move(g));
  }
  std::sort(r.groups.begin(), r.groups.end(), [](const CheckpointGroup& a, const CheckpointGroup& b) {
    return a.gpus != b.gpus ? a.gpus > b.gpus : a.job_ids.front() < b.job_ids.front();
  });
  return r;
}

struct ScalingRow {
  double time;
  std::string node, action;
  std::int64_t demand;
};

std::vector<ScalingRow> read_scaling(ResultsDb& db, double& horizon_s) {
  db.require_columns("scaling", {"time", "node", "action", "demand"});
  std::vector<ScalingRow> rows;
  db.query("SELECT time, node, action, demand FROM scaling ORDER BY time, rowid", {}, [&](sqlite3_stmt* row) {
    rows.push_back({column_real(row, 0), column_text(row, 1), column_text(row, 2), sqlite3_column_int64(row, 3)});
    horizon_s = std::max(horizon_s, rows.back().time);
  });
  return rows;
}

/// Actions in the autoscaler's order (model/cloud_log.hpp), then the others by name.
std::vector<std::string> scaling_actions(const std::vector<ScalingRow>& rows) {
  static constexpr std::array<std::string_view, 6> kOrder{"create", "ready",   "boot_failed",
                                                          "remove", "removed", "reclaimed"};
  std::set<std::string> seen;
  for (const ScalingRow& r : rows) seen.insert(r.action);
  std::vector<std::string> out;
  for (const std::string_view a : kOrder) {
    if (seen.erase(std::string(a)) > 0) out.emplace_back(a);
  }
  out.insert(out.end(), seen.begin(), seen.end());
  return out;
}

ScalingReport summarise_scaling(const std::vector<ScalingRow>& rows, double step) {
  ScalingReport r;
  r.rows = rows.size();
  const std::size_t buckets = rows.empty() ? 0 : bucket_of(rows.back().time, step) + 1;
  std::vector<std::set<std::string>> nodes;
  for (std::string& a : scaling_actions(rows)) {
    r.actions.push_back({std::move(a), 0, 0, std::vector<double>(buckets, 0)});
    nodes.emplace_back();
  }
  r.created.assign(buckets, 0);
  r.demand_max.assign(buckets, NAN);
  for (const ScalingRow& row : rows) {
    const auto k =
        static_cast<std::size_t>(std::find_if(r.actions.begin(), r.actions.end(),
                                              [&](const ScalingAction& a) { return a.action == row.action; }) -
                                 r.actions.begin());
    const std::size_t b = bucket_of(row.time, step);
    r.actions[k].rows += 1;
    r.actions[k].per_bucket[b] += 1;
    nodes[k].insert(row.node);
    if (row.action == "create") r.created[b] += 1;
    if (row.action == "create" || row.action == "remove") {
      const auto demand = static_cast<double>(row.demand);
      r.demand_max[b] = std::isnan(r.demand_max[b]) ? demand : std::max(r.demand_max[b], demand);
    }
  }
  for (std::size_t k = 0; k < r.actions.size(); ++k) r.actions[k].nodes = nodes[k].size();
  std::partial_sum(r.created.begin(), r.created.end(), r.created.begin());
  return r;
}

QuotaReport read_quota(ResultsDb& db, double& horizon_s) {
  db.require_columns("quota_events", {"time", "user", "action", "job_id", "spend_usd", "projected_usd"});
  QuotaReport r;
  std::map<std::string, QuotaUser> users;
  db.query("SELECT time, user, action, spend_usd, projected_usd FROM quota_events ORDER BY time, rowid", {},
           [&](sqlite3_stmt* row) {
             const double t = column_real(row, 0);
             const std::string action = column_text(row, 2);
             QuotaUser& u = users[column_text(row, 1)];
             u.warnings += action == "warn" ? 1 : 0;
             u.blocks += action == "block" ? 1 : 0;
             u.cancelled += action == "cancel" ? 1 : 0;
             u.refused += action == "refuse" ? 1 : 0;
             u.other += action != "warn" && action != "block" && action != "cancel" && action != "refuse" ? 1 : 0;
             if (action == "block" && !u.blocked_s) u.blocked_s = t;
             u.last_s = t;
             u.spend_usd = column_real(row, 3);
             u.projected_usd = column_real(row, 4);
             horizon_s = std::max(horizon_s, t);
             ++r.events;
           });
  // Results written before refused submissions got a quota_events 'refuse' row have them only in the jobs table
  // (reason AssocGrpBillingMinutes); jobs with a refuse row are left out here, so none is counted twice.
  if (db.has_column("jobs", "user") && db.has_column("jobs", "reason")) {
    db.query(
        "SELECT user, COUNT(*) FROM jobs WHERE reason = 'AssocGrpBillingMinutes' AND job_id NOT IN "
        "(SELECT job_id FROM quota_events WHERE action = 'refuse' AND job_id IS NOT NULL) GROUP BY user",
        {}, [&](sqlite3_stmt* row) {
          users[column_text(row, 0)].refused_at_submit = static_cast<std::size_t>(sqlite3_column_int64(row, 1));
        });
  }
  for (auto& [name, u] : users) {
    u.user = name;
    r.users.push_back(std::move(u));
  }
  return r;
}

OperationsReport read_operations(ResultsDb& db, double& horizon_s) {
  db.require_columns("operations", {"time", "action", "step", "node", "name", "jobs_killed"});
  OperationsReport r;
  std::map<std::string, std::size_t> started;
  db.query("SELECT time, action, step, node, name, jobs_killed FROM operations ORDER BY time, rowid", {},
           [&](sqlite3_stmt* row) {
             OperationStep s;
             s.time_s = column_real(row, 0);
             s.action = column_text(row, 1);
             s.step = column_text(row, 2);
             s.name = column_text(row, 4);
             s.jobs_killed = sqlite3_column_int64(row, 5);
             const std::string node = column_text(row, 3);
             ++r.rows;
             r.jobs_killed += s.jobs_killed;
             if (s.step == "start") ++started[s.action];
             horizon_s = std::max(horizon_s, s.time_s);
             // The same step of the same operation at the same time (per-node rows): one line with its nodes.
             for (auto it = r.timeline.rbegin(); it != r.timeline.rend() && it->time_s == s.time_s; ++it) {
               if (it->action != s.action || it->step != s.step || it->name != s.name) continue;
               if (!node.empty()) it->nodes.push_back(node);
               it->jobs_killed += s.jobs_killed;
               return;
             }
             if (!node.empty()) s.nodes.push_back(node);
             r.timeline.push_back(std::move(s));
           });
  r.started.assign(started.begin(), started.end());
  return r;
}

}  // namespace

double default_step_s(double horizon_s) {
  static constexpr std::array<double, 17> kSteps{1,   2,   5,    10,   15,   30,    60,    120,  300,
                                                 600, 900, 1800, 3600, 7200, 10800, 21600, 43200};
  for (const double s : kSteps) {
    if (std::ceil(horizon_s / s) <= 100) return s;
  }
  return std::ceil(horizon_s / (100 * kDayS)) * kDayS;
}

ReportData load_report_data(const std::filesystem::path& results_dir, double step_s) {
  if (!std::isfinite(step_s) || step_s < 0) {
    throw InputError("--step", "", fmt::format("{} is not a positive number of seconds", step_s));
  }
  ResultsDb db(results_dir / "results.sqlite");
  ReportData d;
  d.results_file = db.path();

  db.require_columns("summary", {"key", "value"});
  db.query("SELECT key, value FROM summary", {}, [&](sqlite3_stmt* row) {
    if (!column_null(row, 1)) d.summary[column_text(row, 0)] = column_real(row, 1);
  });
  if (db.has_table("runs")) {
    db.require_columns("runs", {"scenario", "seed", "policy", "version"});
    db.query("SELECT scenario, seed, policy, version FROM runs ORDER BY rowid LIMIT 1", {}, [&](sqlite3_stmt* row) {
      d.run = {column_text(row, 0), sqlite3_column_int64(row, 1), column_text(row, 2), column_text(row, 3)};
    });
  }

  // Jobs: waits by start time, and the sizes and run times interruptions are set against.
  db.require_columns("jobs", {"job_id", "submit_time", "start_time", "end_time", "gpus", "run_time"});
  std::vector<std::pair<double, double>> starts;  // (start, wait)
  std::map<std::int64_t, JobSize> jobs;           // only needed (and only built) for job interruptions
  const bool sizes = db.has_table("job_interruptions");
  db.query("SELECT job_id, submit_time, start_time, end_time, gpus, run_time FROM jobs", {}, [&](sqlite3_stmt* row) {
    const double submit = column_real(row, 1);
    d.horizon_s = std::max(d.horizon_s, submit);
    if (!column_null(row, 2)) {
      starts.emplace_back(column_real(row, 2), column_real(row, 2) - submit);
      d.horizon_s = std::max(d.horizon_s, column_real(row, 2));
    }
    if (!column_null(row, 3)) d.horizon_s = std::max(d.horizon_s, column_real(row, 3));
    if (!sizes) return;
    JobSize& job = jobs[sqlite3_column_int64(row, 0)];
    job.gpus = std::max<std::int64_t>(job.gpus, sqlite3_column_int64(row, 4));
    job.run_s += column_real(row, 5);  // NULL (never ran) reads as 0
  });
  d.started_jobs = starts.size();

  const std::vector<ClusterBucket> samples = read_cluster_samples(db, d.horizon_s);
  d.cluster_samples = samples.size();

  std::optional<std::vector<FaultRow>> faults;
  if (db.has_table("faults")) {
    db.require_columns(
        "faults", {"time", "class", "xid", "effect", "detected_by", "detected_time", "jobs_hit", "lost_gpu_hours"});
    faults.emplace();
    db.query(
        "SELECT time, class, effect, detected_by, xid, detected_time, jobs_hit, lost_gpu_hours FROM faults "
        "ORDER BY time, rowid",
        {}, [&](sqlite3_stmt* row) {
          FaultRow r{column_real(row, 0), column_text(row, 1), column_text(row, 2),          column_text(row, 3),
                     std::nullopt,        std::nullopt,        sqlite3_column_int64(row, 6), column_real(row, 7)};
          if (!column_null(row, 4)) r.xid = sqlite3_column_int64(row, 4);
          if (!column_null(row, 5)) r.detected_time = column_real(row, 5);
          d.horizon_s = std::max(d.horizon_s, r.time);
          faults->push_back(std::move(r));
        });
  }

  std::optional<std::vector<InterruptionRow>> interruptions;
  if (db.has_table("job_interruptions")) {
    db.require_columns("job_interruptions", {"time", "job_id", "run_s", "lost_gpu_hours", "requeued"});
    interruptions.emplace();
    // Results written before the cause column hold fault interruptions only.
    const std::string sql = std::string("SELECT time, job_id, run_s, lost_gpu_hours, requeued, ") +
                            (db.has_column("job_interruptions", "cause") ? "cause" : "'fault'") +
                            " FROM job_interruptions ORDER BY time, rowid";
    db.query(sql.c_str(), {}, [&](sqlite3_stmt* row) {
      interruptions->push_back({column_real(row, 0), sqlite3_column_int64(row, 1), column_real(row, 2),
                                column_real(row, 3), sqlite3_column_int64(row, 4) != 0, column_text(row, 5)});
      d.horizon_s = std::max(d.horizon_s, column_real(row, 0));
    });
  }

  std::vector<std::pair<double, std::pair<double, double>>> cluster_costs;  // time, (burn, total)
  std::map<std::string, std::pair<double, double>> users, accounts;         // scope -> (time, total) of the last row
  if (db.has_table("costs")) {
    db.require_columns("costs", {"time", "scope", "burn_usd_per_h", "total_usd"});
    d.costs.emplace();
    db.query("SELECT time, scope, burn_usd_per_h, total_usd FROM costs ORDER BY time, rowid", {},
             [&](sqlite3_stmt* row) {
               const double t = column_real(row, 0), total = column_real(row, 3);
               const std::string scope = column_text(row, 1);
               d.horizon_s = std::max(d.horizon_s, t);
               if (scope == "cluster") {
                 cluster_costs.push_back({t, {column_real(row, 2), total}});
               } else if (scope.starts_with("user:")) {
                 users[scope.substr(5)] = {t, total};
               } else if (scope.starts_with("account:")) {
                 accounts[scope.substr(8)] = {t, total};
               }
             });
  }

  if (db.has_table("job_checkpoints")) d.checkpoints = read_checkpoints(db);
  std::optional<std::vector<ScalingRow>> scaling;
  if (db.has_table("scaling")) scaling = read_scaling(db, d.horizon_s);
  if (db.has_table("quota_events")) d.quota = read_quota(db, d.horizon_s);
  if (db.has_table("operations")) d.operations = read_operations(db, d.horizon_s);

  d.step_s = step_s > 0 ? step_s : default_step_s(d.horizon_s);
  if (d.horizon_s / d.step_s > static_cast<double>(kMaxBuckets)) {
    throw InputError("--step", "",
                     fmt::format("{} s makes more than {} buckets over {} s", d.step_s, kMaxBuckets, d.horizon_s));
  }

  // Waits per start-time bucket, every bucket up to the last start.
  std::vector<std::vector<double>> waits;
  for (const auto& [start, wait] : starts) {
    const std::size_t b = bucket_of(start, d.step_s);
    if (waits.size() <= b) waits.resize(b + 1);
    waits[b].push_back(wait);
  }
  for (std::size_t b = 0; b < waits.size(); ++b) {
    std::sort(waits[b].begin(), waits[b].end());
    d.waits.push_back(
        {static_cast<double>(b) * d.step_s, waits[b].size(), mean(waits[b]), nearest_rank_percentile(waits[b], 95)});
  }

  d.cluster = cluster_buckets(samples, d.step_s);

  if (scaling) d.scaling = summarise_scaling(*scaling, d.step_s);
  if (faults) d.faults = summarise_faults(*faults, d.horizon_s);
  if (interruptions) d.interruptions = summarise_interruptions(*interruptions, jobs, d.horizon_s);
  if (d.costs) {
    for (std::size_t i = 0; i < cluster_costs.size();) {
      const std::size_t b = bucket_of(cluster_costs[i].first, d.step_s);
      double burn = 0, total = 0;
      std::size_t n = 0;
      for (; i < cluster_costs.size() && bucket_of(cluster_costs[i].first, d.step_s) == b; ++i, ++n) {
        burn += cluster_costs[i].second.first;
        total = cluster_costs[i].second.second;
      }
      d.costs->cluster.push_back({static_cast<double>(b) * d.step_s, burn / static_cast<double>(n), total});
    }
    if (!cluster_costs.empty()) d.costs->cluster_total_usd = cluster_costs.back().second.second;
    d.costs->users = largest_first(users);
    d.costs->accounts = largest_first(accounts);
  }
  return d;
}

}  // namespace gputwin
