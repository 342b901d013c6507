#include "results/run_comparison.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <map>
#include <memory>
#include <set>

#include "results/results_db.hpp"
#include "results/run_view.hpp"

namespace gputwin {

namespace {

/// Rows of a two-column (text key, number) query of `db`.
std::map<std::string, double> pairs(ResultsDb& db, const char* sql) {
  std::map<std::string, double> out;
  db.query(sql, {}, [&](sqlite3_stmt* row) { out[column_text(row, 0)] = sqlite3_column_double(row, 1); });
  return out;
}

/// The summary keys compared, in the order shown, with their labels.
constexpr std::pair<const char*, const char*> kSummaryRows[] = {{"jobs", "jobs"},
                                                                {"rejected", "rejected at submit"},
                                                                {"wait_mean_s", "wait mean (s)"},
                                                                {"wait_p50_s", "wait p50 (s)"},
                                                                {"wait_p95_s", "wait p95 (s)"},
                                                                {"wait_p99_s", "wait p99 (s)"},
                                                                {"wait_max_s", "wait max (s)"},
                                                                {"bounded_slowdown_mean", "bounded slowdown"},
                                                                {"gpu_utilization", "GPU utilisation"},
                                                                {"gpu_hours", "GPU-hours"},
                                                                {"lost_gpu_hours", "GPU-hours lost (requeue)"},
                                                                {"goodput", "goodput"},
                                                                {"allocated_gpu_hours", "GPU-hours allocated"},
                                                                {"placement_gpu_hours", "GPU-hours from placement"},
                                                                {"cross_leaf_jobs", "cross-leaf multi-node jobs"},
                                                                {"cross_leaf_traffic_tb", "cross-leaf traffic (TB)"},
                                                                {"gpu_energy_kwh", "GPU energy (kWh)"},
                                                                {"gpu_fragmentation_mean", "free GPUs fragmented"},
                                                                {"makespan_s", "makespan (s)"}};

/// One row per key any run has, values in run order.
std::vector<ComparisonRow> grouped(const std::vector<std::map<std::string, double>>& per_run) {
  std::set<std::string> keys;
  for (const auto& m : per_run) {
    for (const auto& [k, v] : m) keys.insert(k);
  }
  std::vector<ComparisonRow> rows;
  for (const std::string& k : keys) {
    ComparisonRow row{k, k, {}};
    for (const auto& m : per_run) {
      const auto it = m.find(k);
      row.values.push_back(it == m.end() ? std::nullopt : std::optional<double>(it->second));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string comparison_change(double a, double b) {
  if (a == b) return "";
  if (a == 0) return fmt::format("{:+.4g}", b - a);
  return fmt::format("{:+.1f}%", (b - a) / a * 100);
}

namespace {

/// What one run contributes: its summary and its mean waits per account and per partition.
struct RunFigures {
  std::map<std::string, double> summary, accounts, partitions;
};

RunFigures read_figures(ResultsDb& db) {
  db.require_columns("summary", {"key", "value"});
  db.require_columns("jobs", {"account", "partition", "wait_time"});
  RunFigures f;
  f.summary = pairs(db, "SELECT key, value FROM summary");
  f.accounts = pairs(db, "SELECT account, AVG(wait_time) FROM jobs WHERE wait_time IS NOT NULL GROUP BY account");
  f.partitions = pairs(db, "SELECT partition, AVG(wait_time) FROM jobs WHERE wait_time IS NOT NULL GROUP BY partition");
  return f;
}

RunComparison assemble(std::vector<std::filesystem::path> dirs, const std::vector<RunFigures>& runs) {
  RunComparison c;
  c.runs = std::move(dirs);
  for (const auto& [key, label] : kSummaryRows) {
    ComparisonRow row{key, label, {}};
    bool any = false;
    for (const RunFigures& r : runs) {
      const auto it = r.summary.find(key);
      row.values.push_back(it == r.summary.end() ? std::nullopt : std::optional<double>(it->second));
      any = any || it != r.summary.end();
    }
    if (any) c.summary.push_back(std::move(row));
  }
  std::vector<std::map<std::string, double>> accounts, partitions;
  for (const RunFigures& r : runs) {
    accounts.push_back(r.accounts);
    partitions.push_back(r.partitions);
  }
  c.wait_by_account = grouped(accounts);
  c.wait_by_partition = grouped(partitions);
  return c;
}

}  // namespace

RunComparison compare_runs(const std::vector<std::filesystem::path>& dirs) {
  // Every folder is opened and checked whole (results_db.hpp) before anything is read.
  std::vector<std::unique_ptr<ResultsDb>> dbs;
  for (const auto& dir : dirs) dbs.push_back(std::make_unique<ResultsDb>(dir / "results.sqlite"));
  std::vector<RunFigures> runs;
  for (const auto& db : dbs) runs.push_back(read_figures(*db));
  return assemble(dirs, runs);
}

RunComparison compare_runs(const std::vector<std::filesystem::path>& dirs, const std::vector<const RunView*>& views) {
  std::vector<RunFigures> runs;
  for (const RunView* view : views) view->read_database([&](ResultsDb& db) { runs.push_back(read_figures(db)); });
  return assemble(dirs, runs);
}

}  // namespace gputwin
