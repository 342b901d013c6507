// What the cloud side of a run reports: scaling actions of the autoscaler, the cost series, and quota actions.
// The controllers and the simulator fill it (control/scaling_controller, control/quota_controller,
// control/operations_controller, sim/cost_meter); the results store writes it (tables scaling, costs, quota_events,
// operations) and the summary reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/fault_log.hpp"
#include "engine/sim_time.hpp"

namespace gputwin {

/// One scaling action, for the `scaling` table.
struct ScalingRecord {
  /// What happened.
  enum class Action : std::uint8_t { kCreate, kReady, kBootFailed, kRemove, kRemoved, kReclaimed };
  SimTime time = 0;                 ///< When.
  std::uint32_t node = 0;           ///< Node index.
  Action action = Action::kCreate;  ///< What.
  std::uint32_t demand =
      0;  ///< Nodes of its shape pending jobs needed at the decision (create/remove; NULL otherwise).
};

/// Name of a scaling action ("create", "ready", "boot_failed", "remove", "removed", "reclaimed": a spot node taken).
inline std::string_view to_string(ScalingRecord::Action action) {
  switch (action) {
    case ScalingRecord::Action::kCreate:
      return "create";
    case ScalingRecord::Action::kReady:
      return "ready";
    case ScalingRecord::Action::kBootFailed:
      return "boot_failed";
    case ScalingRecord::Action::kRemove:
      return "remove";
    case ScalingRecord::Action::kRemoved:
      return "removed";
    case ScalingRecord::Action::kReclaimed:
      return "reclaimed";
  }
  return "unknown";
}

/// One point of the cost series: a scope's burn rate and spend so far.
struct CostSample {
  SimTime time = 0;           ///< When.
  std::string scope;          ///< "cluster", "idle", "user:NAME" or "account:NAME".
  double burn_usd_per_h = 0;  ///< Spend rate at that time.
  double total_usd = 0;       ///< Spend since t = 0.
};

/// A quota action.
struct QuotaEvent {
  SimTime time = 0;          ///< When.
  std::string user;          ///< The user.
  std::string action;        ///< "warn", "block", "cancel" (a running job), "refuse" (a pending or new job).
  std::uint64_t job_id = 0;  ///< The job cancelled or refused (0 for warn and block).
  double spend_usd = 0;      ///< The user's spend at that time.
  double projected_usd = 0;  ///< The spend projected to the next check.
};

/// One cluster operation as it happened (table `operations`).
struct OperationRecord {
  SimTime time = 0;  ///< When this step happened.
  std::string
      action;  ///< "add_nodes", "remove_nodes", "update_image", "attach_volume", "maintenance", "restart_workers".
  std::string step;                 ///< "start", "node_ready", "node_removed", "node_restarted", "node_back".
  std::uint32_t node = UINT32_MAX;  ///< The node of a per-node step (UINT32_MAX: the whole operation).
  std::string name;                 ///< Image or volume.
  std::uint32_t jobs_killed = 0;    ///< Job runs the step ended.
};

/// Everything the cloud side recorded in one run.
struct CloudLog {
  std::vector<ScalingRecord> scaling;             ///< Autoscaler actions, in time order.
  double pool_node_hours = 0;                     ///< Node-hours the autoscaler's pool was up (booting included).
  double cold_start_s = 0;                        ///< Cold start of a new node.
  std::vector<CostSample> costs;                  ///< Cost series (every sample period, and final totals per scope).
  std::vector<QuotaEvent> quota_events;           ///< Quota warnings, blocks and cancellations.
  bool has_cost = false;                          ///< A cost model ran.
  double cost_total_usd = 0;                      ///< Spend of the whole cluster.
  double cost_idle_usd = 0;                       ///< Spend of up nodes no job used (and reserved nodes not up).
  std::uint64_t spot_interruptions = 0;           ///< Spot nodes reclaimed.
  std::vector<InterruptionRecord> interruptions;  ///< Job runs ended by spot reclaims, operations, failed resumes.
  std::vector<OperationRecord> operations;        ///< Cluster operations, in time order.
};

}  // namespace gputwin
