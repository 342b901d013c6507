#include "control/health_controller.hpp"

namespace gputwin {

namespace {

// How much worse a recovery is (the enum lists them from none to a repair).
int severity(FaultEffect e) { return static_cast<int>(e); }

}  // namespace

std::string health_reason(const HealthEvent& event) {
  if (event.not_responding) return "Not responding";
  std::string reason;
  if (event.xid != 0) {
    reason = "xid " + std::to_string(event.xid);
    if (event.gpu != UINT32_MAX) reason += " gpu " + std::to_string(event.gpu);
  } else {
    reason = std::string(to_string(event.symptom));
  }
  reason += event.found_by_people ? " (found by people)" : " (" + std::string(to_string(event.by)) + ")";
  return reason;
}

HealthController::HealthController(const FaultsConfig& config, World& world)
    : config_(config), world_(world), nodes_(world.state().node_count()) {}

void HealthController::on_health_event(const HealthEvent& event) {
  const NodeIndex n = event.node;
  NodeCare& care = nodes_[n];
  if (care.phase != Phase::kHealthy) {
    // A further fault before the recovery: the node recovers by the worse action.
    if (severity(event.needs) > severity(care.needs)) care.needs = event.needs;
    return;
  }
  care.phase = Phase::kOut;
  care.needs = event.needs;
  care.not_responding = event.not_responding;
  care.reason = health_reason(event);
  if (!care.not_responding) {  // slurmctld set a node that stopped responding DOWN itself
    if (config_.repair.fail_state && care.needs == FaultEffect::kRepairNode) {
      world_.fail_node(n, care.reason);
    } else {
      world_.drain_node(n, care.reason);
    }
    if (config_.requeue_on_detection || event.found_by_people)
      world_.requeue_jobs_on(n, InterruptionCause::kFault, care.reason);
  }
  // An Epilog's finding is acted on once the job's release is complete (on_job_released), as the release's last step.
  if (event.by != DetectedBy::kEpilog && care.phase == Phase::kOut && world_.state().node_jobs()[n] == 0)
    start_recovery(n);
}

void HealthController::start_recovery(NodeIndex n) {
  NodeCare& care = nodes_[n];
  care.phase = Phase::kRecovering;
  switch (care.needs) {
    case FaultEffect::kRebootNode:
      world_.reboot_node(n, care.reason, RebootOptions{});
      break;
    case FaultEffect::kRepairNode:
      if (config_.repair.fail_state) {
        world_.fail_node(n, care.reason);
      } else {
        world_.down_node(n, InterruptionCause::kFault, care.reason);
      }
      world_.send_to_repair(n, care.reason);
      break;
    default:
      world_.reset_gpus(n, care.reason);
      break;
  }
}

void HealthController::on_job_released(JobIndex job) {
  for (const NodeAllocation& a : world_.state().allocation(job)) {
    if (nodes_[a.node].phase == Phase::kOut && world_.state().node_jobs()[a.node] == 0) start_recovery(a.node);
  }
}

void HealthController::on_node_recovered(NodeIndex n) {
  NodeCare& care = nodes_[n];
  if (care.phase != Phase::kRecovering) return;
  const NodeCondition c = world_.state().node_condition(n);
  if (c != NodeCondition::kDrain && c != NodeCondition::kDown && c != NodeCondition::kRebooting &&
      c != NodeCondition::kFail) {
    care = NodeCare{};  // powered down or deleted meanwhile: it stays so
    return;
  }
  // ReturnToService=0: a node that went DOWN for not responding registers again but stays DOWN until an admin
  // resumes it. A repair includes the admin's resume.
  if (care.not_responding && config_.return_to_service == 0 && care.needs != FaultEffect::kRepairNode &&
      config_.repair.admin_resume_s > 0) {
    care.phase = Phase::kAwaitingAdmin;
    world_.down_node(n, InterruptionCause::kFault, "Not responding");
    const SimTime back = world_.now() + from_seconds_f(config_.repair.admin_resume_s);
    world_.set_timer(ControllerId::kHealth, n, back);
    world_.expect_node_return(back);
    return;
  }
  care = NodeCare{};
  world_.resume_node(n);
}

void HealthController::on_timer(TimerId timer) {
  const auto n = static_cast<NodeIndex>(timer);
  if (nodes_[n].phase != Phase::kAwaitingAdmin) return;
  nodes_[n] = NodeCare{};
  world_.resume_node(n);
}

void HealthController::on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) {
  (void)before;
  // A node powered down or deleted while it waits takes its fault with it.
  if (after != NodeCondition::kPoweredDown) return;
  const Phase phase = nodes_[n].phase;
  if (phase == Phase::kOut || phase == Phase::kAwaitingAdmin) nodes_[n] = NodeCare{};
}

}  // namespace gputwin
