// Run summary: jobs by state, utilisation, makespan, waits and bounded slowdown, computed from the final
// ClusterState so the numbers can be checked by hand against the jobs table.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/cloud_log.hpp"
#include "model/cluster_state.hpp"
#include "model/fault_log.hpp"

namespace gputwin {

/// Headline numbers of one run. Times are seconds since the scenario epoch.
struct RunSummary {
  std::uint64_t jobs = 0;      ///< Jobs in the workload, less those rejected at submit.
  std::uint64_t rejected = 0;  ///< Jobs rejected at submit (never fit their partition, limits, quotas).
  std::map<std::string, std::uint64_t> by_state;  ///< Jobs per final state name.
  std::uint64_t started = 0;                      ///< Jobs that started.
  double first_submit_s = 0;                      ///< Earliest submit time.
  double last_submit_s = 0;                       ///< Latest submit time (the arrival window ends here).
  double last_end_s = 0;                          ///< Latest end time.
  double makespan_s = 0;                          ///< last_end - first_submit.
  double cpu_utilization = 0;                     ///< Allocated CPU-seconds / (CPUs x makespan).
  double gpu_utilization = 0;                     ///< Allocated GPU-seconds / (GPUs x makespan).
  double gpu_hours = 0;                           ///< Allocated GPU-hours.
  std::uint64_t requeues = 0;         ///< Runs ended by a requeue, for preemption (REQUEUE) or a fault, that ran again.
  double lost_gpu_hours = 0;          ///< GPU-hours of those discarded runs (not in gpu_hours).
  double cpu_hours = 0;               ///< Allocated CPU-hours.
  double wait_mean_s = 0;             ///< Mean wait (start - submit) of started jobs.
  double wait_p50_s = 0;              ///< Median wait (nearest rank).
  double wait_p95_s = 0;              ///< 95th percentile wait (nearest rank).
  double wait_p99_s = 0;              ///< 99th percentile wait (nearest rank).
  double wait_max_s = 0;              ///< Longest wait.
  double bounded_slowdown_mean = 0;   ///< Mean of max(1, (wait + run) / max(run, 10 s)) over ended jobs.
  std::uint64_t multi_node_jobs = 0;  ///< Started jobs on more than one node.
  std::uint64_t cross_leaf_jobs = 0;  ///< ... of them spanning more than one leaf switch (or block).
  double leaves_per_multi_node_job = 0;  ///< Mean leaf switches (blocks) per multi-node job; 0 when flat.
  double placement_gpu_hours = 0;        ///< GPU-hours that placement added to jobs that ran to their end
                                         ///< (time on their nodes minus their trace time; < 0 if faster).
  // Node lifecycle (zeros without /faults).
  bool lifecycle = false;                      ///< True when the run had a node lifecycle (/faults).
  std::uint64_t faults = 0;                    ///< Faults that struck a node in service.
  std::uint64_t faults_suppressed = 0;         ///< Faults on components already out of service.
  std::uint64_t job_interruptions = 0;         ///< Job runs ended by a fault.
  std::uint64_t black_hole_interruptions = 0;  ///< ... of them started on a faulty node nobody had noticed yet.
  double allocated_gpu_hours = 0;              ///< GPU-hours of every run, requeued ones included.
  double gpu_hours_lost_fault_work = 0;        ///< Work lost to faults (recomputed or never finished).
  double gpu_hours_lost_restart = 0;           ///< Restart overhead (u0) after faults and preemptions.
  double gpu_hours_checkpoint = 0;             ///< Blocking checkpoint writes.
  double goodput = 1;                          ///< 1 - (fault, preemption, restart, checkpoint losses) / allocated.
  double node_availability = 1;                ///< 1 - node time out of service / (nodes x run length).
  std::map<std::string, double> lost_gpu_hours_by_class;  ///< Fault work lost per fault class.
  // Cloud (zeros without /autoscaler and /cost).
  bool autoscaled = false;                    ///< True when an autoscaler ran.
  std::uint64_t nodes_created = 0;            ///< Cloud nodes the autoscaler created.
  std::uint64_t boot_failures = 0;            ///< ... that never registered.
  std::uint64_t nodes_removed = 0;            ///< Cloud nodes it removed after their idle window.
  double pool_node_hours = 0;                 ///< Node-hours the cloud pool was up (booting included).
  double cold_start_s = 0;                    ///< Cold start of a new node.
  bool costed = false;                        ///< True when a cost model ran.
  double cost_total_usd = 0;                  ///< What the cluster cost.
  double cost_idle_usd = 0;                   ///< ... for capacity no job used.
  double cost_per_used_gpu_hour = 0;          ///< cost_total_usd / GPU-hours jobs held.
  std::uint64_t spot_interruptions = 0;       ///< Spot nodes reclaimed.
  std::uint64_t cloud_job_interruptions = 0;  ///< Job runs ended by spot reclaims, operations and failed resumes.
  double gpu_hours_lost_cloud = 0;            ///< Work those runs lost (counted in gpu_hours_lost_fault_work too).
  std::uint64_t quota_cancels = 0;            ///< Jobs cancelled or refused by quotas.
};

/// Bounded-slowdown threshold tau, seconds.
inline constexpr double kSlowdownTauS = 10.0;

/// Nearest-rank percentile (p in [0, 100]) of sorted values; 0 when empty.
double nearest_rank_percentile(const std::vector<double>& sorted, double p);

/// Computes the summary of a finished run; `faults` (may be null) adds the node lifecycle's figures. Jobs
/// rejected at submit (JobRuntime::rejected) are counted as `rejected`, not in `jobs` or `by_state`.
RunSummary summarize(const ClusterState& state, const FaultLog* faults = nullptr, const CloudLog* cloud = nullptr);

}  // namespace gputwin
