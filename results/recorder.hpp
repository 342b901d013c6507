// RunRecorder: the RunObserver that keeps what the results store needs beyond the final ClusterState
// (node state history), in memory, flat.
#pragma once

#include <vector>

#include "model/run_observer.hpp"
#include "model/vector_room.hpp"

namespace gputwin {

/// One node state change, or the same change of consecutive nodes told one after the other (a job's start or end
/// on a block of nodes).
struct NodeEvent {
  SimTime time = 0;                    ///< When.
  NodeIndex node = 0;                  ///< Which node (the first of them).
  NodeState state = NodeState::kIdle;  ///< New state.
  std::uint32_t count = 1;             ///< Nodes node .. node + count - 1, changed in this order.
};

/// One change of a pending job's reason.
struct ReasonEvent {
  SimTime time = 0;                             ///< When.
  JobIndex job = 0;                             ///< Which job.
  PendingReason reason = PendingReason::kNone;  ///< New reason.
};

/// One job's end (a requeued job ends once per run).
struct JobEnd {
  SimTime time = 0;  ///< When.
  JobIndex job = 0;  ///< Which job.
};

/// One preemption.
struct PreemptionEvent {
  SimTime time = 0;        ///< When the preemption was decided.
  JobIndex job = 0;        ///< The preempted job.
  JobIndex preemptor = 0;  ///< The job it made room for.
  SimTime end = 0;         ///< When the preempted job ends (time + GraceTime at most).
  bool requeue = false;    ///< Requeued (REQUEUE) or not (CANCEL).
};

/// Collects node state history and pending-reason history during a run.
class RunRecorder final : public RunObserver {
 public:
  /// Recorder; with `node_history` false, node changes are not kept.
  RunRecorder(bool node_history, bool reason_history) : node_history_(node_history), reason_history_(reason_history) {}
  /// Makes this a copy of `other`, reusing this recorder's memory: each history keeps room for as much as `other`'s
  /// has room for, so that the next copy, a little longer, still fits (model/vector_room.hpp).
  void assign_copy(const RunRecorder& other) {
    keep_room_for(node_events_, other.node_events_);
    keep_room_for(reason_events_, other.reason_events_);
    keep_room_for(preemptions_, other.preemptions_);
    keep_room_for(job_ends_, other.job_ends_);
    *this = other;
  }
  /// Keeps job ends from now on (job_ends(); a ResultsStream reads them).
  void keep_job_ends() { job_history_ = true; }
  /// Also tells `observer` (a live view) everything it hears; null for none. Not owned.
  void forward_to(RunObserver* observer) { forward_ = observer; }
  void on_job_started(JobIndex job, SimTime now) override {
    if (forward_ != nullptr) forward_->on_job_started(job, now);
  }
  void on_job_ended(JobIndex job, SimTime now) override {
    if (job_history_) job_ends_.push_back(JobEnd{now, job});
    if (forward_ != nullptr) forward_->on_job_ended(job, now);
  }
  void on_node_state(NodeIndex node, NodeState state, SimTime now) override;
  void on_job_reason(JobIndex job, PendingReason reason, SimTime now) override;
  void on_job_preempted(JobIndex job, JobIndex preemptor, SimTime at, bool requeue, SimTime now) override {
    preemptions_.push_back(PreemptionEvent{now, job, preemptor, at, requeue});
    if (forward_ != nullptr) forward_->on_job_preempted(job, preemptor, at, requeue, now);
  }
  /// Preemptions in time order.
  [[nodiscard]] const std::vector<PreemptionEvent>& preemptions() const { return preemptions_; }
  /// Node state changes in time order, consecutive nodes changed alike one after the other merged into one.
  [[nodiscard]] const std::vector<NodeEvent>& node_events() const { return node_events_; }
  /// Job ends in time order, from keep_job_ends() on (a ResultsStream writes the jobs as they settle).
  [[nodiscard]] const std::vector<JobEnd>& job_ends() const { return job_ends_; }
  /// Pending-reason changes in time order.
  [[nodiscard]] const std::vector<ReasonEvent>& reason_events() const { return reason_events_; }

 private:
  bool node_history_;
  bool reason_history_;
  bool job_history_ = false;
  RunObserver* forward_ = nullptr;
  std::vector<NodeEvent> node_events_;
  std::vector<ReasonEvent> reason_events_;
  std::vector<PreemptionEvent> preemptions_;
  std::vector<JobEnd> job_ends_;
};

}  // namespace gputwin
