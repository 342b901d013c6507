#include "sim/runner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>

#include "model/errors.hpp"
#include "scheduler/node_selection.hpp"
#include "sim/placement_speed.hpp"

namespace gputwin {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string_view gputwin_version() {
  return "0.1.0";
}

RunOutcome run_scenario(Scenario scenario, const RunOptions& options) {
  if (options.seed) scenario.seed = *options.seed;
  const auto load_start = Clock::now();
  std::vector<JobSpec> jobs = load_workload(scenario);
  const double load_s = seconds_since(load_start);
  RunOutcome outcome = run_jobs(std::move(scenario), std::move(jobs), options);
  outcome.load_wall_s += load_s;
  return outcome;
}

namespace {

/// The cloud log's records kept by the controllers and the world (all but the cost meter's), as of now.
void copy_cloud_records(const RunOutcome& outcome, CloudLog& log) {
  const SimWorld& world = *outcome.world;
  if (outcome.quota) log.quota_events = outcome.quota->events();
  if (outcome.operations) log.operations = outcome.operations->records();
  log.interruptions = world.interruptions();
  if (outcome.scaling) {
    log.scaling = outcome.scaling->records();
    log.pool_node_hours = outcome.scaling->pool_node_seconds(world.now()) / 3600.0;
    log.cold_start_s = outcome.scenario->autoscaler.cold_start.total_s();
  }
}

// Hands a live start to the world, its jobs by index (jobs the run dropped as never fitting are left out).
void set_live_start(SimWorld& world, const ClusterState& state, const LiveStart& live) {
  std::unordered_map<std::uint64_t, JobIndex> index;
  index.reserve(state.job_count());
  for (JobIndex j = 0; j < state.job_count(); ++j) index.emplace(state.spec(j).id, j);
  std::vector<RunningAtStart> running;
  running.reserve(live.running.size());
  for (const LiveRunningJob& job : live.running) {
    const auto it = index.find(job.job_id);
    if (it == index.end()) continue;
    running.push_back(RunningAtStart{it->second, job.allocation, job.start, job.end, job.kill_at});
  }
  world.set_initial_state(std::move(running), live.nodes_out);
}

}  // namespace

RunOutcome run_jobs(Scenario scenario, std::vector<JobSpec> all, const RunOptions& options) {
  RunOutcome outcome;
  if (options.seed) scenario.seed = *options.seed;
  if (options.policy) scenario.scheduler.policy = *options.policy;
  outcome.scenario = std::make_unique<Scenario>(std::move(scenario));
  const Scenario& sc = *outcome.scenario;
  const auto load_start = Clock::now();
  // The engine feeds submissions in job-table order: traces are usually sorted already (and synthetic workloads
  // always are, which the check spares a merge sort of a million JobSpecs), but make sure.
  const auto by_submit = [](const JobSpec& a, const JobSpec& b) { return a.submit_s < b.submit_s; };
  if (!std::is_sorted(all.begin(), all.end(), by_submit)) std::stable_sort(all.begin(), all.end(), by_submit);
  std::vector<std::uint32_t> partitions;
  partitions.reserve(all.size());
  std::vector<JobIndex> never_fit;  // rejected at submit: kept, so that the jobs table records them
  const std::string file = sc.file.filename().string();
  // Jobs of the same shape share the answer of can_ever_fit (an O(nodes) question).
  std::map<std::tuple<int, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, bool> fits_cache;
  for (JobSpec& spec : all) {
    if (sc.workload_switches > 0 && spec.switches == 0 && spec.nodes >= 2) {  // /workload/switches
      spec.switches = sc.workload_switches;
      spec.switch_wait_s = sc.workload_switch_wait_s;
    }
    int p = spec.partition.empty() ? sc.cluster.default_partition() : sc.cluster.partition_index(spec.partition);
    if (p < 0) {
      throw ScenarioError(file, "/workload",
                          "job " + std::to_string(spec.id) + " names partition '" + spec.partition +
                              "', which the cluster does not define");
    }
    const auto shape = std::make_tuple(p, spec.nodes, spec.cpus, spec.gpus_per_node, spec.mem_per_node_mb);
    auto cached = fits_cache.find(shape);
    if (cached == fits_cache.end()) {
      cached =
          fits_cache.emplace(shape, can_ever_fit(spec, sc.cluster.partitions[static_cast<std::size_t>(p)], sc.cluster))
              .first;
    }
    if (!cached->second) never_fit.push_back(static_cast<JobIndex>(partitions.size()));
    partitions.push_back(static_cast<std::uint32_t>(p));
  }
  outcome.load_wall_s = seconds_since(load_start);

  // The specs move into the state whole (a million of them moved one by one cost about 0.1 s).
  outcome.state = std::make_unique<ClusterState>(sc.cluster, std::move(all));
  ClusterState& state = *outcome.state;
  for (JobIndex j = 0; j < state.job_count(); ++j) state.job_mut(j).partition = partitions[j];
  // As slurmctld refuses them at submit: never queued, ended at their submit time without a start.
  for (const JobIndex j : never_fit) {
    state.end_pending(j, JobState::kCancelled, from_seconds(state.spec(j).submit_s));
    JobRuntime& rt = state.job_mut(j);
    rt.submitted = true;
    rt.rejected = true;
    rt.reason = PendingReason::kBadConstraints;
    rt.time_limit_s = effective_time_limit_s(state.spec(j), sc.cluster.partitions[rt.partition]);
  }
  outcome.rejected = never_fit.size();
  outcome.recorder = std::make_unique<RunRecorder>(options.node_history, options.reason_history);

  outcome.world = std::make_unique<SimWorld>(state, sc.scheduler.slurm, outcome.recorder.get());
  SimWorld& world = *outcome.world;
  world.set_scheduling_point(sc.scheduler.scheduling_point);
  // The controllers: the scheduler, and the health, scaling, quota and operations controllers the scenario turns
  // on. They decide; the world's mechanics (faults, power, costs) carry their actions out.
  outcome.scheduler = make_scheduler(sc.scheduler, sc.accounting, world);
  Scheduler* scheduler = outcome.scheduler.get();
  ControlPlane& plane = outcome.plane;
  plane.add(ControllerId::kScheduler, scheduler);
  world.set_control_plane(&plane, scheduler);
  if (options.speed_model != nullptr) {
    world.set_speed_model(options.speed_model);
  } else if (sc.performance.enabled && !sc.performance.profiles.empty()) {
    outcome.speed_model = std::make_unique<PlacementSpeedModel>(state, sc.performance);
    world.set_speed_model(outcome.speed_model.get());
  }
  if (sc.autoscaler.enabled || !sc.operations.empty()) {
    outcome.power = std::make_unique<PowerMechanics>(sc.autoscaler.enabled ? &sc.autoscaler : nullptr, state, sc.seed);
    world.set_power_mechanics(outcome.power.get());
  }
  if (!sc.operations.empty()) {
    outcome.operations = std::make_unique<OperationsController>(sc.operations, world);
    plane.add(ControllerId::kOperations, outcome.operations.get());
    world.set_absent_nodes(outcome.operations->nodes_added_later());
    world.track_jobs_on_nodes();
  }
  if (sc.cost.enabled) {
    outcome.cost = std::make_unique<CostMeter>(sc.cost, state, sc.seed);
    world.set_cost_meter(outcome.cost.get());
    if (!sc.cost.quotas.empty()) {
      outcome.quota = std::make_unique<QuotaController>(sc.cost, world);
      plane.add(ControllerId::kQuota, outcome.quota.get());
    }
  }
  if (sc.autoscaler.enabled) {
    outcome.scaling = std::make_unique<ScalingController>(sc.autoscaler, world);
    plane.add(ControllerId::kScaling, outcome.scaling.get());
  }
  if (sc.faults.enabled) {
    outcome.faults = std::make_unique<FaultMechanics>(sc.faults, state, sc.seed);
    world.set_fault_mechanics(outcome.faults.get());
    outcome.health = std::make_unique<HealthController>(sc.faults, world);
    plane.add(ControllerId::kHealth, outcome.health.get());
  }
  if (options.stop_at) world.set_stop_at(*options.stop_at);
  if (options.live_start != nullptr) set_live_start(world, state, *options.live_start);
  if (options.observer != nullptr) outcome.recorder->forward_to(options.observer);
  if (options.gate != nullptr) {
    options.gate->on_run_start(outcome);
    world.set_gate(options.gate);
  }
  const auto sim_start = Clock::now();
  std::function<void(const SimWorld&)> progress;
  if (options.progress) {
    progress = [&](const SimWorld& w) {
      options.progress(RunProgress{w.now(), w.submitted(), w.ended(), state.job_count(), w.counters().events,
                                   seconds_since(sim_start)});
    };
  }
  try {
    world.run(progress);
  } catch (const SimulationBoundError& e) {
    throw ScenarioError(sc.file.string(), "", e.what());
  }
  outcome.sim_wall_s = seconds_since(sim_start);
  if (options.progress) {
    options.progress(RunProgress{world.now(), world.submitted(), world.ended(), state.job_count(),
                                 world.counters().events, outcome.sim_wall_s});
  }
  outcome.counters = world.counters();
  outcome.scheduler_stats = scheduler->stats();
  if (outcome.faults) outcome.faults->finish(world.now());
  if (outcome.cost) outcome.cost->finish(world.now(), outcome.cloud);
  copy_cloud_records(outcome, outcome.cloud);
  outcome.summary = summarize(state, fault_log(outcome), cloud_log(outcome));
  return outcome;
}

std::optional<CloudLog> cloud_log_so_far(const RunOutcome& outcome) {
  if (cloud_log(outcome) == nullptr) return std::nullopt;
  // After the run's end the cost meter has handed its series over to the outcome's log (finish), which is whole.
  if (outcome.cloud.has_cost) return outcome.cloud;
  CloudLog log;
  if (outcome.cost) outcome.cost->so_far(outcome.world->now(), log);
  copy_cloud_records(outcome, log);
  return log;
}

const CloudLog* cloud_log(const RunOutcome& outcome) {
  return outcome.cost || outcome.scaling || outcome.operations ? &outcome.cloud : nullptr;
}

const FaultLog* fault_log(const RunOutcome& outcome) {
  return outcome.faults ? &outcome.faults->log() : nullptr;
}

MetricsInput metrics_input(const RunOutcome& outcome) {
  MetricsInput input;
  input.xids = outcome.world->xids();
  input.node_conditions = outcome.world->condition_changes();
  input.config = outcome.scenario->metrics;
  input.horizon = outcome.world->now();
  if (auto* model = dynamic_cast<PlacementSpeedModel*>(outcome.speed_model.get())) {
    input.load = [model](JobIndex j, std::span<const NodeAllocation> allocation) {
      return model->reference_load(j, allocation);
    };
  }
  return input;
}

RunInfo run_info(const RunOutcome& outcome) {
  const Scenario& sc = *outcome.scenario;
  RunInfo info;
  info.scenario = sc.name;
  info.scenario_file = sc.file.string();
  info.seed = sc.seed;
  info.policy = std::string(policy_name(sc.scheduler.policy));
  info.version = std::string(gputwin_version());
  info.wall_time_s = outcome.sim_wall_s;
  info.events = outcome.counters.events;
  const SlurmParameters& p = sc.scheduler.slurm;
  nlohmann::ordered_json params;
  params["policy"] = info.policy;
  // Only when not the default, so runs at the default keep the parameters they always had.
  if (sc.scheduler.scheduling_point != SchedulingPoint::kInstant)
    params["scheduling_point"] = std::string(scheduling_point_name(sc.scheduler.scheduling_point));
  if (sc.scheduler.policy == SchedulerPolicy::kSlurm) {
    params["sched_interval"] = p.sched_interval_s;
    params["default_queue_depth"] = p.default_queue_depth;
    params["batch_sched_delay"] = p.batch_sched_delay_s;
    params["bf_interval"] = p.bf_interval_s;
    params["bf_window"] = p.bf_window_min;
    params["bf_resolution"] = p.bf_resolution_s;
    params["bf_max_job_test"] = p.bf_max_job_test;
    params["bf_max_job_start"] = p.bf_max_job_start;
    params["OverTimeLimit"] = p.over_time_limit_min;
    params["KillWait"] = p.kill_wait_s;
    params["epilog_s"] = p.epilog_s;
    params["phase_s"] = p.phase_s;
    params["shortcuts"] = p.shortcuts;
  }
  info.parameters_json = params.dump();
  return info;
}

}  // namespace gputwin
