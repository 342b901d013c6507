#include "sim/power_mechanics.hpp"

#include <algorithm>

namespace gputwin {

PowerMechanics::PowerMechanics(const AutoscalerConfig* pool, const ClusterState& state, std::uint64_t seed)
    : pool_config_(pool),
      boot_rng_(Rng::stream(seed, "autoscaler/boot")),
      power_save_(pool != nullptr && pool->slurm_power_save),
      pool_(state.node_count(), 0),
      deleted_(state.node_count(), 0),
      boot_fails_(state.node_count(), 0),
      planned_(state.node_count(), 0),
      generation_(state.node_count(), 0) {
  if (pool != nullptr) {
    for (std::uint32_t n : pool->nodes) pool_[n] = 1;
  }
}

std::vector<NodeIndex> PowerMechanics::initially_powered_down() const {
  std::vector<NodeIndex> nodes;
  if (pool_config_ == nullptr || !pool_config_->start_powered_down) return nodes;
  for (std::size_t i = pool_config_->min_nodes; i < pool_config_->nodes.size(); ++i)
    nodes.push_back(pool_config_->nodes[i]);
  return nodes;
}

double PowerMechanics::begin_boot(NodeIndex n, std::optional<double> planned_s) {
  ++generation_[n];
  deleted_[n] = 0;
  planned_[n] = planned_s ? 1 : 0;
  boot_fails_[n] = 0;
  if (planned_s) return *planned_s;
  const AutoscalerConfig& c = *pool_config_;
  // A node that will never register is given up at ResumeTimeout (when there is one), a slow one at the timeout.
  boot_fails_[n] = c.boot_failure_probability > 0 && boot_rng_.uniform() < c.boot_failure_probability;
  double boot_s = c.cold_start.total_s();
  if (c.resume_timeout_s > 0) boot_s = boot_fails_[n] ? c.resume_timeout_s : std::min(boot_s, c.resume_timeout_s);
  return boot_s;
}

bool PowerMechanics::boot_succeeds(NodeIndex n) const {
  if (planned_[n]) return true;
  const AutoscalerConfig& c = *pool_config_;
  // ResumeTimeout: a node slower than the limit is set DOWN+POWERED_DOWN (slurm-semantics.md 4).
  const bool too_slow = c.resume_timeout_s > 0 && c.cold_start.total_s() > c.resume_timeout_s;
  return !too_slow && !boot_fails_[n];
}

double PowerMechanics::begin_power_down(NodeIndex n) {
  ++generation_[n];
  return pool_config_ != nullptr ? pool_config_->scale_down_s : 0;
}

}  // namespace gputwin
