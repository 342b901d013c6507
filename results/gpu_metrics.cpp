#include "results/gpu_metrics.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <type_traits>

namespace gputwin {
namespace {

constexpr std::uint64_t kMaxClusterSamples = 1'000'000;

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

SimTime job_end(const JobRuntime& rt, SimTime horizon) {
  return rt.end >= 0 ? std::min(rt.end, horizon) : horizon;
}

/// A job's per-GPU load averaged over its run: the profile's reference load scaled by the job's mean speed
/// (trace time / actual time) when it ran to its end; pure compute without a profile.
GpuLoad job_load(const ClusterState& state, JobIndex j, const JobLoadFn& load) {
  GpuLoad out;
  if (!load) return out;
  const std::optional<GpuLoad> base = load(j);
  if (!base) return out;
  out = *base;
  const JobRuntime& rt = state.job(j);
  const double actual_s = rt.end >= 0 ? to_seconds_f(rt.end - rt.start) : 0;
  const double trace_s = static_cast<double>(state.spec(j).run_time_s);
  if (rt.state == JobState::kCompleted && actual_s > 0 && trace_s > 0) {
    const double mean_speed = trace_s / actual_s;  // compute work is fixed: its share of the time scales with speed
    out.compute_share = std::min(1.0, out.compute_share * mean_speed);
    out.nvlink_bytes_per_s *= mean_speed;
    out.job_cross_leaf_bytes_per_s *= mean_speed;
  }
  return out;
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
  GpuCursor(const std::vector<BusyInterval>& busy, const GpuModel& gpu, const TelemetryAssumptions& a)
      : busy_(busy), gpu_(gpu), a_(a), temp_c_(steady_temp_c(gpu, a, gpu.idle_power_w)) {}

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
  double t_ = 0;
  std::size_t idx_ = 0;
  double temp_c_;
};

}  // namespace

std::uint32_t GpuBinding::sockets(std::uint32_t gpus) {
  return gpus >= 4 && gpus % 2 == 0 ? 2 : 1;
}

GpuBinding::GpuBinding(const ClusterState& state, SimTime horizon) {
  const ClusterConfig& cluster = state.config();
  offset_.resize(state.job_count() + 1);
  std::uint32_t total = 0;
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    offset_[j] = total;
    if (state.job(j).start >= 0) total += static_cast<std::uint32_t>(state.allocation(j).size());
  }
  offset_[state.job_count()] = total;
  masks_.assign(total, 0);

  // Per node: (start, end, job, allocation index) of every allocation with GPUs, replayed in start order.
  struct Use {
    SimTime start, end;
    JobIndex job;
    std::uint32_t k;
    std::uint32_t gpus;
  };
  std::vector<std::vector<Use>> uses(cluster.nodes.size());
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (rt.start < 0) continue;
    const auto alloc = state.allocation(j);
    for (std::uint32_t k = 0; k < alloc.size(); ++k) {
      if (alloc[k].gpus > 0) uses[alloc[k].node].push_back(Use{rt.start, job_end(rt, horizon), j, k, alloc[k].gpus});
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
      masks_[offset_[u.job] + u.k] = mask;
      running.emplace(u.end, mask);
    }
  }
  socket_split_jobs_ = static_cast<std::uint64_t>(std::count(split.begin(), split.end(), true));
}

std::uint64_t GpuBinding::mask(JobIndex job, std::size_t k) const {
  const std::uint32_t begin = offset_[job];
  return begin + k < offset_[job + 1] ? masks_[begin + k] : 0;
}

double gpu_sample_step_s(const MetricsConfig& config, double horizon_s, std::uint64_t gpus) {
  const double per_gpu = std::floor(horizon_s / config.interval_s) + 1;
  const double wanted = per_gpu * static_cast<double>(gpus);
  const double factor = std::max(1.0, std::ceil(wanted / static_cast<double>(config.max_gpu_samples)));
  return config.interval_s * factor;
}

std::vector<ClusterSample> build_metrics(const ClusterState& state, const GpuBinding& binding, SimTime horizon,
                                         const MetricsConfig& config, const JobLoadFn& load,
                                         std::span<const XidEvent> xids,
                                         const std::function<void(const GpuSample&)>& gpu_sink, MetricsTotals& totals) {
  const ClusterConfig& cluster = state.config();
  const TelemetryAssumptions& a = config.telemetry;
  std::vector<GpuModel> models;
  const double horizon_s = to_seconds_f(horizon);
  std::uint64_t total_gpus = 0;
  for (const NodeConfig& node : cluster.nodes) total_gpus += node.gpus;
  totals = MetricsTotals{};
  totals.horizon_s = horizon_s;

  // Each started job's power delta over idle and NVLink rate per GPU, by allocation.
  std::vector<GpuLoad> loads(state.job_count());
  double cross_leaf_bytes = 0;
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (rt.start < 0) continue;
    loads[j] = job_load(state, j, load);
    cross_leaf_bytes += loads[j].job_cross_leaf_bytes_per_s * to_seconds_f(job_end(rt, horizon) - rt.start);
  }
  totals.cross_leaf_traffic_tb = cross_leaf_bytes / 1e12;

  // ---- Per-GPU series -------------------------------------------------------------------------------------
  totals.socket_split_jobs = binding.socket_split_jobs();
  totals.gpu_step_s = gpu_sample_step_s(config, horizon_s, total_gpus);
  if (config.per_gpu && gpu_sink) {
    std::vector<std::vector<std::pair<JobIndex, std::uint32_t>>> node_allocs(cluster.nodes.size());
    for (JobIndex j = 0; j < state.job_count(); ++j) {
      if (state.job(j).start < 0) continue;
      const auto alloc = state.allocation(j);
      for (std::uint32_t k = 0; k < alloc.size(); ++k) {
        if (alloc[k].gpus > 0) node_allocs[alloc[k].node].emplace_back(j, k);
      }
    }
    std::vector<std::vector<XidEvent>> node_xids(cluster.nodes.size());
    for (const XidEvent& x : xids) {
      if (x.node < node_xids.size()) node_xids[x.node].push_back(x);
    }
    const double step = totals.gpu_step_s;
    const auto samples = static_cast<std::uint64_t>(std::floor(horizon_s / step)) + 1;
    std::vector<BusyInterval> busy;
    GpuSample s;
    for (NodeIndex n = 0; n < cluster.nodes.size(); ++n) {
      const GpuModel& gpu = node_gpu_model(cluster, n, models);
      for (std::uint32_t g = 0; g < std::min<std::uint32_t>(cluster.nodes[n].gpus, 64); ++g) {
        busy.clear();
        for (const auto& [j, k] : node_allocs[n]) {
          if ((binding.mask(j, k) >> g & 1) == 0) continue;
          const JobRuntime& rt = state.job(j);
          busy.push_back(BusyInterval{to_seconds_f(rt.start), to_seconds_f(job_end(rt, horizon)), state.spec(j).id,
                                      gpu_power_w(gpu, a, &loads[j]), loads[j].nvlink_bytes_per_s});
        }
        std::sort(busy.begin(), busy.end(),
                  [](const BusyInterval& x, const BusyInterval& y) { return x.start_s < y.start_s; });
        GpuCursor cursor(busy, gpu, a);
        double energy_j = 0;
        std::size_t xi = 0;
        std::uint32_t last_xid = 0;
        s.node = n;
        s.gpu = g;
        for (std::uint64_t k = 0; k < samples; ++k) {
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
          gpu_sink(s);
          ++totals.gpu_samples;
        }
      }
    }
  }

  // ---- Cluster series: one sweep over job starts, ends and submits --------------------------------------------
  enum Kind : std::uint8_t { kEnd = 0, kStart = 1, kSubmit = 2, kGiveUp = 3 };  // ends free before starts take
  struct Change {
    SimTime time;
    Kind kind;
    JobIndex job;
  };
  std::vector<Change> changes;
  changes.reserve(state.job_count() * 3);
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
  std::sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.time != y.time ? x.time < y.time : (x.kind != y.kind ? x.kind < y.kind : x.job < y.job);
  });

  std::vector<std::uint32_t> alloc_cpus(cluster.nodes.size(), 0), alloc_gpus(cluster.nodes.size(), 0);
  ClusterSample c;
  double idle_power_w = 0;
  for (NodeIndex n = 0; n < cluster.nodes.size(); ++n) {
    const NodeConfig& node = cluster.nodes[n];
    if (node.gpus > 0) idle_power_w += node.gpus * node_gpu_model(cluster, n, models).idle_power_w;
    if (!node.available) {
      (node.drained ? c.nodes_drain : c.nodes_down) += 1;
      continue;
    }
    c.nodes_idle += 1;
    c.gpus_free += node.gpus;
  }
  double power_w = idle_power_w;
  const auto node_class = [&](NodeIndex n) -> std::uint32_t* {
    if (alloc_cpus[n] == 0 && alloc_gpus[n] == 0) return &c.nodes_idle;
    return alloc_cpus[n] >= cluster.nodes[n].cpus ? &c.nodes_alloc : &c.nodes_mixed;  // node_info.c: CPU-based
  };
  const auto fragmented = [&](NodeIndex n) -> std::uint64_t {
    const std::uint32_t g = cluster.nodes[n].gpus;
    return alloc_gpus[n] > 0 && alloc_gpus[n] < g ? g - alloc_gpus[n] : 0;
  };
  const auto add = [](auto& counter, std::int64_t delta) {
    counter = static_cast<std::remove_reference_t<decltype(counter)>>(static_cast<std::int64_t>(counter) + delta);
  };
  const auto apply = [&](JobIndex j, std::int64_t sign) {
    for (const NodeAllocation& al : state.allocation(j)) {
      const NodeIndex n = al.node;
      if (!cluster.nodes[n].available) continue;
      const std::int64_t cpus = sign * static_cast<std::int64_t>(al.cpus);
      const std::int64_t gpus = sign * static_cast<std::int64_t>(al.gpus);
      *node_class(n) -= 1;
      c.gpus_free_fragmented -= fragmented(n);
      add(alloc_cpus[n], cpus);
      add(alloc_gpus[n], gpus);
      *node_class(n) += 1;
      c.gpus_free_fragmented += fragmented(n);
      add(c.cpus_alloc, cpus);
      add(c.gpus_alloc, gpus);
      add(c.gpus_free, -gpus);
      if (al.gpus > 0) {
        const GpuModel& gpu = node_gpu_model(cluster, n, models);
        power_w += static_cast<double>(gpus) * (gpu_power_w(gpu, a, &loads[j]) - gpu.idle_power_w);
      }
    }
  };

  totals.cluster_step_s =
      config.interval_s *
      std::max(1.0, std::ceil((std::floor(horizon_s / config.interval_s) + 1) / double(kMaxClusterSamples)));
  const double cstep = totals.cluster_step_s;
  const auto csamples = static_cast<std::uint64_t>(std::floor(horizon_s / cstep)) + 1;
  std::vector<ClusterSample> out;
  out.reserve(csamples);
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
  std::size_t ci = 0;
  for (std::uint64_t k = 0; k < csamples; ++k) {
    const double t = static_cast<double>(k) * cstep;
    for (; ci < changes.size() && to_seconds_f(changes[ci].time) <= t; ++ci) {
      const Change& ch = changes[ci];
      integrate_to(to_seconds_f(ch.time));
      switch (ch.kind) {
        case kSubmit:
          ++c.jobs_pending;
          break;
        case kStart:
          --c.jobs_pending;
          ++c.jobs_running;
          apply(ch.job, +1);
          break;
        case kEnd:
          --c.jobs_running;
          apply(ch.job, -1);
          break;
        case kGiveUp:
          --c.jobs_pending;
          break;
      }
    }
    integrate_to(t);
    c.time_s = static_cast<std::int64_t>(std::llround(t));
    c.gpu_power_w = power_w;
    c.gpu_energy_j = energy_j;
    out.push_back(c);
  }
  for (; ci < changes.size() && changes[ci].time <= horizon; ++ci) {  // the tail after the last sample
    const Change& ch = changes[ci];
    integrate_to(to_seconds_f(ch.time));
    if (ch.kind == kStart) apply(ch.job, +1);
    if (ch.kind == kEnd) apply(ch.job, -1);
  }
  integrate_to(horizon_s);
  totals.gpu_energy_kwh = energy_j / 3.6e6;
  totals.gpu_power_mean_w = horizon_s > 0 ? energy_j / horizon_s : power_w;
  totals.fragmentation_mean = frag_time > 0 ? frag_weighted / frag_time : 0;
  return out;
}

}  // namespace gputwin
