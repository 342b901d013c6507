// What slurmctld decides about a job besides where it runs: its association and QOS, whether it is accepted at
// submit, its priority (priority/basic or multifactor with fair share), whether it is eligible (hold, --begin,
// dependencies, array throttle) and whether limits let it start. Every policy holds one; the `slurm` policy
// uses all of it, the classic policies its priority order and eligibility.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/accounting.hpp"
#include "model/cluster_state.hpp"
#include "model/dependency.hpp"
#include "model/scenario.hpp"
#include "scheduler/fairshare.hpp"
#include "scheduler/limits.hpp"
#include "scheduler/priority.hpp"

namespace gputwin {

/// Job decisions of slurmctld other than placement.
class JobPolicy {
 public:
  /// Policy over `state` (jobs and cluster) with the scenario's accounting and priority configuration.
  JobPolicy(const ClusterState& state, const AccountingConfig& accounting, const PriorityConfig& priority);
  ~JobPolicy();
  JobPolicy(const JobPolicy&) = delete;
  JobPolicy& operator=(const JobPolicy&) = delete;

  /// Submits job `j` at `now_s`: resolves its association and QOS and checks submit-time limits. Returns kNone
  /// when accepted (its priority is then set), else the reason it is rejected.
  PendingReason submit(JobIndex j, std::int64_t now_s);
  /// The job's current priority (0 while held).
  [[nodiscard]] std::uint32_t priority(JobIndex j) const;
  /// True when the job may need eligibility checks (hold, begin, dependency, array throttle).
  [[nodiscard]] bool has_conditions(JobIndex j) const { return acct_[j].conditions; }
  /// kNone if the job may be considered now, else why not (JobHeldUser, BeginTime, Dependency, ...).
  PendingReason eligibility(JobIndex j, std::int64_t now_s);
  /// True when limits are enforced (AccountingStorageEnforce=limits).
  [[nodiscard]] bool limits_enforced() const { return enforce_limits_; }
  /// acct_policy_job_runnable_pre_select: kNone or the limit reason.
  [[nodiscard]] PendingReason pre_select(JobIndex j) const;
  /// acct_policy_job_runnable_post_select with the selected allocation: kNone or the limit reason.
  [[nodiscard]] PendingReason post_select(JobIndex j, std::span<const NodeAllocation> allocation) const;
  /// The job started on `allocation` at `now_s`.
  void on_start(JobIndex j, std::span<const NodeAllocation> allocation, std::int64_t now_s);
  /// The job ended (its record says when and how); counters, usage and dependents update.
  void on_end(JobIndex j);

  /// True when PreemptMode is not OFF (preempt/qos or preempt/partition_prio).
  [[nodiscard]] bool preemption_enabled() const { return accounting_.preempt_mode != PreemptMode::kOff; }
  /// True if pending job `a` may preempt running job `b` at `now_s` (QOS Preempt list, or a higher partition
  /// PriorityTier; b's PreemptMode not OFF; b has run at least PreemptExemptTime).
  [[nodiscard]] bool can_preempt(JobIndex a, JobIndex b, std::int64_t now_s) const;
  /// PreemptMode that applies to running job `b` (its QOS's or partition's, else the cluster's).
  [[nodiscard]] PreemptMode preempt_mode(JobIndex b) const;
  /// GraceTime of running job `b` (its QOS's with preempt/qos, its partition's with partition_prio).
  [[nodiscard]] std::int64_t grace_time_s(JobIndex b) const;
  /// Order of preemption candidates: lower ranks are preempted first (QOS priority or partition tier).
  [[nodiscard]] std::uint32_t preempt_rank(JobIndex b) const;
  /// True if `a`'s QOS may preempt some QOS (preemptors sort first in the queue with preempt/qos).
  [[nodiscard]] bool is_preemptor(JobIndex a) const;
  /// An operator holds pending job `j` (scontrol hold): priority 0 and not eligible (JobHeldAdmin) until released.
  void hold(JobIndex j);
  /// Releases a job `hold` held at `now_s`: eligible again (unless something else holds it), its priority
  /// recomputed (or the one an operator fixed).
  void release(JobIndex j, std::int64_t now_s);
  /// An operator sets job `j`'s priority: fixed from then on (the decay thread leaves it), 0 while held.
  void set_priority(JobIndex j, std::uint32_t priority);
  /// The priority an operator fixed for job `j`, 0 if none.
  [[nodiscard]] std::uint32_t fixed_priority(JobIndex j) const {
    return acct_[j].fixed_priority ? acct_[j].admin_priority : 0;
  }
  /// A preempted job was requeued at `now_s`: it pends again, eligible after Slurm's requeue delay (121 s).
  void requeue(JobIndex j, std::int64_t now_s);

  /// True with priority/multifactor.
  [[nodiscard]] bool multifactor() const { return engine_ != nullptr; }
  /// PriorityCalcPeriod in seconds.
  [[nodiscard]] std::int64_t calc_period_s() const { return priority_.calc_period_s; }
  /// The decay thread's tick at `now_s`: usage, fair share, then the priority of every job in `pending`.
  /// Returns true when some priority changed.
  bool recalculate(std::int64_t now_s, std::span<const JobIndex> pending);
  /// Starts the decay thread's clock (its first tick is one period after `start_s`).
  void start_clock(std::int64_t start_s);
  /// The next time a held job is released, or INT64_MAX.
  [[nodiscard]] std::int64_t next_release_s() const;
  /// Releases holds due at `now_s`; returns true if any job was released (a job update in Slurm's terms).
  bool release_due(std::int64_t now_s);

  /// The priority factors of `j` at `now_s` (for sprio); zeros under priority/basic.
  [[nodiscard]] PriorityFactors factors(JobIndex j, std::int64_t now_s) const;
  /// The association tree (for sshare).
  [[nodiscard]] const AssociationTree& associations() const { return tree_; }
  /// The QOS table (index 0 is "normal").
  [[nodiscard]] const std::vector<QosConfig>& qos_table() const { return qos_; }
  /// Jobs rejected for naming a dependency on a job id the workload does not have (treated as satisfied).
  [[nodiscard]] std::uint64_t unknown_dependency_targets() const { return unknown_targets_; }

 private:
  struct JobAcct {
    AssocId assoc = 0;
    std::uint32_t user = 0;
    std::uint32_t qos = 0;
    std::int32_t part_qos = -1;
    std::int64_t accrue_s = -1;  // -1: not accruing age yet
    double billing = 0;
    std::int32_t dependency = -1;  // index into dependencies_, -1 none
    bool conditions = false;
    bool held = false;
    bool admin_held = false;           // scontrol hold: priority 0 until released
    bool fixed_priority = false;       // scontrol update priority=N: the decay thread leaves it
    std::uint32_t admin_priority = 0;  // with fixed_priority
    bool eligible_once = false;        // hold/begin/dependency cleared (array throttle is rechecked)
    std::uint32_t priority = 0;
    std::uint32_t running_pos = 0;      // position in running_ while running
    std::int64_t requeue_begin_s = -1;  // after a requeue: not eligible before this time
  };
  AssocId resolve_association(const JobSpec& spec, bool& ok);
  std::int64_t qos_index(const std::string& name) const;
  DependencyStatus dependency_status(JobIndex j, std::int64_t now_s);
  DependencyStatus target_status(const DependencyTerm& term, std::uint64_t id, std::int64_t now_s);
  LimitSubject subject(JobIndex j) const;
  // A pending job's priority as slurmctld sets it (set_job_prio): the one an operator fixed, multifactor, or the
  // next priority/basic value.
  std::uint32_t fresh_priority(JobIndex j, std::int64_t now_s);
  PriorityInputs inputs(JobIndex j) const;
  static TresCount tres_of(std::span<const NodeAllocation> allocation);
  TresCount requested_tres(JobIndex j) const;

  const ClusterState& state_;
  AccountingConfig accounting_;
  PriorityConfig priority_;
  bool enforce_limits_ = false;
  std::vector<QosConfig> qos_;
  AssociationTree tree_;
  std::vector<std::uint32_t> assoc_priority_;
  std::unique_ptr<PriorityEngine> engine_;
  std::unique_ptr<LimitTracker> limits_;
  std::vector<JobAcct> acct_;
  std::vector<Dependency> dependencies_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  std::unordered_map<AssocId, std::string> default_qos_;  // DefaultQOS of user associations that set one
  std::unordered_map<std::uint64_t, JobIndex> job_by_id_;
  std::unordered_map<std::uint64_t, std::vector<JobIndex>> array_tasks_;
  std::unordered_map<std::uint64_t, std::uint32_t> array_running_;
  std::unordered_map<std::string, std::vector<JobIndex>> singleton_groups_;  // user + '\n' + name
  std::vector<JobIndex> running_;
  std::vector<std::pair<std::int64_t, JobIndex>> hold_releases_;  // min-heap by time
  std::vector<std::vector<std::uint8_t>> qos_preempts_;           // qos_preempts_[a][b]: QOS a may preempt QOS b
  std::uint32_t next_basic_priority_ = 0xffff0000u;
  std::uint64_t unknown_targets_ = 0;
};

}  // namespace gputwin
