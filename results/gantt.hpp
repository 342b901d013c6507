// The Gantt chart of a run's jobs on its nodes at a level of detail (the dashboard's Simulator view): an index of
// every job's run on every node, read for a time window and a range of nodes. Built from a Jobs table, so a written
// run (RunView) and a live run's copy in memory draw the same chart from the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "results/job_table.hpp"

namespace gputwin {

/// One Gantt view request: a time window and a range of nodes, drawn on a canvas of `width` x `height` pixels.
struct GanttQuery {
  std::int64_t from_s = 0, to_s = 0;        ///< Time window.
  std::int32_t node_from = 0, node_to = 0;  ///< Nodes [node_from, node_to).
  std::int32_t width = 1200, height = 800;  ///< Canvas size in pixels (bounds the answer's size).
  std::size_t max_segments = 20'000;        ///< Above this many jobs in view, the answer is a density grid.
};

/// One job on one node in a Gantt view (exact mode).
struct GanttSegment {
  std::int32_t row = 0;  ///< Node index minus GanttQuery::node_from.
  std::int64_t start_s = 0, end_s = 0;
  std::int64_t job_id = 0;
};

/// A Gantt view at its level of detail: the jobs themselves when few enough are in view and every node has a pixel
/// row, else a grid of cells (groups of nodes x columns of time), each the busy fraction of its node-seconds.
struct GanttView {
  bool exact = true;
  std::vector<GanttSegment> segments;  ///< Exact mode: the jobs in view, clipped to the window.
  std::int32_t rows = 0, cols = 0;     ///< Grid mode: cells are rows x cols, row-major.
  std::int32_t nodes_per_row = 1;      ///< Grid mode: nodes per row (the last row may hold fewer).
  std::vector<std::uint8_t> busy;      ///< Grid mode: busy fraction per cell, 0-255.
  std::size_t jobs_in_view = 0;        ///< Job runs on nodes overlapping the window (segments before LOD).
};

/// Every started job's run on each of its nodes, grouped per node and ordered by start: about 24 bytes per job per
/// node, built in one pass over the table (0.5 s for a million jobs).
class GanttIndex {
 public:
  /// Indexes `table`'s started jobs on the nodes named in their node lists (`node_by_name`: name to index, of
  /// `node_count` nodes; names it lacks, and node lists that are not hostlists, draw on no node). A job still running
  /// runs until `open_end_s`.
  GanttIndex(const JobTable& table, const std::unordered_map<std::string, std::int32_t>& node_by_name,
             std::size_t node_count, std::int64_t open_end_s);
  /// The view of `query`.
  [[nodiscard]] GanttView view(const GanttQuery& query) const;

 private:
  struct NodeRun {
    std::int64_t start = 0, end = 0;
    std::int64_t job_id = 0;
  };
  std::vector<std::uint32_t> runs_begin_;  // per node, its first NodeRun; size nodes + 1
  std::vector<NodeRun> runs_;              // grouped per node, each group by start (then table order)
  std::vector<std::int64_t> longest_run_;  // per node, its longest run (bounds the window search)
};

}  // namespace gputwin
