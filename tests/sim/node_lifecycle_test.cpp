// The node lifecycle in whole runs: hand-worked schedules of injected faults (each effect bucket, each way a job
// meets a fault, checkpoint arithmetic), scenario errors, determinism of random faults, and the simulated mean
// time to failure of 8- and 1,024-GPU jobs against Meta's published figures (gpu-domain.md 2.2).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "faults/checkpoint.hpp"
#include "model/errors.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

// Two 8-GPU nodes n001-n002; job 1 (8 GPUs, 5,000 s) is submitted at 0 and starts at 3 on n001 (batch_sched_delay);
// job 2 (8 GPUs, 5,000 s) at 10 starts at 11 on n002. `faults` is the /faults object.
Scenario two_node_scenario(const std::string& faults, const std::string& jobs = "") {
  const std::string default_jobs =
      R"([{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
          {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600}])";
  const std::string text =
      R"({"name": "lifecycle", "seed": 1,
          "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                      "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
          "workload": {"jobs": )" +
      (jobs.empty() ? default_jobs : jobs) + R"(}, "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
          "faults": )" + faults + "}";
  return parse_scenario(text, "lifecycle.json", ".");
}

RunOutcome run(Scenario sc) { return run_scenario(std::move(sc), RunOptions{}); }

const FaultLog& log_of(const RunOutcome& o) { return *fault_log(o); }

TEST(RunSplit, CheckpointArithmeticByHand) {
  const RunCheckpointing plan{600, 60, 300};
  // 5,000 s of work: 300 restart + 5,000 + (ceil(5000/600) - 1 = 8) writes x 60 = 5,780 s.
  EXPECT_DOUBLE_EQ(run_length_s(plan, 5000), 5780);
  // Work that ends on a checkpoint boundary needs no final write: 1,200 s -> 1 write.
  EXPECT_DOUBLE_EQ(run_length_s(plan, 1200), 300 + 1200 + 60);
  // 2,000 s into the run: 300 restart, then 1,700 s = 2 segments of 660 (1,320) + 380 s lost.
  const RunSplit s = split_run(plan, 5000, 2000, false);
  EXPECT_DOUBLE_EQ(s.restart_s, 300);
  EXPECT_DOUBLE_EQ(s.saved_s, 1200);
  EXPECT_DOUBLE_EQ(s.checkpoint_s, 120);
  EXPECT_DOUBLE_EQ(s.lost_s, 380);
  // Cut during the restart: everything so far is restart overhead.
  const RunSplit early = split_run(plan, 5000, 100, false);
  EXPECT_DOUBLE_EQ(early.restart_s, 100);
  EXPECT_DOUBLE_EQ(early.lost_s, 0);
  // No checkpoints: the whole run is lost; completed: the whole work is kept.
  EXPECT_DOUBLE_EQ(split_run(RunCheckpointing{}, 5000, 2000, false).lost_s, 2000);
  EXPECT_DOUBLE_EQ(split_run(plan, 5000, 5780, true).saved_s, 5000);
  EXPECT_DOUBLE_EQ(split_run(plan, 5000, 5780, true).checkpoint_s, 480);
}

TEST(NodeLifecycle, GpuFallenOffTheBusCrashesTheJobDrainsAndRebootsTheNode) {
  // Xid 79 at 1,000 on n001: nvidia-smi fails (gpu_lost), the job crashes at once (FAILED) and its wrapper requeues
  // it (ready at 1,121). HealthCheckInterval=120 without CYCLE: checks start at 120 k; the first at or after 1,000 is
  // 1,080 and the default program (xid_log 1 + nvidia_smi 5 + ib_link 1 + node_basics 2 s) ends at 1,089: DRAINED
  // (idle since 1,000), then the reboot (600 s) brings n001 back at 1,689, where job 1 starts again (n002 is busy
  // until 5,011) and ends at 6,689.
  const RunOutcome o = run(two_node_scenario(
      R"({"HealthCheckInterval": 120, "inject": [{"time": 1000, "node": "n001", "xid": 79, "gpu": 2}]})"));
  const FaultLog& log = log_of(o);
  ASSERT_EQ(log.faults.size(), 1u);
  const FaultRecord& f = log.faults[0];
  EXPECT_EQ(f.xid, 79u);
  EXPECT_EQ(f.effect, FaultEffect::kRebootNode);
  EXPECT_EQ(f.detected_by, DetectedBy::kHealthCheck);
  EXPECT_EQ(f.detected, from_seconds(1089));
  EXPECT_EQ(f.returned, from_seconds(1689));
  ASSERT_EQ(log.interruptions.size(), 1u);
  const InterruptionRecord& i = log.interruptions[0];
  EXPECT_EQ(i.state, JobState::kFailed);
  EXPECT_EQ(i.time, from_seconds(1000));
  EXPECT_DOUBLE_EQ(i.run_s, 997);
  EXPECT_DOUBLE_EQ(i.lost_s, 997);
  EXPECT_TRUE(i.requeued);
  const JobRuntime& j1 = o.state->job(0);
  EXPECT_EQ(j1.state, JobState::kCompleted);
  EXPECT_EQ(j1.start, from_seconds(1689));
  EXPECT_EQ(j1.end, from_seconds(6689));
  EXPECT_EQ(j1.restarts, 1u);
  EXPECT_EQ(o.state->job(1).start, from_seconds(11));
  // 600 node-seconds out; allocated 2 x 8 x 5,000 + 8 x 997 GPU-s, of which 8 x 997 lost.
  EXPECT_DOUBLE_EQ(log.node_out_s, 600);
  EXPECT_NEAR(o.summary.allocated_gpu_hours, (80000 + 7976) / 3600.0, 1e-9);
  EXPECT_NEAR(o.summary.gpu_hours_lost_fault_work, 7976 / 3600.0, 1e-9);
  EXPECT_NEAR(o.summary.goodput, 1 - 7976.0 / 87976.0, 1e-12);
}

TEST(NodeLifecycle, DeadHostGoesDownAfterSlurmdTimeoutAndAHangMeetsTheWatchdog) {
  // Checkpoints every 600 s of compute, 60 s blocking writes, 300 s restart.
  // n001's host dies at 2,000 (reboot): SlurmdTimeout=300 pings every 100 s from 4; the first round at or after
  // 2,300 is 2,304, so DOWN at 2,404: job 1 ends NODE_FAIL (requeued: --requeue). It made progress until 2,000:
  // 1,997 s = 3 segments of 660 (1,800 s kept, 180 s writing) + 17 s, plus 404 s stalled: 421 s lost.
  // n001 reboots (600 s) and returns at 3,004; job 1 restarts there: 300 + 3,200 + 5 x 60 = 3,800 s, ends 6,804.
  // Job 2 hangs at 3,000 (restart_app, hang): the NCCL watchdog kills it at 3,600 (FAILED, restarted by its
  // wrapper). Progress until 3,000: 2,989 s = 4 segments (2,400 kept) + 349 s; lost 349 + 600 = 949 s. It is
  // eligible again at 3,721 (requeue delay 121 s) and starts at the next full pass, 3,780: 300 + 2,600 + 4 x 60 =
  // 3,140 s, ends 6,920. n002 stays in service (the app restart leaves the node fine).
  const RunOutcome o = run(two_node_scenario(R"({"HealthCheckInterval": 120, "SlurmdTimeout": 300,
      "checkpoint": [{"min_gpus": 8, "interval": 600, "write_s": 60, "restart_s": 300}],
      "inject": [{"time": 2000, "node": "n001", "effect": "reboot_node", "symptom": "host_down"},
                 {"time": 3000, "node": "n002", "effect": "restart_app", "symptom": "hang"}]})"));
  const FaultLog& log = log_of(o);
  ASSERT_EQ(log.faults.size(), 2u);
  EXPECT_EQ(log.faults[0].detected_by, DetectedBy::kSlurmdTimeout);
  EXPECT_EQ(log.faults[0].detected, from_seconds(2404));
  EXPECT_EQ(log.faults[0].returned, from_seconds(3004));
  EXPECT_EQ(log.faults[1].detected, kNever);
  ASSERT_EQ(log.interruptions.size(), 2u);
  EXPECT_EQ(log.interruptions[0].state, JobState::kNodeFail);
  EXPECT_EQ(log.interruptions[0].by, DetectedBy::kSlurmdTimeout);
  EXPECT_DOUBLE_EQ(log.interruptions[0].lost_s, 421);
  EXPECT_EQ(log.interruptions[1].state, JobState::kFailed);
  EXPECT_EQ(log.interruptions[1].by, DetectedBy::kNcclWatchdog);
  EXPECT_EQ(log.interruptions[1].time, from_seconds(3600));
  EXPECT_DOUBLE_EQ(log.interruptions[1].lost_s, 949);
  EXPECT_EQ(o.state->job(0).start, from_seconds(3004));
  EXPECT_EQ(o.state->job(0).end, from_seconds(6804));
  EXPECT_EQ(o.state->job(1).start, from_seconds(3780));
  EXPECT_EQ(o.state->job(1).end, from_seconds(6920));
  // Restarts 2 x 300 s, writes 3+5 and 4+4 x 60 s, all x 8 GPUs.
  EXPECT_NEAR(o.summary.gpu_hours_lost_restart, 8 * 600 / 3600.0, 1e-9);
  EXPECT_NEAR(o.summary.gpu_hours_checkpoint, 8 * 960 / 3600.0, 1e-9);
  EXPECT_NEAR(o.summary.gpu_hours_lost_fault_work, 8 * (421 + 949) / 3600.0, 1e-9);
  EXPECT_DOUBLE_EQ(log.node_out_s, 600);
}

TEST(NodeLifecycle, DegradedNodeDrainsWhileItsJobRunsThenResetsItsGpu) {
  // A degraded GPU at 1,000 (reset_gpu, degraded): the job keeps running; only DCGM diag level 3 sees it. The
  // active check runs every hour from 0: the first start at or after 1,000 is 3,600, done at 3,600 + 900 = 4,500.
  // n001 is DRAINING until job 1 ends at 5,003, then DRAINED and reset for 300 s: back at 5,303 (job 2 runs until
  // 6,011, so the run lasts past the return).
  const std::string jobs =
      R"([{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
          {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 6000, "time_limit": 600}])";
  const RunOutcome o = run(two_node_scenario(R"({"active_checks": [{"checks": ["dcgm_diag_3"], "period": 3600}],
      "inject": [{"time": 1000, "node": "n001", "effect": "reset_gpu", "symptom": "degraded"}]})",
                                             jobs));
  const FaultLog& log = log_of(o);
  ASSERT_EQ(log.faults.size(), 1u);
  EXPECT_EQ(log.faults[0].detected_by, DetectedBy::kActiveCheck);
  EXPECT_EQ(log.faults[0].detected, from_seconds(4500));
  EXPECT_EQ(log.faults[0].returned, from_seconds(5303));
  EXPECT_TRUE(log.interruptions.empty());
  EXPECT_EQ(o.state->job(0).end, from_seconds(5003));
  EXPECT_EQ(o.state->job(0).state, JobState::kCompleted);
  std::vector<std::pair<std::int64_t, std::string>> n001;
  for (const NodeEvent& e : o.recorder->node_events()) {
    if (e.node == 0) n001.emplace_back(to_seconds(e.time), std::string(node_state_name(e.state)));
  }
  const std::vector<std::pair<std::int64_t, std::string>> expected = {
      {3, "MIXED"}, {4500, "DRAINING"}, {5003, "DRAINED"}, {5303, "IDLE"}};
  EXPECT_EQ(n001, expected);
  EXPECT_DOUBLE_EQ(log.node_out_s, 803);  // 4,500 to 5,303
}

TEST(NodeLifecycle, RequeueRulesAndUndetectedBlackHoleNodes) {
  // No health checks: an Xid 95 (reset_gpu, gpu_error) at 100 on n001 is seen by nobody. Job 1 crashes at once;
  // the wrapper does not restart (restart_failed_jobs false): FAILED for good. Job 3 (submitted at 200) lands on
  // the silent bad node n001 and crashes at its start (a black hole); people find the node at 100 + 3,600.
  const std::string jobs =
      R"([{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
          {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
          {"id": 3, "submit": 200, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 50, "time_limit": 600}])";
  const RunOutcome o = run(two_node_scenario(R"({"restart_failed_jobs": false,
      "repair": {"undetected_found_s": 3600},
      "inject": [{"time": 100, "node": "n001", "xid": 95}]})",
                                             jobs));
  const FaultLog& log = log_of(o);
  ASSERT_EQ(log.faults.size(), 1u);
  EXPECT_TRUE(log.faults[0].found_by_people);
  EXPECT_EQ(log.faults[0].detected, from_seconds(3700));
  EXPECT_EQ(log.faults[0].returned, from_seconds(4000));  // + 300 s GPU reset
  ASSERT_EQ(log.interruptions.size(), 2u);
  EXPECT_EQ(o.state->job(0).state, JobState::kFailed);
  EXPECT_EQ(o.state->job(0).end, from_seconds(100));
  EXPECT_EQ(o.state->job(2).state, JobState::kFailed);
  EXPECT_EQ(o.state->job(2).start, o.state->job(2).end);
  EXPECT_FALSE(log.interruptions[1].requeued);
}

TEST(NodeLifecycle, NodeFailWithoutRequeueEndsTheJob) {
  // --no-requeue: Slurm kills the job of a DOWN node (NODE_FAIL) instead of requeueing it.
  const std::string jobs =
      R"([{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600, "requeue": false}])";
  const RunOutcome o = run(two_node_scenario(
      R"({"inject": [{"time": 2000, "node": "n001", "effect": "repair_node", "symptom": "host_down"}]})", jobs));
  EXPECT_EQ(o.state->job(0).state, JobState::kNodeFail);
  EXPECT_EQ(o.state->job(0).end, from_seconds(2404));
  ASSERT_EQ(log_of(o).interruptions.size(), 1u);
  EXPECT_FALSE(log_of(o).interruptions[0].requeued);
}

TEST(NodeLifecycle, ScenarioErrorsNameThePointer) {
  const auto message = [](const std::string& faults) {
    try {
      two_node_scenario(faults);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"profile": "llama4"})").find("/faults/profile: unknown fault profile 'llama4'"),
            std::string::npos);
  EXPECT_NE(message(R"({"inject": [{"time": 1, "node": "n009", "xid": 79}]})").find("/faults/inject/0/node"),
            std::string::npos);
  EXPECT_NE(message(R"({"inject": [{"time": 1, "node": "n001", "xid": 7}]})").find("/faults/inject/0/xid"),
            std::string::npos);
  EXPECT_NE(message(R"({"HealthCheckProgram": ["dcgm_diag_3"], "HealthCheckInterval": 60, "profile": "llama3"})")
                .find("/faults"),
            std::string::npos);
  EXPECT_NE(message(R"({"profile": "llama3", "checkpoint": [{"interval": "weekly"}]})")
                .find("/faults/checkpoint/0/interval"),
            std::string::npos);
  EXPECT_NE(message(R"({"HealthCheckInterval": 120})").find("expected a fault profile"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
