#include "ui/compare_api.hpp"

#include <nlohmann/json.hpp>

#include "ui/dashboard_api.hpp"

namespace gputwin {

namespace {

using nlohmann::json;

constexpr auto kReplaceInvalidUtf8 = json::error_handler_t::replace;

json values_json(const ComparisonRow& row) {
  json values = json::array();
  for (const auto& v : row.values) values.push_back(v ? json(*v) : json(nullptr));
  return values;
}

json rows_json(const std::vector<ComparisonRow>& rows) {
  json out = json::array();
  for (const ComparisonRow& row : rows)
    out.push_back(json{{"key", row.key}, {"label", row.label}, {"values", values_json(row)}});
  return out;
}

// The runs' summaries, from the databases their views hold (not opened and checked again).
RunComparison compare_snapshots(const std::vector<std::shared_ptr<const RunSnapshot>>& runs) {
  std::vector<std::filesystem::path> dirs;
  std::vector<const RunView*> views;
  for (const auto& run : runs) {
    dirs.push_back(run->dir);
    views.push_back(run->view.get());
  }
  return compare_runs(dirs, views);
}

}  // namespace

std::string run_name(const std::filesystem::path& dir) {
  const std::filesystem::path p = dir.has_filename() ? dir : dir.parent_path();
  return p.filename().string();
}

CompareApi::CompareApi(std::vector<std::shared_ptr<const RunSnapshot>> runs)
    : runs_(std::move(runs)), comparison_(compare_snapshots(runs_)) {}

HttpResponse CompareApi::handle(const HttpRequest& request) const {
  const std::string& path = request.path;
  if (path == "/api/compare") {
    json runs = json::array();
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunDescription& info = runs_[i]->view->info();
      runs.push_back(json{{"index", i},
                          {"name", run_name(runs_[i]->dir)},
                          {"scenario", info.scenario},
                          {"policy", info.policy},
                          {"kind", info.kind},
                          {"seed", info.seed},
                          {"jobs", info.jobs},
                          {"nodes", info.nodes},
                          {"total_gpus", info.total_gpus},
                          {"begin", info.begin_s},
                          {"end", info.end_s}});
    }
    return HttpResponse::json(json{{"runs", runs},
                                   {"summary", rows_json(comparison_.summary)},
                                   {"wait_by_account", rows_json(comparison_.wait_by_account)},
                                   {"wait_by_partition", rows_json(comparison_.wait_by_partition)}}
                                  .dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/compare/waits") {
    const auto points = static_cast<std::size_t>(int_param(request, "points", 400, 1, 20000));
    json runs = json::array();
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunView& view = *runs_[i]->view;
      json run = wait_distribution_json(view.waits(view.info().end_s, points));
      run["index"] = i;
      run["name"] = run_name(runs_[i]->dir);
      runs.push_back(std::move(run));
    }
    return HttpResponse::json(json{{"runs", runs}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/compare/series") {
    const auto points = static_cast<std::size_t>(int_param(request, "points", 600, 1, 20000));
    json runs = json::array();
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const RunView& view = *runs_[i]->view;
      const RunDescription& info = view.info();
      json s{{"index", i},
             {"name", run_name(runs_[i]->dir)},
             {"from", info.begin_s},
             {"to", info.end_s},
             {"total_gpus", info.total_gpus},
             {"time", json::array()},
             {"pending", json::array()},
             {"running", json::array()},
             {"gpu_util_pct", json::array()}};
      for (const ClusterPoint& p : view.cluster_series(info.begin_s, info.end_s, points)) {
        s["time"].push_back(p.time);
        s["pending"].push_back(p.jobs_pending);
        s["running"].push_back(p.jobs_running);
        s["gpu_util_pct"].push_back(p.gpu_util_pct);
      }
      runs.push_back(std::move(s));
    }
    return HttpResponse::json(json{{"runs", runs}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  throw HttpError(404, "no API endpoint " + path.substr(0, 100));
}

}  // namespace gputwin
