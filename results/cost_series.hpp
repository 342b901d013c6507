// The spend and burn-rate series per scope (the dashboard's Costs page), grouped once from the `costs` table's rows
// of a results folder or from a live run's cost samples, so that both answer the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/cloud_log.hpp"

namespace gputwin {

/// One point of a cost series.
struct CostPoint {
  std::int64_t time = 0;      ///< Simulated second.
  double burn_usd_per_h = 0;  ///< Spend rate then.
  double total_usd = 0;       ///< Spend so far.
};

/// One row of the `costs` table: a scope's spend at a time.
struct CostRow {
  std::string scope;          ///< "cluster", "idle", "user:NAME" or "account:NAME".
  double time_s = 0;          ///< Simulated seconds.
  double burn_usd_per_h = 0;  ///< Spend rate then.
  double total_usd = 0;       ///< Spend so far.
};

/// The rows write_results writes into the `costs` table for `samples`, in the same order.
std::vector<CostRow> cost_rows(const std::vector<CostSample>& samples);

/// Every scope's series (see the file comment).
class CostSeries {
 public:
  CostSeries() = default;
  /// Groups `rows` by scope, each series in time order (rows of the same scope and time keep their order).
  explicit CostSeries(std::vector<CostRow> rows);
  /// The scopes, sorted by name.
  [[nodiscard]] std::vector<std::string> scopes() const;
  /// `scope`'s points from `from_s` to `to_s` (both included), thinned evenly to at most `max_points` (0: all).
  [[nodiscard]] std::vector<CostPoint> points(std::string_view scope, std::int64_t from_s, std::int64_t to_s,
                                              std::size_t max_points) const;

 private:
  std::vector<std::pair<std::string, std::vector<CostPoint>>> scopes_;  // sorted by scope, each by time
};

}  // namespace gputwin
