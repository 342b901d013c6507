// A site's Slurm configuration as Slurm reads it: slurm.conf (and its Include files), gres.conf, `sacctmgr dump`
// files and `sacctmgr show qos -P` output, parsed into records that keep Slurm's names and remember the file and line
// each came from. `gputwin import` turns them into a scenario (cli/import_command.cpp). Every problem is a ConfigError
// naming file, line and field: "slurm.conf: line 12: NodeName=gpu[001-016]: RealMemory: 'lots' is not a
// non-negative integer".
//
//   SlurmConf conf = read_slurm_conf("/etc/slurm/slurm.conf");
//   apply_gres_conf(conf, read_gres_conf("/etc/slurm/gres.conf"));
//   SacctmgrDump assoc = read_sacctmgr_dump("site.cfg");            // sacctmgr dump <cluster> file=site.cfg
//   std::vector<SacctmgrQos> qos = read_sacctmgr_qos("qos.txt");    // sacctmgr show qos -P > qos.txt
//
// Syntax (slurm.conf(5), src/common/parse_config.c): keys are case-insensitive; '#' starts a comment unless escaped
// as "\#"; a '\' at the end of a line joins the next line to it; a line holds one or more Key=Value pairs separated by
// blanks, and values may be double-quoted; "Include FILE" reads FILE in place (relative names resolve against the
// including file's folder, %c is replaced by ClusterName). NodeName=DEFAULT and PartitionName=DEFAULT lines set
// defaults for the lines after them. Keys that are recognised but not modelled, and unknown keys, are kept in
// `not_modelled` so the import can list them; daemon plumbing (ports, log files, plugins without scheduling effect)
// goes to `ignored`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gputwin {

/// Where a value was read: file (as opened) and 1-based line.
struct ConfSource {
  std::string file;        ///< File name as given or as resolved for an Include.
  std::uint64_t line = 0;  ///< 1-based line (the first line of a continued line).
};

/// One Key=Value as written, with its origin. `key` is spelled as in the file.
struct ConfSetting {
  std::string key;    ///< Key (for node and partition keys: "NodeName=gpu[01-04] TmpDisk" style context).
  std::string value;  ///< Value, quotes removed.
  ConfSource source;  ///< Where it was written.
};

/// One node of the node table: a NodeName= line expanded to single hosts, NodeName=DEFAULT values applied.
struct SlurmNode {
  std::string name;                    ///< Host name (NodeName).
  std::uint32_t cpus = 1;              ///< CPUs=, else Boards x Sockets x CoresPerSocket x ThreadsPerCore.
  std::uint32_t boards = 1;            ///< Boards=.
  std::uint32_t sockets = 1;           ///< Sockets= (or Boards x SocketsPerBoard).
  std::uint32_t cores_per_socket = 1;  ///< CoresPerSocket=.
  std::uint32_t threads_per_core = 1;  ///< ThreadsPerCore=.
  std::uint64_t real_memory_mb = 0;    ///< RealMemory= in MB; 0 when not given (Slurm then assumes 1 MB).
  std::uint32_t gpus = 0;              ///< GPUs: sum of the gpu entries of Gres= (gpu:h100:8, gpu:8).
  std::string gpu_type;                ///< Type of the first typed gpu entry ("h100"); "" when untyped or none.
  bool mixed_gpu_types = false;        ///< Gres= lists gpu entries of more than one type.
  std::uint32_t weight = 1;            ///< Weight=.
  std::string state = "UNKNOWN";       ///< State= upper case (UNKNOWN IDLE DOWN DRAIN FAIL FAILING FUTURE CLOUD).
  std::string features;                ///< Feature=/Features= as written (comma list).
  ConfSource source;                   ///< The NodeName= line.
};

/// One PartitionName= line with PartitionName=DEFAULT values applied. Optional fields are unset when not written.
struct SlurmPartition {
  std::string name;                            ///< PartitionName.
  std::string nodes_expr;                      ///< Nodes= as written ("ALL", "gpu[001-016],cpu[01-04]", a NodeSet).
  bool all_nodes = false;                      ///< Nodes=ALL.
  std::vector<std::size_t> nodes;              ///< Member nodes: indices into SlurmConf::nodes, ascending.
  bool is_default = false;                     ///< Default=YES.
  std::optional<std::int64_t> default_time_s;  ///< DefaultTime= in seconds; -1 for UNLIMITED.
  std::optional<std::int64_t> max_time_s;      ///< MaxTime= in seconds; -1 for UNLIMITED/INFINITE.
  std::string state = "UP";                    ///< State= upper case (UP DOWN DRAIN INACTIVE).
  std::optional<std::uint32_t> priority_tier;  ///< PriorityTier= (or the legacy Priority=).
  std::optional<std::uint32_t> priority_job_factor;  ///< PriorityJobFactor= (or the legacy Priority=).
  std::string tres_billing_weights;                  ///< TRESBillingWeights= as written.
  std::string qos;                                   ///< QOS= (partition QOS).
  std::string preempt_mode;                          ///< PreemptMode= upper case ("REQUEUE", "SUSPEND,GANG").
  std::optional<std::int64_t> grace_time_s;          ///< GraceTime= in seconds.
  ConfSource source;                                 ///< The PartitionName= line.
};

/// SchedulerParameters= options the `slurm` policy models (slurm.conf(5) names; units as Slurm's).
struct SlurmSchedulerParameters {
  std::optional<std::int64_t> sched_interval;       ///< sched_interval (seconds).
  std::optional<std::int64_t> default_queue_depth;  ///< default_queue_depth.
  std::optional<std::int64_t> batch_sched_delay;    ///< batch_sched_delay (seconds).
  std::optional<std::int64_t> bf_interval;          ///< bf_interval (seconds).
  std::optional<std::int64_t> bf_window;            ///< bf_window (minutes).
  std::optional<std::int64_t> bf_resolution;        ///< bf_resolution (seconds).
  std::optional<std::int64_t> bf_max_job_test;      ///< bf_max_job_test.
  std::optional<std::int64_t> bf_max_job_start;     ///< bf_max_job_start.
  bool bf_continue = false;                         ///< bf_continue.
};

/// priority/* parameters of slurm.conf; unset when not written.
struct SlurmPriorityParameters {
  std::string type;                                         ///< PriorityType ("priority/multifactor").
  std::optional<std::uint32_t> weight_age;                  ///< PriorityWeightAge.
  std::optional<std::uint32_t> weight_assoc;                ///< PriorityWeightAssoc.
  std::optional<std::uint32_t> weight_fairshare;            ///< PriorityWeightFairshare.
  std::optional<std::uint32_t> weight_job_size;             ///< PriorityWeightJobSize.
  std::optional<std::uint32_t> weight_partition;            ///< PriorityWeightPartition.
  std::optional<std::uint32_t> weight_qos;                  ///< PriorityWeightQOS.
  std::string weight_tres;                                  ///< PriorityWeightTRES as written.
  std::optional<std::int64_t> max_age_s;                    ///< PriorityMaxAge in seconds.
  std::optional<bool> favor_small;                          ///< PriorityFavorSmall.
  std::optional<std::int64_t> calc_period_s;                ///< PriorityCalcPeriod in seconds (written in minutes).
  std::optional<std::int64_t> decay_half_life_s;            ///< PriorityDecayHalfLife in seconds; 0 = no decay.
  std::string usage_reset_period;                           ///< PriorityUsageResetPeriod upper case.
  std::string flags;                                        ///< PriorityFlags as written (comma list).
  std::optional<std::uint32_t> fairshare_dampening_factor;  ///< FairShareDampeningFactor.
};

/// A parsed slurm.conf with its includes.
struct SlurmConf {
  std::vector<std::string> files;                     ///< slurm.conf, then each included file, in reading order.
  std::string cluster_name;                           ///< ClusterName.
  std::vector<SlurmNode> nodes;                       ///< Node table in definition order (hostlists expanded).
  std::vector<SlurmPartition> partitions;             ///< Partitions in definition order.
  std::string scheduler_type;                         ///< SchedulerType ("" = Slurm's default sched/backfill).
  std::string select_type;                            ///< SelectType ("select/cons_tres").
  std::string select_type_parameters;                 ///< SelectTypeParameters ("CR_Core_Memory").
  SlurmSchedulerParameters scheduler;                 ///< SchedulerParameters options the simulator models.
  std::optional<std::int64_t> over_time_limit_min;    ///< OverTimeLimit in minutes; -1 for UNLIMITED.
  std::optional<std::int64_t> kill_wait_s;            ///< KillWait in seconds.
  SlurmPriorityParameters priority;                   ///< PriorityType and priority/multifactor parameters.
  std::string accounting_storage_enforce;             ///< AccountingStorageEnforce as written.
  std::string preempt_type;                           ///< PreemptType ("preempt/qos").
  std::string preempt_mode;                           ///< PreemptMode upper case.
  std::optional<std::int64_t> preempt_exempt_time_s;  ///< PreemptExemptTime in seconds.
  std::vector<ConfSetting> not_modelled;              ///< Keys and options kept but not modelled (incl. unknown ones).
  std::vector<ConfSetting> ignored;  ///< Daemon plumbing with no scheduling effect (ports, logs, auth).

  /// Index of the node named `name`, or -1.
  [[nodiscard]] std::int64_t node_index(std::string_view name) const;
  /// Index of the partition named `name`, or -1.
  [[nodiscard]] std::int64_t partition_index(std::string_view name) const;
};

/// Reads slurm.conf and the files it includes; throws ConfigError on a file that cannot be read or a bad line.
SlurmConf read_slurm_conf(const std::filesystem::path& path);

/// Parses slurm.conf text; `file_name` names it in errors and relative Include paths resolve against `base_dir`.
SlurmConf parse_slurm_conf(std::istream& in, const std::string& file_name, const std::filesystem::path& base_dir);

/// One gres.conf line that names GPUs (Name=gpu).
struct GresConfGpu {
  std::vector<std::string> nodes;      ///< NodeName= hosts (expanded); empty means every node.
  std::string type;                    ///< Type=.
  std::optional<std::uint32_t> count;  ///< Count=, else the number of File= devices; unset if neither.
  ConfSource source;                   ///< The line.
};

/// A parsed gres.conf.
struct GresConf {
  std::string autodetect;                 ///< AutoDetect= (nvml, rsmi, off) as written; types then come from hardware.
  std::vector<GresConfGpu> gpus;          ///< Name=gpu lines in file order.
  std::vector<ConfSetting> not_modelled;  ///< Other GRES (Name=mps, nic, ...) and keys not modelled.
};

/// Reads gres.conf; throws ConfigError.
GresConf read_gres_conf(const std::filesystem::path& path);
/// Parses gres.conf text; `file_name` names it in errors.
GresConf parse_gres_conf(std::istream& in, const std::string& file_name);

/// Completes the node table with gres.conf: a node whose Gres= gives GPUs without a type takes the Type= of the
/// gres.conf lines naming it (lines for all nodes apply when no line names it). slurm.conf's counts stand, as
/// slurmctld's do; returns one note per disagreement (different counts or types) and per node whose type stays
/// unknown because gres.conf relies on AutoDetect.
std::vector<std::string> apply_gres_conf(SlurmConf& conf, const GresConf& gres);

/// An association in a `sacctmgr dump` file: an account (Account - lines) or a user in an account (User - lines).
struct SacctmgrAssoc {
  std::string name;                             ///< Account or user name.
  std::string parent;                           ///< Account the line sits under (the last "Parent - " line).
  std::optional<std::uint32_t> fairshare;       ///< Fairshare= shares.
  bool fairshare_parent = false;                ///< Fairshare=parent (dumped as 2147483647, SLURMDB_FS_USE_PARENT).
  std::optional<std::uint32_t> priority;        ///< Priority=.
  std::string grp_tres;                         ///< GrpTRES= as written.
  std::string max_tres;                         ///< MaxTRES= / MaxTRESPerJob= as written.
  std::optional<std::int64_t> grp_jobs;         ///< GrpJobs=.
  std::optional<std::int64_t> grp_submit_jobs;  ///< GrpSubmitJobs= / GrpSubmit=.
  std::optional<std::int64_t> max_jobs;         ///< MaxJobs= (per user).
  std::optional<std::int64_t> max_submit_jobs;  ///< MaxSubmitJobs= / MaxSubmit=.
  std::optional<std::int64_t> max_wall_s;       ///< MaxWallDurationPerJob= / MaxWall= (minutes or Slurm time).
  std::string default_qos;                      ///< DefaultQOS=.
  std::string qos;                              ///< QOS= (the allowed QOS list).
  std::string default_account;                  ///< DefaultAccount= (users).
  std::string partition;                        ///< Partition= (partition-specific user association).
  std::vector<std::pair<std::string, std::string>> other;  ///< Options kept but not modelled (Description, ...).
  ConfSource source;                                       ///< The line.
};

/// A parsed `sacctmgr dump` file (one cluster).
struct SacctmgrDump {
  std::string cluster;                  ///< Cluster - 'name'.
  SacctmgrAssoc root;                   ///< Options on the Cluster - line (the root association).
  std::vector<SacctmgrAssoc> accounts;  ///< Account - lines in file order (a parent always comes before its child).
  std::vector<SacctmgrAssoc> users;     ///< User - lines in file order (one per user and account).
};

/// Reads a `sacctmgr dump` file; throws ConfigError.
SacctmgrDump read_sacctmgr_dump(const std::filesystem::path& path);
/// Parses `sacctmgr dump` text; `file_name` names it in errors.
SacctmgrDump parse_sacctmgr_dump(std::istream& in, const std::string& file_name);

/// One QOS of `sacctmgr show qos -P` (or -p) output, columns found by their header names.
struct SacctmgrQos {
  std::string name;                                        ///< Name.
  std::optional<std::uint32_t> priority;                   ///< Priority.
  std::optional<double> usage_factor;                      ///< UsageFactor.
  std::vector<std::string> preempt;                        ///< Preempt (QOS names).
  std::string preempt_mode;                                ///< PreemptMode upper case; "" for "cluster" (inherit).
  std::optional<std::int64_t> grace_time_s;                ///< GraceTime in seconds.
  std::string flags;                                       ///< Flags as written.
  std::string grp_tres;                                    ///< GrpTRES.
  std::optional<std::int64_t> grp_jobs;                    ///< GrpJobs.
  std::optional<std::int64_t> grp_submit_jobs;             ///< GrpSubmit / GrpSubmitJobs.
  std::string max_tres;                                    ///< MaxTRES (per job).
  std::string max_tres_per_user;                           ///< MaxTRESPU / MaxTRESPerUser.
  std::optional<std::int64_t> max_jobs_per_user;           ///< MaxJobsPU / MaxJobsPerUser.
  std::optional<std::int64_t> max_submit_per_user;         ///< MaxSubmitPU / MaxSubmitJobsPerUser.
  std::optional<std::int64_t> max_wall_s;                  ///< MaxWall in seconds.
  std::vector<std::pair<std::string, std::string>> other;  ///< Non-empty columns not modelled (GrpTRESMins, ...).
  ConfSource source;                                       ///< The line.
};

/// Reads `sacctmgr show qos -P` output (header line required); throws ConfigError.
std::vector<SacctmgrQos> read_sacctmgr_qos(const std::filesystem::path& path);
/// Parses `sacctmgr show qos -P` text; `file_name` names it in errors.
std::vector<SacctmgrQos> parse_sacctmgr_qos(std::istream& in, const std::string& file_name);

/// Formats seconds as a Slurm time, "d-hh:mm:ss" or "hh:mm:ss"; "UNLIMITED" for -1.
std::string format_slurm_time(std::int64_t seconds);

}  // namespace gputwin
