// ScalingController alone, driven by a scripted world (tests/support/fake_world.hpp): job and node observations
// and its timers in, the exact power actions, timers, scaling records and pool node-seconds out. The world's side
// of every action (a boot ending, a power-down ending) is delivered by hand, as SimWorld delivers it: the condition
// changes first, then the observation.
#include "control/scaling_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/support/fake_world.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using testing::FakeWorld;
using ::testing::IsEmpty;
using testing::make_job;

using Timer = std::tuple<ControllerId, TimerId, double>;

// The autoscaler of pool `nodes`: max_nodes the whole pool, a poll every 20 s, a 300 s idle window.
AutoscalerConfig pool_of(std::vector<std::uint32_t> nodes) {
  AutoscalerConfig c;
  c.enabled = true;
  c.max_nodes = static_cast<std::uint32_t>(nodes.size());
  c.nodes = std::move(nodes);
  c.poll_s = 20;
  c.idle_window_s = 300;
  return c;
}

// A 1-CPU job of `nodes` nodes of `gpus` GPUs each.
JobSpec job(std::uint64_t id, std::uint32_t nodes, std::uint32_t gpus = 8) {
  return make_job(id, 0, nodes, nodes, gpus, 3600, 100);
}

// Scaling records as text: "20 n003 create 2" (time s, node, action, demand).
std::vector<std::string> records(const ScalingController& s) {
  std::vector<std::string> out;
  for (const ScalingRecord& r : s.records()) {
    out.push_back(std::to_string(to_seconds(r.time)) + " " + FakeWorld::node_name(r.node) + " " +
                  std::string(to_string(r.action)) + " " + std::to_string(r.demand));
  }
  return out;
}

// Job `j` is submitted and waits for `reason` (the scheduler's annotation).
void pend(FakeWorld& w, ScalingController& s, JobIndex j, PendingReason reason = PendingReason::kResources) {
  w.submit(j);
  w.annotate_job(j, 0, reason);
  s.on_job_submitted(j);
}

// The poll timer fires at `t` seconds.
void poll_at(FakeWorld& w, ScalingController& s, double t) {
  w.set_now_s(t);
  s.on_timer(0);
}

// A power-up of node `n` ends: in service (`ok`), or POWERED_DOWN again.
void boot(FakeWorld& w, ScalingController& s, NodeIndex n, bool ok) {
  const NodeCondition after = ok ? NodeCondition::kNone : NodeCondition::kPoweredDown;
  w.set_condition(n, after);
  s.on_node_changed(n, NodeCondition::kPoweringUp, after);
  s.on_node_booted(n, ok);
}

// A power-down of node `n` ends: it is POWERED_DOWN.
void powered_down(FakeWorld& w, ScalingController& s, NodeIndex n) {
  w.set_condition(n, NodeCondition::kPoweredDown);
  s.on_node_changed(n, NodeCondition::kPoweringDown, NodeCondition::kPoweredDown);
  s.on_node_powered_down(n);
}

// Job `j` starts on `nodes` (all their GPUs) / ends and releases them.
void start(FakeWorld& w, ScalingController& s, JobIndex j, std::vector<NodeIndex> nodes, std::uint32_t gpus = 8) {
  w.run(j, std::move(nodes), gpus);
  s.on_job_started(j);
}
void release(FakeWorld& w, ScalingController& s, JobIndex j) {
  w.finish(j);
  s.on_job_released(j);
}

// ---- Autoscaler: scale up ----

TEST(ScalingController, OnStartArmsThePollAtNowAndTreatsPoweredDownPoolNodesAsOff) {
  // n001 static; pool n002-n004 (max 3) with n003, n004 POWERED_DOWN as the world starts them. At 100 on_start arms
  // poll timer 0 at 100; only n002 exists, so 60 s later the pool has 60 node-seconds. Job 1 (3 nodes) pending:
  // demand 3, supply 2 (idle static n001 and idle pool n002), missing 1 -> n003 (the lowest off pool node), its
  // record carrying the demand 3; the poll re-arms itself at 100 + 20.
  FakeWorld w(4, 8, {job(1, 3)});
  const AutoscalerConfig cfg = pool_of({1, 2, 3});
  w.set_condition(2, NodeCondition::kPoweredDown);
  w.set_condition(3, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  w.set_now_s(100);
  s.on_start();
  EXPECT_THAT(w.take_timers(), ElementsAre(Timer{ControllerId::kScaling, 0, 100.0}));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(160)), 60.0);

  pend(w, s, 0);
  poll_at(w, s, 100);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003"));
  EXPECT_THAT(w.take_timers(), ElementsAre(Timer{ControllerId::kScaling, 0, 120.0}));
  EXPECT_THAT(records(s), ElementsAre("100 n003 create 3"));
}

TEST(ScalingController, PollPowersUpTheMissingNodesLowestPoolIndexFirst) {
  // Pool n001-n004, all POWERED_DOWN. Job 1 (2 nodes, Resources) and job 2 (1 node, Priority): demand 3, supply 0,
  // budget min(100, 4 - 0) = 4 -> n001, n002, n003, each record with demand 3. At 20 the three booting nodes are the
  // supply for the same demand: nothing more.
  FakeWorld w(4, 8, {job(1, 2), job(2, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  for (NodeIndex n = 0; n < 4; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0, PendingReason::kResources);
  pend(w, s, 1, PendingReason::kPriority);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002", "power up n003"));
  poll_at(w, s, 20);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 3", "0 n002 create 3", "0 n003 create 3"));
}

TEST(ScalingController, ScaleUpPerPollBoundsEachPoll) {
  // scale_up_per_poll 2; job 1 needs 3 nodes of the all-off pool n001-n004. Poll at 0: budget 2 -> n001, n002.
  // Poll at 20: supply 2 (booting), missing 1 -> n003. Poll at 40: supply 3 = demand: nothing.
  FakeWorld w(4, 8, {job(1, 3)});
  AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  cfg.scale_up_per_poll = 2;
  for (NodeIndex n = 0; n < 4; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002"));
  poll_at(w, s, 20);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003"));
  poll_at(w, s, 40);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 3", "0 n002 create 3", "20 n003 create 3"));
}

TEST(ScalingController, MaxNodesBoundsThePoolNodesUpOrBooting) {
  // max_nodes 2 of the all-off pool n001-n004 (shape capacity min(4, 2) = 2). Jobs of 2 and 1 nodes: demand 3 (each
  // fits the capacity), budget min(100, 2 - 0) = 2 -> n001, n002. At 20 two exist: budget 0, nothing though 1 is
  // still missing.
  FakeWorld w(4, 8, {job(1, 2), job(2, 1)});
  AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  cfg.max_nodes = 2;
  for (NodeIndex n = 0; n < 4; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  pend(w, s, 1);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002"));
  poll_at(w, s, 20);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 3", "0 n002 create 3"));
}

TEST(ScalingController, IdleNodesInServiceStaticOrPoolAreSupplyBusyOrDrainedOnesAreNot) {
  // Static n001 (busy with job 2), n002 (idle), n003 (drained); pool n004 (up, idle), n005, n006 (off). Job 1 needs 4
  // nodes (capacity: 3 static + min(3, 3) pool = 6): supply n002 + n004 = 2, missing 2; budget min(100, 3 - 1) = 2
  // -> n005, n006.
  FakeWorld w(6, 8, {job(1, 4), job(2, 1)});
  const AutoscalerConfig cfg = pool_of({3, 4, 5});
  w.set_condition(4, NodeCondition::kPoweredDown);
  w.set_condition(5, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  w.run(1, {0}, 8);
  w.set_condition(2, NodeCondition::kDrain);
  pend(w, s, 0);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n005", "power up n006"));
  EXPECT_THAT(records(s), ElementsAre("0 n005 create 4", "0 n006 create 4"));
}

TEST(ScalingController, OnlyJobsPendingForNothingPriorityOrResourcesCreateNodes) {
  // Six 1-node jobs: reasons None, Priority, Resources count (demand 3); Dependency, JobHeldUser, BeginTime do not
  // (no node would start them). Pool n001-n006 all off -> n001, n002, n003, records with demand 3.
  FakeWorld w(6, 8, {job(1, 1), job(2, 1), job(3, 1), job(4, 1), job(5, 1), job(6, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2, 3, 4, 5});
  for (NodeIndex n = 0; n < 6; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0, PendingReason::kNone);
  pend(w, s, 1, PendingReason::kPriority);
  pend(w, s, 2, PendingReason::kResources);
  pend(w, s, 3, PendingReason::kDependency);
  pend(w, s, 4, PendingReason::kJobHeldUser);
  pend(w, s, 5, PendingReason::kBeginTime);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002", "power up n003"));
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 3", "0 n002 create 3", "0 n003 create 3"));
}

TEST(ScalingController, JobsNoShapeCanHoldCreateNothing) {
  // Pool n001-n002 (max 2, no static nodes: capacity 2). Job 1 needs 3 nodes (> capacity) and job 2 16 GPUs per node
  // (no shape has them): demand 0, nothing created.
  FakeWorld w(2, 8, {job(1, 3), job(2, 1, 16)});
  const AutoscalerConfig cfg = pool_of({0, 1});
  w.set_condition(0, NodeCondition::kPoweredDown);
  w.set_condition(1, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  pend(w, s, 1);
  poll_at(w, s, 0);
  poll_at(w, s, 20);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(s.records(), IsEmpty());
}

TEST(ScalingController, EachJobTakesTheSmallestShapeThatFitsItsNodes) {
  // n001-n002 are given 4 GPUs (the controller reads shapes from the configuration the state keeps), n003-n004 keep
  // 8: shapes [4 GPUs, 8 GPUs]. Job 1 (2 GPUs) and job 3 (4 GPUs) fit the 4-GPU shape: demand 2 there -> n001,
  // n002 (demand 2). Job 2 (6 GPUs) needs the 8-GPU shape: demand 1 -> n003 (demand 1).
  FakeWorld w(4, 8, {job(1, 1, 2), job(2, 1, 6), job(3, 1, 4)});
  auto& config = const_cast<ClusterConfig&>(w.state().config());
  config.nodes[0].gpus = 4;
  config.nodes[1].gpus = 4;
  const AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  for (NodeIndex n = 0; n < 4; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  pend(w, s, 1);
  pend(w, s, 2);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002", "power up n003"));
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 2", "0 n002 create 2", "0 n003 create 1"));
}

TEST(ScalingController, AJobWithoutANodeCountNeedsItsCpusOverTheShapesCpus) {
  // Job 1: no node count, 100 CPUs, 8 GPUs per node; the 64-CPU shape needs ceil(100 / 64) = 2 nodes -> n001, n002.
  FakeWorld w(3, 8, {make_job(1, 0, 0, 100, 8, 3600, 100)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2});
  for (NodeIndex n = 0; n < 3; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002"));
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 2", "0 n002 create 2"));
}

// ---- Autoscaler: boots ----

TEST(ScalingController, BootOutcomesAreRecordedAndABootedNodeCountsAsUp) {
  // Pool n001-n002 (max 1). Job 1 (1 node) pending: n001 created at 0. At 20 its boot fails (boot_failed); the poll
  // at 20 creates it again. At 40 it boots (ready). At 60 it is up and idle: supply 1 = demand 1, nothing; job 2
  // joins the queue with n001 busy running job 1: demand 1, supply 0, but one node up = max_nodes: nothing. Node
  // seconds: the failed boot 0-20 plus 20-100 up to 100.
  FakeWorld w(2, 8, {job(1, 1), job(2, 1)});
  AutoscalerConfig cfg = pool_of({0, 1});
  cfg.max_nodes = 1;
  w.set_condition(0, NodeCondition::kPoweredDown);
  w.set_condition(1, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  w.set_now_s(20);
  boot(w, s, 0, false);
  poll_at(w, s, 20);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  w.set_now_s(40);
  boot(w, s, 0, true);
  poll_at(w, s, 60);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_now_s(60);
  start(w, s, 0, {0});
  pend(w, s, 1);
  poll_at(w, s, 80);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s),
              ElementsAre("0 n001 create 1", "20 n001 boot_failed 0", "20 n001 create 1", "40 n001 ready 0"));
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(100)), 20.0 + 80.0);
}

// ---- Autoscaler: scale down ----

TEST(ScalingController, IdleNodesArePoweredDownAfterTheIdleWindowHighestPoolIndexFirst) {
  // Pool n001-n004 up and idle from 0, nothing pending. At 280 (idle 280 < 300) nothing; at 300 all four, n004
  // first, each record with demand 0.
  FakeWorld w(4, 8);
  const AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 0);
  poll_at(w, s, 280);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("power down n004", "power down n003", "power down n002", "power down n001"));
  EXPECT_THAT(records(s),
              ElementsAre("300 n004 remove 0", "300 n003 remove 0", "300 n002 remove 0", "300 n001 remove 0"));
}

TEST(ScalingController, OnlySurplusIdleNodesGoWhilePendingJobsNeedTheirShape) {
  // Pool n001-n004 up and idle from 0; job 1 (1 node) pending behind a higher priority (reason Priority). At 300:
  // demand 1, supply 4 -> n004 (supply 3), n003 (2), n002 (1); n001 stays (demand 1 >= supply 1). At 320 nothing.
  FakeWorld w(4, 8, {job(1, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0, PendingReason::kPriority);
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n004", "power down n003", "power down n002"));
  poll_at(w, s, 320);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("300 n004 remove 1", "300 n003 remove 1", "300 n002 remove 1"));
}

TEST(ScalingController, JobsLargerThanTheShapesCapacityKeepNoIdleNode) {
  // Pool n001-n002 up and idle; job 1 needs 3 nodes (capacity 2): it counts for no demand, so at 300 both go.
  FakeWorld w(2, 8, {job(1, 3)});
  const AutoscalerConfig cfg = pool_of({0, 1});
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n002", "power down n001"));
}

TEST(ScalingController, ScaleDownPerPollAndMinNodesBoundRemovals) {
  // Pool n001-n004 up and idle from 0, min_nodes 1, scale_down_per_poll 2. At 300: min(2, 4 - 1) -> n004, n003
  // (POWERED_DOWN at 310). At 320: 2 exist, min(2, 2 - 1) = 1 -> n002 (POWERED_DOWN at 330). At 340: 1 exists = min
  // nodes: nothing.
  FakeWorld w(4, 8);
  AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  cfg.min_nodes = 1;
  cfg.scale_down_per_poll = 2;
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n004", "power down n003"));
  w.set_now_s(310);
  powered_down(w, s, 3);
  powered_down(w, s, 2);
  poll_at(w, s, 320);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n002"));
  w.set_now_s(330);
  powered_down(w, s, 1);
  poll_at(w, s, 340);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("300 n004 remove 0", "300 n003 remove 0", "310 n004 removed 0",
                                      "310 n003 removed 0", "320 n002 remove 0", "330 n002 removed 0"));
}

TEST(ScalingController, MinNodesHoldsWhileRemovalsAreStillUnderWay) {
  // Pool n001-n004 up and idle from 0, min_nodes 1. At 300: min(100, 4 - 1) = 3 -> n004, n003, n002, which are
  // still POWERING_DOWN at 320 (scale_down_s 30). Only n001 is left up, and min_nodes is 1: nothing may go at 320.
  FakeWorld w(4, 8);
  AutoscalerConfig cfg = pool_of({0, 1, 2, 3});
  cfg.min_nodes = 1;
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n004", "power down n003", "power down n002"));
  poll_at(w, s, 320);
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(ScalingController, OnlyIdleNodesInServiceAreRemovedAndTheirIdleWindowRestarts) {
  // Pool n001-n003 up from 0. n001 runs job 1 from 0 to 250 (idle from 250); n003 is drained at 50 and back in
  // service at 200 (idle from 200); n002 idle from 0. At 300 only n002 has been idle 300 s. At 500 n003 (200 + 300);
  // at 540 nothing (n001 idle 290 s); at 560 n001 (250 + 310).
  FakeWorld w(3, 8, {job(1, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2});
  ScalingController s(cfg, w);
  s.on_start();
  start(w, s, 0, {0});
  w.set_now_s(50);
  w.set_condition(2, NodeCondition::kDrain);
  s.on_node_changed(2, NodeCondition::kNone, NodeCondition::kDrain);
  w.set_now_s(200);
  w.set_condition(2, NodeCondition::kNone);
  s.on_node_changed(2, NodeCondition::kDrain, NodeCondition::kNone);
  w.set_now_s(250);
  release(w, s, 0);
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n002"));
  poll_at(w, s, 500);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n003"));
  poll_at(w, s, 540);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  poll_at(w, s, 560);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n001"));
}

TEST(ScalingController, ADrainedOrBusyNodeIsNeverRemoved) {
  // Pool n001-n003 up from 0: n001 idle, n002 drained at 10, n003 runs job 1 from 10. At 300, highest index first:
  // n003 (supply 1 > demand 0, but busy) and n002 (drained) stay; n001 goes. Later polls (supply 0) remove nothing.
  FakeWorld w(3, 8, {job(1, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1, 2});
  ScalingController s(cfg, w);
  s.on_start();
  w.set_now_s(10);
  w.set_condition(1, NodeCondition::kDrain);
  s.on_node_changed(1, NodeCondition::kNone, NodeCondition::kDrain);
  start(w, s, 0, {2});
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n001"));
  for (double t = 400; t <= 1000; t += 100) poll_at(w, s, t);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(records(s), ElementsAre("300 n001 remove 0"));
}

// ---- Autoscaler: a node's whole life, reclaims, operations ----

TEST(ScalingController, PoolNodeSecondsOverCreateReadyRemoveRemoved) {
  // Pool n001 (off). Job 1 pending: created at 0, ready at 100 (300 node-seconds at 300 while up), runs job 1 from
  // 100 to 200, idle from 200: removed at the poll at 500 (demand 0), POWERED_DOWN at 530: 530 node-seconds, the
  // same at any later horizon. Job 2 at 600 creates it again: 530 + 400 at 1,000.
  FakeWorld w(1, 8, {job(1, 1), job(2, 1)});
  const AutoscalerConfig cfg = pool_of({0});
  w.set_condition(0, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  w.set_now_s(100);
  boot(w, s, 0, true);
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(300)), 300.0);
  start(w, s, 0, {0});
  w.set_now_s(200);
  release(w, s, 0);
  poll_at(w, s, 480);
  EXPECT_THAT(w.take_actions(), IsEmpty());  // idle 280 s
  poll_at(w, s, 500);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n001"));
  w.set_now_s(530);
  powered_down(w, s, 0);
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(530)), 530.0);
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(900)), 530.0);
  w.set_now_s(600);
  pend(w, s, 1);
  poll_at(w, s, 600);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(1000)), 530.0 + 400.0);
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 1", "100 n001 ready 0", "500 n001 remove 0", "530 n001 removed 0",
                                      "600 n001 create 1"));
}

TEST(ScalingController, AReclaimedNodeIsRecordedAndCanBeCreatedAgain) {
  // Pool n001 up from 0, running job 1. The provider reclaims it at 100: the world ends job 1 NODE_FAIL, requeues it
  // and takes the node (POWERED_DOWN). Requeued, job 1 is pending again (reason None): the poll at 120 creates n001
  // (demand 1). Node-seconds: 0-100 plus 120-200.
  FakeWorld w(1, 8, {job(1, 1)});
  const AutoscalerConfig cfg = pool_of({0});
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  start(w, s, 0, {0});
  w.set_now_s(100);
  ClusterState& state = w.mutable_state();
  state.finish(0, JobState::kNodeFail, from_seconds(100));
  state.release(0);
  s.on_job_released(0);
  state.requeue(0, from_seconds(100));
  s.on_job_requeued(0);
  w.set_condition(0, NodeCondition::kPoweredDown);
  s.on_node_changed(0, NodeCondition::kNone, NodeCondition::kPoweredDown);
  s.on_node_reclaimed(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  poll_at(w, s, 120);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  EXPECT_THAT(records(s), ElementsAre("100 n001 reclaimed 0", "120 n001 create 1"));
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(200)), 100.0 + 80.0);
}

TEST(ScalingController, ADeletedNodeIsRetiredNeverCreatedAgainNorCountedUp) {
  // Pool n001-n003, max_nodes 2; n001, n002 up, n003 off. n001 runs job 1 from 0. At 100 an operation deletes n002:
  // retired. Jobs 2 and 3 (1 node each) at 120: demand 2, supply 0; one node exists (n001; n002 is not counted), so
  // the budget is min(100, 2 - 1) = 1, and n002 is never created again: n003 alone. Node-seconds at 200: n001 200,
  // n002 100 (to its deletion), n003 80.
  FakeWorld w(3, 8, {job(1, 1), job(2, 1), job(3, 1)});
  AutoscalerConfig cfg = pool_of({0, 1, 2});
  cfg.max_nodes = 2;
  w.set_condition(2, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  start(w, s, 0, {0});
  w.set_now_s(100);
  w.set_condition(1, NodeCondition::kDrain);  // remove_nodes drains it, then deletes it (idle)
  s.on_node_changed(1, NodeCondition::kNone, NodeCondition::kDrain);
  w.set_condition(1, NodeCondition::kPoweredDown);
  s.on_node_changed(1, NodeCondition::kDrain, NodeCondition::kPoweredDown);
  s.on_node_deleted(1);
  w.set_now_s(120);
  pend(w, s, 1);
  pend(w, s, 2);
  poll_at(w, s, 120);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003"));
  EXPECT_THAT(records(s), ElementsAre("120 n003 create 2"));
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(200)), 200.0 + 100.0 + 80.0);
}

TEST(ScalingController, ANodeAnOperationPowersUpCountsAsUp) {
  // Pool n001-n002 (max 1), both off. An operation powers n002 up at 50 (POWERING_UP: not the pool's to create);
  // it boots at 100 (not a record of the pool's). Jobs 1 and 2 (1 node each) at 120: demand 2, supply 1 (n002 idle),
  // but n002 is the one node max_nodes allows: nothing created. Node-seconds at 200: n002's 100 s since its boot.
  FakeWorld w(2, 8, {job(1, 1), job(2, 1)});
  AutoscalerConfig cfg = pool_of({0, 1});
  cfg.max_nodes = 1;
  w.set_condition(0, NodeCondition::kPoweredDown);
  w.set_condition(1, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  w.set_now_s(50);
  w.set_condition(1, NodeCondition::kPoweringUp);
  s.on_node_changed(1, NodeCondition::kPoweredDown, NodeCondition::kPoweringUp);
  poll_at(w, s, 60);
  w.set_now_s(100);
  boot(w, s, 1, true);
  w.set_now_s(120);
  pend(w, s, 0);
  pend(w, s, 1);
  poll_at(w, s, 120);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(s.records(), IsEmpty());
  EXPECT_DOUBLE_EQ(s.pool_node_seconds(from_seconds(200)), 100.0);
}

TEST(ScalingController, ANodeAnOperationAddsLaterIsNotThePoolsToCreate) {
  // Pool n001-n002; n002 is absent until an add_nodes (POWERED_DOWN and deleted), n001 POWERED_DOWN. Jobs 1 and 2
  // (1 node each) pending at 0: demand 2, but only n001 is the pool's to create.
  FakeWorld w(2, 8, {job(1, 1), job(2, 1)});
  const AutoscalerConfig cfg = pool_of({0, 1});
  w.set_condition(0, NodeCondition::kPoweredDown);
  w.set_condition(1, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_node_deleted(1);
  s.on_start();
  pend(w, s, 0);
  pend(w, s, 1);
  poll_at(w, s, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
}

// ---- Slurm power saving ----

AutoscalerConfig power_save_of(std::vector<std::uint32_t> nodes) {
  AutoscalerConfig c = pool_of(std::move(nodes));
  c.slurm_power_save = true;
  c.poll_s = 60;
  return c;
}

TEST(ScalingController, PowerSavingCreatesNothingFromDemand) {
  // Pool n001-n002 POWERED_DOWN, job 1 (1 node) pending for Resources: the scheduler would allocate a POWERED_DOWN
  // node; the controller alone creates nothing.
  FakeWorld w(2, 8, {job(1, 1)});
  const AutoscalerConfig cfg = power_save_of({0, 1});
  w.set_condition(0, NodeCondition::kPoweredDown);
  w.set_condition(1, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0);
  poll_at(w, s, 0);
  poll_at(w, s, 60);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(s.records(), IsEmpty());
}

TEST(ScalingController, PowerSavingResumesAllocatedNodesWithinResumeRate) {
  // Pool n001-n004 POWERED_DOWN; ResumeRate 2 per 60 s poll. Polls at 0 and 60 use none of their budget (2 each: it
  // does not add up). At 65 job 1 is allocated n001-n003: resume timers 1-3 at 65; firing them resumes n001, n002
  // (records with demand 3, the job's nodes) and queues n003. The poll at 120 resumes n003 (budget 1 left); at 125
  // job 2 on n004 resumes it at once with that budget. A node booted after a resume is ready.
  FakeWorld w(4, 8, {job(1, 3), job(2, 1)});
  AutoscalerConfig cfg = power_save_of({0, 1, 2, 3});
  cfg.scale_up_per_poll = 2;
  for (NodeIndex n = 0; n < 4; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 0);
  poll_at(w, s, 60);
  w.take_timers();
  w.set_now_s(65);
  start(w, s, 0, {0, 1, 2});
  EXPECT_THAT(w.take_timers(),
              ElementsAre(Timer{ControllerId::kScaling, 1, 65.0}, Timer{ControllerId::kScaling, 2, 65.0},
                          Timer{ControllerId::kScaling, 3, 65.0}));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  s.on_timer(1);
  s.on_timer(2);
  s.on_timer(3);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001", "power up n002"));
  poll_at(w, s, 120);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003"));
  w.take_timers();
  w.set_now_s(125);
  start(w, s, 1, {3});
  EXPECT_THAT(w.take_timers(), ElementsAre(Timer{ControllerId::kScaling, 4, 125.0}));
  s.on_timer(4);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n004"));
  w.set_now_s(200);
  boot(w, s, 0, true);
  EXPECT_THAT(records(s), ElementsAre("65 n001 create 3", "65 n002 create 3", "120 n003 create 3", "125 n004 create 1",
                                      "200 n001 ready 0"));
}

TEST(ScalingController, PowerSavingQueuedResumesWaitForLaterPollsInRequestOrder) {
  // ResumeRate 1. The poll at 0 gives a budget of 1; jobs 1-3 each allocated one of n001-n003 at 5: n001 resumes,
  // n002 and n003 wait; at 60 n002, at 120 n003, in request order.
  FakeWorld w(3, 8, {job(1, 1), job(2, 1), job(3, 1)});
  AutoscalerConfig cfg = power_save_of({0, 1, 2});
  cfg.scale_up_per_poll = 1;
  for (NodeIndex n = 0; n < 3; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 0);
  w.set_now_s(5);
  start(w, s, 0, {0});
  start(w, s, 1, {1});
  start(w, s, 2, {2});
  s.on_timer(1);
  s.on_timer(2);
  s.on_timer(3);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  poll_at(w, s, 60);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n002"));
  poll_at(w, s, 120);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003"));
  poll_at(w, s, 180);
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(ScalingController, PowerSavingRequestsOneResumePerNode) {
  // Jobs 1 and 2 (4 GPUs each) are both allocated POWERED_DOWN n001: one resume timer, one power-up; a second firing
  // of the timer (the node already booting) does nothing.
  FakeWorld w(1, 8, {job(1, 1, 4), job(2, 1, 4)});
  const AutoscalerConfig cfg = power_save_of({0});
  w.set_condition(0, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 0);
  w.take_timers();
  start(w, s, 0, {0}, 4);
  start(w, s, 1, {0}, 4);
  EXPECT_THAT(w.take_timers(), ElementsAre(Timer{ControllerId::kScaling, 1, 0.0}));
  s.on_timer(1);
  s.on_timer(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n001"));
  EXPECT_THAT(records(s), ElementsAre("0 n001 create 1"));
}

TEST(ScalingController, PowerSavingRequeuesTheJobsOfANodeTakenOutBeforeItsResume) {
  // ResumeRate 1; jobs 1-3 allocated POWERED_DOWN n001-n003 at 5. n003 is set DOWN before its resume timer fires:
  // its jobs are requeued at once (resume_failure). n001 resumes; n002 waits, is set DOWN at 30, and its jobs are
  // requeued at the poll at 60 instead of a resume.
  FakeWorld w(3, 8, {job(1, 1), job(2, 1), job(3, 1)});
  AutoscalerConfig cfg = power_save_of({0, 1, 2});
  cfg.scale_up_per_poll = 1;
  for (NodeIndex n = 0; n < 3; ++n) w.set_condition(n, NodeCondition::kPoweredDown);
  ScalingController s(cfg, w);
  s.on_start();
  poll_at(w, s, 0);
  w.set_now_s(5);
  start(w, s, 0, {0});
  start(w, s, 1, {1});
  start(w, s, 2, {2});
  w.set_condition(2, NodeCondition::kDown);
  s.on_timer(1);
  s.on_timer(2);
  s.on_timer(3);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("power up n001", "requeue jobs on n003 'resume impossible' (resume_failure)"));
  EXPECT_EQ(w.state().job(2).state, JobState::kNodeFail);
  w.set_now_s(30);
  w.set_condition(1, NodeCondition::kDown);
  poll_at(w, s, 60);
  EXPECT_THAT(w.take_actions(), ElementsAre("requeue jobs on n002 'resume impossible' (resume_failure)"));
  EXPECT_EQ(w.state().job(1).state, JobState::kNodeFail);
  EXPECT_THAT(records(s), ElementsAre("5 n001 create 1"));
}

TEST(ScalingController, PowerSavingSuspendsIdleNodesAfterSuspendTimeWhateverIsPending) {
  // Pool n001-n002 up from 0 (not CLOUD); job 1 (1 node) pending for Priority would keep one of them under the
  // autoscaler, but SuspendTime 300 suspends both at 300, n002 first (records carry the demand 1).
  FakeWorld w(2, 8, {job(1, 1)});
  const AutoscalerConfig cfg = power_save_of({0, 1});
  ScalingController s(cfg, w);
  s.on_start();
  pend(w, s, 0, PendingReason::kPriority);
  poll_at(w, s, 240);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  poll_at(w, s, 300);
  EXPECT_THAT(w.take_actions(), ElementsAre("power down n002", "power down n001"));
  EXPECT_THAT(records(s), ElementsAre("300 n002 remove 1", "300 n001 remove 1"));
}

}  // namespace
}  // namespace gputwin
