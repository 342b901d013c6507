#include "cli/compare.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace gputwin {
namespace {

/// A results.sqlite opened read-only.
class ResultsDb {
 public:
  explicit ResultsDb(const std::filesystem::path& dir) : path_(dir / "results.sqlite") {
    if (!std::filesystem::exists(path_)) throw std::runtime_error(path_.string() + ": no such file");
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
      sqlite3_close(db_);
      throw std::runtime_error(path_.string() + ": " + msg);
    }
  }
  ~ResultsDb() { sqlite3_close(db_); }
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  /// Rows of a two-column (text key, number) query.
  std::map<std::string, double> pairs(const char* sql) const {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) {
      throw std::runtime_error(path_.string() + ": not a gputwin results database (" + sqlite3_errmsg(db_) + ")");
    }
    std::map<std::string, double> out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* key = sqlite3_column_text(st, 0);
      out[key ? reinterpret_cast<const char*>(key) : ""] = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    return out;
  }

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

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
  std::unique_ptr<ResultsDb> a, b;
  try {
    a = std::make_unique<ResultsDb>(a_dir);
    b = std::make_unique<ResultsDb>(b_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gputwin: {}\n", e.what());
    return 2;
  }
  try {
    fmt::print("A: {}\nB: {}\n", a_dir.string(), b_dir.string());
    const auto sa = a->pairs("SELECT key, value FROM summary");
    const auto sb = b->pairs("SELECT key, value FROM summary");
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
    print_group("mean wait by account (s)", a->pairs(per_account), b->pairs(per_account));
    print_group("mean wait by partition (s)", a->pairs(per_partition), b->pairs(per_partition));
  } catch (const std::exception& e) {
    fmt::print(stderr, "gputwin: {}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace gputwin
