// What a controller is told: the observations a world delivers (job and node state changes, health events, the
// end of power and recovery actions) and its own timers. Every callback has an empty default, so a controller
// overrides only what it reacts to. A world delivers observations synchronously, in time order, through the
// ControlPlane (control/), which fixes the order in which the controllers hear of each one.
#pragma once

#include <cstdint>

#include "faults/fault_types.hpp"
#include "faults/health_check.hpp"
#include "model/cluster_state.hpp"
#include "world/world.hpp"

namespace gputwin {

/// Something noticed a problem on a node: an XID, a failing HealthCheckProgram (periodic, Prolog or Epilog), an
/// active check or NCCL test, a node not responding, or people. Real cluster: a DRAIN/DOWN with a reason seen
/// through slurmrestd, or an XID from the node's logs or DCGM.
struct HealthEvent {
  NodeIndex node = 0;                        ///< The node.
  DetectedBy by = DetectedBy::kHealthCheck;  ///< What noticed it.
  bool found_by_people = false;              ///< No configured check saw it: people found it (much later).
  bool not_responding = false;               ///< slurmd does not answer (the host is down or unreachable).
  bool again = false;                        ///< A further fault on a node already reported (not yet recovered).
  std::uint32_t xid = 0;                     ///< The XID it logged (0: none).
  std::uint32_t gpu = UINT32_MAX;            ///< The GPU it names (UINT32_MAX: none).
  Symptom symptom = Symptom::kNone;          ///< What the check saw.
  FaultEffect needs = FaultEffect::kNone;    ///< The recovery the diagnosis calls for (reset, reboot, repair).
};

/// An operator's change to a pending job (World::hold_job, release_job, set_job_priority; a live run's time limit
/// update, SimWorld::set_job_time_limit).
struct JobUpdate {
  /// What changed.
  enum class Kind : std::uint8_t { kHold, kRelease, kPriority, kTimeLimit };
  Kind kind = Kind::kHold;        ///< What changed.
  std::uint32_t priority = 0;     ///< The priority set (kPriority).
  std::int64_t time_limit_s = 0;  ///< The time limit set, seconds (kTimeLimit).
};

/// A controller: reacts to observations and its timers by acting on the World it was given.
class Controller {
 public:
  virtual ~Controller() = default;

  /// Called once before the first event.
  virtual void on_start() {}
  /// A timer set with World::set_timer for this controller fired.
  virtual void on_timer(TimerId timer) { (void)timer; }
  /// All events of the current instant have been delivered (with scheduling_point "event": after every event).
  virtual void on_instant_end() {}

  // ---- Jobs ----
  /// A job asks to run (its submission, or its requeue after a run ended): kNone admits it; a reason refuses it,
  /// and the world rejects the submission with that reason, or leaves the requeued job ended.
  [[nodiscard]] virtual PendingReason admit(JobIndex job) {
    (void)job;
    return PendingReason::kNone;
  }
  /// A job was submitted (its runtime state is PENDING and submitted).
  virtual void on_job_submitted(JobIndex job) { (void)job; }
  /// A job started on its allocation (possibly CONFIGURING while powered-down nodes resume).
  virtual void on_job_started(JobIndex job) { (void)job; }
  /// A job was already running on its allocation when the world began (a twin's forecast starts from a live
  /// cluster): it was never submitted to this controller. By default, as a start.
  virtual void on_job_adopted(JobIndex job) { on_job_started(job); }
  /// A job's resources were released (its epilog completed).
  virtual void on_job_released(JobIndex job) { (void)job; }
  /// A job was requeued: it is PENDING again (after on_job_released for its run).
  virtual void on_job_requeued(JobIndex job) { (void)job; }
  /// A pending job was cancelled (scancel, a quota): it leaves the queue.
  virtual void on_job_cancelled(JobIndex job) { (void)job; }
  /// A pending job was held, released or given a priority (the scheduler keeps job records, as slurmctld does).
  virtual void on_job_updated(JobIndex job, const JobUpdate& update) {
    (void)job;
    (void)update;
  }

  // ---- Nodes ----
  /// Node `n`'s condition changed from `before` to `after` (ClusterState already shows `after`).
  virtual void on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) {
    (void)n;
    (void)before;
    (void)after;
  }
  /// Something noticed a problem on a node.
  virtual void on_health_event(const HealthEvent& event) { (void)event; }
  /// A recovery (reset_gpus, reboot_node, send_to_repair) of node `n` ended: it is healthy but still out until
  /// resumed. It may have been powered down or deleted meanwhile (then it stays so).
  virtual void on_node_recovered(NodeIndex n) { (void)n; }
  /// A power_up_node of node `n` ended: it registered and is in service (`ok`), or it never registered and is
  /// POWERED_DOWN again (its jobs were requeued).
  virtual void on_node_booted(NodeIndex n, bool ok) {
    (void)n;
    (void)ok;
  }
  /// A power_down_node of node `n` ended: it is POWERED_DOWN.
  virtual void on_node_powered_down(NodeIndex n) { (void)n; }
  /// Node `n` was taken out of the cluster (delete_node, by any controller).
  virtual void on_node_deleted(NodeIndex n) { (void)n; }
  /// The provider reclaimed node `n` (a spot instance): its jobs were requeued and it is gone.
  virtual void on_node_reclaimed(NodeIndex n) { (void)n; }
};

}  // namespace gputwin
