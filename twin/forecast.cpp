#include "twin/forecast.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "model/run_observer.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/slurm_scheduler.hpp"
#include "sim/runner.hpp"

namespace gputwin {

namespace {

constexpr std::size_t kWindow = 2;  // Tsafrir et al.: the mean of the last two runs predicts best
constexpr std::int64_t kYear = 365LL * 86400;

// When a node out of service returns by itself, -1 if only a person or a controller returns it.
std::int64_t return_after(NodeCondition condition, const ForecastOptions& options) {
  switch (condition) {
    case NodeCondition::kRebooting:
      return options.reboot_s;
    case NodeCondition::kPoweringUp:
      return options.power_up_s;
    default:
      return -1;
  }
}

}  // namespace

std::string_view runtime_predictor_name(RuntimePredictor predictor) {
  switch (predictor) {
    case RuntimePredictor::kTimeLimit:
      return "limit";
    case RuntimePredictor::kUserRecent:
      return "recent";
    case RuntimePredictor::kUserRatio:
      return "ratio";
  }
  return "?";
}

std::optional<RuntimePredictor> parse_runtime_predictor(std::string_view name) {
  for (RuntimePredictor p :
       {RuntimePredictor::kTimeLimit, RuntimePredictor::kUserRecent, RuntimePredictor::kUserRatio}) {
    if (runtime_predictor_name(p) == name) return p;
  }
  return std::nullopt;
}

void RuntimeHistory::add(const std::string& user, const std::string& account, const std::string& name,
                         std::int64_t run_s, std::int64_t limit_s) {
  if (run_s < 0) return;
  ++count_;
  const auto record = [&](Fit& fit) {
    fit.last.push_back(run_s);
    if (fit.last.size() > kWindow) fit.last.pop_front();
    if (limit_s > 0) {
      fit.run_x_limit += static_cast<double>(run_s) * static_cast<double>(limit_s);
      fit.limit_sq += static_cast<double>(limit_s) * static_cast<double>(limit_s);
    }
  };
  record(users_[user]);
  record(user_names_[user + '\n' + name]);
  record(accounts_[account]);
  record(cluster_);
}

std::int64_t RuntimeHistory::predict(RuntimePredictor predictor, const std::string& user, const std::string& account,
                                     const std::string& name, std::int64_t limit_s) const {
  if (predictor == RuntimePredictor::kTimeLimit) return limit_s;
  const auto user_it = users_.find(user);
  if (predictor == RuntimePredictor::kUserRecent) {
    const auto named = user_names_.find(user + '\n' + name);
    const Fit* fit = named != user_names_.end() ? &named->second : user_it != users_.end() ? &user_it->second : nullptr;
    if (fit == nullptr || fit->last.empty()) return limit_s;
    double sum = 0;
    for (std::int64_t r : fit->last) sum += static_cast<double>(r);
    const auto mean = static_cast<std::int64_t>(std::llround(sum / static_cast<double>(fit->last.size())));
    return std::clamp<std::int64_t>(mean, 1, limit_s);
  }
  double r = user_it != users_.end() ? ratio(user_it->second) : -1;
  if (r < 0) {
    const auto account_it = accounts_.find(account);
    if (account_it != accounts_.end()) r = ratio(account_it->second);
  }
  if (r < 0) r = ratio(cluster_);
  if (r < 0) return limit_s;
  return std::clamp<std::int64_t>(std::llround(r * static_cast<double>(limit_s)), 1, limit_s);
}

Forecast forecast(const Mirror& mirror, const RuntimeHistory& history, const Scenario& policy,
                  const ForecastOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::int64_t now = mirror.now();
  Forecast out;
  out.made_at = now;

  Scenario scenario = policy;
  scenario.cluster = mirror.config();
  scenario.has_trace = false;
  scenario.has_inline_jobs = true;
  scenario.faults.enabled = false;
  scenario.autoscaler.enabled = false;
  scenario.cost.enabled = false;
  scenario.operations.clear();
  scenario.performance.enabled = false;
  // slurmctld admitted every job already: its associations and limits were checked at submit.
  scenario.accounting.enforce = EnforceFlags{};
  scenario.accounting.auto_associations = true;
  // t = 0 is now: slurmctld's bf_resolution grid is on the wall clock.
  scenario.scheduler.slurm.epoch_unix_s = std::max<std::int64_t>(0, now);

  const std::size_t node_count = scenario.cluster.nodes.size();
  std::vector<std::uint32_t> free_cpus(node_count);
  std::vector<std::uint32_t> free_gpus(node_count);
  std::vector<std::uint64_t> free_mem(node_count);
  for (std::size_t n = 0; n < node_count; ++n) {
    free_cpus[n] = scenario.cluster.nodes[n].cpus;
    free_gpus[n] = scenario.cluster.nodes[n].gpus;
    free_mem[n] = scenario.cluster.nodes[n].memory_mb;
  }

  LiveStart live;
  std::vector<JobSpec> jobs;
  for (const MirrorJob& mj : mirror.jobs()) {
    if (!mj.listed) continue;
    const RestJob& job = mj.record;
    const bool running = job.state == "RUNNING" || job.state == "SUSPENDED";
    if (!running && job.state != "PENDING") continue;
    if (running && job.array_task_id < 0 && job.nodes.empty()) continue;
    JobSpec spec = mirror.job_spec(job, now);
    spec.submit_s = 0;  // all submitted: the forecast starts now, in slurmctld's priority order
    spec.begin_s = spec.begin_s > 0 ? spec.begin_s : -1;
    const int p = spec.partition.empty() ? scenario.cluster.default_partition()
                                         : scenario.cluster.partition_index(spec.partition);
    if (p < 0) continue;
    const PartitionConfig& part = scenario.cluster.partitions[static_cast<std::size_t>(p)];
    std::int64_t limit_s = effective_time_limit_s(spec, part);
    if (limit_s <= 0) limit_s = kYear;
    const std::int64_t predicted = history.predict(options.predictor, job.user, job.account, job.name, limit_s);
    if (running) {
      const std::vector<NodeIndex> nodes = mirror.nodes_of(job.nodes);
      if (nodes.empty()) continue;
      const std::int64_t elapsed = std::max<std::int64_t>(0, now - job.start_time);
      const std::int64_t left_limit = std::max<std::int64_t>(1, limit_s - elapsed);
      std::int64_t left = predicted - elapsed;
      if (left <= 0) left = std::max<std::int64_t>(60, elapsed / 4);  // it outlived its prediction
      left = std::min(left, left_limit);
      LiveRunningJob run;
      run.job_id = job.job_id;
      run.allocation = spread_allocation(spec, job, nodes, free_cpus, free_gpus, free_mem);
      run.start = from_seconds(-elapsed);
      run.end = from_seconds(left);
      run.kill_at = slurm_timeout_kill_time(run.start, limit_s, scenario.scheduler.slurm);
      spec.run_time_s = elapsed + left;
      spec.nodes = static_cast<std::uint32_t>(nodes.size());
      live.running.push_back(std::move(run));
      ++out.running;
    } else {
      spec.run_time_s = predicted;
      if (job.priority && *job.priority > 0 && !job.held)
        spec.priority = static_cast<std::uint32_t>(std::min<std::int64_t>(*job.priority, UINT32_MAX));
    }
    jobs.push_back(std::move(spec));
  }
  std::stable_sort(live.running.begin(), live.running.end(),
                   [](const LiveRunningJob& a, const LiveRunningJob& b) { return a.start < b.start; });

  for (NodeIndex n = 0; n < node_count; ++n) {
    const RestNode& node = mirror.nodes()[n];
    NodeCondition condition = node_condition_of(node);
    if (!mirror.node_listed(n)) condition = NodeCondition::kDown;
    if (condition == NodeCondition::kNone) continue;
    const std::int64_t after = return_after(condition, options);
    live.nodes_out.push_back(NodeOutAtStart{n, condition, node.reason, after >= 0 ? from_seconds(after) : kNever});
    out.nodes.push_back(NodeForecast{node.name, now, std::string(node_state_name(node_state_of(node))), node.reason,
                                     after >= 0 ? now + after : -1});
  }

  RunOptions run_options;
  run_options.node_history = false;
  run_options.reason_history = false;
  run_options.stop_at = from_seconds(options.horizon_s);
  run_options.live_start = &live;
  const RunOutcome outcome = run_jobs(std::move(scenario), std::move(jobs), run_options);

  const ClusterState& state = *outcome.state;
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const MirrorJob* mj = mirror.job(state.spec(j).id);
    if (mj == nullptr || mj->record.state != "PENDING") continue;
    JobForecast f;
    f.job_id = mj->record.job_id;
    f.made_at = now;
    f.predicted_start = state.job(j).start >= 0 ? now + to_seconds(state.job(j).start) : -1;
    f.slurm_estimate = mj->record.start_time;
    out.jobs.push_back(f);
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace gputwin
