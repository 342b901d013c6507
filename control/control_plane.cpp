#include "control/control_plane.hpp"

namespace gputwin {

void ControlPlane::add(ControllerId id, Controller* controller) {
  by_id_[static_cast<std::size_t>(id)] = controller;
  // Notification order: health, scaling, quota, operations, scheduler.
  static constexpr std::array<ControllerId, kControllerCount> kOrder = {ControllerId::kHealth, ControllerId::kScaling,
                                                                        ControllerId::kQuota, ControllerId::kOperations,
                                                                        ControllerId::kScheduler};
  count_ = 0;
  for (ControllerId i : kOrder) {
    if (Controller* c = get(i)) ordered_[count_++] = c;
  }
}

}  // namespace gputwin
