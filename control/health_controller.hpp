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
// - An operator's reboot (operator_reboot: a live run's restart action) goes the same way as a fault that needs a
//   reboot, as `scontrol reboot ASAP nextstate=RESUME reason=R` does on a real cluster: drained now (running jobs
//   finish, none start), rebooted once idle (REBOOTING for `repair.reboot_s`, or as the fault mechanics say when a
//   fault was reported on it meanwhile), resumed when it is back. It counts against the limit of
//   nodes out but is never deferred by it, and is no strike towards `reboots_before_repair`.
//
// Limits and escalation (`faults.health`, all off by default): at most `max_nodes_out` (or `max_nodes_out_pct`) nodes
// held out at once: a node found faulty beyond that stays in service, recorded as deferred, and is taken out when
// another returns (first come, first served); an XID that recurs on a node within `xid_recurrence_s` is handled by
// the catalogue's escalated action; a node due for its `reboots_before_repair`-th reset or reboot within
// `reboot_window_s` goes to repair instead.
#pragma once

#include <cstdint>
#include <deque>
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

  /// Whether operator_reboot(n) would take node `n`: it is in service or drained (an operator's DRAIN), and not in
  /// this controller's care already.
  [[nodiscard]] bool may_reboot(NodeIndex n) const;
  /// An operator's reboot of node `n` with Slurm reason `reason` (`scontrol reboot ASAP nextstate=RESUME`): drained
  /// now, rebooted when idle (at once if it is), resumed once back. Returns false, doing nothing, unless may_reboot.
  bool operator_reboot(NodeIndex n, std::string reason);

  /// Nodes held out of service now (drained, failed, DOWN, recovering, awaiting an admin).
  [[nodiscard]] std::uint32_t nodes_out() const { return out_; }
  /// Most nodes held out at once (0: no limit).
  [[nodiscard]] std::uint32_t limit() const { return limit_; }
  /// Nodes found faulty that wait in service for room under the limit, in order.
  [[nodiscard]] std::vector<NodeIndex> deferred() const;
  /// Node drains the limit has deferred so far.
  [[nodiscard]] std::uint64_t deferrals() const { return deferrals_; }
  /// Recoveries escalated so far (recurring XIDs, repeated reboots).
  [[nodiscard]] std::uint64_t escalations() const { return escalations_; }

 private:
  // kDeferred: reported, kept in service for the limit; kOut: drained, failed or DOWN, waiting for its jobs to
  // leave; kRecovering: its recovery runs; kAwaitingAdmin: recovered, left DOWN by ReturnToService=0 until an
  // admin resumes it.
  enum class Phase : std::uint8_t { kHealthy, kDeferred, kOut, kRecovering, kAwaitingAdmin };
  struct NodeCare {
    Phase phase = Phase::kHealthy;
    FaultEffect needs = FaultEffect::kNone;  // the recovery it needs (the worst reported)
    bool not_responding = false;             // it went DOWN for not responding
    bool found_by_people = false;            // no check saw it (its jobs are requeued when it is taken out)
    bool by_operator = false;                // an operator's reboot (no strike towards reboots_before_repair)
    bool fault_reported = false;             // a fault was reported while in care (its recovery times apply)
    std::string reason;                      // Slurm reason of its drain
  };
  void take_out(NodeIndex n, bool from_epilog);
  void start_recovery(NodeIndex n);
  // Node `n` leaves the controller's care (back in service, or gone): room for a deferred node.
  void release(NodeIndex n);
  FaultEffect escalate_recurring_xid(const HealthEvent& event);

  const FaultsConfig& config_;
  World& world_;
  std::vector<NodeCare> nodes_;
  std::uint32_t limit_ = 0;
  std::uint32_t out_ = 0;
  std::deque<NodeIndex> deferred_;
  std::vector<std::uint32_t> last_xid_;           // per node: last XID reported (0: none)
  std::vector<SimTime> last_xid_at_;              // per node: when
  std::vector<std::vector<SimTime>> recoveries_;  // per node: reset and reboot starts within the window
  std::uint64_t deferrals_ = 0;
  std::uint64_t escalations_ = 0;
};

/// Slurm reason for a node a health event takes out ("xid 79 gpu 2 (health_check)", "Not responding").
std::string health_reason(const HealthEvent& event);

}  // namespace gputwin
