// HealthController alone, driven by a scripted world: health events, job releases, recovery ends and timers in;
// the exact actions out.
#include "control/health_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_world.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::FakeWorld;

HealthEvent xid79_on(NodeIndex n) {
  HealthEvent e;
  e.node = n;
  e.by = DetectedBy::kHealthCheck;
  e.xid = 79;
  e.gpu = 2;
  e.symptom = Symptom::kGpuLost;
  e.needs = FaultEffect::kRebootNode;
  return e;
}

TEST(HealthController, DrainsAnIdleNodeRebootsItAndResumesItWhenItIsBack) {
  FakeWorld w(4, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(2));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n003 'xid 79 gpu 2 (health_check)'",
                                            "reboot n003 'xid 79 gpu 2 (health_check)'"));
  h.on_node_recovered(2);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n003"));
  h.on_node_recovered(2);  // a stale end changes nothing
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

}  // namespace
}  // namespace gputwin
