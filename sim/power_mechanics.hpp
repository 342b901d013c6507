// PowerMechanics: what powering cloud nodes up and down takes in the simulator (gpu-domain.md 5.1;
// slurm-semantics.md 4): the cold start of a pool node (provisioning, GPU advertisement, driver, image, slurmd
// registration, health check), the boots that never register (boot_failure_probability, stream
// "autoscaler/boot") and Slurm's ResumeTimeout, which gives a slow or failed resume up; SuspendTimeout for a power
// down; and which nodes start POWERED_DOWN (the pool beyond min_nodes, as CLOUD nodes). Which node to power up or
// down, and when, is the scaling controller's decision (control/scaling_controller), not this.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/rng.hpp"
#include "model/cloud_config.hpp"
#include "model/cluster_state.hpp"

namespace gputwin {

/// The power side of the simulated cluster's nodes.
class PowerMechanics {
 public:
  /// Mechanics of `state`'s nodes; `pool` (may be null: no cloud pool) is the scenario's /autoscaler or
  /// /power_save; `seed` is the scenario's (stream "autoscaler/boot").
  PowerMechanics(const AutoscalerConfig* pool, const ClusterState& state, std::uint64_t seed);

  /// A power-up of node `n` begins. `planned_s`: the operation's planned cold start (no failure); otherwise the
  /// pool's cold start, a drawn boot failure, and ResumeTimeout. Returns its seconds.
  double begin_boot(NodeIndex n, std::optional<double> planned_s);
  /// A power-down of node `n` begins; returns its seconds (SuspendTimeout, the scaler's drain-and-delete time).
  double begin_power_down(NodeIndex n);
  /// True when node `n`'s boot (as begun) registers; false when it fails or ResumeTimeout gives it up.
  [[nodiscard]] bool boot_succeeds(NodeIndex n) const;
  /// Invalidates node `n`'s boot or power-down in progress (the node was taken or reclaimed).
  void cancel(NodeIndex n) { ++generation_[n]; }
  /// Generation of node `n`'s power action: an event of an earlier one is stale.
  [[nodiscard]] std::uint32_t generation(NodeIndex n) const { return generation_[n]; }
  /// Marks node `n` deleted from the cluster (never allocated while POWERED_DOWN) or brought back.
  void set_deleted(NodeIndex n, bool deleted) { deleted_[n] = deleted ? 1 : 0; }
  /// True if node `n` was deleted (and not powered up since).
  [[nodiscard]] bool deleted(NodeIndex n) const { return deleted_[n] != 0; }
  /// True if node `n` belongs to the cloud pool.
  [[nodiscard]] bool in_pool(NodeIndex n) const { return pool_[n] != 0; }
  /// True under Slurm power saving for a pool node: POWERED_DOWN, it stays allocatable (used last) and resumes
  /// for the job it is given.
  [[nodiscard]] bool power_saved(NodeIndex n) const { return power_save_ && pool_[n] != 0; }
  /// True under Slurm power saving (/power_save) rather than an autoscaler.
  [[nodiscard]] bool power_save() const { return power_save_; }
  /// Pool nodes that start POWERED_DOWN (all but the first min_nodes, unless the pool starts up).
  [[nodiscard]] std::vector<NodeIndex> initially_powered_down() const;
  /// Seconds a replacement node takes (a static node the provider reclaimed).
  [[nodiscard]] static double replacement_s() { return ColdStart{}.total_s(); }

 private:
  const AutoscalerConfig* pool_config_;
  Rng boot_rng_;
  bool power_save_ = false;
  std::vector<std::uint8_t> pool_;         // per node: in the cloud pool
  std::vector<std::uint8_t> deleted_;      // per node: deleted (absent) rather than powered off
  std::vector<std::uint8_t> boot_fails_;   // per node: the boot in progress never registers
  std::vector<std::uint8_t> planned_;      // per node: the boot in progress has a planned length
  std::vector<std::uint32_t> generation_;  // per node
};

}  // namespace gputwin
