#include "results/metrics_export.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <span>
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

/// A stable UUID-shaped id for GPU `gpu` of node `host` (real GPUs have one; dashboards key series by it).
std::string gpu_uuid(const std::string& host, int gpu) {
  const std::uint64_t a = splitmix64_mix(fnv1a64(host + "/" + std::to_string(gpu)));
  const std::uint64_t b = splitmix64_mix(a ^ 0x9e3779b97f4a7c15ULL);
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

/// More nodes than any cluster gputwin simulates: a row of a node past it is not one gputwin wrote.
constexpr std::size_t kMaxNodes = std::size_t{1} << 24;

/// A cluster series value as a Slurm or gputwin family.
struct ClusterFamily {
  const char* name;
  const char* type;
  const char* unit;
  const char* help;
  double (*value)(const ClusterSample&);  // the energy family's is extended to the sample time by the caller
};

constexpr ClusterFamily kClusterFamilies[] = {
    {"slurm_nodes", "gauge", nullptr, "Number of nodes.",
     [](const ClusterSample& c) {
       return static_cast<double>(std::int64_t{c.nodes_idle} + c.nodes_mixed + c.nodes_alloc + c.nodes_down +
                                  c.nodes_drain + c.nodes_powered_down);
     }},
    {"slurm_nodes_idle", "gauge", nullptr, "Number of nodes in IDLE state.",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_idle); }},
    {"slurm_nodes_mixed", "gauge", nullptr, "Number of nodes in MIXED state.",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_mixed); }},
    {"slurm_nodes_alloc", "gauge", nullptr, "Number of nodes in ALLOCATED state.",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_alloc); }},
    {"slurm_nodes_down", "gauge", nullptr, "Number of nodes DOWN or rebooting.",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_down); }},
    {"slurm_nodes_drain", "gauge", nullptr, "Number of nodes DRAINING or DRAINED.",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_drain); }},
    {"gputwin_nodes_powered_down", "gauge", nullptr,
     "Number of cloud nodes POWERED_DOWN, POWERING_UP or POWERING_DOWN (not usable).",
     [](const ClusterSample& c) { return static_cast<double>(c.nodes_powered_down); }},
    {"slurm_jobs_pending", "gauge", nullptr, "Number of jobs in PENDING state (held jobs included).",
     [](const ClusterSample& c) { return static_cast<double>(c.jobs_pending); }},
    {"slurm_jobs_running", "gauge", nullptr, "Number of jobs in RUNNING state.",
     [](const ClusterSample& c) { return static_cast<double>(c.jobs_running); }},
    {"slurm_jobs_cpus_alloc", "gauge", nullptr, "CPUs allocated to running jobs.",
     [](const ClusterSample& c) { return static_cast<double>(c.cpus_alloc); }},
    {"slurm_gpus_alloc", "gauge", nullptr, "GPUs allocated to running jobs.",
     [](const ClusterSample& c) { return static_cast<double>(c.gpus_alloc); }},
    {"slurm_gpus_idle", "gauge", nullptr, "GPUs free on nodes in service (not drained, down or rebooting).",
     [](const ClusterSample& c) { return static_cast<double>(c.gpus_free); }},
    {"gputwin_gpus_free_fragmented", "gauge", nullptr,
     "Free GPUs on nodes where other GPUs are allocated (unusable by whole-node jobs).",
     [](const ClusterSample& c) { return static_cast<double>(c.gpus_free_fragmented); }},
    {"gputwin_gpu_fragmentation_ratio", "gauge", "ratio", "Share of free GPUs that sit on partly allocated nodes.",
     [](const ClusterSample& c) {
       return c.gpus_free > 0 ? static_cast<double>(c.gpus_free_fragmented) / static_cast<double>(c.gpus_free) : 0.0;
     }},
    {"gputwin_gpu_power_watts", "gauge", "watts", "Power drawn by all GPUs.",
     [](const ClusterSample& c) { return c.gpu_power_w; }},
    {"gputwin_gpu_energy_joules", "counter", "joules", "Energy drawn by all GPUs since the start of the run.",
     [](const ClusterSample& c) { return c.gpu_energy_j; }},
};

/// The stored cluster series (the samples after a change), in time order.
std::vector<ClusterSample> read_cluster_rows(ResultsDb& db) {
  std::vector<ClusterSample> rows;
  db.query(
      "SELECT time, nodes_idle, nodes_mixed, nodes_alloc, nodes_down, nodes_drain, nodes_powered_down, jobs_pending, "
      "jobs_running, cpus_alloc, gpus_alloc, gpu_power_w, gpu_energy_j, gpus_free, gpus_free_fragmented "
      "FROM cluster_metrics ORDER BY time",
      {}, [&](sqlite3_stmt* st) {
        const auto u32 = [&](int i) { return static_cast<std::uint32_t>(sqlite3_column_int64(st, i)); };
        const auto u64 = [&](int i) { return static_cast<std::uint64_t>(sqlite3_column_int64(st, i)); };
        ClusterSample& c = rows.emplace_back();
        c.time_s = sqlite3_column_int64(st, 0);
        c.nodes_idle = u32(1), c.nodes_mixed = u32(2), c.nodes_alloc = u32(3), c.nodes_down = u32(4);
        c.nodes_drain = u32(5), c.nodes_powered_down = u32(6);
        c.jobs_pending = u64(7), c.jobs_running = u64(8), c.cpus_alloc = u64(9), c.gpus_alloc = u64(10);
        c.gpu_power_w = sqlite3_column_double(st, 11);
        c.gpu_energy_j = sqlite3_column_double(st, 12);
        c.gpus_free = u64(13), c.gpus_free_fragmented = u64(14);
      });
  return rows;
}

/// Writes the cluster families' samples every `stride` stored steps from `from_s` to `to_s` (each sample the last
/// row at or before it, its energy extended to it).
void write_cluster_families(Exposition& ex, bool openmetrics, std::span<const ClusterSample> rows,
                            std::int64_t cluster_step, std::int64_t from_s, std::int64_t to_s, std::int64_t stride,
                            bool timestamps) {
  std::vector<std::int64_t> times;
  times.reserve(rows.size());
  for (const ClusterSample& c : rows) times.push_back(c.time_s);
  for (const ClusterFamily& f : kClusterFamilies) {
    // A counter family `x` has samples `x_total`; Prometheus text names the family by its samples.
    const bool counter = std::string_view(f.type) == "counter";
    const bool energy = std::string_view(f.name) == "gputwin_gpu_energy_joules";
    const std::string sample_name = counter ? std::string(f.name) + "_total" : f.name;
    ex.family(openmetrics ? f.name : sample_name, f.type, f.unit, f.help);
    expand_cluster_samples(times, cluster_step, from_s, to_s, stride, [&](std::int64_t t, std::size_t i) {
      const ClusterSample& row = rows[i];
      const double v = energy ? extend_energy(row.gpu_energy_j, row.gpu_power_w, t - row.time_s) : f.value(row);
      ex.sample(sample_name, "", v, timestamps ? t : -1);
    });
  }
}

/// dcgm-exporter's labels of GPU `g` of `node`, and its framebuffer.
GpuIdentity gpu_identity(const MetricsScrape::Node& node, int g, bool dcgm_labels) {
  const auto model = find_gpu_model(node.gpu_type);
  const std::string model_name = model ? std::string(model->description) : "NVIDIA GPU";
  const char* pattern = dcgm_labels ? R"(gpu="{}",UUID="{}",device="nvidia{}",modelName="{}",Hostname="{}")"
                                    : R"(gpu="{}",uuid="{}",device="nvidia{}",model_name="{}",hostname="{}")";
  return GpuIdentity{fmt::format(fmt::runtime(pattern), g, gpu_uuid(node.name, g), g, escape_label(model_name),
                                 escape_label(node.name)),
                     model ? model->memory_gb * 1024.0 : 0};
}

/// Every GPU's identity, by node index.
std::vector<std::vector<GpuIdentity>> gpu_identities(std::span<const MetricsScrape::Node> nodes, bool dcgm_labels) {
  std::vector<std::vector<GpuIdentity>> gpus(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (int g = 0; g < nodes[n].gpus; ++g) gpus[n].push_back(gpu_identity(nodes[n], g, dcgm_labels));
  }
  return gpus;
}

/// The nodes table: names, GPU counts and types, by node index.
std::vector<MetricsScrape::Node> read_nodes(ResultsDb& db) {
  std::vector<MetricsScrape::Node> nodes;
  db.query("SELECT node_index, name, gpus, gpu_type FROM nodes ORDER BY node_index", {}, [&](sqlite3_stmt* st) {
    const auto n = static_cast<std::size_t>(sqlite3_column_int64(st, 0));
    if (n >= nodes.size()) nodes.resize(n + 1);
    nodes[n].name = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    nodes[n].gpus = static_cast<std::int32_t>(sqlite3_column_int64(st, 2));
    const unsigned char* type = sqlite3_column_text(st, 3);
    nodes[n].gpu_type = type ? reinterpret_cast<const char*>(type) : "h100";
  });
  return nodes;
}

/// A gpu_metrics column as a DCGM family.
struct GpuFamily {
  const char* name;
  const char* help;
  const char* column;
  bool averaged;                      // a mean over the sample period (else the value at its end)
  double (*value)(const GpuSample&);  // the column's value in a sample (FB_FREE: the used one, as `column`)
};

constexpr GpuFamily kGpuFamilies[] = {
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "util_pct", true,
     [](const GpuSample& s) { return s.util_pct; }},
    {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "fb_used_mib", false,
     [](const GpuSample& s) { return s.fb_used_mib; }},
    {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "fb_used_mib", false,
     [](const GpuSample& s) { return s.fb_used_mib; }},
    {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power_w", true, [](const GpuSample& s) { return s.power_w; }},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temp_c", false, [](const GpuSample& s) { return s.temp_c; }},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES",
     "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.",
     "nvlink_tx_bytes_per_s", true, [](const GpuSample& s) { return s.nvlink_tx_bytes_per_s; }},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", "energy_mj", false,
     [](const GpuSample& s) { return s.energy_mj; }},
    {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "xid", false,
     [](const GpuSample& s) { return static_cast<double>(s.xid); }},
};

/// The per-GPU samples stored at `time_s`, node by node, GPU by GPU.
std::vector<GpuSample> read_gpu_samples_at(ResultsDb& db, std::int64_t time_s) {
  std::vector<GpuSample> samples;
  db.query(
      "SELECT node_index, gpu, IFNULL(job_id, 0), util_pct, fb_used_mib, power_w, temp_c, nvlink_tx_bytes_per_s, "
      "energy_mj, xid FROM gpu_metrics WHERE time = ?1 ORDER BY node_index, gpu",
      {time_s}, [&](sqlite3_stmt* st) {
        const std::int64_t node = sqlite3_column_int64(st, 0), gpu = sqlite3_column_int64(st, 1);
        if (node < 0 || static_cast<std::size_t>(node) >= kMaxNodes || gpu < 0 || gpu >= 64) return;  // not ours
        GpuSample& s = samples.emplace_back();
        s.time_s = time_s;
        s.node = static_cast<NodeIndex>(node);
        s.gpu = static_cast<std::uint32_t>(gpu);
        s.job_id = static_cast<std::uint64_t>(sqlite3_column_int64(st, 2));
        s.util_pct = sqlite3_column_double(st, 3);
        s.fb_used_mib = sqlite3_column_double(st, 4);
        s.power_w = sqlite3_column_double(st, 5);
        s.temp_c = sqlite3_column_double(st, 6);
        s.nvlink_tx_bytes_per_s = sqlite3_column_double(st, 7);
        s.energy_mj = sqlite3_column_double(st, 8);
        s.xid = static_cast<std::uint32_t>(sqlite3_column_int64(st, 9));
      });
  return samples;
}

/// The scrape at `at_s` from results.sqlite: the cluster sample at the last cluster step at or before it (its energy
/// extended to it), each GPU's stored sample at the last GPU step at or before it.
MetricsScrape metrics_scrape_at(ResultsDb& db, std::int64_t at_s, std::int64_t cluster_step, std::int64_t gpu_step,
                                bool per_gpu) {
  MetricsScrape scrape;
  scrape.cluster = cluster_sample_at(read_cluster_rows(db), cluster_step, at_s);
  scrape.per_gpu = per_gpu;
  if (per_gpu) {
    scrape.nodes = read_nodes(db);
    scrape.gpus = read_gpu_samples_at(db, at_s / gpu_step * gpu_step);
  }
  return scrape;
}

}  // namespace

std::optional<ClusterSample> cluster_sample_at(std::span<const ClusterSample> rows, std::int64_t step_s,
                                               std::int64_t at_s) {
  const std::int64_t t = at_s / step_s * step_s;
  const auto after = std::upper_bound(rows.begin(), rows.end(), t,
                                      [](std::int64_t time, const ClusterSample& c) { return time < c.time_s; });
  if (after == rows.begin()) return std::nullopt;
  ClusterSample c = *(after - 1);
  c.gpu_energy_j = extend_energy(c.gpu_energy_j, c.gpu_power_w, t - c.time_s);
  c.time_s = t;
  return c;
}

std::vector<MetricsScrape::Node> scrape_nodes(const ClusterConfig& cluster) {
  std::vector<MetricsScrape::Node> nodes;
  nodes.reserve(cluster.nodes.size());
  for (const NodeConfig& node : cluster.nodes) {
    // The nodes table stores no type as NULL, which read_nodes reads as "h100".
    nodes.push_back(MetricsScrape::Node{node.name, static_cast<std::int32_t>(node.gpus),
                                        node.gpu_type.empty() ? "h100" : node.gpu_type});
  }
  return nodes;
}

void write_metrics_scrape(const MetricsScrape& scrape, const MetricsExportOptions& options, std::ostream& out) {
  Exposition ex(out, options.openmetrics, scrape.epoch_unix_s);
  const std::span<const ClusterSample> cluster =
      scrape.cluster ? std::span<const ClusterSample>(&*scrape.cluster, 1) : std::span<const ClusterSample>();
  const std::int64_t t = scrape.cluster ? scrape.cluster->time_s : 0;
  write_cluster_families(ex, options.openmetrics, cluster, 1, t, t, 1, false);
  if (scrape.per_gpu && options.gpus) {
    const std::vector<std::vector<GpuIdentity>> gpus = gpu_identities(scrape.nodes, options.dcgm_labels);
    for (const GpuFamily& f : kGpuFamilies) {
      ex.family(f.name, "gauge", nullptr, f.help);
      const bool fb_free = std::string_view(f.name) == "DCGM_FI_DEV_FB_FREE";
      for (const GpuSample& s : scrape.gpus) {
        if (s.node >= gpus.size() || s.gpu >= gpus[s.node].size()) continue;
        const GpuIdentity& id = gpus[s.node][s.gpu];
        double v = f.value(s);
        if (fb_free) v = std::max(0.0, id.fb_total_mib - v);
        if (options.job_label && s.job_id != 0) {
          ex.sample(f.name, id.labels + fmt::format(R"(,hpc_job="{}")", s.job_id), v, -1);
        } else {
          ex.sample(f.name, id.labels, v, -1);
        }
      }
    }
  }
  ex.finish();
}

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
  if (options.at_s) {
    // One scrape: the cluster sample at the last cluster step at or before it, each GPU's at the last GPU step.
    if (*options.at_s < 0 || *options.at_s > horizon)
      throw InputError("--at", "", fmt::format("{} s is outside the run (0 to {} s)", *options.at_s, horizon));
    const std::int64_t at = *options.at_s;
    MetricsScrape scrape = metrics_scrape_at(db, at, cluster_step, gpu_step, have_gpus);
    scrape.epoch_unix_s = epoch;
    write_metrics_scrape(scrape, options, out);
    return MetricsExportChoice{};
  }

  Exposition ex(out, true, epoch);  // the whole run: OpenMetrics, timestamped
  // The stored cluster rows are the samples after a change (schema 2); each sample repeats the last row at or before
  // it, its energy extended at that row's power (extend_energy).
  write_cluster_families(ex, true, read_cluster_rows(db), cluster_step, 0, horizon, step / cluster_step, true);

  if (have_gpus) {
    const std::vector<std::vector<GpuIdentity>> gpus = gpu_identities(read_nodes(db), options.dcgm_labels);
    const std::int64_t per_export = step / gpu_step;
    for (const GpuFamily& f : kGpuFamilies) {
      ex.family(f.name, "gauge", nullptr, f.help);
      const bool fb_free = std::string_view(f.name) == "DCGM_FI_DEV_FB_FREE";
      const std::string sql = fmt::format(
          "SELECT node_index, gpu, time, {}, job_id FROM gpu_metrics ORDER BY node_index, gpu, time", f.column);
      // Re-aggregates stored samples into the export period: means of averaged values, last of the rest. A node
      // that was DOWN has no samples: a window without its last sample is not written (a failed scrape).
      std::int64_t node = -1, gpu = -1, window = -1, count = 0;
      double sum = 0;
      db.query(sql.c_str(), {}, [&](sqlite3_stmt* st) {
        const std::int64_t n = sqlite3_column_int64(st, 0), g = sqlite3_column_int64(st, 1);
        const std::int64_t t = sqlite3_column_int64(st, 2);
        const std::int64_t w = (t + step - 1) / step;  // the export window (w - 1) x step < t <= w x step
        if (n != node || g != gpu || w != window) node = n, gpu = g, window = w, count = 0, sum = 0;
        double v = sqlite3_column_double(st, 3);
        if (t != 0 && per_export > 1) {
          sum += v;
          if (++count, t % step != 0) return;
          if (f.averaged) v = sum / static_cast<double>(count);
          count = 0, sum = 0;
        }
        if (n < 0 || g < 0 || static_cast<std::size_t>(n) >= gpus.size() ||
            static_cast<std::size_t>(g) >= gpus[n].size())
          return;
        const GpuIdentity& id = gpus[n][g];
        if (fb_free) v = std::max(0.0, id.fb_total_mib - v);
        if (options.job_label && sqlite3_column_type(st, 4) != SQLITE_NULL) {
          ex.sample(f.name, id.labels + fmt::format(R"(,hpc_job="{}")", sqlite3_column_int64(st, 4)), v, t);
        } else {
          ex.sample(f.name, id.labels, v, t);
        }
      });
    }
  }
  ex.finish();
  choice.step_s = step;
  choice.samples = per_instant * static_cast<std::uint64_t>(horizon / step + 1);
  return choice;
}

}  // namespace gputwin
