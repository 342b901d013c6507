// Cloud operation as a scenario configures it: the autoscaler that creates and removes cloud GPU nodes from
// pending demand with a real cold start (/autoscaler, gpu-domain.md 5.1), and the cost model with prices,
// purchase models and per-user quotas (/cost, gpu-domain.md 5.2). The scaling, quota and operations controllers
// (control/) decide; sim/power_mechanics and sim/cost_meter carry it out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gputwin {

/// The stages of a new cloud GPU node's cold start, seconds (gpu-domain.md 5.1; defaults are its typical values).
struct ColdStart {
  double provision_s = 90;      ///< VM launch to node Ready (Karpenter: 80-100 s).
  double gpu_advertise_s = 75;  ///< Device plugin advertises the GPUs (+60-90 s).
  double driver_s = 240;        ///< GPU Operator driver container build/load (3-5 min; ~30 s precompiled).
  double image_s = 10;          ///< Container image: mount of a shared Enroot squashfs [U]; a pull is ~600 s.
  double register_s = 20;       ///< slurmd start and registration (~20 s).
  double health_check_s = 9;    ///< HealthCheckProgram at slurmd start.
  /// Total seconds from the decision to a schedulable node.
  [[nodiscard]] double total_s() const {
    return provision_s + gpu_advertise_s + driver_s + image_s + register_s + health_check_s;
  }
};

/// /autoscaler: a Slinky/Clusterra-style scaler of cloud nodes.
struct AutoscalerConfig {
  bool enabled = false;                     ///< True when /autoscaler is present.
  std::vector<std::uint32_t> nodes;         ///< The cloud pool (node indices, ascending); the rest are static.
  std::uint32_t min_nodes = 0;              ///< Nodes of the pool kept up whatever the demand.
  std::uint32_t max_nodes = 0;              ///< Most nodes of the pool up or booting (default: the whole pool).
  double poll_s = 20;                       ///< Decision period (Clusterra's scaler polls every 20 s).
  double idle_window_s = 300;               ///< A node idle this long is removed (consolidation WhenEmpty).
  double scale_down_s = 30;                 ///< Drain-and-delete time before the node stops costing.
  std::uint32_t scale_up_per_poll = 100;    ///< Most nodes created per decision.
  std::uint32_t scale_down_per_poll = 100;  ///< Most nodes removed per decision.
  ColdStart cold_start;                     ///< What a new node pays before it takes jobs.
  double boot_failure_probability = 0;      ///< A new node that never registers (replaced at the next decision).
  bool slurm_power_save = false;            ///< Configured as Slurm power saving (/power_save) rather than a scaler.
  bool start_powered_down = true;  ///< Pool nodes beyond min_nodes start POWERED_DOWN (cloud nodes, CLOUD state).
  double resume_timeout_s = 0;     ///< ResumeTimeout: a node not up by then fails its resume (0: no limit).
};

/// A cluster operation at a time of the run (/operations/N), with its real cost (Soperator / Slinky practice).
struct ClusterOperation {
  /// What the operators do.
  enum class Action : std::uint8_t {
    kAddNodes,        ///< Nodes join a live cluster after a cold start (no restart; they are absent until then).
    kRemoveNodes,     ///< Nodes are drained and deleted once idle (Slinky: drain first, never evict).
    kUpdateImage,     ///< New container image: an Enroot squashfs on shared storage, no restart, no per-node pull.
    kAttachVolume,    ///< A storage volume is attached: every node restarts (now, killing jobs, or rolling).
    kMaintenance,     ///< Nodes go DOWN for a window; their jobs end NODE_FAIL and are requeued.
    kRestartWorkers,  ///< "Restart all workers" (Soperator): every slurmd worker restarts (now, or rolling).
    kHoldJobs,        ///< Hold pending jobs (scontrol hold): they wait, JobHeldAdmin, until released.
    kReleaseJobs,     ///< Release jobs an earlier hold held (scontrol release).
    kSetPriority,     ///< Give pending jobs a fixed priority (scontrol update priority=N).
  };
  double time_s = 0;                     ///< When.
  Action action = Action::kUpdateImage;  ///< What.
  std::vector<std::uint32_t> nodes;      ///< Nodes it touches (all for attach_volume by default).
  std::string name;                      ///< Image or volume name (for the record).
  double duration_s = 0;  ///< Cold start (add_nodes), restart (attach_volume, restart_workers), window (maintenance).
  bool rolling = false;   ///< attach_volume, restart_workers: drain each node, restart it when idle (no job killed).
  std::vector<std::uint64_t> jobs;  ///< Job ids (hold, release, set_priority).
  std::uint32_t priority = 0;       ///< The priority set (set_priority).
};

/// How a node is paid for.
enum class PurchaseModel : std::uint8_t {
  kOnDemand,  ///< Paid while the node is up (created to removed).
  kReserved,  ///< Paid all the time, up or not (committed capacity).
  kSpot,      ///< Paid while up at the spot price; the provider may reclaim it.
};

/// The price of a set of nodes (/cost/prices/N).
struct NodePrice {
  std::vector<std::uint32_t> nodes;                ///< Node indices it applies to.
  double usd_per_node_hour = 0;                    ///< Price per node-hour.
  PurchaseModel model = PurchaseModel::kOnDemand;  ///< Purchase model.
};

/// What a quota does when spend passes its limit.
enum class QuotaAction : std::uint8_t {
  kWarn,          ///< Record a warning.
  kBlockAndKill,  ///< Cancel the user's running jobs and refuse the pending and new ones.
};

/// A spend limit (/cost/quotas/N).
struct Quota {
  std::string user;                         ///< User it applies to.
  double limit_usd = 0;                     ///< Spend limit over the run.
  double warn_pct = 80;                     ///< Warn when spend passes this percentage of the limit.
  double buffer_pct = 0;                    ///< block_and_kill acts when projected spend passes limit x (1 + buffer%).
  QuotaAction action = QuotaAction::kWarn;  ///< What happens past the limit.
};

/// /cost: prices, spot interruptions, quotas and the sample period of the cost series.
struct CostConfig {
  bool enabled = false;                        ///< True when /cost is present.
  std::vector<NodePrice> prices;               ///< Prices; nodes without one cost nothing.
  double spot_interruptions_per_node_day = 0;  ///< Spot reclaim rate of an up spot node.
  double spot_notice_s = 120;                  ///< Notice before a reclaim (AWS 2 min; GCP/Azure 30 s).
  double sample_s = 3600;                      ///< Period of the `costs` series.
  double quota_check_s = 60;                   ///< How often quotas are checked (and projected ahead).
  std::vector<Quota> quotas;                   ///< Per-user quotas.
};

}  // namespace gputwin
