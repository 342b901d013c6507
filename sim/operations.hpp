// ClusterOperations: what operators do to a live cluster at given times (/operations), with the cost each has on a
// Kubernetes-based Slurm (Soperator, Slinky): nodes added without a restart (absent until their cold start ends),
// nodes removed by draining first and deleting once idle, a container image updated without a restart (an Enroot
// squashfs on shared storage: no per-node pulls), a storage volume attached with a restart of every node (at once,
// ending the running jobs NODE_FAIL and requeueing them, or rolling: drain each node and restart it once idle), and
// maintenance windows that take nodes DOWN. Every step is recorded.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "model/cluster_state.hpp"

namespace gputwin {

class SimWorld;

/// The cluster operations of one run.
class ClusterOperations {
 public:
  /// Operations `operations` (sorted by time) on `state`'s cluster.
  ClusterOperations(const std::vector<ClusterOperation>& operations, const ClusterState& state);
  /// Marks nodes that join later as absent and arms every operation.
  void start(SimWorld& world);
  /// An operation event fired.
  void on_event(SimWorld& world, std::uint64_t target, std::uint32_t generation);
  /// A job's resources were released: nodes waiting to be removed or restarted may go now.
  void on_job_released(SimWorld& world, JobIndex job);
  /// The steps taken, in time order.
  [[nodiscard]] const std::vector<OperationRecord>& records() const { return records_; }

 private:
  enum Kind : std::uint64_t { kStart = 1, kNodeBack = 2 };
  enum class Pending : std::uint8_t { kNone, kRemove, kRestart };
  static std::uint64_t target(Kind kind, std::uint64_t index) {
    return (static_cast<std::uint64_t>(kind) << 56) | index;
  }
  void begin(SimWorld& world, std::size_t op);
  void when_idle(SimWorld& world, NodeIndex node);
  void record(SimWorld& world, std::size_t op, std::string step, std::uint32_t node, std::uint32_t killed);

  const std::vector<ClusterOperation>& operations_;
  const ClusterState& state_;
  std::vector<Pending> pending_;           // per node: what waits for the node to be idle
  std::vector<std::uint32_t> pending_op_;  // per node: the operation it waits for
  std::vector<OperationRecord> records_;
};

}  // namespace gputwin
