// Placement-aware job speed as a scenario configures it (/performance): which communication profile each job
// has, and how jobs that share links slow each other. The models themselves are in gpu/ (job_speed, contention).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_telemetry.hpp"
#include "gpu/job_speed.hpp"

namespace gputwin {

/// How contention between jobs on shared links is modelled (/performance/contention).
enum class ContentionKind : std::uint8_t {
  kNone,      ///< Each job sees its placement's bandwidth alone.
  kAnalytic,  ///< Fast per-link equal split.
  kSimGrid,   ///< Max-min fair sharing solved by SimGrid's flow model.
};

/// A communication profile and the jobs it applies to (/performance/profiles/N).
struct ProfileRule {
  std::string name;                     ///< Profile name (for results and errors).
  std::uint32_t min_gpus = 0;           ///< Applies to jobs with at least this many GPUs.
  std::uint32_t max_gpus = UINT32_MAX;  ///< ... and at most this many.
  std::string name_prefix;              ///< ... whose name starts with this (empty: any).
  JobProfile profile;                   ///< The profile. A hybrid profile with dp = 0 takes dp = GPUs / (tp x pp).
};

/// A failed or degraded part of the network: what is left of a switch's uplink or a node's NICs.
struct DegradedLink {
  std::string switch_name;  ///< Switch whose uplink (to its parent) lost capacity; empty for a node.
  std::string node_name;    ///< Node whose NICs lost capacity; empty for a switch.
  double remaining = 1;     ///< Share of the capacity left, (0, 1].
};

/// The physical network over Slurm's topology (/performance/network): capacities the tree's switches add.
struct NetworkConfig {
  std::vector<double> oversubscription;  ///< Per switch level L: downlink / uplink capacity of level-L switches (1).
  double switch_latency_us = 0.6;        ///< Latency per switch traversed (HDR's 0.6 µs, gpu-domain.md 4.2).
  std::vector<DegradedLink> degraded;    ///< Failed cables or NICs: capacity removed.
};

/// The /performance section.
struct PerformanceConfig {
  bool enabled = false;                               ///< True when the scenario has a /performance section.
  ContentionKind contention = ContentionKind::kNone;  ///< Contention model.
  NetworkConfig network;                              ///< Oversubscription and latency of the fabric.
  std::vector<ProfileRule> profiles;                  ///< Rules, first match wins; unmatched jobs keep their time.
};

/// GPU and cluster metrics of a run (/metrics): what is sampled into results.sqlite and how often.
struct MetricsConfig {
  bool enabled = true;                        ///< Write the metrics tables (gpu_metrics, cluster_metrics).
  double interval_s = 30;                     ///< Sample period (dcgm-exporter's default --collect-interval).
  bool per_gpu = true;                        ///< Keep per-GPU series (DCGM_FI_*); cluster series are always kept.
  std::uint64_t max_gpu_samples = 1'000'000;  ///< Budget of per-GPU rows: a longer run samples less often.
  std::int64_t epoch_unix_s = 1'704'067'200;  ///< Wall-clock time of t = 0 (2024-01-01T00:00:00Z) for exports.
  TelemetryAssumptions telemetry;             ///< Power, temperature and memory assumptions (same key names).
};

/// The first rule matching a job with `gpus` GPUs named `name`, or null.
const ProfileRule* match_profile(const PerformanceConfig& config, std::uint32_t gpus, const std::string& name);

}  // namespace gputwin
