// Accounting in Slurm's vocabulary: the account/user association tree with fair-share shares, QOS definitions,
// association and QOS limits, AccountingStorageEnforce, and the priority/multifactor parameters of slurm.conf.
// Semantics: shared/reference/slurm-semantics.md sections 1, 5 and 6. Scenario keys: README "Accounting".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin {

/// "No limit" for every limit field (Slurm prints these as empty).
inline constexpr std::int64_t kNoLimit = -1;

/// Limits on trackable resources (TRES) for one scope; kNoLimit where unset.
struct TresLimits {
  std::int64_t cpu = kNoLimit;     ///< cpu=
  std::int64_t mem_mb = kNoLimit;  ///< mem= (MB)
  std::int64_t node = kNoLimit;    ///< node=
  std::int64_t gpu = kNoLimit;     ///< gres/gpu=

  /// True when no field is set.
  [[nodiscard]] bool empty() const {
    return cpu == kNoLimit && mem_mb == kNoLimit && node == kNoLimit && gpu == kNoLimit;
  }
};

/// Limits an association (account or user) or a QOS may carry, named as sacctmgr names them.
struct Limits {
  TresLimits grp_tres;                          ///< GrpTRES: all running jobs of the scope together.
  TresLimits max_tres_per_job;                  ///< MaxTRES (MaxTRESPerJob).
  TresLimits max_tres_per_user;                 ///< MaxTRESPerUser (QOS only).
  std::int64_t grp_jobs = kNoLimit;             ///< GrpJobs: running jobs of the scope.
  std::int64_t grp_submit_jobs = kNoLimit;      ///< GrpSubmitJobs: pending + running jobs of the scope.
  std::int64_t max_jobs_per_user = kNoLimit;    ///< MaxJobs (association) / MaxJobsPerUser (QOS): running.
  std::int64_t max_submit_per_user = kNoLimit;  ///< MaxSubmitJobs / MaxSubmitJobsPerUser: pending + running.
  std::int64_t max_wall_s = kNoLimit;           ///< MaxWall (MaxWallDurationPerJob), seconds.
};

/// What a preempted job suffers (PreemptMode).
enum class PreemptMode : std::uint8_t { kOff, kCancel, kRequeue };

/// One QOS (sacctmgr show qos).
struct QosConfig {
  std::string name;                              ///< QOS name.
  std::uint32_t priority = 0;                    ///< Priority (normalised by the largest QOS priority).
  double usage_factor = 1.0;                     ///< UsageFactor applied to fair-share usage.
  std::vector<std::string> preempt;              ///< QOSes this QOS may preempt (preempt/qos).
  PreemptMode preempt_mode = PreemptMode::kOff;  ///< PreemptMode of this QOS; kOff inherits the cluster's.
  std::int64_t grace_time_s = 0;                 ///< GraceTime for jobs of this QOS when preempted.
  bool deny_on_limit = false;                    ///< Flags=DenyOnLimit: reject at submit instead of pending.
  bool no_decay = false;                         ///< Flags=NoDecay: usage of this QOS never decays.
  Limits limits;                                 ///< Limits of the QOS.
};

/// One account (an inner node of the association tree).
struct AccountConfig {
  std::string name;               ///< Account name.
  std::string parent = "root";    ///< Parent account.
  std::uint32_t fairshare = 1;    ///< Fairshare= raw shares.
  bool fairshare_parent = false;  ///< Fairshare=parent.
  std::uint32_t priority = 0;     ///< Priority= of the association.
  Limits limits;                  ///< Association limits.
};

/// One user association (a leaf: user in account).
struct UserAssocConfig {
  std::string user;               ///< User name.
  std::string account;            ///< Account it belongs to.
  std::uint32_t fairshare = 1;    ///< Fairshare= raw shares.
  bool fairshare_parent = false;  ///< Fairshare=parent.
  std::uint32_t priority = 0;     ///< Priority= of the association.
  std::string default_qos;        ///< DefaultQOS (empty: the cluster default, "normal").
  Limits limits;                  ///< Association limits.
};

/// AccountingStorageEnforce flags.
struct EnforceFlags {
  bool associations = false;  ///< associations: jobs need a known user/account association.
  bool limits = false;        ///< limits: association and QOS limits apply (implies associations).
  bool qos = false;           ///< qos: jobs need a valid QOS.
  bool safe = false;          ///< safe (parsed; TRES-minute limits are not modelled).
};

/// The accounting database as slurmdbd would hold it.
struct AccountingConfig {
  std::vector<AccountConfig> accounts;  ///< Accounts (root is implicit).
  std::vector<UserAssocConfig> users;   ///< User associations.
  std::vector<QosConfig> qos;           ///< QOS definitions; "normal" exists even if not listed.
  EnforceFlags enforce;                 ///< AccountingStorageEnforce.
  bool auto_associations = true;        ///< Create missing accounts (under root) and users (shares 1) on submit.
  PreemptMode preempt_mode = PreemptMode::kOff;  ///< PreemptMode (cluster-wide).
  bool preempt_qos = false;                      ///< PreemptType=preempt/qos (else partition_prio when mode is set).
  std::int64_t preempt_exempt_time_s = 0;        ///< PreemptExemptTime.
};

/// PriorityUsageResetPeriod.
enum class UsageReset : std::uint8_t { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };

/// PriorityType and the priority/multifactor parameters of slurm.conf.
struct PriorityConfig {
  bool multifactor = false;                    ///< PriorityType=priority/multifactor (else priority/basic).
  std::uint32_t weight_age = 0;                ///< PriorityWeightAge.
  std::uint32_t weight_assoc = 0;              ///< PriorityWeightAssoc.
  std::uint32_t weight_fairshare = 0;          ///< PriorityWeightFairshare.
  std::uint32_t weight_job_size = 0;           ///< PriorityWeightJobSize.
  std::uint32_t weight_partition = 0;          ///< PriorityWeightPartition.
  std::uint32_t weight_qos = 0;                ///< PriorityWeightQOS.
  double weight_tres_cpu = 0;                  ///< PriorityWeightTRES=CPU=...
  double weight_tres_mem = 0;                  ///< PriorityWeightTRES=Mem=... (per partition MB total)
  double weight_tres_node = 0;                 ///< PriorityWeightTRES=Node=...
  double weight_tres_gpu = 0;                  ///< PriorityWeightTRES=GRES/gpu=...
  std::int64_t max_age_s = 7 * 86400;          ///< PriorityMaxAge.
  bool favor_small = false;                    ///< PriorityFavorSmall.
  std::int64_t calc_period_s = 300;            ///< PriorityCalcPeriod (slurm.conf value is minutes).
  std::int64_t decay_half_life_s = 7 * 86400;  ///< PriorityDecayHalfLife; 0 = no decay.
  UsageReset usage_reset = UsageReset::kNone;  ///< PriorityUsageResetPeriod.
  double fairshare_dampening = 1.0;            ///< FairShareDampeningFactor (classic only).
  bool fair_tree = true;                       ///< Fair Tree (default); false = classic (PriorityFlags=NO_FAIR_TREE).
  bool accrue_always = false;                  ///< PriorityFlags=ACCRUE_ALWAYS.
  bool small_relative_to_time = false;         ///< PriorityFlags=SMALL_RELATIVE_TO_TIME.
  bool calculate_running = false;              ///< PriorityFlags=CALCULATE_RUNNING.
  bool max_tres = false;                       ///< PriorityFlags=MAX_TRES (billing is the max weighted TRES).
  bool no_normal_assoc = false;                ///< PriorityFlags=NO_NORMAL_ASSOC.
  bool no_normal_part = false;                 ///< PriorityFlags=NO_NORMAL_PART.
  bool no_normal_qos = false;                  ///< PriorityFlags=NO_NORMAL_QOS.
  bool no_normal_tres = false;                 ///< PriorityFlags=NO_NORMAL_TRES.
};

/// TRESBillingWeights of a partition (billing = sum of weight x allocated; cpus when all are zero).
struct BillingWeights {
  double cpu = 0;     ///< CPU=
  double mem_gb = 0;  ///< Mem= per GB (slurm.conf "Mem=0.25G"; a bare number is per MB and is converted).
  double node = 0;    ///< Node=
  double gpu = 0;     ///< GRES/gpu=

  /// True when no weight is set (billing falls back to allocated CPUs).
  [[nodiscard]] bool empty() const { return cpu == 0 && mem_gb == 0 && node == 0 && gpu == 0; }
};

/// Parses a memory size with an optional K/M/G/T suffix (default MB) into MB; false if malformed.
bool parse_memory_mb(std::string_view text, std::int64_t& mb);
/// Parses a TRES limit list ("cpu=4,mem=64G,node=2,gres/gpu=16"); false with `error` set if malformed.
bool parse_tres_limits(std::string_view text, TresLimits& out, std::string& error);
/// Parses TRESBillingWeights ("CPU=1.0,Mem=0.25G,GRES/gpu=2.0"); false with `error` set if malformed.
bool parse_billing_weights(std::string_view text, BillingWeights& out, std::string& error);

}  // namespace gputwin
