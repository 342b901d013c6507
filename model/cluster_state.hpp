// ClusterState: the one picture of nodes, jobs and partitions at the current time, in Slurm's vocabulary.
// Controllers (schedulers) read it; worlds (the simulator, later the twin) change it. Node resources are kept
// as flat arrays (structure of arrays) because node selection scans them in the hot path.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sim_time.hpp"
#include "model/cluster.hpp"
#include "model/job.hpp"

namespace gputwin {

/// Index of a job in ClusterState's job table (submission order), not its Slurm job id.
using JobIndex = std::uint32_t;

/// Resources a job holds on one node.
struct NodeAllocation {
  NodeIndex node = 0;        ///< Node index.
  std::uint32_t cpus = 0;    ///< Allocated CPUs.
  std::uint32_t gpus = 0;    ///< Allocated GPUs.
  std::uint64_t mem_mb = 0;  ///< Allocated memory.
};

/// Node conditions beyond what jobs make of a node (sinfo's DRAIN, DOWN and REBOOT flags).
enum class NodeCondition : std::uint8_t {
  kNone,          ///< In service.
  kDrain,         ///< DRAINING (jobs still running) or DRAINED: no new jobs; recovery waits for the jobs to leave.
  kDown,          ///< DOWN: the node failed (not responding) or is out for repair.
  kRebooting,     ///< REBOOT_ISSUED: rebooting.
  kPoweredDown,   ///< POWERED_DOWN: a cloud node not created (or removed); costs nothing on demand.
  kPoweringUp,    ///< POWERING_UP: a cloud node in its cold start.
  kPoweringDown,  ///< POWERING_DOWN: a cloud node being removed.
  kFail,          ///< FAILING (jobs still running) or FAIL: as DRAIN, for a node an operator expects to fail.
};

/// True for the conditions of a node held out of service (DRAIN, DOWN, REBOOTING, FAIL), as a recovery or an
/// operation leaves it; false in service and in the power states (a node powered down or deleted meanwhile).
inline bool held_out(NodeCondition c) {
  return c == NodeCondition::kDrain || c == NodeCondition::kDown || c == NodeCondition::kRebooting ||
         c == NodeCondition::kFail;
}

/// Why a pending job is pending (a subset of Slurm's job_state_reason).
enum class PendingReason : std::uint8_t {
  kNone,
  kPriority,
  kResources,
  kPartitionDown,
  kPartitionTimeLimit,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobArrayTaskLimit,
  kQosMaxJobsPerUser,
  kQosGrpJobs,
  kQosMaxWallPerJob,
  kQosMaxGresPerUser,
  kQosMaxCpuPerUser,
  kQosMaxMemPerUser,
  kQosMaxNodePerUser,
  kQosGrpGres,
  kQosGrpCpu,
  kQosGrpMem,
  kQosGrpNode,
  kQosMaxGresPerJob,
  kQosMaxCpuPerJob,
  kQosMaxMemPerJob,
  kQosMaxNodePerJob,
  kAssocMaxJobs,
  kAssocGrpJobs,
  kAssocMaxWallPerJob,
  kAssocGrpGres,
  kAssocGrpCpu,
  kAssocGrpMem,
  kAssocGrpNode,
  kAssocMaxGresPerJob,
  kAssocMaxCpuPerJob,
  kAssocMaxMemPerJob,
  kAssocMaxNodePerJob,
  kQosMaxSubmitJobsPerUser,  ///< Submit-time rejections (recorded as the job's reason).
  kQosGrpSubmitJobs,
  kAssocMaxSubmitJobs,
  kAssocGrpSubmitJobs,
  kInvalidAccount,
  kInvalidQos,
  kReservation,             ///< Waiting for its advance reservation to start.
  kInvalidReservation,      ///< Submit-time rejection: unknown reservation or access denied.
  kAssocGrpBillingMinutes,  ///< Refused by a spend quota (Slurm's reason for a billing-minutes limit).
  kJobHeldAdmin,            ///< Held by an operator (scontrol hold): priority 0 until released.
  kBadConstraints,          ///< Submit-time rejection: no node of its partition could ever hold the job (sbatch's
                            ///< "Requested node configuration is not available"; BadConstraints is slurmctld's reason).
  kCount,                   ///< Number of reasons (not a reason).
};

/// Slurm's name of a pending reason.
std::string_view pending_reason_name(PendingReason reason);
/// Parses a Slurm reason string as pending_reason_name prints it.
std::optional<PendingReason> parse_pending_reason(std::string_view name);

/// A job's life in the run.
struct JobRuntime {
  JobState state = JobState::kPending;  ///< Current state.
  bool submitted = false;               ///< True once the submit event has happened.
  bool rejected = false;                ///< Refused at submit (limits, invalid account or QOS).
  bool configuring = false;    ///< Allocated, waiting CONFIGURING for powered-down nodes to resume (run not begun).
  std::uint32_t restarts = 0;  ///< Times the job was requeued (preemption) and ran again.
  double lost_gpu_s = 0;       ///< GPU-seconds of runs discarded by requeues.
  double lost_s = 0;           ///< Run seconds discarded by requeues.
  std::uint32_t interruptions = 0;              ///< Runs ended by a fault (node failure, XID, hang).
  double fault_lost_gpu_s = 0;                  ///< GPU-seconds of work lost to faults (recomputed after restart).
  double restart_gpu_s = 0;                     ///< GPU-seconds spent restarting from a checkpoint (u0).
  double checkpoint_gpu_s = 0;                  ///< GPU-seconds spent writing checkpoints (blocking writes).
  double prior_runs_gpu_s = 0;                  ///< GPU-seconds of all earlier (requeued) runs.
  double work_saved_s = 0;                      ///< Trace run seconds already done and kept (checkpoints).
  double run_length_s = 0;                      ///< Reference run seconds the current run needs (work + overheads).
  PendingReason reason = PendingReason::kNone;  ///< Last pending reason set by the scheduler.
  std::uint32_t partition = 0;                  ///< Partition index.
  std::uint32_t priority = 0;                   ///< Priority as the scheduler sorts it.
  std::int64_t time_limit_s = 0;                ///< Effective time limit (after partition defaults), seconds.
  SimTime start = -1;                           ///< Start time, -1 if never started.
  SimTime end = -1;                             ///< End time, -1 if not ended.
  SimTime planned_end = -1;                     ///< When the world will end it (run end or time-limit kill).
  std::uint32_t alloc_offset = 0;               ///< Offset of its NodeAllocations in the allocation pool.
  std::uint32_t alloc_count = 0;                ///< Number of NodeAllocations.
};

/// A run of a job that a requeue discarded: JobRuntime keeps only the last run, so earlier ones are kept here (a
/// few per fault or preemption). Their allocations stay in the allocation pool (a new run appends its own).
struct PastRun {
  SimTime start = 0;               ///< When the run started.
  SimTime end = 0;                 ///< When it ended (fault, preemption).
  SimTime requeued = 0;            ///< When the job went back to PENDING (the run's resources released).
  JobIndex job = 0;                ///< The job.
  std::uint32_t alloc_offset = 0;  ///< Offset of the run's NodeAllocations in the allocation pool.
  std::uint32_t alloc_count = 0;   ///< Number of NodeAllocations.
};

/// Nodes' free resources, jobs and their states.
class ClusterState {
 public:
  /// Builds the state for `config` (kept by reference; must outlive this) and the jobs of the run.
  ClusterState(const ClusterConfig& config, std::vector<JobSpec> jobs);
  /// A copy of `other` as it is now, over `config`: an equal copy of other's configuration that must outlive this
  /// (a live run's snapshot is written from such a copy while the simulation goes on). The job specs are shared,
  /// not copied: they never change once added.
  ClusterState(const ClusterState& other, const ClusterConfig& config) : ClusterState(other) { config_ = &config; }
  /// Makes this the copy the constructor above makes, reusing this state's memory (a live run's copies: memory
  /// touched before costs no page faults). The vectors that grow during a run keep room for as much as `other`'s
  /// have room for, so that the next copy, a little larger, still fits.
  void assign_copy(const ClusterState& other, const ClusterConfig& config);

  /// The configuration.
  [[nodiscard]] const ClusterConfig& config() const { return *config_; }
  /// Number of nodes.
  [[nodiscard]] std::size_t node_count() const { return free_cpus_.size(); }
  /// Free CPUs of every node.
  [[nodiscard]] std::span<const std::uint32_t> free_cpus() const { return free_cpus_; }
  /// Free GPUs of every node.
  [[nodiscard]] std::span<const std::uint32_t> free_gpus() const { return free_gpus_; }
  /// Free memory (MB) of every node.
  [[nodiscard]] std::span<const std::uint64_t> free_mem_mb() const { return free_mem_mb_; }
  /// Number of jobs running (or completing) on every node.
  [[nodiscard]] std::span<const std::uint32_t> node_jobs() const { return node_jobs_; }
  /// True if the node can take new work (UP, not drained, not completing).
  [[nodiscard]] bool node_schedulable(NodeIndex n) const { return schedulable_[n] != 0; }
  /// Schedulable flags of every node (1 = can take work).
  [[nodiscard]] std::span<const std::uint8_t> schedulable() const { return schedulable_; }
  /// Scheduling weight of every node: its Weight, raised while power saving has it POWERED_DOWN (used last).
  [[nodiscard]] const std::vector<std::uint32_t>& node_weights() const { return weights_; }
  /// Node `n`'s condition (DRAIN, DOWN, REBOOT, power states); kNone while it is in service.
  [[nodiscard]] NodeCondition node_condition(NodeIndex n) const {
    return conditions_.empty() ? NodeCondition::kNone : conditions_[n];
  }
  /// Slurm's reason for node `n`'s condition (empty while it is in service or none was given).
  [[nodiscard]] std::string_view node_reason(NodeIndex n) const {
    return reasons_.empty() ? std::string_view() : std::string_view(reasons_[n]);
  }

  /// Per partition: how many of its schedulable nodes have at least g free GPUs, for g = 0..max GPUs.
  [[nodiscard]] std::uint32_t nodes_with_free_gpus(std::uint32_t partition, std::uint32_t g) const;
  /// Bitmap (64 nodes per word) of nodes with at least `g` free GPUs and a free CPU (g = 0: any free CPU).
  [[nodiscard]] const std::uint64_t* free_gpu_bits(std::uint32_t g) const {
    return g <= max_gpus_ ? free_bits_.data() + static_cast<std::size_t>(g) * words_ : nullptr;
  }
  /// Bitmap (64 nodes per word) of schedulable nodes without a job: their free resources are their configuration's
  /// (every CPU, GPU and MB free).
  [[nodiscard]] const std::uint64_t* untouched_bits() const { return untouched_bits_.data(); }
  /// Bitmap of the nodes of partition `p`.
  [[nodiscard]] const std::uint64_t* partition_bits(std::uint32_t p) const {
    return partition_bits_.data() + static_cast<std::size_t>(p) * words_;
  }
  /// 64-bit words in a node bitmap.
  [[nodiscard]] std::size_t bitmap_words() const { return words_; }
  /// Largest GPU count of any node.
  [[nodiscard]] std::uint32_t max_node_gpus() const { return max_gpus_; }

  /// Per partition: free CPUs summed over its schedulable nodes.
  [[nodiscard]] std::uint64_t partition_free_cpus(std::uint32_t partition) const { return part_free_cpus_[partition]; }
  /// Per partition: free GPUs summed over its schedulable nodes.
  [[nodiscard]] std::uint64_t partition_free_gpus(std::uint32_t partition) const;
  /// Free GPUs summed over every node, schedulable or not.
  [[nodiscard]] std::uint64_t total_free_gpus() const { return total_free_gpus_; }

  /// All jobs' specifications, in job-index order.
  [[nodiscard]] const std::vector<JobSpec>& specs() const { return *specs_; }
  /// One job's specification.
  [[nodiscard]] const JobSpec& spec(JobIndex j) const { return (*specs_)[j]; }
  /// The job specs, shared: a holder keeps them as they are now (add_job then gives this state a copy to grow).
  [[nodiscard]] std::shared_ptr<const std::vector<JobSpec>> shared_specs() const { return specs_; }
  /// One job's runtime state.
  [[nodiscard]] const JobRuntime& job(JobIndex j) const { return jobs_[j]; }
  /// Mutable runtime state (for worlds and schedulers setting priority or reason).
  [[nodiscard]] JobRuntime& job_mut(JobIndex j) { return jobs_[j]; }
  /// Number of jobs.
  [[nodiscard]] std::size_t job_count() const { return jobs_.size(); }
  /// A job's allocation.
  [[nodiscard]] std::span<const NodeAllocation> allocation(JobIndex j) const {
    return {alloc_pool_.data() + jobs_[j].alloc_offset, jobs_[j].alloc_count};
  }
  /// GPUs job `j` holds in its current (or last) run.
  [[nodiscard]] std::uint32_t allocated_gpus(JobIndex j) const {
    std::uint32_t gpus = 0;
    for (const NodeAllocation& a : allocation(j)) gpus += a.gpus;
    return gpus;
  }
  /// The allocation of an earlier run.
  [[nodiscard]] std::span<const NodeAllocation> allocation(const PastRun& run) const {
    return {alloc_pool_.data() + run.alloc_offset, run.alloc_count};
  }
  /// Entries in the allocation pool (every run's allocations: offsets are below this).
  [[nodiscard]] std::size_t allocation_pool_size() const { return alloc_pool_.size(); }
  /// The allocation pool: every run's allocations, each at its run's alloc_offset (entries are only appended).
  [[nodiscard]] std::span<const NodeAllocation> allocation_pool() const { return alloc_pool_; }
  /// Runs discarded by requeues, in requeue order.
  [[nodiscard]] std::span<const PastRun> past_runs() const { return past_runs_; }

  /// Allocates `allocation` to job `j` (which must be pending) at time `now`; it becomes RUNNING.
  void allocate(JobIndex j, std::span<const NodeAllocation> allocation, SimTime now);
  /// Ends job `j` at `now` with `state`; its nodes stay COMPLETING until release() is called.
  void finish(JobIndex j, JobState state, SimTime now);
  /// Returns the resources of finished job `j` to its nodes (epilog complete).
  void release(JobIndex j);
  /// Returns finished and released job `j` to PENDING at `now` for another run (requeue): the run is kept in
  /// past_runs(), restarts and prior_runs_gpu_s count it; `lost_s` of it (default: all) is counted in lost_s and in
  /// fault_lost_gpu_s (`by_fault`) or lost_gpu_s (preemption).
  void requeue(JobIndex j, SimTime now, double lost_s = -1, bool by_fault = false);
  /// Takes node `n` out of scheduling (drained, down, rebooting) or puts it back; running jobs keep their
  /// resources. Counts as a node update.
  void set_node_schedulable(NodeIndex n, bool schedulable);
  /// Sets node `n`'s scheduling weight (the selector takes the lowest first). Counts as a node update.
  void set_node_weight(NodeIndex n, std::uint32_t weight);
  /// Records node `n`'s condition and reason (worlds only; set_node_schedulable decides whether it takes work).
  void set_node_condition(NodeIndex n, NodeCondition condition, std::string_view reason);
  /// Counter that changes whenever a node enters or leaves service (Slurm's last_node_update).
  [[nodiscard]] std::uint64_t node_update_count() const { return node_updates_; }
  /// Marks job `j` as ended without ever running (e.g. rejected at submit).
  void end_pending(JobIndex j, JobState state, SimTime now);
  /// Appends a job submitted during the run (a live run's `POST job/submit`) to the job table, in partition
  /// `partition`: its index is job_count() before the call and stays stable. It is not submitted yet (the world
  /// submits it). The table is then no longer in submit order past the loaded workload.
  JobIndex add_job(JobSpec spec, std::uint32_t partition);

  /// Counter that changes whenever node `n`'s free resources change (lets scratch copies refresh lazily).
  [[nodiscard]] std::uint32_t node_version(NodeIndex n) const { return node_version_[n]; }

  /// Counter that changes whenever any job changes state (Slurm's last_job_update).
  [[nodiscard]] std::uint64_t job_update_count() const { return job_updates_; }
  /// Counts a job change made outside allocate/finish (submit, priority update).
  void note_job_update() { ++job_updates_; }

 private:
  void adjust_partition_counters(NodeIndex n, int sign);
  void update_free_bits(NodeIndex n);
  void update_untouched_bit(NodeIndex n);
  // Takes (sign -1) or gives back (+1) allocation `a` on its node, with the partition counters and free bits.
  void change_free(const NodeAllocation& a, int sign);

  const ClusterConfig* config_;  // not owned
  std::vector<std::uint32_t> free_cpus_;
  std::vector<std::uint32_t> free_gpus_;
  std::uint64_t total_free_gpus_ = 0;  // sum of free_gpus_
  std::vector<std::uint64_t> free_mem_mb_;
  std::vector<std::uint32_t> node_jobs_;
  std::vector<std::uint8_t> schedulable_;
  std::vector<std::uint32_t> weights_;     // per node: scheduling weight
  std::vector<NodeCondition> conditions_;  // per node, once any node left service
  std::vector<std::string> reasons_;       // per node, with conditions_
  std::vector<std::uint32_t> node_version_;
  std::vector<std::vector<std::uint32_t>> node_partitions_;
  std::uint32_t max_gpus_ = 0;
  std::vector<std::uint32_t> part_gpu_hist_;  // partition * (max_gpus_ + 1) + free gpus -> node count
  std::vector<std::uint64_t> part_free_cpus_;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> free_bits_;       // (max_gpus_ + 1) bitmaps, see free_gpu_bits()
  std::vector<std::uint64_t> partition_bits_;  // one bitmap per partition
  std::vector<std::uint64_t> untouched_bits_;  // see untouched_bits()
  // Immutable once added, so copies share them (a copy made for a live snapshot costs no spec); add_job copies them
  // first when shared.
  std::shared_ptr<std::vector<JobSpec>> specs_;
  std::vector<JobRuntime> jobs_;
  std::vector<NodeAllocation> alloc_pool_;
  std::vector<PastRun> past_runs_;
  std::uint64_t job_updates_ = 0;
  std::uint64_t node_updates_ = 0;
};

}  // namespace gputwin
