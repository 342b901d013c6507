// The cluster as configured: nodes and partitions in slurm.conf's terms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/accounting.hpp"
#include "model/topology.hpp"

namespace gputwin {

/// Index of a node in the cluster's node table (slurm.conf definition order).
using NodeIndex = std::uint32_t;

/// One configured node (NodeName=... in slurm.conf).
struct NodeConfig {
  std::string name;             ///< Host name, e.g. "gpu001".
  std::uint32_t cpus = 1;       ///< CPUs (cores) schedulable on the node.
  std::uint64_t memory_mb = 0;  ///< RealMemory in MB.
  std::uint32_t gpus = 0;       ///< GPUs (Gres=gpu:N).
  std::string gpu_type;         ///< GPU model (Gres=gpu:<type>:N), empty when none.
  std::uint32_t weight = 1;     ///< Weight: lower weights are allocated first.
  bool available = true;        ///< False for nodes configured DOWN or DRAIN (State= in slurm.conf): never allocated.
  bool drained = false;         ///< Configured DRAIN (rather than DOWN), when not available.
};

/// Partition state (PartitionName=... State=).
enum class PartitionState : std::uint8_t { kUp, kDown, kDrain, kInactive };

/// One partition (PartitionName=... in slurm.conf).
struct PartitionConfig {
  std::string name;                              ///< Partition name.
  std::vector<NodeIndex> nodes;                  ///< Member nodes, ascending node index.
  bool is_default = false;                       ///< Default=YES.
  std::int64_t default_time_s = -1;              ///< DefaultTime in seconds; -1 when unset.
  std::int64_t max_time_s = -1;                  ///< MaxTime in seconds; -1 means UNLIMITED.
  PartitionState state = PartitionState::kUp;    ///< State=UP/DOWN/DRAIN/INACTIVE.
  std::uint32_t priority_tier = 1;               ///< PriorityTier: higher tiers are scheduled first.
  std::uint32_t priority_job_factor = 1;         ///< PriorityJobFactor (multifactor's partition factor).
  BillingWeights billing;                        ///< TRESBillingWeights.
  std::string qos;                               ///< QOS= (partition QOS); empty for none.
  PreemptMode preempt_mode = PreemptMode::kOff;  ///< PreemptMode= of the partition; kOff inherits the cluster's.
  std::int64_t grace_time_s = 0;                 ///< GraceTime= for preempted jobs of this partition.
};

/// An advance reservation (scontrol create reservation), as a scenario event.
struct ReservationConfig {
  std::string name;                   ///< ReservationName.
  std::int64_t start_s = 0;           ///< StartTime, seconds since the scenario epoch.
  std::int64_t end_s = 0;             ///< EndTime (start + Duration).
  std::vector<NodeIndex> nodes;       ///< Reserved nodes, ascending.
  std::vector<std::string> users;     ///< Users=: who may run in it (with accounts; empty = anyone listed there).
  std::vector<std::string> accounts;  ///< Accounts=.
  bool maint = false;                 ///< Flags=MAINT (a maintenance window: nobody runs in it).
};

/// Nodes and partitions of one cluster.
struct ClusterConfig {
  std::vector<NodeConfig> nodes;                ///< Node table in definition order.
  std::vector<PartitionConfig> partitions;      ///< Partitions in definition order.
  std::vector<ReservationConfig> reservations;  ///< Advance reservations.
  Topology topology;                            ///< Network topology (Slurm's view and the fabric).

  /// Index of the partition named `name`, or -1.
  [[nodiscard]] int partition_index(const std::string& name) const;
  /// Index of the default partition (the first with Default=YES, else the first), or -1 if none.
  [[nodiscard]] int default_partition() const;
  /// Sum of GPUs over all nodes.
  [[nodiscard]] std::uint64_t total_gpus() const;
  /// Sum of CPUs over all nodes.
  [[nodiscard]] std::uint64_t total_cpus() const;
};

}  // namespace gputwin
