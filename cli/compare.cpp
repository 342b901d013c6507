#include "cli/compare.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "results/results_db.hpp"

namespace gputwin {
namespace {

/// Rows of a two-column (text key, number) query of `db`.
std::map<std::string, double> pairs(ResultsDb& db, const char* sql) {
  std::map<std::string, double> out;
  db.query(sql, {}, [&](sqlite3_stmt* row) { out[column_text(row, 0)] = sqlite3_column_double(row, 1); });
  return out;
}

/// A number as people read it: integers plain, small values with three decimals, others with one.
std::string number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return fmt::format("{:.0f}", v);
  return std::abs(v) < 10 ? fmt::format("{:.3f}", v) : fmt::format("{:.1f}", v);
}

std::string change(double a, double b) {
  if (a == b) return "";
  if (a == 0) return fmt::format("{:+.4g}", b - a);
  return fmt::format("{:+.1f}%", (b - a) / a * 100);
}

void print_group(const char* title, const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  fmt::print("\n{:<28} {:>14} {:>14} {:>10}\n", title, "A", "B", "change");
  for (const std::string& k : keys) {
    const auto ia = a.find(k), ib = b.find(k);
    const std::string va = ia == a.end() ? "-" : fmt::format("{:.0f}", ia->second);
    const std::string vb = ib == b.end() ? "-" : fmt::format("{:.0f}", ib->second);
    const std::string c = ia != a.end() && ib != b.end() ? change(ia->second, ib->second) : "";
    fmt::print("{:<28} {:>14} {:>14} {:>10}\n", k, va, vb, c);
  }
}

}  // namespace

int print_comparison(const std::filesystem::path& a_dir, const std::filesystem::path& b_dir) {
  // Both are opened and checked whole (results_db.hpp) before anything is printed; errors are InputErrors naming
  // the file, which main reports with exit status 2.
  ResultsDb a(a_dir / "results.sqlite");
  ResultsDb b(b_dir / "results.sqlite");
  a.require_columns("summary", {"key", "value"});
  b.require_columns("summary", {"key", "value"});
  a.require_columns("jobs", {"account", "partition", "wait_time"});
  b.require_columns("jobs", {"account", "partition", "wait_time"});
  {
    fmt::print("A: {}\nB: {}\n", a_dir.string(), b_dir.string());
    const auto sa = pairs(a, "SELECT key, value FROM summary");
    const auto sb = pairs(b, "SELECT key, value FROM summary");
    fmt::print("\n{:<28} {:>14} {:>14} {:>10}\n", "summary", "A", "B", "change");
    const std::pair<const char*, const char*> rows[] = {{"jobs", "jobs"},
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
    for (const auto& [key, label] : rows) {
      const auto ia = sa.find(key), ib = sb.find(key);
      if (ia == sa.end() && ib == sb.end()) continue;
      const double va = ia == sa.end() ? 0 : ia->second, vb = ib == sb.end() ? 0 : ib->second;
      fmt::print("{:<28} {:>14} {:>14} {:>10}\n", label, number(va), number(vb), change(va, vb));
    }
    const char* per_account = "SELECT account, AVG(wait_time) FROM jobs WHERE wait_time IS NOT NULL GROUP BY account";
    const char* per_partition =
        "SELECT partition, AVG(wait_time) FROM jobs WHERE wait_time IS NOT NULL GROUP BY partition";
    print_group("mean wait by account (s)", pairs(a, per_account), pairs(b, per_account));
    print_group("mean wait by partition (s)", pairs(a, per_partition), pairs(b, per_partition));
  }
  return 0;
}

}  // namespace gputwin
