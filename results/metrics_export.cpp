#include "results/metrics_export.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <vector>

#include "engine/rng.hpp"
#include "gpu/gpu_catalogue.hpp"
#include "model/errors.hpp"
#include "results/gpu_metrics.hpp"
#include "results/results_db.hpp"

namespace gputwin {
namespace {

/// One GPU as dcgm-exporter labels it.
struct GpuIdentity {
  std::string labels;  // gpu="0",UUID="GPU-...",device="nvidia0",modelName="...",Hostname="..."
  double fb_total_mib = 0;
};

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// splitmix64's finaliser: spreads the bits of similar hashes.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A stable UUID-shaped id for GPU `gpu` of node `host` (real GPUs have one; dashboards key series by it).
std::string gpu_uuid(const std::string& host, int gpu) {
  const std::uint64_t a = mix(fnv1a64(host + "/" + std::to_string(gpu)));
  const std::uint64_t b = mix(a ^ 0x9e3779b97f4a7c15ULL);
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff, b >> 48,
                     b & 0xffffffffffffULL);
}

/// Writes exposition text: one family at a time, OpenMetrics or Prometheus 0.0.4.
class Exposition {
 public:
  Exposition(std::ostream& out, bool openmetrics, std::int64_t epoch_s)
      : out_(out), openmetrics_(openmetrics), epoch_s_(epoch_s) {}
  /// Starts a family (TYPE, UNIT when `unit` is given and OpenMetrics, HELP).
  void family(const std::string& name, const char* type, const char* unit, const char* help) {
    flush_if_big();
    fmt::format_to(std::back_inserter(buf_), "# TYPE {} {}\n", name, type);
    if (openmetrics_ && unit != nullptr) fmt::format_to(std::back_inserter(buf_), "# UNIT {} {}\n", name, unit);
    fmt::format_to(std::back_inserter(buf_), "# HELP {} {}\n", name, help);
  }
  /// One sample; `time_s` < 0: no timestamp.
  void sample(const std::string& name, const std::string& labels, double value, std::int64_t time_s) {
    buf_.append(name);
    if (!labels.empty()) {
      buf_.push_back('{');
      buf_.append(labels);
      buf_.push_back('}');
    }
    if (value == std::floor(value) && std::fabs(value) < 1e15)
      fmt::format_to(std::back_inserter(buf_), " {}", static_cast<std::int64_t>(value));
    else
      fmt::format_to(std::back_inserter(buf_), " {}", value);
    if (time_s >= 0) fmt::format_to(std::back_inserter(buf_), " {}", epoch_s_ + time_s);
    buf_.push_back('\n');
    flush_if_big();
  }
  void finish() {
    if (openmetrics_) buf_.append(std::string_view("# EOF\n"));
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  void flush_if_big() {
    if (buf_.size() < (1u << 20)) return;
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& out_;
  bool openmetrics_;
  std::int64_t epoch_s_;
  fmt::memory_buffer buf_;
};

/// A cluster_metrics column as a Slurm or gputwin family.
struct ClusterFamily {
  const char* name;
  const char* type;
  const char* unit;
  const char* help;
  const char* column;  // SQL expression over cluster_metrics
};

constexpr ClusterFamily kClusterFamilies[] = {
    {"slurm_nodes", "gauge", nullptr, "Number of nodes.",
     "nodes_idle + nodes_mixed + nodes_alloc + nodes_down + nodes_drain + nodes_powered_down"},
    {"slurm_nodes_idle", "gauge", nullptr, "Number of nodes in IDLE state.", "nodes_idle"},
    {"slurm_nodes_mixed", "gauge", nullptr, "Number of nodes in MIXED state.", "nodes_mixed"},
    {"slurm_nodes_alloc", "gauge", nullptr, "Number of nodes in ALLOCATED state.", "nodes_alloc"},
    {"slurm_nodes_down", "gauge", nullptr, "Number of nodes DOWN or rebooting.", "nodes_down"},
    {"slurm_nodes_drain", "gauge", nullptr, "Number of nodes DRAINING or DRAINED.", "nodes_drain"},
    {"gputwin_nodes_powered_down", "gauge", nullptr,
     "Number of cloud nodes POWERED_DOWN, POWERING_UP or POWERING_DOWN (not usable).", "nodes_powered_down"},
    {"slurm_jobs_pending", "gauge", nullptr, "Number of jobs in PENDING state (held jobs included).", "jobs_pending"},
    {"slurm_jobs_running", "gauge", nullptr, "Number of jobs in RUNNING state.", "jobs_running"},
    {"slurm_jobs_cpus_alloc", "gauge", nullptr, "CPUs allocated to running jobs.", "cpus_alloc"},
    {"slurm_gpus_alloc", "gauge", nullptr, "GPUs allocated to running jobs.", "gpus_alloc"},
    {"slurm_gpus_idle", "gauge", nullptr, "GPUs free on nodes in service (not drained, down or rebooting).",
     "gpus_free"},
    {"gputwin_gpus_free_fragmented", "gauge", nullptr,
     "Free GPUs on nodes where other GPUs are allocated (unusable by whole-node jobs).", "gpus_free_fragmented"},
    {"gputwin_gpu_fragmentation_ratio", "gauge", "ratio", "Share of free GPUs that sit on partly allocated nodes.",
     "CASE WHEN gpus_free > 0 THEN CAST(gpus_free_fragmented AS REAL) / gpus_free ELSE 0 END"},
    {"gputwin_gpu_power_watts", "gauge", "watts", "Power drawn by all GPUs.", "gpu_power_w"},
    {"gputwin_gpu_energy_joules", "counter", "joules", "Energy drawn by all GPUs since the start of the run.",
     "gpu_energy_j"},
};

/// A gpu_metrics column as a DCGM family.
struct GpuFamily {
  const char* name;
  const char* help;
  const char* column;
  bool averaged;  // a mean over the sample period (else the value at its end)
};

constexpr GpuFamily kGpuFamilies[] = {
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "util_pct", true},
    {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "fb_used_mib", false},
    {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "fb_used_mib", false},
    {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power_w", true},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temp_c", false},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES",
     "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.",
     "nvlink_tx_bytes_per_s", true},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", "energy_mj", false},
    {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "xid", false},
};

}  // namespace

MetricsExportChoice export_metrics(const std::filesystem::path& results_dir, const MetricsExportOptions& options,
                                   std::ostream& out) {
  ResultsDb db(results_dir / "results.sqlite");
  if (!db.has_table("metrics_info"))
    throw InputError(db.path(), "", "no metrics tables: the run had /metrics/enabled false");
  std::map<std::string, double> info;
  db.query("SELECT key, value FROM metrics_info", {}, [&](sqlite3_stmt* st) {
    info[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = sqlite3_column_double(st, 1);
  });
  const auto gpu_step = static_cast<std::int64_t>(info["gpu_step_s"]);
  const auto cluster_step = static_cast<std::int64_t>(info["cluster_step_s"]);
  const auto horizon = static_cast<std::int64_t>(info["horizon_s"]);
  const auto epoch = static_cast<std::int64_t>(info["epoch_unix_s"]);
  const bool have_gpus = info["per_gpu"] != 0 && options.gpus;
  if (gpu_step <= 0 || cluster_step <= 0) throw InputError(db.path(), "metrics_info", "sample periods missing");
  if (horizon < 0 || static_cast<std::uint64_t>(horizon / cluster_step) >= kMaxClusterSamples)
    throw InputError(db.path(), "metrics_info", "horizon_s / cluster_step_s is more samples than gputwin writes");

  // GPU series: one per GPU of the nodes table (a node DOWN for a while has fewer samples).
  std::uint64_t gpu_count = 0;
  if (have_gpus) {
    db.query("SELECT IFNULL(sum(max(gpus, 0)), 0) FROM nodes", {},
             [&](sqlite3_stmt* st) { gpu_count = static_cast<std::uint64_t>(sqlite3_column_int64(st, 0)); });
  }
  const std::uint64_t per_instant = std::size(kClusterFamilies) + (have_gpus ? std::size(kGpuFamilies) * gpu_count : 0);

  // The export period: a multiple of both stored periods; by default the shortest that keeps the sample lines within
  // the budget (a long run on many GPUs is exported every few minutes instead of every 30 s).
  MetricsExportChoice choice;
  choice.stored_step_s = std::lcm(cluster_step, have_gpus ? gpu_step : cluster_step);
  std::int64_t step = choice.stored_step_s;
  if (options.step_s <= 0 && !options.at_s) {
    if (options.max_samples == 0) throw InputError("--max-samples", "", "must be at least 1");
    const std::uint64_t instants = options.max_samples / std::max<std::uint64_t>(per_instant, 1);
    // The smallest multiple m with floor(horizon / (m x stored)) + 1 <= instants; one instant at least.
    const std::int64_t at_stored = horizon / step + 1;
    std::int64_t m = 1;
    if (instants < static_cast<std::uint64_t>(at_stored))
      m = instants <= 1 ? at_stored : horizon / (static_cast<std::int64_t>(instants) * step) + 1;
    step *= m;
    choice.adapted = m > 1;
  }
  if (options.step_s > 0) {
    const auto wanted = static_cast<std::int64_t>(std::llround(options.step_s));
    if (wanted != options.step_s || wanted % cluster_step != 0 || (have_gpus && wanted % gpu_step != 0))
      throw InputError("--step", "",
                       fmt::format("{} s is not a whole multiple of the stored periods (GPU {} s, cluster {} s)",
                                   options.step_s, gpu_step, cluster_step));
    step = wanted;
  }
  std::int64_t at = -1;
  if (options.at_s) {
    if (*options.at_s < 0 || *options.at_s > horizon)
      throw InputError("--at", "", fmt::format("{} s is outside the run (0 to {} s)", *options.at_s, horizon));
    at = *options.at_s;
  }
  const bool openmetrics = options.openmetrics || !options.at_s;
  const std::int64_t stamp_offset = options.at_s ? -1 : 0;  // snapshots carry no timestamps
  Exposition ex(out, openmetrics, epoch);
  const auto stamp = [&](std::int64_t t) { return stamp_offset < 0 ? std::int64_t{-1} : t; };

  // The stored cluster rows are the samples after a change (schema 2); each sample repeats the last row at or before
  // it, its energy extended at that row's power (extend_energy).
  std::string columns = "time, gpu_power_w";
  for (const ClusterFamily& f : kClusterFamilies) columns += std::string(", ") + f.column;
  std::vector<std::int64_t> times;
  std::vector<double> values;  // per row: gpu_power_w, then one value per family
  constexpr std::size_t kWidth = std::size(kClusterFamilies) + 1;
  db.query(("SELECT " + columns + " FROM cluster_metrics ORDER BY time").c_str(), {}, [&](sqlite3_stmt* st) {
    times.push_back(sqlite3_column_int64(st, 0));
    for (std::size_t i = 0; i < kWidth; ++i) values.push_back(sqlite3_column_double(st, static_cast<int>(i) + 1));
  });
  const std::int64_t cluster_from = at >= 0 ? at / cluster_step * cluster_step : 0;
  const std::int64_t cluster_to = at >= 0 ? cluster_from : horizon;
  const std::int64_t cluster_stride = at >= 0 ? 1 : step / cluster_step;
  for (std::size_t k = 0; k < std::size(kClusterFamilies); ++k) {
    const ClusterFamily& f = kClusterFamilies[k];
    // A counter family `x` has samples `x_total`; Prometheus text names the family by its samples.
    const bool counter = std::string_view(f.type) == "counter";
    const bool energy = std::string_view(f.column) == "gpu_energy_j";
    const std::string sample_name = counter ? std::string(f.name) + "_total" : f.name;
    ex.family(openmetrics ? f.name : sample_name, f.type, f.unit, f.help);
    expand_cluster_samples(times, cluster_step, cluster_from, cluster_to, cluster_stride,
                           [&](std::int64_t t, std::size_t i) {
                             const double* row = &values[i * kWidth];
                             const double v = energy ? extend_energy(row[k + 1], row[0], t - times[i]) : row[k + 1];
                             ex.sample(sample_name, "", v, stamp(t));
                           });
  }

  if (have_gpus) {
    std::vector<std::vector<GpuIdentity>> gpus;  // by node index
    db.query("SELECT node_index, name, gpus, gpu_type FROM nodes ORDER BY node_index", {}, [&](sqlite3_stmt* st) {
      const auto n = static_cast<std::size_t>(sqlite3_column_int64(st, 0));
      const std::string host = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      const auto count = static_cast<int>(sqlite3_column_int64(st, 2));
      const unsigned char* type = sqlite3_column_text(st, 3);
      const auto model = find_gpu_model(type ? reinterpret_cast<const char*>(type) : "h100");
      const std::string model_name = model ? std::string(model->description) : "NVIDIA GPU";
      if (gpus.size() <= n) gpus.resize(n + 1);
      for (int g = 0; g < count; ++g) {
        const char* pattern = options.dcgm_labels
                                  ? R"(gpu="{}",UUID="{}",device="nvidia{}",modelName="{}",Hostname="{}")"
                                  : R"(gpu="{}",uuid="{}",device="nvidia{}",model_name="{}",hostname="{}")";
        gpus[n].push_back(GpuIdentity{
            fmt::format(fmt::runtime(pattern), g, gpu_uuid(host, g), g, escape_label(model_name), escape_label(host)),
            model ? model->memory_gb * 1024.0 : 0});
      }
    });
    const std::int64_t at_gpu = at >= 0 ? at / gpu_step * gpu_step : -1;
    const std::int64_t per_export = step / gpu_step;
    for (const GpuFamily& f : kGpuFamilies) {
      ex.family(f.name, "gauge", nullptr, f.help);
      const bool fb_free = std::string_view(f.name) == "DCGM_FI_DEV_FB_FREE";
      const std::string sql =
          fmt::format("SELECT node_index, gpu, time, {}, job_id FROM gpu_metrics {} ORDER BY node_index, gpu, time",
                      f.column, at_gpu >= 0 ? "WHERE time = ?1" : "");
      // Re-aggregates stored samples into the export period: means of averaged values, last of the rest. A node
      // that was DOWN has no samples: a window without its last sample is not written (a failed scrape).
      std::int64_t node = -1, gpu = -1, window = -1, count = 0;
      double sum = 0;
      db.query(sql.c_str(), {at_gpu}, [&](sqlite3_stmt* st) {
        const std::int64_t n = sqlite3_column_int64(st, 0), g = sqlite3_column_int64(st, 1);
        const std::int64_t t = sqlite3_column_int64(st, 2);
        const std::int64_t w = (t + step - 1) / step;  // the export window (w - 1) x step < t <= w x step
        if (n != node || g != gpu || w != window) node = n, gpu = g, window = w, count = 0, sum = 0;
        double v = sqlite3_column_double(st, 3);
        if (t != 0 && at_gpu < 0 && per_export > 1) {
          sum += v;
          if (++count, t % step != 0) return;
          if (f.averaged) v = sum / static_cast<double>(count);
          count = 0, sum = 0;
        }
        if (static_cast<std::size_t>(n) >= gpus.size() || static_cast<std::size_t>(g) >= gpus[n].size()) return;
        const GpuIdentity& id = gpus[n][g];
        if (fb_free) v = std::max(0.0, id.fb_total_mib - v);
        if (options.job_label && sqlite3_column_type(st, 4) != SQLITE_NULL) {
          ex.sample(f.name, id.labels + fmt::format(R"(,hpc_job="{}")", sqlite3_column_int64(st, 4)), v, stamp(t));
        } else {
          ex.sample(f.name, id.labels, v, stamp(t));
        }
      });
    }
  }
  ex.finish();
  if (!options.at_s) {
    choice.step_s = step;
    choice.samples = per_instant * static_cast<std::uint64_t>(horizon / step + 1);
  }
  return choice;
}

}  // namespace gputwin
