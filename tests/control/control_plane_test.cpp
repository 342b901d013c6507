// ControlPlane alone, with recording controllers: the order in which controllers hear of each observation, admission
// (the first refusal wins), timer and start routing by ControllerId, and removed or replaced controllers.
#include "control/control_plane.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// A controller that writes "<name> <callback> <arguments>" to a shared log for every callback, and refuses
// admission with `refuse` (kNone: admits).
class Recorder final : public Controller {
 public:
  Recorder(std::string name, std::vector<std::string>& log, PendingReason refuse = PendingReason::kNone)
      : name_(std::move(name)), log_(log), refuse_(refuse) {}

  void on_start() override { say("start"); }
  void on_timer(TimerId timer) override { say("timer " + std::to_string(timer)); }
  void on_instant_end() override { say("instant_end"); }
  PendingReason admit(JobIndex job) override {
    say("admit " + std::to_string(job));
    return refuse_;
  }
  void on_job_submitted(JobIndex job) override { say("submitted " + std::to_string(job)); }
  void on_job_started(JobIndex job) override { say("started " + std::to_string(job)); }
  void on_job_released(JobIndex job) override { say("released " + std::to_string(job)); }
  void on_job_requeued(JobIndex job) override { say("requeued " + std::to_string(job)); }
  void on_job_cancelled(JobIndex job) override { say("cancelled " + std::to_string(job)); }
  void on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) override {
    say("changed " + std::to_string(n) + " " + std::to_string(static_cast<int>(before)) + "->" +
        std::to_string(static_cast<int>(after)));
  }
  void on_health_event(const HealthEvent& event) override {
    say("health_event " + std::to_string(event.node) + " xid " + std::to_string(event.xid));
  }
  void on_node_recovered(NodeIndex n) override { say("recovered " + std::to_string(n)); }
  void on_node_booted(NodeIndex n, bool ok) override { say("booted " + std::to_string(n) + (ok ? " ok" : " failed")); }
  void on_node_powered_down(NodeIndex n) override { say("powered_down " + std::to_string(n)); }
  void on_node_deleted(NodeIndex n) override { say("deleted " + std::to_string(n)); }
  void on_node_reclaimed(NodeIndex n) override { say("reclaimed " + std::to_string(n)); }

 private:
  void say(const std::string& what) { log_.push_back(name_ + " " + what); }
  std::string name_;
  std::vector<std::string>& log_;
  PendingReason refuse_;
};

// The five controllers, added to `plane` in the reverse of the notification order.
struct Five {
  explicit Five(std::vector<std::string>& log)
      : health("health", log),
        scaling("scaling", log),
        quota("quota", log),
        operations("operations", log),
        scheduler("scheduler", log) {}
  void add_to(ControlPlane& plane) {
    plane.add(ControllerId::kScheduler, &scheduler);
    plane.add(ControllerId::kOperations, &operations);
    plane.add(ControllerId::kQuota, &quota);
    plane.add(ControllerId::kScaling, &scaling);
    plane.add(ControllerId::kHealth, &health);
  }
  Recorder health, scaling, quota, operations, scheduler;
};

// `what` as each of `names` hears it, in that order.
std::vector<std::string> heard_by(const std::vector<std::string>& names, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& n : names) out.push_back(n + " " + what);
  return out;
}

const std::vector<std::string> kAll = {"health", "scaling", "quota", "operations", "scheduler"};

TEST(ControlPlane, EveryObservationReachesHealthScalingQuotaOperationsThenTheScheduler) {
  // Added scheduler, operations, quota, scaling, health: each observation is still heard in the fixed order, once
  // by each, with its arguments.
  std::vector<std::string> log;
  Five five(log);
  ControlPlane plane;
  five.add_to(plane);
  const auto check = [&](const std::string& what) {
    EXPECT_THAT(log, ElementsAreArray(heard_by(kAll, what))) << what;
    log.clear();
  };
  plane.on_instant_end();
  check("instant_end");
  plane.on_job_submitted(3);
  check("submitted 3");
  plane.on_job_started(4);
  check("started 4");
  plane.on_job_released(5);
  check("released 5");
  plane.on_job_requeued(6);
  check("requeued 6");
  plane.on_job_cancelled(7);
  check("cancelled 7");
  plane.on_node_changed(2, NodeCondition::kNone, NodeCondition::kDrain);
  check("changed 2 0->1");
  HealthEvent event;
  event.node = 1;
  event.xid = 79;
  plane.on_health_event(event);
  check("health_event 1 xid 79");
  plane.on_node_recovered(8);
  check("recovered 8");
  plane.on_node_booted(9, true);
  check("booted 9 ok");
  plane.on_node_booted(9, false);
  check("booted 9 failed");
  plane.on_node_powered_down(10);
  check("powered_down 10");
  plane.on_node_deleted(11);
  check("deleted 11");
  plane.on_node_reclaimed(12);
  check("reclaimed 12");
}

TEST(ControlPlane, AdmitReturnsTheFirstRefusalInNotificationOrderAndStopsAsking) {
  // Operations (added first) refuses with QOSGrpJobs and quota with AssocGrpBillingMinutes; in the order health,
  // scaling, quota, operations, quota refuses first: its reason, and operations and the scheduler are not asked.
  std::vector<std::string> log;
  Recorder health("health", log), scaling("scaling", log), scheduler("scheduler", log);
  Recorder quota("quota", log, PendingReason::kAssocGrpBillingMinutes);
  Recorder operations("operations", log, PendingReason::kQosGrpJobs);
  ControlPlane plane;
  plane.add(ControllerId::kOperations, &operations);
  plane.add(ControllerId::kScheduler, &scheduler);
  plane.add(ControllerId::kQuota, &quota);
  plane.add(ControllerId::kHealth, &health);
  plane.add(ControllerId::kScaling, &scaling);
  EXPECT_EQ(plane.admit(5), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_THAT(log, ElementsAre("health admit 5", "scaling admit 5", "quota admit 5"));
  log.clear();
  // Without the quota, the operations controller's refusal is the first; the scheduler is still not asked.
  plane.add(ControllerId::kQuota, nullptr);
  EXPECT_EQ(plane.admit(6), PendingReason::kQosGrpJobs);
  EXPECT_THAT(log, ElementsAre("health admit 6", "scaling admit 6", "operations admit 6"));
}

TEST(ControlPlane, AdmitIsNoneWhenEveryControllerAdmitsAndAllAreAsked) {
  std::vector<std::string> log;
  Five five(log);
  ControlPlane plane;
  five.add_to(plane);
  EXPECT_EQ(plane.admit(2), PendingReason::kNone);
  EXPECT_THAT(log, ElementsAreArray(heard_by(kAll, "admit 2")));
}

TEST(ControlPlane, TimersAndStartsGoOnlyToTheirController) {
  // Each ControllerId's timer and start reach that controller alone; get returns what was added.
  std::vector<std::string> log;
  Five five(log);
  ControlPlane plane;
  five.add_to(plane);
  EXPECT_EQ(plane.get(ControllerId::kQuota), &five.quota);
  EXPECT_EQ(plane.get(ControllerId::kScheduler), &five.scheduler);
  plane.on_timer(ControllerId::kQuota, 7);
  plane.on_timer(ControllerId::kHealth, 1);
  plane.on_timer(ControllerId::kScheduler, 0);
  plane.on_timer(ControllerId::kOperations, 3);
  plane.on_timer(ControllerId::kScaling, 4);
  plane.start(ControllerId::kScaling);
  plane.start(ControllerId::kScheduler);
  EXPECT_THAT(log, ElementsAre("quota timer 7", "health timer 1", "scheduler timer 0", "operations timer 3",
                               "scaling timer 4", "scaling start", "scheduler start"));
}

TEST(ControlPlane, ARemovedControllerIsSkippedEverywhere) {
  // Quota refuses everything, then is removed (null): observations, timers, starts and admission skip it.
  std::vector<std::string> log;
  Recorder health("health", log), scaling("scaling", log), operations("operations", log), scheduler("scheduler", log);
  Recorder quota("quota", log, PendingReason::kAssocGrpBillingMinutes);
  ControlPlane plane;
  plane.add(ControllerId::kHealth, &health);
  plane.add(ControllerId::kScaling, &scaling);
  plane.add(ControllerId::kQuota, &quota);
  plane.add(ControllerId::kOperations, &operations);
  plane.add(ControllerId::kScheduler, &scheduler);
  plane.add(ControllerId::kQuota, nullptr);
  EXPECT_EQ(plane.get(ControllerId::kQuota), nullptr);
  plane.on_job_submitted(1);
  EXPECT_THAT(log, ElementsAreArray(heard_by({"health", "scaling", "operations", "scheduler"}, "submitted 1")));
  log.clear();
  plane.on_timer(ControllerId::kQuota, 0);
  plane.start(ControllerId::kQuota);
  EXPECT_THAT(log, IsEmpty());
  EXPECT_EQ(plane.admit(1), PendingReason::kNone);
  EXPECT_THAT(log, ElementsAreArray(heard_by({"health", "scaling", "operations", "scheduler"}, "admit 1")));
}

TEST(ControlPlane, AddingAgainReplacesTheControllerInItsPlace) {
  // A second health controller replaces the first: only it hears, still first; the scheduler added before it stays
  // last.
  std::vector<std::string> log;
  Recorder first("first-health", log), second("second-health", log), scheduler("scheduler", log);
  ControlPlane plane;
  plane.add(ControllerId::kHealth, &first);
  plane.add(ControllerId::kScheduler, &scheduler);
  plane.add(ControllerId::kHealth, &second);
  EXPECT_EQ(plane.get(ControllerId::kHealth), &second);
  plane.on_node_recovered(4);
  plane.on_timer(ControllerId::kHealth, 2);
  EXPECT_THAT(log, ElementsAre("second-health recovered 4", "scheduler recovered 4", "second-health timer 2"));
}

TEST(ControlPlane, AnEmptyPlaneAdmitsEverythingAndDropsEverything) {
  ControlPlane plane;
  EXPECT_EQ(plane.admit(0), PendingReason::kNone);
  plane.on_job_submitted(0);
  plane.on_timer(ControllerId::kScaling, 1);
  plane.start(ControllerId::kHealth);
  for (std::size_t i = 0; i < kControllerCount; ++i) EXPECT_EQ(plane.get(static_cast<ControllerId>(i)), nullptr);
}

}  // namespace
}  // namespace gputwin
