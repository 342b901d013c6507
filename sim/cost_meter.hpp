// CostMeter: what a cluster costs while it runs and who spends it, and the provider's spot reclaims
// (gpu-domain.md 5.2). These are the world's mechanics; what to do about spend (quotas) is the quota controller's.
//
// A node is billed at its price per node-hour while it exists: reserved nodes always, on-demand and spot nodes
// unless POWERED_DOWN (a node being repaired still costs). A running job is charged its share of each of its
// nodes (GPUs held / GPUs of the node; CPUs for CPU-only nodes); what no job uses is "idle". Spend is kept
// incrementally (a burn rate per scope and the time it last changed), so a job start or end costs O(1) per node
// and per scope. Every `sample_s` the cluster, idle and per-account series get a point; final totals per user
// and account close the series. Controllers read a user's spend through World::user_spend.
//
// Spot nodes are reclaimed at `spot_interruptions_per_node_day` with `spot_notice_s` of notice: their jobs end
// NODE_FAIL and are requeued, and the node goes away (the scaling controller may power it up again).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/rng.hpp"
#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "model/cluster_state.hpp"
#include "world/world.hpp"

namespace gputwin {

class SimWorld;
enum class NodeCondition : std::uint8_t;

/// The cost meter of one run (see the file comment).
class CostMeter {
 public:
  /// Meter of `state`'s nodes and jobs per `config`; `seed` is the scenario's (stream "cost/spot").
  CostMeter(const CostConfig& config, const ClusterState& state, std::uint64_t seed);

  /// Arms the sampling events.
  void start(SimWorld& world);
  /// Jobs were appended to the job table (a live run's submit): their users and accounts are noted.
  void on_jobs_added();
  /// Arms the spot reclaim events (after the quota controller's first check, as the run has always ordered them).
  void start_spot(SimWorld& world);
  /// A cost event fired.
  void on_event(SimWorld& world, std::uint64_t target, std::uint32_t generation);
  /// A job started: its users and accounts begin to pay for its share of its nodes.
  void on_job_start(SimTime now, JobIndex job);
  /// A job stopped running.
  void on_job_end(SimTime now, JobIndex job);
  /// A node's condition changed (powered down or up).
  void on_node_condition(SimTime now, NodeIndex node, NodeCondition before, NodeCondition after);
  /// `user`'s spend at `now` and current burn rate (zero for a user with no job).
  [[nodiscard]] Spend spend(std::string_view user, SimTime now) const;
  /// Closes the series at `horizon` and fills `log`.
  void finish(SimTime horizon, CloudLog& log);
  /// Fills `log` as finish(now, log) would, leaving the meter running (a live run's copy).
  void so_far(SimTime now, CloudLog& log) const;

 private:
  enum Kind : std::uint64_t { kSample = 1, kSpot = 3, kReclaim = 4 };
  struct Account {
    double burn = 0;   // USD per hour now
    double spent = 0;  // USD up to `since`
    SimTime since = 0;
    [[nodiscard]] double at(SimTime t) const { return spent + burn * to_seconds_f(t - since) / 3600.0; }
    void change(SimTime t, double delta) {
      spent = at(t);
      since = t;
      burn += delta;
    }
  };
  static std::uint64_t target(Kind kind, std::uint64_t index) {
    return (static_cast<std::uint64_t>(kind) << 56) | index;
  }
  double job_burn(JobIndex job) const;
  bool billed(NodeIndex node, NodeCondition condition) const;
  /// Appends every scope's point at `now` to `costs`.
  void append_sample(SimTime now, std::vector<CostSample>& costs) const;
  /// `costs` closed at `horizon` (a last point per scope, totals of users without a series) into `log`.
  void close(SimTime horizon, std::vector<CostSample> costs, CloudLog& log) const;
  void arm_spot(SimWorld& world);

  const CostConfig& config_;
  const ClusterState& state_;
  Rng spot_rng_;
  std::vector<double> price_;                          // per node, USD per hour
  std::vector<PurchaseModel> model_;                   // per node
  std::vector<std::uint32_t> job_user_, job_account_;  // per job
  std::vector<std::string> users_, accounts_;
  std::vector<Account> user_acct_, account_acct_;
  Account cluster_, used_;                                        // all billed nodes; the part jobs use
  std::unordered_map<std::string, std::uint32_t> user_index_;     // user name -> index in users_
  std::unordered_map<std::string, std::uint32_t> account_index_;  // account name -> index in accounts_
  std::vector<std::uint32_t> series_users_;                       // users with their own cost series (quota users)
  std::vector<NodeIndex> spot_nodes_;
  std::vector<std::uint32_t> spot_generation_;  // per node
  double spot_rate_per_s_ = 0;
  std::vector<CostSample> costs_;         // the cost series so far
  std::uint64_t spot_interruptions_ = 0;  // spot nodes reclaimed so far
};

}  // namespace gputwin
