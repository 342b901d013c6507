// Closed-form fault detection timing, so the simulator needs no event per node per tick: when a fault at time t
// on node n is first seen by Slurm's HealthCheckProgram (HealthCheckInterval, HealthCheckNodeState incl. CYCLE),
// by an active check run as a job (DCGM diag, NCCL all-reduce tests, Soperator style), by slurmctld's pings
// (SlurmdTimeout) or by the NCCL watchdog, and when the job on the node stops.
//
// Slurm timing, reproduced from the source (slurm-semantics.md 4; gpu-domain.md 3.1-3.3). slurmctld's
// background loop ticks once a second from its start P (controller.c:_slurmctld_background).
// - Without CYCLE every node's check starts at P + k*I, k >= 1 (I = HealthCheckInterval), all nodes at once.
// - With CYCLE (ping_nodes.c:run_health_check) the loop calls run_health_check every tick from P + I on; each
//   call checks the next L = max(2N / I, 10) nodes in node-table order (N nodes, integer division); after the
//   last batch the next cycle waits I seconds. So node n starts at P + I + c*(I + B - 1) + floor(n / L),
//   c >= 0, where B = ceil(N / L) batches: the period is I + B - 1 (about 1.5 I for large N), not I.
// - SlurmdTimeout (ping_nodes.c:ping_nodes): ping rounds every T/3 from P + 1 + MIN_CHECKIN_TIME (3 s); a round
//   sets a node DOWN when its last response is at or before the previous round's time minus T. So a node
//   last heard at L goes DOWN at R + T/3, where R is the first round at or after L + T: T + T/3 to T + 2T/3
//   after L (slurm-semantics.md 4 summarises this as "roughly T to 4T/3 after the last contact").
// A check sees the node as it is when the check starts; a fault during a running check is seen by the next.
// The program is killed after HealthCheckTimeout (60 s), so longer checks (DCGM level 2+) must run as active
// checks; validate() says so. Checks that Slurm skips for the node's state (HealthCheckNodeState=IDLE, ...) are
// the caller's to skip: ask next_health_check_start() again after the skipped start.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/sim_time.hpp"
#include "faults/fault_types.hpp"

namespace gputwin {

/// One kind of check a health-check program or an active check can run.
enum class CheckKind : std::uint8_t {
  kXidLog,         ///< Scan the kernel log / DCGM health watches for critical XIDs.
  kNvidiaSmi,      ///< nvidia-smi answers for every GPU.
  kIbLink,         ///< InfiniBand / NIC ports up (ibstat).
  kNodeBasics,     ///< Mounts, services, disks (LBNL NHC style; Meta's 5-minute checks).
  kDcgmDiag1,      ///< `dcgmi diag -r 1` (quick: software, row-remap and retirement state).
  kDcgmDiag2,      ///< `dcgmi diag -r 2` (medium: + PCIe, short memory tests).
  kDcgmDiag3,      ///< `dcgmi diag -r 3` (long: + stress, power, memory bandwidth, NVLink).
  kDcgmDiag4,      ///< `dcgmi diag -r 4` (extended: + memtest, pulse test, EUD).
  kNcclAllReduce,  ///< A single-node or pairwise NCCL all-reduce test against expected bus bandwidth.
};

/// What a check kind takes and sees.
struct CheckInfo {
  CheckKind kind;              ///< The check.
  std::string_view name;       ///< Short name ("dcgm_diag_3").
  double run_time_s;           ///< Typical run time on an 8-GPU node, seconds.
  std::uint32_t symptom_mask;  ///< Bit (1 << Symptom) for each symptom it detects.
  std::string_view source;     ///< Where the run time and coverage come from.
};

/// All check kinds, in enum order.
std::span<const CheckInfo> check_catalogue();
/// The entry of `kind`.
const CheckInfo& check_info(CheckKind kind);
/// Whether a check of `kind` detects `symptom`.
bool check_detects(CheckKind kind, Symptom symptom);

/// A set of checks run together (a HealthCheckProgram script, or an active check job).
struct CheckProgram {
  std::vector<CheckKind> checks{};     ///< The checks it runs.
  std::optional<double> run_time_s{};  ///< Measured run time; default: the sum of the checks' typical times.
};

/// The program's run time in seconds.
double program_run_time_s(const CheckProgram& program);
/// Whether any of the program's checks detects `symptom`.
bool program_detects(const CheckProgram& program, Symptom symptom);

/// HealthCheckNodeState (slurm.conf): which nodes the program runs on; all false = ANY (Slurm's default).
struct HealthCheckNodeState {
  bool idle = false;             ///< IDLE: nodes with no allocated CPUs.
  bool alloc = false;            ///< ALLOC: fully allocated nodes.
  bool mixed = false;            ///< MIXED: partly allocated nodes.
  bool nondrained_idle = false;  ///< NONDRAINED_IDLE: idle nodes that are not drained.
  bool cycle = false;            ///< CYCLE: spread the nodes over the interval (see the file comment).
  bool start_only = false;       ///< START_ONLY: only when slurmd starts; no periodic runs.
};

/// Whether Slurm runs the program on a node in this state (ping_nodes.c:run_health_check's filter).
bool health_check_runs_on(const HealthCheckNodeState& state, std::uint32_t cpus_used, std::uint32_t cpus_total,
                          bool drained);

/// slurm.conf settings that time detection, with Slurm's defaults.
struct SlurmHealthConfig {
  SimTime slurmctld_start = 0;                     ///< When slurmctld started: the phase of its timers.
  std::int64_t health_check_interval_s = 0;        ///< HealthCheckInterval (0: off, Slurm's default).
  HealthCheckNodeState health_check_node_state{};  ///< HealthCheckNodeState (default ANY).
  std::int64_t health_check_timeout_s = 60;        ///< The program is killed after this (slurm.conf(5): 60 s).
  std::int64_t slurmd_timeout_s = 300;             ///< SlurmdTimeout (0: nodes are never set DOWN for silence).
  std::uint32_t node_count = 0;                    ///< Nodes in slurmctld's table (CYCLE's batch size uses it).
};

/// Nodes per tick, ticks per cycle and cycle period of HealthCheckNodeState=CYCLE.
struct HealthCheckCycle {
  std::uint32_t nodes_per_tick = 0;  ///< L = max(2N / HealthCheckInterval, 10).
  std::uint32_t ticks = 0;           ///< B = ceil(N / L): one-second ticks a cycle takes.
  std::int64_t period_s = 0;         ///< HealthCheckInterval + B - 1: time between a node's checks.
};

/// The CYCLE layout for this configuration (zeros unless CYCLE is on with nodes and an interval).
HealthCheckCycle health_check_cycle(const SlurmHealthConfig& config);

/// When the periodic HealthCheckProgram next starts on `node` at or after `t` (kNever if it never does).
SimTime next_health_check_start(const SlurmHealthConfig& config, std::uint32_t node, SimTime t);

/// When slurmctld sets a node DOWN ("Not responding") whose last response was at `last_response`
/// (kNever when SlurmdTimeout is 0).
SimTime slurmd_timeout_down_time(const SlurmHealthConfig& config, SimTime last_response);

/// PyTorch/NCCL watchdog default: a collective that has not finished in 10 minutes aborts the job
/// (gpu-domain.md 0 and 3.3).
inline constexpr double kNcclWatchdogTimeoutS = 600;

/// When the NCCL watchdog kills a job whose collective hung at `hang_start`.
SimTime nccl_watchdog_fire_time(SimTime hang_start, double timeout_s = kNcclWatchdogTimeoutS);

/// A check run on every node at phase + k * period (k >= 0) as a job (Soperator's active checks run at cron
/// `0 0,12 * * *`); it is not bound by the 60 s HealthCheckProgram limit. Queueing behind running jobs is
/// ignored: the check is taken to start on time.
struct ActiveCheck {
  CheckProgram program{};  ///< What it runs.
  SimTime period = 0;      ///< Time between runs.
  SimTime phase = 0;       ///< Time of one run.
};

/// Everything that decides when a fault is detected.
struct DetectionConfig {
  SlurmHealthConfig slurm{};                               ///< Slurm's timers.
  CheckProgram program{};                                  ///< HealthCheckProgram's checks.
  std::vector<ActiveCheck> active_checks{};                ///< Checks run as jobs.
  double nccl_watchdog_timeout_s = kNcclWatchdogTimeoutS;  ///< NCCL watchdog timeout.
};

/// Throws FaultConfigError for settings that cannot work (e.g. a program longer than the 60 s kill limit).
void validate(const DetectionConfig& config);

/// The mechanism that noticed a fault.
enum class DetectedBy : std::uint8_t {
  kNotDetected,    ///< Nothing notices it.
  kAtOnce,         ///< Known at the fault time (the job crashed, or operators took the node).
  kHealthCheck,    ///< HealthCheckProgram.
  kActiveCheck,    ///< An active check job.
  kSlurmdTimeout,  ///< slurmctld set the node DOWN for not responding.
  kNcclWatchdog,   ///< The job's NCCL watchdog fired.
  kProlog,         ///< HealthCheckProgram run by the Prolog of a job starting on the node.
  kEpilog,         ///< HealthCheckProgram run by the Epilog of a job that left the node.
};

/// When and how a fault was noticed.
struct Detection {
  SimTime time = kNever;                     ///< When (kNever: not detected).
  DetectedBy by = DetectedBy::kNotDetected;  ///< By what.
};

/// When the cluster learns that `node` is bad after a fault with `symptom` at `fault_time`: kAtOnce for
/// announced faults, SlurmdTimeout for a dead host (taken to have answered up to its death), else the first
/// health or active check that sees the symptom. Faults that leave the node healthy (kNone, kAppError, kHang)
/// are never detected on the node. Never throws.
Detection detect_node_fault(const DetectionConfig& config, std::uint32_t node, SimTime fault_time, Symptom symptom);

/// When the job running on `node` stops because of the fault itself: at once if it crashes (JobImpact::kFailsNow);
/// for stalls, the NCCL watchdog or the node going DOWN (dead host), whichever is first; jobs that only slow down
/// keep running (a controller may requeue them when the fault is detected).
Detection job_interrupt(const DetectionConfig& config, std::uint32_t node, SimTime fault_time, Symptom symptom);

/// Lower-case name of a detection mechanism ("health_check", "slurmd_timeout", ...).
std::string_view to_string(DetectedBy by);

}  // namespace gputwin
