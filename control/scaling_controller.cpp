#include "control/scaling_controller.hpp"

#include <algorithm>
#include <tuple>

#include "scheduler/node_selection.hpp"

namespace gputwin {

namespace {
constexpr TimerId kPoll = 0;
// Timer of a requested resume of pool node `index`.
TimerId resume_timer(std::size_t index) {
  return static_cast<TimerId>(1 + index);
}
}  // namespace

ScalingController::ScalingController(const AutoscalerConfig& config, World& world)
    : config_(config),
      world_(world),
      state_(world.state()),
      pool_index_(world.state().node_count(), -1),
      pool_(config.nodes),
      listed_(world.state().job_count(), 0) {
  const auto& nodes = state_.config().nodes;
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

void ScalingController::on_start() {
  // The world starts pool nodes beyond min_nodes POWERED_DOWN (not yet created); nodes an operation adds later
  // are absent and not the pool's to create.
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    PoolNode& p = nodes_[i];
    p.idle_since = world_.now();
    p.up_since = world_.now();
    if (p.power != Power::kRetired && state_.node_condition(pool_[i]) == NodeCondition::kPoweredDown)
      p.power = Power::kOff;
  }
  started_ = true;
  world_.set_timer(ControllerId::kScaling, kPoll, world_.now());
}

void ScalingController::on_timer(TimerId timer) {
  if (timer == kPoll) {
    poll();
    world_.set_timer(ControllerId::kScaling, kPoll, world_.now() + from_seconds_f(config_.poll_s));
  } else {
    resume_requested(timer - 1);
  }
}

void ScalingController::list_pending(JobIndex job) {
  if (job >= listed_.size()) listed_.resize(state_.job_count(), 0);  // a job a live run added to the table
  if (listed_[job]) return;
  listed_[job] = 1;
  pending_.push_back(job);
}

void ScalingController::on_node_booted(NodeIndex n, bool ok) {
  PoolNode* p = pool_node(n);
  if (p == nullptr) return;
  if (p->power != Power::kBooting) {
    // Not one the controller powered up: an operation added it, and it is up from now.
    if (ok && !exists(*p)) {
      p->power = Power::kUp;
      p->up_since = world_.now();
    }
    return;
  }
  if (!ok) {
    // It never registered: deleted (it cost its boot); the next decision may try again.
    node_seconds_ += to_seconds_f(world_.now() - p->up_since);
    p->power = Power::kOff;
    records_.push_back({world_.now(), n, ScalingRecord::Action::kBootFailed, 0});
    return;
  }
  p->power = Power::kUp;
  p->idle_since = world_.now();
  records_.push_back({world_.now(), n, ScalingRecord::Action::kReady, 0});
}

void ScalingController::on_node_powered_down(NodeIndex n) {
  PoolNode* p = pool_node(n);
  if (p == nullptr || p->power != Power::kRemoving) return;
  node_seconds_ += to_seconds_f(world_.now() - p->up_since);
  p->power = Power::kOff;
  records_.push_back({world_.now(), n, ScalingRecord::Action::kRemoved, 0});
}

int ScalingController::shape_for(JobIndex job) const {
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

std::uint32_t ScalingController::nodes_needed(JobIndex job, const Shape& shape) const {
  const SelectRequest r = select_request(state_.spec(job));
  if (r.nodes > 0) return r.nodes;
  return std::max<std::uint32_t>(1, (r.cpus + shape.cpus - 1) / std::max<std::uint32_t>(shape.cpus, 1));
}

void ScalingController::request_resume(NodeIndex n, JobIndex job) {
  const auto index = static_cast<std::size_t>(pool_index_[n]);
  if (nodes_[index].resume_demand != 0) return;  // already requested for another job
  nodes_[index].resume_demand = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(state_.allocation(job).size()));
  // At this instant, after the start in progress.
  world_.set_timer(ControllerId::kScaling, resume_timer(index), world_.now());
}

void ScalingController::resume_requested(std::size_t index) {
  PoolNode& p = nodes_[index];
  if (p.resume_demand == 0) return;
  if (p.power == Power::kBooting || p.power == Power::kUp) {
    p.resume_demand = 0;  // booting or up already: the jobs waiting for it begin when it is
    return;
  }
  if (p.power != Power::kOff || state_.node_condition(pool_[index]) != NodeCondition::kPoweredDown) {
    p.resume_demand = 0;  // taken out meanwhile (an operation): it cannot resume, so its jobs are requeued
    world_.requeue_jobs_on(pool_[index], InterruptionCause::kResumeFailure, "resume impossible");
    return;
  }
  if (resume_budget_ == 0) {
    resume_queue_.push_back(static_cast<std::uint32_t>(index));
    return;
  }
  --resume_budget_;
  const std::uint32_t demand = p.resume_demand;
  p.resume_demand = 0;
  create(pool_[index], demand);
}

void ScalingController::poll() {
  if (config_.slurm_power_save) {
    // ResumeRate: this period's budget, first for the resumes that waited for it.
    resume_budget_ = config_.scale_up_per_poll;
    std::vector<std::uint32_t> waiting;
    waiting.swap(resume_queue_);
    for (std::uint32_t index : waiting) resume_requested(index);
  }
  std::fill(demand_.begin(), demand_.end(), 0);
  std::fill(supply_.begin(), supply_.end(), 0);
  // Demand: whole nodes of the smallest fitting shape for every job that waits for resources.
  std::size_t out = 0;
  for (JobIndex j : pending_) {
    const JobRuntime& rt = state_.job(j);
    if (rt.state != JobState::kPending) {
      listed_[j] = 0;
      continue;
    }
    pending_[out++] = j;
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
  pending_.resize(out);
  // Supply: idle in-service nodes of each shape (static nodes too) and pool nodes already booting.
  std::uint32_t active = 0;    // pool nodes that exist (booting, up, being removed): max_nodes counts them
  std::uint32_t removing = 0;  // of which being removed: min_nodes must not count them as staying
  for (NodeIndex n = 0; n < state_.node_count(); ++n) {
    const std::int32_t pi = pool_index_[n];
    if (pi >= 0) {
      const PoolNode& p = nodes_[static_cast<std::size_t>(pi)];
      if (exists(p)) ++active;
      if (p.power == Power::kRemoving) ++removing;
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
      if (state_.node_condition(pool_[i]) != NodeCondition::kPoweredDown) continue;
      create(pool_[i], demand_[s]);
      --missing;
      --budget;
    }
  }
  // Scale down: pool nodes idle for the whole window, above min_nodes, when no pending job that fits the shape's
  // capacity still needs nodes of it (a gang of nodes waiting for the rest of a big job's nodes is kept).
  const std::uint32_t staying = active - removing;
  std::uint32_t removable =
      std::min(config_.scale_down_per_poll, staying > config_.min_nodes ? staying - config_.min_nodes : 0);
  const SimTime window = from_seconds_f(config_.idle_window_s);
  for (std::size_t i = pool_.size(); i-- > 0 && removable > 0;) {
    PoolNode& p = nodes_[i];
    const NodeIndex n = pool_[i];
    if (p.power != Power::kUp) continue;
    if (!config_.slurm_power_save && demand_[p.shape] >= supply_[p.shape]) continue;  // only surplus idle nodes go
    if (state_.node_condition(n) != NodeCondition::kNone || state_.node_jobs()[n] != 0) continue;
    if (p.idle_since == kNever || world_.now() - p.idle_since < window) continue;
    remove(n, demand_[p.shape]);
    --supply_[p.shape];
    --removable;
  }
}

void ScalingController::create(NodeIndex node, std::uint32_t demand) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[node])];
  p.power = Power::kBooting;
  p.up_since = world_.now();
  world_.power_up_node(node, std::nullopt);
  records_.push_back({world_.now(), node, ScalingRecord::Action::kCreate, demand});
}

void ScalingController::remove(NodeIndex node, std::uint32_t demand) {
  PoolNode& p = nodes_[static_cast<std::size_t>(pool_index_[node])];
  p.power = Power::kRemoving;
  world_.power_down_node(node);
  records_.push_back({world_.now(), node, ScalingRecord::Action::kRemove, demand});
}

std::vector<NodeIndex> ScalingController::operator_scale(std::int32_t count) {
  std::vector<NodeIndex> acted;
  std::uint32_t active = 0, removing = 0;
  for (const PoolNode& p : nodes_) {
    if (exists(p)) ++active;
    if (p.power == Power::kRemoving) ++removing;
  }
  if (count > 0) {
    std::uint32_t budget = std::min<std::uint32_t>(static_cast<std::uint32_t>(count),
                                                   config_.max_nodes - std::min(active, config_.max_nodes));
    for (std::size_t i = 0; i < pool_.size() && budget > 0; ++i) {
      if (nodes_[i].power != Power::kOff || state_.node_condition(pool_[i]) != NodeCondition::kPoweredDown) continue;
      create(pool_[i], 0);
      acted.push_back(pool_[i]);
      --budget;
    }
  } else if (count < 0) {
    const std::uint32_t staying = active - removing;
    std::uint32_t budget = std::min<std::uint32_t>(static_cast<std::uint32_t>(-static_cast<std::int64_t>(count)),
                                                   staying > config_.min_nodes ? staying - config_.min_nodes : 0);
    for (std::size_t i = pool_.size(); i-- > 0 && budget > 0;) {
      const NodeIndex n = pool_[i];
      if (nodes_[i].power != Power::kUp) continue;
      if (state_.node_condition(n) != NodeCondition::kNone || state_.node_jobs()[n] != 0) continue;
      remove(n, 0);
      acted.push_back(n);
      --budget;
    }
  }
  return acted;
}

void ScalingController::on_node_deleted(NodeIndex n) {
  PoolNode* p = pool_node(n);
  if (p == nullptr) return;
  if (!started_) {  // absent from the start (an operation adds it later): never the pool's to create
    p->power = Power::kRetired;
    return;
  }
  if (!exists(*p)) return;
  node_seconds_ += to_seconds_f(world_.now() - p->up_since);
  p->power = Power::kRetired;
}

void ScalingController::on_node_reclaimed(NodeIndex n) {
  PoolNode* p = pool_node(n);
  if (p == nullptr) return;
  if (exists(*p)) node_seconds_ += to_seconds_f(world_.now() - p->up_since);
  p->power = Power::kOff;
  records_.push_back({world_.now(), n, ScalingRecord::Action::kReclaimed, 0});
}

void ScalingController::on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) {
  (void)before;
  if (after != NodeCondition::kNone) return;
  // Back in service: its idle window starts now.
  PoolNode* p = pool_node(n);
  if (p != nullptr && state_.node_jobs()[n] == 0) p->idle_since = world_.now();
}

void ScalingController::on_job_started(JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) {
    PoolNode* p = pool_node(a.node);
    if (p == nullptr) continue;
    // Power saving: a job given POWERED_DOWN nodes waits CONFIGURING for them; they resume for it.
    if (config_.slurm_power_save && state_.node_condition(a.node) == NodeCondition::kPoweredDown)
      request_resume(a.node, job);
    p->idle_since = kNever;
  }
}

void ScalingController::on_job_released(JobIndex job) {
  for (const NodeAllocation& a : state_.allocation(job)) {
    PoolNode* p = pool_node(a.node);
    if (p != nullptr && state_.node_jobs()[a.node] == 0) p->idle_since = world_.now();
  }
}

double ScalingController::pool_node_seconds(SimTime horizon) const {
  double total = node_seconds_;
  for (const PoolNode& p : nodes_) {
    if (exists(p) && p.up_since < horizon) total += to_seconds_f(horizon - p.up_since);
  }
  return total;
}

}  // namespace gputwin
