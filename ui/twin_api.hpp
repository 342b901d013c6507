// The dashboard's pages of a twin's results folder (`gputwin serve TWIN_DIR`, `gputwin twin ... --serve`): each
// pending job's forecast starts beside its actual start, the errors by lead time, the accuracy summary of
// `gputwin twin-score` (the same code: twin/twin_score), and the twin's actions (dry-run or done).
//
//   GET /api/forecasts?filter=all|started|waiting&offset=&limit=&points=
//       score (twin-score's table), by_lead (signed error quantiles per lead bucket, gputwin and slurmctld),
//       points (lead, error) of gputwin's forecasts thinned to `points`, and one page of jobs in job id order
//   GET /api/actions?offset=&limit=&outcome=    the twin's actions in time order, one page
//
// The folder is read once (a twin being served: once per poll it writes) into TwinPageData; the answers are built
// from it. Times are seconds after the twin's epoch, as everywhere in its folder; errors are predicted - actual.
#pragma once

#include <filesystem>
#include <memory>

#include "results/run_view.hpp"
#include "twin/twin_score.hpp"
#include "ui/http_server.hpp"

namespace gputwin {

/// One job's forecasts, for the forecasts page's table.
struct JobForecastSummary {
  std::int64_t job_id = 0;
  std::uint32_t forecasts = 0;     ///< Forecast rows of this job (one per poll it was pending with a forecast).
  std::int64_t first_made_at = 0;  ///< The first forecast: when, and its predicted start (-1: none).
  std::int64_t first_predicted = -1;
  std::int64_t last_made_at = 0;  ///< The last forecast before it started (or the latest, still pending).
  std::int64_t last_predicted = -1;
  std::int64_t last_slurm_estimate = -1;  ///< slurmctld's estimate at that poll (-1: none).
  std::int64_t actual_start = -1;         ///< -1: not started.
};

/// Signed errors (predicted - actual start) of one forecaster in one lead bucket.
struct SignedErrors {
  std::uint64_t n = 0;
  double mean_s = 0;
  std::int64_t p10_s = 0, p25_s = 0, p50_s = 0, p75_s = 0, p90_s = 0;  ///< Nearest-rank quantiles.
};

/// A twin folder as the forecasts page shows it.
struct TwinPageData {
  TwinRecords records;                   ///< The folder's forecasts, actions, twin_info.
  TwinScore score;                       ///< twin-score's table.
  std::vector<JobForecastSummary> jobs;  ///< Per job, in job id order.
  /// Signed errors per lead bucket (kLeadBuckets) of gputwin [0] and slurmctld [1].
  std::array<std::array<SignedErrors, kLeadBuckets.size()>, 2> by_lead{};
  /// (lead, gputwin's signed error) of every scored forecast with a prediction, by lead.
  std::vector<std::pair<std::int64_t, std::int64_t>> points;
};

/// Reads a twin's folder, already read into `view`, into what its pages show (from the database the view holds: the
/// same poll, not checked again). Throws ResultsError when it is not a twin's folder, InputError when it is damaged.
std::shared_ptr<const TwinPageData> load_twin_page_data(const RunView& view);

/// Answers GET /api/forecasts and /api/actions from `data` (jobs' states from `view`). Throws HttpError 400 for a
/// bad parameter.
HttpResponse twin_api_response(const HttpRequest& request, const TwinPageData& data, const RunView& view);

}  // namespace gputwin
