// A simulation in progress, served by the same dashboard API and slurmrestd-compatible API as a finished run
// (`gputwin run SCENARIO --serve`). The simulation runs on its own thread under a controllable clock: paused or
// running, paced at `speed` simulated seconds per wall second or as fast as it goes; an operator may drain and
// resume nodes between instants.
//
// How the readers see it (the design): the readers (RunView, the slurmrestd-compatible source, /metrics) are the
// ones a finished run uses, unchanged. When a reader asks, the simulation's thread copies its in-memory state
// (ClusterState, the recorder's history, XIDs, node conditions, the fault log, and the reference GPU load of each
// run it has not seen before) between two instants and goes on; a snapshot thread (at niceness 19)
// writes the copy with write_results into a private snapshot folder and opens a RunView on it: a snapshot. A
// request takes the newest snapshot (a shared_ptr: it lives as long as a request uses it); if it is older than
// `refresh_ms` the request asks for a new one and still answers from the one there (the next request gets the
// newer one), and it waits only when there is none yet or an operator acted since (so an action shows in the
// answer that follows it). So a snapshot costs the simulation a copy of its state (about 0.1-0.5 us per job: see
// BENCHMARKS.md), at most every `refresh_ms` and only while someone reads; the writing runs beside it.
//
// The Overview and the node list do not wait for the writing: present() hands out the newest copy itself, from
// which a present thread (niceness 19 too) computes what RunView would answer at the copy's second
// (results/state_overview: the same rules and the same per-GPU model code, O(nodes + jobs + runs)); readers answer from
// the newest copy so computed. Copies for it are asked for by the snapshots' rule (from half refresh_ms on), made
// even while the snapshot thread writes an older one, and written only if a snapshot reader asks. So the Overview of
// a large run is as fresh as its copies, and the first reader of a run too large to write quickly
// gets an answer as soon as the simulation reaches an instant instead of a 503. The Jobs tab likewise (present_jobs):
// while it is read, the present thread also builds each copy's Jobs table (results/state_overview: state_job_table,
// the rows the snapshot written of it would hold, in the JobTable a RunView pages through); and the
// slurmrestd-compatible reads (present_slurm: the table, the figures' nodes and partitions, the runs' GPU placement,
// read by RunViewSlurmSource as a written run is). Events (job
// starts and ends, node state changes, operator actions, preemptions, and the scaling, quota and operations
// controllers' records) are pushed to a bounded buffer the SSE stream reads,
// without a snapshot.
//
// The end: the last copy answers every page while the results are written (each part built when first read), and
// is written as a snapshot only if a snapshot reader (an earlier second) asks before the results are;
// then the results answer.
//
//   LiveRun live(scenario, {}, {.speed = 60, .out_dir = "out/q"});
//   auto snap = live.snapshot();       // snap->view: a RunView as of snap->now_s
//   live.drain_node("gpu001", "maintenance");
//   live.stop();                       // Ctrl-C: ends the run now; results written as a run stopped then
//
// The core knows nothing of this: SimWorld asks a RunGate (sim/run_gate.hpp) before each instant and the recorder
// forwards what it hears to a RunObserver; LiveRun is both.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_telemetry.hpp"
#include "model/run_observer.hpp"
#include "model/scenario.hpp"
#include "results/gantt.hpp"
#include "results/job_table.hpp"
#include "results/metrics_export.hpp"
#include "results/run_view.hpp"
#include "results/state_overview.hpp"
#include "sim/run_gate.hpp"
#include "sim/runner.hpp"
#include "ui/run_view_slurm_source.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {

/// What the readers of a run see: a RunView of a results folder and the simulated second it shows.
struct RunSnapshot {
  std::filesystem::path dir;      ///< The results folder the view reads.
  std::unique_ptr<RunView> view;  ///< The run as of `now_s`.
  std::int64_t now_s = 0;         ///< Simulated second shown (a finished run: its end).
  bool live = false;              ///< True while the simulation runs.
  std::int64_t slurm_at_s = 0;    ///< Simulated second the slurmrestd-compatible source shows.

  /// The slurmrestd-compatible API's source over `view` at `slurm_at_s`, built by the first call (it reads every
  /// node and association: seconds for a large run, which only the slurmrestd-compatible API needs).
  [[nodiscard]] const RunViewSlurmSource& slurm() const;

 private:
  mutable std::once_flag slurm_once_;
  mutable std::unique_ptr<RunViewSlurmSource> slurm_;
};

/// What the Monitoring tab's series and /metrics show of a live run as of one copy of its state, computed
/// from the copy in memory by the code that writes them (build_metrics): the rows and the scrape the snapshot written
/// of that copy would give.
struct LiveMetrics {
  std::int64_t cluster_step_s = 0;  ///< Period of the cluster series (0: the run keeps no metrics).
  std::vector<std::int64_t> times;  ///< The cluster series' stored rows' times (the samples after a change).
  std::vector<ClusterPoint> rows;   ///< ... and the rows, as RunView::cluster_series reads them.
  /// /metrics at the copy's second (empty when the run keeps no metrics: the written snapshot answers then).
  std::optional<MetricsScrape> scrape;
  std::int64_t gpu_step_s = 0;           ///< Period of the per-GPU series (0: none kept).
  std::vector<GpuPoint> gpu_samples;     ///< Every per-GPU sample the snapshot would store, by node, GPU and time.
  std::vector<std::size_t> node_starts;  ///< Node n's samples: [node_starts[n], node_starts[n + 1]).
  std::vector<std::string> node_names;   ///< By node index.
  /// GpuSampleReader over gpu_samples (the Monitoring tab's per-node lines and a node's per-GPU drill-down).
  void read_gpu_samples(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride,
                        std::int64_t to_s, const std::function<void(const GpuPoint&)>& sink) const;
  /// `scrape` as /metrics writes it, with dcgm-exporter's label names or snake_case ones: written by the first call
  /// for each (a second caller waits), then the same text for every request on this copy (45 MB for 32,768 GPUs,
  /// formatting which costs about 0.35 s of CPU). Empty without a scrape.
  [[nodiscard]] const std::string& scrape_text(bool dcgm_labels) const;

 private:
  mutable std::array<std::once_flag, 2> text_once_;
  mutable std::array<std::string, 2> text_;
};

/// What the Overview and the Nodes tab show of a live run as of one copy of its state: computed from the copy in
/// memory (results/state_overview) rather than from the snapshot written of it, once (by LiveRun's present thread, or
/// by a reader that cannot wait for it; a second caller waits for the first); the same figures, field by field, as
/// that snapshot's RunView at now_s().
class LivePresent {
 public:
  /// The simulated second of the copy.
  [[nodiscard]] std::int64_t now_s() const { return now_s_; }
  /// The figures at now_s() (computed by the first call; the copy is released then, unless its Jobs table is wanted).
  [[nodiscard]] const StateOverview& figures() const;
  /// The Jobs table of the copy (results/state_overview: state_job_table), the rows the snapshot written of it would
  /// hold: built by the first call (a second caller waits for it); null when the copy was let go without it (nobody
  /// was reading the Jobs tab when it was made).
  [[nodiscard]] const JobTable* jobs() const;
  /// The slurmrestd-compatible API's source at now_s(): the copy's Jobs table, its node rows and partitions (the
  /// figures'), and the GPU indices of every run (JobGpuPlacement), what the snapshot written of it would give; built
  /// by the first call; null when the copy was let go without it (nobody was reading that API when it was made).
  [[nodiscard]] const RunViewSlurmSource* slurm() const;
  /// The cluster series and the /metrics scrape at now_s() (LiveMetrics): built by the first call (a second caller
  /// waits for it); null when the copy was let go without them (nobody was reading them when it was made).
  [[nodiscard]] const LiveMetrics* metrics() const;
  /// The event log at any second up to now_s() (StateEventLog over the copy's Jobs table): built by the first call;
  /// null when the copy was let go without it (nobody was reading the event log when it was made).
  [[nodiscard]] const StateEventLog* events() const;
  /// The Gantt index at now_s() (GanttIndex over the copy's Jobs table and nodes; jobs still running run until
  /// now_s()): built by the first call; null when the copy was let go without it (nobody was reading the Gantt).
  [[nodiscard]] const GanttIndex* gantt() const;
  /// The cost series up to now_s(), as the snapshot written of the copy would hold them (none without a cost
  /// model): grouped by the first call.
  [[nodiscard]] const CostSeries& costs() const;

 private:
  friend class LiveRun;
  LivePresent(std::int64_t now_s, std::uint64_t generation, std::function<StateOverview()> compute,
              std::function<std::unique_ptr<JobTable>()> compute_jobs,
              std::function<std::shared_ptr<const JobGpuPlacement>()> compute_placement,
              std::function<std::unique_ptr<LiveMetrics>()> compute_metrics,
              std::function<std::unique_ptr<StateEventLog>(const JobTable&)> compute_events,
              std::function<std::unique_ptr<GanttIndex>(const JobTable&)> compute_gantt)
      : now_s_(now_s),
        generation_(generation),
        compute_(std::move(compute)),
        compute_jobs_(std::move(compute_jobs)),
        compute_placement_(std::move(compute_placement)),
        compute_metrics_(std::move(compute_metrics)),
        compute_events_(std::move(compute_events)),
        compute_gantt_(std::move(compute_gantt)) {}
  /// Lets the copy go without building its Jobs table (nor its slurmrestd-compatible source).
  void drop_jobs() const;
  /// Lets the copy go without building its slurmrestd-compatible source.
  void drop_slurm() const;
  /// Lets the copy go without building its LiveMetrics.
  void drop_metrics() const;
  /// Lets the copy go without building its event log.
  void drop_events() const;
  /// Lets the copy go without building its Gantt index.
  void drop_gantt() const;
  std::int64_t now_s_;
  std::uint64_t generation_;  // operator actions applied when copied
  mutable std::once_flag once_;
  mutable std::function<StateOverview()> compute_;  // holds the copy until used
  mutable StateOverview figures_;
  mutable std::mutex jobs_mutex_;
  mutable std::function<std::unique_ptr<JobTable>()> compute_jobs_;  // holds the copy until used or dropped
  mutable std::unique_ptr<JobTable> jobs_;
  mutable std::mutex slurm_mutex_;
  mutable std::function<std::shared_ptr<const JobGpuPlacement>()> compute_placement_;  // holds the copy too
  mutable std::unique_ptr<RunViewSlurmSource> slurm_;
  mutable std::mutex metrics_mutex_;
  mutable std::function<std::unique_ptr<LiveMetrics>()> compute_metrics_;  // holds the copy too
  mutable std::unique_ptr<LiveMetrics> metrics_;
  mutable std::mutex events_mutex_;
  mutable std::function<std::unique_ptr<StateEventLog>(const JobTable&)> compute_events_;  // holds the copy too
  mutable std::unique_ptr<StateEventLog> events_;
  mutable std::mutex gantt_mutex_;
  mutable std::function<std::unique_ptr<GanttIndex>(const JobTable&)> compute_gantt_;  // holds the copy too
  mutable std::unique_ptr<GanttIndex> gantt_;
  std::shared_ptr<const CloudLog> cloud_;  // the copy's cloud log (null: the run has none)
  mutable std::once_flag costs_once_;
  mutable CostSeries costs_;
};

/// A finished run's snapshot: `dir` read once, shown at `at_s` (-1: its end) by the slurmrestd-compatible source.
/// `check`: how much of its results.sqlite is checked first (kWrittenHere only for results this process just wrote).
std::shared_ptr<const RunSnapshot> finished_snapshot(const std::filesystem::path& dir, std::int64_t at_s = -1,
                                                     ResultsCheck check = ResultsCheck::kWhole);

/// One line of the live event stream.
struct LiveEvent {
  std::uint64_t seq = 0;  ///< 1, 2, ... in the order things happened.
  std::int64_t time = 0;  ///< Simulated second.
  /// "job", "node", "action" (an operator's), "preemption", "scaling", "quota" or "operation" (the controllers'
  /// records, as the results' event log has them).
  std::string kind;
  std::string subject;  ///< Job id or node name.
  std::string text;     ///< What happened ("RUNNING on gpu[001-002]", "DRAINED", "drain (maintenance)").
};

/// The clock and progress of a live run.
struct LiveStatus {
  std::string state;             ///< "running", "paused", "ended" (the run ended by itself or was stopped) or "failed".
  std::int64_t now_s = 0;        ///< Simulated second.
  double speed = 0;              ///< Simulated seconds per wall second; 0: as fast as it goes.
  std::uint64_t submitted = 0;   ///< Jobs submitted so far.
  std::uint64_t ended = 0;       ///< Jobs ended so far.
  std::uint64_t total_jobs = 0;  ///< Jobs in the workload.
  std::uint64_t events = 0;      ///< Simulator events processed.
  std::uint64_t snapshots = 0;   ///< Snapshots written so far.
  std::uint64_t copies = 0;      ///< Copies of the state made so far (for snapshots and for the in-memory answers).
  std::uint64_t reused_copies = 0;  ///< ... of them made into the memory of an earlier copy no reader held any more.
  double snapshot_wall_s = 0;       ///< Wall seconds the snapshot thread spent writing and opening them.
  double snapshot_copy_wall_s = 0;  ///< Wall seconds the simulation's thread spent copying its state (every copy).
  /// Share of the run's wall time (loading included) its thread was on a CPU, once it has ended (0 before): below 1
  /// when other threads took its CPU (readers beside a run on a busy machine).
  double simulation_on_cpu = 0;
  /// Seconds of the run (loading included) its thread was ready but waited for a CPU, once it has ended (Linux's
  /// schedstat; 0 where unknown): the part of a slowdown other threads' CPU caused, apart from the machine's speed.
  double simulation_cpu_wait_s = 0;
  std::string error;  ///< Why the run failed (state "failed").
};

/// Niceness of a live run's readers' threads (HTTP workers, the present and snapshot threads): the lowest priority a
/// niceness gives, so on a busy machine they take the CPU the simulation leaves, and little of its own when the kernel
/// puts one beside it (about 1.5% of a core at 19, 10% at 10: BENCHMARKS.md "Live run under load, round 5").
inline constexpr int kReaderNice = 19;

/// A live run's settings.
struct LiveOptions {
  double speed = 0;           ///< Initial speed: simulated seconds per wall second; 0: as fast as it goes.
  bool start_paused = false;  ///< Start paused (the clock at the first submit).
  /// A snapshot is reused this long, and at least 19x what its copy cost the simulation (unless an operator acted
  /// since).
  int refresh_ms = 1000;
  std::filesystem::path out_dir;      ///< Where the results go when the run ends; empty: not written.
  std::size_t event_buffer = 10'000;  ///< Events kept for the stream (older ones are dropped).
  /// Called on the simulation's thread once the run has ended and its last copy is made, before the results are
  /// written (tests hold the end there).
  std::function<void()> at_end;
  /// Called on the present thread before it makes a copy's figures (tests hold it there, as a busy machine may).
  std::function<void()> before_present;
};

/// What an operator's request did wrong: `status` is the HTTP status to answer with (404 no such node, 409 the run
/// has ended), `slurm_error` Slurm's error number for the slurmrestd-compatible API (slurm_errno.h; 0: none fits).
class LiveError : public std::runtime_error {
 public:
  LiveError(int status, const std::string& message, int slurm_error = 0)
      : std::runtime_error(message), status_(status), slurm_error_(slurm_error) {}
  [[nodiscard]] int status() const { return status_; }
  [[nodiscard]] int slurm_error() const { return slurm_error_; }

 private:
  int status_;
  int slurm_error_;
};

/// What a submit into a live run did.
struct LiveSubmitted {
  std::int64_t job_id = 0;  ///< The id the job got (after the largest id in the table, as slurmctld's next id).
  std::int64_t time = 0;    ///< Simulated second it was submitted.
  /// kNone when it was queued; else why the submit-time checks refused it (BadConstraints, InvalidAccount,
  /// InvalidQOS, a submit limit, a quota): it is then in the job table ended REJECTED, as a loaded job would be.
  PendingReason refused = PendingReason::kNone;
};

/// An operator's change to a pending job (slurmrestd's POST job/{id}; scontrol hold/release/update).
using LiveJobUpdate = SlurmJobUpdate;

/// What a fault injected into a live run did.
struct LiveInjected {
  std::int64_t time = 0;  ///< Simulated second of the fault.
  bool struck = false;    ///< False when the node was out (being repaired, powered down, booting): no effect.
  std::string effect;     ///< What the simulator does (the XID catalogue's effect: reset_gpu, reboot_node, ...).
  std::string symptom;    ///< How it shows itself (gpu_error, gpu_lost, hang, ...).
};

/// What an operator's restart of a node did.
struct LiveRestarted {
  std::int64_t time = 0;   ///< Simulated second it took effect (the node drained, or rebooting if it was idle).
  bool rebooting = false;  ///< The node was idle and reboots now; else it drains and reboots once its jobs end.
};

/// What an operator's scaling did.
struct LiveScaled {
  std::int64_t time = 0;           ///< Simulated second.
  std::vector<std::string> nodes;  ///< Nodes powered up (or down).
};

/// A simulation running on its own thread, with snapshots for readers and controls for an operator.
class LiveRun final : public RunGate, public RunObserver {
 public:
  /// Starts simulating `scenario` (options.gate and options.observer are set here) and returns once its workload
  /// is loaded (the first snapshot is taken when a reader first asks). Throws what the run throws before it begins
  /// (a bad workload).
  LiveRun(Scenario scenario, RunOptions options, LiveOptions live);
  /// Stops the run (as stop()) and waits for it.
  ~LiveRun() override;
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  /// The newest snapshot, taken now if the one there is older than refresh_ms or an operator acted since. Throws
  /// LiveError 503 if there is none (the simulation did not come to an instant within 30 s, or writing failed).
  std::shared_ptr<const RunSnapshot> snapshot();
  /// What the Overview and the Nodes tab show now, from the newest copy of the simulation's state in memory (not
  /// waiting for it to be written): a copy is asked for as snapshot() asks for one, but from half refresh_ms on (or
  /// an operator acted since), without a snapshot being written for it. A present thread makes each copy's figures as
  /// it comes; a reader gets the newest whose figures are made (it waits only for the first copy, or for one made
  /// after an operator's action, and makes its figures if the thread has not yet). With `at_s`, the newest at or
  /// before that second (of the two newest made: a page asks for the clock's second it last heard, which a copy made
  /// since may have passed). Null when none is (an earlier second: the written snapshot has the history) or once the
  /// run has finished (its results answer then). Throws LiveError 503 if there is none yet (the simulation did not
  /// come to an instant within 30 s).
  std::shared_ptr<const LivePresent> present(std::optional<std::int64_t> at_s = std::nullopt);
  /// What the Jobs tab shows now: the newest copy in memory whose Jobs table is built (LivePresent::jobs), copies
  /// asked for as present() asks. While someone reads the Jobs tab (asked within the last 10 s), the present thread
  /// builds each copy's table after its figures (and the sort order `sort`, `descending` of the pages asked within
  /// the last 30 s), so a page answers from the newest built at once; the first request, or the first after an
  /// operator's action, waits for a copy's table. Null once the run has finished (its results answer then), or while
  /// they are written if the end's copy has no table (the end's snapshot answers). Throws LiveError 503 as present()
  /// does.
  std::shared_ptr<const LivePresent> present_jobs(JobSort sort = JobSort::kJobId, bool descending = false);
  /// What the slurmrestd-compatible API shows now: the newest copy whose source (LivePresent::slurm) is built, as
  /// present_jobs, the sources built by the present thread while that API was read within the last 60 s. Null once
  /// the run has finished or is writing its results (the written snapshot answers then). Throws LiveError 503 as
  /// present() does.
  std::shared_ptr<const LivePresent> present_slurm();
  /// What the Monitoring tab's cluster series and /metrics show now: the newest copy whose LiveMetrics are built, as
  /// present_jobs, built by the present thread while either was read within the last 60 s (Prometheus scrapes every
  /// 15-60 s). Null once the run has finished or is writing its results. Throws LiveError 503 as present() does.
  std::shared_ptr<const LivePresent> present_metrics();
  /// What the Logs and Events tab shows now: the newest copy whose event log (LivePresent::events) is built, as
  /// present_jobs, built by the present thread (with the copy's Jobs table) while it was read within the last 60 s.
  /// Null once the run has finished or is writing its results. Throws LiveError 503 as present() does.
  std::shared_ptr<const LivePresent> present_events();
  /// What the Gantt shows now: the newest copy whose Gantt index (LivePresent::gantt) is built, as present_events,
  /// built by the present thread (with the copy's Jobs table) while the Gantt was read within the last 60 s. Null once
  /// the run has finished or is writing its results. Throws LiveError 503 as present() does.
  std::shared_ptr<const LivePresent> present_gantt();
  /// The clock and progress now.
  [[nodiscard]] LiveStatus status() const;
  /// Holds the clock (the simulation waits between two instants).
  void pause();
  /// Lets the clock run again from where it was held.
  void resume();
  /// Sets the pace: `factor` simulated seconds per wall second (> 0), or 0 for as fast as it goes.
  void set_speed(double factor);
  /// Drains node `name` with Slurm reason `reason` now; returns the simulated second it took effect. Throws
  /// LiveError 404 for an unknown node, 409 once the run has ended.
  std::int64_t drain_node(const std::string& name, const std::string& reason);
  /// Returns node `name` to service now (Slurm's RESUME); as drain_node.
  std::int64_t resume_node(const std::string& name);
  /// Restarts node `name` now as `scontrol reboot ASAP nextstate=RESUME reason=R` does, through the health
  /// controller's node lifecycle (HealthController::operator_reboot): drained now, rebooted (REBOOTING for the
  /// scenario's faults.repair.reboot_s) once its jobs have ended, then resumed. Throws LiveError 404 for an unknown
  /// node, 409 for a node out of service already (DOWN, FAIL, REBOOTING, powered down, in the health controller's care)
  /// or once the run has ended.
  LiveRestarted restart_node(const std::string& name, const std::string& reason);
  /// Cancels job `job_id` now (pending: it leaves the queue; running: it ends CANCELLED). Throws LiveError 404 for
  /// a job slurmctld would not know (none, or not submitted yet), 409 for one already ended or once the run ended.
  std::int64_t cancel_job(std::int64_t job_id);
  /// Submits `spec` now (POST job/submit): its id and submit time are the run's to give; `spec.partition` names a
  /// partition of the scenario (empty: the default); a `run_time_s` below 0 runs the job for its whole time limit.
  /// The job goes through the checks of a loaded job and is scheduled by the run's policy; `hold` holds it at once
  /// (JobHeldAdmin, until an update releases it). Throws LiveError 400 (error 2000) for an unknown partition, 409
  /// once the run ended or when the run holds kMaxJobs jobs.
  LiveSubmitted submit_job(JobSpec spec, bool hold = false);
  /// Changes pending job `job_id` now (POST job/{id}). Throws LiveError 404 (2017) for a job slurmctld would not
  /// know, 409 for one already ended (2021), running (2073, Job is no longer pending execution) or held when only a
  /// priority is given (2042); returns the simulated second it took effect.
  std::int64_t update_job(std::int64_t job_id, const LiveJobUpdate& update);
  /// Injects XID `xid` (catalogued in faults/xid_catalogue) on GPU `gpu` of node `name` now, through the fault
  /// mechanics as /faults/inject's faults go. Throws LiveError 404 for an unknown node, 400 for an XID the catalogue
  /// does not have or a GPU the node lacks.
  LiveInjected inject_fault(const std::string& name, std::uint32_t xid, std::uint32_t gpu);
  /// Powers up `count` (> 0) powered-down cloud pool nodes now, or powers down -`count` idle ones, through the
  /// scaling controller (ScalingController::operator_scale). Throws LiveError 409 when the scenario has no pool.
  LiveScaled scale(std::int32_t count);
  /// Ends the simulation at the current simulated time (Ctrl-C): the results are written as a run stopped then
  /// (`run --until NOW`), and the run's end is served from them.
  void stop();
  /// Waits until the simulation has ended and its results are written (or `timeout` passed); true if it has.
  bool wait_finished(std::chrono::milliseconds timeout);
  /// Events after `seq`, at most `max`; waits up to `wait` for one when there is none yet. Empty after the wait.
  std::vector<LiveEvent> events_after(std::uint64_t seq, std::size_t max, std::chrono::milliseconds wait);
  /// The newest event's seq (0 for none).
  [[nodiscard]] std::uint64_t last_event_seq() const;
  /// Wakes every events_after waiter and makes later ones return at once (the server is stopping).
  void close_streams();
  /// True after close_streams.
  [[nodiscard]] bool streams_closed() const;
  /// The run's outcome once it has ended (for a summary); null before, or if it failed.
  [[nodiscard]] const RunOutcome* outcome() const;

  // ---- RunGate and RunObserver: called on the simulation's thread ----
  void on_run_start(const RunOutcome& outcome) override;
  bool before_instant(SimWorld& world, SimTime next) override;
  void on_job_started(JobIndex job, SimTime now) override;
  void on_job_ended(JobIndex job, SimTime now) override;
  void on_node_state(NodeIndex node, NodeState state, SimTime now) override;
  void on_job_preempted(JobIndex job, JobIndex preemptor, SimTime at, bool requeue, SimTime now) override;
  void on_job_reason(JobIndex, PendingReason, SimTime) override {}

 private:
  using WallClock = std::chrono::steady_clock;
  /// An operator's action, run on the simulation's thread between instants.
  struct Command {
    std::uint64_t id = 0;
    std::function<void(SimWorld&)> apply;
  };
  void simulate(Scenario scenario, RunOptions options);
  /// Runs `apply` on the simulation's thread between two instants and waits for it; returns the simulated second
  /// it ran at. A LiveError it throws there (a refusal) is thrown again here.
  std::int64_t run_command(std::function<void(SimWorld&)> apply);
  [[nodiscard]] NodeIndex node_named(const std::string& name) const;
  /// The job slurmctld would know by `job_id` (submitted; ended ones too), or LiveError 404 (2017).
  [[nodiscard]] static JobIndex submitted_job(const ClusterState& state, std::int64_t job_id);
  /// A copy of the simulation's state at an instant (made on the simulation's thread, then only read): what a
  /// snapshot is written from and what the in-memory answers are computed from.
  struct SnapshotInput;
  /// The cluster series and the /metrics scrape of a copy, as the snapshot written of it would give them.
  static std::unique_ptr<LiveMetrics> live_metrics(const SnapshotInput& input);
  /// Copies the simulation's state (simulation's thread), publishes it for the in-memory answers (answering present
  /// requests up to `present_request`) and, when `write`, hands it to the snapshot thread (answering snapshot
  /// requests up to `request`).
  void copy_state(SimWorld& world, bool write, std::uint64_t request, std::uint64_t generation,
                  std::uint64_t present_request);
  /// How long a copy is reused: `refresh`, and at least 19x what the last copy cost the simulation (under mutex_).
  [[nodiscard]] WallClock::duration reuse_period(std::chrono::milliseconds refresh) const;
  /// The snapshot thread: writes each copy handed to it and publishes the snapshot.
  void write_snapshots();
  /// The present thread (niceness 19): makes the figures of each new copy, so that readers answer
  /// from the newest made ones at once.
  void compute_presents();
  /// The present thread's part for the Jobs tab, the event log and the slurmrestd-compatible API: builds `next`'s
  /// Jobs table (and the sort orders asked for), event log and source while they are read, else lets them go (not
  /// when `keep_all`: the end's copy, whose parts a reader may still build); `lock` holds mutex_ on entry and on
  /// return. False once the run has finished meanwhile.
  bool build_tables(const std::shared_ptr<LivePresent>& next, std::int64_t now_ns, bool keep_all,
                    std::unique_lock<std::mutex>& lock);
  /// Builds a part of `next` with `build`, outside `lock` (held on entry and on return), and makes `next` the copy
  /// `ready` names if it is built and no newer copy is there. False once the run has finished meanwhile.
  bool build_part(const std::shared_ptr<LivePresent>& next, std::shared_ptr<LivePresent> LiveRun::*ready,
                  bool (*build)(const LivePresent&), std::unique_lock<std::mutex>& lock);
  /// present_jobs and present_slurm: the newest copy in `ready` if an operator has not acted since, else the copy
  /// present() gives (or the next one) with `build` made on it; `mark` notes the reader's interest again.
  std::shared_ptr<const LivePresent> present_built(std::shared_ptr<LivePresent> LiveRun::*ready,
                                                   const std::function<bool(const LivePresent&)>& build,
                                                   const std::function<void()>& mark);
  /// Waits until the snapshot thread holds no copy (it may refer to the run's state); simulation's thread.
  void wait_snapshot_idle();
  /// What the observer notes of each event (formatted to a LiveEvent when published).
  struct RawEvent {
    SimTime time = 0;
    std::uint32_t what = 0;   // kRaw...
    std::uint32_t index = 0;  // job or node index; for kRawText, index into sim_texts_
    std::uint32_t other = 0;  // JobState, NodeState or the preemptor
  };
  static constexpr std::uint32_t kRawJobStarted = 0, kRawJobEnded = 1, kRawNodeState = 2, kRawText = 4;
  /// Notes the scaling, quota and operations controllers' records made since the last call as events, in time
  /// order with the observer's (simulation's thread).
  void collect_controller_records();
  /// Publishes the simulation's events and the operators' (simulation's thread only).
  void publish_events();
  /// Publishes the operators' clock events (any thread).
  void publish_actions();
  [[nodiscard]] bool has_pending_events() const;
  [[nodiscard]] LiveEvent format(const RawEvent& raw);
  /// An event from another thread (pause, resume, speed).
  void add_event(SimTime time, const char* kind, std::string subject, std::string text);
  /// An event on the simulation's thread (an operator's node action, the end), in order with the observer's.
  void add_sim_event(SimTime time, const char* kind, std::string subject, std::string text);
  void rebase(SimTime sim_now);

  LiveOptions options_;
  std::filesystem::path snapshot_root_;  // private temporary folder of the snapshots (removed at the end)
  std::vector<std::string> node_names_;  // the scenario's nodes, by index (fixed for the run)
  std::thread thread_;

  // Shared with the readers, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable cv_;         // the simulation's thread waits here (paused, paced) and readers wait for it
  std::atomic<bool> attention_{true};  // something for the simulation's thread: look under mutex_
  bool paused_ = false;
  double speed_ = 0;
  bool rebase_ = true;  // pace from the current simulated time on (after a pause or a speed change)
  bool stop_requested_ = false;
  bool started_ = false;          // the workload is loaded and the run begins
  bool simulation_done_ = false;  // the simulation has ended (its results may still be being written)
  bool finished_ = false;
  std::string error_;
  std::deque<Command> commands_;
  std::uint64_t next_command_ = 0, applied_command_ = 0;
  std::uint64_t action_generation_ = 0;  // operator actions applied; a snapshot older than the last is stale
  // Snapshot requests: asked for by readers; the newest one a copy was made for; the newest one a snapshot answers.
  std::uint64_t snapshot_requests_ = 0, snapshot_copied_ = 0, snapshot_done_ = 0;
  std::shared_ptr<SnapshotInput> snapshot_input_;  // a copy handed to the snapshot thread, not yet taken
  std::shared_ptr<SnapshotInput> end_input_;       // the end's copy, until a snapshot reader asks or the results are
  bool snapshot_busy_ = false;                     // a copy is handed over or being written
  bool snapshot_thread_stop_ = false;
  std::condition_variable snapshot_cv_;  // the snapshot thread waits here
  std::thread snapshot_thread_;
  std::exception_ptr failure_;  // what ended the run, if it failed
  std::shared_ptr<const RunSnapshot> current_;
  std::uint64_t current_generation_ = 0;
  WallClock::time_point current_taken_{};  // when current_'s state was copied: its age is the data's
  std::uint64_t snapshots_ = 0;
  // In-memory answers: requests for a copy, the newest one a copy was made for, the newest one answered; the newest
  // copy's figures, the operator actions it shows and when it was copied.
  std::uint64_t present_requests_ = 0, present_copied_ = 0, present_done_ = 0;
  std::shared_ptr<LivePresent> present_;                 // the newest copy (its figures maybe not made yet)
  std::shared_ptr<LivePresent> to_compute_;              // the newest copy, for the present thread, not yet taken
  std::shared_ptr<LivePresent> ready_, previous_ready_;  // the two newest copies whose figures are made
  std::shared_ptr<LivePresent> jobs_ready_;              // the newest copy whose Jobs table is built
  std::shared_ptr<LivePresent> slurm_ready_;             // the newest copy whose slurmrestd-compatible source is built
  std::atomic<std::int64_t> slurm_wanted_ns_{0};         // when that API was last read (steady clock ns; 0: never)
  std::shared_ptr<LivePresent> metrics_ready_;           // the newest copy whose LiveMetrics are built
  std::atomic<std::int64_t> metrics_wanted_ns_{0};       // when the series or /metrics were last read
  std::shared_ptr<LivePresent> events_ready_;            // the newest copy whose event log is built
  std::atomic<std::int64_t> events_wanted_ns_{0};        // when the event log was last read
  std::shared_ptr<LivePresent> gantt_ready_;             // the newest copy whose Gantt index is built
  std::atomic<std::int64_t> gantt_wanted_ns_{0};         // when the Gantt was last read
  // When the Jobs tab was last read, and each sort order (JobSort x 2 + descending) last asked for (steady clock
  // nanoseconds; 0: never).
  std::atomic<std::int64_t> jobs_wanted_ns_{0};
  std::array<std::atomic<std::int64_t>, 24> order_wanted_ns_{};
  std::condition_variable present_cv_;  // the present thread waits here
  std::thread present_thread_;
  std::uint64_t present_generation_ = 0;
  WallClock::time_point present_taken_{};
  std::uint64_t copies_ = 0;
  std::uint64_t reused_copies_ = 0;
  double simulation_on_cpu_ = 0;
  double simulation_cpu_wait_s_ = 0;
  double snapshot_wall_s_ = 0;
  double snapshot_copy_wall_s_ = 0;
  double last_copy_wall_s_ = 0;  // what the newest snapshot's copy cost the simulation
  std::unique_ptr<RunOutcome> final_outcome_;

  // The clock, written by the simulation's thread.
  std::atomic<SimTime> sim_now_{0};
  std::atomic<std::uint64_t> submitted_{0}, ended_{0}, sim_events_{0};
  std::atomic<std::uint64_t> total_jobs_{0};
  std::uint64_t next_job_id_ = 0;  // simulation's thread: the id the next submit gets (0: not computed yet)

  // Simulation's thread only.
  const RunOutcome* outcome_ = nullptr;
  const ClusterState* state_ = nullptr;
  std::vector<RawEvent> raw_events_;                                     // not yet published
  std::vector<LiveEvent> sim_texts_;                                     // the texts of raw_events_'s kRawText events
  std::size_t scaling_seen_ = 0, quota_seen_ = 0, operations_seen_ = 0;  // controller records already noted
  SimTime sim_anchor_ = 0;
  WallClock::time_point wall_anchor_{};
  double pace_ = 0;  // speed_ as the simulation's thread last saw it
  std::atomic<WallClock::time_point> last_publish_{};
  std::uint32_t calls_ = 0;
  std::uint64_t snapshot_index_ = 0;                      // snapshot thread: folders s0 and s1 alternate
  std::shared_ptr<const ClusterConfig> snapshot_config_;  // the cluster's configuration, for the copies
  // The reference GPU load of each run (by its allocation pool offset) the copies have seen (computed once, on the
  // simulation's thread: the speed model is not thread-safe), and which offsets are known.
  std::vector<std::optional<GpuLoad>> run_loads_;
  std::vector<std::uint8_t> run_load_known_;
  // A copy no reader holds any more, kept to copy the next one into (SpareCopy; shared with the copies' deleters).
  struct SpareCopy;
  std::shared_ptr<SpareCopy> spare_;

  // The event buffer, under events_mutex_.
  mutable std::mutex events_mutex_;
  std::condition_variable events_cv_;
  std::vector<LiveEvent> pending_events_;  // from other threads, not yet published
  std::deque<LiveEvent> events_;
  std::uint64_t last_seq_ = 0;
  bool streams_closed_ = false;
};

/// The slurmrestd-compatible API's writes of a live run: node update, job submit, update and cancel through
/// LiveRun, answered with Slurm's error numbers (slurm_errno.h: ESLURM_INVALID_PARTITION_NAME 2000,
/// ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE 2014, ESLURM_INVALID_JOB_ID 2017, ESLURM_INVALID_NODE_NAME 2018,
/// ESLURM_ALREADY_DONE 2021, ESLURM_JOB_HELD 2042, ESLURM_INVALID_ACCOUNT 2045, ESLURM_ACCOUNTING_POLICY 2050,
/// ESLURM_INVALID_QOS 2066, ESLURM_JOB_NOT_PENDING 2073).
class LiveSlurmWriter final : public SlurmWriter {
 public:
  explicit LiveSlurmWriter(LiveRun& live) : live_(live) {}
  std::pair<int, std::string> update_node(const std::string& name, bool drain, const std::string& reason) override;
  std::pair<int, std::string> cancel_job(std::int64_t job_id) override;
  SlurmSubmitResult submit_job(const JobSpec& spec, bool hold) override;
  std::pair<int, std::string> update_job(std::int64_t job_id, const SlurmJobUpdate& update) override;

 private:
  LiveRun& live_;
};

}  // namespace gputwin
