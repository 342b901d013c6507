// What a run reports as it goes: job starts and ends, node state changes. The results recorder and, later,
// live views implement RunObserver; worlds call it. Also the node conditions (DRAIN, DOWN, REBOOT) behind the states.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/cluster_state.hpp"
#include "engine/sim_time.hpp"

namespace gputwin {

/// Node states as sinfo shows them (derived, CPU-based as in node_info.c:_set_node_mixed_op), with the DRAIN,
/// DOWN and REBOOT flags of the node lifecycle.
enum class NodeState : std::uint8_t {
  kIdle,          ///< IDLE.
  kMixed,         ///< MIXED: some CPUs allocated.
  kAllocated,     ///< ALLOCATED: every CPU allocated.
  kDraining,      ///< DRAINING: drained, jobs still running.
  kDrained,       ///< DRAINED: drained and idle (a GPU reset runs in this state).
  kDown,          ///< DOWN: not responding, or out for repair.
  kRebooting,     ///< REBOOTING (REBOOT_ISSUED).
  kPoweredDown,   ///< POWERED_DOWN (sinfo idle~): a cloud node that does not exist now.
  kPoweringUp,    ///< POWERING_UP (idle#): a cloud node in its cold start.
  kPoweringDown,  ///< POWERING_DOWN (idle%): a cloud node being removed.
  kFailing,       ///< FAILING: set FAIL (expected to fail, out for repair next), jobs still running.
  kFail,          ///< FAIL: set FAIL and idle.
};

/// Slurm's name of a node state.
std::string_view node_state_name(NodeState state);

/// Receives what happens in a run (the results recorder implements it).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// A job started.
  virtual void on_job_started(JobIndex job, SimTime now) = 0;
  /// A job ended (state in ClusterState).
  virtual void on_job_ended(JobIndex job, SimTime now) = 0;
  /// A node changed state.
  virtual void on_node_state(NodeIndex node, NodeState state, SimTime now) = 0;
  /// A running job was preempted by `preemptor` (it ends at `at`; requeued or not).
  virtual void on_job_preempted(JobIndex job, JobIndex preemptor, SimTime at, bool requeue, SimTime now) = 0;
  /// A pending job's reason changed (or it was rejected at submit with this reason).
  virtual void on_job_reason(JobIndex job, PendingReason reason, SimTime now) = 0;
};

}  // namespace gputwin
