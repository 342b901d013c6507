#include "twin/mirror.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "model/hostlist.hpp"

namespace gputwin {

namespace {

constexpr std::string_view kEndedStates[] = {"COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",      "NODE_FAIL",
                                             "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};

PartitionState partition_state_of(std::string_view state) {
  if (state == "DOWN") return PartitionState::kDown;
  if (state == "DRAIN") return PartitionState::kDrain;
  if (state == "INACTIVE") return PartitionState::kInactive;
  return PartitionState::kUp;
}

// A dependency as Slurm reports it ("afterok:12(unfulfilled),afterany:13_1(failed)") in the syntax sbatch takes.
std::string clean_dependency(std::string_view text) {
  if (text.empty() || text == "(null)") return {};
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  for (char c : text) {
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool has_flag(const RestNode& node, std::string_view flag) {
  return std::find(node.flags.begin(), node.flags.end(), flag) != node.flags.end();
}

NodeState node_state_of(const RestNode& node) {
  if (has_flag(node, "POWERED_DOWN")) return NodeState::kPoweredDown;
  if (has_flag(node, "POWERING_UP")) return NodeState::kPoweringUp;
  if (has_flag(node, "POWERING_DOWN")) return NodeState::kPoweringDown;
  if (has_flag(node, "REBOOT_ISSUED")) return NodeState::kRebooting;
  const bool busy = node.state == "MIXED" || node.state == "ALLOCATED" || has_flag(node, "COMPLETING");
  if (node.state == "DOWN" || node.state == "UNKNOWN" || node.state == "ERROR" || node.state == "FUTURE")
    return NodeState::kDown;
  if (has_flag(node, "FAIL")) return busy ? NodeState::kFailing : NodeState::kFail;
  if (has_flag(node, "DRAIN")) return busy ? NodeState::kDraining : NodeState::kDrained;
  if (node.state == "ALLOCATED") return NodeState::kAllocated;
  if (node.state == "MIXED") return NodeState::kMixed;
  return NodeState::kIdle;
}

NodeCondition node_condition_of(const RestNode& node) {
  switch (node_state_of(node)) {
    case NodeState::kPoweredDown:
      return NodeCondition::kPoweredDown;
    case NodeState::kPoweringUp:
      return NodeCondition::kPoweringUp;
    case NodeState::kPoweringDown:
      return NodeCondition::kPoweringDown;
    case NodeState::kRebooting:
      return NodeCondition::kRebooting;
    case NodeState::kDown:
      return NodeCondition::kDown;
    case NodeState::kFail:
    case NodeState::kFailing:
      return NodeCondition::kFail;
    case NodeState::kDrained:
    case NodeState::kDraining:
      return NodeCondition::kDrain;
    default:
      return NodeCondition::kNone;
  }
}

bool job_ended(std::string_view state) {
  return std::find(std::begin(kEndedStates), std::end(kEndedStates), state) != std::end(kEndedStates);
}

std::optional<std::uint64_t> tres_count(std::string_view tres, std::string_view key) {
  std::size_t pos = 0;
  while (pos < tres.size()) {
    std::size_t comma = tres.find(',', pos);
    if (comma == std::string_view::npos) comma = tres.size();
    const std::string_view item = tres.substr(pos, comma - pos);
    pos = comma + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || item.substr(0, eq) != key) continue;
    std::string_view value = item.substr(eq + 1);
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc()) return std::nullopt;
    const std::string_view unit = value.substr(static_cast<std::size_t>(end - value.data()));
    const std::uint64_t scale = unit == "K" ? 1 : unit == "M" ? 1 : unit == "G" ? 1024 : unit == "T" ? 1024 * 1024 : 1;
    return number * scale;  // mem in MB (K rounds down to 0 MB at most a few KB off; Slurm prints M/G/T)
  }
  return std::nullopt;
}

std::vector<NodeAllocation> spread_allocation(const JobSpec& spec, const RestJob& job,
                                              const std::vector<NodeIndex>& nodes,
                                              std::vector<std::uint32_t>& free_cpus,
                                              std::vector<std::uint32_t>& free_gpus,
                                              std::vector<std::uint64_t>& free_mem) {
  std::vector<NodeAllocation> out;
  const auto count = static_cast<std::uint32_t>(nodes.size());
  const std::uint32_t total_gpus = job.gpus > 0 ? job.gpus : spec.gpus_per_node * count;
  for (std::uint32_t i = 0; i < count; ++i) {
    const NodeIndex n = nodes[i];
    NodeAllocation a;
    a.node = n;
    a.cpus = spec.cpus / count + (i < spec.cpus % count ? 1 : 0);
    a.gpus = total_gpus / count + (i < total_gpus % count ? 1 : 0);
    a.mem_mb = spec.mem_per_node_mb;
    if (spec.exclusive) {
      a.cpus = free_cpus[n];
      a.gpus = free_gpus[n];
    }
    a.cpus = std::clamp<std::uint32_t>(a.cpus, std::min<std::uint32_t>(1, free_cpus[n]), free_cpus[n]);
    a.gpus = std::min(a.gpus, free_gpus[n]);
    a.mem_mb = std::min(a.mem_mb, free_mem[n]);
    free_cpus[n] -= a.cpus;
    free_gpus[n] -= a.gpus;
    free_mem[n] -= a.mem_mb;
    out.push_back(a);
  }
  return out;
}

PollChanges Mirror::apply(Snapshot snapshot) {
  PollChanges changes;
  if (polls_ == 0) {
    // t = 0 of the results: the first poll, or the earliest submit it lists, so no job has negative times.
    epoch_ = snapshot.time;
    for (const RestJob& job : snapshot.jobs) {
      if (job.submit_time > 0) epoch_ = std::min(epoch_, job.submit_time);
    }
  }
  now_ = std::max(now_, snapshot.time);
  ++polls_;
  apply_nodes(snapshot.nodes, changes);
  apply_partitions(snapshot.partitions);
  apply_jobs(snapshot.jobs, changes);
  return changes;
}

void Mirror::apply_nodes(std::vector<RestNode>& nodes, PollChanges& changes) {
  std::fill(node_listed_.begin(), node_listed_.end(), 0);
  for (RestNode& node : nodes) {
    auto [it, added] = node_by_name_.try_emplace(node.name, static_cast<NodeIndex>(nodes_.size()));
    const NodeIndex n = it->second;
    const NodeState state = node_state_of(node);
    if (added) {
      ++changes.nodes_added;
      nodes_.push_back(node);
      node_listed_.push_back(1);
      node_state_.push_back(state);
      config_.nodes.push_back(NodeConfig{});
      node_history_.push_back(NodeChange{now_, n, state, node_condition_of(node), node.reason});
    } else {
      node_listed_[n] = 1;
      if (node_state_[n] != state || nodes_[n].reason != node.reason) {
        ++changes.nodes_changed;
        node_state_[n] = state;
        node_history_.push_back(NodeChange{now_, n, state, node_condition_of(node), node.reason});
      }
    }
    NodeConfig& config = config_.nodes[n];
    config.name = node.name;
    config.cpus = std::max<std::uint32_t>(node.cpus, 1);
    config.memory_mb = node.memory_mb;
    config.gpus = node.gpus;
    config.gpu_type = node.gpu_type;
    config.weight = node.weight;
    if (!added) nodes_[n] = std::move(node);
  }
}

void Mirror::apply_partitions(std::vector<RestPartition>& partitions) {
  partitions_ = std::move(partitions);
  config_.partitions.clear();
  for (const RestPartition& p : partitions_) {
    PartitionConfig part;
    part.name = p.name;
    part.nodes = nodes_of(p.nodes);
    std::sort(part.nodes.begin(), part.nodes.end());
    part.nodes.erase(std::unique(part.nodes.begin(), part.nodes.end()), part.nodes.end());
    part.is_default = p.is_default;
    part.default_time_s = p.default_time_s.value_or(-1);
    part.max_time_s = p.max_time_s.value_or(-1);
    part.state = partition_state_of(p.state);
    part.priority_tier = p.priority_tier;
    part.priority_job_factor = p.priority_job_factor;
    part.qos = p.qos;
    config_.partitions.push_back(std::move(part));
  }
}

void Mirror::apply_jobs(std::vector<RestJob>& jobs, PollChanges& changes) {
  std::vector<std::uint32_t> listed_before;
  for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
    if (jobs_[i].listed) listed_before.push_back(i);
    jobs_[i].listed = false;
  }
  std::sort(jobs.begin(), jobs.end(), [](const RestJob& a, const RestJob& b) { return a.job_id < b.job_id; });
  for (RestJob& record : jobs) {
    auto [it, added] = job_by_id_.try_emplace(record.job_id, static_cast<std::uint32_t>(jobs_.size()));
    if (added) {
      ++changes.jobs_new;
      if (record.state == "RUNNING" ||
          (record.start_time > 0 && record.start_time <= now_ && !job_ended(record.state) && record.state != "PENDING"))
        changes.started.push_back(record.job_id);
      if (job_ended(record.state)) changes.ended.push_back(record.job_id);
      job_history_.push_back(JobChange{now_, record.job_id, record.state, record.reason});
      jobs_.push_back(MirrorJob{std::move(record), now_, now_, true});
      continue;
    }
    MirrorJob& job = jobs_[it->second];
    job.listed = true;
    job.last_seen = now_;
    const RestJob& before = job.record;
    if (before.state != record.state || before.reason != record.reason) {
      ++changes.jobs_changed;
      // A job cancelled while pending gets a start time (its end) but no nodes: it never started.
      if (before.state == "PENDING" && record.state != "PENDING" && record.start_time > 0 && !record.nodes.empty())
        changes.started.push_back(record.job_id);
      if (!job_ended(before.state) && job_ended(record.state)) changes.ended.push_back(record.job_id);
      job_history_.push_back(JobChange{now_, record.job_id, record.state, record.reason});
    } else if (before.start_time != record.start_time && record.state == "RUNNING") {
      changes.started.push_back(record.job_id);  // requeued and started again between two polls
    }
    job.record = std::move(record);
  }
  for (std::uint32_t i : listed_before) {
    if (!jobs_[i].listed) ++changes.jobs_gone;
  }
}

const MirrorJob* Mirror::job(std::uint64_t id) const {
  const auto it = job_by_id_.find(id);
  return it == job_by_id_.end() ? nullptr : &jobs_[it->second];
}

std::optional<NodeIndex> Mirror::node_index(std::string_view name) const {
  const auto it = node_by_name_.find(std::string(name));
  if (it == node_by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeIndex> Mirror::nodes_of(std::string_view hostlist) const {
  std::vector<NodeIndex> out;
  if (hostlist.empty() || hostlist == "(null)") return out;
  std::vector<std::string> names;
  try {
    names = expand_hostlist(hostlist);
  } catch (const std::invalid_argument&) {
    return out;  // not a hostlist: no node of ours, like a list of names the cluster does not have (fuzz_rest_reply)
  }
  for (const std::string& name : names) {
    if (const auto n = node_index(name)) out.push_back(*n);
  }
  return out;
}

JobSpec Mirror::job_spec(const RestJob& job, std::int64_t origin) const {
  JobSpec spec;
  spec.id = job.job_id;
  spec.name = job.name;
  spec.user = job.user;
  spec.account = job.account;
  spec.partition = job.partition;
  spec.qos = job.qos;
  spec.submit_s = job.submit_time - origin;
  const bool allocated = !job.nodes.empty() && job.state != "PENDING";
  std::uint32_t nodes = job.node_count;
  if (allocated) {
    nodes = static_cast<std::uint32_t>(nodes_of(job.nodes).size());
  } else if (const auto n = tres_count(job.tres_req, "node")) {
    nodes = static_cast<std::uint32_t>(*n);  // node_count of a pending job is only an estimate
  }
  spec.nodes = std::max<std::uint32_t>(nodes, 1);
  spec.cpus = job.cpus > 0 ? job.cpus : static_cast<std::uint32_t>(tres_count(job.tres_req, "cpu").value_or(1));
  spec.cpus = std::max<std::uint32_t>(spec.cpus, spec.nodes);
  spec.gpus_per_node = job.gpus_per_node;
  if (spec.gpus_per_node == 0 && job.gpus > 0) spec.gpus_per_node = (job.gpus + spec.nodes - 1) / spec.nodes;
  spec.mem_per_node_mb = job.mem_per_node_mb;
  spec.exclusive = job.exclusive;
  spec.time_limit_s = job.time_limit_s.value_or(kNoTimeLimit);
  if (job.start_time > 0 && job.end_time >= job.start_time && job_ended(job.state))
    spec.run_time_s = job.end_time - job.start_time;
  spec.dependency = clean_dependency(job.dependency);
  spec.requeue = job.requeue;
  spec.array_job_id = job.array_job_id;
  spec.array_task_id = job.array_task_id;
  if (job.held) spec.hold_until_s = kHeldForever;
  if (job.state == "PENDING" && job.reason == "BeginTime" && job.eligible_time > now_)
    spec.begin_s = job.eligible_time - origin;
  if (job.state != "PENDING" && job.start_time > 0) spec.observed_start_s = job.start_time - origin;
  return spec;
}

}  // namespace gputwin
