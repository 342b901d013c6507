// What the node lifecycle reports of a run: every fault with its detection and return, every job run a fault
// ended, the checkpoint plan of every checkpointing job, and node time out of service. The simulator fills it;
// the results store writes it (tables faults, job_interruptions, job_checkpoints) and the summary reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_types.hpp"
#include "faults/health_check.hpp"
#include "model/job.hpp"
#include "engine/sim_time.hpp"

namespace gputwin {

/// One fault as it happened.
struct FaultRecord {
  SimTime time = 0;                                   ///< When it struck.
  std::string fault_class;                            ///< Class name in the profile ("injected" for injected faults).
  std::string cause;                                  ///< The cause as the source words it.
  std::uint32_t xid = 0;                              ///< XID (0: none).
  ComponentKind component = ComponentKind::kNode;     ///< Kind of the struck component.
  std::uint32_t node = UINT32_MAX;                    ///< Struck node (UINT32_MAX for switch and rack faults).
  std::uint32_t gpu = UINT32_MAX;                     ///< GPU index in the node (UINT32_MAX: none).
  std::uint32_t group = UINT32_MAX;                   ///< Switch or rack index for group faults.
  std::uint32_t nodes_hit = 0;                        ///< Nodes it took (group faults: the group's members in service).
  FaultEffect effect = FaultEffect::kNone;            ///< What the simulator did.
  Symptom symptom = Symptom::kNone;                   ///< How it showed itself.
  DetectedBy detected_by = DetectedBy::kNotDetected;  ///< What noticed it on the node first.
  bool found_by_people = false;                       ///< No configured check saw it: people found it (repair times).
  SimTime detected = kNever;                          ///< When the node was drained or set DOWN (kNever: never).
  SimTime returned = kNever;                          ///< When the last of its nodes returned to service.
  std::uint32_t jobs_hit = 0;                         ///< Job runs it ended.
  double lost_gpu_s = 0;                              ///< GPU-seconds of work those runs lost (recomputed later).
};

/// What ended a job's run before its end.
enum class InterruptionCause : std::uint8_t {
  kFault,          ///< A fault of its nodes (FaultLog::faults).
  kSpotReclaim,    ///< The provider reclaimed a spot node.
  kOperation,      ///< A cluster operation (maintenance, a restart for a volume).
  kResumeFailure,  ///< A powered-down node it was given failed to resume.
};

/// Name of a cause ("fault", "spot_reclaim", "operation", "resume_failure").
inline std::string_view to_string(InterruptionCause cause) {
  switch (cause) {
    case InterruptionCause::kFault:
      return "fault";
    case InterruptionCause::kSpotReclaim:
      return "spot_reclaim";
    case InterruptionCause::kOperation:
      return "operation";
    case InterruptionCause::kResumeFailure:
      return "resume_failure";
  }
  return "unknown";
}

/// One job run ended early: by a fault (the lifecycle's log) or by the cloud side (CloudLog::interruptions).
struct InterruptionRecord {
  SimTime time = 0;                                     ///< When the run ended.
  std::uint32_t job = 0;                                ///< Job index.
  InterruptionCause cause = InterruptionCause::kFault;  ///< What ended it.
  std::uint32_t fault = UINT32_MAX;                     ///< Index of the fault in FaultLog::faults (kFault only).
  JobState state = JobState::kNodeFail;  ///< NODE_FAIL (node DOWN or removed) or FAILED (the job crashed).
  DetectedBy by = DetectedBy::kAtOnce;   ///< What stopped it (at once, NCCL watchdog, node DOWN, detection).
  double run_s = 0;                      ///< Wall seconds the run lasted.
  double lost_s = 0;                     ///< Wall seconds of it that were lost (not kept by a checkpoint).
  double lost_gpu_s = 0;                 ///< lost_s x GPUs.
  bool requeued = false;                 ///< The job went back to the queue.
  bool black_hole = false;               ///< The run started on the node after its fault, before anyone noticed it.
};

/// A checkpointing job's plan (at its first start).
struct CheckpointRecord {
  std::uint32_t job = 0;   ///< Job index.
  std::uint32_t gpus = 0;  ///< GPUs of its first allocation.
  double interval_s = 0;   ///< Interval used.
  double write_s = 0;      ///< Write time.
  double restart_s = 0;    ///< Restart overhead.
  double mttf_s = 0;       ///< The job's MTTF under the profile (series model; infinity when no profile).
  double young_s = 0;      ///< Young's optimum for that MTTF.
  double daly_s = 0;       ///< Daly's optimum.
  bool blocking = true;    ///< Training waits for each write (false: asynchronous checkpoints).
};

/// Everything the lifecycle recorded in one run.
struct FaultLog {
  std::vector<FaultRecord> faults;                ///< In time order.
  std::vector<InterruptionRecord> interruptions;  ///< In time order.
  std::vector<CheckpointRecord> checkpoints;      ///< In first-start order.
  std::uint64_t suppressed = 0;                   ///< Faults that fell on components already out of service.
  double node_out_s = 0;                          ///< Node-seconds out of service (drained/down to return).
  SimTime horizon = 0;                            ///< Where the run stopped (availability's denominator).
  std::uint32_t nodes = 0;                        ///< Nodes in the cluster.
};

}  // namespace gputwin
