#include "sim/fault_mechanics.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "model/topology.hpp"
#include "sim/sim_world.hpp"

namespace gputwin {

double run_length_s(const RunCheckpointing& plan, double work_s) {
  if (!(plan.interval_s > 0) || !std::isfinite(plan.interval_s)) return plan.restart_s + work_s;
  const double writes = std::max(0.0, std::ceil(work_s / plan.interval_s) - 1);
  return plan.restart_s + work_s + writes * plan.write_s;
}

RunSplit split_run(const RunCheckpointing& plan, double work_s, double elapsed_s, bool completed) {
  RunSplit split;
  const bool checkpoints = plan.interval_s > 0 && std::isfinite(plan.interval_s);
  const double writes_planned = checkpoints ? std::max(0.0, std::ceil(work_s / plan.interval_s) - 1) : 0;
  if (completed) {
    split.saved_s = work_s;
    split.restart_s = plan.restart_s;
    split.checkpoint_s = writes_planned * plan.write_s;
    return split;
  }
  split.restart_s = std::min(std::max(elapsed_s, 0.0), plan.restart_s);
  const double computing = std::max(0.0, elapsed_s - split.restart_s);
  if (!checkpoints) {
    split.lost_s = computing;
    return split;
  }
  const double done = std::min(std::floor(computing / (plan.interval_s + plan.write_s)), writes_planned);
  split.saved_s = done * plan.interval_s;
  split.checkpoint_s = done * plan.write_s;
  split.lost_s = std::max(0.0, computing - split.saved_s - split.checkpoint_s);
  return split;
}

namespace {

std::vector<std::vector<std::uint32_t>> groups_by_index(const std::vector<int>& index_of_node) {
  std::vector<std::vector<std::uint32_t>> groups;
  for (std::uint32_t n = 0; n < index_of_node.size(); ++n) {
    const int g = index_of_node[n];
    if (g < 0) continue;
    if (groups.size() <= static_cast<std::size_t>(g)) groups.resize(static_cast<std::size_t>(g) + 1);
    groups[static_cast<std::size_t>(g)].push_back(n);
  }
  std::erase_if(groups, [](const auto& g) { return g.empty(); });
  return groups;
}

ClusterShape cluster_shape(const FaultsConfig& config, const ClusterConfig& cluster) {
  ClusterShape shape;
  shape.nodes = static_cast<std::uint32_t>(cluster.nodes.size());
  shape.gpus_per_node = 1;
  for (const NodeConfig& n : cluster.nodes) shape.gpus_per_node = std::max(shape.gpus_per_node, n.gpus);
  shape.links_per_node = std::max<std::uint32_t>(config.links_per_node, 1);
  if (config.nodes_per_switch > 0) {
    shape.switch_groups = contiguous_groups(shape.nodes, config.nodes_per_switch);
  } else if (cluster.topology.slurm.kind == TopologyKind::kTree) {
    shape.switch_groups = groups_by_index(cluster.topology.slurm.leaf_of_node);
  } else if (cluster.topology.slurm.kind == TopologyKind::kBlock) {
    shape.switch_groups = groups_by_index(cluster.topology.slurm.block_of_node);
  }
  if (config.nodes_per_rack > 0) shape.rack_groups = contiguous_groups(shape.nodes, config.nodes_per_rack);
  return shape;
}

}  // namespace

FaultMechanics::FaultMechanics(const FaultsConfig& config, const ClusterState& state, std::uint64_t seed)
    : config_(config),
      state_(state),
      detection_(config.detection),
      repair_rng_(Rng::stream(seed, "faults/repair")),
      nodes_(state.node_count()),
      interrupts_(state.job_count()),
      run_plan_(state.job_count()),
      planned_(state.job_count(), 0),
      first_plan_(state.job_count()),
      held_by_node_(state.node_count()) {
  detection_.slurm.node_count = static_cast<std::uint32_t>(state.node_count());
  if (config.random_faults && !config.profile.classes.empty()) {
    FaultProcessConfig pc = config.process;
    pc.seed = seed;
    pc.start = 0;
    process_.emplace(config.profile, cluster_shape(config, state.config()), pc);
  }
  log_.nodes = static_cast<std::uint32_t>(state.node_count());
}

void FaultMechanics::start(SimWorld& world) {
  detection_.slurm.slurmctld_start = -from_seconds(world.slurm_parameters().phase_s);
  for (std::size_t i = 0; i < config_.inject.size(); ++i)
    world.push_fault(from_seconds_f(config_.inject[i].time_s), target(kInjected, i), 0);
  arm_next_random(world);
}

void FaultMechanics::on_jobs_added() {
  const std::size_t jobs = state_.job_count();
  interrupts_.resize(jobs);
  run_plan_.resize(jobs);
  planned_.resize(jobs, 0);
  first_plan_.resize(jobs);
}

void FaultMechanics::arm_next_random(SimWorld& world) {
  if (!process_) return;
  next_fault_ = process_->next();
  ++next_generation_;  // an event armed for an earlier draw is stale
  if (next_fault_) world.push_fault(std::max(next_fault_->time, world.now()), target(kNextFault, 0), next_generation_);
}

void FaultMechanics::renew_clock(SimWorld& world, const FaultEvent& event) {
  process_->renew(event, world.now());
  // The renewed clock may come due before the fault already drawn (or be the only one left): draw again.
  if (next_fault_) process_->unget(*next_fault_);
  arm_next_random(world);
}

void FaultMechanics::on_event(SimWorld& world, std::uint64_t tgt, std::uint32_t generation) {
  const auto kind = static_cast<Kind>(tgt >> 56);
  const std::uint64_t index = tgt & ((1ULL << 56) - 1);
  switch (kind) {
    case kNextFault: {
      if (generation != next_generation_ || !next_fault_) return;  // drawn again since
      const FaultEvent f = *next_fault_;
      const FaultClass& c = process_->fault_class(f);
      FaultRecord r;
      r.time = world.now();
      r.fault_class = c.name;
      r.cause = c.cause;
      r.xid = f.xid;
      r.component = f.component;
      r.node = f.node;
      r.gpu = f.gpu;
      r.group = f.group;
      r.effect = f.effect;
      r.symptom = f.symptom;
      const auto affected = process_->affected_nodes(f);
      const bool gpu_kind = f.component == ComponentKind::kGpu || f.component == ComponentKind::kNvlink;
      if (gpu_kind && f.gpu >= state_.config().nodes[f.node].gpus) {
        ++log_.suppressed;  // a GPU fault on a node without that GPU (mixed clusters)
      } else {
        hold_clock(f, strike(world, std::move(r), affected), affected);
      }
      arm_next_random(world);
      break;
    }
    case kInjected:
      inject(world, config_.inject[index]);
      break;
    case kDetect:
      if (nodes_[index].generation == generation) detect(world, static_cast<NodeIndex>(index));
      break;
    case kInterrupt:
      interrupt(world, static_cast<JobIndex>(index));
      break;
  }
}

std::int64_t FaultMechanics::inject(SimWorld& world, const InjectedFault& in) {
  FaultRecord r;
  r.time = world.now();
  r.fault_class = "injected";
  r.cause = in.cause;
  r.xid = in.xid;
  r.component = state_.config().nodes[in.node].gpus > 0 && in.xid != 0 ? ComponentKind::kGpu : ComponentKind::kNode;
  r.node = in.node;
  r.gpu = r.component == ComponentKind::kGpu ? in.gpu : UINT32_MAX;
  r.effect = in.effect;
  r.symptom = in.symptom;
  const std::uint32_t node = in.node;
  const std::uint32_t fault = strike(world, std::move(r), std::span<const std::uint32_t>(&node, 1));
  return fault == kNoFault ? -1 : static_cast<std::int64_t>(fault);
}

// A component out of service does not age: the Weibull clock of a fault that took its node(s) out restarts when
// they return, not at the fault (a fault the node survives renews at once, as next() does by default).
void FaultMechanics::hold_clock(const FaultEvent& event, std::uint32_t fault, std::span<const std::uint32_t> nodes) {
  if (config_.process.distribution != InterFailure::kWeibull) return;
  if (fault != kNoFault && fault_nodes_out_[fault] > 0) {
    process_->hold(event);
    held_by_fault_.emplace(fault, event);
    return;
  }
  for (std::uint32_t n : nodes) {
    if (nodes_[n].phase == Phase::kUp) continue;
    process_->hold(event);  // the node was out (or faulty) already: the clock waits for its return
    held_by_node_[n].push_back(event);
    return;
  }
}

std::uint32_t FaultMechanics::strike(SimWorld& world, FaultRecord record, std::span<const std::uint32_t> nodes) {
  const auto fault = static_cast<std::uint32_t>(log_.faults.size());
  const SimTime now = world.now();
  // Nodes being repaired, or cloud nodes that do not exist (powered down, booting, being removed), are out.
  const auto out = [&](std::uint32_t n) {
    const NodeCondition c = world.state().node_condition(n);
    return nodes_[n].phase == Phase::kRecovering || nodes_[n].phase == Phase::kRecovered ||
           !state_.config().nodes[n].available || c == NodeCondition::kPoweredDown || c == NodeCondition::kPoweringUp ||
           c == NodeCondition::kPoweringDown;
  };
  std::uint32_t in_service = 0;
  for (std::uint32_t n : nodes) {
    if (!out(n)) ++in_service;
  }
  if (in_service == 0) {  // every node it could take is already out: nothing happens
    ++log_.suppressed;
    return kNoFault;
  }
  record.nodes_hit = in_service;
  log_.faults.push_back(std::move(record));
  fault_repair_s_.push_back(-1);
  fault_nodes_out_.push_back(0);
  const FaultRecord& r = log_.faults.back();
  if (r.xid != 0 && r.node != UINT32_MAX && r.gpu != UINT32_MAX) world.note_xid(r.node, r.gpu, r.xid);
  for (std::uint32_t n : nodes) {
    NodeHealth& h = nodes_[n];
    if (out(n)) continue;
    hit_jobs_on(world, n, now, r.symptom, fault);
    if (severity(r.effect) <= severity(FaultEffect::kRestartApp)) continue;  // the node stays fine
    if (h.phase == Phase::kUp) {
      h.phase = Phase::kLatent;
      h.effect = r.effect;
      h.symptom = r.symptom;
      h.fault = fault;
      ++fault_nodes_out_[fault];
      Detection d = detect_node_fault(detection_, n, now, r.symptom);
      h.by_people = d.time == kNever;
      if (h.by_people) d = Detection{now + from_seconds_f(config_.repair.undetected_found_s), DetectedBy::kNotDetected};
      h.detect_at = d.time;
      h.by = d.by;
      world.push_fault(d.time, target(kDetect, n), ++h.generation);
      world.expect_node_return(d.time);
    } else {
      if (severity(r.effect) > severity(h.effect)) {
        h.effect = r.effect;  // it recovers by the worse action
        if (h.phase == Phase::kDetected) report(world, n, true);
      }
      if (h.phase == Phase::kLatent) {
        // A second fault the checks see sooner (an Xid on a silently degraded node) is found sooner.
        const Detection d = detect_node_fault(detection_, n, now, r.symptom);
        if (d.time < h.detect_at) {
          h.detect_at = d.time;
          h.by = d.by;
          h.by_people = false;
          h.symptom = r.symptom;
          world.push_fault(d.time, target(kDetect, n), ++h.generation);
          world.expect_node_return(d.time);
        }
      }
    }
  }
  return fault;
}

void FaultMechanics::hit_jobs_on(SimWorld& world, NodeIndex node, SimTime fault_time, Symptom symptom,
                                 std::uint32_t fault) {
  const bool stalls = job_impact(symptom) == JobImpact::kStallsUntilKilled;
  for (JobIndex j : world.jobs_on(node)) {
    if (state_.job(j).configuring) continue;  // no processes yet; a DOWN node still requeues it (kill_jobs_on)
    const Detection when = job_interrupt(detection_, node, fault_time, symptom);
    if (when.time != kNever) arm_interrupt(world, j, when, fault, stalls ? fault_time : kNever, false);
  }
}

void FaultMechanics::arm_interrupt(SimWorld& world, JobIndex job, Detection when, std::uint32_t fault,
                                   SimTime progress_until, bool black_hole) {
  PendingInterrupt& p = interrupts_[job];
  const std::uint32_t run = state_.job(job).restarts;
  if (p.time != kNever && p.run == run) {  // an interrupt is armed already: the earlier one wins
    p.progress_until = std::min(p.progress_until, progress_until);  // a stall that began first still counts
    if (p.time <= when.time) return;
  } else {
    p.progress_until = progress_until;
  }
  p.time = std::max(when.time, world.now());
  p.black_hole = black_hole;
  p.fault = fault;
  p.by = when.by;
  p.run = run;
  world.push_fault(p.time, target(kInterrupt, job), 0);
}

RunCheckpointing FaultMechanics::plan_for(JobIndex job) {
  const JobSpec& spec = state_.spec(job);
  const auto alloc = state_.allocation(job);
  const std::uint32_t gpus = state_.allocated_gpus(job);
  if (!planned_[job]) {
    planned_[job] = 1;
    const CheckpointRule* rule = match_checkpoint(config_, gpus, spec.name);
    if (rule != nullptr) {
      JobFootprint fp;
      fp.gpus = gpus;
      fp.nodes = static_cast<std::uint32_t>(alloc.size());
      fp.nic_links = fp.nodes * config_.links_per_node;
      if (process_) {
        const ClusterShape& shape = process_->cluster();
        const auto count_groups = [&](const std::vector<std::vector<std::uint32_t>>& groups) {
          std::uint32_t count = 0;
          for (const auto& g : groups) {
            for (const NodeAllocation& a : alloc) {
              if (std::binary_search(g.begin(), g.end(), a.node)) {
                ++count;
                break;
              }
            }
          }
          return count;
        };
        fp.switches = count_groups(shape.switch_groups);
        fp.racks = count_groups(shape.rack_groups);
      }
      const double mttf_s =
          process_ ? job_mttf_hours(process_->profile(), fp) * 3600.0 : std::numeric_limits<double>::infinity();
      CheckpointRecord rec;
      rec.job = job;
      rec.gpus = gpus;
      rec.write_s = rule->write_s;
      rec.restart_s = rule->restart_s;
      rec.blocking = rule->blocking;
      rec.mttf_s = mttf_s;
      rec.young_s = std::isfinite(mttf_s) ? young_interval_s(rule->write_s, mttf_s) : mttf_s;
      rec.daly_s = std::isfinite(mttf_s) ? daly_interval_s(rule->write_s, mttf_s) : mttf_s;
      switch (rule->interval) {
        case CheckpointRule::Interval::kFixed:
          rec.interval_s = rule->interval_s;
          break;
        case CheckpointRule::Interval::kYoung:
          rec.interval_s = rec.young_s;
          break;
        case CheckpointRule::Interval::kDaly:
          rec.interval_s = rec.daly_s;
          break;
      }
      first_plan_[job] = RunCheckpointing{rec.interval_s, rule->blocking ? rule->write_s : 0, rule->restart_s};
      log_.checkpoints.push_back(rec);
    }
  }
  RunCheckpointing plan = first_plan_[job];
  if (state_.job(job).restarts == 0) plan.restart_s = 0;  // a first start's initialisation is in its run time
  return plan;
}

RunCheckpointing FaultMechanics::on_job_start(SimWorld& world, JobIndex job) {
  run_plan_[job] = plan_for(job);
  interrupts_[job].time = kNever;
  for (const NodeAllocation& a : state_.allocation(job)) {
    NodeHealth& h = nodes_[a.node];
    // kDetected: a CONFIGURING job begins on a node drained for a fault while it waited (DRAIN keeps allocated
    // jobs).
    if (h.phase != Phase::kLatent && h.phase != Phase::kDetected) continue;
    const bool noticed = h.phase == Phase::kDetected;
    if (config_.prolog_check && program_detects(detection_.program, h.symptom)) {
      // The Prolog's health check fails: Slurm drains the node and requeues the job, which never ran. Both happen
      // in events at this instant, after the start in progress.
      if (!noticed) {
        h.by = DetectedBy::kProlog;
        h.by_people = false;
        h.detect_at = world.now();
        world.push_fault(world.now(), target(kDetect, a.node), ++h.generation);
      }
      arm_interrupt(world, job, Detection{world.now(), DetectedBy::kProlog}, h.fault, world.now(), false);
      continue;
    }
    // The job meets the node's fault as if it struck now (a black hole when nobody has noticed the fault yet).
    const Detection when = job_interrupt(detection_, a.node, world.now(), h.symptom);
    const bool stalls = job_impact(h.symptom) == JobImpact::kStallsUntilKilled;
    if (when.time != kNever) arm_interrupt(world, job, when, h.fault, stalls ? world.now() : kNever, !noticed);
  }
  return run_plan_[job];
}

RunSplit FaultMechanics::account_run(ClusterState& state, JobIndex job, double elapsed_s, bool completed) {
  JobRuntime& rt = state.job_mut(job);
  const RunCheckpointing& plan = run_plan_[job];
  const double work = std::max(0.0, static_cast<double>(state.spec(job).run_time_s) - rt.work_saved_s);
  const RunSplit split = split_run(plan, work, elapsed_s, completed);
  const double gpus = state.allocated_gpus(job);
  rt.work_saved_s += split.saved_s;
  rt.restart_gpu_s += gpus * split.restart_s;
  rt.checkpoint_gpu_s += gpus * split.checkpoint_s;
  return split;
}

void FaultMechanics::interrupt(SimWorld& world, JobIndex job) {
  PendingInterrupt& p = interrupts_[job];
  const JobRuntime& rt = state_.job(job);
  if (rt.state != JobState::kRunning || p.time != world.now() || p.run != rt.restarts) return;  // stale
  p.time = kNever;
  const std::uint32_t fault = p.fault;
  const DetectedBy by = p.by;
  const SimTime progress_until = p.progress_until;
  const bool black_hole = p.black_hole;
  // A node set DOWN (or removed on detection) ends the run NODE_FAIL, requeued by Slurm's rule; a crash or the
  // watchdog ends it FAILED, restarted only by the job's own wrapper.
  const bool node_fail = by == DetectedBy::kSlurmdTimeout || by == DetectedBy::kHealthCheck ||
                         by == DetectedBy::kActiveCheck || by == DetectedBy::kNotDetected ||
                         by == DetectedBy::kProlog || by == DetectedBy::kEpilog;
  const JobSpec& spec = state_.spec(job);
  bool requeue = node_fail ? spec.requeue : config_.restart_failed_jobs;
  if (rt.interruptions + 1 > config_.max_restarts) requeue = false;
  InterruptionRecord rec =
      world.interrupt_job(job, node_fail ? JobState::kNodeFail : JobState::kFailed, requeue, progress_until);
  rec.fault = fault;
  rec.by = by;
  rec.black_hole = black_hole;
  FaultRecord& f = log_.faults[fault];
  ++f.jobs_hit;
  f.lost_gpu_s += rec.lost_gpu_s;
  log_.interruptions.push_back(rec);
}

void FaultMechanics::kill_jobs_on(SimWorld& world, NodeIndex node, DetectedBy by) {
  const auto on_node = world.jobs_on(node);
  const std::vector<JobIndex> jobs(on_node.begin(), on_node.end());  // ending a job edits the list
  if (jobs.empty()) return;
  const NodeHealth& h = nodes_[node];
  const bool stalls = job_impact(h.symptom) == JobImpact::kStallsUntilKilled;
  const SimTime fault_time = log_.faults[h.fault].time;
  for (JobIndex j : jobs) {
    PendingInterrupt& p = interrupts_[j];
    const std::uint32_t run = state_.job(j).restarts;
    // A job already stalled by this or another fault keeps the earliest stall.
    SimTime until = stalls ? std::max(fault_time, state_.job(j).start) : kNever;
    const bool armed = p.time != kNever && p.run == run;
    if (armed) until = std::min(until, p.progress_until);
    // A job that started on the node after its fault met an old fault (a black hole).
    const bool black_hole = (armed && p.black_hole) || state_.job(j).start > fault_time;
    p = PendingInterrupt{world.now(), h.fault, by, run, until, black_hole};
    interrupt(world, j);
  }
}

void FaultMechanics::detect(SimWorld& world, NodeIndex node) {
  NodeHealth& h = nodes_[node];
  if (h.phase != Phase::kLatent) return;
  const NodeCondition power = world.state().node_condition(node);
  if (power == NodeCondition::kPoweredDown || power == NodeCondition::kPoweringDown) {
    clear_fault(world, node);  // the cloud node is being deleted: the fault goes with it
    return;
  }
  const HealthCheckNodeState& filter = detection_.slurm.health_check_node_state;
  const bool any_state = !filter.idle && !filter.alloc && !filter.mixed && !filter.nondrained_idle;
  if (h.by == DetectedBy::kHealthCheck && !any_state) {
    const NodeIndex n = node;
    const std::uint32_t cpus = state_.config().nodes[n].cpus;
    if (!health_check_runs_on(filter, cpus - state_.free_cpus()[n], cpus, false)) {
      // Slurm skipped this node's check in its current state: the next check (or another mechanism) sees it.
      const Detection next = detect_node_fault(detection_, n, world.now() + kMicrosPerSecond, h.symptom);
      if (next.time != kNever) {
        h.detect_at = next.time;
        h.by = next.by;
        world.push_fault(next.time, target(kDetect, n), ++h.generation);
        world.expect_node_return(next.time);
        return;
      }
    }
  }
  FaultRecord& f = log_.faults[h.fault];
  if (f.detected == kNever) {
    f.detected = world.now();
    f.detected_by = h.by;
    f.found_by_people = h.by_people;
  }
  h.phase = Phase::kDetected;
  // slurmctld sets a node that stops answering DOWN itself, which ends its jobs (kill_running_job_by_node_ptr).
  const bool not_responding = h.symptom == Symptom::kHostDown || h.by == DetectedBy::kSlurmdTimeout;
  if (not_responding) world.down_node(node, InterruptionCause::kFault, "Not responding");
  report(world, node, false);
  // Out of service from now, unless a controller keeps it in service for now (on_left_service then).
  if (nodes_[node].phase != Phase::kUp && nodes_[node].out_since == kNever &&
      world.state().node_condition(node) != NodeCondition::kNone)
    nodes_[node].out_since = world.now();
}

void FaultMechanics::on_left_service(NodeIndex n, SimTime now) {
  NodeHealth& h = nodes_[n];
  if (h.phase == Phase::kDetected && h.out_since == kNever) h.out_since = now;
}

void FaultMechanics::report(SimWorld& world, NodeIndex node, bool again) {
  const NodeHealth& h = nodes_[node];
  const FaultRecord& f = log_.faults[h.fault];
  HealthEvent event;
  event.node = node;
  event.by = h.by;
  event.found_by_people = h.by_people;
  event.not_responding = h.symptom == Symptom::kHostDown || h.by == DetectedBy::kSlurmdTimeout;
  event.again = again;
  event.xid = f.xid;
  event.gpu = f.node == node ? f.gpu : UINT32_MAX;
  event.symptom = h.symptom;
  event.needs = h.effect;
  world.report_health(event);
}

void FaultMechanics::epilog_check(SimWorld& world, NodeIndex node) {
  NodeHealth& h = nodes_[node];
  // A health check in the Epilog (a common site setup, gpu-domain.md 3.2) sees the fault before the node takes
  // its next job: no black hole. The epilog's run time is in epilog_s.
  if (!config_.epilog_check || h.phase != Phase::kLatent || !program_detects(detection_.program, h.symptom)) return;
  h.by = DetectedBy::kEpilog;
  h.by_people = false;
  detect(world, node);
}

double FaultMechanics::repair_time_s(std::uint32_t fault) {
  double& drawn = fault_repair_s_[fault];
  if (drawn >= 0) return drawn;
  const RepairTimes& r = config_.repair;
  switch (log_.faults[fault].effect) {
    case FaultEffect::kResetGpu:
      drawn = r.gpu_reset_s;
      break;
    case FaultEffect::kRebootNode:
      drawn = r.reboot_s;
      break;
    default:
      drawn = draw_repair_s();
      break;
  }
  drawn = std::round(drawn);  // whole seconds, as Slurm's clock
  return drawn;
}

double FaultMechanics::draw_repair_s() {
  // Automated repair; with probability p_manual it fails and a technician repairs (AIReSim's model).
  const RepairTimes& r = config_.repair;
  double drawn = r.auto_repair_s > 0 ? repair_rng_.exponential(r.auto_repair_s) : 0;
  if (repair_rng_.uniform() < r.p_manual && r.manual_repair_s > 0) drawn += repair_rng_.exponential(r.manual_repair_s);
  return std::round(drawn);
}

double FaultMechanics::begin_recovery(NodeIndex node, FaultEffect action) {
  NodeHealth& h = nodes_[node];
  h.phase = Phase::kRecovering;
  // A recovery by the fault's own action takes the fault's time; another action (the worse of two faults) its own.
  if (action == log_.faults[h.fault].effect) return repair_time_s(h.fault);
  if (action == FaultEffect::kRepairNode && severity(action) > severity(h.effect)) {
    // A controller escalated the node to repair beyond what its faults need (a recurring XID, repeated reboots):
    // a repair of its own.
    return draw_repair_s();
  }
  return action == FaultEffect::kRebootNode ? config_.repair.reboot_s
         : action == FaultEffect::kResetGpu ? config_.repair.gpu_reset_s
                                            : repair_time_s(h.fault);
}

void FaultMechanics::end_recovery(NodeIndex node) {
  if (nodes_[node].phase == Phase::kRecovering) nodes_[node].phase = Phase::kRecovered;
}

void FaultMechanics::on_resumed(SimWorld& world, NodeIndex node) {
  const Phase phase = nodes_[node].phase;
  if (phase == Phase::kRecovering || phase == Phase::kRecovered) clear_fault(world, node);
}

void FaultMechanics::clear_fault(SimWorld& world, NodeIndex node) {
  NodeHealth& h = nodes_[node];
  if (h.out_since != kNever) log_.node_out_s += to_seconds_f(world.now() - h.out_since);
  if (--fault_nodes_out_[h.fault] == 0) {
    log_.faults[h.fault].returned = world.now();
    if (const auto held = held_by_fault_.find(h.fault); held != held_by_fault_.end()) {
      const FaultEvent e = held->second;
      held_by_fault_.erase(held);
      renew_clock(world, e);
    }
  }
  std::vector<FaultEvent> held;
  held.swap(held_by_node_[node]);
  for (const FaultEvent& e : held) renew_clock(world, e);
  h = NodeHealth{.generation = h.generation + 1};  // healthy again; pending events of the old fault are stale
}

SimTime FaultMechanics::stalled_until(JobIndex job, SimTime now) const {
  const PendingInterrupt& p = interrupts_[job];
  if (p.time == kNever || p.run != state_.job(job).restarts || p.progress_until > now) return kNever;
  return p.time;
}

void FaultMechanics::on_node_removed(SimWorld& world, NodeIndex n) {
  const Phase phase = nodes_[n].phase;
  if (phase == Phase::kLatent || phase == Phase::kDetected || phase == Phase::kRecovered) clear_fault(world, n);
}

void FaultMechanics::finish(SimTime horizon) {
  log_.horizon = horizon;
  for (const NodeHealth& h : nodes_) {
    if ((h.phase == Phase::kDetected || h.phase == Phase::kRecovering || h.phase == Phase::kRecovered) &&
        h.out_since < horizon)
      log_.node_out_s += to_seconds_f(horizon - h.out_since);
  }
}

}  // namespace gputwin
