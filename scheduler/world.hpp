// The World seam: what a controller (scheduler) may observe and do. The simulator implements it with the event
// engine (SimWorld); twin mode implements it with slurmrestd. Controllers never touch the event queue.
#pragma once

#include <cstdint>
#include <span>

#include "model/cluster_state.hpp"
#include "sim/engine/sim_time.hpp"

namespace gputwin {

/// Identifies one of a controller's timers.
using TimerId = std::uint32_t;

/// Actions and observations available to controllers.
class World {
 public:
  virtual ~World() = default;
  /// The current time.
  [[nodiscard]] virtual SimTime now() const = 0;
  /// The cluster as it is now.
  [[nodiscard]] virtual const ClusterState& state() const = 0;
  /// Starts pending job `job` on `allocation`; the world kills it at `kill_at` if it is still running then.
  virtual void start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) = 0;
  /// Sets the job's priority and pending reason as the controller computed them (for display and results).
  virtual void annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) = 0;
  /// Refuses pending job `job` at submit (slurmctld rejected it) with `reason`; it never runs.
  virtual void reject_job(JobIndex job, PendingReason reason) = 0;
  /// Preempts running job `job` for `preemptor`: it ends PREEMPTED at `at` (now + GraceTime), then is requeued
  /// (returns to PENDING once its resources are released) if `requeue`, else stays ended.
  virtual void preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) = 0;
  /// Something may change at `at` (a --begin time, a hold release): the run must not end as idle before it.
  virtual void expect_activity(SimTime at) = 0;
  /// Calls the controller's on_timer(timer) at `at` (>= now), replacing any pending call of the same timer.
  virtual void set_timer(TimerId timer, SimTime at) = 0;
};

}  // namespace gputwin
