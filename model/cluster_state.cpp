#include "model/cluster_state.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <optional>

#include "model/run_observer.hpp"
#include "model/vector_room.hpp"

namespace gputwin {

std::string_view pending_reason_name(PendingReason reason) {
  // Slurm's strings (src/common/job_state_reason.c), in enum order.
  static constexpr std::string_view kNames[] = {
      "None",
      "Priority",
      "Resources",
      "PartitionDown",
      "PartitionTimeLimit",
      "Dependency",
      "DependencyNeverSatisfied",
      "BeginTime",
      "JobHeldUser",
      "JobArrayTaskLimit",
      "QOSMaxJobsPerUserLimit",
      "QOSGrpJobsLimit",
      "QOSMaxWallDurationPerJobLimit",
      "QOSMaxGRESPerUser",
      "QOSMaxCpuPerUserLimit",
      "QOSMaxMemoryPerUser",
      "QOSMaxNodePerUserLimit",
      "QOSGrpGRES",
      "QOSGrpCpuLimit",
      "QOSGrpMemLimit",
      "QOSGrpNodeLimit",
      "QOSMaxGRESPerJob",
      "QOSMaxCpuPerJobLimit",
      "QOSMaxMemoryPerJob",
      "QOSMaxNodePerJobLimit",
      "AssocMaxJobsLimit",
      "AssocGrpJobsLimit",
      "AssocMaxWallDurationPerJobLimit",
      "AssocGrpGRES",
      "AssocGrpCpuLimit",
      "AssocGrpMemLimit",
      "AssocGrpNodeLimit",
      "AssocMaxGRESPerJob",
      "AssocMaxCpuPerJobLimit",
      "AssocMaxMemoryPerJob",
      "AssocMaxNodePerJobLimit",
      "QOSMaxSubmitJobPerUserLimit",
      "QOSGrpSubmitJobsLimit",
      "AssocMaxSubmitJobLimit",
      "AssocGrpSubmitJobsLimit",
      "InvalidAccount",
      "InvalidQOS",
      "Reservation",
      "InvalidReservation",
      "AssocGrpBillingMinutes",
      "JobHeldAdmin",
      "BadConstraints",
  };
  static_assert(std::size(kNames) == static_cast<std::size_t>(PendingReason::kCount));
  const auto i = static_cast<std::size_t>(reason);
  return i < std::size(kNames) ? kNames[i] : "None";
}

/// Parses a reason name as pending_reason_name prints it.
std::optional<PendingReason> parse_pending_reason(std::string_view name) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(PendingReason::kCount); ++i) {
    const auto r = static_cast<PendingReason>(i);
    if (pending_reason_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view node_state_name(NodeState state) {
  switch (state) {
    case NodeState::kIdle:
      return "IDLE";
    case NodeState::kMixed:
      return "MIXED";
    case NodeState::kAllocated:
      return "ALLOCATED";
    case NodeState::kDraining:
      return "DRAINING";
    case NodeState::kDrained:
      return "DRAINED";
    case NodeState::kDown:
      return "DOWN";
    case NodeState::kRebooting:
      return "REBOOTING";
    case NodeState::kPoweredDown:
      return "POWERED_DOWN";
    case NodeState::kPoweringUp:
      return "POWERING_UP";
    case NodeState::kPoweringDown:
      return "POWERING_DOWN";
    case NodeState::kFailing:
      return "FAILING";
    case NodeState::kFail:
      return "FAIL";
  }
  return "UNKNOWN";
}

ClusterState::ClusterState(const ClusterConfig& config, std::vector<JobSpec> jobs)
    : config_(&config), specs_(std::make_shared<std::vector<JobSpec>>(std::move(jobs))) {
  const std::size_t n = config.nodes.size();
  free_cpus_.resize(n);
  free_gpus_.resize(n);
  free_mem_mb_.resize(n);
  node_jobs_.assign(n, 0);
  schedulable_.assign(n, 1);
  weights_.resize(n);
  node_version_.assign(n, 0);
  node_partitions_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    free_cpus_[i] = config.nodes[i].cpus;
    free_gpus_[i] = config.nodes[i].gpus;
    total_free_gpus_ += config.nodes[i].gpus;
    free_mem_mb_[i] = config.nodes[i].memory_mb;
    schedulable_[i] = config.nodes[i].available ? 1 : 0;
    weights_[i] = config.nodes[i].weight;
    max_gpus_ = std::max(max_gpus_, config.nodes[i].gpus);
  }
  const std::size_t parts = config.partitions.size();
  part_gpu_hist_.assign(parts * (max_gpus_ + 1), 0);
  part_free_cpus_.assign(parts, 0);
  for (std::uint32_t p = 0; p < parts; ++p) {
    for (NodeIndex node : config.partitions[p].nodes) node_partitions_[node].push_back(p);
  }
  for (NodeIndex i = 0; i < n; ++i) adjust_partition_counters(i, +1);
  words_ = (n + 63) / 64;
  free_bits_.assign(words_ * (max_gpus_ + 1), 0);
  for (NodeIndex i = 0; i < n; ++i) update_free_bits(i);
  untouched_bits_.assign(words_, 0);
  for (NodeIndex i = 0; i < n; ++i) update_untouched_bit(i);
  partition_bits_.assign(words_ * parts, 0);
  for (std::uint32_t p = 0; p < parts; ++p) {
    for (NodeIndex node : config.partitions[p].nodes) partition_bits_[p * words_ + (node >> 6)] |= 1ULL << (node & 63);
  }
  jobs_.resize(specs_->size());
  alloc_pool_.reserve(specs_->size() * 2);
}

void ClusterState::adjust_partition_counters(NodeIndex n, int sign) {
  if (!schedulable_[n]) return;
  for (std::uint32_t p : node_partitions_[n]) {
    auto& hist = part_gpu_hist_[p * (max_gpus_ + 1) + free_gpus_[n]];
    hist = static_cast<std::uint32_t>(static_cast<int>(hist) + sign);
    if (sign > 0)
      part_free_cpus_[p] += free_cpus_[n];
    else
      part_free_cpus_[p] -= free_cpus_[n];
  }
}

void ClusterState::change_free(const NodeAllocation& a, int sign) {
  const NodeIndex n = a.node;
  const std::uint32_t gpus_before = free_gpus_[n];
  const bool cpu_free_before = free_cpus_[n] > 0;
  if (sign > 0) {
    free_cpus_[n] += a.cpus;
    free_gpus_[n] += a.gpus;
    total_free_gpus_ += a.gpus;
    free_mem_mb_[n] += a.mem_mb;
    --node_jobs_[n];
  } else {
    free_cpus_[n] -= a.cpus;
    free_gpus_[n] -= a.gpus;
    total_free_gpus_ -= a.gpus;
    free_mem_mb_[n] -= a.mem_mb;
    ++node_jobs_[n];
  }
  ++node_version_[n];
  // As adjust_partition_counters(n, -1) before the change and (n, +1) after, in one walk.
  if (schedulable_[n]) {
    const std::size_t row = max_gpus_ + 1;
    for (const std::uint32_t p : node_partitions_[n]) {
      --part_gpu_hist_[p * row + gpus_before];
      ++part_gpu_hist_[p * row + free_gpus_[n]];
      if (sign > 0)
        part_free_cpus_[p] += a.cpus;
      else
        part_free_cpus_[p] -= a.cpus;
    }
  }
  // The free bits read only whether a CPU is free and how many GPUs are.
  if (gpus_before != free_gpus_[n] || cpu_free_before != (free_cpus_[n] > 0)) update_free_bits(n);
  if (node_jobs_[n] <= 1) update_untouched_bit(n);  // it changes only between no job and one
}

void ClusterState::update_untouched_bit(NodeIndex n) {
  // Resources change only by allocations, so a node without a job has all of its resources free.
  const bool untouched = schedulable_[n] != 0 && node_jobs_[n] == 0;
  std::uint64_t& word = untouched_bits_[n >> 6];
  const std::uint64_t bit = 1ULL << (n & 63);
  word = untouched ? word | bit : word & ~bit;
}

void ClusterState::update_free_bits(NodeIndex n) {
  const std::uint64_t bit = 1ULL << (n & 63);
  for (std::uint32_t g = 0; g <= max_gpus_; ++g) {
    std::uint64_t& word = free_bits_[g * words_ + (n >> 6)];
    if (schedulable_[n] && free_cpus_[n] > 0 && free_gpus_[n] >= g)
      word |= bit;
    else
      word &= ~bit;
  }
}

std::uint64_t ClusterState::partition_free_gpus(std::uint32_t partition) const {
  std::uint64_t total = 0;
  const std::uint32_t* hist = part_gpu_hist_.data() + partition * (max_gpus_ + 1);
  for (std::uint32_t g = 1; g <= max_gpus_; ++g) total += std::uint64_t{g} * hist[g];
  return total;
}

std::uint32_t ClusterState::nodes_with_free_gpus(std::uint32_t partition, std::uint32_t g) const {
  if (g > max_gpus_) return 0;
  std::uint32_t count = 0;
  const std::uint32_t* hist = part_gpu_hist_.data() + partition * (max_gpus_ + 1);
  for (std::uint32_t k = g; k <= max_gpus_; ++k) count += hist[k];
  return count;
}

void ClusterState::assign_copy(const ClusterState& other, const ClusterConfig& config) {
  keep_room_for(jobs_, other.jobs_);
  keep_room_for(alloc_pool_, other.alloc_pool_);
  keep_room_for(past_runs_, other.past_runs_);
  *this = other;
  config_ = &config;
}

void ClusterState::allocate(JobIndex j, std::span<const NodeAllocation> allocation, SimTime now) {
  JobRuntime& job = jobs_[j];
  assert(job.state == JobState::kPending);
  job.state = JobState::kRunning;
  job.start = now;
  job.alloc_offset = static_cast<std::uint32_t>(alloc_pool_.size());
  job.alloc_count = static_cast<std::uint32_t>(allocation.size());
  for (const NodeAllocation& a : allocation) {
    assert(free_cpus_[a.node] >= a.cpus && free_gpus_[a.node] >= a.gpus && free_mem_mb_[a.node] >= a.mem_mb);
    change_free(a, -1);
    alloc_pool_.push_back(a);
  }
  ++job_updates_;
}

void ClusterState::finish(JobIndex j, JobState state, SimTime now) {
  JobRuntime& job = jobs_[j];
  assert(job.state == JobState::kRunning);
  job.state = state;
  job.end = now;
  ++job_updates_;
}

void ClusterState::release(JobIndex j) {
  const JobRuntime& job = jobs_[j];
  for (std::uint32_t k = 0; k < job.alloc_count; ++k) {
    change_free(alloc_pool_[job.alloc_offset + k], +1);
  }
  ++job_updates_;
}

void ClusterState::requeue(JobIndex j, SimTime now, double lost_s, bool by_fault) {
  JobRuntime& job = jobs_[j];
  past_runs_.push_back(PastRun{job.start, job.end, now, j, job.alloc_offset, job.alloc_count});
  const double run = to_seconds_f(job.end - job.start);
  const double lost = lost_s < 0 ? run : std::min(lost_s, run);
  const double gpus = allocated_gpus(j);
  (by_fault ? job.fault_lost_gpu_s : job.lost_gpu_s) += gpus * lost;
  job.prior_runs_gpu_s += gpus * run;
  job.lost_s += lost;
  ++job.restarts;
  job.state = JobState::kPending;
  job.start = job.end = job.planned_end = -1;
  job.alloc_count = 0;
  job.reason = PendingReason::kNone;
  ++job_updates_;
}

void ClusterState::set_node_schedulable(NodeIndex n, bool schedulable) {
  if ((schedulable_[n] != 0) == schedulable) return;
  adjust_partition_counters(n, -1);
  schedulable_[n] = schedulable ? 1 : 0;
  adjust_partition_counters(n, +1);
  update_free_bits(n);
  update_untouched_bit(n);
  ++node_version_[n];
  ++node_updates_;
  ++job_updates_;  // schedulers that look only at job updates must re-plan too
}

void ClusterState::set_node_weight(NodeIndex n, std::uint32_t weight) {
  if (weights_[n] == weight) return;
  weights_[n] = weight;
  ++node_version_[n];
  ++node_updates_;
  ++job_updates_;
}

void ClusterState::end_pending(JobIndex j, JobState state, SimTime now) {
  JobRuntime& job = jobs_[j];
  job.state = state;
  job.end = now;
  ++job_updates_;
}

void ClusterState::set_node_condition(NodeIndex n, NodeCondition condition, std::string_view reason) {
  if (conditions_.empty()) {
    conditions_.assign(node_count(), NodeCondition::kNone);
    reasons_.resize(node_count());
  }
  conditions_[n] = condition;
  reasons_[n].assign(condition == NodeCondition::kNone ? std::string_view() : reason);
}

JobIndex ClusterState::add_job(JobSpec spec, std::uint32_t partition) {
  const auto j = static_cast<JobIndex>(specs_->size());
  // A copy (a live run's snapshot) may share the specs: it keeps them as they were.
  if (specs_.use_count() > 1) specs_ = std::make_shared<std::vector<JobSpec>>(*specs_);
  specs_->push_back(std::move(spec));
  jobs_.emplace_back();
  jobs_.back().partition = partition;
  return j;
}

}  // namespace gputwin
