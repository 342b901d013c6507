// The dashboard's JSON API over a results folder (a finished run or a twin's folder), its static pages, and
// /metrics. Every read takes a simulated time `t` (the time slider; default: the end of the run).
//
//   GET /api/info                                   what the run is, the slider's range
//   GET /api/overview?t=                            cards, node health grid counts, partitions, snapshot_s
//   GET /api/jobs?t=&filter=&search=&user=&sort=&order=&offset=&limit=   one page of the Jobs table
//   GET /api/jobs/{id}?t=                           one job
//   GET /api/nodes?t=&filter=all|failed|xid|healthy every node with state, group, GPU use
//   GET /api/nodes/{name}/gpus?from=&to=&points=    one node's GPU series (DCGM-style fields)
//   GET /api/series/cluster?from=&to=&points=       queue length, running jobs, GPU allocation over time
//   GET /api/series/nodes?from=&to=&points=&lines=  every node's GPU utilisation (mean over its GPUs): a
//                                                   min/mean/max band across nodes and at most `lines` (16) nodes'
//                                                   lines, all of them or the busiest
//   GET /api/events?t=&limit=&kind=&format=json|text the event log up to t (last N lines)
//   GET /metrics?t=                                 Prometheus text 0.0.4 at t (Slurm's and DCGM's names)
//   GET /, /assets/...                              the pages (built by npm into the assets folder)
//
// A live run (`gputwin run SCENARIO --serve`, ui/live_run) answers the same reads from its newest snapshot (the
// default `t` is then the simulated time now), except /api/info, /api/overview and /api/nodes at or after the
// newest copy's second (what the Overview page and the Nodes tab ask while they follow the clock): those come from
// that copy of the simulation's state in memory (LiveRun::present), the same figures as the snapshot written of
// it would give, without waiting for it to be written; their `t` and `snapshot_s` are then the copy's second. So are
// /api/jobs and /api/jobs/{id} at any second (LiveRun::present_jobs: the newest copy's Jobs table; a second after the
// copy's shows the copy's, `t` says which). It also answers:
//   GET /api/live                                   clock and progress: state, now, speed, jobs submitted and ended
//   GET /api/stream                                 Server-Sent Events: each event one JSON line (job, node,
//                                                   action), `status` events every second; Last-Event-ID resumes
//   POST /api/control/pause | resume                hold or release the clock
//   POST /api/control/speed {"factor": x | "max"}   simulated seconds per wall second
//   POST /api/control/node/drain {"node", "reason"} drain a node now; node/resume {"node"} returns it to service
//   POST /api/control/node/restart {"node", "reason"}  reboot a node as `scontrol reboot ASAP nextstate=RESUME`
//                                                   (drained now, rebooted once idle, then resumed)
//   POST /api/control/node/inject {"node", "xid", "gpu"}  a fault with that XID on the node now (fault mechanics)
//   POST /api/control/scale {"action": "up"|"down", "count"}  power cloud pool nodes up, or idle ones down
// The controls need `Authorization: Bearer TOKEN` (401 without it or with another token) and are refused (403)
// when serving a finished run or a twin; a bad body is a 400 naming the field.
//
// A twin's folder also answers /api/forecasts and /api/actions (ui/twin_api.hpp); runs served together
// (`gputwin serve RUN1 RUN2 ...`) answer /api/compare... (ui/compare_api.hpp), the other tabs showing the first run.
// A twin being served while it polls (`gputwin twin ... --serve`, ui/folder_feed.hpp) is re-read after each poll it
// writes; /api/live and /api/stream then give its clock (status events only).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/run_view.hpp"
#include "ui/http_server.hpp"
#include "ui/live_run.hpp"

namespace gputwin {

class CompareApi;
class FolderFeed;
struct TwinPageData;

/// Answers the dashboard's requests for one results folder or one live run.
class DashboardApi {
 public:
  /// A finished run (or a twin's folder). `assets_dir`: the built front end (index.html and its bundle); may be
  /// missing, then / says how to build it.
  DashboardApi(const std::filesystem::path& results_dir, std::filesystem::path assets_dir);
  /// Results folders served together: the tabs show the first, /api/compare all of them side by side (one folder:
  /// as the constructor above). Each is read and checked as that one reads it; throws InputError naming the file.
  DashboardApi(const std::vector<std::filesystem::path>& results_dirs, std::filesystem::path assets_dir);
  /// A folder a twin keeps rewriting (which must outlive the API): re-read after each write; no controls.
  DashboardApi(FolderFeed& feed, std::filesystem::path assets_dir);
  /// A live run (which must outlive the API); the controls need `control_token`.
  DashboardApi(LiveRun& live, std::filesystem::path assets_dir, std::string control_token);
  ~DashboardApi();

  /// Answers one request; throws HttpError for a bad one.
  HttpResponse handle(const HttpRequest& request) const;
  /// The run being served (a live run: its newest snapshot's view).
  [[nodiscard]] std::shared_ptr<const RunSnapshot> snapshot() const;
  /// A finished run's view (a live run has none that stays: use snapshot()).
  [[nodiscard]] const RunView& view() const;

 private:
  HttpResponse api(const HttpRequest& request) const;
  /// A live run's /api/info, /api/overview or /api/nodes from its newest copy in memory; empty when the copy cannot
  /// answer (the run has finished, or `t` is before the copy's second).
  std::optional<HttpResponse> present_answer(const HttpRequest& request) const;
  /// A live run's /api/jobs, /api/jobs/{id} or /api/waits from the newest copy in memory whose Jobs table is built;
  /// empty when none can answer (the run has finished, or is writing its results).
  std::optional<HttpResponse> present_jobs_answer(const HttpRequest& request) const;
  /// A live run's /api/series/cluster or /metrics from the newest copy in memory whose LiveMetrics are built; empty
  /// when none can answer (the run has finished or is writing its results, /metrics at another second than the copy's,
  /// or a run without metrics).
  std::optional<HttpResponse> present_metrics_answer(const HttpRequest& request) const;
  /// A live run's /api/events from the newest copy in memory whose event log is built (a later second than the
  /// copy's: the copy's); empty when none can answer (the run has finished or is writing its results).
  std::optional<HttpResponse> present_events_answer(const HttpRequest& request) const;
  /// A live run's /api/costs from the newest copy in memory (its cost series so far); empty when none can answer
  /// (the run has finished or is writing its results).
  std::optional<HttpResponse> present_costs_answer(const HttpRequest& request) const;
  /// /api/gantt of a live run from the newest copy whose Gantt index is built (nullopt: the snapshots answer).
  std::optional<HttpResponse> present_gantt_answer(const HttpRequest& request) const;
  /// A live run's /api/series/nodes or /api/nodes/{name}/gpus from the newest copy in memory whose LiveMetrics are
  /// built; empty when none can answer (the run has finished or is writing its results).
  std::optional<HttpResponse> present_gpu_series_answer(const HttpRequest& request) const;
  HttpResponse asset(const HttpRequest& request) const;
  HttpResponse metrics(const HttpRequest& request) const;
  HttpResponse control(const HttpRequest& request) const;
  HttpResponse live_status() const;
  HttpResponse stream(const HttpRequest& request) const;
  HttpResponse twin_pages(const HttpRequest& request) const;

  std::filesystem::path assets_dir_;
  std::shared_ptr<const RunSnapshot> fixed_;  // a finished run
  LiveRun* live_ = nullptr;                   // a live run
  FolderFeed* feed_ = nullptr;                // a twin being served
  std::unique_ptr<CompareApi> compare_;       // runs served together
  mutable std::once_flag fixed_twin_once_;    // a finished twin's pages, read by the first request for them
  mutable std::shared_ptr<const TwinPageData> fixed_twin_;
  mutable std::string fixed_twin_error_;
  std::string control_token_;
};

/// A wait-time distribution as the API answers it: jobs, mean, p50-p99, max, and the CDF as two arrays.
nlohmann::json wait_distribution_json(const WaitDistribution& distribution);

/// The JSON of a live run's status (GET /api/live, the stream's status events).
std::string live_status_json(const LiveStatus& status);

/// Integer query parameter `name` from `lo` to `hi`, `fallback` when absent. Throws HttpError 400 naming it.
std::int64_t int_param(const HttpRequest& request, const std::string& name, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi);

}  // namespace gputwin
