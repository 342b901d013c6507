#include "control/quota_controller.hpp"

#include <unordered_map>

namespace gputwin {

namespace {
constexpr TimerId kCheck = 0;
}

QuotaController::QuotaController(const CostConfig& config, World& world) : config_(config), world_(world) {
  std::unordered_map<std::string, std::uint32_t> index;
  for (const Quota& q : config.quotas) {
    auto [it, added] = index.emplace(q.user, static_cast<std::uint32_t>(users_.size()));
    if (added) users_.push_back(q.user);
    quotas_.push_back(QuotaState{&q, it->second, false, false});
  }
  user_blocked_.assign(users_.size(), 0);
  index_ = std::move(index);
  note_jobs();
}

void QuotaController::note_jobs() {
  const ClusterState& state = world_.state();
  for (auto j = static_cast<JobIndex>(job_user_.size()); j < state.job_count(); ++j) {
    const auto it = index_.find(state.spec(j).user);
    job_user_.push_back(it != index_.end() ? static_cast<std::int32_t>(it->second) : -1);
  }
}

void QuotaController::on_start() {
  if (!quotas_.empty()) world_.set_timer(ControllerId::kQuota, kCheck, world_.now());
}

void QuotaController::on_timer(TimerId timer) {
  if (timer != kCheck) return;
  check();
  world_.set_timer(ControllerId::kQuota, kCheck, world_.now() + from_seconds_f(config_.quota_check_s));
}

PendingReason QuotaController::admit(JobIndex job) {
  if (job >= job_user_.size()) note_jobs();
  const std::int32_t u = job_user_[job];
  if (u < 0 || user_blocked_[static_cast<std::size_t>(u)] == 0) return PendingReason::kNone;
  const std::string& user = users_[static_cast<std::size_t>(u)];
  const Spend s = world_.user_spend(user);
  events_.push_back({world_.now(), user, "refuse", world_.state().spec(job).id, s.usd,
                     s.usd + s.usd_per_hour * config_.quota_check_s / 3600.0});
  return PendingReason::kAssocGrpBillingMinutes;
}

void QuotaController::check() {
  note_jobs();
  const SimTime now = world_.now();
  const ClusterState& state = world_.state();
  for (QuotaState& q : quotas_) {
    if (q.blocked) continue;
    const Spend s = world_.user_spend(users_[q.user]);
    const double projected = s.usd + s.usd_per_hour * config_.quota_check_s / 3600.0;
    const Quota& quota = *q.quota;
    if (!q.warned && s.usd >= quota.limit_usd * quota.warn_pct / 100.0) {
      q.warned = true;
      events_.push_back({now, quota.user, "warn", 0, s.usd, projected});
    }
    if (quota.action != QuotaAction::kBlockAndKill || projected <= quota.limit_usd * (1 + quota.buffer_pct / 100.0))
      continue;
    q.blocked = true;
    user_blocked_[q.user] = 1;
    events_.push_back({now, quota.user, "block", 0, s.usd, projected});
    for (JobIndex j = 0; j < state.job_count(); ++j) {
      if (job_user_[j] != static_cast<std::int32_t>(q.user)) continue;
      const JobRuntime& rt = state.job(j);
      if (rt.state == JobState::kRunning) {
        events_.push_back({now, quota.user, "cancel", state.spec(j).id, s.usd, projected});
        world_.cancel_job(j, PendingReason::kAssocGrpBillingMinutes);
      } else if (rt.state == JobState::kPending && rt.submitted) {
        events_.push_back({now, quota.user, "refuse", state.spec(j).id, s.usd, projected});
        world_.cancel_job(j, PendingReason::kAssocGrpBillingMinutes);
      }
    }
  }
}

}  // namespace gputwin
