// `gputwin twin-score DIR`: how good a twin's start-time forecasts were. Every forecast of a job that has since
// started is scored by its absolute error |predicted - actual|, in buckets of lead time (actual start - the time the
// forecast was made: under 10 min, 10 min-1 h, 1-6 h, over 6 h), side by side for four forecasters:
// - gputwin: the twin's simulation from the mirrored state;
// - slurmctld: the pending job's start_time at that moment (its own plan on time limits);
// - "now": the job starts at once (a naive baseline);
// - "now + mean wait": now plus the mean wait of the jobs that started before the forecast.
// A forecaster with no prediction for a row (a job beyond gputwin's horizon, no slurmctld estimate) is scored on
// the rows it predicted; `n` says how many.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/results_db.hpp"
#include "twin/twin_log.hpp"

namespace gputwin {

/// Error statistics of one forecaster in one lead-time bucket.
struct ScoreCell {
  std::uint64_t n = 0;      ///< Forecasts scored.
  double mean_s = 0;        ///< Mean absolute error.
  double median_s = 0;      ///< Median absolute error.
  double p90_s = 0;         ///< 90th percentile (nearest rank).
  double within_1min = 0;   ///< Share with error <= 60 s.
  double within_10min = 0;  ///< Share with error <= 600 s.
};

/// The forecasters scored, in table order.
inline constexpr std::array<const char*, 4> kForecasters = {"gputwin", "slurmctld", "now", "now+mean_wait"};
/// The lead-time buckets, in table order (the last is every forecast).
inline constexpr std::array<const char*, 5> kLeadBuckets = {"<10min", "10min-1h", "1h-6h", ">6h", "all"};

/// The score of a twin folder: cells[forecaster][bucket].
struct TwinScore {
  std::array<std::array<ScoreCell, kLeadBuckets.size()>, kForecasters.size()> cells{};  ///< Statistics.
  std::uint64_t forecasts = 0;  ///< Forecast rows in the folder.
  std::uint64_t scored = 0;     ///< Rows whose job has started.
  std::uint64_t jobs = 0;       ///< Distinct jobs scored.
};

/// One row of a twin folder's forecasts table (seconds after the twin's epoch; -1: none).
struct ForecastRecord {
  std::int64_t made_at = 0;           ///< When the forecast was made (a poll).
  std::int64_t job_id = 0;            ///< The pending job.
  std::int64_t predicted_start = -1;  ///< gputwin's predicted start (-1: beyond the horizon).
  std::int64_t slurm_estimate = -1;   ///< slurmctld's start_time then (-1: none).
  std::int64_t actual_start = -1;     ///< The job's actual start (-1: not started yet).
};

/// What a twin's folder holds about its forecasts and actions, read at once (the score, the dashboard's forecasts
/// page).
struct TwinRecords {
  std::vector<ForecastRecord> forecasts;  ///< Every forecast row, in table order (poll by poll).
  /// (start, wait) of every job that started, by start: the "now + mean wait" baseline.
  std::vector<std::pair<std::int64_t, std::int64_t>> starts;
  std::vector<ActionRecord> actions;        ///< Every action, in order (times after the epoch).
  std::map<std::string, std::string> info;  ///< twin_info: epoch_unix, mode, predictor, controllers, polls, ...
  std::uint64_t polls = 0;                  ///< Rows of the polls table.
  std::uint64_t failed_polls = 0;           ///< Polls that recorded an error.
};

/// Reads the results folder (or results.sqlite) `path`, checked whole first. Throws ResultsError when it is not a
/// twin's folder, InputError when it is damaged.
TwinRecords read_twin_records(const std::filesystem::path& path);
/// The same from an open results database (a RunView's: not checked again).
TwinRecords read_twin_records(ResultsDb& db);
/// Scores `records`.
TwinScore score_twin(const TwinRecords& records);
/// Scores the results folder (or results.sqlite) `path`. Throws ResultsError when it is not a twin's folder.
TwinScore score_twin(const std::filesystem::path& path);
/// The kLeadBuckets index of a lead time (actual start - forecast time) in seconds (never the last, "all").
std::size_t lead_bucket(std::int64_t lead_s);
/// The statistics of absolute errors `errors` (any order).
ScoreCell score_errors(std::vector<double> errors);
/// Prints the score as a table.
void print_twin_score(const TwinScore& score, std::ostream& out);

}  // namespace gputwin
