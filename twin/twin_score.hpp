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
#include <string>
#include <vector>

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

/// Scores the results folder (or results.sqlite) `path`. Throws ResultsError when it is not a twin's folder.
TwinScore score_twin(const std::filesystem::path& path);
/// Prints the score as a table.
void print_twin_score(const TwinScore& score, std::ostream& out);

}  // namespace gputwin
