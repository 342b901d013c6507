// The mirror: a live Slurm cluster as the twin has followed it over its polls. Each poll's snapshot (nodes,
// partitions, jobs from slurmrestd) updates the configuration (nodes keep their index for ever, so history stays
// valid when nodes come and go), the jobs (by Slurm job id, kept after slurmctld forgets them) and the history of
// every change: node state changes, job state and reason changes. The twin's results folder, its forecasts and its
// controllers all read the model built here.
//
//   Mirror mirror;
//   PollChanges changes = mirror.apply(Snapshot{now, client.nodes(), client.partitions(), client.jobs()});
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/cluster.hpp"
#include "model/cluster_state.hpp"
#include "model/job.hpp"
#include "model/run_observer.hpp"
#include "twin/rest/rest_types.hpp"

namespace gputwin {

/// One poll of the live cluster.
struct Snapshot {
  std::int64_t time = 0;                  ///< When it was taken (epoch seconds, slurmctld's clock where known).
  std::vector<RestNode> nodes;            ///< GET nodes.
  std::vector<RestPartition> partitions;  ///< GET partitions.
  std::vector<RestJob> jobs;              ///< GET jobs.
};

/// A job as the twin has followed it.
struct MirrorJob {
  RestJob record;               ///< The latest record slurmctld gave.
  std::int64_t first_seen = 0;  ///< Poll time it was first listed.
  std::int64_t last_seen = 0;   ///< Poll time it was last listed.
  bool listed = true;           ///< Still listed by slurmctld (ended jobs drop out after MinJobAge).
};

/// A node's state changed (or the first poll saw it).
struct NodeChange {
  std::int64_t time = 0;                           ///< Poll time (epoch seconds).
  NodeIndex node = 0;                              ///< Node index in the mirror's configuration.
  NodeState state = NodeState::kIdle;              ///< sinfo-style state.
  NodeCondition condition = NodeCondition::kNone;  ///< The condition behind it (DRAIN, DOWN, power states).
  std::string reason;                              ///< Slurm's reason (empty when none).
};

/// A job's state or pending reason changed (or the first poll saw it).
struct JobChange {
  std::int64_t time = 0;     ///< Poll time (epoch seconds).
  std::uint64_t job_id = 0;  ///< Slurm job id.
  std::string state;         ///< Base state (PENDING, RUNNING, COMPLETED, ...).
  std::string reason;        ///< state_reason ("Priority", "Resources", "None").
};

/// What one poll changed.
struct PollChanges {
  std::uint32_t nodes_added = 0;       ///< Nodes seen for the first time.
  std::uint32_t nodes_changed = 0;     ///< Nodes whose state or reason changed.
  std::uint32_t jobs_new = 0;          ///< Jobs seen for the first time.
  std::uint32_t jobs_changed = 0;      ///< Jobs whose state or reason changed.
  std::uint32_t jobs_gone = 0;         ///< Jobs slurmctld no longer lists.
  std::vector<std::uint64_t> started;  ///< Jobs that started since the last poll (or were running when first seen).
  std::vector<std::uint64_t> ended;    ///< Jobs that ended since the last poll.
};

/// sinfo's state of a node record (DRAINING, DRAINED, DOWN, POWERED_DOWN, MIXED, ...).
NodeState node_state_of(const RestNode& node);
/// The node condition ClusterState keeps for a node record (DRAIN, DOWN, FAIL, REBOOTING, power states).
NodeCondition node_condition_of(const RestNode& node);
/// True if the node record carries flag `flag` ("DRAIN").
bool has_flag(const RestNode& node, std::string_view flag);
/// True for base job states that have ended (COMPLETED, CANCELLED, FAILED, TIMEOUT, ...).
bool job_ended(std::string_view state);
/// A number from a TRES string ("cpu=16,mem=64G,node=2,gres/gpu=16", key "node" -> 2); nullopt if absent.
std::optional<std::uint64_t> tres_count(std::string_view tres, std::string_view key);

/// What running job `job` (spec `spec`) holds on each of `nodes`: its CPUs and GPUs spread evenly, within what the
/// nodes have left in `free_cpus`, `free_gpus`, `free_mem` (taken from them). slurmrestd gives per-job totals.
std::vector<NodeAllocation> spread_allocation(const JobSpec& spec, const RestJob& job,
                                              const std::vector<NodeIndex>& nodes,
                                              std::vector<std::uint32_t>& free_cpus,
                                              std::vector<std::uint32_t>& free_gpus,
                                              std::vector<std::uint64_t>& free_mem);

/// The live cluster as mirrored.
class Mirror {
 public:
  /// Applies one poll; returns what changed. Polls must come in time order.
  PollChanges apply(Snapshot snapshot);

  /// t = 0 of the results folder (epoch seconds): the first poll, or the earliest submit time it listed.
  [[nodiscard]] std::int64_t epoch() const { return epoch_; }
  /// Time of the last poll (epoch seconds).
  [[nodiscard]] std::int64_t now() const { return now_; }
  /// Polls applied.
  [[nodiscard]] std::uint64_t polls() const { return polls_; }
  /// Nodes and partitions as a ClusterConfig (every node ever seen, in first-seen order).
  [[nodiscard]] const ClusterConfig& config() const { return config_; }
  /// The latest record of every node, by node index.
  [[nodiscard]] const std::vector<RestNode>& nodes() const { return nodes_; }
  /// True if node `n` was listed by the last poll.
  [[nodiscard]] bool node_listed(NodeIndex n) const { return node_listed_[n] != 0; }
  /// The latest partition records.
  [[nodiscard]] const std::vector<RestPartition>& partitions() const { return partitions_; }
  /// Every job ever seen, in first-seen order (ascending job id within a poll).
  [[nodiscard]] const std::vector<MirrorJob>& jobs() const { return jobs_; }
  /// The job with Slurm id `id`, or null.
  [[nodiscard]] const MirrorJob* job(std::uint64_t id) const;
  /// Index of the node named `name`, or nullopt.
  [[nodiscard]] std::optional<NodeIndex> node_index(std::string_view name) const;
  /// Node state changes, in time order.
  [[nodiscard]] const std::vector<NodeChange>& node_history() const { return node_history_; }
  /// Job state and reason changes, in time order.
  [[nodiscard]] const std::vector<JobChange>& job_history() const { return job_history_; }
  /// The job's spec in the model's terms, times in seconds after `origin` (epoch seconds: the mirror's epoch for
  /// results, the last poll for a forecast).
  [[nodiscard]] JobSpec job_spec(const RestJob& job, std::int64_t origin) const;
  /// Node indices of a hostlist ("gpu[01-02]") of known nodes (unknown names skipped).
  [[nodiscard]] std::vector<NodeIndex> nodes_of(std::string_view hostlist) const;

 private:
  void apply_nodes(std::vector<RestNode>& nodes, PollChanges& changes);
  void apply_partitions(std::vector<RestPartition>& partitions);
  void apply_jobs(std::vector<RestJob>& jobs, PollChanges& changes);

  std::int64_t epoch_ = 0;
  std::int64_t now_ = 0;
  std::uint64_t polls_ = 0;
  ClusterConfig config_;
  std::vector<RestNode> nodes_;
  std::vector<std::uint8_t> node_listed_;
  std::vector<NodeState> node_state_;
  std::unordered_map<std::string, NodeIndex> node_by_name_;
  std::vector<RestPartition> partitions_;
  std::vector<MirrorJob> jobs_;
  std::unordered_map<std::uint64_t, std::uint32_t> job_by_id_;
  std::vector<NodeChange> node_history_;
  std::vector<JobChange> job_history_;
};

}  // namespace gputwin
