// RunRecorder: the RunObserver that keeps what the results store needs beyond the final ClusterState
// (node state history), in memory, flat.
#pragma once

#include <vector>

#include "model/run_observer.hpp"

namespace gputwin {

/// One node state change.
struct NodeEvent {
  SimTime time = 0;                    ///< When.
  NodeIndex node = 0;                  ///< Which node.
  NodeState state = NodeState::kIdle;  ///< New state.
};

/// Collects node state history during a run.
class RunRecorder final : public RunObserver {
 public:
  /// Recorder; with `node_history` false, node changes are not kept.
  explicit RunRecorder(bool node_history) : node_history_(node_history) {}
  void on_job_started(JobIndex, SimTime) override {}
  void on_job_ended(JobIndex, SimTime) override {}
  void on_node_state(NodeIndex node, NodeState state, SimTime now) override;
  /// Node state changes in time order.
  [[nodiscard]] const std::vector<NodeEvent>& node_events() const { return node_events_; }

 private:
  bool node_history_;
  std::vector<NodeEvent> node_events_;
};

}  // namespace gputwin
