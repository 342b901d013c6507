// Scenario readers for /accounting, /scheduler/priority and inline /workload/jobs. Keys follow slurm.conf and
// sacctmgr spelling so a site's configuration maps over one to one (README "Accounting and priority").
#include <set>
#include <unordered_map>

#include "model/dependency.hpp"
#include "model/input_limits.hpp"
#include "model/scenario.hpp"
#include "model/scenario_field.hpp"

namespace gputwin::detail {
namespace {

/// Splits a comma list into trimmed, non-empty items.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TresLimits read_tres(const Field& f) {
  TresLimits limits;
  std::string error;
  if (!parse_tres_limits(f.string(), limits, error)) f.fail(error);
  return limits;
}

std::int64_t read_count_limit(const Field& f) {
  const std::int64_t v = f.integer();
  if (v < -1) f.fail("expected a count, or -1 for no limit");
  return v;
}

/// Reads the limit keys present in `f` (only those in `allowed` may appear; expect_object checked that).
void read_limits(const Field& f, Limits& limits, bool qos) {
  if (f.has("GrpTRES")) limits.grp_tres = read_tres(f.at("GrpTRES"));
  if (f.has("MaxTRES")) limits.max_tres_per_job = read_tres(f.at("MaxTRES"));
  if (f.has("MaxTRESPerUser")) limits.max_tres_per_user = read_tres(f.at("MaxTRESPerUser"));
  if (f.has("GrpJobs")) limits.grp_jobs = read_count_limit(f.at("GrpJobs"));
  if (f.has("GrpSubmitJobs")) limits.grp_submit_jobs = read_count_limit(f.at("GrpSubmitJobs"));
  const char* max_jobs = qos ? "MaxJobsPerUser" : "MaxJobs";
  const char* max_submit = qos ? "MaxSubmitJobsPerUser" : "MaxSubmitJobs";
  if (f.has(max_jobs)) limits.max_jobs_per_user = read_count_limit(f.at(max_jobs));
  if (f.has(max_submit)) limits.max_submit_per_user = read_count_limit(f.at(max_submit));
  if (f.has("MaxWall")) limits.max_wall_s = f.at("MaxWall").slurm_time();
}

void read_fairshare(const Field& f, std::uint32_t& shares, bool& parent) {
  if (f.raw().is_string()) {
    if (upper(f.string()) != "PARENT") f.fail("expected a number of shares or \"parent\"");
    parent = true;
    return;
  }
  shares = f.u32();
}

PreemptMode read_preempt_mode(const Field& f) {
  const std::string mode = upper(f.string());
  if (mode == "OFF") return PreemptMode::kOff;
  if (mode == "CANCEL") return PreemptMode::kCancel;
  if (mode == "REQUEUE") return PreemptMode::kRequeue;
  f.fail("expected OFF, CANCEL or REQUEUE (SUSPEND needs gang scheduling, which is not modelled)");
}

std::int64_t read_seconds(const Field& f) {
  const std::int64_t v = f.integer();
  if (v < 0) f.fail("expected a non-negative number of seconds");
  return v;
}

QosConfig read_qos(const Field& f) {
  f.expect_object({"name", "Priority", "UsageFactor", "Preempt", "PreemptMode", "GraceTime", "Flags", "GrpTRES",
                   "GrpJobs", "GrpSubmitJobs", "MaxTRES", "MaxTRESPerUser", "MaxJobsPerUser", "MaxSubmitJobsPerUser",
                   "MaxWall"});
  QosConfig q;
  q.name = f.at("name").non_empty_string();
  if (f.has("Priority")) q.priority = f.at("Priority").u32();
  if (f.has("UsageFactor")) {
    q.usage_factor = f.at("UsageFactor").number();
    if (q.usage_factor < 0) f.at("UsageFactor").fail("expected a non-negative number");
  }
  if (f.has("Preempt")) {
    const Field list = f.at("Preempt");
    for (std::size_t i = 0; i < list.array_size(); ++i) q.preempt.push_back(list.at(i).non_empty_string());
  }
  if (f.has("PreemptMode")) q.preempt_mode = read_preempt_mode(f.at("PreemptMode"));
  if (f.has("GraceTime")) q.grace_time_s = read_seconds(f.at("GraceTime"));
  if (f.has("Flags")) {
    for (const std::string& flag : split_list(f.at("Flags").string())) {
      if (upper(flag) == "DENYONLIMIT") {
        q.deny_on_limit = true;
      } else if (upper(flag) == "NODECAY") {
        q.no_decay = true;
      } else {
        f.at("Flags").fail("unsupported QOS flag '" + flag + "' (supported: DenyOnLimit, NoDecay)");
      }
    }
  }
  read_limits(f, q.limits, true);
  return q;
}

}  // namespace

void read_accounting(const Field& field, AccountingConfig& config) {
  field.expect_object({"AccountingStorageEnforce", "auto_associations", "PreemptType", "PreemptMode",
                       "PreemptExemptTime", "qos", "accounts", "users"});
  if (field.has("AccountingStorageEnforce")) {
    const Field f = field.at("AccountingStorageEnforce");
    for (const std::string& flag : split_list(f.string())) {
      const std::string u = upper(flag);
      if (u == "ASSOCIATIONS") {
        config.enforce.associations = true;
      } else if (u == "LIMITS") {
        config.enforce.limits = config.enforce.associations = true;
      } else if (u == "QOS") {
        config.enforce.qos = config.enforce.associations = true;
      } else if (u == "SAFE") {
        config.enforce.safe = config.enforce.limits = config.enforce.associations = true;
      } else if (u != "NOJOBS" && u != "NOSTEPS" && u != "WCKEYS") {
        f.fail("unknown flag '" + flag + "' (known: associations, limits, qos, safe, nojobs, nosteps, wckeys)");
      }
    }
  }
  if (field.has("auto_associations")) config.auto_associations = field.at("auto_associations").boolean();
  if (field.has("PreemptType")) {
    const Field f = field.at("PreemptType");
    const std::string t = f.string();
    if (t == "preempt/qos") {
      config.preempt_qos = true;
    } else if (t != "preempt/partition_prio" && t != "preempt/none") {
      f.fail("expected preempt/none, preempt/qos or preempt/partition_prio");
    }
    if (t == "preempt/none") config.preempt_mode = PreemptMode::kOff;
  }
  if (field.has("PreemptMode")) config.preempt_mode = read_preempt_mode(field.at("PreemptMode"));
  if (field.has("PreemptExemptTime")) config.preempt_exempt_time_s = field.at("PreemptExemptTime").slurm_time();

  std::set<std::string> qos_names;
  if (field.has("qos")) {
    const Field list = field.at("qos");
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      QosConfig q = read_qos(list.at(i));
      if (!qos_names.insert(q.name).second) list.at(i).at("name").fail("QOS '" + q.name + "' defined twice");
      config.qos.push_back(std::move(q));
    }
    for (std::size_t i = 0; i < config.qos.size(); ++i) {
      for (std::size_t k = 0; k < config.qos[i].preempt.size(); ++k) {
        const std::string& target = config.qos[i].preempt[k];
        if (target != "normal" && !qos_names.count(target))
          list.at(i).at("Preempt").at(k).fail("no QOS named '" + target + "'");
      }
    }
  }
  std::set<std::string> accounts{"root"};
  if (field.has("accounts")) {
    const Field list = field.at("accounts");
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const Field f = list.at(i);
      f.expect_object({"name", "parent", "Fairshare", "Priority", "GrpTRES", "GrpJobs", "GrpSubmitJobs", "MaxTRES",
                       "MaxJobs", "MaxSubmitJobs", "MaxWall"});
      AccountConfig a;
      a.name = f.at("name").non_empty_string();
      if (!accounts.insert(a.name).second) f.at("name").fail("account '" + a.name + "' defined twice");
      if (f.has("parent")) a.parent = f.at("parent").non_empty_string();
      if (!accounts.count(a.parent)) f.at("parent").fail("no account named '" + a.parent + "' defined before this one");
      if (f.has("Fairshare")) read_fairshare(f.at("Fairshare"), a.fairshare, a.fairshare_parent);
      if (f.has("Priority")) a.priority = f.at("Priority").u32();
      read_limits(f, a.limits, false);
      config.accounts.push_back(std::move(a));
    }
  }
  if (field.has("users")) {
    const Field list = field.at("users");
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const Field f = list.at(i);
      f.expect_object({"user", "account", "Fairshare", "Priority", "DefaultQOS", "GrpTRES", "GrpJobs", "GrpSubmitJobs",
                       "MaxTRES", "MaxJobs", "MaxSubmitJobs", "MaxWall"});
      UserAssocConfig u;
      u.user = f.at("user").non_empty_string();
      u.account = f.at("account").non_empty_string();
      if (!accounts.count(u.account) || u.account == "root")
        f.at("account").fail("no account named '" + u.account + "'");
      if (!seen.insert({u.user, u.account}).second)
        f.fail("association of user '" + u.user + "' in account '" + u.account + "' defined twice");
      if (f.has("Fairshare")) read_fairshare(f.at("Fairshare"), u.fairshare, u.fairshare_parent);
      if (f.has("Priority")) u.priority = f.at("Priority").u32();
      if (f.has("DefaultQOS")) {
        u.default_qos = f.at("DefaultQOS").non_empty_string();
        if (u.default_qos != "normal" && !qos_names.count(u.default_qos))
          f.at("DefaultQOS").fail("no QOS named '" + u.default_qos + "'");
      }
      read_limits(f, u.limits, false);
      config.users.push_back(std::move(u));
    }
  }
}

void read_priority(const Field& field, PriorityConfig& p) {
  field.expect_object({"PriorityType", "PriorityWeightAge", "PriorityWeightAssoc", "PriorityWeightFairshare",
                       "PriorityWeightJobSize", "PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightTRES",
                       "PriorityMaxAge", "PriorityFavorSmall", "PriorityCalcPeriod", "PriorityDecayHalfLife",
                       "PriorityUsageResetPeriod", "PriorityFlags", "FairShareDampeningFactor"});
  if (field.has("PriorityType")) {
    const std::string t = field.at("PriorityType").string();
    if (t == "priority/multifactor") {
      p.multifactor = true;
    } else if (t == "priority/basic") {
      p.multifactor = false;
    } else {
      field.at("PriorityType").fail("expected priority/basic or priority/multifactor");
    }
  }
  auto weight = [&](const char* key, std::uint32_t& out) {
    if (field.has(key)) out = field.at(key).u32();
  };
  weight("PriorityWeightAge", p.weight_age);
  weight("PriorityWeightAssoc", p.weight_assoc);
  weight("PriorityWeightFairshare", p.weight_fairshare);
  weight("PriorityWeightJobSize", p.weight_job_size);
  weight("PriorityWeightPartition", p.weight_partition);
  weight("PriorityWeightQOS", p.weight_qos);
  if (field.has("PriorityWeightTRES")) {
    const Field f = field.at("PriorityWeightTRES");
    BillingWeights w;  // same "key=number" syntax; Mem here is per MB of the partition total, so no suffix scaling
    std::string error;
    std::string text = f.string();
    if (!parse_billing_weights(text, w, error)) f.fail(error);
    p.weight_tres_cpu = w.cpu;
    p.weight_tres_mem = w.mem_gb / 1024;  // undo the per-GB conversion of a bare number
    p.weight_tres_node = w.node;
    p.weight_tres_gpu = w.gpu;
  }
  if (field.has("PriorityMaxAge")) {
    p.max_age_s = field.at("PriorityMaxAge").slurm_time();
    if (p.max_age_s <= 0) field.at("PriorityMaxAge").fail("expected a positive time");
  }
  if (field.has("PriorityFavorSmall")) p.favor_small = field.at("PriorityFavorSmall").boolean();
  if (field.has("PriorityCalcPeriod")) {
    p.calc_period_s = field.at("PriorityCalcPeriod").slurm_time();
    if (p.calc_period_s < 60) field.at("PriorityCalcPeriod").fail("expected at least 1 minute");
  }
  if (field.has("PriorityDecayHalfLife")) {
    p.decay_half_life_s = field.at("PriorityDecayHalfLife").slurm_time();
    if (p.decay_half_life_s < 0) field.at("PriorityDecayHalfLife").fail("expected a time, or 0 for no decay");
  }
  if (field.has("PriorityUsageResetPeriod")) {
    const Field f = field.at("PriorityUsageResetPeriod");
    const std::string r = upper(f.string());
    static const std::pair<const char*, UsageReset> kResets[] = {
        {"NONE", UsageReset::kNone},     {"NOW", UsageReset::kNow},         {"DAILY", UsageReset::kDaily},
        {"WEEKLY", UsageReset::kWeekly}, {"MONTHLY", UsageReset::kMonthly}, {"QUARTERLY", UsageReset::kQuarterly},
        {"YEARLY", UsageReset::kYearly}};
    bool found = false;
    for (const auto& [name, value] : kResets) {
      if (r == name) {
        p.usage_reset = value;
        found = true;
      }
    }
    if (!found) f.fail("expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY");
  }
  if (field.has("PriorityFlags")) {
    const Field f = field.at("PriorityFlags");
    for (const std::string& flag : split_list(f.string())) {
      const std::string u = upper(flag);
      if (u == "ACCRUE_ALWAYS") {
        p.accrue_always = true;
      } else if (u == "SMALL_RELATIVE_TO_TIME") {
        p.small_relative_to_time = true;
      } else if (u == "CALCULATE_RUNNING") {
        p.calculate_running = true;
      } else if (u == "MAX_TRES") {
        p.max_tres = true;
      } else if (u == "NO_FAIR_TREE") {
        p.fair_tree = false;
      } else if (u == "NO_NORMAL_ASSOC") {
        p.no_normal_assoc = true;
      } else if (u == "NO_NORMAL_PART") {
        p.no_normal_part = true;
      } else if (u == "NO_NORMAL_QOS") {
        p.no_normal_qos = true;
      } else if (u == "NO_NORMAL_TRES") {
        p.no_normal_tres = true;
      } else if (u == "NO_NORMAL_ALL") {
        p.no_normal_assoc = p.no_normal_part = p.no_normal_qos = p.no_normal_tres = true;
      } else {
        f.fail("unsupported flag '" + flag + "'");
      }
    }
  }
  if (field.has("FairShareDampeningFactor")) {
    const std::uint32_t d = field.at("FairShareDampeningFactor").u32();
    if (d == 0) field.at("FairShareDampeningFactor").fail("expected a positive integer");
    p.fairshare_dampening = d;
  }
}

namespace {

/// Refuses a job that depends on itself and a cycle of dependencies (each would pend for ever), at the JSON pointer of
/// the first job of the cycle. A dependency on an array job's id stands for every task of it.
void check_dependency_graph(const Field& field, const std::vector<JobSpec>& jobs) {
  std::unordered_map<std::uint64_t, std::size_t> job_of_id;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> tasks_of_array;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    job_of_id.emplace(jobs[k].id, k);
    if (jobs[k].array_job_id != 0) tasks_of_array[jobs[k].array_job_id].push_back(k);
  }
  std::vector<std::vector<std::size_t>> after(jobs.size());  // job -> the jobs it waits for
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (jobs[k].dependency.empty()) continue;
    Dependency dependency;
    std::string error;
    if (!parse_dependency(jobs[k].dependency, dependency, error)) continue;  // refused where it was read
    for (const DependencyTerm& term : dependency.terms) {
      for (const std::uint64_t id : term.job_ids) {
        if (const auto tasks = tasks_of_array.find(id); tasks != tasks_of_array.end()) {
          after[k].insert(after[k].end(), tasks->second.begin(), tasks->second.end());
        } else if (const auto job = job_of_id.find(id); job != job_of_id.end()) {
          after[k].push_back(job->second);
        }
      }
    }
  }
  // The index of the scenario entry a job came from (array tasks share their entry).
  const auto entry = [&](std::size_t k) {
    const std::uint64_t id = jobs[k].array_job_id != 0 ? jobs[k].array_job_id : jobs[k].id;
    for (std::size_t i = 0; i < field.array_size(); ++i) {
      if (static_cast<std::uint64_t>(field.at(i).at("id").non_negative()) == id) return i;
    }
    return std::size_t{0};
  };
  // Depth-first search; a job met again while still on the path closes a cycle.
  enum : std::uint8_t { kNew, kOnPath, kDone };
  std::vector<std::uint8_t> mark(jobs.size(), kNew);
  std::vector<std::pair<std::size_t, std::size_t>> path;  // (job, next edge)
  for (std::size_t start = 0; start < jobs.size(); ++start) {
    if (mark[start] != kNew) continue;
    path.emplace_back(start, 0);
    mark[start] = kOnPath;
    while (!path.empty()) {
      auto& [job, next] = path.back();
      if (next == after[job].size()) {
        mark[job] = kDone;
        path.pop_back();
        continue;
      }
      const std::size_t target = after[job][next++];
      if (mark[target] == kOnPath) {
        if (target == job) {
          field.at(entry(job))
              .at("dependency")
              .fail("job " + std::to_string(jobs[job].id) + " depends on itself: it would pend for ever");
        }
        std::string cycle;
        bool in_cycle = false;
        for (const auto& step : path) {
          in_cycle = in_cycle || step.first == target;
          if (in_cycle) cycle += "job " + std::to_string(jobs[step.first].id) + " -> ";
        }
        field.at(entry(target))
            .at("dependency")
            .fail("dependency cycle " + cycle + "job " + std::to_string(jobs[target].id) +
                  ": these jobs would pend for ever");
      }
      if (mark[target] == kNew) {
        mark[target] = kOnPath;
        path.emplace_back(target, 0);
      }
    }
  }
}

}  // namespace

std::vector<JobSpec> read_inline_jobs(const Field& field) {
  std::vector<JobSpec> jobs;
  std::set<std::uint64_t> ids;
  const std::size_t count = field.array_size();
  for (std::size_t i = 0; i < count; ++i) {
    const Field f = field.at(i);
    f.expect_object({"id",         "name",     "user",    "account",       "partition",       "qos",
                     "submit",     "nodes",    "cpus",    "gpus_per_node", "mem_per_node_mb", "exclusive",
                     "time_limit", "run_time", "outcome", "nice",          "begin",           "hold_until",
                     "dependency", "requeue",  "array",   "reservation",   "switches"});
    JobSpec j;
    j.id = f.has("id") ? f.at("id").positive_at_most(kMaxJobId) : (jobs.empty() ? 1 : jobs.back().id + 1);
    if (f.has("name")) j.name = f.at("name").string();
    j.user = f.has("user") ? f.at("user").non_empty_string() : "user";
    j.account = f.has("account") ? f.at("account").non_empty_string() : "default";
    if (f.has("partition")) j.partition = f.at("partition").non_empty_string();
    if (f.has("qos")) j.qos = f.at("qos").non_empty_string();
    j.submit_s = f.has("submit") ? static_cast<std::int64_t>(f.at("submit").at_most(kMaxTimeSeconds)) : 0;
    if (f.has("nodes")) j.nodes = static_cast<std::uint32_t>(f.at("nodes").at_most(kMaxNodes));
    if (f.has("cpus")) j.cpus = static_cast<std::uint32_t>(f.at("cpus").positive());
    if (f.has("gpus_per_node"))
      j.gpus_per_node = static_cast<std::uint32_t>(f.at("gpus_per_node").at_most(kMaxGpusPerNode));
    if (f.has("mem_per_node_mb")) j.mem_per_node_mb = f.at("mem_per_node_mb").at_most(kMaxMemoryGbPerNode * 1024);
    if (f.has("exclusive")) j.exclusive = f.at("exclusive").boolean();
    if (f.has("time_limit")) j.time_limit_s = f.at("time_limit").slurm_time();
    j.run_time_s = static_cast<std::int64_t>(f.at("run_time").at_most(kMaxDurationSeconds));
    if (f.has("outcome")) {
      const auto state = parse_job_state(f.at("outcome").string());
      if (!state || *state == JobState::kPending || *state == JobState::kRunning)
        f.at("outcome").fail("expected a final job state such as COMPLETED, FAILED or CANCELLED");
      j.outcome = *state;
    }
    if (f.has("nice")) {
      const std::int64_t nice = f.at("nice").integer();
      if (nice < -2147483645 || nice > 2147483645) f.at("nice").fail("out of Slurm's nice range");
      j.nice = static_cast<std::int32_t>(nice);
    }
    if (f.has("switches") && !parse_switches_spec(f.at("switches").string(), j.switches, j.switch_wait_s))
      f.at("switches").fail("expected --switches syntax: count[@max-time], e.g. \"1@10:00\"");
    if (f.has("begin")) j.begin_s = static_cast<std::int64_t>(f.at("begin").at_most(kMaxTimeSeconds));
    if (f.has("hold_until")) {
      const Field h = f.at("hold_until");
      if (h.raw().is_string()) {
        if (h.string() != "forever") h.fail("expected seconds or \"forever\"");
        j.hold_until_s = kHeldForever;
      } else {
        j.hold_until_s = static_cast<std::int64_t>(h.at_most(kMaxTimeSeconds));
      }
    }
    if (f.has("dependency")) {
      j.dependency = f.at("dependency").string();
      Dependency parsed;
      std::string error;
      if (!parse_dependency(j.dependency, parsed, error)) f.at("dependency").fail(error);
    }
    if (f.has("requeue")) j.requeue = f.at("requeue").boolean();
    if (f.has("reservation")) j.reservation = f.at("reservation").non_empty_string();
    if (f.has("array")) {
      std::vector<std::int32_t> tasks;
      std::uint32_t throttle = 0;
      if (!parse_array_spec(f.at("array").string(), tasks, throttle))
        f.at("array").fail("expected an array spec such as \"0-99%10\" or \"1,3,5\"");
      for (std::size_t k = 0; k < tasks.size(); ++k) {
        JobSpec task = j;
        task.id = j.id + k;
        task.array_job_id = j.id;
        task.array_task_id = tasks[k];
        task.array_max_running = throttle;
        if (!ids.insert(task.id).second)
          f.at("id").fail("job id " + std::to_string(task.id) + " is used twice (array task " +
                          std::to_string(tasks[k]) + ")");
        if (jobs.size() == kMaxJobs) f.fail("more than " + std::to_string(kMaxJobs) + " jobs (an input bound)");
        jobs.push_back(std::move(task));
      }
      continue;
    }
    if (!ids.insert(j.id).second) f.at("id").fail("job id " + std::to_string(j.id) + " is used twice");
    if (jobs.size() == kMaxJobs) f.fail("more than " + std::to_string(kMaxJobs) + " jobs (an input bound)");
    jobs.push_back(std::move(j));
  }
  check_dependency_graph(field, jobs);
  return jobs;
}

}  // namespace gputwin::detail
