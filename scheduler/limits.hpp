// Association and QOS limits as acct_policy.c enforces them with AccountingStorageEnforce=limits: counters per
// association (and its ancestors), per QOS and per (QOS, user); checks at submit, before node selection (job
// counts, wall) and after it (TRES of the selected nodes). shared/reference/slurm-semantics.md section 5.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/accounting.hpp"
#include "model/cluster_state.hpp"
#include "scheduler/fairshare.hpp"

namespace gputwin {

/// TRES amounts of one job or one scope.
struct TresCount {
  std::int64_t cpu = 0;     ///< CPUs.
  std::int64_t mem_mb = 0;  ///< Memory, MB.
  std::int64_t node = 0;    ///< Nodes.
  std::int64_t gpu = 0;     ///< GPUs.
};

/// What limits need to know about a job.
struct LimitSubject {
  AssocId assoc = 0;              ///< User association.
  std::uint32_t user = 0;         ///< User id (dense).
  std::uint32_t qos = 0;          ///< Job QOS index.
  std::int32_t part_qos = -1;     ///< Partition QOS index, or -1.
  std::int64_t time_limit_s = 0;  ///< Effective time limit.
};

/// Limit counters and checks.
class LimitTracker {
 public:
  /// Tracker over the association tree (ids must stay valid), its per-association limits (indexed by AssocId;
  /// grown on demand with no limits), and the QOS table.
  LimitTracker(const AssociationTree& tree, const std::vector<QosConfig>& qos);

  /// Sets the limits of association `id` (call as associations are created).
  void set_assoc_limits(AssocId id, const Limits& limits);
  /// Submit-time check: kNone, or the reason of a rejection (MaxSubmit/GrpSubmit always; Max limits only when
  /// the job's QOS has DenyOnLimit). `request` is the TRES the job asks for.
  [[nodiscard]] PendingReason check_submit(const LimitSubject& job, const TresCount& request) const;
  /// acct_policy_job_runnable_pre_select: running-job counts and wall limits.
  [[nodiscard]] PendingReason check_pre_select(const LimitSubject& job) const;
  /// acct_policy_job_runnable_post_select: TRES limits with the selected TRES.
  [[nodiscard]] PendingReason check_post_select(const LimitSubject& job, const TresCount& selected) const;

  /// Counts a submitted (pending) job.
  void add_submitted(const LimitSubject& job);
  /// Counts a job start with its allocated TRES.
  void add_running(const LimitSubject& job, const TresCount& alloc);
  /// Uncounts an ended job (and its submission).
  void remove_running(const LimitSubject& job, const TresCount& alloc);
  /// Uncounts a job that left the queue without running.
  void remove_submitted(const LimitSubject& job);

 private:
  struct Usage {
    std::int64_t running = 0;
    std::int64_t submitted = 0;
    TresCount tres;
  };
  /// Effective Max* limits of a user association: the first level (user, then accounts upward) that sets each.
  struct MaxLimits {
    std::int64_t max_jobs = kNoLimit;
    std::int64_t max_submit = kNoLimit;
    std::int64_t max_wall_s = kNoLimit;
    TresLimits max_tres_per_job;
  };
  MaxLimits effective_max(AssocId id) const;
  Usage& qos_user(std::uint32_t qos, std::uint32_t user);
  const Usage* qos_user(std::uint32_t qos, std::uint32_t user) const;
  void apply(const LimitSubject& job, const TresCount& alloc, int running_sign, int submitted_sign);

  const AssociationTree& tree_;
  const std::vector<QosConfig>& qos_;
  std::vector<Limits> assoc_limits_;
  std::vector<Usage> assoc_usage_;
  std::vector<Usage> qos_usage_;
  std::unordered_map<std::uint64_t, Usage> qos_user_usage_;
};

}  // namespace gputwin
