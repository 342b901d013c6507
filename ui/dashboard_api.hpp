// The dashboard's JSON API over a results folder (a finished run or a twin's folder), its static pages, and
// /metrics. Every read takes a simulated time `t` (the time slider; default: the end of the run).
//
//   GET /api/info                                   what the run is, the slider's range
//   GET /api/overview?t=                            cards, node health grid counts, partitions
//   GET /api/jobs?t=&filter=&search=&user=&sort=&order=&offset=&limit=   one page of the Jobs table
//   GET /api/jobs/{id}?t=                           one job
//   GET /api/nodes?t=&filter=all|failed|xid|healthy every node with state, group, GPU use
//   GET /api/nodes/{name}/gpus?from=&to=&points=    one node's GPU series (DCGM-style fields)
//   GET /api/series/cluster?from=&to=&points=       queue length, running jobs, GPU allocation over time
//   GET /api/events?t=&limit=&kind=&format=json|text the event log up to t (last N lines)
//   GET /metrics?t=                                 Prometheus text 0.0.4 at t (Slurm's and DCGM's names)
//   GET /, /assets/...                              the pages (built by npm into the assets folder)
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "results/run_view.hpp"
#include "ui/http_server.hpp"

namespace gputwin {

/// Answers the dashboard's requests for one results folder.
class DashboardApi {
 public:
  /// `assets_dir`: the built front end (index.html and its bundle); may be missing, then / says how to build it.
  DashboardApi(std::filesystem::path results_dir, std::filesystem::path assets_dir);
  ~DashboardApi();

  /// Answers one request; throws HttpError for a bad one.
  HttpResponse handle(const HttpRequest& request) const;
  /// The run being served.
  [[nodiscard]] const RunView& view() const { return *view_; }

 private:
  HttpResponse api(const HttpRequest& request) const;
  HttpResponse asset(const HttpRequest& request) const;
  HttpResponse metrics(const HttpRequest& request) const;

  std::filesystem::path results_dir_;
  std::filesystem::path assets_dir_;
  std::unique_ptr<RunView> view_;
};

/// Integer query parameter `name` from `lo` to `hi`, `fallback` when absent. Throws HttpError 400 naming it.
std::int64_t int_param(const HttpRequest& request, const std::string& name, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi);

}  // namespace gputwin
