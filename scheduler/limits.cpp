#include "scheduler/limits.hpp"

namespace gputwin {
namespace {

using R = PendingReason;

/// Reasons for one kind of TRES limit, in Slurm's TRES order (cpu, mem, node, gres/gpu).
struct TresReasons {
  R cpu, mem, node, gpu;
};
constexpr TresReasons kQosGrp{R::kQosGrpCpu, R::kQosGrpMem, R::kQosGrpNode, R::kQosGrpGres};
constexpr TresReasons kQosPerJob{R::kQosMaxCpuPerJob, R::kQosMaxMemPerJob, R::kQosMaxNodePerJob, R::kQosMaxGresPerJob};
constexpr TresReasons kQosPerUser{R::kQosMaxCpuPerUser, R::kQosMaxMemPerUser, R::kQosMaxNodePerUser,
                                  R::kQosMaxGresPerUser};
constexpr TresReasons kAssocGrp{R::kAssocGrpCpu, R::kAssocGrpMem, R::kAssocGrpNode, R::kAssocGrpGres};
constexpr TresReasons kAssocPerJob{R::kAssocMaxCpuPerJob, R::kAssocMaxMemPerJob, R::kAssocMaxNodePerJob,
                                   R::kAssocMaxGresPerJob};

/// The reason for the first TRES where base + job exceeds the limit, or kNone.
R tres_over(const TresLimits& limit, const TresCount& base, const TresCount& job, const TresReasons& reasons) {
  auto over = [](std::int64_t lim, std::int64_t used, std::int64_t add) { return lim != kNoLimit && used + add > lim; };
  if (over(limit.cpu, base.cpu, job.cpu)) return reasons.cpu;
  if (over(limit.mem_mb, base.mem_mb, job.mem_mb)) return reasons.mem;
  if (over(limit.node, base.node, job.node)) return reasons.node;
  if (over(limit.gpu, base.gpu, job.gpu)) return reasons.gpu;
  return R::kNone;
}

bool count_over(std::int64_t limit, std::int64_t used) {
  return limit != kNoLimit && used + 1 > limit;
}

constexpr TresCount kZero{};

}  // namespace

LimitTracker::LimitTracker(const AssociationTree& tree, const std::vector<QosConfig>& qos)
    : tree_(tree), qos_(qos), qos_usage_(qos.size()) {}

void LimitTracker::set_assoc_limits(AssocId id, const Limits& limits) {
  if (assoc_limits_.size() <= id) assoc_limits_.resize(id + 1);
  assoc_limits_[id] = limits;
}

LimitTracker::MaxLimits LimitTracker::effective_max(AssocId id) const {
  MaxLimits m;
  for (AssocId a = id;; a = tree_.parent(a)) {
    if (a < assoc_limits_.size()) {
      const Limits& l = assoc_limits_[a];
      if (m.max_jobs == kNoLimit) m.max_jobs = l.max_jobs_per_user;
      if (m.max_submit == kNoLimit) m.max_submit = l.max_submit_per_user;
      if (m.max_wall_s == kNoLimit) m.max_wall_s = l.max_wall_s;
      TresLimits& t = m.max_tres_per_job;
      const TresLimits& s = l.max_tres_per_job;
      if (t.cpu == kNoLimit) t.cpu = s.cpu;
      if (t.mem_mb == kNoLimit) t.mem_mb = s.mem_mb;
      if (t.node == kNoLimit) t.node = s.node;
      if (t.gpu == kNoLimit) t.gpu = s.gpu;
    }
    if (a == 0) break;
  }
  return m;
}

LimitTracker::Usage& LimitTracker::qos_user(std::uint32_t qos, std::uint32_t user) {
  return qos_user_usage_[(static_cast<std::uint64_t>(qos) << 32) | user];
}

const LimitTracker::Usage* LimitTracker::qos_user(std::uint32_t qos, std::uint32_t user) const {
  const auto it = qos_user_usage_.find((static_cast<std::uint64_t>(qos) << 32) | user);
  return it == qos_user_usage_.end() ? nullptr : &it->second;
}

PendingReason LimitTracker::check_submit(const LimitSubject& job, const TresCount& request) const {
  static const Usage kEmpty;
  bool deny = false;
  for (std::int64_t q : {static_cast<std::int64_t>(job.part_qos), static_cast<std::int64_t>(job.qos)}) {
    if (q < 0) continue;
    const QosConfig& qos = qos_[static_cast<std::size_t>(q)];
    const Usage* per_user = qos_user(static_cast<std::uint32_t>(q), job.user);
    if (count_over(qos.limits.max_submit_per_user, (per_user ? *per_user : kEmpty).submitted))
      return R::kQosMaxSubmitJobsPerUser;
    if (count_over(qos.limits.grp_submit_jobs, qos_usage_[static_cast<std::size_t>(q)].submitted))
      return R::kQosGrpSubmitJobs;
    deny = deny || qos.deny_on_limit;
  }
  const MaxLimits max = effective_max(job.assoc);
  const Usage& own = job.assoc < assoc_usage_.size() ? assoc_usage_[job.assoc] : kEmpty;
  if (count_over(max.max_submit, own.submitted)) return R::kAssocMaxSubmitJobs;
  for (AssocId a = job.assoc;; a = tree_.parent(a)) {
    const Usage& u = a < assoc_usage_.size() ? assoc_usage_[a] : kEmpty;
    if (a < assoc_limits_.size() && count_over(assoc_limits_[a].grp_submit_jobs, u.submitted))
      return R::kAssocGrpSubmitJobs;
    if (a == 0) break;
  }
  if (!deny) return R::kNone;
  // DenyOnLimit: the Max limits a job can never satisfy reject it instead of leaving it pending forever.
  if (const R r = check_pre_select(job); r == R::kQosMaxWallPerJob || r == R::kAssocMaxWallPerJob) return r;
  for (std::int64_t q : {static_cast<std::int64_t>(job.part_qos), static_cast<std::int64_t>(job.qos)}) {
    if (q < 0) continue;
    const Limits& l = qos_[static_cast<std::size_t>(q)].limits;
    if (const R r = tres_over(l.max_tres_per_job, kZero, request, kQosPerJob); r != R::kNone) return r;
    if (const R r = tres_over(l.max_tres_per_user, kZero, request, kQosPerUser); r != R::kNone) return r;
    if (const R r = tres_over(l.grp_tres, kZero, request, kQosGrp); r != R::kNone) return r;
  }
  return tres_over(max.max_tres_per_job, kZero, request, kAssocPerJob);
}

PendingReason LimitTracker::check_pre_select(const LimitSubject& job) const {
  static const Usage kEmpty;
  for (std::int64_t q : {static_cast<std::int64_t>(job.part_qos), static_cast<std::int64_t>(job.qos)}) {
    if (q < 0) continue;
    const Limits& l = qos_[static_cast<std::size_t>(q)].limits;
    if (l.max_wall_s != kNoLimit && job.time_limit_s > l.max_wall_s) return R::kQosMaxWallPerJob;
    if (count_over(l.grp_jobs, qos_usage_[static_cast<std::size_t>(q)].running)) return R::kQosGrpJobs;
    const Usage* per_user = qos_user(static_cast<std::uint32_t>(q), job.user);
    if (count_over(l.max_jobs_per_user, (per_user ? *per_user : kEmpty).running)) return R::kQosMaxJobsPerUser;
  }
  const MaxLimits max = effective_max(job.assoc);
  if (max.max_wall_s != kNoLimit && job.time_limit_s > max.max_wall_s) return R::kAssocMaxWallPerJob;
  const Usage& own = job.assoc < assoc_usage_.size() ? assoc_usage_[job.assoc] : kEmpty;
  if (count_over(max.max_jobs, own.running)) return R::kAssocMaxJobs;
  for (AssocId a = job.assoc;; a = tree_.parent(a)) {
    const Usage& u = a < assoc_usage_.size() ? assoc_usage_[a] : kEmpty;
    if (a < assoc_limits_.size() && count_over(assoc_limits_[a].grp_jobs, u.running)) return R::kAssocGrpJobs;
    if (a == 0) break;
  }
  return R::kNone;
}

PendingReason LimitTracker::check_post_select(const LimitSubject& job, const TresCount& selected) const {
  static const Usage kEmpty;
  for (std::int64_t q : {static_cast<std::int64_t>(job.part_qos), static_cast<std::int64_t>(job.qos)}) {
    if (q < 0) continue;
    const Limits& l = qos_[static_cast<std::size_t>(q)].limits;
    if (const R r = tres_over(l.grp_tres, qos_usage_[static_cast<std::size_t>(q)].tres, selected, kQosGrp);
        r != R::kNone)
      return r;
    if (const R r = tres_over(l.max_tres_per_job, kZero, selected, kQosPerJob); r != R::kNone) return r;
    const Usage* per_user = qos_user(static_cast<std::uint32_t>(q), job.user);
    if (const R r = tres_over(l.max_tres_per_user, (per_user ? *per_user : kEmpty).tres, selected, kQosPerUser);
        r != R::kNone)
      return r;
  }
  const MaxLimits max = effective_max(job.assoc);
  if (const R r = tres_over(max.max_tres_per_job, kZero, selected, kAssocPerJob); r != R::kNone) return r;
  for (AssocId a = job.assoc;; a = tree_.parent(a)) {
    const Usage& u = a < assoc_usage_.size() ? assoc_usage_[a] : kEmpty;
    if (a < assoc_limits_.size()) {
      if (const R r = tres_over(assoc_limits_[a].grp_tres, u.tres, selected, kAssocGrp); r != R::kNone) return r;
    }
    if (a == 0) break;
  }
  return R::kNone;
}

void LimitTracker::apply(const LimitSubject& job, const TresCount& alloc, int running_sign, int submitted_sign) {
  auto update = [&](Usage& u) {
    u.running += running_sign;
    u.submitted += submitted_sign;
    u.tres.cpu += running_sign * alloc.cpu;
    u.tres.mem_mb += running_sign * alloc.mem_mb;
    u.tres.node += running_sign * alloc.node;
    u.tres.gpu += running_sign * alloc.gpu;
  };
  if (job.part_qos >= 0) {
    update(qos_usage_[static_cast<std::size_t>(job.part_qos)]);
    update(qos_user(static_cast<std::uint32_t>(job.part_qos), job.user));
  }
  if (static_cast<std::int64_t>(job.qos) != job.part_qos) {  // the same QOS twice counts once
    update(qos_usage_[job.qos]);
    update(qos_user(job.qos, job.user));
  }
  if (assoc_usage_.size() < tree_.size()) assoc_usage_.resize(tree_.size());
  for (AssocId a = job.assoc;; a = tree_.parent(a)) {
    update(assoc_usage_[a]);
    if (a == 0) break;
  }
}

void LimitTracker::add_submitted(const LimitSubject& job) {
  apply(job, kZero, 0, +1);
}
void LimitTracker::add_running(const LimitSubject& job, const TresCount& alloc) {
  apply(job, alloc, +1, 0);
}
void LimitTracker::remove_running(const LimitSubject& job, const TresCount& alloc) {
  apply(job, alloc, -1, -1);
}
void LimitTracker::remove_submitted(const LimitSubject& job) {
  apply(job, kZero, 0, -1);
}

}  // namespace gputwin
