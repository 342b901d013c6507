// Reads /faults: the fault profile, its process, detection, repair times, job restarts, checkpointing and
// injected faults. Every error names the JSON pointer of the bad value.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "faults/fault_error.hpp"
#include "faults/xid_catalogue.hpp"
#include "model/cluster.hpp"
#include "model/faults_config.hpp"
#include "model/hostlist.hpp"
#include "model/scenario_field.hpp"
#include "model/text.hpp"

namespace gputwin {

const CheckpointRule* match_checkpoint(const FaultsConfig& config, std::uint32_t gpus, const std::string& name) {
  for (const CheckpointRule& rule : config.checkpoints) {
    if (gpus < rule.min_gpus) continue;
    if (!rule.name_prefix.empty() && name.rfind(rule.name_prefix, 0) != 0) continue;
    return &rule;
  }
  return nullptr;
}

namespace detail {

double non_negative_seconds(const Field& f) {
  if (f.raw().is_string()) {
    std::int64_t s = 0;
    if (!parse_slurm_time(f.string(), s) || s < 0) f.fail("expected seconds or a Slurm time such as \"12:00:00\"");
    if (s > kMaxDurationSeconds) f.fail("expected at most " + std::to_string(kMaxDurationSeconds) + " seconds");
    return static_cast<double>(s);
  }
  const double v = f.number();
  if (!(v >= 0) || !std::isfinite(v)) f.fail("expected a non-negative number of seconds");
  // Simulated time is integer microseconds in 64 bits; a billion seconds (31 years) is far beyond any run.
  if (v > static_cast<double>(kMaxDurationSeconds)) f.fail("expected at most 1e9 seconds (about 31 years)");
  return v;
}

double positive_seconds(const Field& f) {
  const double v = non_negative_seconds(f);
  // Periods below a millisecond would round to no time at all and repeat at one instant for ever.
  if (v < 1e-3) f.fail("expected at least 0.001 seconds");
  return v;
}

double probability(const Field& f) {
  const double v = f.number();
  if (!(v >= 0 && v <= 1)) f.fail("expected a number from 0 to 1");
  return v;
}

std::vector<std::uint32_t> read_node_set(const Field& f, const ClusterConfig& cluster) {
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::uint32_t i = 0; i < cluster.nodes.size(); ++i) index.emplace(cluster.nodes[i].name, i);
  std::vector<std::string> names;
  if (f.raw().is_array()) {
    for (std::size_t i = 0; i < f.array_size(); ++i) names.push_back(f.at(i).non_empty_string());
  } else {
    names = expand_hostlist(f.non_empty_string());
  }
  std::vector<std::uint32_t> nodes;
  for (const std::string& n : names) {
    auto it = index.find(n);
    if (it == index.end()) f.fail("no node named '" + n + "'");
    nodes.push_back(it->second);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

namespace {

CheckKind read_check(const Field& f) {
  const std::string name = f.non_empty_string();
  for (const CheckInfo& c : check_catalogue()) {
    if (c.name == name) return c.kind;
  }
  std::string names;
  for (const CheckInfo& c : check_catalogue()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  f.fail("unknown check '" + name + "' (known: " + names + ")");
}

CheckProgram read_program(const Field& f) {
  CheckProgram program;
  for (std::size_t i = 0; i < f.array_size(); ++i) program.checks.push_back(read_check(f.at(i)));
  return program;
}

HealthCheckNodeState read_node_state(const Field& f) {
  HealthCheckNodeState s;
  const std::string text = f.non_empty_string();
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string word = text.substr(begin, comma - begin);
    begin = comma + 1;
    const std::string w = lower(word);
    if (w == "any") continue;
    if (w == "idle")
      s.idle = true;
    else if (w == "alloc")
      s.alloc = true;
    else if (w == "mixed")
      s.mixed = true;
    else if (w == "nondrained_idle")
      s.nondrained_idle = true;
    else if (w == "cycle")
      s.cycle = true;
    else if (w == "start_only")
      s.start_only = true;
    else
      f.fail("unknown HealthCheckNodeState '" + std::string(word) +
             "' (ANY, IDLE, ALLOC, MIXED, NONDRAINED_IDLE, "
             "CYCLE, START_ONLY)");
  }
  return s;
}

CheckpointRule read_checkpoint(const Field& f) {
  f.expect_object({"min_gpus", "name_prefix", "interval", "write_s", "parameters_billion", "bytes_per_parameter",
                   "storage", "restart_s", "async"});
  CheckpointRule rule;
  if (f.has("min_gpus")) rule.min_gpus = f.at("min_gpus").u32();
  if (f.has("name_prefix")) rule.name_prefix = f.at("name_prefix").string();
  if (f.has("interval")) {
    const Field iv = f.at("interval");
    if (iv.raw().is_string() && (iv.string() == "young" || iv.string() == "daly")) {
      rule.interval = iv.string() == "young" ? CheckpointRule::Interval::kYoung : CheckpointRule::Interval::kDaly;
    } else {
      rule.interval_s = positive_seconds(iv);
    }
  }
  if (f.has("write_s") && f.has("parameters_billion"))
    f.fail("give either write_s or parameters_billion with storage, not both");
  read_seconds_if(f, "write_s", rule.write_s);
  if (f.has("parameters_billion")) {
    const double params = f.at("parameters_billion").number();
    if (!(params > 0)) f.at("parameters_billion").fail("expected a positive number");
    const double bytes =
        f.has("bytes_per_parameter") ? f.at("bytes_per_parameter").number() : kCheckpointBytesPerParameter;
    if (!(bytes > 0)) f.at("bytes_per_parameter").fail("expected a positive number");
    const Field st = f.at("storage");
    st.expect_object({"write_gbps", "read_gbps"});
    StorageVolume volume;
    volume.write_gbps = st.at("write_gbps").number();
    if (!(volume.write_gbps > 0)) st.at("write_gbps").fail("expected a positive number of GB/s");
    // One write of the whole state at the volume's aggregate bandwidth (writers are not the bottleneck).
    rule.write_s = checkpoint_write_s(checkpoint_size_gb(params * 1e9, bytes), volume, 1);
  } else if (f.has("storage") || f.has("bytes_per_parameter")) {
    f.fail("storage and bytes_per_parameter need parameters_billion");
  }
  read_seconds_if(f, "restart_s", rule.restart_s);
  if (f.has("async")) rule.blocking = !f.at("async").boolean();
  return rule;
}

InjectedFault read_injected(const Field& f, const ClusterConfig& cluster) {
  f.expect_object({"time", "node", "gpu", "xid", "effect", "symptom", "cause"});
  InjectedFault fault;
  fault.time_s = non_negative_seconds(f.at("time"));
  const auto nodes = read_node_set(f.at("node"), cluster);
  if (nodes.size() != 1) f.at("node").fail("expected one node");
  fault.node = nodes.front();
  if (f.has("gpu")) {
    fault.gpu = f.at("gpu").u32();
    if (fault.gpu >= std::max<std::uint32_t>(cluster.nodes[fault.node].gpus, 1))
      f.at("gpu").fail("node '" + cluster.nodes[fault.node].name + "' has no GPU " + std::to_string(fault.gpu));
  }
  if (f.has("xid")) {
    fault.xid = f.at("xid").u32();
    const XidInfo* info = find_xid(fault.xid);
    if (info == nullptr) f.at("xid").fail("XID " + std::to_string(fault.xid) + " is not in the catalogue");
    fault.effect = info->effect;
    fault.symptom = info->symptom;
  } else if (!f.has("effect") || !f.has("symptom")) {
    f.fail("give an xid, or an effect and a symptom");
  }
  if (f.has("effect")) {
    const std::string e = f.at("effect").string();
    bool found = false;
    for (FaultEffect x : {FaultEffect::kNone, FaultEffect::kRestartApp, FaultEffect::kResetGpu,
                          FaultEffect::kRebootNode, FaultEffect::kRepairNode}) {
      if (to_string(x) == e) fault.effect = x, found = true;
    }
    if (!found) f.at("effect").fail("expected none, restart_app, reset_gpu, reboot_node or repair_node");
  }
  if (f.has("symptom")) {
    const std::string s = f.at("symptom").string();
    bool found = false;
    for (int i = 0; i <= static_cast<int>(Symptom::kAnnounced); ++i) {
      if (to_string(static_cast<Symptom>(i)) == s) fault.symptom = static_cast<Symptom>(i), found = true;
    }
    if (!found)
      f.at("symptom").fail(
          "expected none, app_error, gpu_error, gpu_lost, link_down, host_error, host_down, hang, "
          "degraded, silent or announced");
  }
  fault.cause = f.has("cause") ? f.at("cause").string() : "injected";
  return fault;
}

void read_repair(const Field& f, RepairTimes& r) {
  f.expect_object({"gpu_reset_s", "reboot_s", "auto_repair_s", "manual_repair_s", "p_manual", "undetected_found_s",
                   "admin_resume_s", "node_state"});
  read_seconds_if(f, "gpu_reset_s", r.gpu_reset_s);
  read_seconds_if(f, "reboot_s", r.reboot_s);
  read_seconds_if(f, "auto_repair_s", r.auto_repair_s);
  read_seconds_if(f, "manual_repair_s", r.manual_repair_s);
  if (f.has("p_manual")) r.p_manual = probability(f.at("p_manual"));
  if (f.has("undetected_found_s")) r.undetected_found_s = positive_seconds(f.at("undetected_found_s"));
  if (f.has("admin_resume_s")) r.admin_resume_s = non_negative_seconds(f.at("admin_resume_s"));
  if (f.has("node_state")) {
    const std::string state = f.at("node_state").string();
    if (state != "DRAIN" && state != "FAIL") f.at("node_state").fail("expected DRAIN or FAIL");
    r.fail_state = state == "FAIL";
  }
}

void read_health(const Field& f, std::size_t node_count, HealthPolicy& h) {
  f.expect_object(
      {"max_nodes_out", "max_nodes_out_pct", "xid_recurrence_s", "reboots_before_repair", "reboot_window_s"});
  if (f.has("max_nodes_out")) {
    h.max_nodes_out = f.at("max_nodes_out").u32();
    if (h.max_nodes_out > node_count)
      f.at("max_nodes_out").fail("expected at most the cluster's " + std::to_string(node_count) + " nodes");
  }
  if (f.has("max_nodes_out_pct")) {
    h.max_nodes_out_pct = f.at("max_nodes_out_pct").number();
    if (!(h.max_nodes_out_pct > 0 && h.max_nodes_out_pct <= 100))
      f.at("max_nodes_out_pct").fail("expected a percentage above 0 and at most 100");
  }
  read_seconds_if(f, "xid_recurrence_s", h.xid_recurrence_s);
  if (f.has("reboots_before_repair")) {
    h.reboots_before_repair = f.at("reboots_before_repair").u32();
    if (h.reboots_before_repair == 1) f.at("reboots_before_repair").fail("expected 0 (off) or at least 2");
  }
  if (f.has("reboot_window_s")) h.reboot_window_s = positive_seconds(f.at("reboot_window_s"));
}

}  // namespace

void read_faults(const Field& f, const ClusterConfig& cluster, FaultsConfig& config) {
  f.expect_object({"enabled",
                   "profile",
                   "rate_scale",
                   "distribution",
                   "weibull_shape",
                   "weibull_start",
                   "lemons",
                   "nodes_per_rack",
                   "nodes_per_switch",
                   "links_per_node",
                   "HealthCheckInterval",
                   "HealthCheckNodeState",
                   "HealthCheckProgram",
                   "health_check_run_time_s",
                   "SlurmdTimeout",
                   "active_checks",
                   "nccl_watchdog_s",
                   "requeue_on_detection",
                   "health",
                   "repair",
                   "restart_failed_jobs",
                   "max_restarts",
                   "checkpoint",
                   "inject",
                   "epilog_check",
                   "prolog_check",
                   "ReturnToService"});
  config.enabled = !f.has("enabled") || f.at("enabled").boolean();
  if (f.has("rate_scale")) {
    config.rate_scale = f.at("rate_scale").number();
    if (!(config.rate_scale >= 0 && config.rate_scale <= 1e6))
      f.at("rate_scale").fail("expected a number from 0 to 1e6");
  }
  if (f.has("profile")) {
    const Field p = f.at("profile");
    std::vector<FaultProfile> profiles;
    const auto add = [&](const Field& name_field) {
      const std::string name = name_field.non_empty_string();
      auto profile = find_fault_profile(name);
      if (!profile) name_field.fail("unknown fault profile '" + name + "' (known: " + fault_profile_names() + ")");
      profiles.push_back(std::move(*profile));
    };
    if (p.raw().is_array()) {
      for (std::size_t i = 0; i < p.array_size(); ++i) add(p.at(i));
      if (profiles.empty()) p.fail("expected at least one profile name");
    } else {
      add(p);
    }
    config.profile = profiles.size() == 1 ? profiles.front() : merge_profiles("merged", profiles);
    for (FaultClass& c : config.profile.classes) c.rate_per_component_hour *= config.rate_scale;
    config.random_faults = config.rate_scale > 0;
  }
  if (f.has("distribution")) {
    const std::string d = f.at("distribution").string();
    if (d == "exponential")
      config.process.distribution = InterFailure::kExponential;
    else if (d == "weibull")
      config.process.distribution = InterFailure::kWeibull;
    else
      f.at("distribution").fail("expected exponential or weibull");
  }
  if (f.has("weibull_shape")) {
    config.process.weibull_shape = f.at("weibull_shape").number();
    if (!(config.process.weibull_shape > 0)) f.at("weibull_shape").fail("expected a positive number");
  }
  if (f.has("weibull_start")) {
    const std::string s = f.at("weibull_start").string();
    if (s == "stationary")
      config.process.weibull_start = WeibullStart::kStationary;
    else if (s == "new")
      config.process.weibull_start = WeibullStart::kNew;
    else
      f.at("weibull_start").fail("expected stationary or new");
  }
  if (f.has("lemons")) {
    const Field l = f.at("lemons");
    l.expect_object({"fraction", "nodes", "rate_multiplier", "preserve_fleet_rate"});
    if (l.has("fraction") && l.has("nodes")) l.fail("give fraction or nodes, not both");
    if (l.has("fraction")) config.process.lemons.fraction = probability(l.at("fraction"));
    if (l.has("nodes")) config.process.lemons.nodes = read_node_set(l.at("nodes"), cluster);
    if (l.has("rate_multiplier")) {
      config.process.lemons.rate_multiplier = l.at("rate_multiplier").number();
      if (!(config.process.lemons.rate_multiplier > 0)) l.at("rate_multiplier").fail("expected a positive number");
    }
    if (l.has("preserve_fleet_rate")) config.process.lemons.preserve_fleet_rate = l.at("preserve_fleet_rate").boolean();
  }
  if (f.has("nodes_per_rack")) config.nodes_per_rack = f.at("nodes_per_rack").u32();
  if (f.has("nodes_per_switch")) config.nodes_per_switch = f.at("nodes_per_switch").u32();
  if (f.has("links_per_node")) config.links_per_node = f.at("links_per_node").u32();

  DetectionConfig& d = config.detection;
  // Soperator-like defaults when faults are on: a 2-minute check of XIDs, nvidia-smi, IB links and node basics.
  d.slurm.health_check_interval_s = 0;
  d.program.checks = {CheckKind::kXidLog, CheckKind::kNvidiaSmi, CheckKind::kIbLink, CheckKind::kNodeBasics};
  if (f.has("HealthCheckInterval")) d.slurm.health_check_interval_s = f.at("HealthCheckInterval").integer();
  if (d.slurm.health_check_interval_s < 0) f.at("HealthCheckInterval").fail("expected a non-negative integer");
  if (f.has("HealthCheckNodeState")) d.slurm.health_check_node_state = read_node_state(f.at("HealthCheckNodeState"));
  if (f.has("HealthCheckProgram")) d.program = read_program(f.at("HealthCheckProgram"));
  if (f.has("health_check_run_time_s")) d.program.run_time_s = non_negative_seconds(f.at("health_check_run_time_s"));
  if (f.has("SlurmdTimeout")) d.slurm.slurmd_timeout_s = f.at("SlurmdTimeout").integer();
  if (d.slurm.slurmd_timeout_s < 0) f.at("SlurmdTimeout").fail("expected a non-negative integer");
  if (f.has("active_checks")) {
    const Field a = f.at("active_checks");
    for (std::size_t i = 0; i < a.array_size(); ++i) {
      const Field c = a.at(i);
      c.expect_object({"checks", "run_time_s", "period", "phase"});
      ActiveCheck check;
      check.program = read_program(c.at("checks"));
      if (c.has("run_time_s")) check.program.run_time_s = non_negative_seconds(c.at("run_time_s"));
      check.period = from_seconds(static_cast<std::int64_t>(positive_seconds(c.at("period"))));
      if (c.has("phase")) check.phase = from_seconds(static_cast<std::int64_t>(non_negative_seconds(c.at("phase"))));
      d.active_checks.push_back(std::move(check));
    }
  }
  if (f.has("nccl_watchdog_s")) d.nccl_watchdog_timeout_s = positive_seconds(f.at("nccl_watchdog_s"));
  if (f.has("requeue_on_detection")) config.requeue_on_detection = f.at("requeue_on_detection").boolean();
  d.slurm.node_count = static_cast<std::uint32_t>(cluster.nodes.size());
  try {
    validate(d);
  } catch (const FaultConfigError& e) {
    f.fail(e.what());
  }
  if (f.has("repair")) read_repair(f.at("repair"), config.repair);
  if (f.has("health")) read_health(f.at("health"), cluster.nodes.size(), config.health);
  if (f.has("restart_failed_jobs")) config.restart_failed_jobs = f.at("restart_failed_jobs").boolean();
  if (f.has("max_restarts")) config.max_restarts = f.at("max_restarts").u32();
  if (f.has("epilog_check")) config.epilog_check = f.at("epilog_check").boolean();
  if (f.has("prolog_check")) config.prolog_check = f.at("prolog_check").boolean();
  if (f.has("ReturnToService")) {
    const std::int64_t rts = f.at("ReturnToService").integer();
    if (rts < 0 || rts > 2) f.at("ReturnToService").fail("expected 0, 1 or 2");
    config.return_to_service = static_cast<std::uint8_t>(rts);
  }
  if (config.repair.admin_resume_s < 0) config.repair.admin_resume_s = config.repair.undetected_found_s;
  if (f.has("checkpoint")) {
    const Field c = f.at("checkpoint");
    for (std::size_t i = 0; i < c.array_size(); ++i) config.checkpoints.push_back(read_checkpoint(c.at(i)));
  }
  if (f.has("inject")) {
    const Field in = f.at("inject");
    for (std::size_t i = 0; i < in.array_size(); ++i) config.inject.push_back(read_injected(in.at(i), cluster));
    std::stable_sort(config.inject.begin(), config.inject.end(),
                     [](const InjectedFault& a, const InjectedFault& b) { return a.time_s < b.time_s; });
  }
  if (config.enabled && !config.random_faults && config.inject.empty() && config.rate_scale > 0)
    f.fail("expected a fault profile (\"profile\") or injected faults (\"inject\")");
}

}  // namespace detail
}  // namespace gputwin
