#include "ui/live_run.hpp"

#include <fmt/core.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>

#include "control/health_controller.hpp"
#include "control/operations_controller.hpp"
#include "control/quota_controller.hpp"
#include "control/scaling_controller.hpp"
#include "faults/xid_catalogue.hpp"
#include "model/errors.hpp"
#include "model/input_limits.hpp"
#include "model/vector_room.hpp"
#include "results/results_store.hpp"
#include "results/summary.hpp"
#include "sim/sim_world.hpp"

namespace gputwin {

namespace {

// At full speed the simulation's thread publishes its events this often, and checks the wall clock every
// kClockCheckEvery instants (a clock read per instant would cost more than the instant).
constexpr auto kPublishEvery = std::chrono::milliseconds(50);
constexpr std::uint32_t kClockCheckEvery = 64;
// A paced or paused simulation wakes this often to move its clock and answer requests.
constexpr auto kTick = std::chrono::milliseconds(50);
// A reader waits at most this long for a snapshot (the simulation may be inside a long scheduler pass).
constexpr auto kSnapshotWait = std::chrono::seconds(30);
// A copy's Jobs table is built while the Jobs tab was read within this long, and a sort order of its pages while they
// were asked within kOrderWanted (a page refreshes every second while it follows the clock).
constexpr auto kJobsWanted = std::chrono::nanoseconds(std::chrono::seconds(10));
constexpr auto kOrderWanted = std::chrono::nanoseconds(std::chrono::seconds(30));
// A copy's slurmrestd-compatible source is built while that API was read within this long (exporters and portals
// poll every 15-60 s).
constexpr auto kSlurmWanted = std::chrono::nanoseconds(std::chrono::seconds(60));
// A copy's cluster series and /metrics scrape are built while either was read within this long (Prometheus scrapes
// every 15-60 s; the Monitoring tab refreshes every few seconds).
constexpr auto kMetricsWanted = std::chrono::nanoseconds(std::chrono::seconds(60));
// A copy's event log is built while it was read within this long (the Logs tab refreshes every few seconds).
constexpr auto kEventsWanted = std::chrono::nanoseconds(std::chrono::seconds(60));
// A copy's Gantt index is built while the Gantt was read within this long (the page redraws as it follows the clock).
constexpr auto kGanttWanted = std::chrono::nanoseconds(std::chrono::seconds(60));

// Whether a copy's part is built (building it now if its copy is still held): what present_built and build_part ask.
bool has_slurm(const LivePresent& p) {
  return p.slurm() != nullptr;
}
bool has_metrics(const LivePresent& p) {
  return p.metrics() != nullptr;
}
bool has_events(const LivePresent& p) {
  return p.events() != nullptr;
}
bool has_gantt(const LivePresent& p) {
  return p.gantt() != nullptr;
}

// Seconds the calling thread has so far been ready to run but waited for a CPU (the second field of Linux's
// /proc/thread-self/schedstat, in nanoseconds); 0 where the kernel does not say.
double thread_cpu_wait_s() {
  std::FILE* file = std::fopen("/proc/thread-self/schedstat", "r");
  if (file == nullptr) return 0;
  unsigned long long on_cpu_ns = 0, waited_ns = 0;
  const int read = std::fscanf(file, "%llu %llu", &on_cpu_ns, &waited_ns);
  std::fclose(file);
  return read == 2 ? static_cast<double>(waited_ns) * 1e-9 : 0;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Budget of per-GPU metric rows in a snapshot (MetricsConfig::max_gpu_samples).
constexpr std::uint64_t kSnapshotGpuSamples = 500'000;

std::filesystem::path make_snapshot_root() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gputwin-live-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw ResultsError(pattern + ": cannot create the live snapshot folder");
  return pattern;
}

// sinfo's word for a node condition, for a refusal's message.
std::string condition_name(NodeCondition c) {
  switch (c) {
    case NodeCondition::kNone:
      return "waiting for the health controller (a fault found)";
    case NodeCondition::kDrain:
      return "DRAIN, in the health controller's care";
    case NodeCondition::kDown:
      return "DOWN";
    case NodeCondition::kRebooting:
      return "REBOOTING";
    case NodeCondition::kPoweredDown:
      return "POWERED_DOWN";
    case NodeCondition::kPoweringUp:
      return "POWERING_UP";
    case NodeCondition::kPoweringDown:
      return "POWERING_DOWN";
    case NodeCondition::kFail:
      return "FAIL";
  }
  return "out of service";
}

}  // namespace

const RunViewSlurmSource& RunSnapshot::slurm() const {
  std::call_once(slurm_once_, [&] { slurm_ = std::make_unique<RunViewSlurmSource>(*view, slurm_at_s); });
  return *slurm_;
}

const StateOverview& LivePresent::figures() const {
  std::call_once(once_, [&] {
    figures_ = compute_();
    compute_ = nullptr;  // the copy goes with it (unless a snapshot of it is still being written)
  });
  return figures_;
}

const JobTable* LivePresent::jobs() const {
  std::lock_guard lock(jobs_mutex_);
  if (jobs_ == nullptr && compute_jobs_) {
    jobs_ = compute_jobs_();
    compute_jobs_ = nullptr;  // the copy goes with it (once the figures are made)
  }
  return jobs_.get();
}

void LivePresent::drop_jobs() const {
  drop_slurm();
  drop_events();
  drop_gantt();
  std::lock_guard lock(jobs_mutex_);
  compute_jobs_ = nullptr;
}

void LivePresent::drop_slurm() const {
  std::lock_guard lock(slurm_mutex_);
  compute_placement_ = nullptr;
}

void LivePresent::drop_metrics() const {
  std::lock_guard lock(metrics_mutex_);
  compute_metrics_ = nullptr;
}

void LivePresent::drop_events() const {
  std::lock_guard lock(events_mutex_);
  compute_events_ = nullptr;
}

void LivePresent::drop_gantt() const {
  std::lock_guard lock(gantt_mutex_);
  compute_gantt_ = nullptr;
}

namespace {

// A part of `present` made from its Jobs table by `compute` the first time it is asked for (under `mutex`); null when
// the copy went without the table or without this part.
template <typename Part>
const Part* part_from_table(const LivePresent& present, std::mutex& mutex,
                            std::function<std::unique_ptr<Part>(const JobTable&)>& compute,
                            std::unique_ptr<Part>& part) {
  std::lock_guard lock(mutex);
  if (part == nullptr && compute) {
    const JobTable* table = present.jobs();
    if (table == nullptr) return nullptr;
    part = compute(*table);
    compute = nullptr;  // the copy goes with it (once the other parts are made or let go)
  }
  return part.get();
}

}  // namespace

const GanttIndex* LivePresent::gantt() const {
  return part_from_table(*this, gantt_mutex_, compute_gantt_, gantt_);
}

const CostSeries& LivePresent::costs() const {
  std::call_once(costs_once_, [&] {
    if (cloud_ != nullptr) costs_ = CostSeries(cost_rows(cloud_->costs));
  });
  return costs_;
}

const StateEventLog* LivePresent::events() const {
  return part_from_table(*this, events_mutex_, compute_events_, events_);
}

const LiveMetrics* LivePresent::metrics() const {
  std::lock_guard lock(metrics_mutex_);
  if (metrics_ == nullptr && compute_metrics_) {
    metrics_ = compute_metrics_();
    compute_metrics_ = nullptr;  // the copy goes with it (once the other parts are made or let go)
  }
  return metrics_.get();
}

const RunViewSlurmSource* LivePresent::slurm() const {
  std::lock_guard lock(slurm_mutex_);
  if (slurm_ != nullptr || !compute_placement_) return slurm_.get();
  const JobTable* table = jobs();
  if (table == nullptr) return nullptr;
  const std::shared_ptr<const JobGpuPlacement> placement = compute_placement_();
  compute_placement_ = nullptr;  // the copy goes with it (once the figures and the table are made)
  const StateOverview& f = figures();
  SlurmRunState run;
  run.info = f.info;
  run.at_s = now_s_;
  run.jobs = table;
  run.nodes = f.nodes;
  for (NodeRow& n : run.nodes) {  // as RunView::nodes(at_s, false): without GPU use
    n.gpu_util_pct = -1;
    n.gpu_mem_pct = -1;
    n.xid = 0;
  }
  run.partitions = f.partitions;
  // Without metrics the snapshot has no job_gpus rows: no GPU indices.
  run.job_gpus = [placement](std::int64_t job_id, std::int64_t start_s) {
    return placement != nullptr ? placement->job_gpus(job_id, start_s)
                                : std::vector<std::pair<std::int32_t, std::string>>{};
  };
  run.keep = placement;
  slurm_ = std::make_unique<RunViewSlurmSource>(std::move(run));
  return slurm_.get();
}

std::shared_ptr<const RunSnapshot> finished_snapshot(const std::filesystem::path& dir, std::int64_t at_s,
                                                     ResultsCheck check) {
  auto snap = std::make_shared<RunSnapshot>();
  snap->dir = dir;
  snap->view = std::make_unique<RunView>(dir, check);
  snap->now_s = snap->view->info().end_s;
  snap->live = false;
  snap->slurm_at_s = at_s >= 0 ? at_s : snap->now_s;
  return snap;
}

struct LiveRun::SnapshotInput {
  std::uint64_t request = 0;                       // the newest reader request it answers
  std::uint64_t generation = 0;                    // operator actions applied when it was copied
  std::chrono::steady_clock::time_point copied{};  // when the simulation's state was copied (the data's age)
  SimTime now = 0;
  RunInfo info;
  std::shared_ptr<const ClusterConfig> config;  // what `state` refers to
  std::unique_ptr<ClusterState> state;
  std::unique_ptr<RunRecorder> recorder;
  std::optional<FaultLog> faults;
  std::shared_ptr<const CloudLog> cloud;      // null when the run has none
  MetricsInput metrics;                       // its `load` looks up `loads`
  std::vector<std::optional<GpuLoad>> loads;  // by allocation pool offset
};

std::unique_ptr<LiveMetrics> LiveRun::live_metrics(const SnapshotInput& input) {
  auto out = std::make_unique<LiveMetrics>();
  const MetricsInput& metrics = input.metrics;
  if (!metrics.config.enabled) return out;  // no series; /metrics answers from the snapshot (which has none either)
  const ClusterState& state = *input.state;
  // As write_results would write them (metrics_info: the periods as doubles, read back as whole seconds) and
  // export_metrics read them for a scrape at the copy's second.
  const double horizon_s = to_seconds_f(metrics.horizon);
  const std::size_t total_gpus = sampled_gpu_count(state.config());
  const auto gpu_step = static_cast<std::int64_t>(gpu_sample_step_s(metrics.config, horizon_s, total_gpus));
  const std::int64_t now_s = to_seconds(input.now);
  const std::int64_t gpu_at = gpu_step > 0 ? now_s / gpu_step * gpu_step : -1;
  std::vector<GpuSample> at_now;
  const GpuBinding binding(state, metrics.horizon);
  MetricsTotals totals;
  const std::size_t nodes = state.config().nodes.size();
  out->node_starts.assign(nodes + 1, 0);
  const std::vector<ClusterSample> rows = build_metrics(
      state, binding, metrics.horizon, metrics.config, metrics.load, metrics.xids, metrics.node_conditions,
      [&](const GpuSample& s) {
        if (s.time_s == gpu_at) at_now.push_back(s);
        // As the gpu_metrics rows are read back (a GPU without a job: NULL, -1).
        out->gpu_samples.push_back(GpuPoint{s.time_s, static_cast<std::int32_t>(s.gpu), s.util_pct, s.fb_used_mib,
                                            s.power_w, s.temp_c, static_cast<std::int32_t>(s.xid),
                                            s.job_id != 0 ? static_cast<std::int64_t>(s.job_id) : -1});
        ++out->node_starts[s.node + 1];  // sent node by node: counts, summed below
      },
      totals, ClusterRows::kChanges);
  for (std::size_t n = 0; n < nodes; ++n) out->node_starts[n + 1] += out->node_starts[n];
  out->gpu_step_s = static_cast<std::int64_t>(totals.gpu_step_s);
  for (const NodeConfig& node : state.config().nodes) out->node_names.push_back(node.name);
  out->cluster_step_s = static_cast<std::int64_t>(totals.cluster_step_s);
  out->times.reserve(rows.size());
  out->rows.reserve(rows.size());
  for (const ClusterSample& c : rows) {
    out->times.push_back(c.time_s);
    out->rows.push_back(cluster_point(c, total_gpus));
  }
  if (out->cluster_step_s <= 0 || gpu_step <= 0 || now_s > static_cast<std::int64_t>(totals.horizon_s)) return out;
  MetricsScrape& scrape = out->scrape.emplace();
  scrape.epoch_unix_s = metrics.config.epoch_unix_s;
  scrape.cluster = cluster_sample_at(rows, out->cluster_step_s, now_s);
  scrape.per_gpu = metrics.config.per_gpu;
  if (scrape.per_gpu) {
    scrape.nodes = scrape_nodes(state.config());
    scrape.gpus = std::move(at_now);
  }
  return out;
}

void LiveMetrics::read_gpu_samples(std::int32_t node, std::int64_t step, std::int64_t first, std::int64_t stride,
                                   std::int64_t to_s, const std::function<void(const GpuPoint&)>& sink) const {
  if (node < 0 || static_cast<std::size_t>(node) + 1 >= node_starts.size() || step <= 0 || stride <= 0) return;
  // RunView's: time >= first x step AND time <= to_s AND ((time / step) - first) % stride = 0, by GPU and time.
  const auto n = static_cast<std::size_t>(node);
  for (std::size_t i = node_starts[n]; i < node_starts[n + 1]; ++i) {
    const GpuPoint& p = gpu_samples[i];
    if (p.time >= first * step && p.time <= to_s && (p.time / step - first) % stride == 0) sink(p);
  }
}

const std::string& LiveMetrics::scrape_text(bool dcgm_labels) const {
  const std::size_t k = dcgm_labels ? 0 : 1;
  std::call_once(text_once_[k], [&] {
    if (!scrape) return;
    MetricsExportOptions options;
    options.dcgm_labels = dcgm_labels;
    std::ostringstream out;
    write_metrics_scrape(*scrape, options, out);
    text_[k] = std::move(out).str();
  });
  return text_[k];
}

// The last copies every reader has let go of, up to kMax, kept (while `keep`) for the next copies to be made into:
// copying a large state into fresh memory costs the kernel a page fault per page, into memory touched before only
// the copying (a 1,000,000-job run's state: 71-89 ms against 28-38 ms per copy). Two, because under steady reading
// the copy before the newest is often still read (its Jobs table served until the newest's is built) when the next
// is made: with one spare, 6 of 9 copies of bench-1m under bench/live_load.sh went to fresh memory.
struct LiveRun::SpareCopy {
  static constexpr std::size_t kMax = 2;
  std::mutex mutex;
  std::vector<std::unique_ptr<SnapshotInput>> inputs;  // at most kMax
  // False once the run has ended: no copy is made after the last.
  bool keep = true;
};

LiveRun::LiveRun(Scenario scenario, RunOptions options, LiveOptions live)
    : options_(std::move(live)), snapshot_root_(make_snapshot_root()) {
  paused_ = options_.start_paused;
  speed_ = options_.speed;
  // An operator may inject faults: a scenario without /faults gets the fault mechanics and the health controller
  // with no random faults (rate 0), which change no schedule until something is injected.
  if (!scenario.faults.enabled) {
    scenario.faults.enabled = true;
    scenario.faults.random_faults = false;
    scenario.faults.rate_scale = 0;
  }
  node_names_.reserve(scenario.cluster.nodes.size());
  for (const NodeConfig& node : scenario.cluster.nodes) node_names_.push_back(node.name);
  options.gate = this;
  options.observer = this;
  // Named for top -H, perf and /proc (at most 15 characters).
  snapshot_thread_ = std::thread([this] {
    ::pthread_setname_np(::pthread_self(), "gputwin-snap");
    write_snapshots();
  });
  present_thread_ = std::thread([this] {
    ::pthread_setname_np(::pthread_self(), "gputwin-present");
    compute_presents();
  });
  thread_ = std::thread([this, scenario = std::move(scenario), options]() mutable {
    ::pthread_setname_np(::pthread_self(), "gputwin-sim");
    simulate(std::move(scenario), std::move(options));
  });
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return started_ || finished_; });
  if (!started_ && failure_) {
    const std::exception_ptr failure = failure_;
    snapshot_thread_stop_ = true;
    snapshot_cv_.notify_all();
    present_cv_.notify_all();
    lock.unlock();
    thread_.join();
    snapshot_thread_.join();
    present_thread_.join();
    std::error_code ec;
    std::filesystem::remove_all(snapshot_root_, ec);
    std::rethrow_exception(failure);
  }
}

LiveRun::~LiveRun() {
  stop();
  close_streams();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    snapshot_thread_stop_ = true;
    snapshot_cv_.notify_all();
    present_cv_.notify_all();
  }
  if (snapshot_thread_.joinable()) snapshot_thread_.join();
  if (present_thread_.joinable()) present_thread_.join();
  std::error_code ec;
  std::filesystem::remove_all(snapshot_root_, ec);
}

void LiveRun::simulate(Scenario scenario, RunOptions options) {
  std::unique_ptr<RunOutcome> outcome;
  std::string error;
  std::exception_ptr failure;
  try {
    const auto thread_cpu_s = [] {
      timespec t{};
      ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    };
    const double cpu_before = thread_cpu_s();
    const double wait_before = thread_cpu_wait_s();
    const auto wall_before = WallClock::now();
    outcome = std::make_unique<RunOutcome>(run_scenario(std::move(scenario), options));
    const double run_wall_s = std::chrono::duration<double>(WallClock::now() - wall_before).count();
    {
      std::lock_guard lock(mutex_);
      simulation_on_cpu_ = run_wall_s > 0 ? (thread_cpu_s() - cpu_before) / run_wall_s : 0;
      simulation_cpu_wait_s_ = std::max(0.0, thread_cpu_wait_s() - wait_before);
    }
    wait_snapshot_idle();
    std::uint64_t request = 0, generation = 0, present_request = 0;
    bool write_end = false;
    {
      std::lock_guard lock(mutex_);
      simulation_done_ = true;  // readers take the end's copy (and snapshots) while the results are written
      // The end is written as a snapshot only for a snapshot reader (earlier seconds) waiting now or asking
      // before the results are written: every page of the present answers from the end's copy, and writing it
      // beside the results took the snapshot thread 9-12 s at 1,000,000 jobs, on the CPUs the results need.
      write_end = snapshot_requests_ > snapshot_copied_;
      snapshot_busy_ = write_end;
      request = snapshot_copied_ = snapshot_requests_;
      present_request = present_copied_ = present_requests_;
      generation = action_generation_;
      cv_.notify_all();
    }
    // The end as a copy: the readers' answers while the results are written (a large run's take long), also for a
    // run that ended before anyone asked; kept to be written as a snapshot if a snapshot reader asks meanwhile.
    outcome_ = outcome.get();
    copy_state(*outcome->world, write_end, request, generation, present_request);
    if (options_.at_end) options_.at_end();
    // No copy is made after the last: the spares' memory goes back (destroyed after the lock is released).
    if (spare_ != nullptr) {
      std::vector<std::unique_ptr<SnapshotInput>> spares;
      std::lock_guard lock(spare_->mutex);
      spare_->keep = false;
      spares = std::move(spare_->inputs);
    }
    collect_controller_records();  // those of the last instant
    outcome_ = nullptr;
    sim_now_ = outcome->world->now();
    submitted_ = outcome->world->submitted();
    ended_ = outcome->world->ended();
    sim_events_ = outcome->counters.events;
    publish_events();
    // The results of the run, whole as `gputwin run` writes them, then served from there.
    std::filesystem::path dir = options_.out_dir;
    if (!dir.empty()) {
      const MetricsInput metrics = metrics_input(*outcome);
      write_results(dir, run_info(*outcome), *outcome->state, outcome->summary, *outcome->recorder,
                    metrics.config.enabled ? &metrics : nullptr, fault_log(*outcome), cloud_log(*outcome));
    } else {
      dir = snapshot_root_ / "final";
      write_results(dir, run_info(*outcome), *outcome->state, outcome->summary, *outcome->recorder);
    }
    // Written by this process just now: read without the whole-file checks a user's folder gets (SQLite's
    // quick_check and a scan of every numeric column, most of the time `gputwin serve` takes to open 1,000,000
    // jobs' results: BENCHMARKS.md).
    auto snap = std::const_pointer_cast<RunSnapshot>(
        finished_snapshot(dir, to_seconds(outcome->world->now()), ResultsCheck::kWrittenHere));
    // Every sort order before the results answer (as `gputwin serve` builds them): else the first sorted page after
    // the end waits for its order (about 0.05 s each for 1,000,000 jobs), while the end's copy answers meanwhile.
    snap->view->prepare_orders();
    std::lock_guard lock(mutex_);
    current_ = std::move(snap);
    end_input_.reset();
    present_.reset();  // the results answer from now on
    ready_.reset();
    jobs_ready_.reset();
    slurm_ready_.reset();
    metrics_ready_.reset();
    events_ready_.reset();
    gantt_ready_.reset();
    previous_ready_.reset();
    to_compute_.reset();
  } catch (const std::exception& e) {
    error = e.what();
    failure = std::current_exception();
    // A run that threw took its outcome (and the controllers whose records publish_events reads) with it.
    outcome_ = nullptr;
    {
      std::lock_guard lock(mutex_);
      end_input_.reset();
    }
    wait_snapshot_idle();
  }
  if (outcome) {
    add_sim_event(outcome->world->now(), "action", "run", error.empty() ? "ended" : "failed: " + error);
  } else {
    // The run threw: its ClusterState is gone with it, so its last events cannot be told any more.
    raw_events_.clear();
    sim_texts_.clear();
    add_event(sim_now_.load(), "action", "run", "failed: " + error);
  }
  publish_events();
  std::lock_guard lock(mutex_);
  finished_ = true;
  if (!error.empty()) error_ = error;
  failure_ = failure;
  final_outcome_ = std::move(outcome);
  cv_.notify_all();
}

void LiveRun::on_run_start(const RunOutcome& outcome) {
  outcome_ = &outcome;
  snapshot_config_ = std::make_shared<const ClusterConfig>(outcome.state->config());
  state_ = outcome.state.get();  // the same object once the outcome is moved out of the runner
  total_jobs_ = outcome.state->job_count();
  last_publish_ = WallClock::now();
  std::lock_guard lock(mutex_);
  started_ = true;
  cv_.notify_all();
}

void LiveRun::rebase(SimTime sim_now) {
  sim_anchor_ = sim_now;
  wall_anchor_ = WallClock::now();
}

bool LiveRun::before_instant(SimWorld& world, SimTime next) {
  sim_now_.store(world.now(), std::memory_order_relaxed);
  // The common case at full speed: nobody asked for anything; publish events now and then.
  if (!attention_.load(std::memory_order_acquire) && pace_ == 0) {
    if (++calls_ % kClockCheckEvery == 0) {
      submitted_.store(world.submitted(), std::memory_order_relaxed);
      ended_.store(world.ended(), std::memory_order_relaxed);
      sim_events_.store(world.counters().events, std::memory_order_relaxed);
      if (WallClock::now() - last_publish_.load() >= kPublishEvery) publish_events();
    }
    return false;
  }
  submitted_.store(world.submitted(), std::memory_order_relaxed);
  ended_.store(world.ended(), std::memory_order_relaxed);
  sim_events_.store(world.counters().events, std::memory_order_relaxed);
  bool acted = false;
  std::unique_lock lock(mutex_);
  while (true) {
    attention_.store(false, std::memory_order_release);
    if (!commands_.empty()) {
      std::deque<Command> commands;
      commands.swap(commands_);
      lock.unlock();
      for (Command& c : commands) c.apply(world);
      publish_events();
      lock.lock();
      applied_command_ = commands.back().id;
      ++action_generation_;
      acted = true;
      cv_.notify_all();
    }
    if (stop_requested_) {
      // Stop after the events of this instant: the run's loop ends when it next looks past it.
      world.set_stop_at(world.now());
      lock.unlock();
      publish_events();
      return next > world.now() || acted;
    }
    // A copy when a reader asked for one: for a snapshot to be written (once the snapshot thread is free), or only for
    // the in-memory answers (the writing may be busy with an older copy: these do not wait for it).
    const bool write = snapshot_requests_ > snapshot_copied_ && !snapshot_busy_;
    if (write || present_requests_ > present_copied_) {
      const std::uint64_t serving = snapshot_requests_;
      const std::uint64_t present_serving = present_requests_;
      const std::uint64_t generation = action_generation_;
      if (write) {
        snapshot_busy_ = true;
        snapshot_copied_ = serving;
      }
      present_copied_ = present_serving;
      lock.unlock();
      publish_events();
      copy_state(world, write, serving, generation, present_serving);
      lock.lock();
      continue;
    }
    if (rebase_ || pace_ != speed_) {
      pace_ = speed_;
      rebase_ = false;
      rebase(world.now());
    }
    if (paused_) {
      if (has_pending_events()) {
        lock.unlock();
        publish_events();
        lock.lock();
      }
      cv_.wait_for(lock, kTick);
      continue;
    }
    if (pace_ == 0) break;
    const auto now = WallClock::now();
    const auto target = wall_anchor_ + std::chrono::duration_cast<WallClock::duration>(std::chrono::duration<double>(
                                           static_cast<double>(next - sim_anchor_) / 1e6 / pace_));
    if (now >= target) break;
    // Not yet: move the clock to where the wall clock says it is, so that status and actions show that time.
    const auto paced =
        sim_anchor_ + static_cast<SimTime>(std::chrono::duration<double>(now - wall_anchor_).count() * pace_ * 1e6);
    if (paced > world.now() && paced < next) world.advance_clock(paced);
    sim_now_.store(world.now(), std::memory_order_relaxed);
    if (has_pending_events()) {
      lock.unlock();
      publish_events();
      lock.lock();
      continue;
    }
    cv_.wait_until(lock, std::min(target, now + kTick));
  }
  lock.unlock();
  if (WallClock::now() - last_publish_.load() >= kPublishEvery) publish_events();
  return acted;
}

void LiveRun::copy_state(SimWorld& world, bool write, std::uint64_t request, std::uint64_t generation,
                         std::uint64_t present_request) {
  const auto started = WallClock::now();
  const RunOutcome& o = *outcome_;
  if (spare_ == nullptr) {
    spare_ = std::make_shared<SpareCopy>();
    spare_->inputs.reserve(SpareCopy::kMax);
  }
  std::unique_ptr<SnapshotInput> spare;
  {
    std::lock_guard lock(spare_->mutex);
    if (!spare_->inputs.empty()) {
      spare = std::move(spare_->inputs.back());
      spare_->inputs.pop_back();
    }
  }
  // Handed back to the spare by whichever thread lets go of it last (it is then no reader's).
  const auto give_back = [to = std::weak_ptr<SpareCopy>(spare_)](SnapshotInput* copy) {
    std::unique_ptr<SnapshotInput> owned(copy);  // destroyed after the lock below is released, unless kept
    if (const std::shared_ptr<SpareCopy> keeper = to.lock()) {
      std::lock_guard lock(keeper->mutex);
      // No allocation here (a deleter must not throw): the room for kMax was reserved with the keeper.
      if (keeper->keep && keeper->inputs.size() < SpareCopy::kMax) keeper->inputs.push_back(std::move(owned));
    }
  };
  const bool reused = spare != nullptr;
  std::shared_ptr<SnapshotInput> input(reused ? spare.release() : new SnapshotInput(), give_back);
  input->request = request;
  input->generation = generation;
  input->copied = started;
  input->now = world.now();
  input->info = run_info(o);
  input->config = snapshot_config_;
  if (input->state != nullptr)
    input->state->assign_copy(*o.state, *input->config);
  else
    input->state = std::make_unique<ClusterState>(*o.state, *input->config);
  if (input->recorder != nullptr)
    input->recorder->assign_copy(*o.recorder);
  else
    input->recorder = std::make_unique<RunRecorder>(*o.recorder);
  input->recorder->forward_to(nullptr);
  input->faults.reset();
  if (const FaultLog* faults = fault_log(o)) input->faults = *faults;
  input->cloud.reset();
  if (std::optional<CloudLog> cloud = cloud_log_so_far(o)) input->cloud = std::make_shared<CloudLog>(std::move(*cloud));
  input->metrics = metrics_input(o);
  // The per-GPU series dominate a snapshot of a large run (5 million rows by default: 12 of 14 s at 4,096 nodes):
  // a snapshot keeps a tenth of them (sampled less often); the results at the end keep the scenario's budget.
  input->metrics.config.max_gpu_samples =
      std::min<std::uint64_t>(input->metrics.config.max_gpu_samples, kSnapshotGpuSamples);
  if (input->metrics.load) {
    // Each run's reference load, computed here once (the speed model is the simulation's), looked up there.
    const ClusterState& state = *o.state;
    const std::span<const NodeAllocation> pool = state.allocation_pool();
    run_loads_.resize(pool.size());
    run_load_known_.resize(pool.size(), 0);
    const auto learn = [&](JobIndex job, std::span<const NodeAllocation> allocation) {
      if (allocation.empty()) return;
      const auto offset = static_cast<std::size_t>(allocation.data() - pool.data());
      if (run_load_known_[offset] != 0) return;
      run_loads_[offset] = input->metrics.load(job, allocation);
      run_load_known_[offset] = 1;
    };
    for (JobIndex j = 0; j < state.job_count(); ++j) learn(j, state.allocation(j));
    for (const PastRun& run : state.past_runs()) learn(run.job, state.allocation(run));
    keep_room_for(input->loads, run_loads_);
    input->loads = run_loads_;
    SnapshotInput* in = input.get();
    input->metrics.load = [in](JobIndex, std::span<const NodeAllocation> allocation) -> std::optional<GpuLoad> {
      const std::span<const NodeAllocation> pool = in->state->allocation_pool();
      const auto offset = static_cast<std::size_t>(allocation.data() - pool.data());
      return offset < in->loads.size() ? in->loads[offset] : std::nullopt;
    };
  } else {
    input->loads.clear();
  }
  const double wall_s = std::chrono::duration<double>(WallClock::now() - started).count();
  // The in-memory answers' figures, made from the copy by the present thread (or a reader that cannot wait for it),
  // not here: the simulation only copies.
  std::shared_ptr<LivePresent> present(new LivePresent(
      to_seconds(input->now), generation,
      [input] {
        const MetricsInput* metrics = input->metrics.config.enabled ? &input->metrics : nullptr;
        return state_overview(input->info, *input->state, *input->recorder, metrics, input->now);
      },
      [input] { return state_job_table(*input->state, *input->recorder); },
      [input]() -> std::shared_ptr<const JobGpuPlacement> {
        if (!input->metrics.config.enabled) return nullptr;
        return std::make_shared<const JobGpuPlacement>(*input->state, input->metrics.horizon);
      },
      [input] { return live_metrics(*input); },
      [input](const JobTable& table) {
        return std::make_unique<StateEventLog>(*input->state, *input->recorder,
                                               input->faults ? &*input->faults : nullptr, input->cloud.get(), table);
      },
      [input](const JobTable& table) {
        // The nodes as the snapshot written of the copy lists them: the copy's cluster, in its order.
        const std::vector<NodeConfig>& nodes = input->state->config().nodes;
        std::unordered_map<std::string, std::int32_t> node_by_name;
        node_by_name.reserve(nodes.size());
        for (std::size_t n = 0; n < nodes.size(); ++n)
          node_by_name.emplace(nodes[n].name, static_cast<std::int32_t>(n));
        return std::make_unique<GanttIndex>(table, node_by_name, nodes.size(), to_seconds(input->now));
      }));
  present->cloud_ = input->cloud;  // small (the cost series and the controllers' records): kept whole
  std::lock_guard lock(mutex_);
  snapshot_copy_wall_s_ += wall_s;
  last_copy_wall_s_ = wall_s;
  ++copies_;
  if (reused) ++reused_copies_;
  to_compute_ = present;  // replaces one the present thread has not taken yet (it was never shown)
  present_cv_.notify_all();
  present_ = std::move(present);
  present_generation_ = generation;
  present_taken_ = started;
  present_done_ = std::max(present_done_, present_request);
  if (write) {
    snapshot_input_ = std::move(input);
    snapshot_cv_.notify_all();
  } else if (simulation_done_) {
    end_input_ = std::move(input);  // the end's: written when a snapshot reader asks (snapshot())
  }
  cv_.notify_all();
}

void LiveRun::wait_snapshot_idle() {
  std::unique_lock lock(mutex_);
  snapshot_cv_.wait(lock, [&] { return !snapshot_busy_; });
}

void LiveRun::compute_presents() {
  nice_this_thread(kReaderNice);  // readers' work, as the HTTP threads are
  std::unique_lock lock(mutex_);
  while (true) {
    present_cv_.wait(lock, [&] { return snapshot_thread_stop_ || to_compute_ != nullptr; });
    if (snapshot_thread_stop_) return;
    const std::shared_ptr<LivePresent> next = std::move(to_compute_);
    lock.unlock();
    if (options_.before_present) options_.before_present();
    (void)next->figures();  // a reader may be computing it already: then this waits for it
    lock.lock();
    if (present_ == nullptr && ready_ == nullptr) continue;  // the run finished meanwhile: its results answer
    if (ready_ == nullptr || next->now_s() >= ready_->now_s()) {
      previous_ready_ = std::move(ready_);
      ready_ = next;
    }
    cv_.notify_all();
    const std::int64_t now_ns = steady_ns();
    // The cluster series and the /metrics scrape while either was read (they need the copy until made), after the
    // tables (they take longer); else the copy goes without them, and so do the last ones made (a reader coming back
    // waits for fresh ones).
    // The end's copy (no copy comes after it) keeps every part buildable, made by the first reader that needs it if
    // not here, so each page answers from it until the results are written (no snapshot is written for them).
    const bool keep_all = simulation_done_;
    const bool metrics_wanted = now_ns - metrics_wanted_ns_.load() <= kMetricsWanted.count();
    if (!metrics_wanted && !keep_all) {
      next->drop_metrics();
      metrics_ready_.reset();
    }
    if (build_tables(next, now_ns, keep_all, lock) && metrics_wanted)
      build_part(next, &LiveRun::metrics_ready_, has_metrics, lock);
  }
}

bool LiveRun::build_part(const std::shared_ptr<LivePresent>& next, std::shared_ptr<LivePresent> LiveRun::*ready,
                         bool (*build)(const LivePresent&), std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  const bool built = build(*next);
  lock.lock();
  if (present_ == nullptr && ready_ == nullptr) return false;  // the run finished meanwhile: its results answer
  std::shared_ptr<LivePresent>& newest = this->*ready;
  if (built && (newest == nullptr || next->now_s() >= newest->now_s())) newest = next;
  cv_.notify_all();
  return true;
}

bool LiveRun::build_tables(const std::shared_ptr<LivePresent>& next, std::int64_t now_ns, bool keep_all,
                           std::unique_lock<std::mutex>& lock) {
  // The Jobs table after the figures (the Overview does not wait for it), while someone reads the Jobs tab; else
  // the copy goes now, and so does the last table (a reader coming back waits for a fresh one, not a stale one).
  // The slurmrestd-compatible API's source likewise (it reads the table), while that API is read.
  // The event log likewise (its job lines are the table's).
  const bool slurm_wanted = now_ns - slurm_wanted_ns_.load() <= kSlurmWanted.count();
  const bool events_wanted = now_ns - events_wanted_ns_.load() <= kEventsWanted.count();
  const bool gantt_wanted = now_ns - gantt_wanted_ns_.load() <= kGanttWanted.count();
  if (!slurm_wanted && !keep_all) {
    next->drop_slurm();
    slurm_ready_.reset();
  }
  if (!events_wanted && !keep_all) {
    next->drop_events();
    events_ready_.reset();
  }
  if (!gantt_wanted && !keep_all) {
    next->drop_gantt();
    gantt_ready_.reset();
  }
  if (!slurm_wanted && !events_wanted && !gantt_wanted && now_ns - jobs_wanted_ns_.load() > kJobsWanted.count()) {
    if (!keep_all) {
      next->drop_jobs();
      jobs_ready_.reset();
    }
    return true;
  }
  lock.unlock();
  if (const JobTable* table = next->jobs()) {
    for (std::size_t k = 0; k < order_wanted_ns_.size(); ++k) {
      const std::int64_t asked = order_wanted_ns_[k].load();
      if (asked != 0 && now_ns - asked <= kOrderWanted.count())
        table->prepare_order(static_cast<JobSort>(k / 2), k % 2 == 1);
    }
  }
  lock.lock();
  if (present_ == nullptr && ready_ == nullptr) return false;
  if (jobs_ready_ == nullptr || next->now_s() >= jobs_ready_->now_s()) jobs_ready_ = next;
  cv_.notify_all();
  if (events_wanted && !build_part(next, &LiveRun::events_ready_, has_events, lock)) return false;
  if (gantt_wanted && !build_part(next, &LiveRun::gantt_ready_, has_gantt, lock)) return false;
  return !slurm_wanted || build_part(next, &LiveRun::slurm_ready_, has_slurm, lock);
}

void LiveRun::write_snapshots() {
  nice_this_thread(kReaderNice);  // readers' work, as the HTTP threads are
  std::unique_lock lock(mutex_);
  while (true) {
    snapshot_cv_.wait(lock, [&] { return snapshot_thread_stop_ || snapshot_input_ != nullptr; });
    if (snapshot_input_ == nullptr) return;  // stopping, nothing handed over
    std::shared_ptr<const SnapshotInput> input = std::move(snapshot_input_);
    lock.unlock();
    const auto started = WallClock::now();
    const std::filesystem::path dir = snapshot_root_ / fmt::format("s{}", snapshot_index_++ % 2);
    auto snap = std::make_shared<RunSnapshot>();
    std::string problem;
    try {
      const FaultLog* faults = input->faults ? &*input->faults : nullptr;
      const CloudLog* cloud = input->cloud.get();
      const RunSummary summary = summarize(*input->state, faults, cloud);
      const MetricsInput& metrics = input->metrics;
      write_results(dir, input->info, *input->state, summary, *input->recorder,
                    metrics.config.enabled ? &metrics : nullptr, faults, cloud);
      snap->dir = dir;
      snap->view = std::make_unique<RunView>(dir, ResultsCheck::kWrittenHere);  // written just now, by us
      snap->now_s = to_seconds(input->now);
      snap->live = true;
      snap->slurm_at_s = snap->now_s;
    } catch (const std::exception& e) {
      problem = e.what();
    }
    const double wall_s = std::chrono::duration<double>(WallClock::now() - started).count();
    const std::uint64_t request = input->request;
    const std::uint64_t generation = input->generation;
    const WallClock::time_point copied = input->copied;
    input.reset();  // the writer's share of the copy (the in-memory answers may hold it a little longer)
    lock.lock();
    snapshot_wall_s_ += wall_s;
    snapshot_done_ = std::max(snapshot_done_, request);
    snapshot_busy_ = false;
    if (!problem.empty()) {
      if (error_.empty()) error_ = "snapshot: " + problem;
    } else if (!finished_) {  // once the results are written they are served instead
      ++snapshots_;
      current_ = std::move(snap);
      current_generation_ = generation;
      current_taken_ = copied;
    }
    // Readers asked meanwhile: the simulation copies again at its next instant.
    if (snapshot_requests_ > snapshot_copied_) attention_.store(true, std::memory_order_release);
    cv_.notify_all();
    snapshot_cv_.notify_all();
  }
}

std::shared_ptr<const RunSnapshot> LiveRun::snapshot() {
  std::unique_lock lock(mutex_);
  if (simulation_done_ && !finished_) {
    // The simulation has ended and its results are being written (a large run's take long). The end's copy is
    // written as a snapshot now if it was not yet; the last snapshot answers meanwhile instead of holding the
    // request, and the end's once written (waited for when there is none).
    if (end_input_ != nullptr) {
      snapshot_input_ = std::move(end_input_);
      snapshot_busy_ = true;
      snapshot_cv_.notify_all();
    }
    if (current_ == nullptr) cv_.wait_for(lock, kSnapshotWait, [&] { return finished_ || current_ != nullptr; });
    if (current_ == nullptr)
      throw LiveError(
          503, "the end of the run is still being written: try again" + (error_.empty() ? "" : " (" + error_ + ")"));
    return current_;
  }
  if (finished_ || stop_requested_) {
    // The run ends: its results are being written, then served.
    cv_.wait_for(lock, kSnapshotWait, [&] { return finished_; });
    if (current_ == nullptr)
      throw LiveError(503, "the run has nothing to show" + (error_.empty() ? "" : ": " + error_));
    return current_;
  }
  const auto reuse = reuse_period(std::chrono::milliseconds(options_.refresh_ms));
  const bool after_actions = current_ != nullptr && current_generation_ == action_generation_;
  if (after_actions && WallClock::now() - current_taken_ < reuse) return current_;
  const std::uint64_t want = ++snapshot_requests_;
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
  // Only old: answer from it while the next one is made (readers never hold the simulation).
  if (after_actions) return current_;
  cv_.wait_for(lock, kSnapshotWait,
               [&] { return snapshot_done_ >= want || finished_ || (simulation_done_ && current_ != nullptr); });
  if (current_ == nullptr) {
    throw LiveError(503, error_.empty() ? "no snapshot yet (the simulation is inside a long step): try again"
                                        : "no snapshot: " + error_);
  }
  return current_;
}

LiveRun::WallClock::duration LiveRun::reuse_period(std::chrono::milliseconds refresh) const {
  // A copy is reused for `refresh`, and at least for 19 times what it cost: copies cost the simulation at most a
  // twentieth of its time however large the run (an operator's action always gets a fresh one), leaving room in
  // the tenth a load test allows for the readers' work on the other CPUs.
  constexpr double kReuseOverCost = 19;
  return std::max<WallClock::duration>(refresh, std::chrono::duration_cast<WallClock::duration>(
                                                    std::chrono::duration<double>(kReuseOverCost * last_copy_wall_s_)));
}

std::shared_ptr<const LivePresent> LiveRun::present(std::optional<std::int64_t> at_s) {
  std::unique_lock lock(mutex_);
  // The newest copy whose figures are made (by the present thread or a reader), at or before at_s; else the newest
  // copy, whose figures the reader then makes (or waits for).
  const auto choose = [&]() -> std::shared_ptr<const LivePresent> {
    const bool present_fits = present_ != nullptr && (!at_s || present_->now_s() <= *at_s);
    for (const std::shared_ptr<LivePresent>* p : {&ready_, &previous_ready_}) {
      if (*p == nullptr || (at_s && (*p)->now_s() > *at_s)) continue;
      // Made before an operator's latest action, it does not show it (a paused run's copies have the same second):
      // the newest copy, made after it, answers instead, its figures made by this reader if the present thread has
      // not made them yet (it runs at niceness 19: on a busy machine it may not have).
      if ((*p)->generation_ != action_generation_ && present_fits && present_->generation_ == action_generation_)
        return present_;
      return *p;
    }
    if (present_fits && ready_ == nullptr) return present_;
    return nullptr;
  };
  if (finished_) return nullptr;
  // The end, while the results are written: its copy answers.
  if (simulation_done_ && present_ != nullptr)
    return present_->now_s() <= at_s.value_or(present_->now_s()) ? present_ : choose();
  const auto ended = [&] { return finished_ || (simulation_done_ && present_ != nullptr); };
  if (stop_requested_) {
    // The run ends now: its last copy comes with the end (the results later).
    cv_.wait_for(lock, kSnapshotWait, ended);
  } else {
    const bool after_actions = present_ != nullptr && present_generation_ == action_generation_;
    // The next copy is asked for once this one is half refresh_ms old: a page asking every refresh_ms then gets the
    // copy its previous request asked for each time (a new state every refresh_ms, not every other one).
    const auto reuse = reuse_period(std::chrono::milliseconds(options_.refresh_ms / 2));
    if (after_actions && WallClock::now() - present_taken_ < reuse) return choose();
    // A copy waits for the present thread (busy with the one before): another would replace it unseen, a copy the
    // simulation paid for nobody sees (a large run's figures take longer than its copies' reuse period). One copy
    // waiting is enough for the thread to go on with when done.
    if (after_actions && to_compute_ != nullptr) return choose();
    const std::uint64_t want = ++present_requests_;
    attention_.store(true, std::memory_order_release);
    cv_.notify_all();
    // Only old: answer from what is there while the next copy is made and its figures computed.
    if (after_actions) return choose();
    // None yet, or an operator acted since: the copy made for this request (the reader makes its figures if the
    // present thread has not).
    cv_.wait_for(lock, kSnapshotWait, [&] { return present_done_ >= want || ended(); });
    if (!finished_ && present_ != nullptr && present_done_ >= want) return present_;
  }
  if (finished_) return nullptr;
  if (present_ == nullptr)
    throw LiveError(503, "no copy of the state yet (the simulation is inside a long step): try again");
  return choose();
}

std::shared_ptr<const LivePresent> LiveRun::present_jobs(JobSort sort, bool descending) {
  const std::int64_t asked = steady_ns();
  jobs_wanted_ns_.store(asked);
  order_wanted_ns_[static_cast<std::size_t>(sort) * 2 + (descending ? 1 : 0)].store(asked);
  return present_built(
      &LiveRun::jobs_ready_, [](const LivePresent& p) { return p.jobs() != nullptr; },
      [this] { jobs_wanted_ns_.store(steady_ns()); });
}

std::shared_ptr<const LivePresent> LiveRun::present_slurm() {
  const auto mark = [this] {
    const std::int64_t asked = steady_ns();
    jobs_wanted_ns_.store(asked);
    slurm_wanted_ns_.store(asked);
  };
  mark();
  return present_built(&LiveRun::slurm_ready_, has_slurm, mark);
}

std::shared_ptr<const LivePresent> LiveRun::present_gantt() {
  const auto mark = [this] { gantt_wanted_ns_.store(steady_ns()); };
  mark();
  return present_built(&LiveRun::gantt_ready_, has_gantt, mark);
}

std::shared_ptr<const LivePresent> LiveRun::present_events() {
  const auto mark = [this] { events_wanted_ns_.store(steady_ns()); };
  mark();
  return present_built(&LiveRun::events_ready_, has_events, mark);
}

std::shared_ptr<const LivePresent> LiveRun::present_metrics() {
  const auto mark = [this] { metrics_wanted_ns_.store(steady_ns()); };
  mark();
  return present_built(&LiveRun::metrics_ready_, has_metrics, mark);
}

std::shared_ptr<const LivePresent> LiveRun::present_built(std::shared_ptr<LivePresent> LiveRun::*ready,
                                                          const std::function<bool(const LivePresent&)>& build,
                                                          const std::function<void()>& mark) {
  // Copies are asked for (and the first, or one after an operator's action, waited for) as for the Overview.
  std::shared_ptr<const LivePresent> newest = present();
  if (newest == nullptr) return nullptr;  // the run has finished: its results answer
  {
    std::lock_guard lock(mutex_);
    const std::shared_ptr<LivePresent>& built = this->*ready;
    // The newest built, unless an operator acted since it was copied (the answer must show the action) or it is
    // older than the copy present() gave (the run's end: its last copy).
    if (built != nullptr && built->generation_ == action_generation_ &&
        (!simulation_done_ || built->now_s() >= newest->now_s())) {
      return built;
    }
    // present() may give the newest copy whose figures are made, made before the action when the present thread has
    // not yet made those of the copy after it: that copy then.
    if (newest->generation_ != action_generation_ && present_ != nullptr) newest = present_;
  }
  // None built yet: the copy present() gave, built now (or waited for, if the present thread builds it).
  if (build(*newest)) return newest;
  // That copy went before anyone read this: the next one (asked for now) keeps what it needs.
  std::shared_ptr<LivePresent> next;
  {
    std::unique_lock lock(mutex_);
    if (simulation_done_) return nullptr;  // the end's snapshot answers until the results are written
    const std::uint64_t want = ++present_requests_;
    attention_.store(true, std::memory_order_release);
    cv_.notify_all();
    cv_.wait_for(lock, kSnapshotWait,
                 [&] { return present_done_ >= want || finished_ || (simulation_done_ && present_ != nullptr); });
    if (finished_) return nullptr;
    mark();
    next = present_;
  }
  if (next == nullptr || !build(*next))
    throw LiveError(503, "no copy of the state yet (the simulation is inside a long step): try again");
  return next;
}

LiveStatus LiveRun::status() const {
  LiveStatus s;
  s.now_s = to_seconds(sim_now_.load(std::memory_order_relaxed));
  s.submitted = submitted_.load(std::memory_order_relaxed);
  s.ended = ended_.load(std::memory_order_relaxed);
  s.events = sim_events_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  s.total_jobs = total_jobs_.load();
  s.speed = speed_;
  s.snapshots = snapshots_;
  s.copies = copies_;
  s.reused_copies = reused_copies_;
  s.simulation_on_cpu = simulation_on_cpu_;
  s.simulation_cpu_wait_s = simulation_cpu_wait_s_;
  s.snapshot_wall_s = snapshot_wall_s_;
  s.snapshot_copy_wall_s = snapshot_copy_wall_s_;
  s.error = error_;
  s.state = finished_ ? (final_outcome_ ? "ended" : "failed") : paused_ ? "paused" : "running";
  return s;
}

void LiveRun::pause() {
  std::lock_guard lock(mutex_);
  if (finished_) throw LiveError(409, "the simulation has ended");
  paused_ = true;
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
  add_event(sim_now_.load(), "action", "clock", "paused");
  publish_actions();
}

void LiveRun::resume() {
  std::lock_guard lock(mutex_);
  if (finished_) throw LiveError(409, "the simulation has ended");
  paused_ = false;
  rebase_ = true;
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
  add_event(sim_now_.load(), "action", "clock", "resumed");
  publish_actions();
}

void LiveRun::set_speed(double factor) {
  std::lock_guard lock(mutex_);
  if (finished_) throw LiveError(409, "the simulation has ended");
  speed_ = factor;
  rebase_ = true;
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
  add_event(sim_now_.load(), "action", "clock", factor > 0 ? fmt::format("speed {:g}x", factor) : "speed max");
  publish_actions();
}

NodeIndex LiveRun::node_named(const std::string& name) const {
  const auto it = std::find(node_names_.begin(), node_names_.end(), name);
  if (it == node_names_.end()) throw LiveError(404, "no node '" + name.substr(0, 64) + "'");
  return static_cast<NodeIndex>(it - node_names_.begin());
}

std::int64_t LiveRun::run_command(std::function<void(SimWorld&)> apply) {
  std::unique_lock lock(mutex_);
  if (finished_ || stop_requested_) throw LiveError(409, "the simulation has ended");
  const std::uint64_t id = ++next_command_;
  std::int64_t at = 0;
  std::optional<LiveError> refused;  // what the action threw on the simulation's thread, thrown again here
  commands_.push_back(Command{id, [apply = std::move(apply), &at, &refused](SimWorld& world) {
                                at = to_seconds(world.now());
                                try {
                                  apply(world);
                                } catch (const LiveError& e) {
                                  refused.emplace(e);
                                }
                              }});
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
  cv_.wait(lock, [&] { return applied_command_ >= id || finished_; });
  if (applied_command_ < id) throw LiveError(409, "the simulation ended before the action took effect");
  if (refused) throw *refused;
  return at;
}

std::int64_t LiveRun::drain_node(const std::string& name, const std::string& reason) {
  const NodeIndex n = node_named(name);
  return run_command([this, n, name, reason](SimWorld& world) {
    add_sim_event(world.now(), "action", name, "drain (" + reason + ")");
    world.drain_node(n, reason);
  });
}

std::int64_t LiveRun::resume_node(const std::string& name) {
  const NodeIndex n = node_named(name);
  return run_command([this, n, name](SimWorld& world) {
    add_sim_event(world.now(), "action", name, "resume");
    world.resume_node(n);
  });
}

LiveRestarted LiveRun::restart_node(const std::string& name, const std::string& reason) {
  const NodeIndex n = node_named(name);
  auto result = std::make_shared<LiveRestarted>();
  result->time = run_command([this, n, name, reason, result](SimWorld& world) {
    HealthController* health = outcome_ != nullptr ? outcome_->health.get() : nullptr;
    if (health == nullptr) throw LiveError(409, "this run has no node lifecycle (health controller)");
    if (!health->may_reboot(n)) {
      throw LiveError(409,
                      "node '" + name + "' is " + condition_name(world.state().node_condition(n)) + ": not restarted");
    }
    add_sim_event(world.now(), "action", name, "restart (" + reason + ")");
    health->operator_reboot(n, reason);
    result->rebooting = world.state().node_condition(n) == NodeCondition::kRebooting;
  });
  return *result;
}

std::int64_t LiveRun::cancel_job(std::int64_t job_id) {
  return run_command([this, job_id](SimWorld& world) {
    const ClusterState& state = world.state();
    const JobIndex j = submitted_job(state, job_id);
    const JobRuntime& rt = state.job(j);
    if (rt.state != JobState::kPending && rt.state != JobState::kRunning) {
      throw LiveError(409, "Job/step already completing or completed", 2021);
    }
    add_sim_event(world.now(), "action", std::to_string(job_id), "cancel");
    world.cancel_job(j, PendingReason::kNone);
  });
}

JobIndex LiveRun::submitted_job(const ClusterState& state, std::int64_t job_id) {
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    if (static_cast<std::int64_t>(state.spec(j).id) != job_id) continue;
    if (!state.job(j).submitted) break;  // not submitted yet: slurmctld does not know it
    return j;
  }
  throw LiveError(404, "Invalid job id specified", 2017);
}

LiveSubmitted LiveRun::submit_job(JobSpec spec, bool hold) {
  auto result = std::make_shared<LiveSubmitted>();
  const std::int64_t at = run_command([this, spec = std::move(spec), hold, result](SimWorld& world) mutable {
    const ClusterConfig& cluster = world.state().config();
    const int p = spec.partition.empty() ? cluster.default_partition() : cluster.partition_index(spec.partition);
    if (p < 0) {
      throw LiveError(400,
                      spec.partition.empty() ? "No partition specified or system default partition"
                                             : "Invalid partition name specified",
                      spec.partition.empty() ? 2001 : 2000);
    }
    const ClusterState& state = world.state();
    if (state.job_count() >= kMaxJobs) {
      throw LiveError(409, "the run holds " + std::to_string(kMaxJobs) + " jobs, the most a workload may have", 2050);
    }
    if (next_job_id_ == 0) {
      // As slurmctld's next job id: after the largest id the table holds (array jobs' ids included).
      std::uint64_t largest = 0;
      for (const JobSpec& s : state.specs()) largest = std::max({largest, s.id, s.array_job_id});
      next_job_id_ = largest + 1;
    }
    spec.id = next_job_id_++;
    if (spec.run_time_s < 0)
      spec.run_time_s = effective_time_limit_s(spec, cluster.partitions[static_cast<std::size_t>(p)]);
    const JobIndex j = world.submit_job(std::move(spec), static_cast<std::uint32_t>(p));
    const JobRuntime& rt = world.state().job(j);
    if (hold && rt.state == JobState::kPending) world.hold_job(j);
    result->job_id = static_cast<std::int64_t>(world.state().spec(j).id);
    result->time = to_seconds(world.now());
    result->refused = rt.rejected ? rt.reason : PendingReason::kNone;
    total_jobs_.store(world.state().job_count(), std::memory_order_relaxed);
    add_sim_event(world.now(), "action", std::to_string(result->job_id),
                  rt.rejected ? "submit refused (" + std::string(pending_reason_name(rt.reason)) + ")"
                  : hold      ? "submit (held)"
                              : "submit");
  });
  result->time = at;
  return *result;
}

std::int64_t LiveRun::update_job(std::int64_t job_id, const LiveJobUpdate& update) {
  const std::int64_t at = run_command([this, job_id, update](SimWorld& world) {
    const ClusterState& state = world.state();
    const JobIndex j = submitted_job(state, job_id);
    const JobRuntime& rt = state.job(j);
    if (rt.state == JobState::kRunning) throw LiveError(409, "Job is no longer pending execution", 2073);
    if (rt.state != JobState::kPending) throw LiveError(409, "Job/step already completing or completed", 2021);
    const bool held = rt.reason == PendingReason::kJobHeldAdmin || rt.reason == PendingReason::kJobHeldUser;
    if (update.priority && !update.hold && held) {
      // A held job's priority cannot be set (slurm_update_job2: ESLURM_JOB_HELD); release it first.
      throw LiveError(409, "Job is in held state, pending scheduler release", 2042);
    }
    std::string what;
    if (update.hold && !*update.hold) {
      world.release_job(j);
      what += " release";
    }
    if (update.time_limit_s) {
      world.set_job_time_limit(j, *update.time_limit_s);
      what += fmt::format(" time_limit={}", *update.time_limit_s);
    }
    if (update.priority) {
      world.set_job_priority(j, *update.priority);
      what += fmt::format(" priority={}", *update.priority);
    }
    if (update.hold && *update.hold) {
      world.hold_job(j);
      what += " hold";
    }
    add_sim_event(world.now(), "action", std::to_string(job_id), "update" + what);
  });
  return at;
}

LiveInjected LiveRun::inject_fault(const std::string& name, std::uint32_t xid, std::uint32_t gpu) {
  const NodeIndex n = node_named(name);
  const XidInfo* info = find_xid(xid);
  if (info == nullptr) throw LiveError(400, "field 'xid': XID " + std::to_string(xid) + " is not in the catalogue");
  auto result = std::make_shared<LiveInjected>();
  result->effect = std::string(to_string(info->effect));
  result->symptom = std::string(to_string(info->symptom));
  const std::int64_t at = run_command([this, n, name, xid, gpu, info, result](SimWorld& world) {
    const NodeConfig& node = world.state().config().nodes[n];
    if (gpu >= std::max<std::uint32_t>(node.gpus, 1)) {
      throw LiveError(400, "field 'gpu': node '" + name + "' has no GPU " + std::to_string(gpu));
    }
    if (outcome_ == nullptr || outcome_->faults == nullptr) {
      throw LiveError(409, "this run has no fault mechanics");
    }
    InjectedFault fault;
    fault.node = n;
    fault.gpu = gpu;
    fault.xid = xid;
    fault.effect = info->effect;
    fault.symptom = info->symptom;
    fault.cause = "injected by an operator";
    add_sim_event(world.now(), "action", name, fmt::format("inject XID {} on GPU {}", xid, gpu));
    result->struck = outcome_->faults->inject(world, fault) >= 0;
  });
  result->time = at;
  return *result;
}

LiveScaled LiveRun::scale(std::int32_t count) {
  auto result = std::make_shared<LiveScaled>();
  const std::int64_t at = run_command([this, count, result](SimWorld& world) {
    if (outcome_ == nullptr || outcome_->scaling == nullptr) {
      throw LiveError(409, "this scenario has no cloud pool to scale (/autoscaler or /power_save)");
    }
    for (NodeIndex n : outcome_->scaling->operator_scale(count)) result->nodes.push_back(node_names_[n]);
    add_sim_event(world.now(), "action", "cluster",
                  fmt::format("scale {} {}: {} node(s)", count > 0 ? "up" : "down", count > 0 ? count : -count,
                              result->nodes.size()));
  });
  result->time = at;
  return *result;
}

std::pair<int, std::string> LiveSlurmWriter::update_node(const std::string& name, bool drain,
                                                         const std::string& reason) {
  try {
    if (drain) {
      live_.drain_node(name, reason);
    } else {
      live_.resume_node(name);
    }
    return {0, ""};
  } catch (const LiveError& e) {
    return {e.status() == 404 ? 2018 : 1, e.status() == 404 ? "Invalid node name specified" : e.what()};
  }
}

std::pair<int, std::string> LiveSlurmWriter::cancel_job(std::int64_t job_id) {
  try {
    live_.cancel_job(job_id);
    return {0, ""};
  } catch (const LiveError& e) {
    return {e.slurm_error() != 0 ? e.slurm_error() : 1, e.what()};
  }
}

namespace {

// Slurm's error for a job the submit-time checks refused (job_mgr.c:job_allocate's return codes).
std::pair<int, std::string> submit_refusal(PendingReason reason) {
  switch (reason) {
    case PendingReason::kBadConstraints:
      return {2014, "Requested node configuration is not available"};
    case PendingReason::kInvalidAccount:
      return {2045, "Invalid account or account/partition combination specified"};
    case PendingReason::kInvalidQos:
      return {2066, "Invalid qos specification"};
    case PendingReason::kInvalidReservation:
      return {2052, "Access denied to requested reservation"};
    default:  // submit limits (MaxSubmitJobs, GrpSubmitJobs) and spend quotas
      return {2050, "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"};
  }
}

}  // namespace

SlurmSubmitResult LiveSlurmWriter::submit_job(const JobSpec& spec, bool hold) {
  try {
    const LiveSubmitted done = live_.submit_job(spec, hold);
    if (done.refused != PendingReason::kNone) {
      const auto [error, message] = submit_refusal(done.refused);
      return SlurmSubmitResult{0, error, message};
    }
    return SlurmSubmitResult{done.job_id, 0, ""};
  } catch (const LiveError& e) {
    return SlurmSubmitResult{0, e.slurm_error() != 0 ? e.slurm_error() : 1, e.what()};
  }
}

std::pair<int, std::string> LiveSlurmWriter::update_job(std::int64_t job_id, const SlurmJobUpdate& update) {
  try {
    live_.update_job(job_id, update);
    return {0, ""};
  } catch (const LiveError& e) {
    return {e.slurm_error() != 0 ? e.slurm_error() : 1, e.what()};
  }
}

void LiveRun::stop() {
  std::lock_guard lock(mutex_);
  if (finished_ || stop_requested_) return;
  stop_requested_ = true;
  attention_.store(true, std::memory_order_release);
  cv_.notify_all();
}

bool LiveRun::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return finished_; });
}

const RunOutcome* LiveRun::outcome() const {
  std::lock_guard lock(mutex_);
  return finished_ ? final_outcome_.get() : nullptr;
}

// ---- Events ----

void LiveRun::add_event(SimTime time, const char* kind, std::string subject, std::string text) {
  std::lock_guard lock(events_mutex_);
  pending_events_.push_back(LiveEvent{0, to_seconds(time), kind, std::move(subject), std::move(text)});
}

void LiveRun::add_sim_event(SimTime time, const char* kind, std::string subject, std::string text) {
  raw_events_.push_back(RawEvent{time, kRawText, static_cast<std::uint32_t>(sim_texts_.size()), 0});
  sim_texts_.push_back(LiveEvent{0, to_seconds(time), kind, std::move(subject), std::move(text)});
}

bool LiveRun::has_pending_events() const {
  if (!raw_events_.empty()) return true;
  std::lock_guard lock(events_mutex_);
  return !pending_events_.empty();
}

LiveEvent LiveRun::format(const RawEvent& raw) {
  const ClusterState& state = *state_;
  const std::int64_t time = to_seconds(raw.time);
  switch (raw.what) {
    case kRawJobStarted:
      return LiveEvent{0, time, "job", std::to_string(state.spec(raw.index).id),
                       "RUNNING on " + job_node_list(state, raw.index)};
    case kRawJobEnded:
      return LiveEvent{0, time, "job", std::to_string(state.spec(raw.index).id),
                       std::string(job_state_name(static_cast<JobState>(raw.other)))};
    case kRawNodeState:
      return LiveEvent{0, time, "node", node_names_[raw.index],
                       std::string(node_state_name(static_cast<NodeState>(raw.other)))};
    default:
      return std::move(sim_texts_[raw.index]);
  }
}

void LiveRun::collect_controller_records() {
  if (outcome_ == nullptr) return;
  const std::size_t before = raw_events_.size();
  if (outcome_->scaling != nullptr) {
    const std::vector<ScalingRecord>& records = outcome_->scaling->records();
    for (; scaling_seen_ < records.size(); ++scaling_seen_) {
      const ScalingRecord& r = records[scaling_seen_];
      const bool decision = r.action == ScalingRecord::Action::kCreate || r.action == ScalingRecord::Action::kRemove;
      add_sim_event(r.time, "scaling", node_names_[r.node],
                    scaling_event_text(to_string(r.action), decision ? static_cast<std::int64_t>(r.demand) : -1));
    }
  }
  if (outcome_->quota != nullptr) {
    const std::vector<QuotaEvent>& events = outcome_->quota->events();
    for (; quota_seen_ < events.size(); ++quota_seen_) {
      const QuotaEvent& e = events[quota_seen_];
      add_sim_event(e.time, "quota", e.user,
                    quota_event_text(e.action, static_cast<std::int64_t>(e.job_id), e.spend_usd, e.projected_usd));
    }
  }
  if (outcome_->operations != nullptr) {
    const std::vector<OperationRecord>& records = outcome_->operations->records();
    for (; operations_seen_ < records.size(); ++operations_seen_) {
      const OperationRecord& r = records[operations_seen_];
      add_sim_event(r.time, "operation", r.node < node_names_.size() ? node_names_[r.node] : "cluster",
                    operation_event_text(r.action, r.name, r.step, r.jobs_killed));
    }
  }
  if (raw_events_.size() == before) return;
  // Each controller's records are in time order, and all are at or before now: merged into the observer's events.
  const auto by_time = [](const RawEvent& a, const RawEvent& b) { return a.time < b.time; };
  const auto mid = raw_events_.begin() + static_cast<std::ptrdiff_t>(before);
  std::stable_sort(mid, raw_events_.end(), by_time);
  std::inplace_merge(raw_events_.begin(), mid, raw_events_.end(), by_time);
}

void LiveRun::publish_events() {
  collect_controller_records();
  // Formatted here, on the simulation's thread, between instants: only the newest event_buffer of a batch (at full
  // speed a batch of 50 ms can hold more than the buffer keeps).
  std::vector<LiveEvent> formatted;
  if (!raw_events_.empty()) {
    const std::size_t skip =
        raw_events_.size() > options_.event_buffer ? raw_events_.size() - options_.event_buffer : 0;
    formatted.reserve(raw_events_.size() - skip);
    for (std::size_t i = skip; i < raw_events_.size(); ++i) formatted.push_back(format(raw_events_[i]));
    raw_events_.clear();
    sim_texts_.clear();
  }
  {
    std::lock_guard lock(events_mutex_);
    last_publish_ = WallClock::now();
    if (formatted.empty() && pending_events_.empty()) return;
    for (std::vector<LiveEvent>* batch : {&formatted, &pending_events_}) {
      for (LiveEvent& e : *batch) {
        e.seq = ++last_seq_;
        events_.push_back(std::move(e));
      }
    }
    pending_events_.clear();
    while (events_.size() > options_.event_buffer) events_.pop_front();
  }
  events_cv_.notify_all();
}

void LiveRun::publish_actions() {
  {
    std::lock_guard lock(events_mutex_);
    if (pending_events_.empty()) return;
    for (LiveEvent& e : pending_events_) {
      e.seq = ++last_seq_;
      events_.push_back(std::move(e));
    }
    pending_events_.clear();
    while (events_.size() > options_.event_buffer) events_.pop_front();
  }
  events_cv_.notify_all();
}

std::vector<LiveEvent> LiveRun::events_after(std::uint64_t seq, std::size_t max, std::chrono::milliseconds wait) {
  std::unique_lock lock(events_mutex_);
  events_cv_.wait_for(lock, wait, [&] { return last_seq_ > seq || streams_closed_; });
  std::vector<LiveEvent> out;
  // Events are in seq order without gaps inside the buffer: find the first after `seq`.
  const std::uint64_t first = events_.empty() ? 0 : events_.front().seq;
  std::size_t i = seq + 1 > first ? static_cast<std::size_t>(seq + 1 - first) : 0;
  for (; i < events_.size() && out.size() < max; ++i) out.push_back(events_[i]);
  return out;
}

std::uint64_t LiveRun::last_event_seq() const {
  std::lock_guard lock(events_mutex_);
  return last_seq_;
}

void LiveRun::close_streams() {
  {
    std::lock_guard lock(events_mutex_);
    streams_closed_ = true;
  }
  events_cv_.notify_all();
}

bool LiveRun::streams_closed() const {
  std::lock_guard lock(events_mutex_);
  return streams_closed_;
}

// The observer only notes what happened (no text, no lock): publish_events formats it.
void LiveRun::on_job_started(JobIndex job, SimTime now) {
  raw_events_.push_back(RawEvent{now, kRawJobStarted, job, 0});
}

void LiveRun::on_job_ended(JobIndex job, SimTime now) {
  raw_events_.push_back(RawEvent{now, kRawJobEnded, job, static_cast<std::uint32_t>(state_->job(job).state)});
}

void LiveRun::on_node_state(NodeIndex node, NodeState state, SimTime now) {
  raw_events_.push_back(RawEvent{now, kRawNodeState, node, static_cast<std::uint32_t>(state)});
}

void LiveRun::on_job_preempted(JobIndex job, JobIndex preemptor, SimTime at, bool requeue, SimTime now) {
  // Rare: told with its text at once (as the results' event log tells it).
  add_sim_event(now, "preemption", std::to_string(state_->spec(job).id),
                preemption_event_text(static_cast<std::int64_t>(state_->spec(preemptor).id),
                                      requeue ? "REQUEUE" : "CANCEL", to_seconds(at)));
}

}  // namespace gputwin
