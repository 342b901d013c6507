// OperationsController: what operators do to a live cluster at given times (/operations), carried out the way a
// Kubernetes-based Slurm does it (Soperator, Slinky): nodes added without a restart (POWER_UP, in service once their
// cold start ends), nodes removed by draining first and deleting once idle, a container image updated without a
// restart (an Enroot squashfs on shared storage: no per-node pulls), a storage volume attached or "restart all
// workers" with a restart of every node (at once, ending the running jobs NODE_FAIL and requeueing them, or
// rolling: drain each node and restart it once idle), and maintenance windows that set nodes DOWN and resume them
// at the window's end. Operators also hold, release and prioritise pending jobs by id (scontrol hold/release/update
// priority). Every step is an OperationRecord.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "world/controller.hpp"

namespace gputwin {

/// The operations controller of one cluster.
class OperationsController final : public Controller {
 public:
  /// Controller of `operations` (sorted by time), acting on `world`.
  OperationsController(const std::vector<ClusterOperation>& operations, World& world);

  /// Nodes the operations add later: they are absent (deleted) until their add_nodes.
  [[nodiscard]] std::vector<NodeIndex> nodes_added_later() const;

  void on_start() override;
  void on_timer(TimerId timer) override;
  void on_job_released(JobIndex job) override;
  void on_node_booted(NodeIndex n, bool ok) override;
  void on_node_recovered(NodeIndex n) override;

  /// The steps taken, in time order.
  [[nodiscard]] const std::vector<OperationRecord>& records() const { return records_; }

 private:
  // What a node waits for: to be idle (then it is removed or restarted), or an action to end.
  enum class Pending : std::uint8_t { kNone, kRemove, kRestart, kBoot, kRestarting, kWindow };
  void begin(std::size_t op);
  void act_on_jobs(std::size_t op);
  void when_idle(NodeIndex node);
  void expect(NodeIndex node, Pending what, std::size_t op);
  void record(std::size_t op, std::string step, std::uint32_t node, std::uint32_t killed);

  const std::vector<ClusterOperation>& operations_;
  World& world_;
  std::vector<Pending> pending_;           // per node
  std::vector<std::uint32_t> pending_op_;  // per node: the operation it waits for
  std::vector<OperationRecord> records_;
  std::unordered_map<std::uint64_t, JobIndex> job_by_id_;  // job id -> index (hold, release, set_priority)
};

}  // namespace gputwin
