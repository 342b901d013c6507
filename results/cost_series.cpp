#include "results/cost_series.hpp"

#include <algorithm>

#include "engine/sim_time.hpp"

namespace gputwin {

std::vector<CostRow> cost_rows(const std::vector<CostSample>& samples) {
  std::vector<CostRow> rows;
  rows.reserve(samples.size());
  for (const CostSample& c : samples) rows.push_back({c.scope, to_seconds_f(c.time), c.burn_usd_per_h, c.total_usd});
  return rows;
}

CostSeries::CostSeries(std::vector<CostRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const CostRow& a, const CostRow& b) {
    return a.scope != b.scope ? a.scope < b.scope : a.time_s < b.time_s;
  });
  for (CostRow& r : rows) {
    if (scopes_.empty() || scopes_.back().first != r.scope)
      scopes_.emplace_back(std::move(r.scope), std::vector<CostPoint>{});
    // Whole seconds, as the dashboard's clock; a time beyond any simulated one (a hand-edited file) is clamped
    // rather than converted out of range.
    const double t = std::clamp(r.time_s, -9.0e18, 9.0e18);
    scopes_.back().second.push_back({static_cast<std::int64_t>(t), r.burn_usd_per_h, r.total_usd});
  }
}

std::vector<std::string> CostSeries::scopes() const {
  std::vector<std::string> names;
  names.reserve(scopes_.size());
  for (const auto& [scope, points] : scopes_) names.push_back(scope);
  return names;
}

std::vector<CostPoint> CostSeries::points(std::string_view scope, std::int64_t from_s, std::int64_t to_s,
                                          std::size_t max_points) const {
  std::vector<CostPoint> out;
  for (const auto& [name, points] : scopes_) {
    if (name != scope) continue;
    for (const CostPoint& p : points) {
      if (p.time >= from_s && p.time <= to_s) out.push_back(p);
    }
  }
  if (max_points == 0 || out.size() <= max_points) return out;
  std::vector<CostPoint> thinned;
  for (std::size_t k = 0; k < max_points; ++k)
    thinned.push_back(out[k * (out.size() - 1) / (max_points - 1 ? max_points - 1 : 1)]);
  return thinned;
}

}  // namespace gputwin
