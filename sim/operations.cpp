#include "sim/operations.hpp"

#include "sim/sim_world.hpp"

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
  }
  return "unknown";
}

}  // namespace

ClusterOperations::ClusterOperations(const std::vector<ClusterOperation>& operations, const ClusterState& state)
    : operations_(operations),
      state_(state),
      pending_(state.node_count(), Pending::kNone),
      pending_op_(state.node_count(), 0) {}

void ClusterOperations::start(SimWorld& world) {
  for (std::size_t i = 0; i < operations_.size(); ++i) {
    const ClusterOperation& op = operations_[i];
    if (op.action == ClusterOperation::Action::kAddNodes) {
      for (NodeIndex n : op.nodes) world.set_node_condition(n, NodeCondition::kPoweredDown);  // not there yet
    }
    world.push_operation(std::max(world.now(), from_seconds_f(op.time_s)), target(kStart, i), 0);
  }
}

void ClusterOperations::record(SimWorld& world, std::size_t op, std::string step, std::uint32_t node,
                               std::uint32_t killed) {
  records_.push_back({world.now(), std::string(action_name(operations_[op].action)), std::move(step), node,
                      operations_[op].name, killed});
}

void ClusterOperations::begin(SimWorld& world, std::size_t i) {
  const ClusterOperation& op = operations_[i];
  using A = ClusterOperation::Action;
  const SimTime back = world.now() + from_seconds_f(op.duration_s);
  switch (op.action) {
    case A::kAddNodes:
      record(world, i, "start", UINT32_MAX, 0);
      for (NodeIndex n : op.nodes) {
        if (world.node_condition(n) != NodeCondition::kPoweredDown) continue;
        world.set_node_condition(n, NodeCondition::kPoweringUp);
        world.push_operation(back, target(kNodeBack, n), static_cast<std::uint32_t>(i));
      }
      world.note_node_return(back);
      break;
    case A::kRemoveNodes:
      record(world, i, "start", UINT32_MAX, 0);
      for (NodeIndex n : op.nodes) {
        if (world.node_condition(n) != NodeCondition::kNone) continue;
        world.set_node_condition(n, NodeCondition::kDrain);  // Slinky drains first and never evicts
        pending_[n] = Pending::kRemove;
        pending_op_[n] = static_cast<std::uint32_t>(i);
        if (state_.node_jobs()[n] == 0) when_idle(world, n);
      }
      break;
    case A::kUpdateImage:
      // Enroot squashfs on shared storage: running jobs keep theirs, new ones mount the new one; no restart.
      record(world, i, "start", UINT32_MAX, 0);
      break;
    case A::kAttachVolume:
    case A::kRestartWorkers:
    case A::kMaintenance: {
      std::uint32_t killed = 0;
      for (NodeIndex n : op.nodes) {
        if (world.node_condition(n) != NodeCondition::kNone) continue;
        if (op.action != A::kMaintenance && op.rolling) {
          world.set_node_condition(n, NodeCondition::kDrain);
          pending_[n] = Pending::kRestart;
          pending_op_[n] = static_cast<std::uint32_t>(i);
          if (state_.node_jobs()[n] == 0) when_idle(world, n);
          continue;
        }
        killed += world.fail_jobs_on(n, InterruptionCause::kOperation);
        world.set_node_condition(n, op.action == A::kMaintenance ? NodeCondition::kDown : NodeCondition::kRebooting);
        world.push_operation(back, target(kNodeBack, n), static_cast<std::uint32_t>(i));
      }
      record(world, i, "start", UINT32_MAX, killed);
      world.note_node_return(back);
      break;
    }
  }
}

void ClusterOperations::when_idle(SimWorld& world, NodeIndex n) {
  const std::uint32_t i = pending_op_[n];
  if (pending_[n] == Pending::kRemove) {
    world.set_node_condition(n, NodeCondition::kPoweredDown);
    record(world, i, "node_removed", n, 0);
  } else if (pending_[n] == Pending::kRestart) {
    world.set_node_condition(n, NodeCondition::kRebooting);
    const SimTime back = world.now() + from_seconds_f(operations_[i].duration_s);
    world.push_operation(back, target(kNodeBack, n), i);
    world.note_node_return(back);
  }
  pending_[n] = Pending::kNone;
}

void ClusterOperations::on_event(SimWorld& world, std::uint64_t tgt, std::uint32_t generation) {
  const auto kind = static_cast<Kind>(tgt >> 56);
  const std::uint64_t index = tgt & ((1ULL << 56) - 1);
  switch (kind) {
    case kStart:
      begin(world, index);
      break;
    case kNodeBack: {
      const auto n = static_cast<NodeIndex>(index);
      const NodeCondition c = world.node_condition(n);
      if (c != NodeCondition::kPoweringUp && c != NodeCondition::kRebooting && c != NodeCondition::kDown) return;
      world.set_node_condition(n, NodeCondition::kNone);
      const ClusterOperation::Action a = operations_[generation].action;
      record(world, generation,
             a == ClusterOperation::Action::kAddNodes      ? "node_ready"
             : a == ClusterOperation::Action::kMaintenance ? "node_back"
                                                           : "node_restarted",
             n, 0);
      break;
    }
  }
}

void ClusterOperations::on_job_released(SimWorld& world, JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) {
    if (pending_[a.node] != Pending::kNone && state_.node_jobs()[a.node] == 0) when_idle(world, a.node);
  }
}

}  // namespace gputwin
