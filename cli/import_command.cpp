// `gputwin import`: slurm.conf and friends to a scenario; see import_command.hpp. The scenario keys are README's
// "Scenario format" (and its "Accounting and priority" table); values the scenario format cannot express are left
// out and reported as notes rather than guessed.
#include "cli/import_command.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gpu/gpu_catalogue.hpp"
#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/sacct.hpp"
#include "model/slurm_conf.hpp"
#include "model/text.hpp"
#include "model/topology_conf.hpp"
#include "model/topology_yaml.hpp"

namespace gputwin {
namespace {

using Json = nlohmann::ordered_json;

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      const auto b = item.find_first_not_of(" \t");
      if (b != std::string::npos) out.push_back(item.substr(b, item.find_last_not_of(" \t") - b + 1));
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

/// Notes for stderr, each once, in order.
class Notes {
 public:
  void add(const std::string& note) {
    if (seen_.insert(note).second) notes_.push_back(note);
  }
  [[nodiscard]] const std::vector<std::string>& all() const { return notes_; }

 private:
  std::vector<std::string> notes_;
  std::set<std::string> seen_;
};

/// The catalogue name of a Slurm GPU type ("h100", "nvidia_h100_80gb_hbm3" -> "h100"); "" if not catalogued.
std::string catalogue_gpu_type(const std::string& type) {
  if (type.empty()) return "";
  if (const auto m = find_gpu_model(type)) return std::string(m->name);
  const std::string t = lower(type);
  if (t.find("a100") != std::string::npos) return t.find("40g") != std::string::npos ? "a100-40gb" : "a100";
  for (const char* name : {"gb200", "b300", "b200", "h200", "h100", "mi300x"}) {
    if (t.find(name) != std::string::npos) return name;
  }
  return "";
}

/// The scenario's node state for a slurm.conf State=: "" (available), "DOWN" or "DRAIN".
std::string scenario_node_state(const std::string& state) {
  if (state == "DOWN" || state == "FAIL" || state == "FUTURE") return "DOWN";
  if (state == "DRAIN" || state == "FAILING") return "DRAIN";
  return "";
}

/// Groups consecutive nodes of one shape whose names are prefix + consecutive equally wide numbers.
Json node_groups(const SlurmConf& conf, Notes& notes) {
  Json groups = Json::array();
  struct Key {
    std::string prefix;
    std::size_t digits;
    std::uint32_t cpus;
    std::uint64_t memory_mb;
    std::uint32_t gpus;
    std::string gpu_type;
    std::uint32_t weight;
    std::string state;
    bool operator==(const Key&) const = default;
  };
  std::optional<Key> current;
  std::uint64_t start = 0, count = 0;
  auto flush = [&]() {
    if (!current) return;
    const Key& k = *current;
    Json g;
    g["prefix"] = k.prefix;
    g["count"] = count;
    g["start_index"] = start;
    g["digits"] = k.digits;
    g["cpus"] = k.cpus;
    if (k.memory_mb > 0) g["memory_gb"] = static_cast<double>(k.memory_mb) / 1024.0;
    if (k.gpus > 0) g["gpus"] = k.gpus;
    if (!k.gpu_type.empty()) g["gpu_type"] = k.gpu_type;
    if (k.weight != 1) g["weight"] = k.weight;
    if (!k.state.empty()) g["state"] = k.state;
    groups.push_back(std::move(g));
  };
  for (const SlurmNode& n : conf.nodes) {
    const auto first_digit = n.name.find_last_not_of("0123456789") + 1;
    if (first_digit >= n.name.size() || n.name.size() - first_digit > 18) {
      throw ConfigError(n.source.file, n.source.line,
                        "node '" + n.name +
                            "': the scenario format names nodes <prefix><number>, and this name does not end in a "
                            "number");
    }
    const std::string suffix = n.name.substr(first_digit);
    const std::uint64_t index = std::stoull(suffix);
    std::string gpu_type;
    if (n.gpus > 0 && !n.gpu_type.empty()) {
      gpu_type = catalogue_gpu_type(n.gpu_type);
      if (gpu_type.empty()) {
        notes.add("GPU type '" + n.gpu_type + "' is not in the GPU catalogue (" + gpu_model_names() +
                  "); its nodes have untyped GPUs");
      } else if (lower(n.gpu_type) != gpu_type) {
        notes.add("GPU type '" + n.gpu_type + "' imported as " + gpu_type);
      }
      if (n.mixed_gpu_types) notes.add("node " + n.name + " has GPUs of several types; all counted as " + n.gpu_type);
    }
    if (n.state == "CLOUD") notes.add("State=CLOUD nodes are treated as always powered up (power saving not modelled)");
    Key key{n.name.substr(0, first_digit), suffix.size(), n.cpus, n.real_memory_mb, n.gpus, gpu_type, n.weight,
            scenario_node_state(n.state)};
    if (current && key == *current && index == start + count) {
      ++count;
      continue;
    }
    flush();
    current = key;
    start = index;
    count = 1;
  }
  flush();
  return groups;
}

/// Slurm time for the scenario: "d-hh:mm:ss", "hh:mm:ss" or "UNLIMITED" (the loader reads all three).
Json time_value(std::int64_t seconds) {
  return format_slurm_time(seconds);
}

/// OFF/CANCEL/REQUEUE from a PreemptMode list; "" (with a note) when the mode is not modelled.
std::string modelled_preempt_mode(const std::string& mode, const std::string& where, Notes& notes) {
  std::string base;
  for (const std::string& item : split_list(upper(mode))) {
    if (item == "OFF" || item == "CANCEL" || item == "REQUEUE") {
      base = item;
    } else if (item == "SUSPEND") {
      notes.add(where + "PreemptMode=" + mode + ": SUSPEND (gang scheduling) is not modelled; left out");
      return "";
    } else {
      notes.add(where + "PreemptMode=" + mode + ": " + item + " is not modelled");
    }
  }
  return base;
}

Json partitions_json(const SlurmConf& conf, Notes& notes) {
  Json parts = Json::array();
  for (const SlurmPartition& p : conf.partitions) {
    if (p.nodes.empty()) {
      notes.add("partition " + p.name + " has no nodes; left out");
      continue;
    }
    Json j;
    j["name"] = p.name;
    if (p.all_nodes) {
      j["nodes"] = "ALL";
    } else {
      std::vector<std::string> names;
      for (std::size_t i : p.nodes) names.push_back(conf.nodes[i].name);
      j["nodes"] = format_hostlist(names);
    }
    if (p.is_default) j["default"] = true;
    if (p.default_time_s) j["default_time"] = time_value(*p.default_time_s);
    if (p.max_time_s) j["max_time"] = time_value(*p.max_time_s);
    if (p.state != "UP") j["state"] = p.state;
    if (p.priority_tier) j["priority_tier"] = *p.priority_tier;
    if (p.priority_job_factor) j["priority_job_factor"] = *p.priority_job_factor;
    if (!p.tres_billing_weights.empty()) j["tres_billing_weights"] = p.tres_billing_weights;
    if (!p.qos.empty()) j["qos"] = p.qos;
    if (!p.preempt_mode.empty()) {
      const std::string mode = modelled_preempt_mode(p.preempt_mode, "partition " + p.name + ": ", notes);
      if (!mode.empty()) j["preempt_mode"] = mode;
    }
    if (p.grace_time_s) j["grace_time"] = *p.grace_time_s;
    parts.push_back(std::move(j));
  }
  if (parts.empty()) {
    throw ConfigError(conf.files.front(), 0, "no partition with nodes (a scenario needs at least one)");
  }
  return parts;
}

Json priority_json(const SlurmConf& conf, Notes& notes) {
  const SlurmPriorityParameters& p = conf.priority;
  Json j = Json::object();
  if (!p.type.empty()) {
    if (p.type == "priority/basic" || p.type == "priority/multifactor") {
      j["PriorityType"] = p.type;
    } else {
      notes.add("PriorityType=" + p.type + " is not modelled (priority/basic is used)");
    }
  }
  auto weight = [&](const char* key, const std::optional<std::uint32_t>& v) {
    if (v) j[key] = *v;
  };
  weight("PriorityWeightAge", p.weight_age);
  weight("PriorityWeightAssoc", p.weight_assoc);
  weight("PriorityWeightFairshare", p.weight_fairshare);
  weight("PriorityWeightJobSize", p.weight_job_size);
  weight("PriorityWeightPartition", p.weight_partition);
  weight("PriorityWeightQOS", p.weight_qos);
  if (!p.weight_tres.empty()) j["PriorityWeightTRES"] = p.weight_tres;
  if (p.max_age_s) j["PriorityMaxAge"] = time_value(*p.max_age_s);
  if (p.favor_small) j["PriorityFavorSmall"] = *p.favor_small;
  if (p.calc_period_s) {
    if (*p.calc_period_s % 60 == 0) {
      j["PriorityCalcPeriod"] = *p.calc_period_s / 60;
    } else {
      j["PriorityCalcPeriod"] = time_value(*p.calc_period_s);
    }
  }
  if (p.decay_half_life_s) j["PriorityDecayHalfLife"] = time_value(*p.decay_half_life_s);
  if (!p.usage_reset_period.empty()) j["PriorityUsageResetPeriod"] = p.usage_reset_period;
  if (!p.flags.empty()) {
    static const std::set<std::string> kFlags = {
        "ACCRUE_ALWAYS",   "SMALL_RELATIVE_TO_TIME", "CALCULATE_RUNNING", "MAX_TRES",       "NO_FAIR_TREE",
        "NO_NORMAL_ASSOC", "NO_NORMAL_PART",         "NO_NORMAL_QOS",     "NO_NORMAL_TRES", "NO_NORMAL_ALL"};
    std::vector<std::string> kept;
    for (const std::string& flag : split_list(p.flags)) {
      const std::string u = upper(flag);
      if (kFlags.count(u)) {
        kept.push_back(u);
      } else if (u != "FAIR_TREE") {  // FAIR_TREE is the default since 19.05
        notes.add("PriorityFlags " + flag + " is not modelled");
      }
    }
    if (!kept.empty()) j["PriorityFlags"] = join(kept, ",");
  }
  if (p.fairshare_dampening_factor) {
    if (*p.fairshare_dampening_factor == 0) {
      notes.add("FairShareDampeningFactor=0 left out (the scenario needs a positive factor)");
    } else {
      j["FairShareDampeningFactor"] = *p.fairshare_dampening_factor;
    }
  }
  return j;
}

Json scheduler_json(const SlurmConf& conf, Notes& notes) {
  Json j;
  j["policy"] = "slurm";
  const SlurmSchedulerParameters& s = conf.scheduler;
  auto put = [&](const char* key, const std::optional<std::int64_t>& v) {
    if (v) j[key] = *v;
  };
  put("sched_interval", s.sched_interval);
  put("default_queue_depth", s.default_queue_depth);
  put("batch_sched_delay", s.batch_sched_delay);
  put("bf_interval", s.bf_interval);
  put("bf_window", s.bf_window);
  put("bf_resolution", s.bf_resolution);
  put("bf_max_job_test", s.bf_max_job_test);
  put("bf_max_job_start", s.bf_max_job_start);
  if (s.bf_continue) j["bf_continue"] = true;
  if (conf.scheduler_type == "sched/builtin") {
    j["bf_interval"] = -1;
    notes.add("SchedulerType=sched/builtin: backfill is off (bf_interval -1)");
  } else if (!conf.scheduler_type.empty() && conf.scheduler_type != "sched/backfill") {
    notes.add("SchedulerType=" + conf.scheduler_type + " is not modelled (sched/backfill is used)");
  }
  if (!conf.select_type.empty() && conf.select_type != "select/cons_tres" && conf.select_type != "select/cons_res") {
    notes.add("SelectType=" + conf.select_type + " is not modelled (select/cons_tres is used)");
  }
  if (conf.over_time_limit_min) {
    if (*conf.over_time_limit_min < 0) {
      j["OverTimeLimit"] = 65533;
      notes.add("OverTimeLimit=UNLIMITED imported as 65533 minutes");
    } else {
      j["OverTimeLimit"] = *conf.over_time_limit_min;
    }
  }
  if (conf.kill_wait_s) j["KillWait"] = *conf.kill_wait_s;
  Json priority = priority_json(conf, notes);
  if (!priority.empty()) j["priority"] = std::move(priority);
  return j;
}

void put_limits_common(Json& j, const SacctmgrAssoc& a) {
  if (!a.grp_tres.empty()) j["GrpTRES"] = a.grp_tres;
  if (a.grp_jobs) j["GrpJobs"] = *a.grp_jobs;
  if (a.grp_submit_jobs) j["GrpSubmitJobs"] = *a.grp_submit_jobs;
  if (!a.max_tres.empty()) j["MaxTRES"] = a.max_tres;
  if (a.max_jobs) j["MaxJobs"] = *a.max_jobs;
  if (a.max_submit_jobs) j["MaxSubmitJobs"] = *a.max_submit_jobs;
  if (a.max_wall_s) j["MaxWall"] = time_value(*a.max_wall_s);
}

void note_other_options(const SacctmgrAssoc& a, const std::string& what, Notes& notes) {
  static const std::set<std::string> kHarmless = {"description", "organization", "adminlevel", "defaultwckey",
                                                  "wckeys",      "coordinator",  "comment",    "classification"};
  for (const auto& [key, value] : a.other) {
    if (!kHarmless.count(lower(key))) notes.add(what + " limit " + key + " is not modelled");
  }
  if (!a.qos.empty()) notes.add("association QOS lists (QOS=) are not modelled: any QOS is allowed");
}

Json qos_json(const std::vector<SacctmgrQos>& list, Notes& notes) {
  Json out = Json::array();
  for (const SacctmgrQos& q : list) {
    Json j;
    j["name"] = q.name;
    if (q.priority) j["Priority"] = *q.priority;
    if (q.usage_factor) j["UsageFactor"] = *q.usage_factor;
    if (!q.preempt.empty()) j["Preempt"] = q.preempt;
    if (!q.preempt_mode.empty()) {
      const std::string mode = modelled_preempt_mode(q.preempt_mode, "QOS " + q.name + ": ", notes);
      if (!mode.empty()) j["PreemptMode"] = mode;
    }
    if (q.grace_time_s) j["GraceTime"] = *q.grace_time_s;
    std::vector<std::string> flags;
    for (const std::string& f : split_list(q.flags)) {
      if (lower(f) == "denyonlimit") {
        flags.emplace_back("DenyOnLimit");
      } else if (lower(f) == "nodecay") {
        flags.emplace_back("NoDecay");
      } else {
        notes.add("QOS " + q.name + ": flag " + f + " is not modelled");
      }
    }
    if (!flags.empty()) j["Flags"] = join(flags, ",");
    if (!q.grp_tres.empty()) j["GrpTRES"] = q.grp_tres;
    if (q.grp_jobs) j["GrpJobs"] = *q.grp_jobs;
    if (q.grp_submit_jobs) j["GrpSubmitJobs"] = *q.grp_submit_jobs;
    if (!q.max_tres.empty()) j["MaxTRES"] = q.max_tres;
    if (!q.max_tres_per_user.empty()) j["MaxTRESPerUser"] = q.max_tres_per_user;
    if (q.max_jobs_per_user) j["MaxJobsPerUser"] = *q.max_jobs_per_user;
    if (q.max_submit_per_user) j["MaxSubmitJobsPerUser"] = *q.max_submit_per_user;
    if (q.max_wall_s) j["MaxWall"] = time_value(*q.max_wall_s);
    for (const auto& [column, value] : q.other) notes.add("QOS " + q.name + ": " + column + " is not modelled");
    out.push_back(std::move(j));
  }
  return out;
}

Json accounting_json(const SlurmConf& conf, const SacctmgrDump* dump, const std::vector<SacctmgrQos>* qos,
                     Notes& notes) {
  Json j = Json::object();
  if (!conf.accounting_storage_enforce.empty()) {
    static const std::set<std::string> kKnown = {"associations", "limits",  "qos",   "safe",
                                                 "nojobs",       "nosteps", "wckeys"};
    std::vector<std::string> kept;
    for (const std::string& flag : split_list(lower(conf.accounting_storage_enforce))) {
      if (flag == "all") {
        for (const char* f : {"associations", "limits", "qos", "safe", "wckeys"}) kept.emplace_back(f);
      } else if (kKnown.count(flag)) {
        kept.push_back(flag);
      } else {
        notes.add("AccountingStorageEnforce " + flag + " is not modelled");
      }
    }
    if (!kept.empty()) j["AccountingStorageEnforce"] = join(kept, ",");
  }
  if (!conf.preempt_type.empty()) {
    if (conf.preempt_type == "preempt/none" || conf.preempt_type == "preempt/qos" ||
        conf.preempt_type == "preempt/partition_prio") {
      j["PreemptType"] = conf.preempt_type;
    } else {
      notes.add("PreemptType=" + conf.preempt_type + " is not modelled");
    }
  }
  if (!conf.preempt_mode.empty()) {
    const std::string mode = modelled_preempt_mode(conf.preempt_mode, "", notes);
    if (!mode.empty()) j["PreemptMode"] = mode;
  }
  if (conf.preempt_exempt_time_s) j["PreemptExemptTime"] = time_value(*conf.preempt_exempt_time_s);

  std::set<std::string> qos_names{"normal"};
  if (qos != nullptr && !qos->empty()) {
    for (const SacctmgrQos& q : *qos) qos_names.insert(q.name);
    j["qos"] = qos_json(*qos, notes);
  }
  if (dump != nullptr) {
    note_other_options(dump->root, "root association", notes);
    if (!dump->root.grp_tres.empty() || dump->root.grp_jobs || dump->root.max_jobs) {
      notes.add("limits on the root association (Cluster line) are not modelled");
    }
    Json accounts = Json::array();
    for (const SacctmgrAssoc& a : dump->accounts) {
      Json acc;
      acc["name"] = a.name;
      if (a.parent != "root") acc["parent"] = a.parent;
      if (a.fairshare_parent) {
        acc["Fairshare"] = "parent";
      } else if (a.fairshare) {
        acc["Fairshare"] = *a.fairshare;
      }
      if (a.priority) acc["Priority"] = *a.priority;
      put_limits_common(acc, a);
      if (!a.default_qos.empty()) notes.add("account DefaultQOS is not modelled (users' DefaultQOS is)");
      note_other_options(a, "account", notes);
      accounts.push_back(std::move(acc));
    }
    Json users = Json::array();
    std::set<std::pair<std::string, std::string>> seen;
    for (const SacctmgrAssoc& u : dump->users) {
      if (u.parent == "root") {
        notes.add("user associations directly under root are left out (the scenario's users belong to accounts): " +
                  u.name);
        continue;
      }
      if (!u.partition.empty() || !seen.insert({u.name, u.parent}).second) {
        notes.add(
            "partition-specific associations are not modelled; the user's first association in the account "
            "is used: " +
            u.name + " in " + u.parent);
        continue;
      }
      Json user;
      user["user"] = u.name;
      user["account"] = u.parent;
      if (u.fairshare_parent) {
        user["Fairshare"] = "parent";
      } else if (u.fairshare) {
        user["Fairshare"] = *u.fairshare;
      }
      if (u.priority) user["Priority"] = *u.priority;
      if (!u.default_qos.empty()) {
        if (qos_names.count(u.default_qos)) {
          user["DefaultQOS"] = u.default_qos;
        } else {
          notes.add("DefaultQOS '" + u.default_qos + "' of user " + u.name +
                    " is not a known QOS (give --qos); left out");
        }
      }
      put_limits_common(user, u);
      note_other_options(u, "user", notes);
      users.push_back(std::move(user));
    }
    if (!accounts.empty()) j["accounts"] = std::move(accounts);
    if (!users.empty()) j["users"] = std::move(users);
  }
  return j;
}

/// "DefMemPerCPU=4096", "SchedulerParameters:bf_max_job_user=20", "NodeName=gpu[01-04] TmpDisk=..." -> unique short
/// labels for the description and stderr.
std::vector<std::string> not_modelled_labels(const SlurmConf& conf, const GresConf* gres) {
  std::vector<std::string> labels;
  std::set<std::string> seen;
  auto add = [&](const std::string& label) {
    if (seen.insert(label).second) labels.push_back(label);
  };
  for (const ConfSetting& s : conf.not_modelled) {
    const std::string key = lower(s.key);
    const std::string value = lower(s.value);
    if (key == "topologyplugin" && (value == "topology/tree" || value == "topology/block" || value == "topology/flat" ||
                                    value == "topology/default" || value == "topology/none"))
      continue;  // modelled (with --topology)
    if (key == "topologyparam" && value == "topooptional") continue;
    if (key == "schedulerparameters") {
      add("SchedulerParameters " + s.value.substr(0, s.value.find('=')));
    } else {
      add(s.key);
    }
  }
  if (gres != nullptr) {
    for (const ConfSetting& s : gres->not_modelled) add("gres.conf " + s.key + "=" + s.value);
  }
  return labels;
}

// topology.conf or topology.yaml as the scenario's /cluster/topology (inline switches or blocks; resolved when the
// scenario loads).
Json topology_json(const TopologySpec& spec, const SlurmConf& conf) {
  Json topo;
  if (!spec.switches.empty()) {
    Json switches = Json::array();
    for (const SwitchSpec& s : spec.switches) {
      Json j;
      j["name"] = s.name;
      if (!s.switches.empty()) j["switches"] = s.switches;
      if (!s.nodes.empty()) j["nodes"] = format_hostlist(s.nodes);
      if (!s.link_speed.empty()) j["link_speed"] = s.link_speed;
      switches.push_back(std::move(j));
    }
    topo["switches"] = std::move(switches);
  } else {
    Json blocks = Json::array();
    for (const BlockSpec& b : spec.blocks)
      blocks.push_back(Json{{"name", b.name}, {"nodes", format_hostlist(b.nodes)}});
    topo["blocks"] = std::move(blocks);
    if (!spec.block_sizes.empty()) topo["block_sizes"] = spec.block_sizes;
  }
  for (const ConfSetting& s : conf.not_modelled) {
    if (lower(s.key) == "topologyparam" && lower(s.value).find("topooptional") != std::string::npos)
      topo["TopologyParam"] = "TopoOptional";
  }
  return topo;
}

std::string iso_utc(std::int64_t unix_s) {
  const std::int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const std::int64_t secs = unix_s - days * 86400;
  // civil_from_days (Howard Hinnant)
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld", static_cast<long long>(y + (m <= 2)), m, d,
                static_cast<long long>(secs / 3600), static_cast<long long>((secs / 60) % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

}  // namespace

int run_import(const ImportRequest& request, std::ostream& out, std::ostream& err) {
  SacctFormat format = SacctFormat::kParsable;
  if (!parse_sacct_format(request.sacct_format, format)) {
    err << "gputwin import: --sacct-format: unknown format '" << request.sacct_format
        << "' (known: sacct, sacct-json, slurmdb-json)\n";
    return 2;
  }
  Notes notes;
  SlurmConf conf = read_slurm_conf(request.slurm_conf);
  if (!request.topology.empty() && !std::ifstream(request.topology)) {
    throw ConfigError(request.topology, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  std::optional<GresConf> gres;
  if (!request.gres.empty()) {
    gres = read_gres_conf(request.gres);
    for (const std::string& n : apply_gres_conf(conf, *gres)) notes.add(n);
  }
  std::optional<SacctmgrDump> dump;
  if (!request.assoc.empty()) dump = read_sacctmgr_dump(request.assoc);
  std::optional<std::vector<SacctmgrQos>> qos;
  if (!request.qos.empty()) qos = read_sacctmgr_qos(request.qos);

  Json scenario;
  const std::string name =
      !conf.cluster_name.empty() ? conf.cluster_name : std::filesystem::path(request.slurm_conf).stem().string();
  scenario["name"] = name.empty() ? "imported" : name;
  scenario["description"] = "";  // filled below, once every note is known
  scenario["seed"] = 1;
  Json cluster;
  cluster["nodes"] = node_groups(conf, notes);
  cluster["partitions"] = partitions_json(conf, notes);
  if (!request.topology.empty()) {
    // topology.yaml by extension: the named topology, else its cluster_default one.
    const TopologySpec spec = read_topology_file(request.topology, request.topology_name);
    if (!spec.switches.empty() || !spec.blocks.empty()) cluster["topology"] = topology_json(spec, conf);
  }
  scenario["cluster"] = std::move(cluster);

  Json workload;
  std::string history;
  std::int64_t history_epoch = -1;
  if (!request.sacct.empty()) {
    const SacctImport h = read_sacct(request.sacct, format, SacctImportOptions{});
    history_epoch = h.epoch_unix_s;
    workload["trace"] = {{"path", request.sacct}, {"format", std::string(sacct_format_name(format))}};
    std::set<std::string> users, accounts, unknown_partitions;
    for (const JobSpec& j : h.jobs) {
      users.insert(j.user);
      accounts.insert(j.account);
      if (!j.partition.empty() && conf.partition_index(j.partition) < 0) unknown_partitions.insert(j.partition);
    }
    history = request.sacct + " (" + std::to_string(h.jobs.size()) + " jobs from " + iso_utc(h.epoch_unix_s) + ")";
    err << "gputwin import: history " << request.sacct << ": " << h.jobs.size() << " jobs of " << users.size()
        << " users in " << accounts.size() << " accounts; epoch (submit 0) " << iso_utc(h.epoch_unix_s) << " = Unix "
        << h.epoch_unix_s << "; " << h.steps << " step records passed over\n";
    for (const auto& [reason, count] : h.skipped) {
      err << "gputwin import: history: skipped " << count << ": " << reason << "\n";
    }
    if (h.gpus_from_submit_line > 0) {
      notes.add(std::to_string(h.gpus_from_submit_line) + " jobs' GPU counts read from their submit lines");
    }
    for (const std::string& p : unknown_partitions)
      notes.add("the history uses partition " + p + ", not in slurm.conf");
    if (dump) {
      std::set<std::string> known_accounts{"root"};
      for (const auto& a : dump->accounts) known_accounts.insert(a.name);
      std::vector<std::string> missing;
      for (const std::string& a : accounts) {
        if (!a.empty() && !known_accounts.count(a)) missing.push_back(a);
      }
      if (!missing.empty()) {
        notes.add("accounts in the history but not in the sacctmgr dump (created under root on submit): " +
                  join(missing, ", "));
      }
    }
  } else {
    workload["synthetic"] = {{"profile", "acme-seren"}, {"jobs", 1000}, {"load", 0.9}};
    notes.add("no --sacct history given: the workload is a synthetic acme-seren profile of 1000 jobs at load 0.9");
    // The generator needs GPUs in its partition: the default one if it has any, else the first that does.
    auto has_gpus = [&](const SlurmPartition& p) {
      return std::any_of(p.nodes.begin(), p.nodes.end(), [&](std::size_t i) { return conf.nodes[i].gpus > 0; });
    };
    auto target = std::find_if(conf.partitions.begin(), conf.partitions.end(),
                               [](const SlurmPartition& p) { return p.is_default && !p.nodes.empty(); });
    if (target == conf.partitions.end()) {
      target = std::find_if(conf.partitions.begin(), conf.partitions.end(),
                            [](const SlurmPartition& p) { return !p.nodes.empty(); });
    }
    if (target != conf.partitions.end() && !has_gpus(*target)) {
      target = std::find_if(conf.partitions.begin(), conf.partitions.end(), has_gpus);
      if (target != conf.partitions.end()) {
        workload["synthetic"]["partition"] = target->name;
        notes.add("the default partition has no GPUs: the synthetic jobs go to partition " + target->name);
      } else {
        notes.add("no partition has GPUs: the synthetic GPU profiles cannot generate jobs for this cluster");
      }
    }
  }
  scenario["workload"] = std::move(workload);
  scenario["scheduler"] = scheduler_json(conf, notes);
  // The replay's t = 0 is the history's first submission: its wall-clock time places slurmctld's bf_resolution grid.
  if (history_epoch > 0) scenario["scheduler"]["epoch_unix_s"] = history_epoch;
  Json accounting = accounting_json(conf, dump ? &*dump : nullptr, qos ? &*qos : nullptr, notes);
  if (!accounting.empty()) scenario["accounting"] = std::move(accounting);

  const std::vector<std::string> not_modelled = not_modelled_labels(conf, gres ? &*gres : nullptr);
  std::string description = "Imported by gputwin import from " + request.slurm_conf;
  if (!conf.cluster_name.empty()) description += " (ClusterName=" + conf.cluster_name + ")";
  if (conf.files.size() > 1) {
    description += ", including " + join(std::vector<std::string>(conf.files.begin() + 1, conf.files.end()), ", ");
  }
  if (!request.gres.empty()) description += "; GPU types from " + request.gres;
  if (!request.assoc.empty()) description += "; associations from " + request.assoc;
  if (!request.qos.empty()) description += "; QOS from " + request.qos;
  if (!history.empty()) description += "; workload: the history " + history;
  if (!request.topology.empty()) description += "; topology from " + request.topology;
  description += ".";
  if (!not_modelled.empty()) description += " Not modelled: " + join(not_modelled, ", ") + ".";
  scenario["description"] = description;

  if (!request.topology.empty() && !scenario["cluster"].contains("topology")) {
    notes.add("topology " + request.topology + " defines neither switches nor blocks: the cluster stays flat");
  }
  if (!not_modelled.empty()) notes.add("not modelled: " + join(not_modelled, ", "));
  if (!conf.ignored.empty()) {
    notes.add(std::to_string(conf.ignored.size()) +
              " daemon settings (hosts, ports, paths, logging, authentication) have no effect on scheduling; ignored");
  }
  std::string text;
  try {
    text = scenario.dump(2);
  } catch (const Json::type_error&) {
    // A name or value that is not UTF-8 (a Latin-1 slurm.conf or sacctmgr dump): JSON holds only UTF-8 text, so
    // such bytes are written as U+FFFD instead of ending the import with nlohmann's message.
    text = scenario.dump(2, ' ', false, Json::error_handler_t::replace);
    notes.add("some names or values are not UTF-8 text: their bad bytes are written as U+FFFD");
  }
  for (const std::string& n : notes.all()) err << "gputwin import: " << n << "\n";
  out << text << "\n";
  return 0;
}

}  // namespace gputwin
