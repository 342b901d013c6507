// SlurmWorld over a mirror of hand-made polls, acting through a recording fake of ClusterActions: what it tells the
// controllers (XIDs in comments and reasons, nodes that stop responding, timers), and how it carries their actions
// out (the exact call, dry-run, idempotence, the nodes-out and rate bounds, failures), with the health and quota
// controllers run on it unchanged.
#include "twin/slurm_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "control/control_plane.hpp"
#include "control/health_controller.hpp"
#include "control/quota_controller.hpp"
#include "model/cloud_config.hpp"
#include "model/faults_config.hpp"
#include "tests/twin/twin_fixtures.hpp"
#include "twin/mirror.hpp"
#include "twin/twin_log.hpp"

namespace gputwin {
namespace {

using test::gpu_node;
using test::gpu_partition;
using test::pending_job;
using test::running_job;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// ClusterActions that records each call as text ("update_node(gpu02, DRAIN, xid 79)") and returns "fake: <call>";
// a call starting with `fail_on` is recorded, then throws `fail_message`.
class RecordingActions final : public ClusterActions {
 public:
  std::vector<std::string> calls;
  std::string fail_on;
  std::string fail_message = "HTTP 500: slurmctld said no";

  std::string update_node(const std::string& node, const std::string& state, const std::string& reason) override {
    return record("update_node(" + node + ", " + state + ", " + reason + ")");
  }
  std::string reboot_node(const std::string& node, const std::string& reason) override {
    return record("reboot_node(" + node + ", " + reason + ")");
  }
  std::string cancel_job(std::uint64_t job_id) override { return record("cancel_job(" + std::to_string(job_id) + ")"); }
  std::string requeue_job(std::uint64_t job_id) override {
    return record("requeue_job(" + std::to_string(job_id) + ")");
  }
  std::string update_job(std::uint64_t job_id, const std::string& update) override {
    return record("update_job(" + std::to_string(job_id) + ", " + update + ")");
  }

 private:
  std::string record(std::string call) {
    calls.push_back(call);
    if (!fail_on.empty() && call.rfind(fail_on, 0) == 0) throw std::runtime_error(fail_message);
    return "fake: " + call;
  }
};

// A controller that records what it is told ("health gpu02 xid 79 gpu 3 by 1 needs 3", "timer 7 at 60 s") and runs
// `on_timer_do` in its timers.
class RecordingController final : public Controller {
 public:
  explicit RecordingController(World& world) : world_(world) {}
  std::vector<std::string> seen;
  std::vector<HealthEvent> events;
  std::function<void(TimerId)> on_timer_do;

  void on_health_event(const HealthEvent& e) override {
    events.push_back(e);
    seen.push_back("health " + world_.state().config().nodes[e.node].name +
                   (e.not_responding ? " not_responding" : "") + (e.xid != 0 ? " xid " + std::to_string(e.xid) : "") +
                   (e.gpu != UINT32_MAX ? " gpu " + std::to_string(e.gpu) : ""));
  }
  void on_timer(TimerId timer) override {
    seen.push_back("timer " + std::to_string(timer) + " at " + std::to_string(to_seconds(world_.now())) + " s");
    if (on_timer_do) on_timer_do(timer);
  }

 private:
  World& world_;
};

// An action record as one line: "health drain gpu02 'xid 79 gpu 3 (health_check)' done".
std::vector<std::string> lines(const std::vector<ActionRecord>& actions) {
  std::vector<std::string> out;
  for (const ActionRecord& a : actions)
    out.push_back(a.controller + " " + a.action + " " + a.target + " '" + a.reason + "' " + a.outcome);
  return out;
}

// Four idle nodes gpu01..gpu04 in partition gpu, `jobs` listed, at `time`; `edit` changes the nodes first.
Snapshot poll(std::int64_t time, const std::function<void(std::vector<RestNode>&)>& edit = {},
              std::vector<RestJob> jobs = {}) {
  std::vector<RestNode> nodes{gpu_node("gpu01"), gpu_node("gpu02"), gpu_node("gpu03"), gpu_node("gpu04")};
  if (edit) edit(nodes);
  return Snapshot{time, std::move(nodes), {gpu_partition("gpu[01-04]")}, std::move(jobs)};
}

RestNode drained(RestNode n, const std::string& reason) {
  n.flags.push_back("DRAIN");
  n.reason = reason;
  return n;
}

JobIndex job_index(const Mirror& mirror, std::uint64_t id) {
  const MirrorJob* mj = mirror.job(id);
  EXPECT_NE(mj, nullptr) << "job " << id;
  return static_cast<JobIndex>(mj - mirror.jobs().data());
}

// Room for two of the four nodes out and ten actions a minute, unless a test says otherwise.
constexpr ActionLimits kRoomy{50, 10};

// ---- Carrying actions out ----

// A dry-run world over a mirror of a first poll, with a RecordingController as controller `id`.
struct Observed {
  Observed(const Snapshot& first, ControllerId id)
      : changes(mirror.apply(first)), world(mirror, nullptr, false, kRoomy, log), rec(world) {
    plane.add(id, &rec);
    world.set_control_plane(&plane);
  }
  Mirror mirror;
  PollChanges changes;
  TwinLog log;
  SlurmWorld world;
  RecordingController rec;
  ControlPlane plane;
};

TEST(SlurmWorldActions, DryRunRecordsTheActionAndMakesNoCall) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, /*act=*/false, kRoomy, log);
  world.observe(c);
  world.drain_node(1, "XID 79 from the admin");
  EXPECT_THAT(fake.calls, IsEmpty());
  ASSERT_EQ(log.actions.size(), 1u);
  const ActionRecord& a = log.actions[0];
  EXPECT_EQ(a.time, 1000);
  EXPECT_EQ(a.controller, "twin");  // no controller callback was running
  EXPECT_EQ(a.action, "drain");
  EXPECT_EQ(a.target, "gpu02");
  EXPECT_EQ(a.reason, "XID 79 from the admin");
  EXPECT_EQ(a.outcome, "dry-run");
  EXPECT_EQ(a.call, "");
}

TEST(SlurmWorldActions, ActingMakesTheExactCallAndRecordsItDone) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, /*act=*/true, kRoomy, log);
  world.observe(c);
  world.drain_node(1, "XID 79 from the admin");
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu02, DRAIN, XID 79 from the admin)"));
  ASSERT_EQ(log.actions.size(), 1u);
  EXPECT_EQ(log.actions[0].outcome, "done");
  EXPECT_EQ(log.actions[0].call, "fake: update_node(gpu02, DRAIN, XID 79 from the admin)");
}

TEST(SlurmWorldActions, ActWithoutClusterActionsIsADryRun) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000));
  TwinLog log;
  SlurmWorld world(mirror, nullptr, /*act=*/true, kRoomy, log);
  world.observe(c);
  world.drain_node(1, "bad GPU");
  EXPECT_THAT(lines(log.actions), ElementsAre("twin drain gpu02 'bad GPU' dry-run"));
}

TEST(SlurmWorldActions, DrainOfADrainedNodeIsSkipped) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000, [](auto& nodes) { nodes[1] = drained(nodes[1], "by hand"); }));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.drain_node(1, "again");
  EXPECT_THAT(fake.calls, IsEmpty());
  EXPECT_THAT(log.actions, IsEmpty());
}

TEST(SlurmWorldActions, ResumeOfANodeInServiceIsANoOp) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000, [](auto& nodes) { nodes[1] = drained(nodes[1], "by hand"); }));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.resume_node(0);  // idle, in service
  EXPECT_THAT(fake.calls, IsEmpty());
  EXPECT_THAT(log.actions, IsEmpty());
  world.resume_node(1);  // drained: resumed (the contrast that shows resume works at all)
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu02, RESUME, )"));
}

TEST(SlurmWorldActions, TheSameActionTwiceInOnePollIsRecordedOnce) {
  // The state is the last poll's until the next one: a second drain of the same node in the same poll must not
  // call slurmctld again.
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.drain_node(2, "first");
  world.drain_node(2, "second");
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu03, DRAIN, first)"));
  EXPECT_EQ(log.actions.size(), 1u);
}

TEST(SlurmWorldActions, NodesOutBoundRefusesADrainBeyondIt) {
  // 50% of 4 nodes: at most 2 out. gpu01 is drained already; draining gpu02 makes 2; gpu03 would make 3.
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000, [](auto& nodes) { nodes[0] = drained(nodes[0], "by hand"); }));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, ActionLimits{50, 10}, log);
  world.observe(c);
  world.drain_node(1, "a");
  world.drain_node(2, "b");
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu02, DRAIN, a)"));
  EXPECT_THAT(lines(log.actions),
              ElementsAre("twin drain gpu02 'a' done",
                          "twin drain gpu03 'b' refused: would hold more than 50% of the nodes out"));
}

TEST(SlurmWorldActions, RateLimitRefusesTheActionPastItUntilAMinuteHasPassed) {
  // Two actions a minute: two drains at t=1000, the third refused at 1000 and at 1059 (both of the first two are
  // within the last 60 s), allowed at 1060. The nodes-out bound (100%) never binds.
  Mirror mirror;
  PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, ActionLimits{100, 2}, log);
  world.observe(c);
  world.drain_node(0, "a");
  world.drain_node(1, "b");
  world.drain_node(2, "c");
  const auto first_two_drained = [](auto& nodes) {
    nodes[0] = drained(nodes[0], "a");
    nodes[1] = drained(nodes[1], "b");
  };
  c = mirror.apply(poll(1059, first_two_drained));
  world.observe(c);
  world.drain_node(2, "c");
  c = mirror.apply(poll(1060, first_two_drained));
  world.observe(c);
  world.drain_node(2, "c");
  EXPECT_THAT(lines(log.actions),
              ElementsAre("twin drain gpu01 'a' done", "twin drain gpu02 'b' done",
                          "twin drain gpu03 'c' refused: more than 2 actions a minute",
                          "twin drain gpu03 'c' refused: more than 2 actions a minute", "twin drain gpu03 'c' done"));
  EXPECT_EQ(log.actions[3].time, 1059);
  EXPECT_EQ(log.actions[4].time, 1060);
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu01, DRAIN, a)", "update_node(gpu02, DRAIN, b)",
                                      "update_node(gpu03, DRAIN, c)"));
}

TEST(SlurmWorldActions, AFailingCallIsRecordedFailedWithItsMessage) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  fake.fail_on = "update_node";
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.drain_node(1, "bad GPU");
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu02, DRAIN, bad GPU)"));
  EXPECT_THAT(lines(log.actions), ElementsAre("twin drain gpu02 'bad GPU' failed: HTTP 500: slurmctld said no"));
  EXPECT_EQ(log.actions[0].call, "");
}

TEST(SlurmWorldActions, CancelOfARunningJobDeletesIt) {
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000, {}, {running_job(7, "alice", "gpu01", 900, 3600)}));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.cancel_job(job_index(mirror, 7), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_THAT(fake.calls, ElementsAre("cancel_job(7)"));
  EXPECT_THAT(lines(log.actions), ElementsAre("twin cancel 7 'AssocGrpBillingMinutes' done"));
}

TEST(SlurmWorldActions, CancelOfAnEndedJobDoesNothing) {
  RestJob done = running_job(7, "alice", "gpu01", 900, 3600);
  done.state = "COMPLETED";
  done.end_time = 990;
  RestJob gone_pending = pending_job(8, "bob", 950, 600, 5);
  gone_pending.state = "CANCELLED";
  gone_pending.end_time = 980;
  Mirror mirror;
  const PollChanges c = mirror.apply(poll(1000, {}, {done, gone_pending}));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.cancel_job(job_index(mirror, 7), PendingReason::kAssocGrpBillingMinutes);
  world.cancel_job(job_index(mirror, 8), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_THAT(fake.calls, IsEmpty());
  EXPECT_THAT(log.actions, IsEmpty());
}

TEST(SlurmWorldActions, HoldReleaseAndPriorityAreJobUpdatesWithTheirJsonBodies) {
  RestJob held = pending_job(9, "bob", 950, 600, 0);
  held.held = true;
  held.reason = "JobHeldAdmin";
  Mirror mirror;
  const PollChanges c =
      mirror.apply(poll(1000, {}, {pending_job(8, "bob", 950, 600, 5), held, pending_job(10, "carol", 960, 600, 5)}));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.hold_job(job_index(mirror, 8));
  world.release_job(job_index(mirror, 9));
  world.set_job_priority(job_index(mirror, 10), 12345);
  EXPECT_THAT(fake.calls, ElementsAre(R"(update_job(8, {"hold":true}))", R"(update_job(9, {"hold":false}))",
                                      R"(update_job(10, {"priority":12345}))"));
  EXPECT_THAT(lines(log.actions),
              ElementsAre("twin hold 8 '' done", "twin release 9 '' done", "twin set_priority 10 '' done"));
}

TEST(SlurmWorldActions, JobUpdatesThatChangeNothingAreSkipped) {
  // Holding a held job, releasing one not held, setting the priority it has, or touching a running job.
  RestJob held = pending_job(9, "bob", 950, 600, 0);
  held.held = true;
  held.reason = "JobHeldAdmin";
  Mirror mirror;
  const PollChanges c = mirror.apply(
      poll(1000, {}, {running_job(7, "alice", "gpu01", 900, 3600), pending_job(8, "bob", 950, 600, 5), held}));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.observe(c);
  world.hold_job(job_index(mirror, 9));
  world.release_job(job_index(mirror, 8));
  world.set_job_priority(job_index(mirror, 8), 5);
  world.hold_job(job_index(mirror, 7));
  world.set_job_priority(job_index(mirror, 7), 99);
  EXPECT_THAT(fake.calls, IsEmpty());
  EXPECT_THAT(log.actions, IsEmpty());
}

// ---- What the controllers are told ----

TEST(SlurmWorldObserve, AnXidInANodesCommentIsReportedOnceAsAHealthEvent) {
  Observed o(poll(1000), ControllerId::kHealth);
  Mirror& mirror = o.mirror;
  PollChanges c = o.changes;
  SlurmWorld& world = o.world;
  RecordingController& rec = o.rec;
  world.observe(c);
  EXPECT_THAT(rec.seen, IsEmpty());
  const auto xid79 = [](auto& nodes) { nodes[1].comment = "XID 79 GPU 3"; };
  c = mirror.apply(poll(1030, xid79));
  world.observe(c);
  ASSERT_THAT(rec.seen, ElementsAre("health gpu02 xid 79 gpu 3"));
  EXPECT_EQ(rec.events[0].by, DetectedBy::kHealthCheck);
  EXPECT_EQ(rec.events[0].needs, FaultEffect::kRebootNode);  // the XID catalogue's action for 79
  EXPECT_EQ(rec.events[0].symptom, Symptom::kGpuLost);
  // The same comment at the next poll is the same report.
  c = mirror.apply(poll(1060, xid79));
  world.observe(c);
  EXPECT_EQ(rec.seen.size(), 1u);
  // Cleared, then set again: a new report.
  c = mirror.apply(poll(1090));
  world.observe(c);
  c = mirror.apply(poll(1120, xid79));
  world.observe(c);
  EXPECT_THAT(rec.seen, ElementsAre("health gpu02 xid 79 gpu 3", "health gpu02 xid 79 gpu 3"));
}

TEST(SlurmWorldObserve, AnXidInANodesReasonIsReportedToo) {
  Observed o(poll(1000), ControllerId::kHealth);
  Mirror& mirror = o.mirror;
  PollChanges c = o.changes;
  SlurmWorld& world = o.world;
  RecordingController& rec = o.rec;
  world.observe(c);
  c = mirror.apply(poll(1030, [](auto& nodes) { nodes[2] = drained(nodes[2], "nhc: Xid: 48"); }));
  world.observe(c);
  EXPECT_THAT(rec.seen, ElementsAre("health gpu03 xid 48"));
}

TEST(SlurmWorldObserve, ANodeNewlyDownAndNotRespondingIsReportedOnce) {
  Observed o(poll(1000), ControllerId::kHealth);
  Mirror& mirror = o.mirror;
  PollChanges c = o.changes;
  SlurmWorld& world = o.world;
  RecordingController& rec = o.rec;
  world.observe(c);
  const auto gpu04_down = [](auto& nodes) {
    nodes[3].state = "DOWN";
    nodes[3].flags = {"NOT_RESPONDING"};
    nodes[3].reason = "Not responding";
  };
  c = mirror.apply(poll(1030, gpu04_down));
  world.observe(c);
  ASSERT_THAT(rec.seen, ElementsAre("health gpu04 not_responding"));
  EXPECT_EQ(rec.events[0].by, DetectedBy::kSlurmdTimeout);
  EXPECT_EQ(rec.events[0].needs, FaultEffect::kRebootNode);
  c = mirror.apply(poll(1060, gpu04_down));
  world.observe(c);
  EXPECT_EQ(rec.seen.size(), 1u);
}

TEST(SlurmWorldObserve, TimersFireAtTheFirstPollAtOrAfterTheirTime) {
  // Polls 60 s apart from t=1000 (0 s). Timer 1 is due at 60 s: it fires at the poll at 60 s exactly. Timer 2 is
  // due at 90 s: not at 60 s, at 120 s. Nothing fires again at 180 s.
  Observed o(poll(1000), ControllerId::kQuota);
  Mirror& mirror = o.mirror;
  PollChanges c = o.changes;
  SlurmWorld& world = o.world;
  RecordingController& rec = o.rec;
  world.set_timer(ControllerId::kQuota, 1, from_seconds(60));
  world.set_timer(ControllerId::kQuota, 2, from_seconds(90));
  world.observe(c);
  EXPECT_THAT(rec.seen, IsEmpty());
  c = mirror.apply(poll(1060));
  world.observe(c);
  EXPECT_THAT(rec.seen, ElementsAre("timer 1 at 60 s"));
  c = mirror.apply(poll(1120));
  world.observe(c);
  EXPECT_THAT(rec.seen, ElementsAre("timer 1 at 60 s", "timer 2 at 120 s"));
  c = mirror.apply(poll(1180));
  world.observe(c);
  EXPECT_EQ(rec.seen.size(), 2u);
}

TEST(SlurmWorldObserve, DueTimersFireInTheOrderOfTheirTimes) {
  // Timer 5 due at 90 s and timer 6 at 30 s, both due at the poll at 120 s: 6 first. A timer set again replaces
  // its earlier time (timer 7: 20 s, then 200 s, so not due yet).
  Observed o(poll(1000), ControllerId::kQuota);
  Mirror& mirror = o.mirror;
  PollChanges c = o.changes;
  SlurmWorld& world = o.world;
  RecordingController& rec = o.rec;
  world.observe(c);
  world.set_timer(ControllerId::kQuota, 5, from_seconds(90));
  world.set_timer(ControllerId::kQuota, 6, from_seconds(30));
  world.set_timer(ControllerId::kQuota, 7, from_seconds(20));
  world.set_timer(ControllerId::kQuota, 7, from_seconds(200));
  c = mirror.apply(poll(1120));
  world.observe(c);
  EXPECT_THAT(rec.seen, ElementsAre("timer 6 at 120 s", "timer 5 at 120 s"));
}

TEST(SlurmWorldObserve, ActionsInATimerAreNamedAfterItsController) {
  Mirror mirror;
  PollChanges c = mirror.apply(poll(1000));
  TwinLog log;
  SlurmWorld world(mirror, nullptr, false, kRoomy, log);
  RecordingController rec(world);
  rec.on_timer_do = [&](TimerId) { world.drain_node(0, "from a timer"); };
  ControlPlane plane;
  plane.add(ControllerId::kQuota, &rec);
  world.set_control_plane(&plane);
  world.set_timer(ControllerId::kQuota, 0, 0);
  world.observe(c);
  world.drain_node(1, "after the timer");
  EXPECT_THAT(lines(log.actions),
              ElementsAre("quota drain gpu01 'from a timer' dry-run", "twin drain gpu02 'after the timer' dry-run"));
}

// ---- The controllers, unchanged, on a real cluster's world ----

TEST(SlurmWorldHealth, AnXidCommentDrainsTheNodeThenRebootsItOnce) {
  // XID 79 (fallen off the bus) on idle gpu02: HealthController drains it with its reason "xid 79 gpu 3
  // (health_check)", and as the node is idle starts the catalogue's recovery for 79 at once, a reboot. The same
  // comment at the next poll changes nothing.
  Mirror mirror;
  PollChanges c = mirror.apply(poll(1000));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  FaultsConfig faults;
  HealthController health(faults, world);
  ControlPlane plane;
  plane.add(ControllerId::kHealth, &health);
  world.set_control_plane(&plane);
  plane.start(ControllerId::kHealth);
  world.observe(c);
  EXPECT_THAT(log.actions, IsEmpty());
  const auto xid79 = [](auto& nodes) { nodes[1].comment = "XID 79 GPU 3"; };
  c = mirror.apply(poll(1030, xid79));
  world.observe(c);
  EXPECT_THAT(lines(log.actions), ElementsAre("health drain gpu02 'xid 79 gpu 3 (health_check)' done",
                                              "health reboot gpu02 'xid 79 gpu 3 (health_check)' done"));
  EXPECT_THAT(fake.calls, ElementsAre("update_node(gpu02, DRAIN, xid 79 gpu 3 (health_check))",
                                      "reboot_node(gpu02, xid 79 gpu 3 (health_check))"));
  c = mirror.apply(poll(1060, xid79));
  world.observe(c);
  EXPECT_EQ(log.actions.size(), 2u);
  EXPECT_EQ(fake.calls.size(), 2u);
}

TEST(SlurmWorldQuota, CancelsTheRunningJobOfAUserOverQuota) {
  // 80 $ a node-hour (8 GPUs). alice's job 7 and bob's job 8 have each held a whole node since t=6400, an hour
  // before the first poll at t=10000. alice's quota: 100 $, block_and_kill, checked every 60 s.
  // - Poll at 10000: alice has spent 80 $ (1 h), burns 80 $/h: projected 80 + 80 * 60/3600 = 81.3 $ <= 100. Nothing.
  // - Poll at 11200: 80 * 4800/3600 = 106.7 $ > 100: blocked, job 7 cancelled. bob has no quota.
  CostConfig cost;
  cost.enabled = true;
  cost.quota_check_s = 60;
  NodePrice price;
  price.nodes = {0, 1, 2, 3};
  price.usd_per_node_hour = 80;
  cost.prices.push_back(price);
  Quota quota;
  quota.user = "alice";
  quota.limit_usd = 100;
  quota.action = QuotaAction::kBlockAndKill;
  cost.quotas.push_back(quota);
  const std::vector<RestJob> jobs{running_job(7, "alice", "gpu01", 6400, 86400),
                                  running_job(8, "bob", "gpu02", 6400, 86400)};
  const auto busy = [](auto& nodes) {
    nodes[0].state = "ALLOCATED";
    nodes[1].state = "ALLOCATED";
  };
  Mirror mirror;
  PollChanges c = mirror.apply(poll(10000, busy, jobs));
  RecordingActions fake;
  TwinLog log;
  SlurmWorld world(mirror, &fake, true, kRoomy, log);
  world.set_prices(&cost);
  QuotaController quotas(cost, world);
  ControlPlane plane;
  plane.add(ControllerId::kQuota, &quotas);
  world.set_control_plane(&plane);
  plane.start(ControllerId::kQuota);
  world.observe(c);
  EXPECT_NEAR(world.user_spend("alice").usd, 80, 1e-9);
  EXPECT_THAT(log.actions, IsEmpty());
  c = mirror.apply(poll(11200, busy, jobs));
  world.observe(c);
  EXPECT_NEAR(world.user_spend("alice").usd, 80.0 * 4800 / 3600, 1e-9);
  EXPECT_THAT(lines(log.actions), ElementsAre("quota cancel 7 'AssocGrpBillingMinutes' done"));
  EXPECT_THAT(fake.calls, ElementsAre("cancel_job(7)"));
}

}  // namespace
}  // namespace gputwin
