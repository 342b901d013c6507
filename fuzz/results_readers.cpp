#include "fuzz/results_readers.hpp"

#include <sstream>
#include <string>

#include "cli/compare.hpp"
#include "cli/report_command.hpp"
#include "cli/views.hpp"
#include "model/errors.hpp"
#include "results/metrics_export.hpp"
#include "tests/support/hand_made_results.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/run_view_slurm_source.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin::fuzz {

namespace {

HttpRequest get(const std::string& path, std::map<std::string, std::string> query = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  r.query = std::move(query);
  return r;
}

void serve(const std::filesystem::path& dir) {
  const DashboardApi api(dir, dir / "no-assets");
  const RunDescription& info = api.view().info();
  const std::string end = std::to_string(info.end_s);
  const HttpRequest dashboard[] = {
      get("/api/info"),
      get("/api/overview"),
      get("/api/overview", {{"t", "0"}}),
      get("/api/jobs", {{"sort", "state"}, {"order", "desc"}, {"limit", "5"}}),
      get("/api/jobs", {{"filter", "failed"}, {"search", "a"}, {"sort", "run_time"}, {"t", "1"}}),
      get("/api/jobs", {{"filter", "pending"}, {"sort", "priority"}, {"offset", "1"}}),
      get("/api/jobs/1"),
      get("/api/jobs/2", {{"t", "100"}}),
      get("/api/nodes"),
      get("/api/nodes", {{"filter", "xid"}, {"t", "150"}}),
      get("/api/nodes/n1/gpus", {{"points", "10"}}),
      get("/api/series/cluster", {{"points", "50"}}),
      get("/api/events", {{"limit", "20"}}),
      get("/api/events", {{"format", "text"}, {"kind", "job"}}),
      get("/api/waits"),
      get("/api/costs", {{"scope", "cluster"}}),
      get("/api/gantt", {{"width", "100"}, {"height", "50"}}),
      get("/api/gantt", {{"from", "0"}, {"to", end}, {"node_to", "1000000"}, {"width", "4000"}}),
      get("/metrics"),
      get("/metrics", {{"t", "100"}, {"labels", "snake"}}),
      get("/api/forecasts"),  // a twin's folder (a twin_info table); 404 for a run's
      get("/api/forecasts", {{"filter", "started"}, {"points", "3"}}),
      get("/api/actions", {{"outcome", "done"}}),
  };
  for (const HttpRequest& request : dashboard) {
    try {
      (void)api.handle(request);
    } catch (const HttpError&) {
    }
  }
  for (const std::int64_t at : {info.end_s, info.begin_s, std::int64_t{150}}) {
    const RunViewSlurmSource source(api.view(), at);
    const SlurmApi slurm(source, {});
    for (const char* path : {"/slurm/v0.0.44/jobs", "/slurm/v0.0.41/jobs", "/slurm/v0.0.44/nodes",
                             "/slurm/v0.0.42/partitions", "/slurm/v0.0.44/diag", "/slurm/v0.0.44/job/1",
                             "/slurm/v0.0.43/node/n1", "/slurmdb/v0.0.44/jobs", "/slurmdb/v0.0.41/qos",
                             "/slurmdb/v0.0.44/accounts", "/slurmdb/v0.0.43/associations", "/slurmdb/v0.0.44/job/2"}) {
      (void)slurm.handle(get(path));
    }
    (void)slurm.handle(get("/slurmdb/v0.0.44/jobs", {{"start_time", "0"}, {"end_time", "4000000000"}}));
  }
}

}  // namespace

void read_results_folder(const std::filesystem::path& dir) {
  // The readers refuse a folder without summary.json (results written whole); what is fuzzed is the database.
  testing::write_summary_marker(dir);
  try {
    (void)build_report(dir, {});
  } catch (const InputError&) {
  }
  try {
    (void)print_squeue(dir, 100, "");
    (void)print_squeue(dir, 1'000'000, "alice");
  } catch (const InputError&) {
  }
  try {
    (void)print_comparison(dir, dir);
  } catch (const InputError&) {
  }
  for (const bool openmetrics : {false, true}) {
    try {
      std::ostringstream out;
      MetricsExportOptions options;
      options.openmetrics = openmetrics;
      if (!openmetrics) options.at_s = 100;
      export_metrics(dir, options, out);
    } catch (const InputError&) {
    }
  }
  try {
    serve(dir);
  } catch (const InputError&) {
  }
}

}  // namespace gputwin::fuzz
