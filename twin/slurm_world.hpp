// SlurmWorld: the World of a real cluster. The health, scaling, quota and priority controllers run on it unchanged:
// it shows them the mirrored cluster (ClusterState rebuilt at every poll), tells them what changed, and carries
// their actions out through slurmrestd (node updates on v0.0.39+, `scontrol` on 22.05's v0.0.38) or, in dry-run
// (the default), only records what they would do. slurmctld places jobs itself: the scheduling actions
// (start_job, annotate_job, preempt_job) are not the twin's to take and do nothing here.
//
// Every action is
// - idempotent: draining a drained node, resuming a node in service, cancelling an ended job are no-ops (skipped);
// - bounded: at most `max_nodes_out_pct` of the nodes held out of service (drained, down, failed) at once, and at
//   most `max_actions_per_minute` actions in any minute; past either it is refused, not queued;
// - logged: an ActionRecord with its reason, the call and its outcome (dry-run, done, skipped, refused, failed).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "control/control_plane.hpp"
#include "model/cloud_config.hpp"
#include "results/recorder.hpp"
#include "twin/mirror.hpp"
#include "twin/twin_log.hpp"
#include "world/world.hpp"

namespace gputwin {

class SlurmrestdClient;

/// How actions reach a real cluster (SlurmrestdClient and scontrol; tests give a recording fake). Each returns the
/// call it made ("POST /slurm/v0.0.44/node/gpu01 {...}") and throws std::runtime_error on failure.
class ClusterActions {
 public:
  virtual ~ClusterActions() = default;
  /// Sets node `node` to `state` (DRAIN, RESUME, DOWN, FAIL, POWER_UP, POWER_DOWN) with `reason`.
  virtual std::string update_node(const std::string& node, const std::string& state, const std::string& reason) = 0;
  /// Reboots `node` once idle (`scontrol reboot ASAP nextstate=RESUME reason=R node`).
  virtual std::string reboot_node(const std::string& node, const std::string& reason) = 0;
  /// Cancels job `job_id`.
  virtual std::string cancel_job(std::uint64_t job_id) = 0;
  /// Requeues job `job_id` (`scontrol requeue`).
  virtual std::string requeue_job(std::uint64_t job_id) = 0;
  /// Updates job `job_id` with the JSON body `update` ({"hold": true}, {"priority": N}).
  virtual std::string update_job(std::uint64_t job_id, const std::string& update) = 0;
};

/// ClusterActions over slurmrestd, with `scontrol` for what the API version cannot do (node updates before v0.0.39,
/// reboots, requeues).
class SlurmrestdActions final : public ClusterActions {
 public:
  /// Actions through `client` (connected); `scontrol` is the command to run ("" when Slurm's client is absent).
  SlurmrestdActions(SlurmrestdClient& client, std::string scontrol);
  std::string update_node(const std::string& node, const std::string& state, const std::string& reason) override;
  std::string reboot_node(const std::string& node, const std::string& reason) override;
  std::string cancel_job(std::uint64_t job_id) override;
  std::string requeue_job(std::uint64_t job_id) override;
  std::string update_job(std::uint64_t job_id, const std::string& update) override;
  /// True when node updates go through scontrol (v0.0.38).
  [[nodiscard]] bool nodes_by_scontrol() const;

 private:
  std::string scontrol(const std::vector<std::string>& args);
  SlurmrestdClient& client_;
  std::string scontrol_;
};

/// The bounds of a twin's actions.
struct ActionLimits {
  double max_nodes_out_pct = 10;              ///< Most nodes held out of service at once, percent of the cluster.
  std::uint32_t max_actions_per_minute = 10;  ///< Most actions in any 60 s.
};

/// The World of a real cluster.
class SlurmWorld final : public World {
 public:
  /// World over `mirror`, acting through `actions` (may be null: dry-run only) when `act`, recording in `log`.
  SlurmWorld(const Mirror& mirror, ClusterActions* actions, bool act, ActionLimits limits, TwinLog& log);

  /// Sets the controllers (not owned). They keep per-node tables of the nodes there are now: nodes that join later
  /// are shown in the state but not reported to them.
  void set_control_plane(ControlPlane* plane) {
    plane_ = plane;
    controller_nodes_ = static_cast<NodeIndex>(state_->node_count());
  }
  /// Sets the prices that turn mirrored GPU time into spend (user_spend); none: spend is zero.
  void set_prices(const CostConfig* cost) { cost_ = cost; }
  /// Adopts the mirror's latest poll: rebuilds the state, tells the controllers what changed (`changes`), turns
  /// nodes newly DOWN and not responding, and "XID N" in a node's comment or reason, into health events (an XID whose
  /// catalogue effect is at most "restart the application" leaves the node alone), fires due timers. The state keeps
  /// its address, so a controller may hold a reference to it.
  void observe(const PollChanges& changes);
  /// Health events from outside (a DCGM or gpud feed, a test): delivered at the next observe().
  void inject(const HealthEvent& event) { injected_.push_back(event); }

  // ---- World ----
  [[nodiscard]] SimTime now() const override { return now_; }
  [[nodiscard]] const ClusterState& state() const override { return *state_; }
  [[nodiscard]] Spend user_spend(std::string_view user) const override;
  void set_timer(ControllerId controller, TimerId timer, SimTime at) override;
  void expect_activity(SimTime) override {}
  void expect_node_return(SimTime) override {}
  void start_job(JobIndex, std::span<const NodeAllocation>, SimTime) override {}
  void annotate_job(JobIndex, std::uint32_t, PendingReason) override {}
  void reject_job(JobIndex job, PendingReason reason) override;
  void preempt_job(JobIndex, SimTime, bool, JobIndex) override {}
  void cancel_job(JobIndex job, PendingReason reason) override;
  void hold_job(JobIndex job) override;
  void release_job(JobIndex job) override;
  void set_job_priority(JobIndex job, std::uint32_t priority) override;
  void drain_node(NodeIndex n, std::string_view reason) override;
  void fail_node(NodeIndex n, std::string_view reason) override;
  std::uint32_t down_nodes(std::span<const NodeIndex> nodes, InterruptionCause cause, std::string_view reason) override;
  using World::down_node;
  void resume_node(NodeIndex n) override;
  std::uint32_t requeue_jobs_on(NodeIndex n, InterruptionCause cause, std::string_view reason) override;
  std::uint32_t reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                             const RebootOptions& options) override;
  using World::reboot_node;
  void reset_gpus(NodeIndex n, std::string_view reason) override;
  void send_to_repair(NodeIndex n, std::string_view reason) override;
  void power_up_node(NodeIndex n, std::optional<double> duration_s) override;
  void power_down_node(NodeIndex n) override;
  void delete_node(NodeIndex n, std::string_view reason) override;

  /// The controller whose callback is running (names the actions it takes).
  void set_acting(std::string controller) { acting_ = std::move(controller); }

 private:
  // Records an action; carries it out with `call` when acting and within bounds. `takes_node_out` counts against
  // the nodes-out bound. Returns true if it was (or would be, in dry-run) carried out.
  bool act(const std::string& action, const std::string& target, std::string_view reason,
           std::optional<NodeIndex> takes_out, const std::function<std::string()>& call);
  void node_update(NodeIndex n, const std::string& action, const std::string& state, std::string_view reason,
                   bool takes_node_out);
  void job_update(JobIndex job, const std::string& action, const std::string& update, std::string_view reason);
  [[nodiscard]] std::uint32_t nodes_out() const;
  void deliver_health_events(const std::vector<NodeCondition>& before);
  void fire_timers();
  static std::string fmt_pct(double pct);

  const Mirror& mirror_;
  ClusterActions* actions_;
  bool act_;
  ActionLimits limits_;
  TwinLog& log_;
  ControlPlane* plane_ = nullptr;
  const CostConfig* cost_ = nullptr;
  // Rebuilds the state from the mirror in place (same address) with the nodes' conditions.
  void rebuild_state();
  std::optional<ClusterState> state_;
  NodeIndex controller_nodes_ = 0;  // nodes the controllers know (set_control_plane)
  std::set<NodeIndex> taken_out_;   // nodes taken out since the last poll
  RunRecorder recorder_{false, false};
  SimTime now_ = 0;
  std::string acting_;
  std::deque<std::int64_t> recent_actions_;   // times of actions carried out or dry-run, last 60 s
  std::map<std::string, std::int64_t> done_;  // action + target -> time, idempotence across polls
  std::vector<std::uint32_t> seen_xid_;       // per node: the XID already reported (0: none)
  std::vector<HealthEvent> injected_;
  std::vector<NodeIndex> injected_recoveries_;  // GPU resets: done by the next poll
  std::map<std::pair<ControllerId, TimerId>, SimTime> timers_;
};

}  // namespace gputwin
