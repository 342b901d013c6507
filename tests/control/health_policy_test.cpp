// The health controller's limits and escalation rules (faults.health), driven by a scripted world.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/health_controller.hpp"
#include "faults/xid_catalogue.hpp"
#include "tests/support/fake_world.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using testing::FakeWorld;
using ::testing::IsEmpty;

HealthEvent event(NodeIndex n, std::uint32_t xid, FaultEffect needs) {
  HealthEvent e;
  e.node = n;
  e.by = DetectedBy::kHealthCheck;
  e.xid = xid;
  e.gpu = 0;
  e.symptom = Symptom::kGpuError;
  e.needs = needs;
  return e;
}

TEST(HealthPolicy, ALimitKeepsFurtherFaultyNodesInServiceUntilOneReturns) {
  // At most one node out: n001 drains and reboots; n002, found faulty while n001 is out, stays in service
  // (deferred); when n001 is resumed, n002 is drained and rebooted (it is idle).
  FakeWorld w(4, 8);
  FaultsConfig faults;
  faults.health.max_nodes_out = 1;
  HealthController h(faults, w);
  EXPECT_EQ(h.limit(), 1u);
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 0 (health_check)'", "reboot n001 'xid 79 gpu 0 (health_check)'"));
  h.on_health_event(event(1, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(h.deferred(), ElementsAre(1u));
  EXPECT_EQ(h.deferrals(), 1u);
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kNone);
  // A further fault on the deferred node escalates what it will need, nothing more.
  h.on_health_event(event(1, 0, FaultEffect::kRepairNode));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001", "drain n002 'xid 79 gpu 0 (health_check)'",
                                            "down n002 'xid 79 gpu 0 (health_check)' (fault)",
                                            "repair n002 'xid 79 gpu 0 (health_check)'"));
  EXPECT_THAT(h.deferred(), IsEmpty());
  EXPECT_EQ(h.nodes_out(), 1u);
}

TEST(HealthPolicy, NodesThatStopRespondingAreOutWhateverTheLimit) {
  // slurmctld set n002 DOWN itself: it counts, and is never deferred (2 out with a limit of 1); n003 then waits.
  FakeWorld w(4, 8);
  FaultsConfig faults;
  faults.health.max_nodes_out = 1;
  HealthController h(faults, w);
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  w.take_actions();
  HealthEvent dead = event(1, 0, FaultEffect::kRebootNode);
  dead.by = DetectedBy::kSlurmdTimeout;
  dead.not_responding = true;
  w.set_condition(1, NodeCondition::kDown);
  h.on_health_event(dead);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n002 'Not responding'"));
  EXPECT_EQ(h.nodes_out(), 2u);
  h.on_health_event(event(2, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  // n001 back: still 1 out (n002), so n003 keeps waiting; n002 back: n003 goes.
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002", "drain n003 'xid 79 gpu 0 (health_check)'",
                                            "reboot n003 'xid 79 gpu 0 (health_check)'"));
}

TEST(HealthPolicy, APercentageLimitIsAtLeastOneNode) {
  FakeWorld w(4, 8);
  FaultsConfig faults;
  faults.health.max_nodes_out_pct = 50;  // 2 of 4
  EXPECT_EQ(HealthController(faults, w).limit(), 2u);
  faults.health.max_nodes_out_pct = 10;  // 0.4 of a node: one
  EXPECT_EQ(HealthController(faults, w).limit(), 1u);
  faults.health.max_nodes_out = 3;
  faults.health.max_nodes_out_pct = 50;  // the smaller of 3 and 2
  EXPECT_EQ(HealthController(faults, w).limit(), 2u);
}

TEST(HealthPolicy, AnXidThatRecursWithinTheWindowTakesTheCataloguesEscalatedAction) {
  // XID 48 (double-bit ECC): reset on first sight, repair when it recurs (gpu-domain.md 1.2).
  ASSERT_EQ(find_xid(48)->effect, FaultEffect::kResetGpu);
  ASSERT_EQ(find_xid(48)->escalated_effect, FaultEffect::kRepairNode);
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.health.xid_recurrence_s = 3600;
  HealthController h(faults, w);
  h.on_health_event(event(0, 48, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 48 gpu 0 (health_check)'", "reset gpus n001 'xid 48 gpu 0 (health_check)'"));
  w.set_now_s(600);
  h.on_node_recovered(0);
  w.take_actions();
  // 1,000 s after the first report: within 3,600 s, so a repair.
  w.set_now_s(1000);
  h.on_health_event(event(0, 48, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 48 gpu 0 (health_check)'", "down n001 'xid 48 gpu 0 (health_check)' (fault)",
                          "repair n001 'xid 48 gpu 0 (health_check)'"));
  EXPECT_EQ(h.escalations(), 1u);
  w.set_now_s(2000);
  h.on_node_recovered(0);
  w.take_actions();
  // 4,700 s after the last report (at 1,000 s): outside the window, a reset again.
  w.set_now_s(5700);
  h.on_health_event(event(0, 48, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 48 gpu 0 (health_check)'", "reset gpus n001 'xid 48 gpu 0 (health_check)'"));
  // Another XID in between does not count as a recurrence of 48.
  EXPECT_EQ(h.escalations(), 1u);
}

TEST(HealthPolicy, TheThirdRebootWithinTheWindowIsARepair) {
  // reboots_before_repair 3 in a day: reboots at 0 and 1,000 s; the one due at 2,000 s becomes a repair; after the
  // repair the count starts again.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.health.reboots_before_repair = 3;
  faults.health.reboot_window_s = 86400;
  HealthController h(faults, w);
  for (double t : {0.0, 1000.0}) {
    w.set_now_s(t);
    h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
    EXPECT_THAT(w.take_actions(),
                ElementsAre("drain n001 'xid 79 gpu 0 (health_check)'", "reboot n001 'xid 79 gpu 0 (health_check)'"));
    h.on_node_recovered(0);
    w.take_actions();
  }
  w.set_now_s(2000);
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'xid 79 gpu 0 (health_check)'",
                                            "down n001 'xid 79 gpu 0 (health_check) (repeated reboots)' (fault)",
                                            "repair n001 'xid 79 gpu 0 (health_check) (repeated reboots)'"));
  EXPECT_EQ(h.escalations(), 1u);
  h.on_node_recovered(0);
  w.take_actions();
  w.set_now_s(3000);
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 0 (health_check)'", "reboot n001 'xid 79 gpu 0 (health_check)'"));
}

TEST(HealthPolicy, RebootsOlderThanTheWindowDoNotCount) {
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.health.reboots_before_repair = 2;
  faults.health.reboot_window_s = 3600;
  HealthController h(faults, w);
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  h.on_node_recovered(0);
  w.take_actions();
  w.set_now_s(3601);  // the first reboot (at 0) left the window
  h.on_health_event(event(0, 79, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 0 (health_check)'", "reboot n001 'xid 79 gpu 0 (health_check)'"));
}

}  // namespace
}  // namespace gputwin
