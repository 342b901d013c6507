// Names and job impact of the fault vocabulary (fault_types.hpp).
#include "faults/fault_types.hpp"

namespace gputwin {

JobImpact job_impact(Symptom symptom) {
  switch (symptom) {
    case Symptom::kAppError:
    case Symptom::kGpuError:
    case Symptom::kGpuLost:
    case Symptom::kHostError:
    case Symptom::kAnnounced:
      return JobImpact::kFailsNow;
    case Symptom::kLinkDown:
    case Symptom::kHostDown:
    case Symptom::kHang:
      return JobImpact::kStallsUntilKilled;
    case Symptom::kDegraded:
      return JobImpact::kSlowsDown;
    case Symptom::kNone:
    case Symptom::kSilent:
      return JobImpact::kContinues;
  }
  return JobImpact::kContinues;
}

std::string_view to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::kGpu:
      return "gpu";
    case ComponentKind::kNode:
      return "node";
    case ComponentKind::kNvlink:
      return "nvlink";
    case ComponentKind::kNicLink:
      return "nic_link";
    case ComponentKind::kSwitch:
      return "switch";
    case ComponentKind::kRack:
      return "rack";
    case ComponentKind::kSoftware:
      return "software";
  }
  return "?";
}

int severity(FaultEffect effect) {
  switch (effect) {
    case FaultEffect::kNone:
      return 0;
    case FaultEffect::kRestartApp:
      return 1;
    case FaultEffect::kResetGpu:
      return 2;
    case FaultEffect::kRebootNode:
      return 3;
    case FaultEffect::kRepairNode:
      return 4;
  }
  return 0;
}

std::string_view to_string(FaultEffect effect) {
  switch (effect) {
    case FaultEffect::kNone:
      return "none";
    case FaultEffect::kRestartApp:
      return "restart_app";
    case FaultEffect::kResetGpu:
      return "reset_gpu";
    case FaultEffect::kRebootNode:
      return "reboot_node";
    case FaultEffect::kRepairNode:
      return "repair_node";
  }
  return "?";
}

std::string_view to_string(Symptom symptom) {
  switch (symptom) {
    case Symptom::kNone:
      return "none";
    case Symptom::kAppError:
      return "app_error";
    case Symptom::kGpuError:
      return "gpu_error";
    case Symptom::kGpuLost:
      return "gpu_lost";
    case Symptom::kLinkDown:
      return "link_down";
    case Symptom::kHostError:
      return "host_error";
    case Symptom::kHostDown:
      return "host_down";
    case Symptom::kHang:
      return "hang";
    case Symptom::kDegraded:
      return "degraded";
    case Symptom::kSilent:
      return "silent";
    case Symptom::kAnnounced:
      return "announced";
  }
  return "?";
}

}  // namespace gputwin
