#include "sim/placement_speed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpu/gpu_catalogue.hpp"
#include "gpu/perf_model_error.hpp"

namespace gputwin {
namespace {

// What NCCL gets from one node's NICs (GB/s per direction), from the node's type (or its GPU's default type).
double node_nic_gbps(const NodeConfig& node) {
  if (const auto type = default_node_type(node.gpu_type)) return type->nics * type->nic_effective_gbps;
  return 8 * 47.0;  // an HGX-class node with 8 NDR NICs (gpu-domain.md 4.2)
}

double node_nvlink_gbps(const NodeConfig& node) {
  if (const auto gpu = find_gpu_model(node.gpu_type)) return gpu->nvlink_gbps_per_direction;
  return 450;
}

std::uint32_t domain_gpus(const NodeConfig& node) {
  if (const auto type = default_node_type(node.gpu_type)) return type->scale_up_domain_gpus;
  return std::max<std::uint32_t>(node.gpus, 1);
}

}  // namespace

PlacementNetwork::PlacementNetwork(const ClusterConfig& cluster, const NetworkConfig& config)
    : cluster_(cluster), config_(config) {
  const SlurmTopology& t = cluster.topology.slurm;
  const std::size_t nodes = cluster.nodes.size();
  leaf_of_node_.assign(nodes, 0);
  if (t.kind == TopologyKind::kTree && !t.switches.empty()) {
    for (const TopologySwitch& s : t.switches) {
      parent_.push_back(s.parent);
      level_.push_back(s.level);
    }
    for (std::size_t n = 0; n < nodes; ++n) leaf_of_node_[n] = n < t.leaf_of_node.size() ? t.leaf_of_node[n] : -1;
  } else if (t.kind == TopologyKind::kBlock && !t.blocks.empty()) {
    // Base blocks as leaves under one root switch.
    const int root = static_cast<int>(t.blocks.size());
    for (std::size_t b = 0; b < t.blocks.size(); ++b) {
      parent_.push_back(root);
      level_.push_back(0);
    }
    parent_.push_back(-1);
    level_.push_back(1);
    for (std::size_t n = 0; n < nodes; ++n) leaf_of_node_[n] = n < t.block_of_node.size() ? t.block_of_node[n] : -1;
  } else {
    parent_.push_back(-1);  // one non-blocking switch
    level_.push_back(0);
  }
  nic_gbps_.resize(nodes);
  uplink_left_.assign(parent_.size(), 1.0);
  for (const DegradedLink& d : config_.degraded) {
    for (std::size_t i = 0; i < t.switches.size() && t.kind == TopologyKind::kTree; ++i) {
      if (t.switches[i].name == d.switch_name) uplink_left_[i] *= d.remaining;
    }
  }
  for (std::size_t n = 0; n < nodes; ++n) {
    nic_gbps_[n] = node_nic_gbps(cluster.nodes[n]);
    for (const DegradedLink& d : config_.degraded) {
      if (d.node_name == cluster.nodes[n].name) nic_gbps_[n] *= d.remaining;
    }
    node_up_.push_back(net_.add_link(nic_gbps_[n], 0));
    node_down_.push_back(net_.add_link(nic_gbps_[n], 0));
  }
  // A switch's uplink carries what its nodes' NICs can send, divided by the oversubscription of its level.
  std::vector<double> below(parent_.size(), 0);
  for (std::size_t n = 0; n < nodes; ++n) {
    if (leaf_of_node_[n] >= 0) below[static_cast<std::size_t>(leaf_of_node_[n])] += nic_gbps_[n];
  }
  std::vector<std::size_t> order(parent_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return level_[a] < level_[b]; });
  for (std::size_t i : order) {
    if (parent_[i] >= 0) below[static_cast<std::size_t>(parent_[i])] += below[i];
  }
  switch_up_.assign(parent_.size(), 0);
  switch_down_.assign(parent_.size(), 0);
  for (std::size_t i = 0; i < parent_.size(); ++i) {
    if (parent_[i] < 0) continue;
    const double ratio = level_[i] < config_.oversubscription.size() ? config_.oversubscription[level_[i]] : 1.0;
    const double capacity = std::max(below[i], 1.0) / ratio * uplink_left_[i];
    switch_up_[i] = net_.add_link(capacity, config_.switch_latency_us);
    switch_down_[i] = net_.add_link(capacity, config_.switch_latency_us);
  }
}

int PlacementNetwork::leaf(NodeIndex n) const {
  return n < leaf_of_node_.size() ? leaf_of_node_[n] : -1;
}

int PlacementNetwork::common_switch(std::span<const NodeIndex> nodes) const {
  if (nodes.empty()) return -1;
  // Walk every leaf up to the level of the highest until all meet.
  std::vector<int> at;
  for (NodeIndex n : nodes) {
    const int l = leaf(n);
    if (l < 0) return -1;
    if (std::find(at.begin(), at.end(), l) == at.end()) at.push_back(l);
  }
  while (at.size() > 1) {
    std::uint32_t lowest = UINT32_MAX;
    for (int s : at) lowest = std::min(lowest, level_[static_cast<std::size_t>(s)]);
    std::vector<int> next;
    for (int s : at) {
      const int up = level_[static_cast<std::size_t>(s)] == lowest ? parent_[static_cast<std::size_t>(s)] : s;
      if (up < 0) return -1;  // no common switch
      if (std::find(next.begin(), next.end(), up) == next.end()) next.push_back(up);
    }
    at.swap(next);
  }
  return at.front();
}

std::uint32_t PlacementNetwork::leaves(std::span<const NodeIndex> nodes) const {
  std::vector<int> seen;
  for (NodeIndex n : nodes) {
    if (std::find(seen.begin(), seen.end(), leaf(n)) == seen.end()) seen.push_back(leaf(n));
  }
  return static_cast<std::uint32_t>(std::max<std::size_t>(seen.size(), 1));
}

CommPath PlacementNetwork::path(std::span<const NodeIndex> nodes, std::uint32_t gpus_per_node,
                                bool oversubscribed) const {
  CommPath p;
  p.nodes = static_cast<std::uint32_t>(nodes.size());
  p.gpus_per_node = std::max<std::uint32_t>(gpus_per_node, 1);
  const NodeConfig& first = cluster_.nodes[nodes.front()];
  p.intra_node_gbps = node_nvlink_gbps(first);
  double nic = nic_gbps_[nodes.front()];
  for (NodeIndex n : nodes) nic = std::min(nic, nic_gbps_[n]);
  // GPUs of the job share the node's NICs in proportion (rail-optimised: one NIC per GPU).
  const std::uint32_t node_gpus = std::max<std::uint32_t>(first.gpus, 1);
  nic *= std::min(1.0, static_cast<double>(p.gpus_per_node) / node_gpus);
  p.scale_up_domain_nodes = std::max<std::uint32_t>(1, domain_gpus(first) / node_gpus);
  if (nodes.size() <= 1) {
    p.inter_node_gbps = nic;
    return p;
  }
  const int top = common_switch(nodes);
  const std::uint32_t top_level = top >= 0 ? level_[static_cast<std::size_t>(top)] : 0;
  // Crossing the uplinks of levels below top_level: the slowest is the most oversubscribed of them.
  double ratio = 1;
  for (std::uint32_t l = 0; oversubscribed && l < top_level && l < config_.oversubscription.size(); ++l) {
    ratio = std::max(ratio, config_.oversubscription[l]);
  }
  // Degraded uplinks on the way up from each node's leaf to the common switch scale what the job gets (the
  // static rule: the worst link bounds the ring).
  double left = 1;
  for (NodeIndex n : nodes) {
    for (int s = leaf(n); s >= 0 && s != top; s = parent_[static_cast<std::size_t>(s)]) {
      left = std::min(left, uplink_left_[static_cast<std::size_t>(s)]);
    }
  }
  p.inter_node_gbps = nic / ratio * (oversubscribed ? left : 1.0);
  p.switch_hops = 2 * top_level + 1;
  p.inter_latency_us = p.switch_hops * config_.switch_latency_us;
  return p;
}

void PlacementNetwork::ring_flows(std::span<const NodeIndex> nodes, std::vector<Flow>& out) const {
  out.clear();
  if (nodes.size() < 2) return;
  std::vector<NodeIndex> ring(nodes.begin(), nodes.end());
  std::stable_sort(ring.begin(), ring.end(), [&](NodeIndex a, NodeIndex b) { return leaf(a) < leaf(b); });
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const NodeIndex from = ring[i];
    const NodeIndex to = ring[(i + 1) % ring.size()];
    Flow f;
    f.route.push_back(node_up_[from]);
    // Up from the source's leaf and down to the destination's, through their lowest common switch.
    int a = leaf(from);
    int b = leaf(to);
    std::vector<LinkId> down;
    while (a != b && a >= 0 && b >= 0) {
      if (level_[static_cast<std::size_t>(a)] <= level_[static_cast<std::size_t>(b)]) {
        f.route.push_back(switch_up_[static_cast<std::size_t>(a)]);
        a = parent_[static_cast<std::size_t>(a)];
      } else {
        down.push_back(switch_down_[static_cast<std::size_t>(b)]);
        b = parent_[static_cast<std::size_t>(b)];
      }
    }
    f.route.insert(f.route.end(), down.rbegin(), down.rend());
    f.route.push_back(node_down_[to]);
    out.push_back(std::move(f));
  }
}

PlacementSpeedModel::PlacementSpeedModel(const ClusterState& state, const PerformanceConfig& config)
    : state_(state), config_(config), network_(state.config(), config.network) {
  if (config.contention == ContentionKind::kAnalytic) contention_ = make_analytic_contention(network_.links());
  if (config.contention == ContentionKind::kSimGrid) {
    SimGridOptions options;
    options.link_pool = std::max<std::size_t>(options.link_pool, network_.links().links.size() + 64);
    contention_ = make_simgrid_contention(network_.links(), options);
  }
}

PlacementSpeedModel::~PlacementSpeedModel() = default;

double PlacementSpeedModel::speed(const Running& r, double rate_gbps) const {
  CommPath actual = r.path;
  actual.inter_node_gbps = std::min(actual.inter_node_gbps, rate_gbps);
  try {
    const double f = speed_factor(r.resolved, actual, r.reference, r.nccl);
    return std::isfinite(f) && f > 0 ? f : 1.0;
  } catch (const PerfModelError&) {
    return 1.0;  // the profile cannot cost this placement (e.g. hybrid tp larger than a node): trace time
  }
}

bool PlacementSpeedModel::resolve(JobIndex job, std::span<const NodeAllocation> allocation, Running& r) {
  if (allocation.empty()) return false;
  const JobSpec& spec = state_.spec(job);
  const std::uint32_t gpn = allocation.front().gpus;
  const auto gpus = static_cast<std::uint32_t>(gpn * allocation.size());
  const ProfileRule* rule = match_profile(config_, gpus, spec.name);
  if (rule == nullptr || gpus == 0) return false;
  r.profile = &rule->profile;
  r.resolved = rule->profile;
  if (auto* hybrid = std::get_if<HybridProfile>(&r.resolved); hybrid != nullptr && hybrid->dp == 0) {
    const std::uint32_t tp_pp = hybrid->tp * hybrid->pp;
    if (tp_pp == 0 || gpus % tp_pp != 0) return false;  // the profile's layout does not fit this job's GPUs
    hybrid->dp = gpus / tp_pp;
  }
  nodes_.clear();
  for (const NodeAllocation& a : allocation) nodes_.push_back(a.node);
  const bool static_rule = contention_ == nullptr;
  r.path = network_.path(nodes_, gpn, static_rule);
  std::vector<NodeIndex> packed(nodes_.size());
  for (std::size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<NodeIndex>(i);
  r.reference = network_.path(packed, gpn, static_rule);
  if (const auto gpu = find_gpu_model(state_.config().nodes[nodes_.front()].gpu_type))
    r.nccl = nccl_options_for_nvlink(gpu->nvlink_generation);
  return true;
}

std::optional<GpuLoad> PlacementSpeedModel::reference_load(JobIndex job, std::span<const NodeAllocation> allocation) {
  Running r;
  if (!resolve(job, allocation, r)) return std::nullopt;
  try {
    const StepBreakdown b = step_breakdown(r.resolved, r.reference, r.nccl);
    if (!(b.step_s > 0)) return std::nullopt;
    const auto gpus = static_cast<std::uint32_t>(allocation.front().gpus * allocation.size());
    GpuLoad load;
    load.compute_share = std::clamp(b.compute_s / b.step_s, 0.0, 1.0);
    load.nvlink_bytes_per_s = nvlink_bytes_per_step(r.resolved, gpus, allocation.front().gpus) / b.step_s;
    load.job_cross_leaf_bytes_per_s = cross_leaf_bytes_per_step(r.resolved, gpus, network_.leaves(nodes_)) / b.step_s;
    return load;
  } catch (const PerfModelError&) {
    return std::nullopt;  // as in speed(): a profile that cannot cost this placement runs at its trace time
  }
}

double PlacementSpeedModel::start(JobIndex job, std::span<const NodeAllocation> allocation) {
  Running r;
  if (!resolve(job, allocation, r)) return 1.0;
  double rate = std::numeric_limits<double>::infinity();
  if (contention_ != nullptr && nodes_.size() > 1) {
    network_.ring_flows(nodes_, flows_);
    contention_->add_job(job, flows_);
    r.contended = true;
    rate = contention_->rate_gbps(job);  // its slowest ring flow, after sharing and degraded links
  }
  const double result = speed(r, rate);
  const bool contended = r.contended;
  running_.emplace(job, std::move(r));
  if (contended) {
    for (JobKey other : contention_->changed_jobs()) {
      const auto it = running_.find(static_cast<JobIndex>(other));
      if (it != running_.end()) changes_.emplace_back(it->first, speed(it->second, contention_->rate_gbps(other)));
    }
  }
  return result;
}

void PlacementSpeedModel::stop(JobIndex job) {
  const auto it = running_.find(job);
  if (it == running_.end()) return;
  const bool contended = it->second.contended;
  running_.erase(it);
  if (!contended) return;
  contention_->remove_job(job);
  for (JobKey other : contention_->changed_jobs()) {
    const auto o = running_.find(static_cast<JobIndex>(other));
    if (o != running_.end()) changes_.emplace_back(o->first, speed(o->second, contention_->rate_gbps(other)));
  }
}

void PlacementSpeedModel::take_changes(std::vector<std::pair<JobIndex, double>>& out) {
  out.insert(out.end(), changes_.begin(), changes_.end());
  changes_.clear();
}

}  // namespace gputwin
