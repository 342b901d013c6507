// Detection timing worked by hand, and HealthCheckNodeState=CYCLE against a tick-by-tick emulation of slurmctld
// (controller.c:_slurmctld_background calling ping_nodes.c:run_health_check once a second).
#include "faults/health_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "faults/fault_error.hpp"

namespace gputwin {
namespace {

SimTime s(std::int64_t seconds) {
  return from_seconds(seconds);
}

// The check start times of every node in [P, P + until_s) by stepping slurmctld's loop: last_health_check_time
// starts at P and (with CYCLE) is never advanced; run_health_check keeps base_node_loc and cycle_start_time
// across calls, checks node_limit = max(2N / I, 10) nodes per call, and after a full pass waits until
// now - cycle_start_time >= I. An independent transcription of the C, not of the closed form.
std::vector<std::vector<std::int64_t>> emulate_cycle(std::uint32_t n, std::int64_t interval, std::int64_t until_s) {
  std::vector<std::vector<std::int64_t>> starts(n);
  const std::int64_t last_health_check_time = 0;
  std::uint32_t base_node_loc = 0;
  std::int64_t cycle_start_time = -1;
  for (std::int64_t now = 1; now < until_s; ++now) {
    if (now - last_health_check_time < interval) continue;
    if (cycle_start_time < 0) {
      cycle_start_time = now;
    } else if (base_node_loc > 0) {
      // mid-cycle
    } else if (now - cycle_start_time < interval) {
      continue;
    }
    cycle_start_time = now;
    const std::uint32_t node_limit = std::max<std::uint32_t>(2 * n / interval, 10);
    std::uint32_t tested = 0;
    bool ran_out = true;
    for (; base_node_loc < n; ++base_node_loc) {
      if (tested++ >= node_limit) {
        ran_out = false;
        break;
      }
      starts[base_node_loc].push_back(now);
    }
    if (ran_out) base_node_loc = 0;
  }
  return starts;
}

TEST(HealthCheck, PeriodicWithoutCycleByHand) {
  // slurmctld started at 1,000 s, HealthCheckInterval=300: every node at 1,300, 1,600, 1,900, ...
  SlurmHealthConfig c{.slurmctld_start = s(1000), .health_check_interval_s = 300};
  EXPECT_EQ(next_health_check_start(c, 0, s(1010)), s(1300));  // before the first tick
  EXPECT_EQ(next_health_check_start(c, 7, s(1450)), s(1600));
  EXPECT_EQ(next_health_check_start(c, 7, s(1600)), s(1600));  // a check starting at the fault sees it
  EXPECT_EQ(next_health_check_start(c, 7, s(1600) + 1), s(1900));
  c.health_check_interval_s = 0;  // Slurm's default: off
  EXPECT_EQ(next_health_check_start(c, 0, s(1450)), kNever);
  c.health_check_interval_s = 300;
  c.health_check_node_state.start_only = true;
  EXPECT_EQ(next_health_check_start(c, 0, s(1450)), kNever);
}

TEST(HealthCheck, CycleByHand) {
  // 4,096 nodes, HealthCheckInterval=120 (Soperator), CYCLE: L = max(8,192 / 120, 10) = 68 nodes per second,
  // B = ceil(4,096 / 68) = 61 ticks, period 120 + 61 - 1 = 180 s (not 120). Node n starts at
  // 120 + 180 c + floor(n / 68): node 0 at 120, 300; node 100 at 121, 301; node 4,095 (batch 60) at 180, 360.
  const SlurmHealthConfig c{
      .health_check_interval_s = 120, .health_check_node_state = {.cycle = true}, .node_count = 4096};
  const HealthCheckCycle cycle = health_check_cycle(c);
  EXPECT_EQ(cycle.nodes_per_tick, 68u);
  EXPECT_EQ(cycle.ticks, 61u);
  EXPECT_EQ(cycle.period_s, 180);
  EXPECT_EQ(next_health_check_start(c, 0, 0), s(120));
  EXPECT_EQ(next_health_check_start(c, 0, s(121)), s(300));
  EXPECT_EQ(next_health_check_start(c, 100, s(122)), s(301));
  EXPECT_EQ(next_health_check_start(c, 4095, s(200)), s(360));
  // A fault on node 4,095 at 200 s: seen by the check starting at 360 s, done 5 s later with nvidia-smi.
  DetectionConfig d{.slurm = c, .program = {.checks = {CheckKind::kNvidiaSmi}}};
  const Detection seen = detect_node_fault(d, 4095, s(200), Symptom::kGpuLost);
  EXPECT_EQ(seen.by, DetectedBy::kHealthCheck);
  EXPECT_EQ(seen.time, s(365));
  // Few nodes: L = 10 >= N, one tick per cycle, the period is the interval.
  const SlurmHealthConfig small{
      .health_check_interval_s = 120, .health_check_node_state = {.cycle = true}, .node_count = 8};
  EXPECT_EQ(health_check_cycle(small).period_s, 120);
}

TEST(HealthCheck, CycleMatchesTheSlurmLoop) {
  // Closed form against the emulated loop for several sizes, including N a multiple of L (4,080 = 60 x 68).
  struct Case {
    std::uint32_t n;
    std::int64_t interval;
  };
  for (const Case k : {Case{4096, 120}, Case{4080, 120}, Case{1000, 300}, Case{37, 5}, Case{8, 60}, Case{700, 30}}) {
    SCOPED_TRACE(k.n);
    const SlurmHealthConfig c{
        .health_check_interval_s = k.interval, .health_check_node_state = {.cycle = true}, .node_count = k.n};
    const auto starts = emulate_cycle(k.n, k.interval, 6 * k.interval + 200);
    for (std::uint32_t node = 0; node < k.n; ++node) {
      ASSERT_FALSE(starts[node].empty());
      SimTime t = 0;
      for (std::int64_t expected : starts[node]) {
        const SimTime got = next_health_check_start(c, node, t);
        ASSERT_EQ(got, s(expected)) << "node " << node;
        t = got + 1;
      }
    }
  }
}

TEST(HealthCheck, NodeStateFilter) {
  // run_health_check: ANY runs everywhere; IDLE only without allocated CPUs; MIXED partly; ALLOC fully;
  // NONDRAINED_IDLE idle and not drained; START_ONLY never periodically.
  EXPECT_TRUE(health_check_runs_on({}, 64, 64, true));
  EXPECT_TRUE(health_check_runs_on({.idle = true}, 0, 64, false));
  EXPECT_FALSE(health_check_runs_on({.idle = true}, 8, 64, false));
  EXPECT_TRUE(health_check_runs_on({.mixed = true}, 8, 64, false));
  EXPECT_FALSE(health_check_runs_on({.mixed = true}, 64, 64, false));
  EXPECT_TRUE(health_check_runs_on({.alloc = true}, 64, 64, false));
  EXPECT_TRUE(health_check_runs_on({.nondrained_idle = true}, 0, 64, false));
  EXPECT_FALSE(health_check_runs_on({.nondrained_idle = true}, 0, 64, true));
  EXPECT_FALSE(health_check_runs_on({.start_only = true}, 0, 64, false));
}

TEST(HealthCheck, SlurmdTimeoutByHand) {
  // slurmctld at 0, SlurmdTimeout=300: ping rounds every 100 s from 4 s (1 s loop tick + MIN_CHECKIN_TIME 3 s):
  // 4, 104, ..., 1,304, 1,404. A node last heard at 1,000 s: round 1,304 compares with 1,204 - 300 = 904 (not yet);
  // round 1,404 compares with 1,304 - 300 = 1,004 >= 1,000: DOWN at 1,404 s, 404 s after the last contact.
  const SlurmHealthConfig c{};
  EXPECT_EQ(slurmd_timeout_down_time(c, s(1000)), s(1404));
  // Always SlurmdTimeout + 100 to + 200 s (4/3 T to 5/3 T) after the last response.
  for (std::int64_t last = 0; last < 1000; last += 7) {
    const SimTime down = slurmd_timeout_down_time(c, s(last));
    EXPECT_GE(down - s(last), s(400));
    EXPECT_LT(down - s(last), s(500));
  }
  EXPECT_EQ(slurmd_timeout_down_time({.slurmd_timeout_s = 0}, s(1000)), kNever);
  // A dead host is found only this way (no check runs on it).
  DetectionConfig d{.slurm = {.health_check_interval_s = 60}, .program = {.checks = {CheckKind::kNvidiaSmi}}};
  const Detection seen = detect_node_fault(d, 3, s(1000), Symptom::kHostDown);
  EXPECT_EQ(seen.by, DetectedBy::kSlurmdTimeout);
  EXPECT_EQ(seen.time, s(1404));
}

TEST(HealthCheck, WhatEachCheckSees) {
  // nvidia-smi sees a GPU that fell off the bus, not a degraded NVLink; DCGM level 3 and NCCL tests see
  // degradation; only level 4 sees silent corruption; levels 1-3 take seconds, ~2 min, ~15 min (1.4).
  EXPECT_TRUE(check_detects(CheckKind::kNvidiaSmi, Symptom::kGpuLost));
  EXPECT_FALSE(check_detects(CheckKind::kNvidiaSmi, Symptom::kDegraded));
  EXPECT_FALSE(check_detects(CheckKind::kDcgmDiag2, Symptom::kDegraded));
  EXPECT_TRUE(check_detects(CheckKind::kDcgmDiag3, Symptom::kDegraded));
  EXPECT_TRUE(check_detects(CheckKind::kNcclAllReduce, Symptom::kDegraded));
  EXPECT_FALSE(check_detects(CheckKind::kDcgmDiag3, Symptom::kSilent));
  EXPECT_TRUE(check_detects(CheckKind::kDcgmDiag4, Symptom::kSilent));
  EXPECT_EQ(check_info(CheckKind::kDcgmDiag2).run_time_s, 120);
  EXPECT_EQ(check_info(CheckKind::kDcgmDiag3).run_time_s, 900);
  EXPECT_EQ(program_run_time_s({.checks = {CheckKind::kXidLog, CheckKind::kNvidiaSmi}}), 6);
  EXPECT_EQ(program_run_time_s({.checks = {CheckKind::kXidLog}, .run_time_s = 12.5}), 12.5);
  for (std::size_t i = 0; i < check_catalogue().size(); ++i)
    EXPECT_EQ(static_cast<std::size_t>(check_catalogue()[i].kind), i);
}

TEST(HealthCheck, ActiveChecksFindWhatTheProgramCannot) {
  // HealthCheckInterval=120 with nvidia-smi; an NCCL all-reduce test as a job at 00:00 and 12:00 (Soperator's
  // cron), 60 s. A degraded link at 5 h: the program never sees it; the 12:00 test finishes at 12:01.
  DetectionConfig d{.slurm = {.health_check_interval_s = 120}, .program = {.checks = {CheckKind::kNvidiaSmi}}};
  d.active_checks.push_back({.program = {.checks = {CheckKind::kNcclAllReduce}}, .period = s(12 * 3600), .phase = 0});
  const Detection seen = detect_node_fault(d, 0, s(5 * 3600), Symptom::kDegraded);
  EXPECT_EQ(seen.by, DetectedBy::kActiveCheck);
  EXPECT_EQ(seen.time, s(12 * 3600 + 60));
  // A lost GPU at 5 h: the program at 5:00 + 120 k finds it at the next tick: 18,000 s is a tick -> 18,005 s.
  EXPECT_EQ(detect_node_fault(d, 0, s(5 * 3600), Symptom::kGpuLost).time, s(5 * 3600 + 5));
  EXPECT_EQ(detect_node_fault(d, 0, s(5 * 3600) + 1, Symptom::kGpuLost).time, s(5 * 3600 + 125));
  // Nothing to find on the node after an application error or a hang; announced faults are known at once.
  EXPECT_EQ(detect_node_fault(d, 0, s(100), Symptom::kAppError).by, DetectedBy::kNotDetected);
  EXPECT_EQ(detect_node_fault(d, 0, s(100), Symptom::kHang).by, DetectedBy::kNotDetected);
  EXPECT_EQ(detect_node_fault(d, 0, s(100), Symptom::kAnnounced).time, s(100));
}

TEST(HealthCheck, WhenTheJobStops) {
  // A crash stops the job at once; a hang at 1,000 s waits for the NCCL watchdog (600 s): 1,600 s; a dead host
  // last heard at 1,000 s goes DOWN at 1,404 s, before the watchdog, and Slurm kills the job then; a degraded
  // node keeps the job running: the DCGM level 3 check that sees it at 4,500 s drains the node, and requeueing its
  // jobs then (Meta style) is the health controller's decision, not something the fault does.
  DetectionConfig d{.slurm = {.health_check_interval_s = 120}, .program = {.checks = {CheckKind::kNvidiaSmi}}};
  d.active_checks.push_back({.program = {.checks = {CheckKind::kDcgmDiag3}}, .period = s(3600), .phase = 0});
  EXPECT_EQ(job_interrupt(d, 0, s(1000), Symptom::kGpuError).time, s(1000));
  EXPECT_EQ(nccl_watchdog_fire_time(s(1000)), s(1600));
  const Detection hang = job_interrupt(d, 0, s(1000), Symptom::kHang);
  EXPECT_EQ(hang.by, DetectedBy::kNcclWatchdog);
  EXPECT_EQ(hang.time, s(1600));
  const Detection dead = job_interrupt(d, 0, s(1000), Symptom::kHostDown);
  EXPECT_EQ(dead.by, DetectedBy::kSlurmdTimeout);
  EXPECT_EQ(dead.time, s(1404));
  EXPECT_EQ(job_interrupt(d, 0, s(1000), Symptom::kDegraded).by, DetectedBy::kNotDetected);
  const Detection seen = detect_node_fault(d, 0, s(1000), Symptom::kDegraded);
  EXPECT_EQ(seen.by, DetectedBy::kActiveCheck);
  EXPECT_EQ(seen.time, s(4500));
}

TEST(HealthCheck, ValidateRejectsWhatSlurmWouldKill) {
  // DCGM level 2 (~120 s) as HealthCheckProgram is killed at 60 s: a typed error naming the setting.
  DetectionConfig d{.slurm = {.health_check_interval_s = 120}, .program = {.checks = {CheckKind::kDcgmDiag2}}};
  try {
    validate(d);
    ADD_FAILURE() << "expected FaultConfigError";
  } catch (const FaultConfigError& e) {
    EXPECT_EQ(e.field(), "HealthCheckProgram");
  }
  // The same check as an active check is fine, and the program's detections then come from there.
  d.program.checks = {CheckKind::kXidLog};
  d.active_checks.push_back({.program = {.checks = {CheckKind::kDcgmDiag2}}, .period = s(86400)});
  EXPECT_NO_THROW(validate(d));
  d.slurm.health_check_node_state.cycle = true;  // CYCLE without a node count
  EXPECT_THROW(validate(d), FaultConfigError);
  d.slurm.node_count = 16;
  d.nccl_watchdog_timeout_s = 0;
  EXPECT_THROW(validate(d), FaultConfigError);
}

}  // namespace
}  // namespace gputwin
