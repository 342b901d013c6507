#include "sim/cost_meter.hpp"

#include <algorithm>
#include <cmath>

#include "sim/sim_world.hpp"

namespace gputwin {

namespace {

std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& index, std::vector<std::string>& names,
                     const std::string& name) {
  auto [it, added] = index.emplace(name, static_cast<std::uint32_t>(names.size()));
  if (added) names.push_back(name);
  return it->second;
}

}  // namespace

CostMeter::CostMeter(const CostConfig& config, const ClusterState& state, std::uint64_t seed)
    : config_(config),
      state_(state),
      spot_rng_(Rng::stream(seed, "cost/spot")),
      price_(state.node_count(), 0),
      model_(state.node_count(), PurchaseModel::kOnDemand),
      spot_generation_(state.node_count(), 0) {
  for (const NodePrice& p : config.prices) {
    for (std::uint32_t n : p.nodes) {
      price_[n] = p.usd_per_node_hour;
      model_[n] = p.model;
      if (p.model == PurchaseModel::kSpot) spot_nodes_.push_back(n);
    }
  }
  std::sort(spot_nodes_.begin(), spot_nodes_.end());
  std::unordered_map<std::string, std::uint32_t>& users = user_index_;
  std::unordered_map<std::string, std::uint32_t>& accounts = account_index_;
  job_user_.resize(state.job_count());
  job_account_.resize(state.job_count());
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    job_user_[j] = intern(users, users_, state.spec(j).user);
    job_account_[j] = intern(accounts, accounts_, state.spec(j).account);
  }
  for (const Quota& q : config.quotas) intern(users, users_, q.user);
  user_acct_.resize(users_.size());
  account_acct_.resize(accounts_.size());
  for (const Quota& q : config.quotas) series_users_.push_back(users.at(q.user));
  spot_rate_per_s_ = config.spot_interruptions_per_node_day / 86400.0;
}

bool CostMeter::billed(NodeIndex node, NodeCondition condition) const {
  if (price_[node] <= 0) return false;
  return model_[node] == PurchaseModel::kReserved || condition != NodeCondition::kPoweredDown;
}

void CostMeter::on_jobs_added() {
  for (auto j = static_cast<JobIndex>(job_user_.size()); j < state_.job_count(); ++j) {
    job_user_.push_back(intern(user_index_, users_, state_.spec(j).user));
    job_account_.push_back(intern(account_index_, accounts_, state_.spec(j).account));
  }
  user_acct_.resize(users_.size());
  account_acct_.resize(accounts_.size());
}

void CostMeter::start(SimWorld& world) {
  const SimTime now = world.now();
  cluster_.since = used_.since = now;
  for (Account& a : user_acct_) a.since = now;
  for (Account& a : account_acct_) a.since = now;
  double burn = 0;
  for (NodeIndex n = 0; n < state_.node_count(); ++n) {
    if (billed(n, world.state().node_condition(n))) burn += price_[n];
  }
  cluster_.burn = burn;
  world.push_cost(now, target(kSample, 0), 0);
}

void CostMeter::start_spot(SimWorld& world) {
  arm_spot(world);
}

void CostMeter::arm_spot(SimWorld& world) {
  if (spot_nodes_.empty() || spot_rate_per_s_ <= 0) return;
  const double rate = spot_rate_per_s_ * static_cast<double>(spot_nodes_.size());
  world.push_cost(world.now() + from_seconds_f(spot_rng_.exponential(1 / rate)), target(kSpot, 0), 0);
}

double CostMeter::job_burn(JobIndex job) const {
  const auto& nodes = state_.config().nodes;
  double burn = 0;
  for (const NodeAllocation& a : state_.allocation(job)) {
    const NodeConfig& n = nodes[a.node];
    const double share = n.gpus > 0 ? static_cast<double>(a.gpus) / n.gpus
                                    : static_cast<double>(a.cpus) / std::max<std::uint32_t>(n.cpus, 1);
    burn += price_[a.node] * share;
  }
  return burn;
}

void CostMeter::on_job_start(SimTime now, JobIndex job) {
  const double burn = job_burn(job);
  if (burn == 0) return;
  user_acct_[job_user_[job]].change(now, burn);
  account_acct_[job_account_[job]].change(now, burn);
  used_.change(now, burn);
}

void CostMeter::on_job_end(SimTime now, JobIndex job) {
  const double burn = job_burn(job);
  if (burn == 0) return;
  user_acct_[job_user_[job]].change(now, -burn);
  account_acct_[job_account_[job]].change(now, -burn);
  used_.change(now, -burn);
}

void CostMeter::on_node_condition(SimTime now, NodeIndex node, NodeCondition before, NodeCondition after) {
  const bool was = billed(node, before);
  const bool is = billed(node, after);
  if (was != is) cluster_.change(now, is ? price_[node] : -price_[node]);
}

Spend CostMeter::spend(std::string_view user, SimTime now) const {
  const auto it = user_index_.find(std::string(user));
  if (it == user_index_.end()) return {};
  const Account& a = user_acct_[it->second];
  return Spend{a.at(now), a.burn};
}

void CostMeter::append_sample(SimTime now, std::vector<CostSample>& costs) const {
  costs.push_back({now, "cluster", cluster_.burn, cluster_.at(now)});
  costs.push_back({now, "idle", cluster_.burn - used_.burn, cluster_.at(now) - used_.at(now)});
  for (std::size_t a = 0; a < accounts_.size(); ++a)
    costs.push_back({now, "account:" + accounts_[a], account_acct_[a].burn, account_acct_[a].at(now)});
  for (std::uint32_t u : series_users_)
    costs.push_back({now, "user:" + users_[u], user_acct_[u].burn, user_acct_[u].at(now)});
}

void CostMeter::on_event(SimWorld& world, std::uint64_t tgt, std::uint32_t generation) {
  const auto kind = static_cast<Kind>(tgt >> 56);
  const auto index = static_cast<NodeIndex>(tgt & ((1ULL << 56) - 1));
  switch (kind) {
    case kSample:
      append_sample(world.now(), costs_);
      world.push_cost(world.now() + from_seconds_f(config_.sample_s), target(kSample, 0), 0);
      break;
    case kSpot: {
      // Thinning: a reclaim drawn for a node that is not up (or already being reclaimed) does nothing.
      const NodeIndex n = spot_nodes_[static_cast<std::size_t>(
          spot_rng_.uniform_int(0, static_cast<std::int64_t>(spot_nodes_.size()) - 1))];
      if (world.state().node_condition(n) == NodeCondition::kNone) {
        ++spot_interruptions_;
        world.push_cost(world.now() + from_seconds_f(config_.spot_notice_s), target(kReclaim, n),
                        ++spot_generation_[n]);
      }
      arm_spot(world);
      break;
    }
    case kReclaim:
      if (generation == spot_generation_[index] && world.state().node_condition(index) == NodeCondition::kNone)
        world.reclaim_node(index);
      break;
  }
}

void CostMeter::finish(SimTime horizon, CloudLog& log) {
  close(horizon, std::move(costs_), log);
}

void CostMeter::so_far(SimTime now, CloudLog& log) const {
  close(now, costs_, log);
}

void CostMeter::close(SimTime horizon, std::vector<CostSample> costs, CloudLog& log) const {
  append_sample(horizon, costs);
  std::vector<std::uint8_t> sampled(users_.size(), 0);
  for (std::uint32_t u : series_users_) sampled[u] = 1;
  for (std::size_t u = 0; u < users_.size(); ++u) {
    if (sampled[u]) continue;  // quota users are in the series already
    const double spent = user_acct_[u].at(horizon);
    if (spent > 0) costs.push_back({horizon, "user:" + users_[u], user_acct_[u].burn, spent});
  }
  log.has_cost = true;
  log.costs = std::move(costs);
  log.cost_total_usd = cluster_.at(horizon);
  log.cost_idle_usd = cluster_.at(horizon) - used_.at(horizon);
  log.spot_interruptions = spot_interruptions_;
}

}  // namespace gputwin
