// Metrics of a finished run, as a monitoring stack would have scraped them: per-GPU series in dcgm-exporter's
// names and units (GPU_UTIL %, FB_USED MiB, POWER_USAGE W, GPU_TEMP C, NVLink TX bytes/s, TOTAL_ENERGY_CONSUMPTION
// mJ, XID_ERRORS) and cluster series in Slurm's (nodes by state, jobs pending and running, CPUs and GPUs
// allocated) plus cluster GPU power, energy and fragmentation.
//
// Built after the run from the final ClusterState (every job's last run, and the earlier runs requeues discarded)
// and the node condition changes, not from events during it: GPU state is piecewise constant between run starts
// and ends, so every sample is computed exactly from the runs' intervals and the simulation pays nothing for
// metrics. Which GPUs of a node a job holds is decided here (GpuBinding), as
// Slurm's GRES selection does it: GPUs close to the job's cores, socket by socket (gres_select_filter.c).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "gpu/gpu_telemetry.hpp"
#include "model/cluster_state.hpp"
#include "model/performance.hpp"
#include "model/run_observer.hpp"

namespace gputwin {

/// An XID a GPU reported (faults; the metric DCGM_FI_DEV_XID_ERRORS holds the last one).
struct XidEvent {
  SimTime time = 0;       ///< When.
  NodeIndex node = 0;     ///< Node.
  std::uint32_t gpu = 0;  ///< GPU index within the node.
  std::uint32_t xid = 0;  ///< XID code.
};

/// A node's condition changed (drained, set DOWN, rebooting, back in service), as SimWorld::set_node_condition
/// made it.
struct NodeConditionEvent {
  SimTime time = 0;                                ///< When.
  NodeIndex node = 0;                              ///< Node.
  NodeCondition condition = NodeCondition::kNone;  ///< New condition.
};

/// "0-3,6": the GPU indices of a mask, as Slurm prints GRES indices (IDX:0-3,6) and the job_gpus rows hold them.
std::string gpu_index_list(std::uint64_t mask);

/// Which GPUs of its nodes each run of each job held: bit i of a mask is GPU i of the node.
class GpuBinding {
 public:
  /// Binds every run of `state` (each job's last run and the runs requeues discarded) to GPU indices, replaying
  /// starts and ends node by node. A node of 2k GPUs has two sockets (GPUs 0..k-1 on socket 0, k..2k-1 on socket
  /// 1, as on HGX/DGX and GB200 trays); a run takes its GPUs from the first socket that has them all free (its
  /// cores come from there too), else the lowest free indices across sockets. `horizon` ends runs still going.
  /// `state` must outlive the binding.
  GpuBinding(const ClusterState& state, SimTime horizon);
  /// The GPU mask of allocation `k` (0-based within the job) of job `job`'s last run; 0 for a job not running.
  [[nodiscard]] std::uint64_t mask(JobIndex job, std::size_t k) const;
  /// The GPU mask of allocation pool entry `i` (a run's allocation k is entry alloc_offset + k).
  [[nodiscard]] std::uint64_t mask_at(std::size_t i) const { return i < masks_.size() ? masks_[i] : 0; }
  /// Jobs whose GPUs on some node span both sockets (in any of their runs).
  [[nodiscard]] std::uint64_t socket_split_jobs() const { return socket_split_jobs_; }
  /// Sockets of a node with `gpus` GPUs (2 for an even count of at least 4, else 1).
  static std::uint32_t sockets(std::uint32_t gpus);

 private:
  const ClusterState* state_;
  std::vector<std::uint64_t> masks_;  // per allocation, indexed like ClusterState's allocation pool
  std::uint64_t socket_split_jobs_ = 0;
};

/// One sample of one GPU (values averaged over the sample period unless said otherwise).
struct GpuSample {
  std::int64_t time_s = 0;           ///< Sample time, seconds since the scenario epoch (end of its period).
  NodeIndex node = 0;                ///< Node.
  std::uint32_t gpu = 0;             ///< GPU index within the node.
  std::uint64_t job_id = 0;          ///< Job that held the GPU longest in the period (0: none): the hpc_job label.
  double util_pct = 0;               ///< DCGM_FI_DEV_GPU_UTIL, %.
  double fb_used_mib = 0;            ///< DCGM_FI_DEV_FB_USED at time_s, MiB.
  double power_w = 0;                ///< DCGM_FI_DEV_POWER_USAGE, W.
  double temp_c = 0;                 ///< DCGM_FI_DEV_GPU_TEMP at time_s, C.
  double nvlink_tx_bytes_per_s = 0;  ///< DCGM_FI_PROF_NVLINK_TX_BYTES, B/s.
  double energy_mj = 0;              ///< DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION since t = 0, mJ.
  std::uint32_t xid = 0;             ///< DCGM_FI_DEV_XID_ERRORS: last XID at or before time_s (0: none).
};

/// One sample of the whole cluster, at an instant (as a scrape sees it).
struct ClusterSample {
  std::int64_t time_s = 0;                 ///< Sample time, seconds since the scenario epoch.
  std::uint32_t nodes_idle = 0;            ///< slurm_nodes_idle.
  std::uint32_t nodes_mixed = 0;           ///< slurm_nodes_mixed.
  std::uint32_t nodes_alloc = 0;           ///< slurm_nodes_alloc.
  std::uint32_t nodes_down = 0;            ///< slurm_nodes_down: DOWN or REBOOTING nodes.
  std::uint32_t nodes_drain = 0;           ///< slurm_nodes_drain: DRAINING or DRAINED nodes.
  std::uint32_t nodes_powered_down = 0;    ///< Cloud nodes POWERED_DOWN, POWERING_UP or POWERING_DOWN (not usable).
  std::uint64_t jobs_pending = 0;          ///< slurm_jobs_pending (held and dependent jobs included, as Slurm counts).
  std::uint64_t jobs_running = 0;          ///< slurm_jobs_running.
  std::uint64_t cpus_alloc = 0;            ///< slurm_jobs_cpus_alloc.
  std::uint64_t gpus_alloc = 0;            ///< slurm_gpus_alloc.
  double gpu_power_w = 0;                  ///< Sum of every GPU's power.
  double gpu_energy_j = 0;                 ///< GPU energy since t = 0.
  std::uint64_t gpus_free = 0;             ///< Free GPUs on nodes in service (not drained, down or rebooting).
  std::uint64_t gpus_free_fragmented = 0;  ///< ... of them on nodes where other GPUs are allocated.
};

/// What build_metrics produced beyond the samples.
struct MetricsTotals {
  double gpu_step_s = 0;          ///< Per-GPU sample period used (>= the configured one: long runs downsample).
  double cluster_step_s = 0;      ///< Cluster sample period used.
  double horizon_s = 0;           ///< End of the sampled time.
  double gpu_energy_kwh = 0;      ///< GPU energy over the run, exact (not from samples).
  double gpu_power_mean_w = 0;    ///< Mean cluster GPU power over [0, horizon].
  double fragmentation_mean = 0;  ///< Time-weighted mean of gpus_free_fragmented / gpus_free (while gpus_free > 0).
  std::uint64_t socket_split_jobs = 0;  ///< Jobs whose GPUs on a node span both sockets.
  double cross_leaf_traffic_tb = 0;     ///< Bytes (TB) jobs sent between leaf switches (profiled jobs only).
  std::uint64_t gpu_samples = 0;        ///< Per-GPU samples produced.
};

/// A job's load per GPU on an allocation (one of its runs') at its trace speed, from the speed model's profile,
/// or nullopt (pure compute).
using JobLoadFn = std::function<std::optional<GpuLoad>(JobIndex, std::span<const NodeAllocation>)>;

/// Most cluster samples a run has (a longer run samples less often); readers refuse a metrics_info implying more.
inline constexpr std::uint64_t kMaxClusterSamples = 1'000'000;

/// Which cluster samples build_metrics returns.
enum class ClusterRows {
  kChanges,    ///< The first sample and each one after a period in which something changed (the stored series).
  kEveryStep,  ///< Every sample: what expanding kChanges gives (see expand_cluster_samples).
};

/// A sample's GPU energy from the last kept sample's: `energy_j` + `power_w` x `dt_s` (nothing changed in between,
/// so the power held). The writer and the readers compute it alike, so an expanded series is bit-identical.
inline double extend_energy(double energy_j, double power_w, std::int64_t dt_s) {
  return energy_j + power_w * static_cast<double>(dt_s);
}

/// Builds the run's metrics (`binding` made for the same state and horizon): calls `gpu_sink` for each per-GPU sample
/// (GPU by GPU, time ascending; skipped when config.per_gpu is false; none while the GPU's node is DOWN or
/// REBOOTING) and returns the cluster samples every totals.cluster_step_s from 0 to `horizon`, all of them or only
/// those after a change (`rows`). `horizon` is where the run stopped; `load` may be empty; `xids` and `conditions`
/// are in time order. `gpu_samples_done`, if given, is called once the last per-GPU sample is sent, before the
/// cluster series is built.
std::vector<ClusterSample> build_metrics(const ClusterState& state, const GpuBinding& binding, SimTime horizon,
                                         const MetricsConfig& config, const JobLoadFn& load,
                                         std::span<const XidEvent> xids, std::span<const NodeConditionEvent> conditions,
                                         const std::function<void(const GpuSample&)>& gpu_sink, MetricsTotals& totals,
                                         ClusterRows rows = ClusterRows::kChanges,
                                         const std::function<void()>& gpu_samples_done = {});

/// The per-GPU samples build_metrics sends to `gpu_sink` at sample time `time_s` (a multiple of the step
/// gpu_sample_step_s gives for `horizon`), node by node, GPU by GPU, computed by the same code from the period before
/// `time_s` on: bit for bit the same utilisation, framebuffer, power, NVLink rate, job and XID, but temp_c and
/// energy_mj, which carry the whole history, are 0. Nothing for a time that is not a sample (or past the horizon).
/// Costs O(runs) for finding each node's runs, plus the runs overlapping the period for each GPU.
void gpu_samples_at(const ClusterState& state, const GpuBinding& binding, SimTime horizon, const MetricsConfig& config,
                    const JobLoadFn& load, std::span<const XidEvent> xids,
                    std::span<const NodeConditionEvent> conditions, std::int64_t time_s,
                    const std::function<void(const GpuSample&)>& gpu_sink);

/// Calls `sample(t, i)` for each sample time t = k x `step_s` in [`from_s`, `to_s`] (k a multiple of `stride` after
/// the first, which is the first multiple of step_s at or after from_s), where `i` is the last of `times` (the stored
/// rows' times, ascending) at or before t; times before the first row are skipped. A version 1 file stores every
/// sample, a version 2 file only those after a change: both expand alike.
void expand_cluster_samples(std::span<const std::int64_t> times, std::int64_t step_s, std::int64_t from_s,
                            std::int64_t to_s, std::int64_t stride,
                            const std::function<void(std::int64_t, std::size_t)>& sample);

/// The per-GPU sample period for a run of `horizon_s` seconds on `gpus` GPUs: the configured interval, or a
/// whole multiple of it that keeps the samples within config.max_gpu_samples.
double gpu_sample_step_s(const MetricsConfig& config, double horizon_s, std::uint64_t gpus);

/// The cluster sample period for a run of `horizon_s` seconds: the configured interval, or a whole multiple of it that
/// keeps the samples within kMaxClusterSamples.
double cluster_sample_step_s(const MetricsConfig& config, double horizon_s);

/// GPUs the per-GPU series samples the step for: every node's GPU count summed.
std::uint64_t sampled_gpu_count(const ClusterConfig& cluster);

}  // namespace gputwin
