#include "ui/twin_api.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "ui/dashboard_api.hpp"

namespace gputwin {

namespace {

using nlohmann::json;

constexpr auto kReplaceInvalidUtf8 = json::error_handler_t::replace;

json optional_time(std::int64_t t) {
  return t >= 0 ? json(t) : json(nullptr);
}

SignedErrors signed_errors(std::vector<std::int64_t> errors) {
  SignedErrors s;
  s.n = errors.size();
  if (errors.empty()) return s;
  std::sort(errors.begin(), errors.end());
  double sum = 0;
  for (std::int64_t e : errors) sum += static_cast<double>(e);
  s.mean_s = sum / static_cast<double>(errors.size());
  const auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(errors.size())));
    return errors[std::clamp<std::size_t>(k, 1, errors.size()) - 1];
  };
  s.p10_s = rank(0.1);
  s.p25_s = rank(0.25);
  s.p50_s = rank(0.5);
  s.p75_s = rank(0.75);
  s.p90_s = rank(0.9);
  return s;
}

json to_json(const ScoreCell& c) {
  if (c.n == 0) {
    return json{{"n", 0},         {"mean", nullptr},        {"median", nullptr},
                {"p90", nullptr}, {"within_1min", nullptr}, {"within_10min", nullptr}};
  }
  return json{{"n", c.n},
              {"mean", c.mean_s},
              {"median", c.median_s},
              {"p90", c.p90_s},
              {"within_1min", c.within_1min},
              {"within_10min", c.within_10min}};
}

json to_json(const SignedErrors& s) {
  if (s.n == 0) return json{{"n", 0}};
  return json{{"n", s.n},       {"mean", s.mean_s}, {"p10", s.p10_s}, {"p25", s.p25_s},
              {"p50", s.p50_s}, {"p75", s.p75_s},   {"p90", s.p90_s}};
}

HttpResponse forecasts(const HttpRequest& request, const TwinPageData& data, const RunView& view) {
  const std::string filter = request.param("filter").value_or("all");
  if (filter != "all" && filter != "started" && filter != "waiting") {
    throw HttpError(400, "parameter 'filter': expected all, started or waiting");
  }
  const auto offset = static_cast<std::size_t>(int_param(request, "offset", 0, 0, 1'000'000'000));
  const auto limit = static_cast<std::size_t>(int_param(request, "limit", 50, 1, 1000));
  const auto max_points = static_cast<std::size_t>(int_param(request, "points", 2000, 0, 100'000));

  json info = json::object();
  for (const auto& [key, value] : data.records.info) info[key] = value;
  info["poll_rows"] = data.records.polls;
  info["failed_polls"] = data.records.failed_polls;

  const TwinScore& score = data.score;
  json cells = json::object();
  for (std::size_t f = 0; f < kForecasters.size(); ++f) {
    json row = json::object();
    for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) row[kLeadBuckets[b]] = to_json(score.cells[f][b]);
    cells[kForecasters[f]] = row;
  }
  json by_lead{{"gputwin", json::array()}, {"slurmctld", json::array()}};
  for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) {
    by_lead["gputwin"].push_back(to_json(data.by_lead[0][b]));
    by_lead["slurmctld"].push_back(to_json(data.by_lead[1][b]));
  }
  json points{{"lead", json::array()}, {"error", json::array()}};
  const std::size_t n = data.points.size();
  const std::size_t shown = std::min(n, max_points);
  for (std::size_t i = 0; i < shown; ++i) {
    // Evenly thinned, first and last kept.
    const std::size_t k = shown == 1 ? 0 : i * (n - 1) / (shown - 1);
    points["lead"].push_back(data.points[k].first);
    points["error"].push_back(data.points[k].second);
  }

  std::size_t started = 0;
  for (const JobForecastSummary& j : data.jobs) started += j.actual_start >= 0 ? 1 : 0;
  const std::int64_t end = view.info().end_s;
  json rows = json::array();
  std::size_t matching = 0;
  for (const JobForecastSummary& j : data.jobs) {
    const bool has_started = j.actual_start >= 0;
    if ((filter == "started" && !has_started) || (filter == "waiting" && has_started)) continue;
    if (matching++ < offset || rows.size() >= limit) continue;
    const auto job = view.job(j.job_id, end);
    const auto error = [&](std::int64_t predicted) {
      return predicted >= 0 && has_started ? json(predicted - j.actual_start) : json(nullptr);
    };
    rows.push_back(json{{"job_id", j.job_id},
                        {"name", job ? job->name : ""},
                        {"user", job ? job->user : ""},
                        {"state", job ? job->state : ""},
                        {"forecasts", j.forecasts},
                        {"first_made_at", j.first_made_at},
                        {"first_predicted", optional_time(j.first_predicted)},
                        {"first_error", error(j.first_predicted)},
                        {"last_made_at", j.last_made_at},
                        {"last_predicted", optional_time(j.last_predicted)},
                        {"last_error", error(j.last_predicted)},
                        {"slurm_estimate", optional_time(j.last_slurm_estimate)},
                        {"slurm_error", error(j.last_slurm_estimate)},
                        {"actual_start", optional_time(j.actual_start)}});
  }
  return HttpResponse::json(json{
      {"twin", info},
      {"score",
       {{"forecasts", score.forecasts},
        {"scored", score.scored},
        {"jobs", score.jobs},
        {"forecasters", kForecasters},
        {"buckets", kLeadBuckets},
        {"cells", cells}}},
      {"by_lead", by_lead},
      {"points", points},
      {"counts", {{"all", data.jobs.size()}, {"started", started}, {"waiting", data.jobs.size() - started}}},
      {"filter", filter},
      {"total", matching},
      {"offset", offset},
      {"limit", limit},
      {"jobs", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
}

HttpResponse actions(const HttpRequest& request, const TwinPageData& data) {
  const auto offset = static_cast<std::size_t>(int_param(request, "offset", 0, 0, 1'000'000'000));
  const auto limit = static_cast<std::size_t>(int_param(request, "limit", 200, 1, 10000));
  const std::string outcome = request.param("outcome").value_or("");
  if (outcome.size() > 100) throw HttpError(400, "parameter 'outcome': at most 100 characters");
  std::map<std::string, std::size_t> outcomes;  // by the outcome's first word: dry-run, done, skipped, refused, failed
  json rows = json::array();
  std::size_t matching = 0;
  for (const ActionRecord& a : data.records.actions) {
    const std::string kind = a.outcome.substr(0, a.outcome.find_first_of(" :("));
    ++outcomes[kind];
    if (!outcome.empty() && kind != outcome) continue;
    if (matching++ < offset || rows.size() >= limit) continue;
    rows.push_back(json{{"time", a.time},
                        {"controller", a.controller},
                        {"action", a.action},
                        {"target", a.target},
                        {"reason", a.reason},
                        {"outcome", a.outcome},
                        {"call", a.call}});
  }
  const auto mode = data.records.info.find("mode");
  return HttpResponse::json(json{
      {"mode", mode == data.records.info.end() ? "" : mode->second},
      {"outcomes", outcomes},
      {"total", matching},
      {"offset", offset},
      {"limit", limit},
      {"actions", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
}

}  // namespace

std::shared_ptr<const TwinPageData> load_twin_page_data(const RunView& view) {
  auto data = std::make_shared<TwinPageData>();
  view.read_database([&](ResultsDb& db) { data->records = read_twin_records(db); });
  data->score = score_twin(data->records);
  std::map<std::int64_t, JobForecastSummary> jobs;
  std::array<std::array<std::vector<std::int64_t>, kLeadBuckets.size()>, 2> errors;
  for (const ForecastRecord& f : data->records.forecasts) {
    JobForecastSummary& j = jobs[f.job_id];
    if (j.forecasts++ == 0) {
      j.job_id = f.job_id;
      j.first_made_at = f.made_at;
      j.first_predicted = f.predicted_start;
    }
    if (f.made_at >= j.last_made_at) {
      j.last_made_at = f.made_at;
      j.last_predicted = f.predicted_start;
      j.last_slurm_estimate = f.slurm_estimate;
    }
    if (f.actual_start >= 0) j.actual_start = f.actual_start;
    if (f.actual_start < 0) continue;
    std::int64_t lead = 0;  // a damaged folder's times may be anything: saturate instead of overflowing
    if (__builtin_sub_overflow(f.actual_start, f.made_at, &lead)) lead = INT64_MAX;
    const std::size_t bucket = lead_bucket(lead);
    for (std::size_t k = 0; k < 2; ++k) {
      const std::int64_t predicted = k == 0 ? f.predicted_start : f.slurm_estimate;
      if (predicted < 0) continue;
      errors[k][bucket].push_back(predicted - f.actual_start);
      errors[k][kLeadBuckets.size() - 1].push_back(predicted - f.actual_start);
      if (k == 0) data->points.emplace_back(lead, predicted - f.actual_start);
    }
  }
  data->jobs.reserve(jobs.size());
  for (auto& [id, j] : jobs) data->jobs.push_back(j);
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) data->by_lead[k][b] = signed_errors(std::move(errors[k][b]));
  }
  std::stable_sort(data->points.begin(), data->points.end());
  return data;
}

HttpResponse twin_api_response(const HttpRequest& request, const TwinPageData& data, const RunView& view) {
  if (request.path == "/api/forecasts") return forecasts(request, data, view);
  if (request.path == "/api/actions") return actions(request, data);
  throw HttpError(404, "no API endpoint " + request.path.substr(0, 100));
}

}  // namespace gputwin
