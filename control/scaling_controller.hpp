// ScalingController: which cloud nodes to power up and down, and when: the decisions of a Kubernetes-based Slurm
// autoscaler (Slinky's KEDA on pending jobs, Clusterra's 20-second scaler, Karpenter consolidation WhenEmpty;
// gpu-domain.md 5.1) or of Slurm power saving (power_save.c). How long a node takes to boot, whether it registers,
// and what it costs are the world's (sim/power_mechanics, sim/cost_meter; a real provider in twin mode).
//
// Autoscaler: every `poll_s` it maps each eligible pending job (pending for Priority or Resources, not held,
// dependent or limited) to the smallest node shape of the pool that fits one of its nodes, counts the nodes jobs
// need per shape against the idle and booting nodes of that shape, and powers up the difference (bounded by
// max_nodes and scale_up_per_poll). A pool node idle for `idle_window_s` is powered down unless pending jobs still
// need nodes of its shape (jobs larger than the shape's capacity count for neither). Nodes out for health reasons
// (drained, down, rebooting) are left alone.
//
// Slurm power saving: it decides no creation itself: the scheduler allocates POWERED_DOWN nodes (used last) and
// the job waits CONFIGURING; the controller resumes each such node, at most ResumeRate per decision period (the
// rest at the next ones); idle nodes are suspended after SuspendTime whatever is pending.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "world/controller.hpp"

namespace gputwin {

/// The scaling controller of a cloud pool (see the file comment).
class ScalingController final : public Controller {
 public:
  /// Controller of `config`'s pool, acting on `world`.
  ScalingController(const AutoscalerConfig& config, World& world);

  void on_start() override;
  void on_timer(TimerId timer) override;
  void on_job_submitted(JobIndex job) override { list_pending(job); }
  void on_job_requeued(JobIndex job) override { list_pending(job); }
  void on_job_started(JobIndex job) override;
  void on_job_released(JobIndex job) override;
  void on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) override;
  void on_node_booted(NodeIndex n, bool ok) override;
  void on_node_powered_down(NodeIndex n) override;
  void on_node_deleted(NodeIndex n) override;
  void on_node_reclaimed(NodeIndex n) override;

  /// An operator scales the pool now (a live run's dashboard): `count` > 0 powers up that many powered-down pool
  /// nodes (lowest pool index first, up to max_nodes existing), `count` < 0 powers down that many idle pool nodes
  /// (in service, no job; highest index first, keeping min_nodes). The same create/remove actions as the
  /// autoscaler's (recorded with demand 0); its own rules go on from there (an idle node may be powered down again
  /// after idle_window_s). Returns the nodes acted on (fewer than asked when the pool has no more).
  std::vector<NodeIndex> operator_scale(std::int32_t count);
  /// Scaling actions and their outcomes in time order.
  [[nodiscard]] const std::vector<ScalingRecord>& records() const { return records_; }
  /// Node-seconds pool nodes spent up (booting, taking jobs or being removed) until `horizon`.
  [[nodiscard]] double pool_node_seconds(SimTime horizon) const;

 private:
  // kRetired: taken out of the cluster by someone else (an operation's remove_nodes); never powered up again
  // unless an operation brings it back.
  enum class Power : std::uint8_t { kOff, kBooting, kUp, kRemoving, kRetired };
  struct PoolNode {
    Power power = Power::kUp;
    SimTime idle_since = 0;  // when it last became idle (kNever while busy)
    SimTime up_since = 0;    // when it was last powered up (for node-seconds)
    std::uint32_t shape = 0;
    std::uint32_t resume_demand = 0;  // nodes of the job a requested resume is for (0: none requested)
  };
  struct Shape {
    std::uint32_t cpus = 0, gpus = 0;
    std::uint64_t mem_mb = 0;
  };
  // True while the node exists for the provider (booting, up or being removed): it counts as up and costs.
  static bool exists(const PoolNode& p) { return p.power != Power::kOff && p.power != Power::kRetired; }
  PoolNode* pool_node(NodeIndex n) {
    return pool_index_[n] >= 0 ? &nodes_[static_cast<std::size_t>(pool_index_[n])] : nullptr;
  }
  void list_pending(JobIndex job);
  void poll();
  void request_resume(NodeIndex n, JobIndex job);
  void resume_requested(std::size_t index);
  int shape_for(JobIndex job) const;
  std::uint32_t nodes_needed(JobIndex job, const Shape& shape) const;
  void create(NodeIndex node, std::uint32_t demand);
  void remove(NodeIndex node, std::uint32_t demand);

  const AutoscalerConfig& config_;
  World& world_;
  const ClusterState& state_;
  std::vector<std::int32_t> pool_index_;  // per node: index in pool_, -1 if static
  std::vector<NodeIndex> pool_;           // pool node indices
  std::vector<PoolNode> nodes_;           // per pool node
  std::vector<Shape> shapes_;
  std::vector<ScalingRecord> records_;
  double node_seconds_ = 0;                     // closed up-intervals
  std::vector<std::uint32_t> demand_, supply_;  // per shape, scratch
  std::vector<std::uint32_t> capacity_;         // per shape: most nodes it can ever have
  std::vector<std::int32_t> node_shape_;        // per node: index in shapes_, -1 if no pool node is like it
  std::vector<JobIndex> pending_;               // jobs submitted or requeued and maybe still pending
  std::vector<std::uint8_t> listed_;            // per job: in pending_
  std::vector<std::uint32_t> resume_queue_;     // power saving: pool indices waiting for ResumeRate
  std::uint32_t resume_budget_ = 0;             // power saving: resumes left in this decision period
  bool started_ = false;                        // on_start has run
};

}  // namespace gputwin
