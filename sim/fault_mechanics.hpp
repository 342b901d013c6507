// FaultMechanics: what faults do in the simulated cluster, and when someone notices them (gpu-domain.md 0-3;
// slurm-semantics.md 4): the world's side of the node lifecycle. What to do about a noticed fault (drain, reboot,
// repair, resume) is the health controller's decision (control/health_controller), told through HealthEvents.
//
// - Faults come from the scenario's profile through one lazy FaultProcess (one pending event at a time, however
//   many nodes) and from /faults/inject.
// - A running job on the struck node crashes at once (XID that kills its processes), stalls until the NCCL
//   watchdog or the node's DOWN kills it, or keeps running (degraded, silent). Jobs started on a node whose
//   fault nobody has noticed yet meet the same fate (black-hole nodes). Runs ended by a node going DOWN end
//   NODE_FAIL and are requeued by Slurm's rule (--requeue / JobRequeue); crashed runs end FAILED and are
//   restarted if the scenario says the job's wrapper restarts them.
// - Detection is closed form (faults/health_check.hpp): the first health check, active check or SlurmdTimeout
//   round that sees the fault reports it to the controllers. No event runs per node per check tick: a fault costs
//   a handful of events whatever the cluster size and check interval. A node that stops answering is set DOWN by
//   slurmctld itself, which ends its jobs; people find a fault no check sees after `undetected_found_s`.
// - A Prolog or Epilog that runs HealthCheckProgram finds a fault when a job starts or leaves the node.
// - Recoveries take their time: a GPU reset and a reboot their configured seconds, a repair an automated repair
//   time, escalating to a manual one (stream "faults/repair"). The fault is gone once the node is back in service
//   (or deleted).
// - Checkpointing jobs keep their work up to their last completed checkpoint and pay a restart overhead.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/rng.hpp"
#include "faults/fault_process.hpp"
#include "model/cluster_state.hpp"
#include "model/fault_log.hpp"
#include "model/faults_config.hpp"
#include "model/run_observer.hpp"
#include "world/controller.hpp"

namespace gputwin {

class SimWorld;

/// How one run of a job splits between kept work, overheads and lost work (reference seconds).
struct RunSplit {
  double saved_s = 0;       ///< Work kept (checkpointed, or all of it when the run completed).
  double restart_s = 0;     ///< Restart overhead spent (u0).
  double checkpoint_s = 0;  ///< Blocking checkpoint writes completed.
  double lost_s = 0;        ///< The rest: work to redo (and a write or restart cut short).
};

/// A job's checkpointing for one run.
struct RunCheckpointing {
  double interval_s = 0;  ///< Compute between checkpoints; 0: the job does not checkpoint.
  double write_s = 0;     ///< Blocking write time (0 for asynchronous writes).
  double restart_s = 0;   ///< Restart overhead of this run (0 on a first run).
};

/// Reference seconds a run needs to finish `work_s` of work: restart + work + a write after every full interval
/// but the last (none when the work ends exactly at a checkpoint boundary).
double run_length_s(const RunCheckpointing& plan, double work_s);

/// The split of a run that did `elapsed_s` reference seconds of a run planned for `work_s` of work; `completed`
/// when it ran to its end.
RunSplit split_run(const RunCheckpointing& plan, double work_s, double elapsed_s, bool completed);

/// The fault mechanics of one run (see the file comment).
class FaultMechanics {
 public:
  /// Mechanics of `state`'s cluster per `config`; `seed` is the scenario's (streams "faults/...").
  FaultMechanics(const FaultsConfig& config, const ClusterState& state, std::uint64_t seed);

  /// Arms the first fault events (called by SimWorld::run before the first event).
  void start(SimWorld& world);
  /// Jobs were appended to the job table (a live run's submit): the per-job records grow with it.
  void on_jobs_added();
  /// An operator injects `fault` now (a live run; its time is ignored): struck as /faults/inject's are. Returns the
  /// fault's index in the log, or -1 when it had no effect (the node is out: repaired, powered down, booting).
  std::int64_t inject(SimWorld& world, const InjectedFault& fault);
  /// A fault event fired (target and generation as pushed).
  void on_event(SimWorld& world, std::uint64_t target, std::uint32_t generation);
  /// A job is starting on its allocation: returns its checkpointing for this run and arms the interrupts of
  /// nodes with faults (a failing Prolog check reports the node).
  RunCheckpointing on_job_start(SimWorld& world, JobIndex job);
  /// The Epilog of a job that left `node` runs HealthCheckProgram (with epilog_check): a fault it sees is reported.
  void epilog_check(SimWorld& world, NodeIndex node);
  /// When a stalled job's interrupt comes (kNever if the job is not stalled at `now`): a stalled job does not
  /// finish its work, whatever its planned end says.
  [[nodiscard]] SimTime stalled_until(JobIndex job, SimTime now) const;
  /// Node `n` was deleted or powered down: a fault on it that is not being recovered goes with it.
  void on_node_removed(SimWorld& world, NodeIndex n);
  /// True if node `n` has a fault the controllers were told of (until it is back in service).
  [[nodiscard]] bool reported(NodeIndex n) const {
    return nodes_[n].phase != Phase::kUp && nodes_[n].phase != Phase::kLatent;
  }
  /// True if node `n` has a fault (noticed or not).
  [[nodiscard]] bool faulty(NodeIndex n) const { return nodes_[n].phase != Phase::kUp; }
  /// Ends the runs of the jobs on `node` for its fault, as stopped `by` (a DOWN node: kSlurmdTimeout).
  void kill_jobs_on(SimWorld& world, NodeIndex node, DetectedBy by);
  /// What noticed node `n`'s fault.
  [[nodiscard]] DetectedBy reported_by(NodeIndex n) const { return nodes_[n].by; }
  /// Seconds the recovery `action` (reset, reboot, repair) of node `n` takes (a repair time is drawn once per
  /// fault); the node is out of service from now on.
  double begin_recovery(NodeIndex n, FaultEffect action);
  /// Node `n`'s recovery ended (it waits to be resumed).
  void end_recovery(NodeIndex n);
  /// Node `n` is back in service: the fault it recovered from is gone.
  void on_resumed(SimWorld& world, NodeIndex n);
  /// Node `n` left service at `now` (drained, down...): a reported fault's out-of-service time starts.
  void on_left_service(NodeIndex n, SimTime now);
  /// The checkpointing of the job's current run (as on_job_start returned it).
  [[nodiscard]] const RunCheckpointing& checkpointing(JobIndex job) const { return run_plan_[job]; }
  /// Records the split of a run that ended (any reason) in the job's runtime; returns it.
  RunSplit account_run(ClusterState& state, JobIndex job, double elapsed_s, bool completed);

  /// What was recorded.
  [[nodiscard]] const FaultLog& log() const { return log_; }
  /// Closes open out-of-service intervals at `horizon`.
  void finish(SimTime horizon);

 private:
  // kLatent: nobody noticed the fault yet; kDetected: reported to the controllers; kRecovering: its recovery runs;
  // kRecovered: recovered, not yet back in service.
  enum class Phase : std::uint8_t { kUp, kLatent, kDetected, kRecovering, kRecovered };
  enum Kind : std::uint64_t { kNextFault = 1, kInjected = 2, kDetect = 3, kInterrupt = 4 };
  struct NodeHealth {
    Phase phase = Phase::kUp;
    FaultEffect effect = FaultEffect::kNone;
    Symptom symptom = Symptom::kNone;
    std::uint32_t fault = 0;  // index in log_.faults of the fault that took it
    SimTime detect_at = kNever;
    DetectedBy by = DetectedBy::kNotDetected;
    bool by_people = false;
    SimTime out_since = kNever;
    std::uint32_t generation = 0;
  };
  struct PendingInterrupt {
    SimTime time = kNever;
    std::uint32_t fault = 0;
    DetectedBy by = DetectedBy::kAtOnce;
    std::uint32_t run = 0;            // the job's restarts when armed
    SimTime progress_until = kNever;  // a stalled job made no progress after this
    bool black_hole = false;          // armed at the job's start on a node already faulty
  };

  static std::uint64_t target(Kind kind, std::uint64_t index) {
    return (static_cast<std::uint64_t>(kind) << 56) | index;
  }
  void arm_next_random(SimWorld& world);
  // Returns the fault's index in the log, or kNoFault when it was suppressed.
  std::uint32_t strike(SimWorld& world, FaultRecord record, std::span<const std::uint32_t> nodes);
  void hold_clock(const FaultEvent& event, std::uint32_t fault, std::span<const std::uint32_t> nodes);
  void renew_clock(SimWorld& world, const FaultEvent& event);
  void hit_jobs_on(SimWorld& world, NodeIndex node, SimTime fault_time, Symptom symptom, std::uint32_t fault);
  void arm_interrupt(SimWorld& world, JobIndex job, Detection when, std::uint32_t fault, SimTime progress_until,
                     bool black_hole);
  void detect(SimWorld& world, NodeIndex node);
  void report(SimWorld& world, NodeIndex node, bool again);
  void clear_fault(SimWorld& world, NodeIndex node);
  void interrupt(SimWorld& world, JobIndex job);
  double repair_time_s(std::uint32_t fault);
  double draw_repair_s();
  RunCheckpointing plan_for(JobIndex job);

  const FaultsConfig& config_;
  const ClusterState& state_;
  DetectionConfig detection_;
  std::optional<FaultProcess> process_;
  std::optional<FaultEvent> next_fault_;
  Rng repair_rng_;
  std::vector<NodeHealth> nodes_;
  std::vector<PendingInterrupt> interrupts_;    // per job
  std::vector<RunCheckpointing> run_plan_;      // per job, current run
  std::vector<std::uint8_t> planned_;           // per job: checkpoint plan recorded
  std::vector<RunCheckpointing> first_plan_;    // per job: interval and write chosen at first start
  std::vector<double> fault_repair_s_;          // per fault: drawn repair time (-1: not drawn)
  std::vector<std::uint32_t> fault_nodes_out_;  // per fault: its nodes still out
  static constexpr std::uint32_t kNoFault = UINT32_MAX;
  // Weibull clocks held until their component returns: by fault (renewed when its last node returns) and by node
  // (faults on a node already out, renewed when it returns).
  std::unordered_map<std::uint32_t, FaultEvent> held_by_fault_;
  std::vector<std::vector<FaultEvent>> held_by_node_;
  std::uint32_t next_generation_ = 0;  // generation of the kNextFault event for next_fault_
  FaultLog log_;
};

}  // namespace gputwin
