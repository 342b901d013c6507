#include "results/gpu_metrics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <type_traits>

namespace gputwin {
namespace {

/// Mask of `count` consecutive GPUs starting at `first`.
std::uint64_t range_mask(std::uint32_t first, std::uint32_t count) {
  if (count == 0) return 0;
  const std::uint64_t ones = count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
  return ones << first;
}

/// The lowest `count` set bits of `free`.
std::uint64_t lowest_bits(std::uint64_t free, std::uint32_t count) {
  std::uint64_t out = 0;
  for (std::uint32_t i = 0; i < count && free != 0; ++i) {
    const std::uint64_t bit = free & (~free + 1);
    out |= bit;
    free &= ~bit;
  }
  return out;
}

/// The GPU model of node `n`; nodes without a catalogued type are costed as H100s.
const GpuModel& node_gpu_model(const ClusterConfig& cluster, NodeIndex n, std::vector<GpuModel>& cache) {
  if (cache.empty()) {
    cache.reserve(cluster.nodes.size());
    const GpuModel fallback = *find_gpu_model("h100");
    for (const NodeConfig& node : cluster.nodes) cache.push_back(find_gpu_model(node.gpu_type).value_or(fallback));
  }
  return cache[n];
}

/// One run of a job. Runs are numbered: id < job_count is job id's last run (JobRuntime; not started: start < 0),
/// job_count + r is past_runs()[r], an earlier run a requeue discarded.
struct RunRef {
  JobIndex job = 0;
  bool last = true;  // the job's last run
  SimTime start = -1;
  SimTime end = -1;  // clipped to the horizon (a run still going there ends at it)
  std::uint32_t alloc_offset = 0;
  std::span<const NodeAllocation> allocation;
};

RunRef run_ref(const ClusterState& state, std::uint32_t id, SimTime horizon) {
  if (id < state.job_count()) {
    const JobRuntime& rt = state.job(id);
    if (rt.start < 0) return RunRef{id, true, -1, -1, 0, {}};
    const SimTime end = rt.end >= 0 ? std::min(rt.end, horizon) : horizon;
    return RunRef{id, true, rt.start, end, rt.alloc_offset, state.allocation(id)};
  }
  const PastRun& r = state.past_runs()[id - state.job_count()];
  return RunRef{r.job, false, r.start, std::min(r.end, horizon), r.alloc_offset, state.allocation(r)};
}

/// Number of runs (ids 0 .. run_count - 1).
std::uint32_t run_count(const ClusterState& state) {
  return static_cast<std::uint32_t>(state.job_count() + state.past_runs().size());
}

/// A run's per-GPU load averaged over it: the profile's reference load on the run's allocation, scaled by the
/// job's mean speed (reference run time / actual time) when the run completed the job; pure compute without a
/// profile. A requeued run's speed is not known: it keeps the reference load.
GpuLoad run_load(const ClusterState& state, const RunRef& run, const JobLoadFn& load) {
  GpuLoad out;
  if (!load) return out;
  const std::optional<GpuLoad> base = load(run.job, run.allocation);
  if (!base) return out;
  out = *base;
  const JobRuntime& rt = state.job(run.job);
  const double actual_s = rt.end >= 0 ? to_seconds_f(rt.end - rt.start) : 0;
  const double reference_s = rt.run_length_s;  // the run's work and overheads at reference speed
  if (run.last && rt.state == JobState::kCompleted && actual_s > 0 && reference_s > 0) {
    const double mean_speed = reference_s / actual_s;  // compute work is fixed: its share of the time scales with speed
    out.compute_share = std::min(1.0, out.compute_share * mean_speed);
    out.nvlink_bytes_per_s *= mean_speed;
    out.job_cross_leaf_bytes_per_s *= mean_speed;
  }
  return out;
}

/// Whether a node in `condition` is in service: out of it (drained, down, rebooting), its free GPUs are not free.
bool in_service(NodeCondition condition) {
  return condition == NodeCondition::kNone;
}

/// Whether a node's dcgm-exporter answers scrapes in `condition`: not while the node is DOWN or rebooting.
bool scrapeable(NodeCondition condition) {
  return condition == NodeCondition::kNone || condition == NodeCondition::kDrain || condition == NodeCondition::kFail;
}

/// A node's condition at t = 0: from the configuration (State=DRAIN or DOWN in slurm.conf).
NodeCondition configured_condition(const NodeConfig& node) {
  if (node.available) return NodeCondition::kNone;
  return node.drained ? NodeCondition::kDrain : NodeCondition::kDown;
}

/// One busy interval of one GPU.
struct BusyInterval {
  double start_s = 0;
  double end_s = 0;
  std::uint64_t job_id = 0;
  double power_w = 0;
  double nvlink_bytes_per_s = 0;
};

/// Walks one GPU's piecewise-constant power through time, integrating power, busy time and NVLink bytes, and
/// relaxing its temperature.
class GpuCursor {
 public:
  /// A cursor at `start_s` (0: the series' start; later, for one period's values only: the temperature is then not
  /// the series').
  GpuCursor(const std::vector<BusyInterval>& busy, const GpuModel& gpu, const TelemetryAssumptions& a,
            double start_s = 0)
      : busy_(busy), gpu_(gpu), a_(a), t_(start_s), temp_c_(steady_temp_c(gpu, a, gpu.idle_power_w)) {}

  /// Integrals since the last reset.
  struct Sums {
    double energy_j = 0, busy_s = 0, nvlink_bytes = 0;
    std::uint64_t top_job = 0;  // the job that held the GPU longest in the period (0: none)
    double top_job_s = 0;
  };

  void advance(double to_s, Sums& sums) {
    while (t_ < to_s) {
      while (idx_ < busy_.size() && busy_[idx_].end_s <= t_) ++idx_;
      const BusyInterval* on = idx_ < busy_.size() && busy_[idx_].start_s <= t_ ? &busy_[idx_] : nullptr;
      const double next = on != nullptr ? on->end_s : (idx_ < busy_.size() ? busy_[idx_].start_s : to_s);
      const double seg_end = std::min(to_s, next);
      const double dt = seg_end - t_;
      const double power = on != nullptr ? on->power_w : gpu_.idle_power_w;
      sums.energy_j += power * dt;
      if (on != nullptr) {
        sums.busy_s += dt;
        sums.nvlink_bytes += on->nvlink_bytes_per_s * dt;
        if (dt > sums.top_job_s) {  // a job is one segment per period, so its longest segment is its time
          sums.top_job = on->job_id;
          sums.top_job_s = dt;
        }
      }
      temp_c_ = relax_temp_c(temp_c_, steady_temp_c(gpu_, a_, power), dt, a_.thermal_time_constant_s);
      t_ = seg_end;
    }
  }
  /// The interval running at the cursor's time, if any.
  [[nodiscard]] const BusyInterval* current() const {
    std::size_t i = idx_;
    while (i < busy_.size() && busy_[i].end_s <= t_) ++i;
    return i < busy_.size() && busy_[i].start_s <= t_ ? &busy_[i] : nullptr;
  }
  [[nodiscard]] double temp_c() const { return temp_c_; }

 private:
  const std::vector<BusyInterval>& busy_;
  const GpuModel& gpu_;
  const TelemetryAssumptions& a_;
  double t_;
  std::size_t idx_ = 0;
  double temp_c_;
};

/// Each run's per-GPU load (run_load) by run id (see RunRef); adds the bytes runs sent between leaf switches to
/// `cross_leaf_bytes`.
std::vector<GpuLoad> run_loads(const ClusterState& state, SimTime horizon, const JobLoadFn& load,
                               double* cross_leaf_bytes) {
  const std::uint32_t runs = run_count(state);
  std::vector<GpuLoad> loads(runs);
  for (std::uint32_t id = 0; id < runs; ++id) {
    const RunRef run = run_ref(state, id, horizon);
    if (run.start < 0) continue;
    loads[id] = run_load(state, run, load);
    *cross_leaf_bytes += loads[id].job_cross_leaf_bytes_per_s * to_seconds_f(run.end - run.start);
  }
  return loads;
}

/// The per-GPU series every `step` seconds from 0 to `horizon` (GPU by GPU, time ascending); returns the samples
/// sent. With `only_time_s` >= 0, only the samples at that time: each GPU's walk then starts at the period before it
/// with the runs that overlap the period, which gives the same segments, so the same utilisation, power, NVLink rate,
/// framebuffer, job and XID, but not the temperature and energy the series carries from t = 0 (sent as 0).
std::uint64_t per_gpu_samples(const ClusterState& state, const GpuBinding& binding, SimTime horizon,
                              const MetricsConfig& config, std::span<const GpuLoad> loads,
                              std::span<const XidEvent> xids, std::span<const NodeConditionEvent> conditions,
                              double step, std::int64_t only_time_s,
                              const std::function<void(const GpuSample&)>& gpu_sink) {
  const ClusterConfig& cluster = state.config();
  const TelemetryAssumptions& a = config.telemetry;
  std::vector<GpuModel> models;
  const double horizon_s = to_seconds_f(horizon);
  const std::uint32_t runs = run_count(state);
  std::uint64_t sent = 0;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> node_allocs(cluster.nodes.size());  // (run, k)
  for (std::uint32_t id = 0; id < runs; ++id) {
    const RunRef run = run_ref(state, id, horizon);
    if (run.start < 0) continue;
    for (std::uint32_t k = 0; k < run.allocation.size(); ++k) {
      if (run.allocation[k].gpus > 0) node_allocs[run.allocation[k].node].emplace_back(id, k);
    }
  }
  std::vector<std::vector<XidEvent>> node_xids(cluster.nodes.size());
  for (const XidEvent& x : xids) {
    if (x.node < node_xids.size()) node_xids[x.node].push_back(x);
  }
  std::vector<std::vector<NodeConditionEvent>> node_conditions(cluster.nodes.size());
  for (const NodeConditionEvent& e : conditions) {
    if (e.node < node_conditions.size()) node_conditions[e.node].push_back(e);
  }
  const auto samples = static_cast<std::uint64_t>(std::floor(horizon_s / step)) + 1;
  // The samples computed: all, or the one at only_time_s (if it is a sample time) walked from the period before it.
  std::uint64_t first = 0, end = samples;
  double window_s = 0;  // the walk's start: runs ending by then, or starting after the last sample, play no part
  if (only_time_s >= 0) {
    first = static_cast<std::uint64_t>(std::floor(static_cast<double>(only_time_s) / step));
    while (first < samples && std::llround(static_cast<double>(first) * step) < only_time_s) ++first;
    end = first < samples && std::llround(static_cast<double>(first) * step) == only_time_s ? first + 1 : first;
    if (first > 0) window_s = static_cast<double>(first - 1) * step;
  }
  const double last_s = end > 0 ? static_cast<double>(end - 1) * step : 0;
  std::vector<std::vector<BusyInterval>> busy(64);
  GpuSample s;
  for (NodeIndex n = 0; n < cluster.nodes.size() && first < end; ++n) {
    const GpuModel& gpu = node_gpu_model(cluster, n, models);
    const std::uint32_t gpus = std::min<std::uint32_t>(cluster.nodes[n].gpus, 64);
    // Each GPU's runs, in the node's run order (sorted by start below).
    for (std::uint32_t g = 0; g < gpus; ++g) busy[g].clear();
    for (const auto& [id, k] : node_allocs[n]) {
      const RunRef run = run_ref(state, id, horizon);
      const double start_s = to_seconds_f(run.start), end_s = to_seconds_f(run.end);
      if (only_time_s >= 0 && (end_s <= window_s || start_s > last_s)) continue;
      const BusyInterval interval{start_s, end_s, state.spec(run.job).id, gpu_power_w(gpu, a, &loads[id]),
                                  loads[id].nvlink_bytes_per_s};
      for (std::uint64_t mask = binding.mask_at(run.alloc_offset + k); mask != 0; mask &= mask - 1) {
        const auto g = static_cast<std::uint32_t>(std::countr_zero(mask));
        if (g < gpus) busy[g].push_back(interval);
      }
    }
    for (std::uint32_t g = 0; g < gpus; ++g) {
      std::sort(busy[g].begin(), busy[g].end(),
                [](const BusyInterval& x, const BusyInterval& y) { return x.start_s < y.start_s; });
      GpuCursor cursor(busy[g], gpu, a, window_s);
      double energy_j = 0;
      std::size_t xi = 0, ci = 0;
      std::uint32_t last_xid = 0;
      NodeCondition condition = configured_condition(cluster.nodes[n]);
      s.node = n;
      s.gpu = g;
      for (std::uint64_t k = first; k < end; ++k) {
        const double t = static_cast<double>(k) * step;
        GpuCursor::Sums sums;
        cursor.advance(t, sums);
        energy_j += sums.energy_j;
        const BusyInterval* on = cursor.current();
        s.time_s = static_cast<std::int64_t>(std::llround(t));
        s.job_id = k == 0 ? (on != nullptr ? on->job_id : 0) : sums.top_job;
        if (k == 0) {  // an empty period: the instant's values
          s.util_pct = on != nullptr ? a.busy_util_pct : 0;
          s.power_w = on != nullptr ? on->power_w : gpu.idle_power_w;
          s.nvlink_tx_bytes_per_s = on != nullptr ? on->nvlink_bytes_per_s : 0;
        } else {
          s.util_pct = a.busy_util_pct * sums.busy_s / step;
          s.power_w = sums.energy_j / step;
          s.nvlink_tx_bytes_per_s = sums.nvlink_bytes / step;
        }
        s.fb_used_mib = fb_used_mib(gpu, a, on != nullptr);
        s.temp_c = cursor.temp_c();
        s.energy_mj = energy_j * 1000.0;
        const auto& xs = node_xids[n];
        for (; xi < xs.size() && to_seconds_f(xs[xi].time) <= t; ++xi) {
          if (xs[xi].gpu == g) last_xid = xs[xi].xid;
        }
        s.xid = last_xid;
        const auto& cs = node_conditions[n];
        for (; ci < cs.size() && to_seconds_f(cs[ci].time) <= t; ++ci) condition = cs[ci].condition;
        if (only_time_s >= 0) {  // the history before the window was not walked
          s.temp_c = 0;
          s.energy_mj = 0;
        }
        if (!scrapeable(condition)) continue;  // a DOWN or rebooting node's exporter does not answer the scrape
        gpu_sink(s);
        ++sent;
      }
    }
  }
  return sent;
}

}  // namespace

std::string gpu_index_list(std::uint64_t mask) {
  std::string out;
  for (int i = 0; i < 64;) {
    if ((mask >> i & 1) == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < 64 && (mask >> (j + 1) & 1) != 0) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += '-' + std::to_string(j);
    i = j + 1;
  }
  return out;
}

std::uint32_t GpuBinding::sockets(std::uint32_t gpus) {
  return gpus >= 4 && gpus % 2 == 0 ? 2 : 1;
}

GpuBinding::GpuBinding(const ClusterState& state, SimTime horizon) : state_(&state) {
  const ClusterConfig& cluster = state.config();
  masks_.assign(state.allocation_pool_size(), 0);
  if (state.max_node_gpus() == 0) return;  // a cluster without GPUs: every mask stays 0 and no job is split

  // Per node: (start, end, job, allocation pool index) of every run's allocation with GPUs, replayed in start order.
  struct Use {
    SimTime start, end;
    JobIndex job;
    std::uint32_t pool;
    std::uint32_t gpus;
  };
  std::vector<std::vector<Use>> uses(cluster.nodes.size());
  for (std::uint32_t id = 0; id < run_count(state); ++id) {
    const RunRef run = run_ref(state, id, horizon);
    if (run.start < 0) continue;
    for (std::uint32_t k = 0; k < run.allocation.size(); ++k) {
      const NodeAllocation& al = run.allocation[k];
      if (al.gpus > 0) uses[al.node].push_back(Use{run.start, run.end, run.job, run.alloc_offset + k, al.gpus});
    }
  }
  std::vector<bool> split(state.job_count(), false);
  using Release = std::pair<SimTime, std::uint64_t>;  // (end, mask)
  for (NodeIndex n = 0; n < uses.size(); ++n) {
    auto& list = uses[n];
    if (list.empty()) continue;
    std::stable_sort(list.begin(), list.end(), [](const Use& a, const Use& b) { return a.start < b.start; });
    const std::uint32_t gpus = std::min<std::uint32_t>(cluster.nodes[n].gpus, 64);
    const std::uint32_t socket_count = sockets(gpus);
    const std::uint32_t per_socket = gpus / socket_count;
    std::uint64_t free = range_mask(0, gpus);
    std::priority_queue<Release, std::vector<Release>, std::greater<>> running;
    for (const Use& u : list) {
      while (!running.empty() && running.top().first <= u.start) {
        free |= running.top().second;
        running.pop();
      }
      std::uint64_t mask = 0;
      for (std::uint32_t s = 0; s < socket_count && mask == 0; ++s) {
        const std::uint64_t socket_free = free & range_mask(s * per_socket, per_socket);
        if (static_cast<std::uint32_t>(std::popcount(socket_free)) >= u.gpus) mask = lowest_bits(socket_free, u.gpus);
      }
      if (mask == 0) {
        mask = lowest_bits(free, u.gpus);  // no socket has them all: lowest free indices (or, over-committed, fewer)
        // A split that a socket could have avoided (a request larger than a socket is always split).
        if (socket_count > 1 && u.gpus <= per_socket && (mask & range_mask(0, per_socket)) != 0 &&
            (mask & ~range_mask(0, per_socket)) != 0)
          split[u.job] = true;
      }
      free &= ~mask;
      masks_[u.pool] = mask;
      running.emplace(u.end, mask);
    }
  }
  socket_split_jobs_ = static_cast<std::uint64_t>(std::count(split.begin(), split.end(), true));
}

std::uint64_t GpuBinding::mask(JobIndex job, std::size_t k) const {
  const JobRuntime& rt = state_->job(job);
  return rt.start >= 0 && k < rt.alloc_count ? mask_at(rt.alloc_offset + k) : 0;
}

void expand_cluster_samples(std::span<const std::int64_t> times, std::int64_t step_s, std::int64_t from_s,
                            std::int64_t to_s, std::int64_t stride,
                            const std::function<void(std::int64_t, std::size_t)>& sample) {
  if (step_s <= 0 || stride <= 0 || times.empty() || to_s < from_s) return;
  const std::int64_t first = std::max<std::int64_t>(from_s, 0);
  std::int64_t t = (first + step_s - 1) / step_s * step_s;
  // The last row at or before the first sample, then forward.
  auto it = std::upper_bound(times.begin(), times.end(), t);
  for (; t <= to_s; t += step_s * stride) {
    while (it != times.end() && *it <= t) ++it;
    if (it == times.begin()) continue;
    sample(t, static_cast<std::size_t>(it - times.begin()) - 1);
  }
}

double cluster_sample_step_s(const MetricsConfig& config, double horizon_s) {
  return config.interval_s *
         std::max(1.0, std::ceil((std::floor(horizon_s / config.interval_s) + 1) / double(kMaxClusterSamples)));
}

std::uint64_t sampled_gpu_count(const ClusterConfig& cluster) {
  std::uint64_t gpus = 0;
  for (const NodeConfig& node : cluster.nodes) gpus += node.gpus;
  return gpus;
}

void gpu_samples_at(const ClusterState& state, const GpuBinding& binding, SimTime horizon, const MetricsConfig& config,
                    const JobLoadFn& load, std::span<const XidEvent> xids,
                    std::span<const NodeConditionEvent> conditions, std::int64_t time_s,
                    const std::function<void(const GpuSample&)>& gpu_sink) {
  if (!config.per_gpu || !gpu_sink || time_s < 0) return;
  double cross_leaf_bytes = 0;
  const std::vector<GpuLoad> loads = run_loads(state, horizon, load, &cross_leaf_bytes);
  const double step = gpu_sample_step_s(config, to_seconds_f(horizon), sampled_gpu_count(state.config()));
  per_gpu_samples(state, binding, horizon, config, loads, xids, conditions, step, time_s, gpu_sink);
}

double gpu_sample_step_s(const MetricsConfig& config, double horizon_s, std::uint64_t gpus) {
  const double per_gpu = std::floor(horizon_s / config.interval_s) + 1;
  const double wanted = per_gpu * static_cast<double>(gpus);
  const double factor = std::max(1.0, std::ceil(wanted / static_cast<double>(config.max_gpu_samples)));
  return config.interval_s * factor;
}

std::vector<ClusterSample> build_metrics(const ClusterState& state, const GpuBinding& binding, SimTime horizon,
                                         const MetricsConfig& config, const JobLoadFn& load,
                                         std::span<const XidEvent> xids, std::span<const NodeConditionEvent> conditions,
                                         const std::function<void(const GpuSample&)>& gpu_sink, MetricsTotals& totals,
                                         ClusterRows rows, const std::function<void()>& gpu_samples_done) {
  const ClusterConfig& cluster = state.config();
  const TelemetryAssumptions& a = config.telemetry;
  std::vector<GpuModel> models;
  const double horizon_s = to_seconds_f(horizon);
  const std::uint64_t total_gpus = sampled_gpu_count(cluster);
  totals = MetricsTotals{};
  totals.horizon_s = horizon_s;

  // Each run's power delta over idle and NVLink rate per GPU, by run id (see RunRef).
  double cross_leaf_bytes = 0;
  const std::vector<GpuLoad> loads = run_loads(state, horizon, load, &cross_leaf_bytes);
  totals.cross_leaf_traffic_tb = cross_leaf_bytes / 1e12;

  // ---- Per-GPU series -------------------------------------------------------------------------------------
  totals.socket_split_jobs = binding.socket_split_jobs();
  totals.gpu_step_s = gpu_sample_step_s(config, horizon_s, total_gpus);
  if (config.per_gpu && gpu_sink) {
    totals.gpu_samples =
        per_gpu_samples(state, binding, horizon, config, loads, xids, conditions, totals.gpu_step_s, -1, gpu_sink);
  }
  if (gpu_samples_done) gpu_samples_done();

  // ---- Cluster series: one sweep over run starts and ends, submits, requeues and node condition changes --------
  // At one instant: ends free before starts take, a requeued job is pending and a node back in service before a
  // start; a job submitted and started at once passes through pending (the counters are modular in between).
  enum Kind : std::uint8_t { kEnd = 0, kRequeue = 1, kCondition = 2, kStart = 3, kSubmit = 4, kGiveUp = 5 };
  struct Change {
    SimTime time;
    Kind kind;
    std::uint32_t index;  // run id (kStart, kEnd), job (kSubmit, kGiveUp), past run (kRequeue), condition change
  };
  const std::span<const PastRun> past = state.past_runs();
  std::vector<Change> changes;
  changes.reserve(state.job_count() * 3 + past.size() * 3 + conditions.size());
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (rt.rejected) continue;
    const SimTime submit = from_seconds(state.spec(j).submit_s);
    if (submit > horizon) continue;
    changes.push_back(Change{submit, kSubmit, j});
    if (rt.start >= 0) {
      changes.push_back(Change{rt.start, kStart, j});
      if (rt.end >= 0 && rt.end <= horizon) changes.push_back(Change{rt.end, kEnd, j});
    } else if (rt.end >= 0 && rt.end <= horizon) {
      changes.push_back(Change{rt.end, kGiveUp, j});  // left the queue without running (cancelled)
    }
  }
  const auto jobs = static_cast<std::uint32_t>(state.job_count());
  for (std::uint32_t r = 0; r < past.size(); ++r) {  // runs that happened, so all within the horizon
    changes.push_back(Change{past[r].start, kStart, jobs + r});
    changes.push_back(Change{past[r].end, kEnd, jobs + r});
    changes.push_back(Change{past[r].requeued, kRequeue, r});  // pending again until its next start
  }
  for (std::uint32_t e = 0; e < conditions.size(); ++e) {
    if (conditions[e].node < cluster.nodes.size() && conditions[e].time <= horizon)
      changes.push_back(Change{conditions[e].time, kCondition, e});
  }
  std::sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.time != y.time ? x.time < y.time : (x.kind != y.kind ? x.kind < y.kind : x.index < y.index);
  });

  // Per node: CPUs and GPUs held by runs, and its condition. A node DRAINING, DRAINED, FAILING or FAIL counts in
  // nodes_drain, DOWN or REBOOTING in nodes_down, whatever its jobs (the classic exporter's sinfo states; see the
  // README), and its free GPUs are not free while it is out.
  std::vector<std::uint32_t> alloc_cpus(cluster.nodes.size(), 0), alloc_gpus(cluster.nodes.size(), 0);
  std::vector<NodeCondition> condition(cluster.nodes.size());
  ClusterSample c;
  double idle_power_w = 0;
  const auto node_class = [&](NodeIndex n) -> std::uint32_t& {
    switch (condition[n]) {
      case NodeCondition::kDrain:
      case NodeCondition::kFail:  // FAILING/FAIL: no new jobs, as DRAIN (the schema has no fail column)
        return c.nodes_drain;
      case NodeCondition::kDown:
      case NodeCondition::kRebooting:
        return c.nodes_down;
      case NodeCondition::kPoweredDown:
      case NodeCondition::kPoweringUp:
      case NodeCondition::kPoweringDown:
        return c.nodes_powered_down;
      case NodeCondition::kNone:
        break;
    }
    if (alloc_cpus[n] == 0 && alloc_gpus[n] == 0) return c.nodes_idle;
    return alloc_cpus[n] >= cluster.nodes[n].cpus ? c.nodes_alloc : c.nodes_mixed;  // node_info.c: CPU-based
  };
  const auto free_gpus = [&](NodeIndex n) -> std::uint64_t {
    return in_service(condition[n]) ? cluster.nodes[n].gpus - alloc_gpus[n] : 0;
  };
  const auto fragmented = [&](NodeIndex n) -> std::uint64_t {
    const std::uint32_t g = cluster.nodes[n].gpus;
    return in_service(condition[n]) && alloc_gpus[n] > 0 && alloc_gpus[n] < g ? g - alloc_gpus[n] : 0;
  };
  // A node's share of the counters: taken out before it changes and put back after.
  // Its free and fragmented GPUs taken out of the counters or put back; 0 on a node without GPUs, which is skipped.
  const auto take_gpu_share = [&](NodeIndex n) {
    if (cluster.nodes[n].gpus == 0) return;
    c.gpus_free -= free_gpus(n);
    c.gpus_free_fragmented -= fragmented(n);
  };
  const auto put_gpu_share = [&](NodeIndex n) {
    if (cluster.nodes[n].gpus == 0) return;
    c.gpus_free += free_gpus(n);
    c.gpus_free_fragmented += fragmented(n);
  };
  const auto leave = [&](NodeIndex n) {
    node_class(n) -= 1;
    take_gpu_share(n);
  };
  const auto enter = [&](NodeIndex n) {
    node_class(n) += 1;
    put_gpu_share(n);
  };
  for (NodeIndex n = 0; n < cluster.nodes.size(); ++n) {
    const NodeConfig& node = cluster.nodes[n];
    if (node.gpus > 0) idle_power_w += node.gpus * node_gpu_model(cluster, n, models).idle_power_w;
    condition[n] = configured_condition(node);
    enter(n);
  }
  double power_w = idle_power_w;
  const auto add = [](auto& counter, std::int64_t delta) {
    counter = static_cast<std::remove_reference_t<decltype(counter)>>(static_cast<std::int64_t>(counter) + delta);
  };
  const auto apply = [&](std::uint32_t id, std::int64_t sign) {
    for (const NodeAllocation& al : run_ref(state, id, horizon).allocation) {
      const NodeIndex n = al.node;
      const std::int64_t cpus = sign * static_cast<std::int64_t>(al.cpus);
      const std::int64_t gpus = sign * static_cast<std::int64_t>(al.gpus);
      // leave(n), the change, enter(n), with the class counters moved only when the class changes.
      std::uint32_t& class_before = node_class(n);
      take_gpu_share(n);
      add(alloc_cpus[n], cpus);
      add(alloc_gpus[n], gpus);
      std::uint32_t& class_after = node_class(n);
      if (&class_before != &class_after) {
        class_before -= 1;
        class_after += 1;
      }
      put_gpu_share(n);
      add(c.cpus_alloc, cpus);
      add(c.gpus_alloc, gpus);
      if (al.gpus > 0) {
        const GpuModel& gpu = node_gpu_model(cluster, n, models);
        power_w += static_cast<double>(gpus) * (gpu_power_w(gpu, a, &loads[id]) - gpu.idle_power_w);
      }
    }
  };

  totals.cluster_step_s = cluster_sample_step_s(config, horizon_s);
  const double cstep = totals.cluster_step_s;
  const auto csamples = static_cast<std::uint64_t>(std::floor(horizon_s / cstep)) + 1;
  std::vector<ClusterSample> out;
  if (rows == ClusterRows::kEveryStep) out.reserve(csamples);
  double energy_j = 0, last_t = 0, frag_weighted = 0, frag_time = 0;
  const auto integrate_to = [&](double t) {
    const double dt = t - last_t;
    if (dt <= 0) return;
    energy_j += power_w * dt;
    if (c.gpus_free > 0) {
      frag_weighted += dt * static_cast<double>(c.gpus_free_fragmented) / static_cast<double>(c.gpus_free);
      frag_time += dt;
    }
    last_t = t;
  };
  const auto process = [&](const Change& ch) {
    integrate_to(to_seconds_f(ch.time));
    switch (ch.kind) {
      case kSubmit:
      case kRequeue:
        ++c.jobs_pending;
        break;
      case kStart:
        --c.jobs_pending;
        ++c.jobs_running;
        apply(ch.index, +1);
        break;
      case kEnd:
        --c.jobs_running;
        apply(ch.index, -1);
        break;
      case kGiveUp:
        --c.jobs_pending;
        break;
      case kCondition: {
        const NodeConditionEvent& e = conditions[ch.index];
        leave(e.node);
        condition[e.node] = e.condition;
        enter(e.node);
        break;
      }
    }
  };
  // A sample after a period without changes repeats the last one kept, its energy extended at the same power
  // (extend_energy, as the readers compute it): kChanges keeps only the samples after a change (and the first).
  std::size_t ci = 0;
  for (std::uint64_t k = 0; k < csamples; ++k) {
    const double t = static_cast<double>(k) * cstep;
    bool changed = k == 0;
    for (; ci < changes.size() && to_seconds_f(changes[ci].time) <= t; ++ci) {
      process(changes[ci]);
      changed = true;
    }
    if (!changed && rows == ClusterRows::kChanges) continue;
    c.time_s = static_cast<std::int64_t>(std::llround(t));
    c.gpu_power_w = power_w;
    if (changed) {
      integrate_to(t);
      c.gpu_energy_j = energy_j;
    } else {
      c.gpu_energy_j = extend_energy(energy_j, power_w, c.time_s - std::llround(last_t));  // last_t: last kept
    }
    out.push_back(c);
  }
  for (; ci < changes.size() && changes[ci].time <= horizon; ++ci)
    process(changes[ci]);  // the tail after the last sample
  integrate_to(horizon_s);
  totals.gpu_energy_kwh = energy_j / 3.6e6;
  totals.gpu_power_mean_w = horizon_s > 0 ? energy_j / horizon_s : power_w;
  totals.fragmentation_mean = frag_time > 0 ? frag_weighted / frag_time : 0;
  return out;
}

}  // namespace gputwin
