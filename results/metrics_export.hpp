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
#include <string>

namespace gputwin {

/// What `gputwin metrics` writes.
struct MetricsExportOptions {
  bool openmetrics = false;          ///< OpenMetrics 1.0 (always so for the whole run); else Prometheus text 0.0.4.
  std::optional<std::int64_t> at_s;  ///< One scrape at this simulated time; the whole run when empty.
  double step_s = 0;                 ///< Export period for the whole run (a multiple of the stored one); 0: stored.
  bool gpus = true;                  ///< Per-GPU DCGM series.
  bool job_label = false;            ///< Label GPU series with hpc_job (the job on the GPU), as dcgm-exporter's
                                     ///< HPC job mapping does; off by default (one series per job and GPU).
  bool dcgm_labels = true;           ///< dcgm-exporter's label names (UUID, modelName, Hostname), which promtool's
                                     ///< linter calls camelCase; false: uuid, model_name, hostname.
  std::filesystem::path out;         ///< Output file, written whole or not at all; stdout when empty.
};

/// Writes the metrics of `results_dir`/results.sqlite. Throws InputError for a missing or metric-less results
/// folder, a bad step or a time outside the run.
void export_metrics(const std::filesystem::path& results_dir, const MetricsExportOptions& options, std::ostream& out);

}  // namespace gputwin
