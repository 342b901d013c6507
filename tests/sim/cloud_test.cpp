// The autoscaler and the cost model in whole runs, worked by hand: scale-up from pending demand with the cold
// start, removal after the idle window, node-hour prices by purchase model, per-user attribution, and a
// block_and_kill quota.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/errors.hpp"
#include "sim/runner.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

// Four 8-GPU nodes: n001 is static and reserved ($2 per GPU-hour = $16/h), n002-n004 are the autoscaler's pool
// (on demand, $4 per GPU-hour = $32/h), POWERED_DOWN at the start. Polls every 20 s from 0; cold start 444 s
// (90 + 75 + 240 + 10 + 20 + 9). Job 1 (alice, 2 nodes x 8 GPUs, 3,600 s) at 0; job 2 (bob, 4 GPUs, 1,800 s) at
// 100; job 3 (bob, 1 GPU, 600 s) at 6,000 keeps the run going past the idle window.
Scenario cloud_scenario(const std::string& extra_cost = "") {
  const std::string text = R"({"name": "cloud", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 4, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [
        {"id": 1, "user": "alice", "account": "a", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 3600, "time_limit": 600},
        {"id": 2, "user": "bob", "account": "b", "submit": 100, "nodes": 1, "cpus": 8, "gpus_per_node": 4, "run_time": 1800, "time_limit": 600},
        {"id": 3, "user": "bob", "account": "b", "submit": 6000, "nodes": 1, "cpus": 1, "gpus_per_node": 1, "run_time": 600, "time_limit": 600}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "autoscaler": {"nodes": "n[002-004]", "poll_s": 20, "idle_window_s": 300, "scale_down_s": 30},
      "cost": {"prices": [{"nodes": "n001", "usd_per_gpu_hour": 2, "model": "reserved"},
                          {"nodes": "n[002-004]", "usd_per_gpu_hour": 4}], "sample_s": 600)" +
                           extra_cost + "}}";
  return parse_scenario(text, "cloud.json", ".");
}

double cluster_total_at(const CloudLog& log, double t) {
  for (const CostSample& c : log.costs) {
    if (c.scope == "cluster" && to_seconds_f(c.time) == t) return c.total_usd;
  }
  return -1;
}

TEST(Autoscaler, ScalesUpForPendingJobsAndDownAfterTheIdleWindow) {
  const RunOutcome o = run_scenario(cloud_scenario(), RunOptions{});
  const auto& s = o.cloud.scaling;
  // Poll at 20: job 1 needs 2 nodes, idle n001 counts as one: create n002. Job 2 starts at 120 on n001 (backfill),
  // so the poll at 120 sees 1 booting for 2 needed: create n003. Ready at 20 + 444 = 464 and 120 + 444 = 564;
  // job 1 starts at 565 (batch_sched_delay tick after the node update) and ends at 4,165. Idle from 4,165, the
  // window ends at 4,465; the next poll (4,480) removes both (POWERING_DOWN 30 s, removed at 4,510).
  ASSERT_EQ(s.size(), 8u);
  EXPECT_EQ(s[0].time, from_seconds(20));
  EXPECT_EQ(s[0].action, ScalingRecord::Action::kCreate);
  EXPECT_EQ(s[0].node, 1u);
  EXPECT_EQ(s[1].time, from_seconds(120));
  EXPECT_EQ(s[1].node, 2u);
  EXPECT_EQ(s[2].time, from_seconds(464));
  EXPECT_EQ(s[2].action, ScalingRecord::Action::kReady);
  EXPECT_EQ(s[3].time, from_seconds(564));
  EXPECT_EQ(s[4].time, from_seconds(4480));
  EXPECT_EQ(s[4].action, ScalingRecord::Action::kRemove);
  EXPECT_EQ(s[6].time, from_seconds(4510));
  EXPECT_EQ(s[6].action, ScalingRecord::Action::kRemoved);
  EXPECT_EQ(o.state->job(0).start, from_seconds(565));
  EXPECT_EQ(o.state->job(1).start, from_seconds(120));
  // Job 3 fits n001: no new node; it starts at 6,000, as it does on the same cluster without autoscaler and cost.
  EXPECT_EQ(o.state->job(2).start, from_seconds(6000));
  // n002 up 20-4,510, n003 120-4,510: 4,490 + 4,390 s.
  EXPECT_NEAR(o.cloud.pool_node_hours, (4490 + 4390) / 3600.0, 1e-9);
}

TEST(CostMeter, PricesByPurchaseModelAndSharesByUser) {
  const RunOutcome o = run_scenario(cloud_scenario(), RunOptions{});
  // At 600: n001 (reserved) 600 s x $16/h, n002 580 s and n003 480 s x $32/h = 2.667 + 5.156 + 4.267.
  EXPECT_NEAR(cluster_total_at(o.cloud, 600), (600 * 16 + 580 * 32 + 480 * 32) / 3600.0, 1e-9);
  // The run ends at job 3's end (6,603) plus the idle horizon; n001 is paid throughout, the pool until 4,510.
  const double end_s = to_seconds_f(o.world->now());
  EXPECT_NEAR(o.cloud.cost_total_usd, (end_s * 16 + (4490 + 4390) * 32) / 3600.0, 1e-9);
  // alice: 2 whole pool nodes for 3,600 s = $64; bob: half of n001 for 1,800 s ($4) + 1/8 for 600 s ($0.333).
  double alice = -1, bob = -1;
  for (const CostSample& c : o.cloud.costs) {
    if (c.scope == "user:alice") alice = c.total_usd;
    if (c.scope == "user:bob") bob = c.total_usd;
  }
  EXPECT_NEAR(alice, 64, 1e-9);
  EXPECT_NEAR(bob, 4 + 600 * 2.0 / 3600, 1e-9);
  EXPECT_NEAR(o.cloud.cost_idle_usd, o.cloud.cost_total_usd - alice - bob, 1e-9);
}

TEST(CostMeter, BlockAndKillQuotaCancelsAndRefuses) {
  // alice pays $64/h from 565. Checks every 60 s from 0. Warn at 80% of $30 = $24: spend reaches it at
  // 565 + 24/64 h = 1,915, seen at 1,920. Block when spend + 60 s of burn passes $30: at 2,160 spend is $28.36
  // (+1.07 = 29.42, below); at 2,220 $29.42 + 1.07 = 30.49: blocked, job 1 cancelled at 2,220.
  const RunOutcome o = run_scenario(
      cloud_scenario(R"(, "quotas": [{"user": "alice", "limit_usd": 30, "action": "block_and_kill"}])"), RunOptions{});
  const auto& e = o.cloud.quota_events;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].action, "warn");
  EXPECT_EQ(e[0].time, from_seconds(1920));
  EXPECT_EQ(e[1].action, "block");
  EXPECT_EQ(e[1].time, from_seconds(2220));
  EXPECT_NEAR(e[1].spend_usd, (2220 - 565) * 64 / 3600.0, 1e-9);
  EXPECT_EQ(e[2].action, "cancel");
  EXPECT_EQ(e[2].job_id, 1u);
  EXPECT_EQ(o.state->job(0).state, JobState::kCancelled);
  EXPECT_EQ(o.state->job(0).end, from_seconds(2220));
  EXPECT_EQ(o.summary.quota_cancels, 1u);
}

TEST(CostMeter, ABlockedUsersLaterSubmissionIsRefusedAndRecorded) {
  // bob is blocked with a $0.50 limit while job 2 runs; job 2 is cancelled then, so his burn is 0 afterwards. His
  // job 3, submitted at 6,000, is refused (CANCELLED, AssocGrpBillingMinutes) and the refusal is a quota event
  // with the spend frozen at the block's.
  const RunOutcome o = run_scenario(
      cloud_scenario(R"(, "quotas": [{"user": "bob", "limit_usd": 0.5, "action": "block_and_kill"}])"), RunOptions{});
  const auto& e = o.cloud.quota_events;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].action, "block");
  EXPECT_EQ(e[2].action, "cancel");
  EXPECT_EQ(e[2].job_id, 2u);
  EXPECT_EQ(e[3].action, "refuse");
  EXPECT_EQ(e[3].job_id, 3u);
  EXPECT_EQ(e[3].time, from_seconds(6000));
  EXPECT_DOUBLE_EQ(e[3].spend_usd, e[1].spend_usd);
  EXPECT_DOUBLE_EQ(e[3].projected_usd, e[3].spend_usd);
  EXPECT_EQ(o.state->job(2).state, JobState::kCancelled);
  EXPECT_EQ(o.state->job(2).reason, PendingReason::kAssocGrpBillingMinutes);
}

TEST(CostMeter, SpotReclaimsAreJobInterruptions) {
  // Two spot nodes reclaimed about every 6 hours each (120 s notice) under one 2-node job of 20,000 s: every reclaim
  // of a node the job runs on ends its run NODE_FAIL and requeues it, and each such run is a job interruption with
  // cause spot_reclaim and its whole run lost (no checkpoints).
  const std::string text = R"({"name": "spot", "seed": 3,
      "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 20000, "time_limit": 600}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "cost": {"prices": [{"usd_per_gpu_hour": 1, "model": "spot"}], "spot_interruptions_per_node_day": 4}})";
  const RunOutcome o = run_scenario(parse_scenario(text, "spot.json", "."), RunOptions{});
  const auto& runs = o.cloud.interruptions;
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.size(), o.state->job(0).restarts);
  EXPECT_EQ(o.state->job(0).state, JobState::kCompleted);
  double lost_gpu_h = 0;
  for (const InterruptionRecord& r : runs) {
    EXPECT_EQ(r.cause, InterruptionCause::kSpotReclaim);
    EXPECT_EQ(r.state, JobState::kNodeFail);
    EXPECT_TRUE(r.requeued);
    EXPECT_DOUBLE_EQ(r.lost_s, r.run_s);
    EXPECT_DOUBLE_EQ(r.lost_gpu_s, 16 * r.run_s);
    lost_gpu_h += r.lost_gpu_s / 3600;
  }
  EXPECT_EQ(o.summary.cloud_job_interruptions, runs.size());
  EXPECT_DOUBLE_EQ(o.summary.gpu_hours_lost_cloud, lost_gpu_h);
  EXPECT_GE(o.summary.spot_interruptions, runs.size());  // a reclaim of an idle node interrupts nothing
}

TEST(ClusterOperations, AddRemoveImageVolumeAndMaintenanceByHand) {
  // Four 8-GPU nodes. Job 1 (8 GPUs, 5,000 s) starts at 3 on n001; job 2 (8 GPUs, 1,000 s) at 11 on n002.
  // 500: remove n002: it drains (job 2 keeps running) and is deleted when job 2 ends at 1,011.
  // 1,000: add n004 (absent until then) with a 300 s cold start: ready at 1,300.
  // 1,500: a new image: no restart, nothing moves.
  // 2,000: attach a volume: every node in service restarts (600 s): job 1 ends NODE_FAIL and is requeued; n001,
  //        n003 and n004 are back at 2,600, where job 1 starts again (on n001) and ends at 7,600.
  // 4,000: maintenance of n003 for 30 min: DOWN, no job on it, back at 5,800.
  const std::string text = R"({"name": "ops", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 4, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
                            {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 1000, "time_limit": 600}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "operations": [{"time": 500, "action": "remove_nodes", "nodes": "n002"},
                     {"time": 1000, "action": "add_nodes", "nodes": "n004", "cold_start_s": 300},
                     {"time": 1500, "action": "update_image", "image": "pytorch-25.01.sqsh"},
                     {"time": 2000, "action": "attach_volume", "volume": "scratch", "restart_s": 600},
                     {"time": 4000, "action": "maintenance", "nodes": "n003", "duration": "30:00"}]})";
  const RunOutcome o = run_scenario(parse_scenario(text, "ops.json", "."), RunOptions{});
  std::vector<std::string> steps;
  for (const OperationRecord& r : o.cloud.operations) {
    steps.push_back(std::to_string(to_seconds(r.time)) + " " + r.action + " " + r.step + " " +
                    (r.node == UINT32_MAX ? "-" : o.state->config().nodes[r.node].name) + " " +
                    std::to_string(r.jobs_killed));
  }
  const std::vector<std::string> expected = {"500 remove_nodes start - 0",
                                             "1000 add_nodes start - 0",
                                             "1011 remove_nodes node_removed n002 0",
                                             "1300 add_nodes node_ready n004 0",
                                             "1500 update_image start - 0",
                                             "2000 attach_volume start - 1",
                                             "2600 attach_volume node_restarted n001 0",
                                             "2600 attach_volume node_restarted n003 0",
                                             "2600 attach_volume node_restarted n004 0",
                                             "4000 maintenance start - 0",
                                             "5800 maintenance node_back n003 0"};
  EXPECT_EQ(steps, expected);
  EXPECT_EQ(o.state->job(0).start, from_seconds(2600));
  EXPECT_EQ(o.state->job(0).end, from_seconds(7600));
  EXPECT_EQ(o.state->job(0).restarts, 1u);
  ASSERT_EQ(o.cloud.interruptions.size(), 1u);  // the attach_volume restart at 2,000 ended job 1's run
  EXPECT_EQ(o.cloud.interruptions[0].cause, InterruptionCause::kOperation);
  EXPECT_EQ(o.cloud.interruptions[0].time, from_seconds(2000));
  EXPECT_TRUE(o.cloud.interruptions[0].requeued);
  EXPECT_EQ(o.state->job(1).end, from_seconds(1011));
  EXPECT_EQ(o.state->job(1).state, JobState::kCompleted);
}

// One 8-GPU node. Job 1 (8 GPUs, 1,000 s) at 0 starts at 3 (batch_sched_delay) and ends at 1,003; jobs 2 and 3
// (8 GPUs, 100 s) are submitted at 10 and 20 and wait. `ops` is the /operations array.
RunOutcome one_node_queue(const std::string& ops, const std::string& policy = "slurm") {
  const std::string text = R"({"name": "jobops", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 1000, "time_limit": 600},
                            {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100, "time_limit": 600},
                            {"id": 3, "submit": 20, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100, "time_limit": 600}]},
      "scheduler": {"policy": ")" +
                           policy + R"("}, "metrics": {"enabled": false}, "operations": )" + ops + "}";
  return run_scenario(parse_scenario(text, "jobops.json", "."), RunOptions{});
}

std::vector<std::string> operation_steps(const RunOutcome& o) {
  std::vector<std::string> steps;
  for (const OperationRecord& r : o.cloud.operations)
    steps.push_back(std::to_string(to_seconds(r.time)) + " " + r.action + " " + r.step + " " + r.name);
  return steps;
}

TEST(ClusterOperations, AHeldJobWaitsUntilReleasedAndGoesAfterTheJobsBeforeIt) {
  // Without operations job 2 runs at 1,003 and job 3 at 1,103. Held at 15 (JobHeldAdmin, priority 0) and released
  // at 500, job 2 gets a new priority/basic priority below job 3's (submitted before the release): job 3 at 1,003,
  // job 2 at 1,103. A hold of job 3 at 1,150 finds it ended ("not_pending"); job 9 is not in the workload.
  const RunOutcome base = one_node_queue("[]");
  EXPECT_EQ(base.state->job(1).start, from_seconds(1003));
  EXPECT_EQ(base.state->job(2).start, from_seconds(1103));
  const RunOutcome o = one_node_queue(R"([{"time": 15, "action": "hold", "jobs": [2]},
                                          {"time": 500, "action": "release", "jobs": [2]},
                                          {"time": 1150, "action": "hold", "jobs": [3, 9]}])");
  EXPECT_EQ(o.state->job(2).start, from_seconds(1003));
  EXPECT_EQ(o.state->job(1).start, from_seconds(1103));
  EXPECT_EQ(operation_steps(o),
            (std::vector<std::string>{"15 hold done job 2", "500 release done job 2", "1150 hold not_pending job 3",
                                      "1150 hold not_pending job 9"}));
  // The hold is in job 2's pending reasons at 15.
  bool held = false;
  for (const auto& r : o.recorder->reason_events())
    held = held || (r.job == 1 && r.reason == PendingReason::kJobHeldAdmin && r.time == from_seconds(15));
  EXPECT_TRUE(held);
}

TEST(ClusterOperations, AFixedPriorityPutsAJobFirst) {
  // priority/basic gives jobs 4294901759, 4294901758, ... by submission (the first from 0xffff0000 down);
  // set_priority gives job 3 4294967000, above job 2's, at 50: job 3 runs at 1,003 and job 2 at 1,103.
  const RunOutcome o =
      one_node_queue(R"([{"time": 50, "action": "set_priority", "jobs": [3], "priority": 4294967000}])");
  EXPECT_EQ(o.state->job(2).start, from_seconds(1003));
  EXPECT_EQ(o.state->job(1).start, from_seconds(1103));
  EXPECT_EQ(o.state->job(2).priority, 4294967000u);
}

TEST(ClusterOperations, ClassicPoliciesHonourHoldsAndFixedPriorities) {
  // fcfs starts jobs at the instant they can start: job 1 at 0-1,000, then job 2 at 1,000 and job 3 at 1,100. Held
  // for good at 15, job 2 never runs; given a fixed priority at 50, job 3 goes first.
  const RunOutcome held = one_node_queue(R"([{"time": 15, "action": "hold", "jobs": [2]}])", "fcfs");
  EXPECT_EQ(held.state->job(1).state, JobState::kPending);
  EXPECT_EQ(held.state->job(2).start, from_seconds(1000));
  const RunOutcome prio =
      one_node_queue(R"([{"time": 50, "action": "set_priority", "jobs": [3], "priority": 7}])", "fcfs");
  EXPECT_EQ(prio.state->job(2).start, from_seconds(1000));
  EXPECT_EQ(prio.state->job(1).start, from_seconds(1100));
}

TEST(ClusterOperations, JobActionsNeedJobsAndAPriority) {
  const auto message = [](const std::string& ops) { return testing::scenario_error([&] { one_node_queue(ops); }); };
  EXPECT_NE(message(R"([{"time": 1, "action": "hold"}])").find("/operations/0: \"hold\" needs \"jobs\""),
            std::string::npos);
  EXPECT_NE(message(R"([{"time": 1, "action": "set_priority", "jobs": [2]}])").find("needs \"priority\""),
            std::string::npos);
  EXPECT_NE(message(R"([{"time": 1, "action": "set_priority", "jobs": [2], "priority": 0}])")
                .find("/operations/0/priority: expected a priority above 0"),
            std::string::npos);
  EXPECT_NE(message(R"([{"time": 1, "action": "release", "jobs": []}])").find("/operations/0/jobs: expected at least"),
            std::string::npos);
  EXPECT_NE(message(R"([{"time": 1, "action": "maintenance", "nodes": "n001", "duration": 60, "jobs": [1]}])")
                .find("/operations/0/jobs: \"maintenance\" acts on nodes"),
            std::string::npos);
}

TEST(ClusterOperations, RemovingAnAutoscaledNodeRetiresIt) {
  // n001 static, n002-n003 the autoscaler's pool, both kept up (min_nodes 2); job 1 (at 0, on n001) starts the
  // clock. remove_nodes takes n003 away at 100 (idle: removed at once). It stops counting as up, and job 2 (2 nodes
  // at 1,000, 100 s) runs on n001 and n002 without n003 being created again: pool node-hours are n002's whole run
  // plus n003's first 100 s.
  const std::string text = R"({"name": "retire", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 3, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 50, "time_limit": 10},
                            {"id": 2, "submit": 1000, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 100, "time_limit": 10}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "autoscaler": {"nodes": "n[002-003]", "min_nodes": 2, "poll_s": 20, "idle_window_s": 300},
      "operations": [{"time": 100, "action": "remove_nodes", "nodes": "n003"}]})";
  const RunOutcome o = run_scenario(parse_scenario(text, "retire.json", "."), RunOptions{});
  for (const ScalingRecord& r : o.cloud.scaling) EXPECT_NE(r.action, ScalingRecord::Action::kCreate);
  EXPECT_EQ(o.state->job(1).state, JobState::kCompleted);
  EXPECT_EQ(o.state->allocation(1).back().node, 1u);
  const double horizon_s = to_seconds_f(o.world->now());
  EXPECT_NEAR(o.cloud.pool_node_hours * 3600, horizon_s + 100, 1e-6);
}

TEST(ClusterOperations, RestartAllWorkersAtOnceOrRolling) {
  // Job 1 (1 node, 5,000 s) runs on n001 from 3. "Restart all workers" at 1,000 with the default 60 s pod restart:
  // at once, job 1's run ends NODE_FAIL (requeued, eligible at 1,121) and both nodes are back at 1,060; nothing
  // wakes the scheduler at a begin time, so job 1 runs again from the next periodic pass (sched_interval 60 s),
  // 1,140; rolling, idle n002 restarts at once (back at 1,060) and n001 drains until job 1 ends
  // at 5,003, then restarts (back at 5,063), killing nothing.
  const auto run_with = [](bool rolling) {
    const std::string text = R"({"name": "restart", "seed": 1,
        "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                    "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
        "workload": {"jobs": [{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600}]},
        "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
        "operations": [{"time": 1000, "action": "restart_workers", "rolling": )" +
                             std::string(rolling ? "true" : "false") + "}]}";
    return run_scenario(parse_scenario(text, "restart.json", "."), RunOptions{});
  };
  const auto steps_of = [](const RunOutcome& o) {
    std::vector<std::string> steps;
    for (const OperationRecord& r : o.cloud.operations) {
      steps.push_back(std::to_string(to_seconds(r.time)) + " " + r.action + " " + r.step + " " +
                      (r.node == UINT32_MAX ? "-" : o.state->config().nodes[r.node].name) + " " +
                      std::to_string(r.jobs_killed));
    }
    std::sort(steps.begin(), steps.end());
    return steps;
  };
  const RunOutcome now = run_with(false);
  EXPECT_EQ(steps_of(now),
            (std::vector<std::string>{"1000 restart_workers start - 1", "1060 restart_workers node_restarted n001 0",
                                      "1060 restart_workers node_restarted n002 0"}));
  EXPECT_EQ(now.state->job(0).restarts, 1u);
  EXPECT_EQ(now.state->job(0).start, from_seconds(1140));
  ASSERT_EQ(now.cloud.interruptions.size(), 1u);
  EXPECT_EQ(now.cloud.interruptions[0].cause, InterruptionCause::kOperation);
  const RunOutcome rolling = run_with(true);
  EXPECT_EQ(steps_of(rolling),
            (std::vector<std::string>{"1000 restart_workers start - 0", "1060 restart_workers node_restarted n002 0",
                                      "5063 restart_workers node_restarted n001 0"}));
  EXPECT_EQ(rolling.state->job(0).restarts, 0u);
  EXPECT_EQ(rolling.state->job(0).end, from_seconds(5003));
  EXPECT_TRUE(rolling.cloud.interruptions.empty());
}

TEST(PowerSave, SuspendsIdleNodesAndResumesThemForPendingJobs) {
  // Slurm power saving on n002-n004 (n001 is in SuspendExcNodes); the nodes start powered up. Decisions every 10 s.
  // n003 and n004 are idle from 0: suspended at the decision at 600 (SuspendTime 600), POWERED_DOWN at 630
  // (SuspendTimeout 30). Job 1 (2 nodes) runs 3-3,603 on n001-n002; n002 is suspended at the first decision 600 s
  // after 3,603, 4,210, down at 4,240. Job 2 (2 nodes) at 7,200 is allocated at once the idle n001 and, used last,
  // the lowest POWERED_DOWN node n002, which resumes then; job 2 is CONFIGURING until n002 is up 444 s later (7,644,
  // within ResumeTimeout 900), when its start is reset to 7,644.
  const std::string text = R"({"name": "power-save", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 4, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 3600, "time_limit": 600},
                            {"id": 2, "submit": 7200, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 600, "time_limit": 600}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "power_save": {"SuspendTime": 600, "SuspendTimeout": 30, "ResumeTimeout": 900, "SuspendExcNodes": "n001"}})";
  const RunOutcome o = run_scenario(parse_scenario(text, "power_save.json", "."), RunOptions{});
  std::vector<std::string> steps;
  for (const ScalingRecord& r : o.cloud.scaling) {
    steps.push_back(std::to_string(to_seconds(r.time)) + " " + std::string(to_string(r.action)) + " " +
                    o.state->config().nodes[r.node].name);
  }
  const std::vector<std::string> expected = {"600 remove n003",  "600 remove n004",  "630 removed n003",
                                             "630 removed n004", "4210 remove n002", "4240 removed n002",
                                             "7200 create n002", "7644 ready n002"};
  std::vector<std::string> sorted = steps;  // same-time steps in either node order
  std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
    return std::stoll(a) != std::stoll(b) ? std::stoll(a) < std::stoll(b) : a < b;
  });
  EXPECT_EQ(sorted, expected);
  EXPECT_EQ(o.state->job(1).start, from_seconds(7644));
  EXPECT_EQ(o.state->job(1).end, from_seconds(7644 + 600));
  EXPECT_EQ(o.state->allocation(1).front().node, 0u);
  EXPECT_EQ(o.state->allocation(1).back().node, 1u);
}

TEST(PowerSave, AJobGivenPoweredDownNodesHoldsThemWhileTheyResume) {
  // Three CLOUD nodes, all POWERED_DOWN. Job 1 (3 nodes, 1,000 s of work, 10-minute limit), submitted at 0, is
  // allocated every node at the first scheduling pass (3, batch_sched_delay) and waits CONFIGURING while they
  // resume (444 s); job 2 (1 node, 100 s), submitted at 100, finds nothing free (under demand polls it would have
  // taken a node as it came up) and starts when job 1 ends. Job 1's limit counts from its reset start, 447: it is
  // killed for it (TIMEOUT) at 447 + 600 or at the next 30-second time-limit check, and job 2 starts then on n001.
  const std::string text = R"({"name": "power-save-configuring", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 3, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 3, "cpus": 24, "gpus_per_node": 8, "run_time": 1000, "time_limit": 10},
                            {"id": 2, "submit": 100, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100, "time_limit": 10}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "power_save": {"SuspendTime": 600, "ResumeTimeout": 900, "CLOUD": true}})";
  const RunOutcome o = run_scenario(parse_scenario(text, "power_save.json", "."), RunOptions{});
  const JobRuntime& big = o.state->job(0);
  EXPECT_EQ(big.start, from_seconds(447));
  EXPECT_EQ(big.state, JobState::kTimeout);
  EXPECT_GE(big.end, from_seconds(447 + 600));
  EXPECT_LT(big.end, from_seconds(447 + 630));
  const JobRuntime& small = o.state->job(1);
  EXPECT_GE(small.start, big.end);
  EXPECT_EQ(small.state, JobState::kCompleted);
  EXPECT_EQ(o.state->allocation(1).front().node, 0u);
  std::size_t creates = 0;
  for (const ScalingRecord& r : o.cloud.scaling) {
    if (r.action == ScalingRecord::Action::kCreate) {
      EXPECT_EQ(r.time, from_seconds(3));
      EXPECT_EQ(r.demand, 3u);
      ++creates;
    }
  }
  EXPECT_EQ(creates, 3u);
}

TEST(PowerSave, AFailedResumeRequeuesTheJobWaitingForIt) {
  // Two CLOUD nodes; half the resumes fail (the node never registers) and are given up at ResumeTimeout (900 s).
  // Every failed resume a job waited for ends its wait NODE_FAIL, requeued (requeue_on_resume_failure); the job
  // (1 node, 600 s) runs once a resume succeeds, its start reset to when the node came up.
  const std::string text = R"({"name": "resume-failures", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 600, "time_limit": 30}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "power_save": {"SuspendTime": 600, "ResumeTimeout": 900, "CLOUD": true, "resume_failure_probability": 0.5}})";
  const RunOutcome o = run_scenario(parse_scenario(text, "power_save.json", "."), RunOptions{});
  std::size_t failed = 0, ready = 0;
  SimTime last_ready = 0;
  for (const ScalingRecord& r : o.cloud.scaling) {
    failed += r.action == ScalingRecord::Action::kBootFailed ? 1 : 0;
    if (r.action == ScalingRecord::Action::kReady) {
      ++ready;
      last_ready = r.time;
    }
  }
  ASSERT_EQ(failed, 1u);  // seed 1: the first draw fails (0.284 < 0.5), the second succeeds
  EXPECT_EQ(ready, 1u);
  EXPECT_EQ(o.cloud.interruptions.size(), failed);
  for (const InterruptionRecord& r : o.cloud.interruptions) {
    EXPECT_EQ(r.cause, InterruptionCause::kResumeFailure);
    EXPECT_TRUE(r.requeued);
    EXPECT_DOUBLE_EQ(r.run_s, 900);  // from the allocation to ResumeTimeout
  }
  EXPECT_EQ(o.state->job(0).state, JobState::kCompleted);
  EXPECT_EQ(o.state->job(0).restarts, failed);
  EXPECT_EQ(o.state->job(0).start, last_ready);
  EXPECT_EQ(o.state->job(0).end, last_ready + from_seconds(600));
}

// n001 up (SuspendExcNodes) and n002 a CLOUD node, POWERED_DOWN; job 1 (2 nodes, 600 s) is given both at 3 and
// waits CONFIGURING for n002 (up at 447). `extra` adds top-level scenario keys.
RunOutcome run_configuring_pair(const std::string& extra) {
  const std::string text = R"({"name": "configuring-pair", "seed": 1,
      "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                  "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 600, "time_limit": 30}]},
      "scheduler": {"policy": "slurm"}, "metrics": {"enabled": false},
      "power_save": {"SuspendTime": 600, "ResumeTimeout": 900, "CLOUD": true, "SuspendExcNodes": "n001"}, )" +
                           extra + "}";
  return run_scenario(parse_scenario(text, "power_save.json", "."), RunOptions{});
}

TEST(PowerSave, AJobKeepsItsNodesWhenOneIsDrainedWhileItWaits) {
  // n001 is up (SuspendExcNodes), n002 POWERED_DOWN. Job 1 (2 nodes) gets both at 3 and waits for n002 (up at 447).
  // At 100 an operation drains n001 for removal: Slurm's DRAIN leaves allocated jobs alone, so job 1 still begins at
  // 447 and runs its 600 s; n001 is removed when it ends.
  const RunOutcome o =
      run_configuring_pair(R"("operations": [{"time": 100, "action": "remove_nodes", "nodes": "n001"}])");
  EXPECT_EQ(o.state->job(0).start, from_seconds(447));
  EXPECT_EQ(o.state->job(0).end, from_seconds(447 + 600));
  EXPECT_EQ(o.state->job(0).state, JobState::kCompleted);
  ASSERT_EQ(o.cloud.operations.size(), 2u);
  EXPECT_EQ(o.cloud.operations[1].step, "node_removed");
  EXPECT_EQ(o.cloud.operations[1].time, from_seconds(447 + 600));
}

TEST(PowerSave, AJobBeginningOnANodeDrainedForAFaultMeetsTheFault) {
  // As above without the operation: an Xid 79 on n001 at 100 is found by the 2-minute health check and n001 is
  // DRAINING (job 1 holds it) while job 1 waits for n002. When n002 is up at 447 job 1 begins and meets the fault at
  // once: it crashes (FAILED; not a black hole, the fault was noticed) and its wrapper requeues it. n001 reboots
  // once job 1 has left it.
  const RunOutcome o = run_configuring_pair(
      R"("faults": {"HealthCheckInterval": 120, "inject": [{"time": 100, "node": "n001", "xid": 79, "gpu": 0}]})");
  const FaultLog& log = *fault_log(o);
  ASSERT_EQ(log.faults.size(), 1u);
  EXPECT_LT(log.faults[0].detected, from_seconds(447));
  ASSERT_EQ(log.interruptions.size(), 1u);
  EXPECT_EQ(log.interruptions[0].time, from_seconds(447));
  EXPECT_EQ(log.interruptions[0].state, JobState::kFailed);
  EXPECT_FALSE(log.interruptions[0].black_hole);
  EXPECT_TRUE(log.interruptions[0].requeued);
  EXPECT_EQ(log.faults[0].returned, from_seconds(447 + 600));
  EXPECT_EQ(o.state->job(0).state, JobState::kCompleted);
  EXPECT_GE(o.state->job(0).start, from_seconds(447 + 600));
}

TEST(PowerSave, AResumeTimeoutShorterThanTheColdStartIsRefused) {
  const std::string text = R"({"name": "p", "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 8, "gpus": 8}],
      "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [{"id": 1, "run_time": 10}]}, "scheduler": {"policy": "slurm"},
      "power_save": {"SuspendTime": 600, "ResumeTimeout": 60}})";
  try {
    parse_scenario(text, "p.json", ".");
    FAIL() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/power_save: ResumeTimeout (60 s) is shorter than the cold start (444 s)"),
              std::string::npos)
        << e.what();
  }
}

TEST(CostMeter, ScenarioErrorsNameThePointer) {
  const auto message = [](const std::string& extra) { return testing::scenario_error([&] { cloud_scenario(extra); }); };
  EXPECT_NE(
      message(R"(, "quotas": [{"user": "alice", "limit_usd": 30, "action": "kill"}])").find("/cost/quotas/0/action"),
      std::string::npos);
  EXPECT_NE(message(R"(, "quotas": [{"user": "alice"}])").find("/cost/quotas/0/limit_usd"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
