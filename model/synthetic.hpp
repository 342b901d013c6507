// Synthetic GPU-training workloads: job streams drawn from parametric fits of public GPU-cluster traces
// (Acme Seren/Kalos, Microsoft Philly, SenseTime Helios), for scenarios whose workload is
// {"synthetic": {"profile": ..., "jobs": ..., "load": ...}}. The model follows the generator recipe in
// reference/gpu-domain.md section 6.2; the per-profile numbers and their derivations are in synthetic.cpp.
//
// How one job is drawn (every choice is per job and independent unless stated):
// - Size: GPUs from a categorical over powers of two, tuned so the mean GPUs per job matches the trace and the
//   large jobs hold most of the GPU time. Sizes above one node take whole nodes (a node-GPU count that is not a
//   power of two rounds up to whole nodes). Sizes are capped at the trace's largest job and at the nodes of the
//   partition that can hold a whole-node share.
// - Run time: lognormal, with mu shifted by `k` per doubling of the GPU count above a profile threshold (bigger
//   jobs run longer), capped at the trace's longest run and the partition's MaxTime, integer seconds >= 1.
//   Mu, sigma and k are fitted so the mixture's median and mean run and its mean GPU-seconds per job match the
//   trace (not the raw per-trace lognormal of section 6.2, which ignores the size dependence and the cap).
//   `run_time_s` is the job's observed duration in the trace sense, so for a failed job it is the failure time.
// - Outcome: the trace's COMPLETED / CANCELLED / FAILED shares by count. Failures are concentrated early: the
//   failure probability differs between runs shorter and longer than 10 min so that 73% of failures end
//   within the first 10 min (Aegis, NSDI'25), while the run-time distribution stays the trace's.
//   Of the long failures, enough become TIMEOUT (outcome kTimeout, run_time_s > time_limit_s) for 2% of all
//   jobs to run into their limit; the traces count TIMEOUT as failed, so FAILED + TIMEOUT is the trace's share.
// - Time limit: users overestimate. The requested limit is the smallest common walltime (10, 15, 30 min;
//   1, 2, 4, 6, 8, 12 h; 1, 2, 3, 5, 7, 14 d; beyond that whole days) at or above intended run x factor, with
//   factor = 1 + lognormal(0, 1) (median 2x, mean 2.65x), capped at the partition's MaxTime. The intended run is
//   the run time for completed jobs and, for cancelled and failed jobs, the larger of the run time and a fresh
//   draw of the job's run-time distribution. So every non-TIMEOUT job ends within its limit. A TIMEOUT job's
//   limit is its observed duration rounded down to whole minutes (keeping the calibrated run-time distribution),
//   and its run_time_s is longer (by a uniform 1 s to 100%).
// - Shape: the node GPU count g_n is the largest GPU count of a node in the partition (the first such node is
//   the reference for CPUs and memory); nodes = ceil(gpus / g_n), gpus_per_node = gpus / nodes,
//   cpus = gpus * node CPUs / g_n (at least one per node), mem_per_node_mb = 90% of the node's memory *
//   gpus_per_node / g_n; name "train-<gpus>g-<id>"; partition as given (empty: the default partition).
// - User: Zipf (exponent 1) over users "user001".."userN"; user i (0-based) belongs to account i % accounts,
//   named "acct01".."acctM".
// - Submit time: job sizes and run times come first; with W = sum(gpus * min(run, limit)) and C the GPUs of
//   the partition, the arrival span is T = W / (load * C). Arrivals are a Poisson process over [0, T) with a
//   diurnal rate multiplier 1 + 0.5 sin(2 pi (t / 1 d - 0.25)) (lowest at t = 0, midnight; highest at noon),
//   drawn by time-rescaling (unit-rate gaps in cumulative intensity, mapped back to time through a per-second
//   table of the inverse), with the rate chosen so the expected number of arrivals in [0, T) is `jobs`.
//   Submit times are whole seconds, non-decreasing; ids are 1..jobs in submit order.
//
// Each quantity comes from its own Rng stream ("workload/sizes", "workload/runtimes", "workload/outcomes",
// "workload/limits", "workload/arrivals", "workload/users"), so changing one model leaves the others' draws as
// they were. Not modelled: weekly patterns, size-dependent cancellation (Acme's pretraining jobs make up most
// CANCELLED GPU time), infrastructure failures (the simulator's failure process injects those), queue times.
//
// Usage:
//   SyntheticWorkload w{.profile = "acme-seren", .jobs = 10000, .load = 0.8};
//   std::vector<JobSpec> jobs = generate_synthetic(w, cluster, seed);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster.hpp"
#include "model/job.hpp"

namespace gputwin {

/// A scenario's synthetic workload ("workload": {"synthetic": {...}}).
struct SyntheticWorkload {
  std::string profile;         ///< Profile name, one of synthetic_profiles().
  std::uint64_t jobs = 0;      ///< Number of jobs to generate (at least 1).
  double load = 0.9;           ///< Offered load: GPU-seconds asked / GPU-seconds of the partition over the span.
  std::uint32_t users = 0;     ///< Number of users; 0 means the profile's default.
  std::uint32_t accounts = 0;  ///< Number of accounts; 0 means the profile's default.
  std::string partition;       ///< Partition the jobs are submitted to; empty means the default partition.
};

/// Name and provenance of one synthetic profile.
struct SyntheticProfileInfo {
  std::string_view name;     ///< Name used in scenarios, e.g. "acme-seren".
  std::string_view source;   ///< Trace and paper the parameters come from.
  std::string_view summary;  ///< One line on what the workload looks like.
};

/// All built-in profiles, in a fixed order.
std::span<const SyntheticProfileInfo> synthetic_profiles();

/// Generates `w.jobs` jobs for `cluster` from the profile `w.profile`, deterministically from `seed`.
/// Throws std::invalid_argument for an unknown profile (the message lists the valid names), jobs == 0,
/// a load that is not a positive finite number, an unknown partition, or a partition without GPUs.
std::vector<JobSpec> generate_synthetic(const SyntheticWorkload& w, const ClusterConfig& cluster, std::uint64_t seed);

}  // namespace gputwin
