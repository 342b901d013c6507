// GPU telemetry model: what dcgm-exporter would read from a GPU (utilisation, power, temperature, framebuffer
// use, NVLink traffic) given whether a job runs on it and how its step splits between compute and exposed
// communication. The figures are assumptions anchored on published telemetry (gpu-domain.md 1.5: Acme's median
// GPU_UTIL of 97% for LLM jobs, idle GPUs drawing about 60 W, busy ones near TDP); each is a named field so a
// scenario can change it (/metrics).
//
//   GpuLoad load{.compute_share = 0.8};
//   double watts = gpu_power_w(h100, assumptions, &load);   // 60 + 640 x (0.8 x 0.9 + 0.2 x 0.3) = 559.2 W
#pragma once

#include <cstdint>

#include "gpu/gpu_catalogue.hpp"
#include "gpu/job_speed.hpp"

namespace gputwin {

/// The assumptions behind simulated telemetry (scenario keys under /metrics, same names).
struct TelemetryAssumptions {
  double busy_util_pct = 97;            ///< DCGM_FI_DEV_GPU_UTIL of a GPU running a job (Acme Seren median).
  double compute_power_share = 0.9;     ///< Share of the dynamic power range drawn while computing.
  double comm_power_share = 0.3;        ///< ... while in exposed communication (NCCL kernels on few SMs).
  double idle_temp_c = 32;              ///< GPU_TEMP at idle power (inlet air plus idle heat).
  double full_power_temp_c = 72;        ///< GPU_TEMP in steady state at TDP (air-cooled HGX under load).
  double thermal_time_constant_s = 60;  ///< First-order lag of GPU_TEMP behind power.
  double fb_used_fraction = 0.85;       ///< Share of the GPU's memory a running job holds (FB_USED).
};

/// What a running job does on each of its GPUs, averaged over its run.
struct GpuLoad {
  double compute_share = 1;               ///< Share of the time computing (the rest is exposed communication), 0..1.
  double nvlink_bytes_per_s = 0;          ///< NVLink bytes sent per second by each GPU (DCGM_FI_PROF_NVLINK_TX_BYTES).
  double job_cross_leaf_bytes_per_s = 0;  ///< Bytes per second the whole job sends between leaf switches.
};

/// Power drawn by a GPU of model `gpu`: idle power, or with `load` (non-null: a job runs) idle power plus the
/// dynamic range (TDP - idle) times compute_share x compute_power_share + (1 - compute_share) x comm_power_share.
double gpu_power_w(const GpuModel& gpu, const TelemetryAssumptions& a, const GpuLoad* load);

/// Steady-state temperature at `power_w`: linear between idle power (idle_temp_c) and TDP (full_power_temp_c).
double steady_temp_c(const GpuModel& gpu, const TelemetryAssumptions& a, double power_w);

/// Temperature `dt_s` after it was `from_c`, relaxing toward `steady_c` with time constant `tau_s`.
double relax_temp_c(double from_c, double steady_c, double dt_s, double tau_s);

/// FB_USED in MiB: fb_used_fraction of the GPU's memory (GiB x 1024) when busy, 0 when idle.
double fb_used_mib(const GpuModel& gpu, const TelemetryAssumptions& a, bool busy);

/// FB_TOTAL in MiB.
double fb_total_mib(const GpuModel& gpu);

/// NVLink bytes each GPU sends per training step of `profile` on a job of `gpus` GPUs, `gpus_per_node` per node:
/// a ring collective over n ranks moves 2(n-1)/n of its bytes through every rank, and within a node of g ranks
/// (g-1)/g of a multi-node ring's hops are NVLink. Data parallel: the gradients' all-reduce (x 1.5 for ZeRO-3's
/// extra all-gather); hybrid: TP all-reduces of activations (all on NVLink) plus the DP share on NVLink;
/// measured: one all-reduce of message_bytes; fitted: exposed_bytes. Pipeline sends are not counted.
double nvlink_bytes_per_step(const JobProfile& profile, std::uint32_t gpus, std::uint32_t gpus_per_node);

/// Bytes a job sends between leaf switches per step when its nodes span `leaves` leaves: its inter-node rings
/// (the data-parallel collective; for hybrid layouts the tp x pp DP rings together) are ordered by leaf, as NCCL
/// orders them by topology, so each crosses leaves `leaves` times (0 for one leaf), and every ring edge carries
/// 2(n-1)/n of the collective's buffer: 2(n-1)/n x buffer x leaves. Tensor-parallel traffic stays in a node.
double cross_leaf_bytes_per_step(const JobProfile& profile, std::uint32_t gpus, std::uint32_t leaves);

}  // namespace gputwin
