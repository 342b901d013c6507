// HealthController: what a site's health automation (NHC and gpud-style agents, Soperator's checks, the admins'
// rules) decides about a node something found faulty, with Slurm's states and reasons (slurm-semantics.md 4;
// gpu-domain.md 1-3). What the fault does and how long a recovery takes are the world's.
//
// - A node reported faulty is drained (DRAIN: running jobs finish, none start), or set FAIL when it needs a repair
//   and `repair.node_state` is FAIL. A node that stopped responding is already DOWN (slurmctld's SlurmdTimeout).
//   With `requeue_on_detection` (Meta style), or when people found the fault, its running jobs are requeued.
// - Once the node is idle its recovery starts, by what the diagnosis calls for (the XID catalogue's action, or the
//   check's verdict; a further fault before the recovery escalates it to the worse action): a GPU reset (the node
//   stays DRAINED), a reboot (REBOOTING), or a repair (DOWN, or FAIL).
// - When the recovery ends the node is resumed, except under ReturnToService=0 for a node that went DOWN for not
//   responding: it stays DOWN until an admin resumes it, `repair.admin_resume_s` later. A repair includes the
//   admin's resume.
// - A node powered down or deleted while it waits takes its fault with it and is forgotten.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/faults_config.hpp"
#include "world/controller.hpp"

namespace gputwin {

/// The health controller of one cluster (see the file comment).
class HealthController final : public Controller {
 public:
  /// Controller with the decisions of `config` (/faults), acting on `world`.
  HealthController(const FaultsConfig& config, World& world);

  void on_health_event(const HealthEvent& event) override;
  void on_job_released(JobIndex job) override;
  void on_node_recovered(NodeIndex n) override;
  void on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) override;
  void on_timer(TimerId timer) override;

 private:
  // kOut: drained, failed or DOWN, waiting for its jobs to leave; kRecovering: its recovery runs;
  // kAwaitingAdmin: recovered, left DOWN by ReturnToService=0 until an admin resumes it.
  enum class Phase : std::uint8_t { kHealthy, kOut, kRecovering, kAwaitingAdmin };
  struct NodeCare {
    Phase phase = Phase::kHealthy;
    FaultEffect needs = FaultEffect::kNone;  // the recovery it needs (the worst reported)
    bool not_responding = false;             // it went DOWN for not responding
    std::string reason;                      // Slurm reason of its drain
  };
  void start_recovery(NodeIndex n);

  const FaultsConfig& config_;
  World& world_;
  std::vector<NodeCare> nodes_;
};

/// Slurm reason for a node a health event takes out ("xid 79 gpu 2 (health_check)", "Not responding").
std::string health_reason(const HealthEvent& event);

}  // namespace gputwin
