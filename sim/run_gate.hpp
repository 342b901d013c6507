// RunGate: the seam a live simulation is driven through. SimWorld asks its gate before it moves the clock to the
// next instant; the gate may hold the run there (paused, or paced to wall-clock time), move the clock forward to a
// time before that instant (so an action taken now is dated as the wall clock says), and act on the world between
// instants (an operator's drain or resume). The simulator never knows who drives it: ui/live_run implements it,
// tests may too. Without a gate (every batch run) the loop pays one null check per instant.
#pragma once

#include "engine/sim_time.hpp"

namespace gputwin {

class SimWorld;
struct RunOutcome;

/// Drives a run between instants (on the simulation's thread).
class RunGate {
 public:
  virtual ~RunGate() = default;
  /// The run is about to start; `outcome` (scenario, state, recorder, world, controllers) stays valid until the run
  /// returns (and is then moved out to the caller).
  virtual void on_run_start(const RunOutcome& outcome) = 0;
  /// Called before the world's clock moves to `next` (> world.now()). The gate may call world.advance_clock(t) for
  /// now() <= t <= next and act on the world. Returns true if it acted (the world then looks again for its next
  /// instant, which an action may have brought forward), false to go on to `next`.
  virtual bool before_instant(SimWorld& world, SimTime next) = 0;
};

}  // namespace gputwin
