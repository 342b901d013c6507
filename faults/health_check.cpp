// Detection timing (health_check.hpp). Slurm's timers: controller.c:_slurmctld_background, ping_nodes.c
// (run_health_check, ping_nodes), MIN_CHECKIN_TIME in slurmctld.h; check run times and coverage: gpu-domain.md
// 1.4 (DCGM levels), 3.2 (health-check stacks), 3.3 (detection latency).
#include "faults/health_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "faults/fault_error.hpp"

namespace gputwin {
namespace {

constexpr std::uint32_t bit(Symptom s) {
  return 1u << static_cast<unsigned>(s);
}

constexpr std::uint32_t kGpuHealth = bit(Symptom::kGpuError) | bit(Symptom::kGpuLost);

// clang-format off
constexpr std::array<CheckInfo, 9> kChecks = {{
  {CheckKind::kXidLog, "xid_log", 1, kGpuHealth,
   "XID lines are in the kernel log at once (3.3); run time [U]"},
  {CheckKind::kNvidiaSmi, "nvidia_smi", 5, bit(Symptom::kGpuLost),
   "3.2: nvidia-smi takes seconds (over 25 s without persistence mode); sees a GPU that is gone, not a slow link"},
  {CheckKind::kIbLink, "ib_link", 1, bit(Symptom::kLinkDown), "3.2: Meta's 5-minute checks include IB; run time [U]"},
  {CheckKind::kNodeBasics, "node_basics", 2, bit(Symptom::kHostError),
   "3.2: mounts, services (Meta, NHC); run time [U]"},
  {CheckKind::kDcgmDiag1, "dcgm_diag_1", 30, kGpuHealth,
   "1.4: level 1 takes seconds (30 s assumed [U]); page-retirement and row-remap state"},
  {CheckKind::kDcgmDiag2, "dcgm_diag_2", 120, kGpuHealth, "1.4: level 2 takes about 2 min"},
  {CheckKind::kDcgmDiag3, "dcgm_diag_3", 900, kGpuHealth | bit(Symptom::kDegraded),
   "1.4: level 3 takes about 15 min; adds stress, memory bandwidth and NVLink tests"},
  {CheckKind::kDcgmDiag4, "dcgm_diag_4", 3600, kGpuHealth | bit(Symptom::kDegraded) | bit(Symptom::kSilent),
   "1.4: level 4 is extended, hours common [U] (1 h assumed); EUD catches about 70% of SDC"},
  {CheckKind::kNcclAllReduce, "nccl_all_reduce", 60,
   bit(Symptom::kDegraded) | bit(Symptom::kLinkDown) | bit(Symptom::kGpuLost),
   "issue 5 / 2.4 (Acme's pairwise NCCL tests localise faulty nodes); run time [U]"},
}};
// clang-format on

// slurmctld.h: nodes have MIN_CHECKIN_TIME seconds to check in before the first ping; the loop's first tick is
// one second after start.
constexpr std::int64_t kFirstPingRoundS = 1 + 3;

}  // namespace

std::span<const CheckInfo> check_catalogue() {
  return kChecks;
}

const CheckInfo& check_info(CheckKind kind) {
  return kChecks[static_cast<std::size_t>(kind)];
}

bool check_detects(CheckKind kind, Symptom symptom) {
  return (check_info(kind).symptom_mask & bit(symptom)) != 0;
}

double program_run_time_s(const CheckProgram& program) {
  if (program.run_time_s) return *program.run_time_s;
  double total = 0;
  for (CheckKind k : program.checks) total += check_info(k).run_time_s;
  return total;
}

bool program_detects(const CheckProgram& program, Symptom symptom) {
  return std::any_of(program.checks.begin(), program.checks.end(),
                     [symptom](CheckKind k) { return check_detects(k, symptom); });
}

bool health_check_runs_on(const HealthCheckNodeState& s, std::uint32_t cpus_used, std::uint32_t cpus_total,
                          bool drained) {
  if (s.start_only) return false;
  if (!s.idle && !s.alloc && !s.mixed && !s.nondrained_idle) return true;  // ANY
  if (cpus_used == 0) return s.idle || (s.nondrained_idle && !drained);
  if (cpus_used < cpus_total) return s.mixed;
  return s.alloc;
}

HealthCheckCycle health_check_cycle(const SlurmHealthConfig& c) {
  const std::int64_t interval = c.health_check_interval_s;
  if (!c.health_check_node_state.cycle || interval <= 0 || c.node_count == 0) return {};
  HealthCheckCycle cycle;
  cycle.nodes_per_tick =
      static_cast<std::uint32_t>(std::max<std::int64_t>(2 * std::int64_t(c.node_count) / interval, 10));
  cycle.ticks = (c.node_count + cycle.nodes_per_tick - 1) / cycle.nodes_per_tick;
  cycle.period_s = interval + cycle.ticks - 1;
  return cycle;
}

SimTime next_health_check_start(const SlurmHealthConfig& c, std::uint32_t node, SimTime t) {
  const std::int64_t interval = c.health_check_interval_s;
  if (interval <= 0 || c.health_check_node_state.start_only) return kNever;
  const SimTime first = c.slurmctld_start + from_seconds(interval);
  if (!c.health_check_node_state.cycle) return next_tick_at_or_after(t, first, from_seconds(interval));
  if (node >= c.node_count) return kNever;
  const HealthCheckCycle cycle = health_check_cycle(c);
  const SimTime offset = from_seconds(node / cycle.nodes_per_tick);
  return next_tick_at_or_after(t, first + offset, from_seconds(cycle.period_s));
}

SimTime slurmd_timeout_down_time(const SlurmHealthConfig& c, SimTime last_response) {
  const std::int64_t timeout = c.slurmd_timeout_s;
  if (timeout <= 0 || last_response >= kNever) return kNever;
  const SimTime ping_interval = from_seconds(std::max<std::int64_t>(timeout / 3, 1));
  const SimTime first_round = c.slurmctld_start + from_seconds(kFirstPingRoundS);
  // Round R_k sets DOWN if last_response <= R_{k-1} - timeout: R_{k-1} is the first round >= L + timeout.
  const SimTime overdue_round =
      next_tick_at_or_after(last_response + from_seconds(timeout), first_round, ping_interval);
  return overdue_round + ping_interval;
}

SimTime nccl_watchdog_fire_time(SimTime hang_start, double timeout_s) {
  if (hang_start >= kNever) return kNever;
  return hang_start + from_seconds_f(timeout_s);
}

void validate(const DetectionConfig& config) {
  const SlurmHealthConfig& s = config.slurm;
  if (s.health_check_interval_s < 0)
    throw FaultConfigError("HealthCheckInterval", "must be >= 0 (0 turns periodic checks off)");
  if (s.slurmd_timeout_s < 0) throw FaultConfigError("SlurmdTimeout", "must be >= 0");
  if (s.health_check_node_state.cycle && s.health_check_interval_s > 0 && s.node_count == 0)
    throw FaultConfigError("node_count", "HealthCheckNodeState=CYCLE needs the number of nodes");
  const double run_s = program_run_time_s(config.program);
  if (!(run_s >= 0)) throw FaultConfigError("HealthCheckProgram", "run time must be >= 0");
  if (s.health_check_interval_s > 0 && run_s > static_cast<double>(s.health_check_timeout_s))
    throw FaultConfigError("HealthCheckProgram",
                           "run time " + std::to_string(run_s) + " s exceeds the " +
                               std::to_string(s.health_check_timeout_s) +
                               " s HealthCheckProgram kill limit; run long checks (DCGM level 2+) as active checks");
  for (std::size_t i = 0; i < config.active_checks.size(); ++i) {
    const ActiveCheck& a = config.active_checks[i];
    if (a.period <= 0) throw FaultConfigError("active_checks[" + std::to_string(i) + "].period", "must be positive");
    if (!(program_run_time_s(a.program) >= 0))
      throw FaultConfigError("active_checks[" + std::to_string(i) + "].program", "run time must be >= 0");
  }
  if (!(config.nccl_watchdog_timeout_s > 0)) throw FaultConfigError("nccl_watchdog_timeout_s", "must be positive");
}

Detection detect_node_fault(const DetectionConfig& config, std::uint32_t node, SimTime fault_time, Symptom symptom) {
  switch (symptom) {
    case Symptom::kNone:
    case Symptom::kAppError:
    case Symptom::kHang:
      return {};
    case Symptom::kAnnounced:
      return {fault_time, DetectedBy::kAtOnce};
    case Symptom::kHostDown:  // no check runs on a dead host; slurmctld's pings find it
      return {slurmd_timeout_down_time(config.slurm, fault_time), DetectedBy::kSlurmdTimeout};
    default:
      break;
  }
  Detection best;
  const double program_s = program_run_time_s(config.program);
  if (program_detects(config.program, symptom) &&
      program_s <= static_cast<double>(config.slurm.health_check_timeout_s)) {
    const SimTime start = next_health_check_start(config.slurm, node, fault_time);
    if (start < kNever) best = {start + from_seconds_f(program_s), DetectedBy::kHealthCheck};
  }
  for (const ActiveCheck& a : config.active_checks) {
    if (!program_detects(a.program, symptom) || a.period <= 0) continue;
    const SimTime start = next_tick_at_or_after(fault_time, a.phase, a.period);
    const SimTime seen = start + from_seconds_f(program_run_time_s(a.program));
    if (seen < best.time) best = {seen, DetectedBy::kActiveCheck};
  }
  return best;
}

Detection job_interrupt(const DetectionConfig& config, std::uint32_t node, SimTime fault_time, Symptom symptom) {
  const JobImpact impact = job_impact(symptom);
  if (impact == JobImpact::kFailsNow) return {fault_time, DetectedBy::kAtOnce};
  Detection best;
  if (impact == JobImpact::kStallsUntilKilled)
    best = {nccl_watchdog_fire_time(fault_time, config.nccl_watchdog_timeout_s), DetectedBy::kNcclWatchdog};
  const Detection on_node = detect_node_fault(config, node, fault_time, symptom);
  // A DOWN node's jobs are killed or requeued by Slurm itself (job_mgr.c:kill_running_job_by_node_ptr). A site
  // that also requeues the jobs of a drained node does so by its own decision (the health controller's).
  if (on_node.by == DetectedBy::kSlurmdTimeout && on_node.time < best.time) best = on_node;
  return best;
}

std::string_view to_string(DetectedBy by) {
  switch (by) {
    case DetectedBy::kNotDetected:
      return "not_detected";
    case DetectedBy::kAtOnce:
      return "at_once";
    case DetectedBy::kHealthCheck:
      return "health_check";
    case DetectedBy::kActiveCheck:
      return "active_check";
    case DetectedBy::kSlurmdTimeout:
      return "slurmd_timeout";
    case DetectedBy::kNcclWatchdog:
      return "nccl_watchdog";
    case DetectedBy::kProlog:
      return "prolog";
    case DetectedBy::kEpilog:
      return "epilog";
  }
  return "?";
}

}  // namespace gputwin
