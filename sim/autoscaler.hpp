// Autoscaler: cloud GPU nodes created from pending demand and removed after an idle window, the way
// Kubernetes-based Slurm offerings scale (Slinky's KEDA on pending jobs, Clusterra's 20-second scaler, Karpenter
// consolidation WhenEmpty; gpu-domain.md 5.1).
//
// Every `poll_s` it maps each eligible pending job (pending for Priority or Resources, not held, dependent or
// limited) to the smallest node shape of the pool that fits one of its nodes, counts the nodes jobs need per
// shape against the idle and booting nodes of that shape, and creates the difference (bounded by max_nodes and
// scale_up_per_poll). A created node is POWERING_UP for its cold start (provisioning, GPU advertisement, driver,
// image, slurmd registration, health check), then takes jobs. A pool node idle for `idle_window_s` is removed
// unless pending jobs still need nodes of its shape (jobs larger than the shape's capacity count for neither):
// POWERING_DOWN for `scale_down_s`, then POWERED_DOWN. Nodes the lifecycle took out (drained, down, rebooting) are left
// alone.
//
// As Slurm power saving (/power_save) it decides no creation itself: the scheduler allocates POWERED_DOWN nodes
// (used last) and the job waits CONFIGURING while they resume, at most ResumeRate per minute (the rest at the next
// decisions); idle nodes are suspended after SuspendTime whatever is pending (power_save.c).
#pragma once

#include <cstdint>
#include <vector>

#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "model/cluster_state.hpp"
#include "sim/engine/rng.hpp"
#include "sim/engine/sim_time.hpp"

namespace gputwin {

class SimWorld;

/// The cloud autoscaler of one run (see the file comment).
class Autoscaler {
 public:
  /// Autoscaler of `state`'s pool per `config`; `seed` is the scenario's (stream "autoscaler/boot").
  Autoscaler(const AutoscalerConfig& config, const ClusterState& state, std::uint64_t seed);

  /// Powers down the pool beyond min_nodes and arms the first decision.
  void start(SimWorld& world);
  /// An autoscaler event fired.
  void on_event(SimWorld& world, std::uint64_t target, std::uint32_t generation);
  /// A job started on its allocation (its nodes are busy).
  void on_job_start(JobIndex job);
  /// A job's resources were released (its nodes may be idle now).
  void on_job_released(SimWorld& world, JobIndex job);

  /// True for Slurm power saving: the scheduler allocates POWERED_DOWN nodes, which then resume for the job.
  [[nodiscard]] bool allocates_powered_down() const { return config_.slurm_power_save; }
  /// Job `job` was allocated POWERED_DOWN node `n`: it resumes at this instant (after the start in progress) or,
  /// past ResumeRate, at the next decisions.
  void request_resume(SimWorld& world, NodeIndex n, JobIndex job);
  /// True if pool node `n` is powered off by the autoscaler (suspended, never created, or reclaimed).
  [[nodiscard]] bool powered_off(NodeIndex n) const {
    return pool_index_[n] >= 0 && nodes_[static_cast<std::size_t>(pool_index_[n])].power == Power::kOff;
  }
  /// True if node `n` is in the autoscaler's pool.
  [[nodiscard]] bool owns(NodeIndex n) const { return pool_index_[n] >= 0; }
  /// The provider took pool node `n` away (spot reclaim): it is gone until the autoscaler creates it again.
  void on_node_reclaimed(SimWorld& world, NodeIndex n);
  /// Something other than the autoscaler set pool node `n` POWERED_DOWN (an operation removed it): it is retired,
  /// not created again and no longer counted up. No effect when the autoscaler powered it off itself.
  void on_node_taken(SimWorld& world, NodeIndex n);
  /// Node `n` came (back) into service: its idle window starts now; a pool node an operation added is up.
  void on_node_in_service(SimWorld& world, NodeIndex n);
  /// Scaling actions in time order.
  [[nodiscard]] const std::vector<ScalingRecord>& records() const { return records_; }
  /// Node-seconds pool nodes spent up (booting, taking jobs or being removed) until `horizon`.
  [[nodiscard]] double pool_node_seconds(SimTime horizon) const;

 private:
  enum Kind : std::uint64_t { kPoll = 1, kBooted = 2, kRemoved = 3, kResume = 4 };
  // kRetired: an operation removed the node (remove_nodes); it is never created again unless an operation adds it.
  enum class Power : std::uint8_t { kOff, kBooting, kUp, kRemoving, kRetired };
  struct PoolNode {
    Power power = Power::kUp;
    SimTime idle_since = 0;  // when it last became idle (kNever while busy)
    SimTime up_since = 0;    // when it was last created (for node-seconds)
    std::uint32_t generation = 0;
    std::uint32_t shape = 0;
    std::uint32_t resume_demand = 0;  // nodes of the job a requested resume is for (0: none requested)
    bool boot_fails = false;          // this boot never registers (drawn when it starts)
  };
  struct Shape {
    std::uint32_t cpus = 0, gpus = 0;
    std::uint64_t mem_mb = 0;
  };
  // True while the node exists for the provider (booting, up or being removed): it counts as up and costs.
  static bool exists(const PoolNode& p) { return p.power != Power::kOff && p.power != Power::kRetired; }
  static std::uint64_t target(Kind kind, std::uint64_t index) {
    return (static_cast<std::uint64_t>(kind) << 56) | index;
  }
  void poll(SimWorld& world);
  void resume_requested(SimWorld& world, std::size_t index);
  int shape_for(JobIndex job) const;
  std::uint32_t nodes_needed(JobIndex job, const Shape& shape) const;
  void create(SimWorld& world, NodeIndex node, std::uint32_t demand);
  void remove(SimWorld& world, NodeIndex node, std::uint32_t demand);

  const AutoscalerConfig& config_;
  const ClusterState& state_;
  Rng boot_rng_;
  std::vector<std::int32_t> pool_index_;  // per node: index in pool_, -1 if static
  std::vector<NodeIndex> pool_;           // pool node indices
  std::vector<PoolNode> nodes_;           // per pool node
  std::vector<Shape> shapes_;
  std::vector<ScalingRecord> records_;
  double node_seconds_ = 0;                     // closed up-intervals
  std::vector<std::uint32_t> demand_, supply_;  // per shape, scratch
  std::vector<std::uint32_t> capacity_;         // per shape: most nodes it can ever have
  std::vector<std::int32_t> node_shape_;        // per node: index in shapes_, -1 if no pool node is like it
  std::vector<std::uint32_t> resume_queue_;     // power saving: pool indices waiting for ResumeRate
  std::uint32_t resume_budget_ = 0;             // power saving: resumes left in this decision period
};

}  // namespace gputwin
