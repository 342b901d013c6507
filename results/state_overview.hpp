// What the dashboard's Overview and Nodes tab show of a run at one instant, computed from the simulation's state in
// memory instead of from the results folder written from it: a live run (ui/live_run) answers them from the copy
// of its state it makes between two instants, without waiting for that copy to be written.
//
// The figures are, field by field, what RunView gives at the state's second for the folder write_results writes of
// the same state, recorder and metrics input (tests/results/state_overview_test.cpp): the same rules (job_phase_at,
// count_job, count_node, set_gpu_use, set_partition_nodes in run_view.hpp) over the same inputs, and the GPU use of
// the per-GPU series' sample at or before that second from the same code (gpu_samples_at), not a second model.
//
//   const StateOverview figures = state_overview(info, state, recorder, &metrics, now);
//   figures.overview.running_jobs;   // = RunView(dir).overview(figures.at_s).running_jobs
//
// Cost: O(nodes + jobs + node events) for the cards and states, plus, with per-GPU metrics, the GPU binding of every
// run and the per-GPU series up to its last sample without writing it (tens of milliseconds for 100,000 jobs on
// 4,096 nodes; see BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/fault_log.hpp"
#include "results/job_table.hpp"
#include "results/recorder.hpp"
#include "results/results_store.hpp"
#include "results/run_view.hpp"

namespace gputwin {

/// The Overview, node list and partitions of a run at one second, as RunView answers them.
struct StateOverview {
  std::int64_t at_s = 0;                 ///< The second shown: the state's time, truncated.
  RunDescription info;                   ///< RunView::info() of the written folder, end_s = at_s.
  Overview overview;                     ///< RunView::overview(at_s).
  std::vector<NodeRow> nodes;            ///< RunView::nodes(at_s) with GPU use.
  std::vector<PartitionRow> partitions;  ///< RunView::partitions(at_s).
};

/// The figures of `state` at `now` (its simulated time) with the node history of `recorder` and, when `metrics` is
/// given and enabled, GPU use from the per-GPU series write_results would write of it (`metrics->horizon` is where
/// the series stop: `now` for a copy of a run in progress). `state` and `recorder` are only read.
StateOverview state_overview(const RunInfo& info, const ClusterState& state, const RunRecorder& recorder,
                             const MetricsInput* metrics, SimTime now);

/// The Jobs table of `state` as RunView reads it back from the folder write_results writes of it: the same rows (the
/// jobs table's columns, in job id order) and the same pending reasons (`recorder`'s reason history), so the same
/// pages, jobs and counts at any second. O(jobs + reason changes); each started job's node list is formatted.
std::unique_ptr<JobTable> state_job_table(const ClusterState& state, const RunRecorder& recorder);

/// The event log of a run's state in memory, as RunView::events reads it from the folder write_results writes of the
/// same state, recorder, fault log and cloud log (a live run's snapshot): job lines from `table` (the state's Jobs
/// table, state_job_table), node lines from the recorder's node history, fault and preemption lines, and the
/// controllers' scaling, quota and operation lines; not the twin's actions. It keeps a copy of what it reads (not the
/// state): the history's rows and the other lines.
class StateEventLog {
 public:
  /// The log of `state` with `recorder`'s history, `faults` and `cloud` (either may be null); `table` must outlive
  /// the log.
  StateEventLog(const ClusterState& state, const RunRecorder& recorder, const FaultLog* faults, const CloudLog* cloud,
                const JobTable& table);
  /// RunView::events(at_s, limit, kind) of the folder written of the same state.
  [[nodiscard]] std::vector<EventLine> events(std::int64_t at_s, std::size_t limit, std::string_view kind) const;

 private:
  /// A line and the time its rows are ordered by (a fault's own, to the microsecond; else the line's).
  struct Timed {
    double order_s = 0;
    EventLine line;
  };
  /// Appends the last `limit` of `lines` (ordered as RunView reads them back) at or before `at_s`.
  static void append_last(const std::vector<Timed>& lines, std::int64_t at_s, std::size_t limit,
                          std::vector<EventLine>& out);
  const JobTable* table_;
  JobEventOrders job_orders_;
  std::vector<std::string> node_names_;
  std::vector<NodeEvent> node_rows_;                 // in time order, ties in the recorder's order
  std::vector<Timed> faults_;                        // in time order, ties in the log's order backwards
  std::vector<Timed> preemptions_;                   // in time order, ties in the recorder's order
  std::vector<Timed> scaling_, quota_, operations_;  // each in time order, ties in the log's order
};

/// The GPU indices each run of each job held on each node: the job_gpus rows write_results writes with metrics (the
/// GpuBinding of the runs up to the horizon), as RunView::job_gpus reads them back, from memory. Compact (a node
/// index and a mask per allocation with GPUs); it keeps nothing of the state it was made from.
class JobGpuPlacement {
 public:
  /// The placement of every run of `state` (each job's current or last run and those requeues discarded), bound as
  /// write_results binds them with `horizon` ending the runs still going.
  JobGpuPlacement(const ClusterState& state, SimTime horizon);
  /// RunView::job_gpus(job_id, start_s): (node index, "0-3,6") of the run of job id `job_id` that began at second
  /// `start_s`, by node index.
  [[nodiscard]] std::vector<std::pair<std::int32_t, std::string>> job_gpus(std::int64_t job_id,
                                                                           std::int64_t start_s) const;

 private:
  struct Run {
    std::int64_t job_id = 0, start_s = 0;
    std::uint32_t first = 0, count = 0;  // its allocations with GPUs: nodes_[first ..], masks_[first ..]
  };
  std::vector<Run> runs_;  // by (job id, start), in the order write_results writes them within each
  std::vector<std::int32_t> nodes_;
  std::vector<std::uint64_t> masks_;
};

}  // namespace gputwin
