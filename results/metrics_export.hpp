// `gputwin metrics RESULTS`: a run's metrics tables as a monitoring stack would have scraped them. The whole run
// as timestamped OpenMetrics 1.0, which `promtool tsdb create-blocks-from openmetrics` turns into Prometheus
// blocks (so a simulated month can be browsed in Grafana), or one scrape at a simulated time, in Prometheus text
// 0.0.4 (what `promtool check metrics` reads) or OpenMetrics. Names are Slurm 25.11's native ones
// (slurm_nodes_idle, slurm_jobs_pending, ...), dcgm-exporter's per GPU (DCGM_FI_DEV_GPU_UTIL{gpu,UUID,device,
// modelName,Hostname}), and gputwin_* for what only a simulator knows (cluster GPU power, energy, fragmentation).
//
//   gputwin metrics out/quickstart --openmetrics --step 300 --out run.om
//   promtool tsdb create-blocks-from openmetrics run.om ./tsdb
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "results/gpu_metrics.hpp"

namespace gputwin {

/// Default budget of sample lines of a whole-run export: at about 170 bytes a line with dcgm-exporter's labels
/// (measured: 2.0 GB for 12.0 M lines), under 200 MB.
inline constexpr std::uint64_t kDefaultMaxExportSamples = 1'000'000;

/// What `gputwin metrics` writes.
struct MetricsExportOptions {
  bool openmetrics = false;          ///< OpenMetrics 1.0 (always so for the whole run); else Prometheus text 0.0.4.
  std::optional<std::int64_t> at_s;  ///< One scrape at this simulated time; the whole run when empty.
  double step_s = 0;                 ///< Export period for the whole run (a multiple of the stored ones); 0: the
                                     ///< shortest that keeps the export within max_samples.
  std::uint64_t max_samples = kDefaultMaxExportSamples;  ///< Budget of sample lines when step_s is 0.
  bool gpus = true;                                      ///< Per-GPU DCGM series.
  bool job_label = false;     ///< Label GPU series with hpc_job (the job on the GPU), as dcgm-exporter's
                              ///< HPC job mapping does; off by default (one series per job and GPU).
  bool dcgm_labels = true;    ///< dcgm-exporter's label names (UUID, modelName, Hostname), which promtool's
                              ///< linter calls camelCase; false: uuid, model_name, hostname.
  std::filesystem::path out;  ///< Output file, written whole or not at all; stdout when empty.
};

/// What an export chose.
struct MetricsExportChoice {
  std::int64_t step_s = 0;         ///< Export period of the whole run (0 for one scrape).
  std::int64_t stored_step_s = 0;  ///< The shortest period the stored samples allow.
  bool adapted = false;            ///< step_s was chosen to keep within max_samples (no --step given).
  std::uint64_t samples = 0;       ///< Sample lines planned at step_s (a node DOWN for a while gives fewer).
};

/// One scrape of a run's metrics: what `gputwin metrics RESULTS --at T` reads from results.sqlite, and what a live
/// run's /metrics computes from its state in memory; write_metrics_scrape writes either alike.
struct MetricsScrape {
  /// A node as dcgm-exporter's labels name its GPUs.
  struct Node {
    std::string name;       ///< Hostname label.
    std::int32_t gpus = 0;  ///< GPUs it has.
    std::string gpu_type;   ///< Catalogue name (the modelName label and the framebuffer size).
  };
  std::int64_t epoch_unix_s = 0;         ///< Unix time of t = 0.
  std::optional<ClusterSample> cluster;  ///< The cluster sample at the scrape (none before the series' first row).
  bool per_gpu = false;                  ///< The DCGM families are written (the run keeps per-GPU series).
  std::vector<GpuSample> gpus;  ///< Each GPU's sample at the scrape, node by node, GPU by GPU (a node DOWN: none).
  std::vector<Node> nodes;      ///< By node index.
};

/// The cluster sample a scrape at `at_s` (>= 0) shows: at the last multiple of `step_s` at or before it, the last of
/// `rows` (the stored samples after a change, in time order) at or before that, its energy extended to it
/// (extend_energy); none before the first row.
std::optional<ClusterSample> cluster_sample_at(std::span<const ClusterSample> rows, std::int64_t step_s,
                                               std::int64_t at_s);

/// The nodes of `cluster` as the results' nodes table has them (a node without a GPU type is costed as an H100).
std::vector<MetricsScrape::Node> scrape_nodes(const ClusterConfig& cluster);

/// Writes `scrape` as Prometheus text 0.0.4 (or OpenMetrics when options.openmetrics), without timestamps, with the
/// label names and hpc_job label `options` asks for.
void write_metrics_scrape(const MetricsScrape& scrape, const MetricsExportOptions& options, std::ostream& out);

/// Writes the metrics of `results_dir`/results.sqlite and says which period it used. Throws InputError for a missing
/// or metric-less results folder, a bad step or a time outside the run.
MetricsExportChoice export_metrics(const std::filesystem::path& results_dir, const MetricsExportOptions& options,
                                   std::ostream& out);

}  // namespace gputwin
