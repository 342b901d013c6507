#include "gpu/gpu_telemetry.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

namespace gputwin {
namespace {

/// Bytes a ring collective over `ranks` moves through each rank per byte of its buffer.
double ring_factor(double ranks) {
  return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
}

/// Share of a ring's hops inside a node of `ranks_per_node` ranks (NVLink), for a ring over `ranks` ranks.
double nvlink_share(double ranks, double ranks_per_node) {
  if (ranks <= 1 || ranks_per_node <= 1) return 0;
  if (ranks <= ranks_per_node) return 1;
  return (ranks_per_node - 1) / ranks_per_node;
}

/// Bytes of the buffer each rank of a job's data-parallel ring reduces per step: the gradients (x 1.5 for ZeRO-3's
/// extra all-gather; for hybrid layouts one stage's share, parameters / (tp x pp)), a measured profile's message or
/// a fitted profile's exposed bytes.
double dp_buffer_bytes(const JobProfile& profile) {
  if (const auto* dp = std::get_if<DataParallelProfile>(&profile)) {
    const double volume = dp->sharding == Sharding::kZero3 ? 1.5 : 1.0;  // RS + 2 AG vs RS + AG (= all-reduce)
    return dp->parameters_billion * 1e9 * dp->gradient_bytes_per_parameter * volume;
  }
  if (const auto* h = std::get_if<HybridProfile>(&profile)) {
    const double tp_pp = double(std::max<std::uint32_t>(h->tp, 1)) * std::max<std::uint32_t>(h->pp, 1);
    return h->parameters_billion * 1e9 / tp_pp * h->gradient_bytes_per_parameter;
  }
  if (const auto* m = std::get_if<MeasuredProfile>(&profile)) return m->message_bytes;
  return std::get<FittedProfile>(profile).exposed_bytes;
}

/// Ranks in one data-parallel ring of a job of `gpus` GPUs: dp for hybrid layouts (dp = 0: gpus / (tp x pp)).
double dp_ranks(const JobProfile& profile, double gpus) {
  const auto* h = std::get_if<HybridProfile>(&profile);
  if (h == nullptr) return gpus;
  const double tp_pp = double(std::max<std::uint32_t>(h->tp, 1)) * std::max<std::uint32_t>(h->pp, 1);
  return h->dp > 0 ? h->dp : std::max(1.0, gpus / tp_pp);
}

}  // namespace

double gpu_power_w(const GpuModel& gpu, const TelemetryAssumptions& a, const GpuLoad* load) {
  if (load == nullptr) return gpu.idle_power_w;
  const double c = std::clamp(load->compute_share, 0.0, 1.0);
  const double share = c * a.compute_power_share + (1 - c) * a.comm_power_share;
  return gpu.idle_power_w + (gpu.power_w - gpu.idle_power_w) * share;
}

double steady_temp_c(const GpuModel& gpu, const TelemetryAssumptions& a, double power_w) {
  const double range = gpu.power_w - gpu.idle_power_w;
  const double x = range > 0 ? (power_w - gpu.idle_power_w) / range : 0;
  return a.idle_temp_c + (a.full_power_temp_c - a.idle_temp_c) * x;
}

double relax_temp_c(double from_c, double steady_c, double dt_s, double tau_s) {
  if (tau_s <= 0 || dt_s <= 0) return dt_s <= 0 ? from_c : steady_c;
  return steady_c + (from_c - steady_c) * std::exp(-dt_s / tau_s);
}

double fb_total_mib(const GpuModel& gpu) {
  return gpu.memory_gb * 1024.0;
}

double fb_used_mib(const GpuModel& gpu, const TelemetryAssumptions& a, bool busy) {
  return busy ? std::round(fb_total_mib(gpu) * a.fb_used_fraction) : 0.0;
}

double nvlink_bytes_per_step(const JobProfile& profile, std::uint32_t gpus, std::uint32_t gpus_per_node) {
  const double n = gpus;
  const double g = std::min<double>(gpus_per_node, n);
  const auto* h = std::get_if<HybridProfile>(&profile);
  if (h == nullptr) return dp_buffer_bytes(profile) * ring_factor(n) * nvlink_share(n, g);
  const double tp = std::max<std::uint32_t>(h->tp, 1);
  const double pp = std::max<std::uint32_t>(h->pp, 1);
  const double act = h->activation_bytes > 0 ? h->activation_bytes
                                             : double(h->micro_batch_size) * h->sequence_length * h->hidden_size *
                                                   h->activation_bytes_per_element;
  // TP: 4 all-reduces per layer and micro-batch (2 forward, 2 backward), layers split over pp stages.
  const double tp_bytes = 4.0 * (double(h->layers) / pp) * h->micro_batches * act * ring_factor(tp);
  // DP: the stage's gradients over dp ranks; ranks per node of one DP group: g / (tp x pp) when that is > 1.
  const double dp = dp_ranks(profile, n);
  const double dp_bytes = dp_buffer_bytes(profile) * ring_factor(dp) * nvlink_share(dp, std::max(1.0, g / (tp * pp)));
  return tp_bytes + dp_bytes;
}

double cross_leaf_bytes_per_step(const JobProfile& profile, std::uint32_t gpus, std::uint32_t leaves) {
  if (leaves <= 1) return 0;
  // Hybrid layouts run tp x pp DP rings, each with one stage's share: together the whole buffer once more.
  double rings = 1;
  if (const auto* h = std::get_if<HybridProfile>(&profile))
    rings = double(std::max<std::uint32_t>(h->tp, 1)) * std::max<std::uint32_t>(h->pp, 1);
  return rings * dp_buffer_bytes(profile) * ring_factor(dp_ranks(profile, gpus)) * leaves;
}

}  // namespace gputwin
