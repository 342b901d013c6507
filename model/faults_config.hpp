// Node lifecycle as a scenario configures it (/faults): which fault profile strikes the cluster and how, how
// faults are detected (HealthCheckProgram, active checks, SlurmdTimeout, NCCL watchdog), how long drained nodes
// take to come back (GPU reset, reboot, automated and manual repair), what happens to the jobs they hit (Slurm's
// requeue rules, the job's own restart) and how jobs checkpoint. The fault process, detection timing and
// checkpoint arithmetic themselves are in faults/; the simulator wires them in sim/node_lifecycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/checkpoint.hpp"
#include "faults/fault_process.hpp"
#include "faults/fault_profiles.hpp"
#include "faults/health_check.hpp"

namespace gputwin {

/// How long a node stays out after a fault, by effect (gpu-domain.md 0 and 3.4).
struct RepairTimes {
  double gpu_reset_s = 300;           ///< RESET: drain, reset the GPU, recheck (~5 min [U]).
  double reboot_s = 600;              ///< REBOOT: host reboot plus GPU stack ready (~10 min [U]).
  double auto_repair_s = 7200;        ///< SERVICE: mean automated repair (2 h, AIReSim), exponential.
  double manual_repair_s = 172800;    ///< SERVICE: mean manual repair when automation fails (2 d), exponential.
  double p_manual = 0.8;              ///< P(automated repair fails and a technician is needed) (AIReSim: 0.8).
  double undetected_found_s = 86400;  ///< Faults no configured check sees are found by people after this [U].
  /// An admin resumes a node ReturnToService leaves DOWN this long after it registers again (< 0: the same as
  /// undetected_found_s, the time people take to notice a node).
  double admin_resume_s = -1;
  /// Nodes out for repair (SERVICE) are set FAIL (FAILING while their jobs run) instead of DRAIN, then DOWN.
  bool fail_state = false;
};

/// How a matching job checkpoints (/faults/checkpoint/N).
struct CheckpointRule {
  /// How the interval is chosen.
  enum class Interval : std::uint8_t {
    kFixed,  ///< `interval_s` as configured.
    kYoung,  ///< Young's sqrt(2 delta M), M the job's MTTF from the fault profile and its allocation.
    kDaly,   ///< Daly's higher-order optimum.
  };
  std::uint32_t min_gpus = 1;            ///< Applies to jobs with at least this many GPUs.
  std::string name_prefix;               ///< ... whose name starts with this (empty: any).
  Interval interval = Interval::kFixed;  ///< How the interval is chosen.
  double interval_s = 1800;              ///< Compute time between checkpoints (kFixed).
  double write_s = 60;                   ///< Checkpoint write time (given, or from the model size and storage).
  double restart_s = 600;                ///< Restart overhead after a failure (u0: reschedule, init, load).
  bool blocking = true;                  ///< Training waits for the write (false: asynchronous checkpoints).
};

/// A fault placed by hand (/faults/inject/N): tests, what-if studies, replaying an incident.
struct InjectedFault {
  double time_s = 0;                        ///< When.
  std::uint32_t node = 0;                   ///< Node index.
  std::uint32_t gpu = 0;                    ///< GPU index within the node (GPU faults).
  std::uint32_t xid = 0;                    ///< XID it is reported as (0: none).
  FaultEffect effect = FaultEffect::kNone;  ///< What the simulator does (from the XID catalogue by default).
  Symptom symptom = Symptom::kNone;         ///< How it shows itself (from the XID catalogue by default).
  std::string cause;                        ///< Free text for the results ("injected" by default).
};

/// /faults/health: the health controller's limits and escalation rules (all off by default).
struct HealthPolicy {
  /// Most nodes the controller may hold out of service at once (drained, failed, rebooting, in repair, awaiting
  /// an admin), 0: no limit. A node found faulty beyond it stays in service until another returns (a safety rail
  /// against a health check gone wrong draining the cluster). Nodes that stop responding are out regardless.
  std::uint32_t max_nodes_out = 0;
  /// The same limit as a percentage of the cluster's nodes (0: none); the smaller of the two applies.
  double max_nodes_out_pct = 0;
  /// An XID that recurs on a node within this many seconds of its last report is handled by the XID catalogue's
  /// escalated action (e.g. XID 48, a double-bit ECC error: GPU reset, a repair if it recurs). 0: off.
  double xid_recurrence_s = 0;
  /// A node that would be rebooted or reset for the N-th time within `reboot_window_s` is sent to repair instead
  /// (a lemon: "three strikes"). 0: off.
  std::uint32_t reboots_before_repair = 0;
  /// Window of reboots_before_repair, seconds.
  double reboot_window_s = 7 * 86400.0;
};

/// /faults: everything the node lifecycle needs.
struct FaultsConfig {
  bool enabled = false;                    ///< True when /faults is present and not disabled.
  bool random_faults = false;              ///< True when a profile drives random faults.
  FaultProfile profile;                    ///< The (merged) fault profile, rates scaled by `rate_scale`.
  double rate_scale = 1;                   ///< Multiplier on every class's rate (what-if).
  FaultProcessConfig process;              ///< Distribution, Weibull shape, lemons (seed set by the runner).
  std::vector<std::uint32_t> lemon_nodes;  ///< Explicit lemon nodes (indices).
  std::uint32_t nodes_per_rack = 0;        ///< Rack groups of consecutive nodes (0: no rack faults).
  std::uint32_t nodes_per_switch = 0;      ///< Switch groups (0: the topology's leaves, if any).
  std::uint32_t links_per_node = 8;        ///< Scale-out NIC links per node.
  DetectionConfig detection;               ///< Health checks, SlurmdTimeout, watchdog (node_count by runner).
  RepairTimes repair;                      ///< How long nodes stay out.
  bool restart_failed_jobs = true;         ///< A job killed by a fault (FAILED) is requeued by its wrapper.
  bool epilog_check = false;               ///< The Epilog runs HealthCheckProgram: a node a job leaves is checked.
  bool prolog_check = false;               ///< The Prolog runs HealthCheckProgram: a failure drains, requeues the job.
  /// ReturnToService: 0, a node DOWN for not responding stays DOWN after it registers until an admin resumes it
  /// (repair.admin_resume_s); 1 or 2, it returns when it registers. Default 2, as on the recorded clusters
  /// (Slurm's own default is 0). Nodes DOWN for repair come back with the repair either way.
  std::uint8_t return_to_service = 2;
  /// Meta style: a detected fault removes the node and requeues its jobs (gpu-domain.md 1.2); Slurm's own drain
  /// lets running jobs finish. A decision of the health controller.
  bool requeue_on_detection = false;
  HealthPolicy health;                      ///< The health controller's limits and escalation rules.
  std::uint32_t max_restarts = 100;         ///< Runs a job may be restarted after faults before it gives up.
  std::vector<CheckpointRule> checkpoints;  ///< Checkpointing rules, first match wins.
  std::vector<InjectedFault> inject;        ///< Faults placed by hand.
};

/// The checkpoint rule for a job of `gpus` GPUs named `name`, or nullptr.
const CheckpointRule* match_checkpoint(const FaultsConfig& config, std::uint32_t gpus, const std::string& name);

}  // namespace gputwin
