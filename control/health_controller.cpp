#include "control/health_controller.hpp"

#include <algorithm>
#include <cmath>

#include "faults/xid_catalogue.hpp"

namespace gputwin {

namespace {

FaultEffect worse(FaultEffect a, FaultEffect b) {
  return severity(a) >= severity(b) ? a : b;
}

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
    : config_(config),
      world_(world),
      nodes_(world.state().node_count()),
      last_xid_(world.state().node_count(), 0),
      last_xid_at_(world.state().node_count(), kNever) {
  const HealthPolicy& h = config.health;
  const auto node_count = static_cast<std::uint32_t>(world.state().node_count());
  limit_ = h.max_nodes_out;
  if (h.max_nodes_out_pct > 0) {
    // At least one node, or a small cluster's percentage would hold every fault in service.
    const auto by_pct =
        std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::floor(h.max_nodes_out_pct * node_count / 100.0)));
    limit_ = limit_ == 0 ? by_pct : std::min(limit_, by_pct);
  }
  if (h.reboots_before_repair > 0) recoveries_.resize(node_count);
}

std::vector<NodeIndex> HealthController::deferred() const {
  std::vector<NodeIndex> nodes;
  for (NodeIndex n : deferred_) {
    if (nodes_[n].phase == Phase::kDeferred) nodes.push_back(n);
  }
  return nodes;
}

FaultEffect HealthController::escalate_recurring_xid(const HealthEvent& event) {
  if (event.xid == 0) return event.needs;
  const NodeIndex n = event.node;
  const bool recurs = config_.health.xid_recurrence_s > 0 && last_xid_[n] == event.xid && last_xid_at_[n] != kNever &&
                      world_.now() - last_xid_at_[n] <= from_seconds_f(config_.health.xid_recurrence_s);
  last_xid_[n] = event.xid;
  last_xid_at_[n] = world_.now();
  if (!recurs) return event.needs;
  const XidInfo* info = find_xid(event.xid);
  if (info == nullptr || severity(info->escalated_effect) <= severity(event.needs)) return event.needs;
  ++escalations_;
  return info->escalated_effect;
}

void HealthController::on_health_event(const HealthEvent& event) {
  const NodeIndex n = event.node;
  NodeCare& care = nodes_[n];
  if (care.phase != Phase::kHealthy) {
    // A further fault before the recovery: the node recovers by the worse action.
    care.needs = worse(care.needs, event.needs);
    care.fault_reported = true;
    return;
  }
  care.needs = escalate_recurring_xid(event);
  care.not_responding = event.not_responding;
  care.found_by_people = event.found_by_people;
  care.reason = health_reason(event);
  // slurmctld set a node that stopped responding DOWN itself: it is out whatever the limit says.
  if (!care.not_responding && limit_ > 0 && out_ >= limit_) {
    care.phase = Phase::kDeferred;
    deferred_.push_back(n);
    ++deferrals_;
    return;
  }
  // An Epilog's finding is acted on once the job's release is complete (on_job_released), as the release's last step.
  take_out(n, event.by == DetectedBy::kEpilog);
}

void HealthController::take_out(NodeIndex n, bool from_epilog) {
  NodeCare& care = nodes_[n];
  care.phase = Phase::kOut;
  ++out_;
  if (!care.not_responding) {
    if (config_.repair.fail_state && care.needs == FaultEffect::kRepairNode) {
      world_.fail_node(n, care.reason);
    } else {
      world_.drain_node(n, care.reason);
    }
    // An operator's reboot lets the running jobs finish (reboot ASAP), whatever detection would do.
    if (!care.by_operator && (config_.requeue_on_detection || care.found_by_people))
      world_.requeue_jobs_on(n, InterruptionCause::kFault, care.reason);
  }
  if (!from_epilog && care.phase == Phase::kOut && world_.state().node_jobs()[n] == 0) start_recovery(n);
}

void HealthController::start_recovery(NodeIndex n) {
  NodeCare& care = nodes_[n];
  care.phase = Phase::kRecovering;
  const HealthPolicy& policy = config_.health;
  if (policy.reboots_before_repair > 0 && !care.by_operator &&
      (care.needs == FaultEffect::kResetGpu || care.needs == FaultEffect::kRebootNode)) {
    // A lemon: its N-th reset or reboot within the window sends it to repair instead.
    std::vector<SimTime>& past = recoveries_[n];
    const SimTime since = world_.now() - from_seconds_f(policy.reboot_window_s);
    std::erase_if(past, [since](SimTime t) { return t < since; });
    if (past.size() + 1 >= policy.reboots_before_repair) {
      care.needs = FaultEffect::kRepairNode;
      care.reason += " (repeated reboots)";
      past.clear();
      ++escalations_;
    } else {
      past.push_back(world_.now());
    }
  }
  switch (care.needs) {
    case FaultEffect::kRebootNode: {
      // A fault's reboot takes the time the fault mechanics give it; an operator's of a node no fault was reported
      // on, the scenario's reboot time (the world's own default would ignore /faults/repair).
      RebootOptions options;
      if (care.by_operator && !care.fault_reported) options.duration_s = config_.repair.reboot_s;
      world_.reboot_node(n, care.reason, options);
      break;
    }
    case FaultEffect::kRepairNode: {
      // Out for repair: FAIL (taken out as such already, unless it needed less then) or DOWN.
      const NodeCondition now = world_.state().node_condition(n);
      if (config_.repair.fail_state) {
        if (now != NodeCondition::kFail) world_.fail_node(n, care.reason);
      } else if (now != NodeCondition::kDown) {
        world_.down_node(n, InterruptionCause::kFault, care.reason);
      }
      world_.send_to_repair(n, care.reason);
      break;
    }
    default:
      world_.reset_gpus(n, care.reason);
      break;
  }
}

bool HealthController::may_reboot(NodeIndex n) const {
  const NodeCondition c = world_.state().node_condition(n);
  return nodes_[n].phase == Phase::kHealthy && (c == NodeCondition::kNone || c == NodeCondition::kDrain);
}

bool HealthController::operator_reboot(NodeIndex n, std::string reason) {
  if (!may_reboot(n)) return false;
  NodeCare& care = nodes_[n];
  care = NodeCare{};
  care.needs = FaultEffect::kRebootNode;
  care.by_operator = true;
  care.reason = std::move(reason);
  take_out(n, false);
  return true;
}

void HealthController::release(NodeIndex n) {
  const Phase phase = nodes_[n].phase;
  nodes_[n] = NodeCare{};
  if (phase == Phase::kHealthy || phase == Phase::kDeferred) return;
  --out_;
  // Room under the limit: the longest-waiting deferred node goes out now.
  while (!deferred_.empty() && (limit_ == 0 || out_ < limit_)) {
    const NodeIndex next = deferred_.front();
    deferred_.pop_front();
    if (nodes_[next].phase == Phase::kDeferred) take_out(next, false);
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
  if (!held_out(world_.state().node_condition(n))) {
    release(n);  // powered down or deleted meanwhile: it stays so
    return;
  }
  // ReturnToService=0: a node that went DOWN for not responding registers again but stays DOWN until an admin
  // resumes it. A repair includes the admin's resume.
  // admin_resume_s < 0: as long as people take to notice a node (undetected_found_s), as the scenario loader reads it.
  const double admin_s =
      config_.repair.admin_resume_s < 0 ? config_.repair.undetected_found_s : config_.repair.admin_resume_s;
  if (care.not_responding && config_.return_to_service == 0 && care.needs != FaultEffect::kRepairNode && admin_s > 0) {
    care.phase = Phase::kAwaitingAdmin;
    world_.down_node(n, InterruptionCause::kFault, "Not responding");
    const SimTime back = world_.now() + from_seconds_f(admin_s);
    world_.set_timer(ControllerId::kHealth, n, back);
    world_.expect_node_return(back);
    return;
  }
  world_.resume_node(n);
  release(n);
}

void HealthController::on_timer(TimerId timer) {
  const auto n = static_cast<NodeIndex>(timer);
  if (nodes_[n].phase != Phase::kAwaitingAdmin) return;
  world_.resume_node(n);
  release(n);
}

void HealthController::on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) {
  (void)before;
  // A node powered down or deleted while it waits takes its fault with it.
  if (after != NodeCondition::kPoweredDown) return;
  const Phase phase = nodes_[n].phase;
  if (phase == Phase::kDeferred || phase == Phase::kOut || phase == Phase::kAwaitingAdmin) release(n);
}

}  // namespace gputwin
