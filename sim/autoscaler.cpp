#include "sim/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "scheduler/node_selection.hpp"
#include "sim/sim_world.hpp"

namespace gputwin {

Autoscaler::Autoscaler(const AutoscalerConfig& config, const ClusterState& state, std::uint64_t seed)
    : config_(config),
      state_(state),
      boot_rng_(Rng::stream(seed, "autoscaler/boot")),
      pool_index_(state.node_count(), -1),
      pool_(config.nodes) {
  const auto& nodes = state.config().nodes;
  const auto shape_of = [](const NodeConfig& n) { return Shape{n.cpus, n.gpus, n.memory_mb}; };
  const auto smaller = [](const Shape& a, const Shape& b) {
    return std::tie(a.gpus, a.cpus, a.mem_mb) < std::tie(b.gpus, b.cpus, b.mem_mb);
  };
  // The pool's distinct shapes, smallest first, so a job maps to the smallest node that fits it ("sizes by the
  // largest pending job"); every node's shape is looked up once.
  for (NodeIndex n : pool_) shapes_.push_back(shape_of(nodes[n]));
  std::sort(shapes_.begin(), shapes_.end(), smaller);
  shapes_.erase(std::unique(shapes_.begin(), shapes_.end(),
                            [&](const Shape& a, const Shape& b) { return !smaller(a, b) && !smaller(b, a); }),
                shapes_.end());
  node_shape_.assign(nodes.size(), -1);
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    const Shape shape = shape_of(nodes[n]);
    const auto it = std::lower_bound(shapes_.begin(), shapes_.end(), shape, smaller);
    if (it != shapes_.end() && !smaller(shape, *it)) node_shape_[n] = static_cast<std::int32_t>(it - shapes_.begin());
  }
  nodes_.resize(pool_.size());
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    pool_index_[pool_[i]] = static_cast<std::int32_t>(i);
    nodes_[i].shape = static_cast<std::uint32_t>(node_shape_[pool_[i]]);
  }
  demand_.resize(shapes_.size());
  supply_.resize(shapes_.size());
  // Capacity per shape: its available static nodes plus its pool nodes, the pool bounded by max_nodes.
  capacity_.assign(shapes_.size(), 0);
  std::vector<std::uint32_t> pool_of_shape(shapes_.size(), 0);
  for (const PoolNode& p : nodes_) ++pool_of_shape[p.shape];
  for (std::size_t s = 0; s < shapes_.size(); ++s) capacity_[s] = std::min(pool_of_shape[s], config.max_nodes);
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    if (pool_index_[n] < 0 && nodes[n].available && node_shape_[n] >= 0) ++capacity_[node_shape_[n]];
  }
}

void Autoscaler::start(SimWorld& world) {
  // The pool starts with min_nodes up (the first ones) and the rest POWERED_DOWN (not yet created).
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    PoolNode& p = nodes_[i];
    p.idle_since = world.now();
    p.up_since = world.now();
    if (i < config_.min_nodes || !config_.start_powered_down) continue;
    p.power = Power::kOff;
    world.set_node_condition(pool_[i], NodeCondition::kPoweredDown);
  }
  world.push_autoscaler(world.now(), target(kPoll, 0), 0);
}

void Autoscaler::on_event(SimWorld& world, std::uint64_t tgt, std::uint32_t generation) {
  const auto kind = static_cast<Kind>(tgt >> 56);
  const std::uint64_t index = tgt & ((1ULL << 56) - 1);
  PoolNode* p = kind == kPoll ? nullptr : &nodes_[index];
  switch (kind) {
    case kPoll:
      poll(world);
      world.push_autoscaler(world.now() + from_seconds_f(config_.poll_s), target(kPoll, 0), 0);
      break;
    case kResume:
      resume_requested(world, index);
      break;
    case kBooted: {
      if (p->generation != generation || p->power != Power::kBooting) return;
      const NodeIndex node = pool_[index];
      // ResumeTimeout: a node slower than the limit is set DOWN+POWERED_DOWN (slurm-semantics.md 4).
      const bool too_slow = config_.resume_timeout_s > 0 && config_.cold_start.total_s() > config_.resume_timeout_s;
      if (too_slow || p->boot_fails) {
        // The node never registers: it is deleted (it cost its boot) and the next decision may try again. Jobs
        // waiting CONFIGURING for it are requeued (requeue_on_resume_failure).
        world.fail_jobs_on(node, InterruptionCause::kResumeFailure);
        node_seconds_ += to_seconds_f(world.now() - p->up_since);
        p->power = Power::kOff;
        world.set_node_condition(node, NodeCondition::kPoweredDown);
        records_.push_back({world.now(), node, ScalingRecord::Action::kBootFailed, 0});
        return;
      }
      p->power = Power::kUp;
      p->idle_since = world.now();
      world.set_node_condition(node, NodeCondition::kNone);
      records_.push_back({world.now(), node, ScalingRecord::Action::kReady, 0});
      break;
    }
    case kRemoved: {
      if (p->generation != generation || p->power != Power::kRemoving) return;
      node_seconds_ += to_seconds_f(world.now() - p->up_since);
      p->power = Power::kOff;
      world.set_node_condition(pool_[index], NodeCondition::kPoweredDown);
      records_.push_back({world.now(), pool_[index], ScalingRecord::Action::kRemoved, 0});
      break;
    }
  }
}

int Autoscaler::shape_for(JobIndex job) const {
  const SelectRequest r = select_request(state_.spec(job));
  const std::uint32_t nodes = std::max<std::uint32_t>(r.nodes, 1);
  const std::uint32_t cpus_per_node = (r.cpus + nodes - 1) / nodes;
  for (std::size_t s = 0; s < shapes_.size(); ++s) {
    const Shape& shape = shapes_[s];
    if (shape.gpus >= r.gpus_per_node && shape.mem_mb >= r.mem_per_node_mb &&
        (r.nodes == 0 || shape.cpus >= cpus_per_node))
      return static_cast<int>(s);
  }
  return -1;
}

std::uint32_t Autoscaler::nodes_needed(JobIndex job, const Shape& shape) const {
  const SelectRequest r = select_request(state_.spec(job));
  if (r.nodes > 0) return r.nodes;
  return std::max<std::uint32_t>(1, (r.cpus + shape.cpus - 1) / std::max<std::uint32_t>(shape.cpus, 1));
}

void Autoscaler::request_resume(SimWorld& world, NodeIndex n, JobIndex job) {
  const auto index = static_cast<std::size_t>(pool_index_[n]);
  if (nodes_[index].resume_demand != 0) return;  // already requested for another job
  nodes_[index].resume_demand = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(state_.allocation(job).size()));
  world.push_autoscaler(world.now(), target(kResume, index), 0);
}

void Autoscaler::resume_requested(SimWorld& world, std::size_t index) {
  PoolNode& p = nodes_[index];
  if (p.resume_demand == 0) return;
  if (p.power == Power::kBooting || p.power == Power::kUp) {
    p.resume_demand = 0;  // booting or up already: the jobs waiting for it begin when it is
    return;
  }
  if (p.power != Power::kOff || world.node_condition(pool_[index]) != NodeCondition::kPoweredDown) {
    p.resume_demand = 0;  // taken out meanwhile (an operation): it cannot resume, so its jobs are requeued
    world.fail_jobs_on(pool_[index], InterruptionCause::kResumeFailure);
    return;
  }
  if (resume_budget_ == 0) {
    resume_queue_.push_back(static_cast<std::uint32_t>(index));
    return;
  }
  --resume_budget_;
  const std::uint32_t demand = p.resume_demand;
  p.resume_demand = 0;
  create(world, pool_[index], demand);
}

void Autoscaler::poll(SimWorld& world) {
  if (config_.slurm_power_save) {
    // ResumeRate: this period's budget, first for the resumes that waited for it.
    resume_budget_ = config_.scale_up_per_poll;
    std::vector<std::uint32_t> waiting;
    waiting.swap(resume_queue_);
    for (std::uint32_t index : waiting) resume_requested(world, index);
  }
  std::fill(demand_.begin(), demand_.end(), 0);
  std::fill(supply_.begin(), supply_.end(), 0);
  // Demand: whole nodes of the smallest fitting shape for every job that waits for resources.
  std::vector<JobIndex>& pending = world.pending_list();
  std::size_t out = 0;
  for (JobIndex j : pending) {
    const JobRuntime& rt = state_.job(j);
    if (rt.state != JobState::kPending) {
      world.unlist_pending(j);
      continue;
    }
    pending[out++] = j;
    if (rt.reason != PendingReason::kNone && rt.reason != PendingReason::kPriority &&
        rt.reason != PendingReason::kResources)
      continue;  // held, dependent, limited or waiting for a begin time: no node would start it
    const int s = shape_for(j);
    if (s < 0) continue;
    const auto shape = static_cast<std::size_t>(s);
    const std::uint32_t need = nodes_needed(j, shapes_[shape]);
    // A job larger than the shape can ever be (static nodes plus the pool up to max_nodes) starts no node.
    if (need <= capacity_[shape]) demand_[shape] += need;
  }
  pending.resize(out);
  // Supply: idle in-service nodes of each shape (static nodes too) and pool nodes already booting.
  std::uint32_t active = 0;
  for (NodeIndex n = 0; n < state_.node_count(); ++n) {
    const std::int32_t pi = pool_index_[n];
    if (pi >= 0) {
      const PoolNode& p = nodes_[static_cast<std::size_t>(pi)];
      if (exists(p)) ++active;
      if (p.power == Power::kBooting) ++supply_[p.shape];
      if (p.power != Power::kUp) continue;
    }
    if (node_shape_[n] < 0 || !state_.node_schedulable(n) || state_.node_jobs()[n] != 0) continue;
    ++supply_[node_shape_[n]];
  }
  // Scale up: create the missing nodes per shape, lowest pool index first (power saving resumes for allocations).
  std::uint32_t budget = config_.slurm_power_save ? 0
                                                  : std::min(config_.scale_up_per_poll,
                                                             config_.max_nodes - std::min(active, config_.max_nodes));
  for (std::size_t s = 0; s < shapes_.size() && budget > 0; ++s) {
    if (demand_[s] <= supply_[s]) continue;
    std::uint32_t missing = demand_[s] - supply_[s];
    for (std::size_t i = 0; i < pool_.size() && missing > 0 && budget > 0; ++i) {
      PoolNode& p = nodes_[i];
      if (p.shape != s || p.power != Power::kOff) continue;
      if (world.node_condition(pool_[i]) != NodeCondition::kPoweredDown) continue;
      create(world, pool_[i], demand_[s]);
      --missing;
      --budget;
    }
  }
  // Scale down: pool nodes idle for the whole window, above min_nodes, when no pending job that fits the shape's
  // capacity still needs nodes of it (a gang of nodes waiting for the rest of a big job's nodes is kept).
  std::uint32_t removable =
      std::min(config_.scale_down_per_poll, active > config_.min_nodes ? active - config_.min_nodes : 0);
  const SimTime window = from_seconds_f(config_.idle_window_s);
  for (std::size_t i = pool_.size(); i-- > 0 && removable > 0;) {
    PoolNode& p = nodes_[i];
    const NodeIndex n = pool_[i];
    if (p.power != Power::kUp) continue;
    if (!config_.slurm_power_save && demand_[p.shape] >= supply_[p.shape]) continue;  // only surplus idle nodes go
    if (world.node_condition(n) != NodeCondition::kNone || state_.node_jobs()[n] != 0) continue;
    if (p.idle_since == kNever || world.now() - p.idle_since < window) continue;
    remove(world, n, demand_[p.shape]);
    --supply_[p.shape];
    --removable;
  }
}

void Autoscaler::create(SimWorld& world, NodeIndex node, std::uint32_t demand) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[node])];
  p.power = Power::kBooting;
  p.up_since = world.now();
  world.set_node_condition(node, NodeCondition::kPoweringUp);
  // A node that will never register is given up at ResumeTimeout (when there is one), a slow one at the timeout.
  p.boot_fails = config_.boot_failure_probability > 0 && boot_rng_.uniform() < config_.boot_failure_probability;
  double boot_s = config_.cold_start.total_s();
  if (config_.resume_timeout_s > 0)
    boot_s = p.boot_fails ? config_.resume_timeout_s : std::min(boot_s, config_.resume_timeout_s);
  const SimTime ready = world.now() + from_seconds_f(boot_s);
  world.push_autoscaler(ready, target(kBooted, static_cast<std::uint64_t>(pool_index_[node])), ++p.generation);
  world.note_node_return(ready);
  records_.push_back({world.now(), node, ScalingRecord::Action::kCreate, demand});
}

void Autoscaler::remove(SimWorld& world, NodeIndex node, std::uint32_t demand) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[node])];
  p.power = Power::kRemoving;
  world.set_node_condition(node, NodeCondition::kPoweringDown);
  world.push_autoscaler(world.now() + from_seconds_f(config_.scale_down_s),
                        target(kRemoved, static_cast<std::uint64_t>(pool_index_[node])), ++p.generation);
  records_.push_back({world.now(), node, ScalingRecord::Action::kRemove, demand});
}

void Autoscaler::on_node_taken(SimWorld& world, NodeIndex n) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[n])];
  if (!exists(p)) return;
  node_seconds_ += to_seconds_f(world.now() - p.up_since);
  p.power = Power::kRetired;
  ++p.generation;  // a pending boot or removal of it is void
}

void Autoscaler::on_node_reclaimed(SimWorld& world, NodeIndex n) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[n])];
  if (exists(p)) node_seconds_ += to_seconds_f(world.now() - p.up_since);
  p.power = Power::kOff;
  ++p.generation;  // a pending boot or removal of it is void
  records_.push_back({world.now(), n, ScalingRecord::Action::kReclaimed, 0});
}

void Autoscaler::on_node_in_service(SimWorld& world, NodeIndex n) {
  const std::int32_t pi = pool_index_[n];
  if (pi < 0) return;
  PoolNode& p = nodes_[static_cast<std::size_t>(pi)];
  if (!exists(p)) {  // an operation added it: it is up from now
    p.power = Power::kUp;
    p.up_since = world.now();
    ++p.generation;
  }
  if (state_.node_jobs()[n] == 0) p.idle_since = world.now();
}

void Autoscaler::on_job_start(JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) {
    const std::int32_t pi = pool_index_[a.node];
    if (pi >= 0) nodes_[static_cast<std::size_t>(pi)].idle_since = kNever;
  }
}

void Autoscaler::on_job_released(SimWorld& world, JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) {
    const std::int32_t pi = pool_index_[a.node];
    if (pi >= 0 && state_.node_jobs()[a.node] == 0) nodes_[static_cast<std::size_t>(pi)].idle_since = world.now();
  }
}

double Autoscaler::pool_node_seconds(SimTime horizon) const {
  double total = node_seconds_;
  for (const PoolNode& p : nodes_) {
    if (exists(p) && p.up_since < horizon) total += to_seconds_f(horizon - p.up_since);
  }
  return total;
}

}  // namespace gputwin
