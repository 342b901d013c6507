// What slurmrestd says, in one shape for every API version: nodes, jobs, partitions, associations, QOS, ping and
// diag records as the twin needs them. The parsers (rest_parse) fill these from v0.0.38 (plain fields) and
// v0.0.39+ (state arrays, {set, infinite, number}) replies alike; the mirror (mirror) turns them into the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gputwin {

/// slurmrestd data_parser versions the twin speaks, oldest first.
enum class ApiVersion : std::uint8_t { k38, k39, k40, k41, k42, k43, k44 };

/// "v0.0.44" for ApiVersion::k44.
const char* api_version_name(ApiVersion version);
/// Parses "v0.0.38" ... "v0.0.44" (with or without the leading 'v'); nullopt if not one the twin speaks.
std::optional<ApiVersion> parse_api_version(std::string_view text);

/// One entry of a reply's errors[] or warnings[].
struct RestMessage {
  std::int64_t error_number = 0;  ///< Slurm error number (0 for warnings or when absent).
  std::string error;              ///< Slurm's error text ("Invalid job id specified").
  std::string description;        ///< The plugin's description ("Failure to query node X").
  std::string source;             ///< The function that failed ("slurm_load_jobs").
};

/// A reply's errors[] and warnings[] (every slurmrestd reply carries them; a 200 may still hold errors).
struct RestMessages {
  std::vector<RestMessage> errors;    ///< errors[].
  std::vector<RestMessage> warnings;  ///< warnings[].
};

/// GET ping: is slurmctld answering.
struct RestPing {
  bool responding = false;      ///< pinged "UP" (v0.0.38-41) or responding true (v0.0.42+).
  std::string hostname;         ///< The controller answering.
  std::int64_t latency_us = 0;  ///< latency, when given.
};

/// GET diag: slurmctld's scheduler statistics (sdiag).
struct RestDiag {
  std::int64_t server_time = 0;              ///< req_time: slurmctld's clock (epoch seconds).
  std::int64_t jobs_pending = 0;             ///< jobs_pending.
  std::int64_t jobs_running = 0;             ///< jobs_running.
  std::int64_t schedule_cycle_last_us = 0;   ///< schedule_cycle_last.
  std::int64_t bf_last_cycle_us = 0;         ///< bf_cycle_last.
  std::int64_t bf_last_backfilled_jobs = 0;  ///< bf_last_backfilled_jobs.
  std::int64_t bf_when_last_cycle = 0;       ///< bf_when_last_cycle (epoch seconds; 0 if never).
  bool bf_active = false;                    ///< bf_active.
};

/// One node (GET nodes, node/{name}).
struct RestNode {
  std::string name;                ///< NodeName.
  std::string state;               ///< Base state, upper case: IDLE, MIXED, ALLOCATED, DOWN, UNKNOWN, FUTURE, ERROR.
  std::vector<std::string> flags;  ///< State flags, upper case: DRAIN, NOT_RESPONDING, COMPLETING, POWERED_DOWN,
                                   ///< POWERING_UP, POWERING_DOWN, REBOOT_REQUESTED, REBOOT_ISSUED, FAIL, MAINTENANCE,
                                   ///< RESERVED, CLOUD, PLANNED, ... (v0.0.38's state_flags, v0.0.39+'s state[1..]).
  std::string reason;              ///< Reason text (empty when none).
  std::string comment;             ///< comment (free text an admin or agent set; "XID 79 GPU 3" feeds health).
  std::int64_t reason_time = 0;    ///< When the reason was set (epoch seconds; 0 unset).
  std::string reason_user;         ///< Who set it.
  std::uint32_t cpus = 0;          ///< cpus.
  std::uint32_t alloc_cpus = 0;    ///< alloc_cpus.
  std::uint64_t memory_mb = 0;     ///< real_memory.
  std::uint64_t alloc_memory_mb = 0;    ///< alloc_memory.
  std::uint32_t gpus = 0;               ///< GPUs in gres ("gpu:h100:8(S:0-1)" -> 8; several gpu entries add up).
  std::string gpu_type;                 ///< Type of the first typed gpu entry ("h100"), empty if untyped or none.
  std::uint32_t alloc_gpus = 0;         ///< GPUs in gres_used ("gpu:h100:2(IDX:0-1)" -> 2).
  std::string gres;                     ///< gres as given.
  std::string gres_used;                ///< gres_used as given.
  std::vector<std::string> partitions;  ///< partitions.
  std::string features;                 ///< features, comma separated (v0.0.38 string, v0.0.40+ array joined).
  std::uint32_t weight = 1;             ///< weight.
  std::int64_t boot_time = 0;           ///< boot_time (epoch seconds; 0 unset).
  std::int64_t last_busy = 0;           ///< last_busy (epoch seconds; 0 unset).
};

/// One job (GET jobs, job/{id}) as slurmctld has it.
struct RestJob {
  std::uint64_t job_id = 0;        ///< job_id.
  std::string name;                ///< name.
  std::string user;                ///< user_name.
  std::string account;             ///< account.
  std::string partition;           ///< partition (the first, when several are listed).
  std::string qos;                 ///< qos.
  std::string state;               ///< Base job state, upper case: PENDING, RUNNING, COMPLETED, CANCELLED, FAILED,
                                   ///< TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, SUSPENDED, BOOT_FAIL, DEADLINE.
  std::vector<std::string> flags;  ///< State flags (v0.0.40+ job_state[1..]): COMPLETING, CONFIGURING, REQUEUED, ...
  std::string reason;              ///< state_reason ("None", "Priority", "Resources", "JobHeldAdmin", ...).
  std::string state_description;   ///< state_description (free text), empty when none.
  std::int64_t submit_time = 0;    ///< submit_time (epoch seconds; 0 unset).
  std::int64_t eligible_time = 0;  ///< eligible_time (0 unset).
  std::int64_t start_time = 0;     ///< start_time: the actual start, or slurmctld's expected start while pending
                                   ///< (0 unset).
  std::int64_t end_time = 0;       ///< end_time: the actual end, or start + limit while running (0 unset).
  std::optional<std::int64_t> time_limit_s;  ///< time_limit (minutes in the API) in seconds; nullopt when unset or
                                             ///< infinite.
  std::optional<std::int64_t> priority;      ///< priority; nullopt when unset.
  std::uint32_t node_count = 0;              ///< node_count (an estimate while pending).
  std::uint32_t cpus = 0;                    ///< cpus.
  std::uint32_t gpus_per_node = 0;  ///< GPUs per node asked for (tres_per_node "gres:gpu:h100:2" / "gres/gpu:2",
                                    ///< v0.0.38 gres or gpus_per_node).
  std::uint32_t gpus = 0;           ///< GPUs of the job (tres_alloc_str when running, else tres_req_str "gres/gpu=16");
                                    ///< 0 when neither says.
  std::string gpu_type;             ///< GPU type asked for ("h100"), empty if any.
  std::uint64_t mem_per_node_mb = 0;  ///< memory_per_node (0 unset).
  std::string nodes;                  ///< Allocated nodes as a hostlist ("gpu[01-02]"), empty while pending.
  std::string tres_req;               ///< tres_req_str as given ("cpu=16,mem=64G,node=2,billing=16,gres/gpu=16").
  std::string tres_alloc;             ///< tres_alloc_str as given (empty while pending).
  std::string command;                ///< command.
  std::string comment;                ///< comment.
  std::string dependency;             ///< dependency.
  std::uint64_t array_job_id = 0;     ///< array_job_id (0: not an array task).
  std::int32_t array_task_id = -1;    ///< array_task_id (-1: none).
  bool requeue = true;                ///< requeue.
  bool exclusive = false;             ///< shared == "none"/exclusive flag set.
  std::int32_t exit_code = 0;         ///< exit_code's return code.
  bool held = false;                  ///< priority 0 with a JobHeld* reason.
};

/// One partition (GET partitions).
struct RestPartition {
  std::string name;         ///< name.
  std::string nodes;        ///< nodes as a hostlist ("gpu[01-04]").
  bool is_default = false;  ///< flags DEFAULT.
  std::optional<std::int64_t>
      default_time_s;                      ///< default_time (minutes in the API) in seconds; nullopt unset/infinite.
  std::optional<std::int64_t> max_time_s;  ///< max_time in seconds; nullopt UNLIMITED.
  std::string state;                       ///< UP, DOWN, DRAIN, INACTIVE.
  std::uint32_t priority_tier = 1;         ///< priority_tier.
  std::uint32_t priority_job_factor = 1;   ///< priority_job_factor.
  std::uint32_t total_nodes = 0;           ///< total_nodes.
  std::uint32_t total_cpus = 0;            ///< total_cpus.
  std::string billing_weights;             ///< tres billing weights as written.
  std::string qos;                         ///< The partition's QOS, empty if none.
};

/// One association (GET slurmdb/associations).
struct RestAssociation {
  std::string account;                          ///< account.
  std::string user;                             ///< user (empty for an account association).
  std::string partition;                        ///< partition (empty for all).
  std::string parent_account;                   ///< parent_account.
  std::int64_t shares_raw = 1;                  ///< shares_raw.
  std::string default_qos;                      ///< default qos.
  std::vector<std::string> qos;                 ///< Allowed QOS.
  std::optional<std::int64_t> max_jobs;         ///< max jobs (MaxJobs), nullopt unset.
  std::optional<std::int64_t> max_submit_jobs;  ///< MaxSubmitJobs, nullopt unset.
  std::optional<std::int64_t> grp_jobs;         ///< GrpJobs, nullopt unset.
};

/// One QOS (GET slurmdb/qos).
struct RestQos {
  std::string name;                           ///< name.
  std::int64_t priority = 0;                  ///< priority.
  std::optional<std::int64_t> max_wall_pj_s;  ///< MaxWall per job in seconds, nullopt unset.
  std::optional<std::int64_t> max_jobs_pu;    ///< MaxJobsPerUser, nullopt unset.
  std::optional<std::int64_t> max_submit_pu;  ///< MaxSubmitJobsPerUser, nullopt unset.
  std::vector<std::string> preempt;           ///< QOS it may preempt.
  double usage_factor = 1.0;                  ///< UsageFactor.
};

}  // namespace gputwin
