// The seam between the simulator and placement-aware job speed: a model says how fast a starting job runs on
// the nodes it got, relative to the reference placement its trace run time was measured at, and which running
// jobs change speed when others start or stop (contention on shared links). SimWorld turns speeds into end
// times: a job's remaining work is its run time at reference speed, drained at its current speed.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "model/cluster_state.hpp"

namespace gputwin {

/// How fast jobs run where they are placed.
class JobSpeedModel {
 public:
  virtual ~JobSpeedModel() = default;
  /// Job `job` starts on `allocation`: its speed (1 = as fast as at the reference placement; > 0).
  virtual double start(JobIndex job, std::span<const NodeAllocation> allocation) = 0;
  /// Job `job` stops running (ended, killed or preempted).
  virtual void stop(JobIndex job) = 0;
  /// Appends the running jobs whose speed changed since the last call, with their new speeds.
  virtual void take_changes(std::vector<std::pair<JobIndex, double>>& out) = 0;
};

}  // namespace gputwin
