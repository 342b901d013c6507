// What a dashboard or a viewer shows of a run: a results folder (a finished run, or a twin's folder) read once from
// its results.sqlite into memory, then asked about any simulated time. Jobs as of a time (state, run time, counts by
// state, one filtered and sorted page), nodes as of a time (state, its group on the health grid, GPU use),
// partitions, cluster series over a window, one node's GPU series, and the event log up to a time.
//
//   RunView view(dir);                       // throws InputError naming the file
//   JobQuery q; q.at_s = view.info().end_s; q.filter = JobFilter::kPending; q.limit = 50;
//   JobPage page = view.jobs(q);             // page.total matching, page.rows the 50 of this page
//
// Memory is about 100 bytes per job (low-cardinality strings are interned) plus 16 per node event. Answers for a
// million jobs take a few milliseconds: counts and filters are linear scans of packed rows; sorts by a fixed column
// use a permutation computed once; sorts by a column that depends on the time walk to the page: by state, each
// state's jobs in job id order after the states before it (their counts come from the counting pass); by run time, a
// merge of the ended jobs by duration, the running ones by start and the rest (run time 0), each a permutation built
// once.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "results/cost_series.hpp"
#include "results/gantt.hpp"
#include "results/job_table.hpp"
#include "results/results_db.hpp"
#include "results/string_pool.hpp"

namespace gputwin {

/// The health-grid group of a node state: IDLE (also powered-down cloud nodes, sinfo's idle~), MIXED, ALLOCATED,
/// DRAIN (DRAINING, DRAINED, FAILING, FAIL), DOWN (also REBOOTING), UNKNOWN.
std::string_view node_state_group(std::string_view state);

/// A node as the grid and the Nodes tab show it at a time.
struct NodeRow {
  std::int32_t index = 0;
  std::string name;
  std::string state;  ///< Slurm's state name at that time (IDLE, MIXED, ALLOCATED, DRAINED, DOWN, ...).
  std::string group;  ///< node_state_group(state).
  std::int32_t cpus = 0, gpus = 0;
  std::int64_t memory_mb = 0;
  std::string gpu_type;
  double gpu_util_pct = -1;  ///< Mean over its GPUs at that time; -1 without GPU metrics.
  double gpu_mem_pct = -1;   ///< Framebuffer used over total; -1 without GPU metrics.
  std::int32_t xid = 0;      ///< Latest XID on any of its GPUs at that time, 0 for none.
};

/// A partition as the Overview's table shows it.
struct PartitionRow {
  std::string name, nodes, state, gpu_type;
  bool is_default = false;
  std::int64_t default_time_s = -1, max_time_s = -1;  ///< -1: unset / UNLIMITED.
  std::int32_t total_nodes = 0, total_gpus = 0;
  std::int32_t avail_nodes = 0;  ///< Nodes IDLE or MIXED at the time asked.
};

/// The Overview cards at a time.
struct Overview {
  std::int64_t at_s = 0;
  std::int64_t total_gpus = 0, allocated_gpus = 0;
  double gpu_util_pct = -1, gpu_mem_pct = -1;  ///< -1 without GPU metrics.
  std::int64_t running_jobs = 0, pending_jobs = 0, idle_nodes = 0, total_nodes = 0;
  std::array<std::int64_t, 6> node_groups{};  ///< IDLE, MIXED, ALLOCATED, DRAIN, DOWN, UNKNOWN.
};

/// The grid's group names, in Overview::node_groups order.
inline constexpr std::array<std::string_view, 6> kNodeGroups = {"IDLE",  "MIXED", "ALLOCATED",
                                                                "DRAIN", "DOWN",  "UNKNOWN"};

/// Where a job stands at `at_s` by its jobs row (seconds; start and end -1 when the row has none): not submitted
/// yet, pending, running, or in the state its row records (its final state; PENDING or RUNNING for a job the row
/// was written before it ended).
enum class JobPhase : std::uint8_t { kNotSubmitted, kPending, kRunning, kRecorded };

/// A job row's phase at `at_s` (RunView's rule, which a live run's present answers share).
JobPhase job_phase_at(std::int64_t submit_s, std::int64_t start_s, std::int64_t end_s, std::int64_t at_s);

/// Counts a job in the Overview's Running Jobs (with its GPUs in Allocated GPUs) or pending count, by its phase at
/// the Overview's time and the state its row records.
void count_job(Overview& overview, JobPhase phase, std::string_view recorded_state, std::int64_t gpus);

/// Counts a node in `state` (Slurm's name) in the Overview's health grid and Idle Nodes.
void count_node(Overview& overview, std::string_view state);

/// One node's GPUs at a metrics sample: sums over the GPUs sampled, in GPU order, and the last non-zero XID.
struct NodeGpuSample {
  double util = 0, fb_used_mib = 0;
  std::int32_t gpus = 0, xid = 0;
  /// Adds one GPU's sample.
  void add(double util_pct, double fb_mib, std::int32_t xid_code) {
    util += util_pct;
    fb_used_mib += fb_mib;
    if (xid_code != 0) xid = xid_code;
    ++gpus;
  }
};

/// Framebuffer of one GPU of type `gpu_type` in MiB (the catalogue's memory); 0 for a type it does not have.
double gpu_fb_total_mib(std::string_view gpu_type);

/// Sets each node row's GPU use (gpu_util_pct, gpu_mem_pct, xid) from its node's sample (`samples` by node, may be
/// empty: no GPU metrics); `fb_total_mib` is each node's per-GPU framebuffer.
void set_gpu_use(std::vector<NodeRow>& rows, std::span<const NodeGpuSample> samples,
                 std::span<const double> fb_total_mib);

/// Sets the Overview's GPU Util and GPU Memory (means over every GPU sampled) from every node's sample.
void set_gpu_use(Overview& overview, std::span<const NodeGpuSample> samples, std::span<const double> fb_total_mib);

/// Sets a partition row's total_nodes, total_gpus, gpu_type (its nodes' types, sorted, comma-separated) and
/// avail_nodes (IDLE or MIXED) from the rows of its member nodes (indices into `nodes`).
void set_partition_nodes(PartitionRow& partition, std::span<const std::int32_t> members,
                         std::span<const NodeRow> nodes);

/// One sample of the cluster series.
struct ClusterPoint {
  std::int64_t time = 0;
  std::int64_t jobs_pending = 0, jobs_running = 0, gpus_alloc = 0, nodes_down = 0, nodes_drain = 0;
  double gpu_util_pct = -1;  ///< Allocated GPUs over all GPUs, in percent.
  double gpu_power_w = 0;
};

struct ClusterSample;

/// A cluster sample as the series' point of a run with `total_gpus` GPUs (gpu_util_pct: allocated GPUs over all, in
/// percent; -1 without GPUs), as RunView::cluster_series reads a stored row.
ClusterPoint cluster_point(const ClusterSample& sample, std::size_t total_gpus);

/// The cluster series' points from `from_s` to `to_s` (at most `max_points`, every k-th sample) as
/// RunView::cluster_series gives them: `rows` are the stored samples after a change (`times` theirs, ascending), each
/// point repeats the last row at or before it, and points end at `end_s`.
std::vector<ClusterPoint> cluster_points(std::span<const std::int64_t> times, std::span<const ClusterPoint> rows,
                                         std::int64_t step_s, std::int64_t from_s, std::int64_t to_s,
                                         std::int64_t end_s, std::size_t max_points);

/// One sample of a node's GPU series.
struct GpuPoint {
  std::int64_t time = 0;
  std::int32_t gpu = 0;
  double util_pct = 0, fb_used_mib = 0, power_w = 0, temp_c = 0;
  std::int32_t xid = 0;
  std::int64_t job_id = -1;
};

/// GPU utilisation of every node over a window, in a bounded size (the Monitoring tab's all-nodes overlay): each
/// node's value at a sample time is the mean over its GPUs' stored samples then (as NodeRow::gpu_util_pct).
struct NodeUtilSeries {
  std::vector<std::int64_t> time;      ///< Sample times.
  std::vector<double> min, mean, max;  ///< Across the nodes sampled at each time, in percent (-1: none sampled).
  std::vector<std::int32_t> sampled;   ///< Nodes sampled at each time.
  /// One node's line: its mean over the window and its value at each time (-1: not sampled then).
  struct Line {
    std::int32_t node = 0;
    double mean_pct = 0;
    std::vector<double> util_pct;
  };
  /// Every sampled node's line when there are at most `max_lines` of them (by node), else the `max_lines` with the
  /// highest mean over the window (busiest first, ties by node).
  std::vector<Line> lines;
  std::size_t nodes_sampled = 0;  ///< Nodes with a sample in the window.
  bool all_nodes = true;          ///< `lines` holds every sampled node.
};

/// Calls `sink` for each stored per-GPU sample of node `node` at the times first x step, (first + stride) x step, ...
/// up to `to_s`, in (GPU, time) order: how gpu_series_of and node_util_series_of read a run's per-GPU series (from
/// results.sqlite, or from the samples a live run's copy makes).
using GpuSampleReader =
    std::function<void(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride, std::int64_t to_s,
                       const std::function<void(const GpuPoint&)>& sink)>;

/// RunView::gpu_series over `read` (per-GPU period `step_s`, `nodes` nodes).
std::vector<GpuPoint> gpu_series_of(const GpuSampleReader& read, std::int64_t step_s, std::size_t nodes,
                                    std::int32_t node, std::int64_t from_s, std::int64_t to_s, std::size_t max_points);
/// RunView::node_util_series over `read` (per-GPU period `step_s`, `nodes` nodes, samples ending at `end_s`); it reads
/// only each sample's time and util_pct.
NodeUtilSeries node_util_series_of(const GpuSampleReader& read, std::int64_t step_s, std::size_t nodes,
                                   std::int64_t end_s, std::int64_t from_s, std::int64_t to_s, std::size_t max_points,
                                   std::size_t max_lines);

/// One line of the event log.
struct EventLine {
  std::int64_t time = 0;
  /// "job", "node", "fault", "action" (a twin's), "preemption", "scaling" (the autoscaler's and an operator's
  /// power ups and downs), "quota" (spend quota warnings and refusals) or "operation" (a cluster operation's steps).
  std::string kind;
  std::string subject;  ///< Node name, job id, ...
  std::string text;     ///< What happened.
};

/// The event log's text of an autoscaler's record ("create (demand 3 node(s))"; `demand` < 0: none), the same in
/// the results' event log and a live run's stream (as the three below).
std::string scaling_event_text(std::string_view action, std::int64_t demand);
/// A quota event's text ("cancel job 12: spend 10.00 USD, projected 12.50 USD"; `job_id` 0: none).
std::string quota_event_text(std::string_view action, std::int64_t job_id, double spend_usd, double projected_usd);
/// A cluster operation step's text ("restart_workers data: node_restarted, 2 job run(s) ended").
std::string operation_event_text(std::string_view action, std::string_view name, std::string_view step,
                                 std::int64_t jobs_killed);
/// A preemption's text ("preempted by 5 (REQUEUE), ends at 130").
std::string preemption_event_text(std::int64_t preemptor_id, std::string_view mode, std::int64_t end_s);

/// A Jobs table's rows (indices) ordered by submit, start and end time, ties in row order, each without the rows that
/// never had that time: what the job lines of an event log are read from.
struct JobEventOrders {
  std::vector<std::uint32_t> by_submit, by_start, by_end;
};
/// The orders of `table`'s rows. O(jobs log jobs).
JobEventOrders job_event_orders(const JobTable& table);
/// Appends the job lines of the event log at `at_s` (RunView::events' "job" kind): the last `limit` submits, starts
/// and ends at or before it, each in time order.
void append_job_events(const JobTable& table, const JobEventOrders& orders, std::int64_t at_s, std::size_t limit,
                       std::vector<EventLine>& out);
/// [lo, hi): the nodes of a node_events row (first node, node count) that exist among `nodes` nodes; a row naming
/// none (a hand-edited index or count) gives an empty range.
std::pair<std::int64_t, std::int64_t> node_range(std::int64_t first, std::int64_t count, std::size_t nodes);

/// Wait times (start minus submit) of the jobs started by a time.
struct WaitDistribution {
  std::size_t jobs = 0;  ///< Jobs started by then.
  double mean_s = 0;
  std::int64_t p50_s = 0, p90_s = 0, p95_s = 0, p99_s = 0, max_s = 0;  ///< Nearest-rank quantiles.
  /// The empirical CDF at most `points` long: (wait, fraction of those jobs that waited at most that long).
  std::vector<std::pair<std::int64_t, double>> cdf;
};

/// The wait distribution of the jobs of `table` started at or before `at_s` (RunView::waits), its CDF in at most
/// `points` points.
WaitDistribution wait_distribution(const JobTable& table, std::int64_t at_s, std::size_t points);

/// What the run is.
struct RunDescription {
  std::string scenario, policy, kind;  ///< kind: "run" for a simulation, "twin" for a live cluster's folder.
  std::uint64_t seed = 0;
  std::int64_t begin_s = 0, end_s = 0;  ///< The time slider's range.
  std::int64_t epoch_unix_s = 0;        ///< Unix time of simulated time 0 (0 if unknown).
  std::int64_t cluster_step_s = 0;      ///< Period of the cluster series (0: none stored).
  std::int64_t gpu_step_s = 0;          ///< Period of the GPU series (0: none stored).
  std::size_t jobs = 0, nodes = 0, total_gpus = 0;
};

/// A results folder in memory. Thread-safe: every query is const or locks its lazily built caches.
class RunView {
 public:
  /// Reads `results_dir`/results.sqlite, checked as `check` says. Throws InputError naming the file or table at
  /// fault.
  explicit RunView(const std::filesystem::path& results_dir, ResultsCheck check = ResultsCheck::kWhole);
  ~RunView();
  RunView(const RunView&) = delete;
  RunView& operator=(const RunView&) = delete;

  /// What the run is.
  [[nodiscard]] const RunDescription& info() const { return info_; }
  /// One page of the Jobs table.
  [[nodiscard]] JobPage jobs(const JobQuery& query) const;
  /// Job `job_id` as of `at_s`; empty if there is no such job.
  [[nodiscard]] std::optional<JobRow> job(std::int64_t job_id, std::int64_t at_s) const;
  /// Every node as of `at_s`; with `with_gpu_use` false, without GPU utilisation, memory and XID (one SQLite read
  /// per node saved).
  [[nodiscard]] std::vector<NodeRow> nodes(std::int64_t at_s, bool with_gpu_use = true) const;
  /// Every partition, with its available nodes as of `at_s`.
  [[nodiscard]] std::vector<PartitionRow> partitions(std::int64_t at_s) const;
  /// The Overview cards as of `at_s`.
  [[nodiscard]] Overview overview(std::int64_t at_s) const;
  /// The cluster series from `from_s` to `to_s`, at most `max_points` samples (evenly thinned).
  [[nodiscard]] std::vector<ClusterPoint> cluster_series(std::int64_t from_s, std::int64_t to_s,
                                                         std::size_t max_points) const;
  /// Node `node`'s GPU series from `from_s` to `to_s`, at most `max_points` samples per GPU.
  [[nodiscard]] std::vector<GpuPoint> gpu_series(std::int32_t node, std::int64_t from_s, std::int64_t to_s,
                                                 std::size_t max_points) const;
  /// Every node's GPU utilisation from `from_s` to `to_s` at most `max_points` times (thinned as gpu_series), as a
  /// min/mean/max band across nodes and at most `max_lines` nodes' own lines (NodeUtilSeries). Answers in
  /// O(points x (3 + max_lines)) whatever the node count; reads each node's rows in the window once.
  [[nodiscard]] NodeUtilSeries node_util_series(std::int64_t from_s, std::int64_t to_s, std::size_t max_points,
                                                std::size_t max_lines) const;
  /// The last `limit` events at or before `at_s`, oldest first; `kind` "" for all, else one kind.
  [[nodiscard]] std::vector<EventLine> events(std::int64_t at_s, std::size_t limit, std::string_view kind) const;
  /// Jobs slurmctld would still hold at `at_s`, in job id order: pending, running, and ended at most
  /// `min_job_age_s` before it (slurm.conf's MinJobAge). Jobs rejected at submit (REJECTED) are left out.
  [[nodiscard]] std::vector<JobRow> controller_jobs(std::int64_t at_s, std::int64_t min_job_age_s) const;
  /// Jobs as of `at_s` submitted by `to_s` that had not ended before `from_s`, in job id order, at most `max_jobs`
  /// (jobs rejected at submit left out: Slurm's accounting has no record of them).
  [[nodiscard]] std::vector<JobRow> jobs_between(std::int64_t at_s, std::int64_t from_s, std::int64_t to_s,
                                                 std::size_t max_jobs) const;
  /// The GPU indices ("0-3") job `job_id` held on each of its nodes in the run that began at `start_s`, as node
  /// index and index list; empty when the run stored no GPU placement (metrics off).
  [[nodiscard]] std::vector<std::pair<std::int32_t, std::string>> job_gpus(std::int64_t job_id,
                                                                           std::int64_t start_s) const;
  /// Every (account, user) pair that submitted a job, sorted.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> account_users() const;
  /// Every QOS a job ran under, sorted.
  [[nodiscard]] std::vector<std::string> qos_names() const;
  /// Wait times of the jobs started by `at_s`, the CDF thinned to `points`.
  [[nodiscard]] WaitDistribution waits(std::int64_t at_s, std::size_t points) const;
  /// The cost series the run recorded, per scope ("cluster", "idle", "account:acct01", ...; none for a run without
  /// costs): read by the first call.
  [[nodiscard]] const CostSeries& costs() const;
  /// The Gantt view of `query` (GanttIndex, made by the first call; jobs still running run until the run's end).
  [[nodiscard]] GanttView gantt(const GanttQuery& query) const;
  /// Builds every sort order and the Gantt index now (else each is built by the first page that asks for it: about
  /// 0.2 s per order and 0.5 s for the index for a million jobs), so that every page answers at once.
  void prepare_orders() const;
  /// The jobs table the job queries answer from.
  [[nodiscard]] const JobTable& job_table() const { return *table_; }
  /// Index of the node named `name`; -1 if none.
  [[nodiscard]] std::int32_t node_index(std::string_view name) const;
  /// Runs `read` on the folder's database (opened and checked whole when the view was made) under the view's lock,
  /// for readers of tables the view does not hold (a twin's forecasts, the summary) without checking the file again.
  void read_database(const std::function<void(ResultsDb&)>& read) const;

 private:
  using Job = JobTable::Job;
  struct NodeInfo;
  [[nodiscard]] std::string_view text(std::uint32_t id) const { return strings_.text(id); }
  [[nodiscard]] std::string node_state_at(std::size_t node, std::int64_t at_s) const;
  /// Every node's GPU sample at or before `at_s` (one read of the sample); empty without GPU metrics.
  [[nodiscard]] std::vector<NodeGpuSample> gpu_samples(std::int64_t at_s) const;
  /// Each node's per-GPU framebuffer (MiB).
  [[nodiscard]] std::vector<double> fb_totals() const;
  void load_jobs();
  void load_nodes();

  std::filesystem::path dir_;
  std::unique_ptr<ResultsDb> db_;
  mutable std::mutex db_mutex_;  // SQLite handle: one query at a time
  RunDescription info_;
  bool has_job_gpus_ = false;
  bool node_event_ranges_ = false;   // node_events has node_count (schema 2); else one node per row
  StringPool strings_;               // node event states
  std::unique_ptr<JobTable> table_;  // the jobs table
  std::vector<NodeInfo> nodes_;
  std::unordered_map<std::string, std::int32_t> node_by_name_;
  std::vector<std::int64_t> node_event_time_;  // node events grouped per node, each group by time
  std::vector<std::uint32_t> node_event_state_;
  std::vector<std::uint32_t> node_event_begin_;  // per node, its first event; size nodes + 1
  bool node_event_rows_in_time_order_ = false;   // node_events rows 1..n in time order (as this build writes them)
  std::int64_t node_event_rows_ = 0;
  mutable std::mutex cache_mutex_;
  mutable std::mutex samples_mutex_;        // gpu_samples' cache: one reader at a time
  mutable std::int64_t samples_time_ = -1;  // the GPU sample time samples_ holds; -1: none
  mutable std::vector<NodeGpuSample> samples_;
  /// GpuSampleReader over results.sqlite's gpu_metrics (db_mutex_ held).
  void read_gpu_samples(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride,
                        std::int64_t to_s, const std::function<void(const GpuPoint&)>& sink) const;
  /// The same with only each sample's time and util_pct read (what node_util_series_of reads).
  void read_gpu_utils(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride, std::int64_t to_s,
                      const std::function<void(const GpuPoint&)>& sink) const;
  mutable std::optional<JobEventOrders> job_orders_;  // built by the first events() asking for jobs
  void load_costs() const;
  mutable bool costs_loaded_ = false;
  mutable CostSeries costs_;
  mutable std::optional<GanttIndex> gantt_;  // built by the first gantt() or prepare_orders()
};

}  // namespace gputwin
