#include "results/recorder.hpp"

namespace gputwin {

void RunRecorder::on_node_state(NodeIndex node, NodeState state, SimTime now) {
  if (node_history_) node_events_.push_back(NodeEvent{now, node, state});
}

}  // namespace gputwin
