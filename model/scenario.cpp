// Scenario loading. Every value is read through Field, which knows its JSON pointer, so errors say exactly
// where the problem is: "quickstart.json: /cluster/nodes/0/gpus: expected a non-negative integer".
#include "model/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpu/gpu_catalogue.hpp"
#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/input_file.hpp"
#include "model/input_limits.hpp"
#include "model/sacct.hpp"
#include "model/scenario_field.hpp"
#include "model/topology_conf.hpp"
#include "model/topology_yaml.hpp"

namespace gputwin {
namespace {

using detail::Field;
using nlohmann::json;

std::string pad_index(std::uint64_t index, int digits) {
  std::string s = std::to_string(index);
  if (static_cast<int>(s.size()) < digits) s.insert(0, static_cast<std::size_t>(digits) - s.size(), '0');
  return s;
}

void read_nodes(const Field& nodes_field, ClusterConfig& cluster) {
  const std::size_t groups = nodes_field.array_size();
  if (groups == 0) nodes_field.fail("expected at least one node group");
  std::set<std::string> names;
  std::uint64_t gpus = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const Field group = nodes_field.at(g);
    group.expect_object(
        {"prefix", "count", "cpus", "memory_gb", "gpus", "gpu_type", "weight", "start_index", "digits", "state"});
    const std::string prefix = group.has("prefix") ? group.at("prefix").non_empty_string() : "node";
    const std::uint64_t count = group.at("count").positive_at_most(kMaxNodes);
    if (cluster.nodes.size() + count > kMaxNodes) {
      group.at("count").fail("the cluster would have more than " + std::to_string(kMaxNodes) +
                             " nodes (an input bound)");
    }
    NodeConfig node;
    node.cpus = static_cast<std::uint32_t>(group.at("cpus").at_most(kMaxCpusPerNode));
    if (node.cpus == 0) group.at("cpus").fail("expected a positive integer");
    if (group.has("memory_gb")) {
      const double gb = group.at("memory_gb").number();
      if (!(gb >= 0) || gb > kMaxMemoryGbPerNode) {
        group.at("memory_gb").fail("expected a number from 0 to " + std::to_string(kMaxMemoryGbPerNode));
      }
      node.memory_mb = static_cast<std::uint64_t>(gb * 1024.0);
    }
    node.gpus = group.has("gpus") ? static_cast<std::uint32_t>(group.at("gpus").at_most(kMaxGpusPerNode)) : 0;
    if (group.has("gpu_type")) {
      node.gpu_type = group.at("gpu_type").non_empty_string();
      if (!find_gpu_model(node.gpu_type)) {
        group.at("gpu_type").fail("unknown GPU model '" + node.gpu_type + "' (known: " + gpu_model_names() + ")");
      }
      if (node.gpus == 0) group.at("gpu_type").fail("gpu_type given but the group has no gpus");
    }
    node.weight = group.has("weight") ? group.at("weight").u32() : 1;
    if (group.has("state")) {
      const std::string state = group.at("state").string();
      if (state == "IDLE" || state == "UP" || state == "UNKNOWN") {
        node.available = true;
      } else if (state == "DOWN" || state == "DRAIN") {
        node.available = false;
        node.drained = state == "DRAIN";
      } else {
        group.at("state").fail("expected IDLE, UNKNOWN, DOWN or DRAIN");
      }
    }
    const std::uint64_t start = group.has("start_index") ? group.at("start_index").at_most(kMaxNodeIndex) : 1;
    int digits = 3;
    if (group.has("digits")) digits = static_cast<int>(group.at("digits").at_most(kMaxNodeIndexDigits));
    const int needed = static_cast<int>(std::to_string(start + count - 1).size());
    digits = std::max(digits, needed);
    for (std::uint64_t i = 0; i < count; ++i) {
      node.name = prefix + pad_index(start + i, digits);
      if (!names.insert(node.name).second) group.fail("node name '" + node.name + "' is defined twice");
      cluster.nodes.push_back(node);
    }
    gpus += count * node.gpus;
    if (gpus > kMaxGpus) {
      group.at("gpus").fail("the cluster would have more than " + std::to_string(kMaxGpus) + " GPUs (an input bound)");
    }
  }
}

std::vector<NodeIndex> resolve_partition_nodes(const Field& field, const ClusterConfig& cluster) {
  std::vector<NodeIndex> out;
  if (field.raw().is_string() && field.raw().get<std::string>() == "ALL") {
    out.resize(cluster.nodes.size());
    for (NodeIndex i = 0; i < out.size(); ++i) out[i] = i;
    return out;
  }
  std::vector<std::string> names;
  if (field.raw().is_string()) {
    try {
      names = expand_hostlist(field.raw().get<std::string>());
    } catch (const std::invalid_argument& e) {
      field.fail(e.what());
    }
  } else if (field.raw().is_array()) {
    for (std::size_t i = 0; i < field.array_size(); ++i) names.push_back(field.at(i).non_empty_string());
  } else {
    field.fail("expected \"ALL\", a hostlist such as \"n[001-004]\", or an array of node names");
  }
  for (const auto& name : names) {
    auto it =
        std::find_if(cluster.nodes.begin(), cluster.nodes.end(), [&](const NodeConfig& n) { return n.name == name; });
    if (it == cluster.nodes.end()) field.fail("no node named '" + name + "'");
    out.push_back(static_cast<NodeIndex>(it - cluster.nodes.begin()));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) field.fail("partition has no nodes");
  return out;
}

void read_partitions(const Field& field, ClusterConfig& cluster) {
  const std::size_t count = field.array_size();
  if (count == 0) field.fail("expected at least one partition");
  for (std::size_t p = 0; p < count; ++p) {
    const Field part = field.at(p);
    part.expect_object({"name", "nodes", "default", "default_time", "max_time", "state", "priority_tier",
                        "priority_job_factor", "tres_billing_weights", "qos", "preempt_mode", "grace_time"});
    PartitionConfig config;
    config.name = part.at("name").non_empty_string();
    if (cluster.partition_index(config.name) >= 0)
      part.at("name").fail("partition '" + config.name + "' defined twice");
    config.nodes = resolve_partition_nodes(part.at("nodes"), cluster);
    config.is_default = part.has("default") && part.at("default").boolean();
    if (part.has("default_time")) config.default_time_s = part.at("default_time").slurm_time();
    if (part.has("max_time")) config.max_time_s = part.at("max_time").slurm_time();
    if (part.has("state")) {
      const std::string s = part.at("state").string();
      if (s == "UP")
        config.state = PartitionState::kUp;
      else if (s == "DOWN")
        config.state = PartitionState::kDown;
      else if (s == "DRAIN")
        config.state = PartitionState::kDrain;
      else if (s == "INACTIVE")
        config.state = PartitionState::kInactive;
      else
        part.at("state").fail("expected UP, DOWN, DRAIN or INACTIVE");
    }
    if (part.has("priority_tier")) config.priority_tier = part.at("priority_tier").u32();
    if (part.has("priority_job_factor")) config.priority_job_factor = part.at("priority_job_factor").u32();
    if (part.has("tres_billing_weights")) {
      std::string error;
      if (!parse_billing_weights(part.at("tres_billing_weights").string(), config.billing, error))
        part.at("tres_billing_weights").fail(error);
    }
    if (part.has("qos")) config.qos = part.at("qos").non_empty_string();
    if (part.has("preempt_mode")) {
      std::string mode = part.at("preempt_mode").string();
      for (char& c : mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (mode == "OFF") {
        config.preempt_mode = PreemptMode::kOff;
      } else if (mode == "CANCEL") {
        config.preempt_mode = PreemptMode::kCancel;
      } else if (mode == "REQUEUE") {
        config.preempt_mode = PreemptMode::kRequeue;
      } else {
        part.at("preempt_mode").fail("expected OFF, CANCEL or REQUEUE");
      }
    }
    if (part.has("grace_time")) config.grace_time_s = static_cast<std::int64_t>(part.at("grace_time").non_negative());
    cluster.partitions.push_back(std::move(config));
  }
}

/// Reads /cluster/topology: topology.conf or topology.yaml (with "topology_name" to pick one of its topologies),
/// switches or blocks written inline, or a fat-tree / NVL72 builder.
void read_topology(const Field& field, const std::filesystem::path& base_dir, ClusterConfig& cluster) {
  field.expect_object({"conf", "topology_name", "switches", "blocks", "block_sizes", "fat_tree", "nvl72",
                       "TopologyParam", "max_switch_wait"});
  const int forms = int(field.has("conf")) + int(field.has("switches")) + int(field.has("blocks")) +
                    int(field.has("fat_tree")) + int(field.has("nvl72"));
  if (forms != 1) field.fail("expected exactly one of \"conf\", \"switches\", \"blocks\", \"fat_tree\" or \"nvl72\"");
  std::vector<std::string> names;
  for (const NodeConfig& n : cluster.nodes) names.push_back(n.name);
  auto strings = [](const Field& f) {  // a hostlist expression or an array of names
    std::vector<std::string> out;
    if (f.raw().is_string()) {
      try {
        return expand_hostlist(f.raw().get<std::string>());
      } catch (const std::invalid_argument& e) {
        f.fail(e.what());
      }
    }
    for (std::size_t i = 0; i < f.array_size(); ++i) out.push_back(f.at(i).non_empty_string());
    return out;
  };
  auto sizes = [](const Field& f) {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < f.array_size(); ++i) out.push_back(static_cast<std::uint32_t>(f.at(i).positive()));
    return out;
  };
  TopologySpec spec;
  std::string source = field.pointer();
  if (field.has("topology_name") && !(field.has("conf") && is_topology_yaml_path(field.at("conf").string())))
    field.at("topology_name").fail("only with a topology.yaml (.yaml or .yml) \"conf\"");
  if (field.has("conf")) {
    const std::filesystem::path path = base_dir / field.at("conf").non_empty_string();
    spec = read_topology_file(path.string(),
                              field.has("topology_name") ? field.at("topology_name").non_empty_string() : "");
    source = path.string();
  } else if (field.has("switches")) {
    const Field list = field.at("switches");
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const Field f = list.at(i);
      f.expect_object({"name", "switches", "nodes", "link_speed"});
      SwitchSpec sw;
      sw.name = f.at("name").non_empty_string();
      if (f.has("switches")) sw.switches = strings(f.at("switches"));
      if (f.has("nodes")) sw.nodes = strings(f.at("nodes"));
      if (f.has("link_speed")) sw.link_speed = f.at("link_speed").string();
      if (sw.switches.empty() == sw.nodes.empty()) f.fail("expected exactly one of \"switches\" or \"nodes\"");
      spec.switches.push_back(std::move(sw));
    }
  } else if (field.has("blocks")) {
    const Field list = field.at("blocks");
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const Field f = list.at(i);
      f.expect_object({"name", "nodes"});
      spec.blocks.push_back(BlockSpec{f.at("name").non_empty_string(), strings(f.at("nodes"))});
    }
    if (field.has("block_sizes")) spec.block_sizes = sizes(field.at("block_sizes"));
  } else if (field.has("fat_tree")) {
    const Field f = field.at("fat_tree");
    f.expect_object({"nodes_per_leaf", "leaves_per_spine"});
    const auto per_leaf = static_cast<std::uint32_t>(f.at("nodes_per_leaf").positive());
    const auto per_spine =
        static_cast<std::uint32_t>(f.has("leaves_per_spine") ? f.at("leaves_per_spine").positive() : 8);
    spec = fat_tree_spec(names, per_leaf, per_spine);
  } else {
    const Field f = field.at("nvl72");
    f.expect_object({"nodes_per_block", "block_sizes"});
    const auto per_block =
        static_cast<std::uint32_t>(f.has("nodes_per_block") ? f.at("nodes_per_block").positive() : 18);
    spec =
        block_spec(names, per_block, f.has("block_sizes") ? sizes(f.at("block_sizes")) : std::vector<std::uint32_t>{});
  }
  try {
    cluster.topology.slurm = resolve_topology(spec, names, source);
  } catch (const ConfigError& e) {
    if (field.has("conf")) throw;
    field.fail(e.problem());
  }
  if (field.has("TopologyParam")) {
    const std::string param = field.at("TopologyParam").string();
    if (param != "TopoOptional" && !param.empty()) field.at("TopologyParam").fail("expected TopoOptional or \"\"");
    cluster.topology.slurm.topo_optional = param == "TopoOptional";
  }
  if (field.has("max_switch_wait"))
    cluster.topology.slurm.max_switch_wait_s = static_cast<std::int64_t>(field.at("max_switch_wait").non_negative());
}

/// Reads /reservations: advance reservations (scontrol create reservation) as scenario events.
void read_reservations(const Field& field, ClusterConfig& cluster) {
  for (std::size_t i = 0; i < field.array_size(); ++i) {
    const Field r = field.at(i);
    r.expect_object({"name", "start", "duration", "end", "nodes", "users", "accounts", "flags"});
    ReservationConfig resv;
    resv.name = r.at("name").non_empty_string();
    for (const ReservationConfig& other : cluster.reservations) {
      if (other.name == resv.name) r.at("name").fail("reservation '" + resv.name + "' defined twice");
    }
    resv.start_s = static_cast<std::int64_t>(r.at("start").non_negative());
    if (r.has("duration") == r.has("end")) r.fail("expected exactly one of \"duration\" or \"end\"");
    if (r.has("duration")) {
      const std::int64_t d = r.at("duration").slurm_time();
      if (d <= 0) r.at("duration").fail("expected a positive duration");
      resv.end_s = resv.start_s + d;
    } else {
      resv.end_s = static_cast<std::int64_t>(r.at("end").non_negative());
      if (resv.end_s <= resv.start_s) r.at("end").fail("expected an end after the start");
    }
    resv.nodes = resolve_partition_nodes(r.at("nodes"), cluster);
    auto names = [&](const char* key, std::vector<std::string>& out) {
      if (!r.has(key)) return;
      const Field list = r.at(key);
      for (std::size_t k = 0; k < list.array_size(); ++k) out.push_back(list.at(k).non_empty_string());
    };
    names("users", resv.users);
    names("accounts", resv.accounts);
    if (r.has("flags")) {
      const std::string flags = r.at("flags").string();
      if (flags == "MAINT") {
        resv.maint = true;
      } else if (!flags.empty()) {
        r.at("flags").fail("supported flags: MAINT");
      }
    }
    if (!resv.maint && resv.users.empty() && resv.accounts.empty())
      r.fail("a reservation needs users or accounts (or Flags=MAINT for a maintenance window)");
    cluster.reservations.push_back(std::move(resv));
  }
}

void read_trace(const Field& field, const std::filesystem::path& base_dir, Scenario& scenario) {
  field.expect_object(
      {"path", "format", "processors", "estimate", "cpus_per_gpu", "partition", "limit_jobs", "skip_invalid"});
  scenario.has_trace = true;
  TraceWorkload& trace = scenario.trace;
  std::filesystem::path path = field.at("path").non_empty_string();
  trace.path = path.is_absolute() ? path : base_dir / path;
  trace.format = field.has("format") ? field.at("format").string() : "swf";
  SacctFormat history_format;
  if (trace.format != "swf" && !parse_sacct_format(trace.format, history_format))
    field.at("format").fail("unsupported trace format '" + trace.format +
                            "' (supported: swf, sacct, sacct-json, slurmdb-json)");
  if (field.has("processors")) {
    const std::string m = field.at("processors").string();
    if (m == "cpus")
      trace.options.processors = SwfProcessorMapping::kCpus;
    else if (m == "gpus")
      trace.options.processors = SwfProcessorMapping::kGpus;
    else if (m == "nodes")
      trace.options.processors = SwfProcessorMapping::kNodes;
    else
      field.at("processors").fail("expected \"cpus\", \"gpus\" or \"nodes\"");
  }
  if (field.has("estimate")) {
    const std::string e = field.at("estimate").string();
    if (e == "exact")
      trace.options.estimates = SwfEstimateRule::kExact;
    else if (e == "requested")
      trace.options.estimates = SwfEstimateRule::kRequested;
    else
      field.at("estimate").fail("expected \"exact\" (unknown requested time = run time) or \"requested\"");
  }
  if (field.has("cpus_per_gpu")) trace.options.cpus_per_gpu = field.at("cpus_per_gpu").u32();
  if (field.has("partition")) trace.options.partition = field.at("partition").non_empty_string();
  if (field.has("limit_jobs")) trace.limit_jobs = static_cast<std::int64_t>(field.at("limit_jobs").non_negative());
  if (field.has("skip_invalid")) trace.options.skip_invalid = field.at("skip_invalid").boolean();
}

void read_synthetic(const Field& field, Scenario& scenario) {
  field.expect_object({"profile", "jobs", "load", "users", "accounts", "partition"});
  SyntheticWorkload& w = scenario.synthetic;
  w.profile = field.at("profile").non_empty_string();
  bool known = false;
  std::string names;
  for (const auto& p : synthetic_profiles()) {
    known = known || p.name == w.profile;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  if (!known) field.at("profile").fail("unknown profile '" + w.profile + "' (known: " + names + ")");
  w.jobs = field.at("jobs").positive_at_most(kMaxJobs);
  if (field.has("load")) {
    w.load = field.at("load").number();
    if (!(w.load > 0.0) || w.load > 100.0) field.at("load").fail("expected a number in (0, 100]");
  }
  if (field.has("users")) w.users = field.at("users").u32();
  if (field.has("accounts")) w.accounts = field.at("accounts").u32();
  if (field.has("partition")) w.partition = field.at("partition").non_empty_string();
}

void read_scheduler(const Field& field, SchedulerConfig& config) {
  field.expect_object({"policy", "sched_interval", "default_queue_depth", "batch_sched_delay", "bf_interval",
                       "bf_window", "bf_resolution", "bf_max_job_test", "bf_max_job_start", "bf_continue",
                       "OverTimeLimit", "KillWait", "epilog_s", "phase_s", "epoch_unix_s", "slurm_version", "shortcuts",
                       "priority", "scheduling_point"});
  const std::string policy = field.at("policy").non_empty_string();
  if (!parse_policy(policy, config.policy)) {
    field.at("policy").fail("unknown policy '" + policy + "' (known: " + policy_names() + ")");
  }
  if (field.has("scheduling_point")) {
    const Field f = field.at("scheduling_point");
    const std::string point = f.non_empty_string();
    if (point == "instant") {
      config.scheduling_point = SchedulingPoint::kInstant;
    } else if (point == "event") {
      config.scheduling_point = SchedulingPoint::kEvent;
    } else {
      f.fail("unknown scheduling point '" + point + "' (known: instant, event)");
    }
    // The slurm policy runs its passes on slurmctld's own triggers (batch_sched_delay, sched_interval,
    // bf_interval), not at the end of an instant.
    if (config.scheduling_point == SchedulingPoint::kEvent && config.policy == SchedulerPolicy::kSlurm) {
      f.fail(
          "\"event\" applies to the classic policies (fcfs, sjf, easy, easy-textbook, conservative); the slurm "
          "policy schedules on its own triggers (batch_sched_delay, sched_interval, bf_interval)");
    }
  }
  SlurmParameters& s = config.slurm;
  auto read_int = [&](const char* key, std::int64_t& out, std::int64_t min, std::int64_t max) {
    if (!field.has(key)) return;
    const Field f = field.at(key);
    const std::int64_t v = f.integer();
    if (v < min || v > max) f.fail("expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    out = v;
  };
  auto read_u32 = [&](const char* key, std::uint32_t& out, std::int64_t min, std::int64_t max) {
    std::int64_t v = out;
    read_int(key, v, min, max);
    out = static_cast<std::uint32_t>(v);
  };
  read_int("sched_interval", s.sched_interval_s, -1, 86400);
  if (s.sched_interval_s == 0)
    field.at("sched_interval").fail("expected -1 (disabled) or a positive number of seconds");
  read_u32("default_queue_depth", s.default_queue_depth, 1, 10'000'000);
  read_int("batch_sched_delay", s.batch_sched_delay_s, 0, 3600);
  read_int("bf_interval", s.bf_interval_s, -1, 10800);
  if (s.bf_interval_s == 0) field.at("bf_interval").fail("expected -1 (disabled) or a positive number of seconds");
  read_int("bf_window", s.bf_window_min, 1, 43200);
  read_int("bf_resolution", s.bf_resolution_s, 1, 3600);
  read_u32("bf_max_job_test", s.bf_max_job_test, 1, 1'000'000);
  read_u32("bf_max_job_start", s.bf_max_job_start, 0, 10'000'000);
  if (field.has("bf_continue")) s.bf_continue = field.at("bf_continue").boolean();
  read_int("OverTimeLimit", s.over_time_limit_min, 0, 65533);
  read_int("KillWait", s.kill_wait_s, 0, 65533);
  read_int("epilog_s", s.epilog_s, 0, 86400);
  read_int("phase_s", s.phase_s, 0, 86400);
  read_int("epoch_unix_s", s.epoch_unix_s, 0, std::int64_t{1} << 40);
  if (field.has("slurm_version")) {
    // "22.05" or "22.05.8": the release's year and month.
    const Field f = field.at("slurm_version");
    const std::string text = f.non_empty_string();
    unsigned year = 0, month = 0;
    if (std::sscanf(text.c_str(), "%2u.%2u", &year, &month) != 2 || text.size() < 5 || text[2] != '.' ||
        (text.size() > 5 && text[5] != '.') || year < 14 || month < 1 || month > 12) {
      f.fail("expected a Slurm release such as \"22.05\" or \"24.11.1\"");
    }
    s.slurm_version = year * 100 + month;
  }
  if (field.has("shortcuts")) s.shortcuts = field.at("shortcuts").boolean();
  if (field.has("priority")) detail::read_priority(field.at("priority"), config.priority);
}

}  // namespace

std::string_view policy_name(SchedulerPolicy policy) {
  switch (policy) {
    case SchedulerPolicy::kFcfs:
      return "fcfs";
    case SchedulerPolicy::kSjf:
      return "sjf";
    case SchedulerPolicy::kEasy:
      return "easy";
    case SchedulerPolicy::kEasyTextbook:
      return "easy-textbook";
    case SchedulerPolicy::kConservative:
      return "conservative";
    case SchedulerPolicy::kSlurm:
      return "slurm";
  }
  return "unknown";
}

namespace {
constexpr SchedulerPolicy kAllPolicies[] = {SchedulerPolicy::kFcfs,         SchedulerPolicy::kSjf,
                                            SchedulerPolicy::kEasy,         SchedulerPolicy::kEasyTextbook,
                                            SchedulerPolicy::kConservative, SchedulerPolicy::kSlurm};
}  // namespace

bool parse_policy(std::string_view name, SchedulerPolicy& out) {
  for (auto p : kAllPolicies) {
    if (policy_name(p) == name) {
      out = p;
      return true;
    }
  }
  return false;
}

std::string policy_names() {
  std::string names;
  for (auto p : kAllPolicies) names += (names.empty() ? "" : ", ") + std::string(policy_name(p));
  return names;
}

std::string_view scheduling_point_name(SchedulingPoint point) {
  return point == SchedulingPoint::kEvent ? "event" : "instant";
}

bool parse_slurm_time(std::string_view text, std::int64_t& seconds) {
  if (text == "UNLIMITED" || text == "INFINITE" || text == "unlimited" || text == "infinite") {
    seconds = -1;
    return true;
  }
  if (text.empty()) return false;
  std::int64_t days = 0;
  const auto dash = text.find('-');
  std::string_view rest = text;
  if (dash != std::string_view::npos) {
    auto r = std::from_chars(text.data(), text.data() + dash, days);
    if (r.ec != std::errc() || r.ptr != text.data() + dash || days < 0 || days > kMaxTimeSeconds) return false;
    rest = text.substr(dash + 1);
  }
  std::vector<std::int64_t> parts;
  std::size_t pos = 0;
  while (true) {
    const auto colon = rest.find(':', pos);
    const std::string_view piece = rest.substr(pos, colon == std::string_view::npos ? rest.npos : colon - pos);
    std::int64_t v = 0;
    auto r = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (piece.empty() || r.ec != std::errc() || r.ptr != piece.data() + piece.size() || v < 0) return false;
    if (v > kMaxTimeSeconds) return false;  // keeps the sum below from overflowing; callers bound the total
    parts.push_back(v);
    if (colon == std::string_view::npos) break;
    pos = colon + 1;
  }
  if (parts.size() > 3) return false;
  std::int64_t h = 0, m = 0, s = 0;
  if (dash != std::string_view::npos) {  // d-h, d-h:m, d-h:m:s
    h = parts[0];
    if (parts.size() > 1) m = parts[1];
    if (parts.size() > 2) s = parts[2];
  } else if (parts.size() == 1) {  // minutes
    m = parts[0];
  } else if (parts.size() == 2) {  // mm:ss
    m = parts[0];
    s = parts[1];
  } else {  // hh:mm:ss
    h = parts[0];
    m = parts[1];
    s = parts[2];
  }
  seconds = ((days * 24 + h) * 60 + m) * 60 + s;
  return true;
}

namespace {

/// A parser callback that refuses a key given twice in one object (JSON allows it; nlohmann keeps the last, which
/// would silently drop the first value), naming its JSON pointer.
json::parser_callback_t duplicate_key_check(const std::string& file) {
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being read
    std::string key;        // objects: the key being read
    std::set<std::string> keys;
  };
  auto frames = std::make_shared<std::vector<Frame>>();
  const auto pointer = [frames](std::size_t depth) {
    std::string p;
    for (std::size_t i = 0; i < depth && i < frames->size(); ++i) {
      const Frame& f = (*frames)[i];
      p += "/" + (f.array ? std::to_string(f.index - 1) : f.key);
    }
    return p;
  };
  return [frames, pointer, file](int /*depth*/, json::parse_event_t event, json& parsed) {
    const auto element_starts = [&] {
      if (!frames->empty() && frames->back().array) ++frames->back().index;
    };
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        element_starts();
        frames->push_back(Frame{event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames->empty()) frames->pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames->back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw ScenarioError(file, pointer(frames->size()), "key given twice in one object");
        }
        break;
      }
      case json::parse_event_t::value:
        element_starts();
        break;
    }
    return true;
  };
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file, const std::filesystem::path& base_dir,
                        const std::vector<std::string>& overrides) {
  json doc;
  try {
    doc = json::parse(text, duplicate_key_check(file));
  } catch (const json::parse_error& e) {
    // nlohmann reports "... at line L, column C: ..." in what(); keep its position information.
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw ScenarioError(file, "", "invalid JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  } catch (const json::out_of_range&) {
    // 1e999: nlohmann's out_of_range.406 quotes the whole number, which may be megabytes long
    throw ScenarioError(file, "", "invalid JSON: a number too large for a double");
  }
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || o.empty() || o[0] != '/')
      throw ScenarioError(file, "", "override '" + o + "': expected /json/pointer=value");
    const std::string pointer = o.substr(0, eq);
    const std::string value = o.substr(eq + 1);
    json parsed = json::parse(value, nullptr, false);
    if (parsed.is_discarded()) parsed = value;  // a bare word is a string
    try {
      const json::json_pointer ptr(pointer);
      if (!doc.contains(ptr.parent_pointer()))
        throw ScenarioError(
            file, pointer,
            "override: no such place in the scenario (" + ptr.parent_pointer().to_string() + " is missing)");
      doc[ptr] = parsed;
    } catch (const json::exception& e) {
      throw ScenarioError(file, pointer, std::string("override: ") + e.what());
    }
  }
  Scenario scenario;
  const Field root(doc, "", file);
  root.expect_object({"name", "description", "seed", "cluster", "workload", "scheduler", "accounting", "reservations",
                      "performance", "metrics", "faults", "autoscaler", "power_save", "cost", "operations"});
  scenario.name = root.at("name").non_empty_string();
  // The name becomes a folder (out/<name>) and a label: letters, digits, '.', '_' and '-' only, not "." or "..".
  const bool safe_name = scenario.name.size() <= 128 && scenario.name != "." && scenario.name != ".." &&
                         std::all_of(scenario.name.begin(), scenario.name.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
                         });
  if (!safe_name) {
    root.at("name").fail("'" + scenario.name.substr(0, 64) +
                         "' is not a plain name: use at most 128 letters, digits, '.', '_' and '-' (not '.' or "
                         "'..'); it names the output folder out/<name>");
  }
  if (root.has("description")) scenario.description = root.at("description").string();
  if (root.has("seed")) scenario.seed = root.at("seed").non_negative();

  const Field cluster = root.at("cluster");
  cluster.expect_object({"nodes", "partitions", "topology"});
  read_nodes(cluster.at("nodes"), scenario.cluster);
  read_partitions(cluster.at("partitions"), scenario.cluster);
  if (cluster.has("topology")) read_topology(cluster.at("topology"), base_dir, scenario.cluster);
  if (root.has("reservations")) read_reservations(root.at("reservations"), scenario.cluster);

  const Field workload = root.at("workload");
  workload.expect_object({"trace", "synthetic", "jobs", "switches"});
  if (workload.has("switches") && !parse_switches_spec(workload.at("switches").string(), scenario.workload_switches,
                                                       scenario.workload_switch_wait_s))
    workload.at("switches").fail("expected --switches syntax: count[@max-time], e.g. \"1@10:00\"");
  if (int(workload.has("trace")) + int(workload.has("synthetic")) + int(workload.has("jobs")) != 1)  // one source
    workload.fail("expected exactly one of \"trace\", \"synthetic\" or \"jobs\"");
  if (workload.has("jobs")) {
    scenario.has_inline_jobs = true;
    scenario.inline_jobs = detail::read_inline_jobs(workload.at("jobs"));
    for (std::size_t i = 0; i < scenario.inline_jobs.size(); ++i) {
      const std::string& part = scenario.inline_jobs[i].partition;
      if (!part.empty() && scenario.cluster.partition_index(part) < 0)
        workload.at("jobs").fail("job " + std::to_string(scenario.inline_jobs[i].id) + ": no partition named '" + part +
                                 "'");
      const std::string& resv = scenario.inline_jobs[i].reservation;
      const auto& all = scenario.cluster.reservations;
      if (!resv.empty() &&
          std::none_of(all.begin(), all.end(), [&](const ReservationConfig& r) { return r.name == resv; }))
        workload.at("jobs").fail("job " + std::to_string(scenario.inline_jobs[i].id) + ": no reservation named '" +
                                 resv + "'");
    }
  } else if (workload.has("trace")) {
    read_trace(workload.at("trace"), base_dir, scenario);
    if (!scenario.trace.options.partition.empty() &&
        scenario.cluster.partition_index(scenario.trace.options.partition) < 0)
      workload.at("trace").at("partition").fail("no partition named '" + scenario.trace.options.partition + "'");
  } else {
    read_synthetic(workload.at("synthetic"), scenario);
    if (!scenario.synthetic.partition.empty() && scenario.cluster.partition_index(scenario.synthetic.partition) < 0)
      workload.at("synthetic").at("partition").fail("no partition named '" + scenario.synthetic.partition + "'");
  }
  read_scheduler(root.at("scheduler"), scenario.scheduler);
  if (root.has("accounting")) detail::read_accounting(root.at("accounting"), scenario.accounting);
  if (root.has("performance")) {
    detail::read_performance(root.at("performance"), scenario.performance);
    const auto& degraded = scenario.performance.network.degraded;
    const auto& switches = scenario.cluster.topology.slurm.switches;
    for (std::size_t i = 0; i < degraded.size(); ++i) {
      const std::string where = "/performance/network/degraded/" + std::to_string(i);
      if (!degraded[i].switch_name.empty() &&
          std::none_of(switches.begin(), switches.end(),
                       [&](const TopologySwitch& s) { return s.name == degraded[i].switch_name && s.parent >= 0; }))
        throw ScenarioError(file, where + "/switch",
                            "no switch named '" + degraded[i].switch_name + "' with an uplink in the topology tree");
      if (!degraded[i].node_name.empty() &&
          std::none_of(scenario.cluster.nodes.begin(), scenario.cluster.nodes.end(),
                       [&](const NodeConfig& n) { return n.name == degraded[i].node_name; }))
        throw ScenarioError(file, where + "/node", "no node named '" + degraded[i].node_name + "'");
    }
  }
  if (root.has("metrics")) detail::read_metrics(root.at("metrics"), scenario.metrics);
  if (root.has("faults")) detail::read_faults(root.at("faults"), scenario.cluster, scenario.faults);
  if (root.has("autoscaler") && root.has("power_save"))
    root.at("power_save").fail("give /autoscaler or /power_save, not both");
  if (root.has("autoscaler")) detail::read_autoscaler(root.at("autoscaler"), scenario.cluster, scenario.autoscaler);
  if (root.has("power_save")) detail::read_power_save(root.at("power_save"), scenario.cluster, scenario.autoscaler);
  if (root.has("cost")) detail::read_cost(root.at("cost"), scenario.cluster, scenario.cost);
  if (root.has("operations")) detail::read_operations(root.at("operations"), scenario.cluster, scenario.operations);
  for (std::size_t p = 0; p < scenario.cluster.partitions.size(); ++p) {
    const std::string& qos = scenario.cluster.partitions[p].qos;
    const auto& defined = scenario.accounting.qos;
    if (!qos.empty() && qos != "normal" &&
        std::none_of(defined.begin(), defined.end(), [&](const QosConfig& q) { return q.name == qos; })) {
      throw ScenarioError(file, "/cluster/partitions/" + std::to_string(p) + "/qos", "no QOS named '" + qos + "'");
    }
  }
  return scenario;
}

Scenario load_scenario(const std::filesystem::path& path, const std::vector<std::string>& overrides) {
  if (const auto problem = input_file_problem(path, "scenario", kMaxScenarioBytes)) {
    throw ScenarioError(path.string(), "", *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path.string(), "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  Scenario s = parse_scenario(buffer.str(), path.filename().string(), path.parent_path(), overrides);
  s.file = path;
  return s;
}

namespace {

/// Which of `job`'s times is outside the input bounds (model/input_limits.hpp), or "" if none is. Every workload
/// source is checked again here, whatever its reader checked, so no later arithmetic can overflow.
std::string job_bound_problem(const JobSpec& job) {
  const auto outside = [](std::int64_t v) { return v < 0 || v > kMaxTimeSeconds; };
  const auto too_long = [](std::int64_t v) { return v < 0 || v > kMaxDurationSeconds; };
  const std::string bound = " s is outside 0 to 1e10 s (about 317 years), the bound on input times";
  const std::string long_bound = " s is outside 0 to 1e9 s (about 31 years), the bound on input durations";
  const std::string id = "job " + std::to_string(job.id) + ": ";
  if (outside(job.submit_s)) return id + "submit time " + std::to_string(job.submit_s) + bound;
  if (too_long(job.run_time_s)) return id + "run time " + std::to_string(job.run_time_s) + long_bound;
  if (job.time_limit_s != kNoTimeLimit && too_long(job.time_limit_s)) {
    return id + "time limit " + std::to_string(job.time_limit_s) + long_bound;
  }
  if (job.begin_s != -1 && outside(job.begin_s)) return id + "begin time " + std::to_string(job.begin_s) + bound;
  if (job.hold_until_s != -1 && job.hold_until_s != kHeldForever && outside(job.hold_until_s)) {
    return id + "hold-until time " + std::to_string(job.hold_until_s) + bound;
  }
  if (job.switch_wait_s != -1 && too_long(job.switch_wait_s)) {
    return id + "switch wait " + std::to_string(job.switch_wait_s) + long_bound;
  }
  return {};
}

}  // namespace

std::vector<JobSpec> load_workload(const Scenario& scenario) {
  std::vector<JobSpec> jobs;
  if (scenario.has_inline_jobs) {
    jobs = scenario.inline_jobs;
  } else if (scenario.has_trace && scenario.trace.format != "swf") {
    SacctFormat format = SacctFormat::kParsable;
    parse_sacct_format(scenario.trace.format, format);
    SacctImport history = read_sacct(scenario.trace.path, format, SacctImportOptions{});
    jobs = std::move(history.jobs);
    if (!scenario.trace.options.partition.empty()) {
      for (JobSpec& j : jobs) j.partition = scenario.trace.options.partition;
    }
    if (scenario.trace.limit_jobs > 0 && jobs.size() > static_cast<std::size_t>(scenario.trace.limit_jobs)) {
      jobs.resize(static_cast<std::size_t>(scenario.trace.limit_jobs));
    }
  } else if (scenario.has_trace) {
    const SwfTrace trace = read_swf(scenario.trace.path);
    SwfImportOptions options = scenario.trace.options;
    // Node size for the processor mapping: the first node of the target partition.
    const int part = options.partition.empty() ? scenario.cluster.default_partition()
                                               : scenario.cluster.partition_index(options.partition);
    const NodeConfig& node =
        scenario.cluster.nodes[scenario.cluster.partitions[static_cast<std::size_t>(part)].nodes[0]];
    options.cpus_per_node = node.cpus;
    options.gpus_per_node = node.gpus;
    if (options.processors == SwfProcessorMapping::kGpus && node.gpus == 0) {
      throw ScenarioError(scenario.file.filename().string(), "/workload/trace/processors",
                          "processors map to GPUs but the partition's nodes have no GPUs");
    }
    SwfImportResult result = swf_to_jobs(trace, options, scenario.trace.path.string());
    jobs = std::move(result.jobs);
    if (scenario.trace.limit_jobs > 0 && jobs.size() > static_cast<std::size_t>(scenario.trace.limit_jobs)) {
      jobs.resize(static_cast<std::size_t>(scenario.trace.limit_jobs));
    }
  } else {
    try {
      jobs = generate_synthetic(scenario.synthetic, scenario.cluster, scenario.seed);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(scenario.file.filename().string(), "/workload/synthetic", e.what());
    }
  }
  const std::string source = scenario.has_trace ? scenario.trace.path.string() : scenario.file.filename().string();
  const std::string where = scenario.has_trace         ? ""
                            : scenario.has_inline_jobs ? "/workload/jobs"
                                                       : "/workload/synthetic";
  if (jobs.size() > kMaxJobs) {
    throw ScenarioError(source, where,
                        std::to_string(jobs.size()) + " jobs, more than the bound of " + std::to_string(kMaxJobs));
  }
  for (const JobSpec& job : jobs) {
    if (const std::string problem = job_bound_problem(job); !problem.empty())
      throw ScenarioError(source, where, problem);
  }
  return jobs;
}

}  // namespace gputwin
