// Bounds on every count, time and rate gputwin reads from outside (scenarios, traces, slurm.conf, sacct
// histories), checked where each is read so that arithmetic on them cannot overflow and no input can make a run
// allocate without bound or tick for ever. README "Reliability" lists them.
#pragma once

#include <cstdint>

namespace gputwin {

/// Latest point in time in an input, seconds from its epoch (about 317 years; Unix times, as some SWF traces
/// carry, until the year 2286): submit, begin and hold-until times, reservation and operation times.
inline constexpr std::int64_t kMaxTimeSeconds = 10'000'000'000;
/// Longest duration in an input, seconds (about 31.7 years): run times, time limits, periods and delays.
inline constexpr std::int64_t kMaxDurationSeconds = 1'000'000'000;
/// Latest simulated time a run may reach, seconds (about 3,170 years): a run that gets there stops with an error
/// instead of ticking on (jobs queued one after another, each near kMaxDurationSeconds long). Simulated time is
/// 64-bit microseconds, so sums of a few such values stay far from overflow.
inline constexpr std::int64_t kMaxSimulatedSeconds = 10 * kMaxTimeSeconds;
/// Most times one job may be requeued in a run without a stop time. Slurm requeues a job whose node went DOWN
/// without limit (node-DOWN requeues do not count towards MaxBatchRequeue), so a job that every run loses to a spot
/// reclaim or a node failure before it can finish would be requeued until the bound on simulated time, its runs'
/// records growing all along: past this such a run stops with an error naming the job (with --until it stops then).
inline constexpr std::uint32_t kMaxRequeuesPerJob = 1000;
/// Most nodes in one cluster.
inline constexpr std::uint64_t kMaxNodes = 1'000'000;
/// Most CPUs on one node (Slurm keeps a node's CPU count in 16 bits).
inline constexpr std::uint64_t kMaxCpusPerNode = 65'535;
/// Most GPUs on one node.
inline constexpr std::uint64_t kMaxGpusPerNode = 1'024;
/// Most GPUs in one cluster (each has its own metrics state).
inline constexpr std::uint64_t kMaxGpus = 16'777'216;
/// Most memory on one node, GB (a petabyte).
inline constexpr std::uint64_t kMaxMemoryGbPerNode = 1'048'576;
/// Largest first index of a node group's names (`start_index`) and most digits in them (`digits`).
inline constexpr std::uint64_t kMaxNodeIndex = 1'000'000'000'000;
inline constexpr std::uint64_t kMaxNodeIndexDigits = 18;
/// Largest job id written in a scenario (array tasks take the ids after their job's).
inline constexpr std::uint64_t kMaxJobId = 1'000'000'000'000'000;
/// Most jobs in one workload (inline, synthetic, SWF or sacct), array tasks counted one by one.
inline constexpr std::uint64_t kMaxJobs = 20'000'000;

}  // namespace gputwin
