// The World seam: what a controller may observe and do. Controllers (the scheduler, and the health, scaling, quota
// and operations controllers of control/) read ClusterState and act only through World; they never see the event
// queue or how an action is carried out. SimWorld (sim/) carries actions out with simulated mechanics; the twin's
// SlurmWorld (twin/) will carry them out through slurmrestd, and its controllers run unchanged.
//
// Every action is named after what Slurm can do and documents the call that implements it on a real cluster
// (slurmrestd v0.0.40+ and `scontrol` for 22.05's v0.0.38, which has no node update endpoint). Actions are
// idempotent: draining a drained node, or resuming a node in service, changes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "engine/sim_time.hpp"
#include "model/cluster_state.hpp"
#include "model/fault_log.hpp"

namespace gputwin {

/// The controllers a world drives. Each has its own timers (TimerId space) and is told what happens in a fixed
/// order: health, scaling, quota, operations, then the scheduler (ControlPlane).
enum class ControllerId : std::uint8_t {
  kScheduler,   ///< Job scheduling (scheduler/).
  kHealth,      ///< Node health: drain, reboot, repair, resume (control/health_controller).
  kScaling,     ///< Cloud autoscaling and Slurm power saving (control/scaling_controller).
  kQuota,       ///< Spend quotas (control/quota_controller).
  kOperations,  ///< Scheduled cluster operations (control/operations_controller).
};

/// Number of ControllerId values.
inline constexpr std::size_t kControllerCount = 5;

/// Identifies one of a controller's timers (each controller numbers its own).
using TimerId = std::uint32_t;

/// A user's spend as the world's billing sees it now.
struct Spend {
  double usd = 0;           ///< Spent since the start.
  double usd_per_hour = 0;  ///< Current burn rate.
};

/// How a node is rebooted (reboot_node).
struct RebootOptions {
  /// Reboot now, ending the jobs running there NODE_FAIL (a restart of the node's slurmd worker); otherwise the
  /// node is expected idle (drain it first).
  bool kill_jobs = false;
  /// The planned length of a restart an operation gives (SimWorld takes exactly this long instead of its reboot
  /// time; a real cluster's world waits at most this long for the node to register).
  std::optional<double> duration_s;
};

/// Actions and observations available to controllers.
class World {
 public:
  virtual ~World() = default;

  // ---- What is ----
  /// The current time.
  [[nodiscard]] virtual SimTime now() const = 0;
  /// The cluster as it is now: nodes (free resources, conditions, reasons), jobs, partitions.
  [[nodiscard]] virtual const ClusterState& state() const = 0;
  /// `user`'s spend so far and burn rate (zero without billing). Real cluster: slurmdbd usage (sshare/sreport
  /// billing TRES) times the site's prices.
  [[nodiscard]] virtual Spend user_spend(std::string_view user) const = 0;

  // ---- Time ----
  /// Calls `controller`'s on_timer(timer) at `at` (>= now), replacing any pending call of the same timer.
  virtual void set_timer(ControllerId controller, TimerId timer, SimTime at) = 0;
  /// Something may change at `at` (a --begin time, a hold release): the run must not end as idle before it.
  virtual void expect_activity(SimTime at) = 0;
  /// A node out of service is expected back at `at`: while jobs wait, the run must not end as idle before it.
  virtual void expect_node_return(SimTime at) = 0;

  // ---- Scheduling (slurmctld's own decisions; a real cluster places jobs itself) ----
  /// Starts pending job `job` on `allocation`; the world kills it at `kill_at` if it is still running then.
  virtual void start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) = 0;
  /// Sets the job's priority and pending reason as the controller computed them (for display and results).
  virtual void annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) = 0;
  /// Refuses pending job `job` at submit (slurmctld rejected it, or a quota) with `reason`; it never runs.
  /// Real cluster: DELETE /slurm/v0.0.4x/job/{id} (scancel), the reason logged.
  virtual void reject_job(JobIndex job, PendingReason reason) = 0;
  /// Preempts running job `job` for `preemptor`: it ends PREEMPTED at `at` (now + GraceTime), then is requeued
  /// (returns to PENDING once its resources are released) if `requeue`, else stays ended.
  virtual void preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) = 0;

  // ---- Jobs ----
  /// Cancels job `job`: a running one ends CANCELLED, a pending one leaves the queue with `reason`.
  /// Real cluster: DELETE /slurm/v0.0.4x/job/{id} (`scancel ID`).
  virtual void cancel_job(JobIndex job, PendingReason reason) = 0;

  /// Holds pending job `job` (priority 0, reason JobHeldAdmin) until release_job.
  /// Real cluster: POST /slurm/v0.0.4x/job/{id} {"hold": true} (`scontrol hold ID`).
  virtual void hold_job(JobIndex job) = 0;
  /// Releases a job held by hold_job: it may start again, at its recomputed priority.
  /// Real cluster: POST job/{id} {"hold": false} (`scontrol release ID`).
  virtual void release_job(JobIndex job) = 0;
  /// Sets pending job `job`'s priority to `priority` (> 0), fixed from then on (the priority calculation leaves it).
  /// Real cluster: POST job/{id} {"priority": N} (`scontrol update jobid=ID priority=N`).
  virtual void set_job_priority(JobIndex job, std::uint32_t priority) = 0;

  // ---- Nodes ----
  /// Drains node `n` (no new jobs; running ones finish) with Slurm reason `reason`.
  /// Real cluster: POST /slurm/v0.0.4x/node/{name} {"state": ["DRAIN"], "reason": R}; 22.05: `scontrol update
  /// nodename=N state=DRAIN reason=R`.
  virtual void drain_node(NodeIndex n, std::string_view reason) = 0;
  /// Sets node `n` FAIL (as DRAIN, for a node expected to fail: out for repair next).
  /// Real cluster: POST node/{name} {"state": ["FAIL"], "reason": R}; `scontrol update state=FAIL reason=R`.
  virtual void fail_node(NodeIndex n, std::string_view reason) = 0;
  /// Sets `nodes` DOWN, then Slurm ends the jobs running there NODE_FAIL and requeues those that may be (--requeue,
  /// JobRequeue), as for a node failure; all nodes go DOWN before any job ends, so none of them takes a job freed
  /// meanwhile. `cause` says what the runs are counted against (a fault of the node, an operation). Returns how many
  /// runs it ended. Real cluster: POST node/{name} {"state": ["DOWN"], "reason": R} (v0.0.42+: POST nodes for a
  /// list); `scontrol update nodename=HOSTLIST state=DOWN reason=R`.
  virtual std::uint32_t down_nodes(std::span<const NodeIndex> nodes, InterruptionCause cause,
                                   std::string_view reason) = 0;
  /// down_nodes for one node.
  std::uint32_t down_node(NodeIndex n, InterruptionCause cause, std::string_view reason) {
    return down_nodes(std::span<const NodeIndex>(&n, 1), cause, reason);
  }
  /// Returns node `n` to service (clears DRAIN, DOWN, FAIL; a node back from a recovery).
  /// Real cluster: POST node/{name} {"state": ["RESUME"]}; `scontrol update nodename=N state=RESUME`.
  virtual void resume_node(NodeIndex n) = 0;
  /// Ends the runs of every job on node `n` as a node failure would (NODE_FAIL, requeued when Slurm may), counted
  /// against `cause`. Returns how many. Real cluster: `scontrol requeue ID` for each requeueable job on the node
  /// (v0.0.45: POST job/{id}/requeue), `scancel` for the others.
  virtual std::uint32_t requeue_jobs_on(NodeIndex n, InterruptionCause cause, std::string_view reason) = 0;
  /// Reboots `nodes`: REBOOTING until each registers again, then it stays out (observed as
  /// Controller::on_node_recovered) until resume_node. With options.kill_jobs every node shows REBOOTING before the
  /// jobs running there end. Returns the runs it ended.
  /// Real cluster: `scontrol reboot ASAP nextstate=DOWN reason=R HOSTLIST` (no slurmrestd endpoint); with
  /// kill_jobs, a restart of the nodes' slurmd workers (Soperator: the worker pods).
  virtual std::uint32_t reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                                     const RebootOptions& options) = 0;
  /// reboot_nodes for one node.
  std::uint32_t reboot_node(NodeIndex n, std::string_view reason, const RebootOptions& options) {
    return reboot_nodes(std::span<const NodeIndex>(&n, 1), reason, options);
  }
  /// Resets the GPUs of drained, idle node `n` (`nvidia-smi -r` by the node's agent); the node stays as it is until
  /// the reset is done (Controller::on_node_recovered). Real cluster: not a Slurm call; the twin logs it.
  virtual void reset_gpus(NodeIndex n, std::string_view reason) = 0;
  /// Sends idle node `n` (set DOWN or FAIL first) to repair; Controller::on_node_recovered when it is repaired.
  /// Real cluster: not a Slurm call (a repair ticket); the twin logs it.
  virtual void send_to_repair(NodeIndex n, std::string_view reason) = 0;
  /// Powers node `n` up (POWERING_UP): Controller::on_node_booted when it registers or fails to within
  /// ResumeTimeout. `duration_s`: the planned cold start an operation gives (instead of the world's).
  /// Real cluster: POST node/{name} {"state": ["POWER_UP"]}; `scontrol update nodename=N state=POWER_UP`.
  virtual void power_up_node(NodeIndex n, std::optional<double> duration_s) = 0;
  /// Powers idle node `n` down (POWERING_DOWN for SuspendTimeout, then POWERED_DOWN; a cloud node is deleted):
  /// Controller::on_node_powered_down. Real cluster: POST node/{name} {"state": ["POWER_DOWN"]}.
  virtual void power_down_node(NodeIndex n) = 0;
  /// Takes node `n` out of the cluster now (POWERED_DOWN, never allocated, not billed) until power_up_node brings
  /// it in. Real cluster: DELETE /slurm/v0.0.4x/node/{name} (dynamic nodes, v0.0.39+).
  virtual void delete_node(NodeIndex n, std::string_view reason) = 0;
};

}  // namespace gputwin
