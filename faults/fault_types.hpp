// The vocabulary shared by the fault library: which component fails, what the simulator does about it (the
// effect, from NVIDIA's resolution buckets mapped to simulator classes in gpu-domain.md 1.2), and how the fault
// shows itself (the symptom, which decides who can detect it: gpu-domain.md 1.4, 3.2-3.3).
#pragma once

#include <cstdint>
#include <string_view>

namespace gputwin {

/// The kind of component a fault strikes. Rates are per component of this kind and hour.
enum class ComponentKind : std::uint8_t {
  kGpu,       ///< One GPU (XIDs, HBM/SRAM, GSP, thermal, SDC).
  kNode,      ///< One host: CPU, memory, PSU, chassis, SSD, board; also "the node" when the cause is unknown.
  kNvlink,    ///< One GPU's NVLink ports (scale-up fabric); counted per GPU.
  kNicLink,   ///< One scale-out NIC and its cable to the leaf switch; counted per NIC.
  kSwitch,    ///< One switch; a fault takes down every node in its group (correlated failure).
  kRack,      ///< One rack (power, cooling); a fault takes down every node in its group.
  kSoftware,  ///< The software stack of one node (driver, NCCL, framework); counted per node.
};

/// What the simulator does to the node and the job: gpu-domain.md 1.2's simulator classes (APP, RESET, REBOOT,
/// SERVICE, INFO).
enum class FaultEffect : std::uint8_t {
  kNone,        ///< INFO: nothing to do (informational, or already handled).
  kRestartApp,  ///< APP: the job is killed; the GPU and node stay usable.
  kResetGpu,    ///< RESET: drain the node and reset the GPU (minutes).
  kRebootNode,  ///< REBOOT: drain and reboot the node.
  kRepairNode,  ///< SERVICE: the node goes out for repair or RMA (hours to weeks).
};

/// How a fault shows itself, which decides what can detect it (health-check programs, active checks, slurmd
/// pings, the NCCL watchdog) and what happens to the job running there.
enum class Symptom : std::uint8_t {
  kNone,       ///< Nothing observable beyond a log line (informational XID).
  kAppError,   ///< The job's processes get an error and exit; the node looks healthy.
  kGpuError,   ///< An XID is logged and the GPU is in an error state (needs reset or service); its processes die.
  kGpuLost,    ///< The GPU is inaccessible (fallen off the bus, init failure): nvidia-smi fails.
  kLinkDown,   ///< A NIC/IB port or cable is down: collectives over it stall or fail.
  kHostError,  ///< A host-level failure (disk, memory, mounts, board) that node checks see; slurmd may live.
  kHostDown,   ///< The host crashed or is unreachable: slurmd stops answering pings.
  kHang,       ///< The job hangs in a collective with no error.
  kDegraded,   ///< Fail-slow: a slower link, GPU or throttling; nothing fails.
  kSilent,     ///< Silent data corruption: only stress diagnostics find it.
  kAnnounced,  ///< Operators or automation take the node themselves (unplanned maintenance): known at once.
};

/// What a symptom does to a job running on the struck node.
enum class JobImpact : std::uint8_t {
  kFailsNow,           ///< The job fails at the fault time.
  kStallsUntilKilled,  ///< The job stops progressing until something kills it (watchdog, node DOWN).
  kSlowsDown,          ///< The job keeps running, slower.
  kContinues,          ///< The job keeps running (possibly with wrong results).
};

/// How much worse an effect is than another (none 0 ... repair 4): a node hit twice recovers by the worse one.
int severity(FaultEffect effect);

/// The job impact of a symptom (see JobImpact).
JobImpact job_impact(Symptom symptom);

/// Lower-case name of a component kind ("gpu", "nic_link", ...), for results and messages.
std::string_view to_string(ComponentKind kind);
/// Lower-case name of an effect ("restart_app", "reset_gpu", "reboot_node", "repair_node", "none").
std::string_view to_string(FaultEffect effect);
/// Lower-case name of a symptom ("gpu_lost", "host_down", ...).
std::string_view to_string(Symptom symptom);

}  // namespace gputwin
