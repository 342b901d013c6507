#include "fidelity/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gputwin {
namespace {

std::vector<std::int64_t> starts(const std::vector<RecordedJob>& jobs) {
  std::vector<std::int64_t> out;
  out.reserve(jobs.size());
  for (const RecordedJob& j : jobs) out.push_back(j.start_s);
  return out;
}

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string replica_name(const Recording& r) {
  const std::string name = r.dir.filename().string();
  return name.empty() ? r.dir.parent_path().filename().string() : name;
}

void check_same_jobs(const std::vector<RecordedJob>& a, const std::vector<RecordedJob>& b, const std::string& file) {
  if (a.size() != b.size()) {
    throw RecordingError(
        file, "/jobs",
        fmt::format("{} jobs where the first replica has {}: not the same workload", b.size(), a.size()));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].idx != b[i].idx) {
      throw RecordingError(file, "/jobs", fmt::format("has no job of workload index {}", a[i].idx));
    }
  }
}

}  // namespace

double kendall_tau_b(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y) {
  std::int64_t conc = 0, disc = 0, tx = 0, ty = 0;
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = i + 1; k < n; ++k) {
      const int dx = (x[i] > x[k]) - (x[i] < x[k]);
      const int dy = (y[i] > y[k]) - (y[i] < y[k]);
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) {
        ++tx;
      } else if (dy == 0) {
        ++ty;
      } else if (dx == dy) {
        ++conc;
      } else {
        ++disc;
      }
    }
  }
  const double denom = std::sqrt(static_cast<double>(conc + disc + tx) * static_cast<double>(conc + disc + ty));
  return denom > 0 ? static_cast<double>(conc - disc) / denom : 1.0;
}

double mean_start_difference_s(const std::vector<RecordedJob>& a, const std::vector<RecordedJob>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n == 0) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(std::llabs(a[i].start_s - b[i].start_s));
  return sum / static_cast<double>(n);
}

FidelityReport compare_with_replicas(const std::vector<Recording>& recordings,
                                     const std::vector<std::vector<RecordedJob>>& simulated,
                                     const FidelityCriteria& criteria) {
  if (recordings.empty() || recordings.size() != simulated.size()) {
    throw std::invalid_argument("compare_with_replicas: one simulated schedule per recording");
  }
  FidelityReport r;
  r.jobs = recordings.front().jobs.size();
  for (std::size_t k = 0; k < recordings.size(); ++k) {
    const std::string file = (recordings[k].dir / "result.json").string();
    check_same_jobs(recordings.front().jobs, recordings[k].jobs, file);
    check_same_jobs(recordings[k].jobs, simulated[k], file + " (simulated)");
    ReplicaComparison c;
    c.name = replica_name(recordings[k]);
    c.start_diff_s = mean_start_difference_s(simulated[k], recordings[k].jobs);
    c.tau = kendall_tau_b(starts(recordings[k].jobs), starts(simulated[k]));
    c.real_wait_s = mean_wait_s(recordings[k].jobs);
    c.sim_wait_s = mean_wait_s(simulated[k]);
    double bias = 0;
    for (std::size_t i = 0; i < r.jobs; ++i) {
      bias += static_cast<double>(simulated[k][i].start_s - recordings[k].jobs[i].start_s);
    }
    c.sim_bias_s = r.jobs > 0 ? bias / static_cast<double>(r.jobs) : 0;
    r.replicas.push_back(c);
  }
  for (std::size_t a = 0; a < recordings.size(); ++a) {
    for (std::size_t b = a + 1; b < recordings.size(); ++b) {
      r.pairs.push_back(PairSpread{r.replicas[a].name, r.replicas[b].name,
                                   mean_start_difference_s(recordings[a].jobs, recordings[b].jobs),
                                   kendall_tau_b(starts(recordings[a].jobs), starts(recordings[b].jobs))});
    }
  }
  std::vector<double> sim_diff, sim_tau, sim_wait, pair_diff, pair_tau;
  r.band_low_s = r.band_high_s = r.replicas.front().real_wait_s;
  for (const ReplicaComparison& c : r.replicas) {
    sim_diff.push_back(c.start_diff_s);
    sim_tau.push_back(c.tau);
    sim_wait.push_back(c.sim_wait_s);
    r.band_low_s = std::min(r.band_low_s, c.real_wait_s);
    r.band_high_s = std::max(r.band_high_s, c.real_wait_s);
  }
  for (const PairSpread& p : r.pairs) {
    pair_diff.push_back(p.start_diff_s);
    pair_tau.push_back(p.tau);
  }
  r.sim_start_diff_s = mean(sim_diff);
  r.sim_tau = mean(sim_tau);
  r.sim_wait_s = mean(sim_wait);
  r.has_spread = !r.pairs.empty();
  if (r.has_spread) {
    r.pair_start_diff_s = mean(pair_diff);
    r.pair_start_diff_min_s = *std::min_element(pair_diff.begin(), pair_diff.end());
    r.pair_start_diff_max_s = *std::max_element(pair_diff.begin(), pair_diff.end());
    r.pair_tau_min = *std::min_element(pair_tau.begin(), pair_tau.end());
    r.pair_tau_max = *std::max_element(pair_tau.begin(), pair_tau.end());
  }
  if (r.sim_wait_s > r.band_high_s) {
    r.wait_outside_pct = r.band_high_s > 0 ? 100.0 * (r.sim_wait_s - r.band_high_s) / r.band_high_s : 100.0;
  } else if (r.sim_wait_s < r.band_low_s) {
    r.wait_outside_pct = r.band_low_s > 0 ? -100.0 * (r.band_low_s - r.sim_wait_s) / r.band_low_s : -100.0;
  }
  r.wait_inside = std::abs(r.wait_outside_pct) <= 100.0 * criteria.edge_tolerance + 1e-9;
  r.starts_inside = r.has_spread && r.sim_start_diff_s <= r.pair_start_diff_s * (1 + criteria.start_tolerance) + 1e-9;
  r.inside = r.has_spread && r.wait_inside && r.starts_inside;
  return r;
}

std::string format_report(const FidelityReport& r, const std::string& title) {
  std::string out = fmt::format("{}: {} jobs, {} replica(s)\n\n", title, r.jobs, r.replicas.size());
  out += fmt::format("{:<14} {:>10} {:>10} {:>14} {:>12} {:>8}\n", "replica", "real wait", "sim wait", "|start diff|",
                     "start bias", "tau-b");
  for (const ReplicaComparison& c : r.replicas) {
    out += fmt::format("{:<14} {:>9.1f}s {:>9.1f}s {:>13.1f}s {:>+11.1f}s {:>8.3f}\n", c.name, c.real_wait_s,
                       c.sim_wait_s, c.start_diff_s, c.sim_bias_s, c.tau);
  }
  if (!r.pairs.empty()) {
    out += fmt::format("\n{:<29} {:>14} {:>8}\n", "real replica pairs", "|start diff|", "tau-b");
    for (const PairSpread& p : r.pairs) {
      out += fmt::format("{:<29} {:>13.1f}s {:>8.3f}\n", p.a + " vs " + p.b, p.start_diff_s, p.tau);
    }
  }
  out += "\n";
  out += fmt::format("mean wait        sim {:.1f} s; real band {:.1f} .. {:.1f} s", r.sim_wait_s, r.band_low_s,
                     r.band_high_s);
  if (r.wait_outside_pct == 0) {
    out += " (inside)\n";
  } else {
    out += fmt::format(" ({:+.2f}% outside {} edge)\n", r.wait_outside_pct,
                       r.wait_outside_pct > 0 ? "the upper" : "the lower");
  }
  if (r.has_spread) {
    out += fmt::format("|start diff|     sim vs real {:.1f} s; real pairs {:.1f} s (range {:.1f} .. {:.1f})\n",
                       r.sim_start_diff_s, r.pair_start_diff_s, r.pair_start_diff_min_s, r.pair_start_diff_max_s);
    out += fmt::format("start order      sim vs real tau-b {:.3f}; real pairs {:.3f} .. {:.3f}\n", r.sim_tau,
                       r.pair_tau_min, r.pair_tau_max);
    out += fmt::format(
        "verdict          {}: mean wait {}, start difference {} the replicas' own\n",
        r.inside ? "INSIDE the real cluster's run-to-run spread" : "OUTSIDE the real cluster's run-to-run spread",
        r.wait_inside ? "in the band" : "outside the band", r.starts_inside ? "no larger than" : "larger than");
  } else {
    out += fmt::format("|start diff|     sim vs real {:.1f} s\n", r.sim_start_diff_s);
    out += "verdict          none: one replica has no run-to-run spread to compare with (record two or more)\n";
  }
  return out;
}

void write_report(const FidelityReport& r, const std::vector<Recording>& recordings,
                  const std::vector<std::vector<RecordedJob>>& simulated, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json j;
  j["jobs"] = r.jobs;
  for (const ReplicaComparison& c : r.replicas) {
    j["replicas"].push_back({{"name", c.name},
                             {"start_diff_s", c.start_diff_s},
                             {"start_bias_s", c.sim_bias_s},
                             {"tau_b", c.tau},
                             {"real_wait_s", c.real_wait_s},
                             {"sim_wait_s", c.sim_wait_s}});
  }
  j["pairs"] = nlohmann::json::array();
  for (const PairSpread& p : r.pairs) {
    j["pairs"].push_back({{"a", p.a}, {"b", p.b}, {"start_diff_s", p.start_diff_s}, {"tau_b", p.tau}});
  }
  j["sim_start_diff_s"] = r.sim_start_diff_s;
  j["pair_start_diff_s"] = r.pair_start_diff_s;
  j["sim_tau_b"] = r.sim_tau;
  j["pair_tau_b_min"] = r.pair_tau_min;
  j["pair_tau_b_max"] = r.pair_tau_max;
  j["sim_wait_s"] = r.sim_wait_s;
  j["real_wait_band_s"] = {r.band_low_s, r.band_high_s};
  j["wait_outside_pct"] = r.wait_outside_pct;
  j["verdict"] = !r.has_spread ? "none" : r.inside ? "inside" : "outside";
  auto write = [](const std::filesystem::path& path, const std::string& text) {
    const std::filesystem::path tmp = path.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out << text;
      if (!out.flush()) throw std::runtime_error(tmp.string() + ": cannot write");
    }
    std::filesystem::rename(tmp, path);
  };
  write(dir / "fidelity.json", j.dump(1) + "\n");
  std::string csv = "idx";
  for (const ReplicaComparison& c : r.replicas) {
    csv += fmt::format(",{0}_submit,{0}_real_start,{0}_sim_start", c.name);
  }
  csv += "\n";
  for (std::size_t i = 0; i < r.jobs; ++i) {
    csv += std::to_string(recordings.front().jobs[i].idx);
    for (std::size_t k = 0; k < recordings.size(); ++k) {
      csv += fmt::format(",{},{},{}", recordings[k].jobs[i].submit_s, recordings[k].jobs[i].start_s,
                         simulated[k][i].start_s);
    }
    csv += "\n";
  }
  write(dir / "jobs.csv", csv);
}

}  // namespace gputwin
