// Checkpoint-restart arithmetic (gpu-domain.md 3.5): checkpoint size and write time from a storage volume's
// bandwidth, Young's and Daly's optimal intervals, expected work lost per failure, expected goodput (the
// first-order ETTR formula of Meta's HPCA'25 model, and Daly's expected wall time), and the mean time to
// failure of a job from a fault profile's rates under the series model (gpu-domain.md 2.2, 2.6).
//
//   const double mtbf_s = job_mttf_hours(*find_fault_profile("meta-rsc-infra"), dense_footprint(16384, 8)) * 3600;
//   const double tau_s = daly_interval_s(60, mtbf_s);                   // ~14.0 min at a 1-minute write
//   const double ettr = goodput_first_order({tau_s, 60, 600}, mtbf_s);   // ~0.77 (3.5's worked example)
#pragma once

#include <cstdint>

#include "faults/fault_profiles.hpp"

namespace gputwin {

/// Checkpoint bytes per parameter for mixed-precision Adam: weights 2 + optimizer 12 (fp32 master weights and
/// two moments); gradients (2 more) are usually not saved. gpu-domain.md 3.5 gives 14-16 B/param.
inline constexpr double kCheckpointBytesPerParameter = 14;

/// Checkpoint size in GB (1e9 bytes) of a model with `parameters` parameters.
double checkpoint_size_gb(double parameters, double bytes_per_parameter = kCheckpointBytesPerParameter);

/// A shared storage volume (PFS/SFS) checkpoints go to.
struct StorageVolume {
  double write_gbps = 0;     ///< Sustained aggregate write bandwidth, GB/s.
  double read_gbps = 0;      ///< Sustained aggregate read bandwidth, GB/s.
  double per_node_gbps = 0;  ///< Bandwidth one client node can drive, GB/s (0: no per-node limit).
};

/// Seconds to write `size_gb` from `writer_nodes` nodes: size / min(write_gbps, per_node_gbps x nodes).
double checkpoint_write_s(double size_gb, const StorageVolume& volume, std::uint32_t writer_nodes);
/// Seconds to read `size_gb` back into `reader_nodes` nodes (the load part of a restart).
double checkpoint_read_s(double size_gb, const StorageVolume& volume, std::uint32_t reader_nodes);

/// A job's checkpointing: the compute between checkpoints, the write and the restart after a failure.
struct CheckpointPlan {
  double interval_s = 0;       ///< Compute time between checkpoints (Young's tau, Meta's Delta_cp).
  double write_s = 0;          ///< Checkpoint write time (delta, w_cp).
  double restart_s = 0;        ///< Restart overhead after a failure: reschedule, init, load (R, u0).
  bool blocking_write = true;  ///< The job waits for the write; false for asynchronous checkpoints.
};

/// Young (1974, CACM 17(9)): tau = sqrt(2 delta M).
double young_interval_s(double write_s, double mtbf_s);

/// Daly (2006, FGCS 22(3)): tau = sqrt(2 delta M) [1 + 1/3 sqrt(delta / 2M) + 1/9 (delta / 2M)] - delta for
/// delta < 2M, else M.
double daly_interval_s(double write_s, double mtbf_s);

/// Work lost per failure, first order (Meta HPCA'25, gpu-domain.md 3.5): restart + interval / 2.
double expected_lost_work_s(const CheckpointPlan& plan);

/// Work lost per failure with exponential failures of mean `mtbf_s`: restart + E[X | X < s] with X ~ Exp(M)
/// and s = interval (+ write when blocking): M - s e^(-s/M) / (1 - e^(-s/M)). Failures during restart are
/// not counted.
double expected_lost_work_exponential_s(const CheckpointPlan& plan, double mtbf_s);

/// First-order goodput (ETTR, gpu-domain.md 3.5): 1 - w/Delta - (u0 + Delta/2) / M, where the w/Delta term is
/// dropped for asynchronous writes; clamped to [0, 1].
double goodput_first_order(const CheckpointPlan& plan, double mtbf_s);

/// Daly's expected wall time to finish `solve_s` of work: M e^(R/M) (e^((tau + delta)/M) - 1) solve / tau
/// (delta = 0 for asynchronous writes).
double daly_wall_time_s(const CheckpointPlan& plan, double solve_s, double mtbf_s);

/// Goodput from Daly's model: solve time over expected wall time.
double goodput_daly(const CheckpointPlan& plan, double mtbf_s);

/// The components a job uses, for its failure rate.
struct JobFootprint {
  std::uint32_t gpus = 0;       ///< GPUs (and their NVLink port sets).
  std::uint32_t nodes = 0;      ///< Nodes (and their software stacks).
  std::uint32_t nic_links = 0;  ///< Scale-out NIC links.
  std::uint32_t switches = 0;   ///< Switches whose failure takes the job down.
  std::uint32_t racks = 0;      ///< Racks whose failure takes the job down.
};

/// The footprint of a job of `gpus` GPUs packed onto whole nodes (ceil(gpus / gpus_per_node) nodes, every
/// link of those nodes), spanning ceil(nodes / nodes_per_switch) switches and ceil(nodes / nodes_per_rack)
/// racks (0 per group: none).
JobFootprint dense_footprint(std::uint32_t gpus, std::uint32_t gpus_per_node, std::uint32_t links_per_node = 8,
                             std::uint32_t nodes_per_switch = 0, std::uint32_t nodes_per_rack = 0);

/// Faults per hour that interrupt a job with this footprint: the sum over the profile's classes whose effect is
/// not kNone of rate x the job's components of the class's kind (series model).
double job_failure_rate_per_hour(const FaultProfile& profile, const JobFootprint& job);

/// Mean time to failure of the job in hours: 1 / job_failure_rate_per_hour (infinity for a zero rate).
double job_mttf_hours(const FaultProfile& profile, const JobFootprint& job);

}  // namespace gputwin
