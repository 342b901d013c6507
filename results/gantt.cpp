#include "results/gantt.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include "model/hostlist.hpp"

namespace gputwin {

GanttIndex::GanttIndex(const JobTable& table, const std::unordered_map<std::string, std::int32_t>& node_by_name,
                       std::size_t node_count, std::int64_t open_end_s) {
  // (node, job) pairs of every started job, then grouped per node by a counting sort, each group by start.
  const std::vector<JobTable::Job>& rows = table.rows();
  std::vector<std::pair<std::int32_t, std::uint32_t>> pairs;
  pairs.reserve(rows.size());
  for (std::uint32_t j = 0; j < rows.size(); ++j) {
    const JobTable::Job& job = rows[j];
    if (job.start < 0 || job.nodes_len == 0) continue;
    std::vector<std::string> names;
    try {
      names = expand_hostlist(table.node_list(job));
    } catch (const std::exception&) {
      continue;  // a node_list that is not a hostlist (a damaged results.sqlite) draws on no node, as in partitions()
    }
    for (const std::string& name : names) {
      const auto it = node_by_name.find(name);
      if (it != node_by_name.end() && it->second >= 0 && static_cast<std::size_t>(it->second) < node_count)
        pairs.emplace_back(it->second, j);
    }
  }
  runs_begin_.assign(node_count + 1, 0);
  for (const auto& [node, job] : pairs) ++runs_begin_[static_cast<std::size_t>(node) + 1];
  for (std::size_t n = 0; n < node_count; ++n) runs_begin_[n + 1] += runs_begin_[n];
  runs_.assign(pairs.size(), {});
  std::vector<std::uint32_t> next(runs_begin_.begin(), runs_begin_.end() - 1);
  for (const auto& [node, job] : pairs) {
    const JobTable::Job& j = rows[job];
    runs_[next[static_cast<std::size_t>(node)]++] = {j.start, j.end >= 0 ? j.end : open_end_s, j.job_id};
  }
  longest_run_.assign(node_count, 0);
  for (std::size_t n = 0; n < node_count; ++n) {
    const auto b = runs_.begin() + runs_begin_[n];
    const auto e = runs_.begin() + runs_begin_[n + 1];
    // Each group holds its runs in table order (the counting sort keeps it): a stable sort by start breaks ties by it.
    std::stable_sort(b, e, [](const NodeRun& a, const NodeRun& c) { return a.start < c.start; });
    for (auto it = b; it != e; ++it) longest_run_[n] = std::max(longest_run_[n], it->end - it->start);
  }
}

GanttView GanttIndex::view(const GanttQuery& query) const {
  GanttView view;
  const auto node_count = static_cast<std::int32_t>(longest_run_.size());
  const std::int32_t first = std::clamp(query.node_from, 0, node_count);
  const std::int32_t last = std::clamp(query.node_to, first, node_count);
  const std::int64_t from = query.from_s;
  const std::int64_t to = std::max(query.to_s, from + 1);
  // Visits the runs of node n that overlap [from, to).
  const auto for_runs = [&](std::int32_t n, auto&& visit) {
    const auto b = runs_.begin() + runs_begin_[static_cast<std::size_t>(n)];
    const auto e = runs_.begin() + runs_begin_[static_cast<std::size_t>(n) + 1];
    const std::int64_t earliest = from - longest_run_[static_cast<std::size_t>(n)];
    auto it = std::lower_bound(b, e, earliest, [](const NodeRun& r, std::int64_t t) { return r.start < t; });
    for (; it != e && it->start < to; ++it) {
      if (it->end > from) visit(*it);
    }
  };
  for (std::int32_t n = first; n < last; ++n) for_runs(n, [&](const NodeRun&) { ++view.jobs_in_view; });

  const std::int32_t height = std::max(query.height, 1);
  const std::int32_t width = std::max(query.width, 1);
  if (last - first <= height && view.jobs_in_view <= query.max_segments) {
    view.segments.reserve(view.jobs_in_view);
    for (std::int32_t n = first; n < last; ++n) {
      for_runs(n, [&](const NodeRun& r) {
        view.segments.push_back({n - first, std::max(r.start, from), std::min(r.end, to), r.job_id});
      });
    }
    return view;
  }
  view.exact = false;
  view.nodes_per_row = std::max<std::int32_t>(1, (last - first + height - 1) / height);
  view.rows = (last - first + view.nodes_per_row - 1) / view.nodes_per_row;
  view.cols = width;
  const double col_s = static_cast<double>(to - from) / width;
  std::vector<double> busy_s(static_cast<std::size_t>(view.rows) * static_cast<std::size_t>(view.cols), 0.0);
  for (std::int32_t n = first; n < last; ++n) {
    double* row = busy_s.data() + static_cast<std::size_t>((n - first) / view.nodes_per_row) * view.cols;
    for_runs(n, [&](const NodeRun& r) {
      const double a = static_cast<double>(std::max(r.start, from) - from);
      const double b = static_cast<double>(std::min(r.end, to) - from);
      const auto c0 = std::min(static_cast<std::int32_t>(a / col_s), view.cols - 1);
      const auto c1 = std::min(static_cast<std::int32_t>(b / col_s), view.cols - 1);
      for (std::int32_t c = c0; c <= c1; ++c) {
        const double lo = std::max(a, c * col_s);
        const double hi = std::min(b, (c + 1) * col_s);
        if (hi > lo) row[c] += hi - lo;
      }
    });
  }
  view.busy.resize(busy_s.size());
  for (std::int32_t r = 0; r < view.rows; ++r) {
    const std::int32_t nodes_in_row = std::min(view.nodes_per_row, last - first - r * view.nodes_per_row);
    const double capacity = col_s * nodes_in_row;
    for (std::int32_t c = 0; c < view.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * view.cols + c;
      // A node shared by several jobs can count more than its time: the cell saturates.
      view.busy[i] = static_cast<std::uint8_t>(std::lround(std::min(1.0, busy_s[i] / capacity) * 255.0));
    }
  }
  return view;
}

}  // namespace gputwin
