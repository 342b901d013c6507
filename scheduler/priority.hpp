// priority/multifactor as slurmctld computes it (priority_multifactor.c:_get_priority_internal): the weighted
// factors, integer truncation, and the decay thread's usage accumulation every PriorityCalcPeriod.
// shared/reference/slurm-semantics.md section 1. priority/basic is the countdown in JobPolicy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/accounting.hpp"
#include "model/cluster.hpp"
#include "model/job.hpp"
#include "scheduler/fairshare.hpp"

namespace gputwin {

/// The factors of one job's priority, each in [0, 1] (unless a NO_NORMAL_* flag is set), and the result.
struct PriorityFactors {
  double age = 0;              ///< min(1, (now - accrue) / PriorityMaxAge).
  double assoc = 0;            ///< Association priority / max association priority.
  double fairshare = 0;        ///< Fair-share factor of the job's association.
  double job_size = 0;         ///< (n/N + c/C) / 2, or the FavorSmall / SMALL_RELATIVE_TO_TIME forms.
  double partition = 0;        ///< PriorityJobFactor / max PriorityJobFactor.
  double qos = 0;              ///< QOS priority / max QOS priority.
  double tres = 0;             ///< Sum over TRES of weight x job TRES / partition TRES (already weighted).
  std::int64_t nice = 0;       ///< --nice (subtracted).
  std::uint32_t priority = 0;  ///< The job priority: the weighted sum, truncated, clamped to [1, 2^32 - 1].
};

/// What the priority of a job depends on besides its spec.
struct PriorityInputs {
  AssocId assoc = 0;              ///< The job's user association.
  std::uint32_t qos = 0;          ///< Index into the QOS table.
  std::uint32_t partition = 0;    ///< Partition index.
  std::int64_t accrue_s = 0;      ///< accrue_time (age starts here).
  std::int64_t time_limit_s = 0;  ///< Effective time limit (SMALL_RELATIVE_TO_TIME).
};

/// A running job as the decay thread charges it.
struct UsageCharge {
  AssocId assoc = 0;         ///< The job's association.
  std::uint32_t qos = 0;     ///< The job's QOS (UsageFactor).
  std::int64_t start_s = 0;  ///< Start time.
  double billing = 0;        ///< Billing TRES (computed at start).
};

/// Multifactor priority and fair-share usage.
class PriorityEngine {
 public:
  /// Engine for `config`; `qos` is the QOS table (index 0 is "normal"), `tree` the association tree (kept by
  /// reference), `assoc_priority` the Priority= of every association id (inherited down already).
  PriorityEngine(const PriorityConfig& config, const ClusterConfig& cluster, const std::vector<QosConfig>& qos,
                 AssociationTree& tree, const std::vector<std::uint32_t>& assoc_priority);

  /// The factors and priority of `spec` at `now_s`.
  [[nodiscard]] PriorityFactors factors(const JobSpec& spec, const PriorityInputs& in, std::int64_t now_s) const;
  /// Billing TRES of an allocation in `partition` (TRESBillingWeights; allocated CPUs when unset).
  [[nodiscard]] double billing(std::uint32_t partition, std::uint64_t cpus, std::uint64_t mem_mb, std::uint64_t nodes,
                               std::uint64_t gpus) const;

  /// The decay thread's tick at `now_s`: usage reset, decay since the last tick, new usage of `running`, then
  /// the fair-share factors (Fair Tree or classic).
  void tick(std::int64_t now_s, std::span<const UsageCharge> running);
  /// Charges a job's final partial interval at its end (priority_p_job_end).
  void charge_end(const UsageCharge& job, std::int64_t end_s);
  /// Time of the last tick (g_last_ran).
  [[nodiscard]] std::int64_t last_tick_s() const { return last_tick_s_; }
  /// The configuration.
  [[nodiscard]] const PriorityConfig& config() const { return config_; }

 private:
  void charge(const UsageCharge& job, std::int64_t from_s, std::int64_t to_s);
  [[nodiscard]] bool reset_due(std::int64_t prev_s, std::int64_t now_s) const;

  PriorityConfig config_;
  const ClusterConfig& cluster_;
  const std::vector<QosConfig>& qos_;
  AssociationTree& tree_;
  const std::vector<std::uint32_t>& assoc_priority_;
  double max_assoc_priority_ = 0;
  double max_qos_priority_ = 0;
  double max_part_factor_ = 1;
  double total_nodes_ = 0;
  double total_cpus_ = 0;
  struct PartitionTotals {
    double cpus = 0, mem_mb = 0, nodes = 0, gpus = 0;
  };
  std::vector<PartitionTotals> part_totals_;
  double decay_per_second_ = 1;  // D = 1 - 0.693 / half-life
  std::int64_t last_tick_s_ = 0;
  bool ticked_ = false;
};

/// The usage reset boundary of `period` strictly after `t_s` (the scenario epoch is 2024-01-01 00:00, a
/// Monday; weekly resets happen at Sunday 00:00 as in Slurm), or INT64_MAX for NONE/NOW.
std::int64_t next_usage_reset_s(UsageReset period, std::int64_t t_s);

}  // namespace gputwin
