#include "control/operations_controller.hpp"

#include <algorithm>

namespace gputwin {
namespace {

std::string_view action_name(ClusterOperation::Action a) {
  switch (a) {
    case ClusterOperation::Action::kAddNodes:
      return "add_nodes";
    case ClusterOperation::Action::kRemoveNodes:
      return "remove_nodes";
    case ClusterOperation::Action::kUpdateImage:
      return "update_image";
    case ClusterOperation::Action::kAttachVolume:
      return "attach_volume";
    case ClusterOperation::Action::kMaintenance:
      return "maintenance";
    case ClusterOperation::Action::kRestartWorkers:
      return "restart_workers";
    case ClusterOperation::Action::kHoldJobs:
      return "hold";
    case ClusterOperation::Action::kReleaseJobs:
      return "release";
    case ClusterOperation::Action::kSetPriority:
      return "set_priority";
  }
  return "unknown";
}

// Slurm reason of an operation's node actions ("attach_volume data").
std::string reason_of(const ClusterOperation& op) {
  return std::string(action_name(op.action)) + (op.name.empty() ? "" : " " + op.name);
}

// Timers: an operation's start (2 x op), a node's maintenance window end (2 x node + 1).
TimerId start_timer(std::size_t op) {
  return static_cast<TimerId>(2 * op);
}
TimerId window_timer(NodeIndex n) {
  return static_cast<TimerId>(2 * static_cast<std::size_t>(n) + 1);
}

}  // namespace

OperationsController::OperationsController(const std::vector<ClusterOperation>& operations, World& world)
    : operations_(operations),
      world_(world),
      pending_(world.state().node_count(), Pending::kNone),
      pending_op_(world.state().node_count(), 0) {
  const ClusterState& state = world.state();
  for (JobIndex j = 0; j < state.job_count(); ++j) job_by_id_.emplace(state.spec(j).id, j);
}

std::vector<NodeIndex> OperationsController::nodes_added_later() const {
  std::vector<NodeIndex> nodes;
  for (const ClusterOperation& op : operations_) {
    if (op.action == ClusterOperation::Action::kAddNodes) nodes.insert(nodes.end(), op.nodes.begin(), op.nodes.end());
  }
  return nodes;
}

void OperationsController::on_start() {
  for (std::size_t i = 0; i < operations_.size(); ++i)
    world_.set_timer(ControllerId::kOperations, start_timer(i),
                     std::max(world_.now(), from_seconds_f(operations_[i].time_s)));
}

void OperationsController::on_timer(TimerId timer) {
  if (timer % 2 == 0) {
    begin(timer / 2);
    return;
  }
  // A maintenance window ends: the node is back unless someone else changed it meanwhile.
  const auto n = static_cast<NodeIndex>(timer / 2);
  if (pending_[n] != Pending::kWindow) return;
  pending_[n] = Pending::kNone;
  if (world_.state().node_condition(n) != NodeCondition::kDown) return;
  world_.resume_node(n);
  record(pending_op_[n], "node_back", n, 0);
}

void OperationsController::record(std::size_t op, std::string step, std::uint32_t node, std::uint32_t killed) {
  records_.push_back({world_.now(), std::string(action_name(operations_[op].action)), std::move(step), node,
                      operations_[op].name, killed});
}

void OperationsController::expect(NodeIndex node, Pending what, std::size_t op) {
  pending_[node] = what;
  pending_op_[node] = static_cast<std::uint32_t>(op);
}

void OperationsController::begin(std::size_t i) {
  const ClusterOperation& op = operations_[i];
  using A = ClusterOperation::Action;
  const ClusterState& state = world_.state();
  const SimTime back = world_.now() + from_seconds_f(op.duration_s);
  const std::string reason = reason_of(op);
  switch (op.action) {
    case A::kAddNodes:
      record(i, "start", UINT32_MAX, 0);
      for (NodeIndex n : op.nodes) {
        if (state.node_condition(n) != NodeCondition::kPoweredDown) continue;
        expect(n, Pending::kBoot, i);
        world_.power_up_node(n, op.duration_s);
      }
      world_.expect_node_return(back);
      break;
    case A::kRemoveNodes:
      record(i, "start", UINT32_MAX, 0);
      for (NodeIndex n : op.nodes) {
        if (state.node_condition(n) == NodeCondition::kPoweredDown) {
          // Not running (a powered-down pool node): deleted at once, so no one powers it up again.
          world_.delete_node(n, reason);
          record(i, "node_removed", n, 0);
          continue;
        }
        if (state.node_condition(n) != NodeCondition::kNone) continue;
        world_.drain_node(n, reason);  // Slinky drains first and never evicts
        expect(n, Pending::kRemove, i);
        if (state.node_jobs()[n] == 0) when_idle(n);
      }
      break;
    case A::kUpdateImage:
      // Enroot squashfs on shared storage: running jobs keep theirs, new ones mount the new one; no restart.
      record(i, "start", UINT32_MAX, 0);
      break;
    case A::kHoldJobs:
    case A::kReleaseJobs:
    case A::kSetPriority:
      act_on_jobs(i);
      break;
    case A::kAttachVolume:
    case A::kRestartWorkers:
    case A::kMaintenance: {
      // Nodes at once go together (one scontrol call on a hostlist): none takes a job the others free meanwhile.
      std::vector<NodeIndex> at_once;
      for (NodeIndex n : op.nodes) {
        if (state.node_condition(n) != NodeCondition::kNone) continue;
        if (op.action != A::kMaintenance && op.rolling) {
          world_.drain_node(n, reason);
          expect(n, Pending::kRestart, i);
          if (state.node_jobs()[n] == 0) when_idle(n);
          continue;
        }
        expect(n, op.action == A::kMaintenance ? Pending::kWindow : Pending::kRestarting, i);
        at_once.push_back(n);
      }
      std::uint32_t killed = 0;
      if (!at_once.empty()) {
        if (op.action == A::kMaintenance) {
          killed = world_.down_nodes(at_once, InterruptionCause::kOperation, reason);
          for (NodeIndex n : at_once) world_.set_timer(ControllerId::kOperations, window_timer(n), back);
        } else {
          killed = world_.reboot_nodes(at_once, reason, RebootOptions{.kill_jobs = true, .duration_s = op.duration_s});
        }
      }
      record(i, "start", UINT32_MAX, killed);
      world_.expect_node_return(back);
      break;
    }
  }
}

void OperationsController::act_on_jobs(std::size_t i) {
  const ClusterOperation& op = operations_[i];
  using A = ClusterOperation::Action;
  const ClusterState& state = world_.state();
  for (std::uint64_t id : op.jobs) {
    const auto it = job_by_id_.find(id);
    // Slurm updates pending jobs only: a job not submitted yet (or not in the workload), running or ended is left.
    const bool pending =
        it != job_by_id_.end() && state.job(it->second).state == JobState::kPending && state.job(it->second).submitted;
    if (!pending) {
      records_.push_back({world_.now(), std::string(action_name(op.action)), "not_pending", UINT32_MAX,
                          "job " + std::to_string(id), 0});
      continue;
    }
    const JobIndex j = it->second;
    if (op.action == A::kHoldJobs) {
      world_.hold_job(j);
    } else if (op.action == A::kReleaseJobs) {
      world_.release_job(j);
    } else {
      world_.set_job_priority(j, op.priority);
    }
    records_.push_back(
        {world_.now(), std::string(action_name(op.action)), "done", UINT32_MAX, "job " + std::to_string(id), 0});
  }
}

void OperationsController::when_idle(NodeIndex n) {
  const std::uint32_t i = pending_op_[n];
  const ClusterOperation& op = operations_[i];
  if (pending_[n] == Pending::kRemove) {
    pending_[n] = Pending::kNone;
    world_.delete_node(n, reason_of(op));
    record(i, "node_removed", n, 0);
  } else if (pending_[n] == Pending::kRestart) {
    // Someone else took the node while it drained (the health controller sent it to repair): its own recovery
    // restarts it, not this one.
    if (world_.state().node_condition(n) != NodeCondition::kDrain) {
      pending_[n] = Pending::kNone;
      return;
    }
    pending_[n] = Pending::kRestarting;
    world_.reboot_node(n, reason_of(op), RebootOptions{.duration_s = op.duration_s});
    world_.expect_node_return(world_.now() + from_seconds_f(op.duration_s));
  }
}

void OperationsController::on_node_booted(NodeIndex n, bool ok) {
  if (pending_[n] != Pending::kBoot) return;
  pending_[n] = Pending::kNone;
  if (ok) record(pending_op_[n], "node_ready", n, 0);
}

void OperationsController::on_node_recovered(NodeIndex n) {
  if (pending_[n] != Pending::kRestarting) return;
  pending_[n] = Pending::kNone;
  if (world_.state().node_condition(n) != NodeCondition::kRebooting) return;
  world_.resume_node(n);
  record(pending_op_[n], "node_restarted", n, 0);
}

void OperationsController::on_job_released(JobIndex job) {
  for (const NodeAllocation& a : world_.state().allocation(job)) {
    const Pending p = pending_[a.node];
    if ((p == Pending::kRemove || p == Pending::kRestart) && world_.state().node_jobs()[a.node] == 0) when_idle(a.node);
  }
}

}  // namespace gputwin
