#include "results/recorder.hpp"

namespace gputwin {

void RunRecorder::on_node_state(NodeIndex node, NodeState state, SimTime now) {
  if (node_history_) {
    NodeEvent* last = node_events_.empty() ? nullptr : &node_events_.back();
    if (last != nullptr && last->time == now && last->state == state && last->node + last->count == node)
      ++last->count;
    else
      node_events_.push_back(NodeEvent{now, node, state, 1});
  }
  if (forward_ != nullptr) forward_->on_node_state(node, state, now);
}

void RunRecorder::on_job_reason(JobIndex job, PendingReason reason, SimTime now) {
  if (reason_history_) reason_events_.push_back(ReasonEvent{now, job, reason});
  if (forward_ != nullptr) forward_->on_job_reason(job, reason, now);
}

}  // namespace gputwin
