// Placement-aware job speed: a job's communication profile and its step time on a placement (CommPath), so a
// trace's run time, taken at a reference placement (packed, fewest switches), can be stretched or shrunk when the
// simulated scheduler places the job differently. The model is gpu-domain.md 4.6:
//   step = compute + exposed_comm,   exposed_comm = comm - min(overlap x comm_overlappable, compute)
// with each collective costed by NCCL's model (gpu/collectives.hpp) on the path its group sees.
//
//   DataParallelProfile dp{.parameters_billion = 7, .compute_s = 0.5, .overlap = 0.5};
//   double f = speed_factor(dp, spread_path, packed_path, nccl_options_for_nvlink(4));
//   run_time_actual_s = run_time_trace_s / f;   // f < 1: the spread placement runs slower
#pragma once

#include <cstdint>
#include <variant>

#include "gpu/collectives.hpp"
#include "gpu/comm_path.hpp"

namespace gputwin {

/// How data-parallel state is sharded (ZeRO stage / FSDP strategy).
enum class Sharding : std::uint8_t {
  kNone,   ///< DDP: one gradient all-reduce per step.
  kZero2,  ///< ZeRO-1/2: gradient reduce-scatter + parameter all-gather per step.
  kZero3,  ///< ZeRO-3 / FSDP FULL_SHARD: reduce-scatter + two all-gathers (forward and backward) per step.
};

/// (a) Pure data parallelism over all the job's GPUs.
struct DataParallelProfile {
  double parameters_billion = 0;            ///< Model parameters, billions.
  double gradient_bytes_per_parameter = 2;  ///< 2 for bf16 gradients, 4 for fp32 (parameters gathered likewise).
  double compute_s = 0;                     ///< Compute time per step, without communication.
  double overlap = 0;                       ///< Share of the communication hidden behind compute, 0..1.
  Sharding sharding = Sharding::kNone;      ///< All-reduce, or reduce-scatter + all-gather.
  double bucket_mib = 25;                   ///< Bytes per collective call (PyTorch DDP bucket_cap_mb=25); 0: one call.
};

/// (b) Tensor x pipeline x data parallelism (Megatron-LM). Ranks are ordered TP fastest, then PP, then DP
/// (Llama 3's [TP, CP, PP, DP], gpu-domain.md 4.3), node-major: a TP group of <= gpus_per_node GPUs sits in one
/// node. Per step: TP all-reduces 4 activations per layer and micro-batch (2 forward, 2 backward; Shoeybi et al.,
/// Megatron-LM 2019, section 3), on the critical path of (micro_batches + pp - 1) pipeline slots; PP sends one
/// activation forward and one gradient back per slot and stage boundary; DP all-reduces the stage's gradients
/// (parameters / (tp x pp)) over dp ranks, overlappable with compute.
struct HybridProfile {
  std::uint32_t tp = 1;                     ///< Tensor-parallel degree.
  std::uint32_t pp = 1;                     ///< Pipeline-parallel degree (stages).
  std::uint32_t dp = 1;                     ///< Data-parallel degree; tp x pp x dp = the job's GPUs.
  double compute_s = 0;                     ///< Compute per step, pipeline bubble included, no communication.
  std::uint32_t micro_batches = 1;          ///< Micro-batches per step and pipeline.
  std::uint32_t layers = 0;                 ///< Transformer layers (all stages).
  double hidden_size = 0;                   ///< Hidden size h.
  std::uint32_t sequence_length = 0;        ///< Sequence length s.
  std::uint32_t micro_batch_size = 1;       ///< Sequences per micro-batch b.
  double activation_bytes_per_element = 2;  ///< bf16 activations.
  double activation_bytes = 0;              ///< Bytes of one activation tensor (b x s x h x bytes); 0: from shape.
  double parameters_billion = 0;            ///< Model parameters, billions.
  double gradient_bytes_per_parameter = 2;  ///< 2 for bf16 gradients.
  double overlap = 0;                       ///< Share of the DP communication hidden behind compute, 0..1.
  double bucket_mib = 25;                   ///< DP bytes per collective call; 0: one call.
};

/// (c) A measured step (or run) time at a reference placement and the share of it that is exposed
/// communication there. Elsewhere the exposed part scales with the time of an all-reduce of `message_bytes` over
/// all the job's GPUs: step = step_s x ((1 - f) + f x t(path) / t(reference)).
struct MeasuredProfile {
  double step_s = 0;                          ///< Step time observed at `reference`.
  double exposed_comm_fraction = 0;           ///< Exposed-communication share of step_s at `reference`, 0..1.
  CommPath reference;                         ///< The placement step_s was observed on.
  double message_bytes = 64.0 * 1024 * 1024;  ///< The representative all-reduce's size.
};

/// (d) The linear profile calibration fits (gpu/calibration.hpp):
/// step = compute_s + exposed_bytes x comm_features(path).seconds_per_byte + latency_count x latency_s.
struct FittedProfile {
  double compute_s = 0;      ///< Communication-free step time.
  double exposed_bytes = 0;  ///< Exposed traffic per step, in ring all-reduce bytes over all the job's GPUs.
  double latency_count = 0;  ///< Exposed latency-bound all-reduce calls per step.
};

/// A job's communication profile.
using JobProfile = std::variant<DataParallelProfile, HybridProfile, MeasuredProfile, FittedProfile>;

/// The per-placement regressors of FittedProfile: NCCL's ring/Simple all-reduce over all the path's GPUs at
/// large messages (1 GiB): seconds per byte (1 / its algorithm bandwidth) and its latency (plateau included).
struct CommFeatures {
  double seconds_per_byte = 0;  ///< Transfer cost per all-reduced byte.
  double latency_s = 0;         ///< Latency of one all-reduce call.
};

/// CommFeatures of a path (zeros for a single GPU). Throws PerfModelError for an unusable path.
CommFeatures comm_features(const CommPath& path, const NcclOptions& opts = {});

/// The path one group of `size` ranks with rank stride `stride` (TP: 1; PP: tp; DP: tp x pp) sees in a job on
/// `job`, while every other such group runs at the same time: the nodes it spans, its ranks per node, and the
/// node's NICs shared among the groups on that node. Latency and hops stay the job's (its slowest tier).
CommPath group_path(const CommPath& job, std::uint32_t stride, std::uint32_t size);

/// Where a step's time goes (seconds).
struct StepBreakdown {
  double compute_s = 0;  ///< Compute.
  double tp_s = 0;       ///< Tensor-parallel all-reduces (exposed).
  double pp_s = 0;       ///< Pipeline point-to-point (exposed).
  double dp_s = 0;       ///< Data-parallel collectives, before overlap (measured/fitted: all exposed comm).
  double hidden_s = 0;   ///< Part of dp_s hidden behind compute.
  double step_s = 0;     ///< compute + tp + pp + dp - hidden.
};

/// Checks a profile's fields; throws PerfModelError naming the field ("hybrid.tp") otherwise.
void validate_profile(const JobProfile& profile);

/// The step breakdown of `profile` on `path`. Throws PerfModelError (bad profile, or tp x pp x dp not the
/// path's GPUs, or a path the collectives cannot cost).
StepBreakdown step_breakdown(const JobProfile& profile, const CommPath& path, const NcclOptions& opts = {});

/// Step time of `profile` on `path`, seconds: step_breakdown(...).step_s.
double step_time_s(const JobProfile& profile, const CommPath& path, const NcclOptions& opts = {});

/// step(reference) / step(actual): > 1 when the job runs faster on `actual` than the trace's time (taken on
/// `reference`) implies, < 1 when slower. Stretch a run time as actual_run_s = trace_run_s / speed_factor.
double speed_factor(const JobProfile& profile, const CommPath& actual, const CommPath& reference,
                    const NcclOptions& opts = {});

}  // namespace gputwin
