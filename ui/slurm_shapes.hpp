// The JSON shapes slurmrestd answers with, for data_parser versions v0.0.41 to v0.0.44: one builder per record kind
// (a slurmctld job, a slurmdbd job, a node, a partition, a QOS, an account, an association), the meta block and the
// ping and diag bodies. Every field the real slurmrestd of Slurm 25.11 prints is printed, in its order, with the
// version's additions and removals (tests/ui/slurm_shapes_test.cpp compares the key sets with recorded replies).
// Values the simulator does not model take the value a cluster without that feature shows (no array jobs, no
// reservations, no memory per job, one socket per node); see ui/slurmrestd_compat_notes.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/run_view.hpp"

namespace gputwin {

/// slurmrestd's JSON: objects keep the order their fields were added in, as slurmrestd prints them.
using SlurmJson = nlohmann::ordered_json;

/// A data_parser version the compatible API speaks.
enum class SlurmApiVersion : std::uint8_t { k41 = 41, k42 = 42, k43 = 43, k44 = 44 };

/// Parses "v0.0.41" ... "v0.0.44". Empty for anything else.
std::optional<SlurmApiVersion> parse_slurm_api_version(std::string_view text);

/// "v0.0.44" for k44, and so on.
std::string slurm_api_version_text(SlurmApiVersion version);

/// Which daemon a reply claims to come from (meta.plugin).
enum class SlurmPlugin : std::uint8_t { kSlurmctld, kSlurmdbd };

/// What every builder needs besides its record.
struct SlurmShapeContext {
  SlurmApiVersion version = SlurmApiVersion::k44;
  std::string cluster = "gputwin";   ///< meta.slurm.cluster and every record's cluster.
  std::int64_t epoch_unix_s = 0;     ///< Unix time of simulated time 0.
  std::int64_t now_s = 0;            ///< Simulated time of the answer.
  std::string client_user = "root";  ///< meta.client.user.
  [[nodiscard]] std::int64_t unix_time(std::int64_t sim_s) const { return epoch_unix_s + sim_s; }
};

/// A job as both daemons describe it.
struct ServedJob {
  JobRow row;                            ///< Identity, state and times as of the answer's time.
  std::string gpu_type;                  ///< GRES type of its nodes ("" for untyped or no GPUs).
  std::vector<std::string> node_names;   ///< Its nodes once started, in order.
  std::vector<std::string> gpu_indices;  ///< Per node in node_names: "0-3" (Slurm's IDX list).
  std::vector<std::int32_t> node_cpus;   ///< Per node in node_names: the node's CPU count.
  std::int32_t user_id = 0, group_id = 0;
  std::int32_t association_id = 0;
};

/// A node as slurmctld describes it.
struct ServedNode {
  NodeRow row;                          ///< Name, state, CPUs, GPUs, memory.
  std::vector<std::string> partitions;  ///< Partitions that hold it.
  std::int32_t alloc_cpus = 0;
  std::int32_t alloc_gpus = 0;
  std::string alloc_gpu_indices;  ///< "0-3" of its allocated GPUs ("" for none).
  std::string reason;             ///< Drain or down reason ("" for none).
  std::int64_t boot_s = 0;        ///< Simulated time it last came up.
  std::int64_t last_busy_s = 0;   ///< Simulated time it was last busy.
  std::string version = "25.11.0";
};

/// A QOS as slurmdbd describes it.
struct ServedQos {
  std::string name, description;
  std::int32_t id = 0;
  std::int64_t priority = 0;
  std::int64_t max_wall_per_job_min = -1;  ///< -1: no limit.
  std::int64_t max_jobs_per_user = -1;     ///< -1: no limit.
};

/// An account as slurmdbd describes it.
struct ServedAccount {
  std::string name, description, organization;
};

/// An association (cluster/account/user/partition) as slurmdbd describes it.
struct ServedAssociation {
  std::string account, user, partition, parent_account;
  std::int32_t id = 0;
  std::int64_t shares_raw = 1;
  bool is_default = false;
  std::vector<std::string> qos;
};

/// The meta block: plugin, client, command, slurm version and cluster.
SlurmJson slurm_meta(const SlurmShapeContext& context, SlurmPlugin plugin);

/// A reply body: `key` holding `records` (omitted when `key` is empty), the extra top-level fields slurmrestd adds
/// for it (last_backfill and last_update for jobs; last_update for nodes, partitions and reservations), then meta,
/// errors and warnings in the order the real one prints them.
SlurmJson slurm_reply(const SlurmShapeContext& context, SlurmPlugin plugin, std::string_view key, SlurmJson records,
                      SlurmJson errors = SlurmJson::array(), SlurmJson warnings = SlurmJson::array());

/// One entry of errors[]: description, error_number, error, source.
SlurmJson slurm_error(std::string_view description, int error_number, std::string_view error, std::string_view source);

/// One entry of warnings[]: description, source.
SlurmJson slurm_warning(std::string_view description, std::string_view source);

/// GET /slurm/vX/ping's pings[] (one primary controller, up).
SlurmJson slurm_pings(const SlurmShapeContext& context);

/// Counters of the diag reply that the simulator knows.
struct SlurmDiagCounts {
  std::int64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0, jobs_failed = 0;
  std::int64_t jobs_pending = 0, jobs_running = 0;
};

/// GET /slurm/vX/diag's statistics object.
SlurmJson slurm_diag_statistics(const SlurmShapeContext& context, const SlurmDiagCounts& counts);

/// A job record of GET /slurm/vX/jobs and /slurm/vX/job/{id}.
SlurmJson slurmctld_job(const SlurmShapeContext& context, const ServedJob& job);

/// A job record of GET /slurmdb/vX/jobs and /slurmdb/vX/job/{id}.
SlurmJson slurmdbd_job(const SlurmShapeContext& context, const ServedJob& job);

/// A node record of GET /slurm/vX/nodes and /slurm/vX/node/{name}.
SlurmJson slurm_node(const SlurmShapeContext& context, const ServedNode& node);

/// A partition record of GET /slurm/vX/partitions.
SlurmJson slurm_partition(const SlurmShapeContext& context, const PartitionRow& partition);

/// A QOS record of GET /slurmdb/vX/qos.
SlurmJson slurm_qos(const SlurmShapeContext& context, const ServedQos& qos);

/// An account record of GET /slurmdb/vX/accounts.
SlurmJson slurm_account(const SlurmShapeContext& context, const ServedAccount& account);

/// An association record of GET /slurmdb/vX/associations.
SlurmJson slurm_association(const SlurmShapeContext& context, const ServedAssociation& association);

}  // namespace gputwin
