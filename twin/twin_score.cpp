#include "twin/twin_score.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "results/results_db.hpp"
#include "results/results_store.hpp"

namespace gputwin {

namespace {

// Queries of an open results database, with errors naming its file.
class Reader {
 public:
  explicit Reader(ResultsDb& results) : file_(results.path()), results_(results), db_(results.handle()) {}

  // True if the database has table `name`.
  bool has(std::string_view name) { return results_.has_table(name); }

  // Runs `sql`, calling `row` with each result row's statement.
  template <typename Row>
  void each(const char* sql, Row row) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db_);
      throw ResultsError(
          file_ + ": " + msg +
          (msg.find("no such table") != std::string::npos ? " (not a twin's results: run `gputwin twin` first)" : ""));
    }
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw ResultsError(file_ + ": " + sqlite3_errmsg(db_));
  }

 private:
  std::string file_;
  ResultsDb& results_;
  sqlite3* db_;
};

}  // namespace

std::size_t lead_bucket(std::int64_t lead_s) {
  if (lead_s < 600) return 0;
  if (lead_s < 3600) return 1;
  if (lead_s < 6 * 3600) return 2;
  return 3;
}

ScoreCell score_errors(std::vector<double> errors) {
  ScoreCell c;
  c.n = errors.size();
  if (errors.empty()) return c;
  std::sort(errors.begin(), errors.end());
  double sum = 0;
  std::uint64_t one = 0;
  std::uint64_t ten = 0;
  for (double e : errors) {
    sum += e;
    one += e <= 60 ? 1 : 0;
    ten += e <= 600 ? 1 : 0;
  }
  const auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(errors.size())));
    return errors[std::clamp<std::size_t>(k, 1, errors.size()) - 1];
  };
  c.mean_s = sum / static_cast<double>(errors.size());
  c.median_s = rank(0.5);
  c.p90_s = rank(0.9);
  c.within_1min = static_cast<double>(one) / static_cast<double>(errors.size());
  c.within_10min = static_cast<double>(ten) / static_cast<double>(errors.size());
  return c;
}

TwinRecords read_twin_records(const std::filesystem::path& path) {
  const std::filesystem::path file =
      std::filesystem::is_directory(path) ? path / "results.sqlite" : std::filesystem::path(path);
  ResultsDb results(file);  // checked whole first (results_db.hpp: InputError naming the file when it is damaged)
  return read_twin_records(results);
}

TwinRecords read_twin_records(ResultsDb& results) {
  Reader db(results);
  TwinRecords r;
  // Started jobs by start time, with their waits.
  db.each("SELECT start_time, start_time - submit_time FROM jobs WHERE start_time IS NOT NULL ORDER BY start_time",
          [&](sqlite3_stmt* s) { r.starts.emplace_back(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1)); });
  const auto optional = [](sqlite3_stmt* s, int i) -> std::int64_t {
    return sqlite3_column_type(s, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, i);
  };
  db.each("SELECT made_at, job_id, predicted_start, slurm_estimate, actual_start FROM forecasts ORDER BY rowid",
          [&](sqlite3_stmt* s) {
            r.forecasts.push_back(ForecastRecord{sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), optional(s, 2),
                                                 optional(s, 3), optional(s, 4)});
          });
  const auto text = [](sqlite3_stmt* s, int i) {
    const auto* t = sqlite3_column_text(s, i);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
  };
  // Folders of older twins (and hand-made ones) may lack the tables beside forecasts.
  if (db.has("actions")) {
    db.each("SELECT time, controller, action, target, reason, outcome, call FROM actions ORDER BY rowid",
            [&](sqlite3_stmt* s) {
              r.actions.push_back(ActionRecord{sqlite3_column_int64(s, 0), text(s, 1), text(s, 2), text(s, 3),
                                               text(s, 4), text(s, 5), text(s, 6)});
            });
  }
  if (db.has("twin_info"))
    db.each("SELECT key, value FROM twin_info", [&](sqlite3_stmt* s) { r.info[text(s, 0)] = text(s, 1); });
  if (db.has("polls")) {
    db.each("SELECT count(*), count(error) FROM polls", [&](sqlite3_stmt* s) {
      r.polls = static_cast<std::uint64_t>(sqlite3_column_int64(s, 0));
      r.failed_polls = static_cast<std::uint64_t>(sqlite3_column_int64(s, 1));
    });
  }
  return r;
}

TwinScore score_twin(const TwinRecords& records) {
  // Prefix sums of the started jobs' waits: the mean wait of the jobs started before t.
  const auto& starts = records.starts;
  std::vector<double> wait_prefix(starts.size() + 1, 0);
  for (std::size_t i = 0; i < starts.size(); ++i)
    wait_prefix[i + 1] = wait_prefix[i] + static_cast<double>(std::max<std::int64_t>(0, starts[i].second));
  const auto mean_wait_before = [&](std::int64_t t) {
    const auto it = std::upper_bound(starts.begin(), starts.end(), std::make_pair(t, INT64_MAX));
    const auto k = static_cast<std::size_t>(it - starts.begin());
    return k == 0 ? 0.0 : wait_prefix[k] / static_cast<double>(k);
  };

  TwinScore score;
  std::array<std::array<std::vector<double>, kLeadBuckets.size()>, kForecasters.size()> errors;
  std::unordered_set<std::int64_t> jobs;
  for (const ForecastRecord& f : records.forecasts) {
    ++score.forecasts;
    if (f.actual_start < 0) continue;
    ++score.scored;
    const std::int64_t made = f.made_at;
    const std::int64_t actual = f.actual_start;
    jobs.insert(f.job_id);
    std::int64_t lead = 0;  // a damaged folder's times may be anything: saturate instead of overflowing
    if (__builtin_sub_overflow(actual, made, &lead)) lead = INT64_MAX;
    const std::size_t bucket = lead_bucket(lead);
    const auto add = [&](std::size_t forecaster, double predicted) {
      const double e = std::abs(predicted - static_cast<double>(actual));
      errors[forecaster][bucket].push_back(e);
      errors[forecaster][kLeadBuckets.size() - 1].push_back(e);
    };
    if (f.predicted_start >= 0) add(0, static_cast<double>(f.predicted_start));
    if (f.slurm_estimate >= 0) add(1, static_cast<double>(f.slurm_estimate));
    add(2, static_cast<double>(made));
    add(3, static_cast<double>(made) + mean_wait_before(made));
  }
  score.jobs = jobs.size();
  for (std::size_t f = 0; f < kForecasters.size(); ++f) {
    for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) score.cells[f][b] = score_errors(std::move(errors[f][b]));
  }
  return score;
}

TwinScore score_twin(const std::filesystem::path& path) {
  return score_twin(read_twin_records(path));
}

void print_twin_score(const TwinScore& score, std::ostream& out) {
  out << fmt::format("Start-time forecasts: {} rows, {} of jobs that started ({} jobs)\n", score.forecasts,
                     score.scored, score.jobs);
  out << "Absolute error |predicted - actual start| by lead time (actual start - forecast time):\n";
  out << fmt::format("{:<10} {:<14} {:>6} {:>9} {:>9} {:>9} {:>7} {:>7}\n", "lead", "forecaster", "n", "mean_s",
                     "median_s", "p90_s", "<=1min", "<=10min");
  for (std::size_t b = 0; b < kLeadBuckets.size(); ++b) {
    for (std::size_t f = 0; f < kForecasters.size(); ++f) {
      const ScoreCell& c = score.cells[f][b];
      if (c.n == 0) {
        out << fmt::format("{:<10} {:<14} {:>6} {:>9} {:>9} {:>9} {:>7} {:>7}\n", kLeadBuckets[b], kForecasters[f], 0,
                           "-", "-", "-", "-", "-");
        continue;
      }
      out << fmt::format("{:<10} {:<14} {:>6} {:>9.0f} {:>9.0f} {:>9.0f} {:>6.0f}% {:>6.0f}%\n", kLeadBuckets[b],
                         kForecasters[f], c.n, c.mean_s, c.median_s, c.p90_s, 100 * c.within_1min,
                         100 * c.within_10min);
    }
  }
}

}  // namespace gputwin
