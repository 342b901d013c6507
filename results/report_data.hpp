// What `gputwin report` shows, read from a results folder's results.sqlite into plain numbers: the summary's
// key/value rows, waits and cluster series per time bucket, faults, job interruptions, checkpoint plans, costs,
// scaling actions, quota events and cluster operations. Each optional part is empty when its table is absent, so a
// report of an older, fault-free or on-premises run simply has fewer sections.
// Rendering (HTML, SVG, text) is cli/report_command's job; the numbers are here so they can be tested alone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gputwin {

/// The run that wrote the results (table `runs`; empty when absent).
struct ReportRun {
  std::string scenario;   ///< Scenario name.
  std::int64_t seed = 0;  ///< Seed.
  std::string policy;     ///< Scheduling policy.
  std::string version;    ///< gputwin version.
};

/// Waits of the jobs that started in one time bucket.
struct WaitBucket {
  double start_s = 0;    ///< Bucket start (a multiple of the step).
  std::size_t jobs = 0;  ///< Jobs that started in [start_s, start_s + step).
  double mean_s = 0;     ///< Mean wait (start - submit).
  double p95_s = 0;      ///< 95th percentile wait, nearest rank (as the summary's wait_p95_s).
};

/// Means of the cluster_metrics samples in one time bucket.
struct ClusterBucket {
  double start_s = 0;                                                                        ///< Bucket start.
  double nodes_idle = 0, nodes_mixed = 0, nodes_alloc = 0, nodes_down = 0, nodes_drain = 0;  ///< Nodes by state.
  double jobs_pending = 0, jobs_running = 0;                                                 ///< Jobs.
  double gpus_alloc = 0, gpus_free = 0, gpus_free_fragmented = 0;                            ///< GPUs.
  double nodes_powered_down = 0;  ///< Cloud nodes powered down or powering up/down (0 for files without the column).
};

/// Faults and their cost grouped by one attribute (class, XID).
struct FaultGroup {
  std::string key;            ///< The class name, or the XID ("none" when the fault has none).
  std::size_t faults = 0;     ///< Faults.
  std::int64_t jobs_hit = 0;  ///< Jobs they hit.
  double lost_gpu_hours = 0;  ///< GPU-hours they cost.
};

/// How quickly faults were noticed, per detecting mechanism.
struct DetectionDelay {
  std::string detected_by;                  ///< Mechanism ("health_check", ...; "all" for every fault).
  std::size_t faults = 0;                   ///< Faults it is named for.
  std::size_t detected = 0;                 ///< ... of them with a detected_time.
  double mean_s = 0, p50_s = 0, p95_s = 0;  ///< detected_time - time over those (nearest-rank percentiles).
};

/// The `faults` table, summarised.
struct FaultsReport {
  std::size_t faults = 0;                    ///< Rows.
  double lost_gpu_hours = 0;                 ///< Sum of lost_gpu_hours.
  std::vector<std::string> effects;          ///< Effects seen, in the simulator's order, then others by name.
  std::vector<std::vector<double>> per_day;  ///< per_day[effect][day]: faults of that effect on day (0-based).
  std::vector<FaultGroup> by_class;          ///< By class, most faults first.
  std::vector<FaultGroup> by_xid;            ///< By XID, most faults first.
  std::vector<DetectionDelay> detection;     ///< By detected_by (by name), then "all".
};

/// Interruptions of jobs of one size (GPUs).
struct SizeBucket {
  std::string label;              ///< "1-8", "9-64", "65-512", "513+" (and "no GPU", "job not in jobs").
  std::size_t jobs = 0;           ///< Jobs of this size in `jobs`.
  std::size_t interruptions = 0;  ///< Interruptions of those jobs.
  double run_s = 0;               ///< Their run time: sum of jobs.run_time plus the interrupted runs' run_s.
  std::optional<double> mttf_h;   ///< Observed mean time to failure, run_s / interruptions / 3600.
};

/// The `job_interruptions` table, summarised.
struct InterruptionsReport {
  std::size_t interruptions = 0;    ///< Rows.
  std::size_t requeued = 0;         ///< ... of which requeued.
  double lost_gpu_hours = 0;        ///< Sum of lost_gpu_hours.
  std::vector<double> per_day;      ///< Interruptions on each day (0-based).
  std::vector<SizeBucket> by_size;  ///< The four size buckets, then the others when they have interruptions.
  /// Runs ended by something other than a fault (spot_reclaim, operation, resume_failure), by cause name; they are
  /// not in the counts above, which are about faults.
  std::map<std::string, std::size_t> other_causes;
  double other_lost_gpu_hours = 0;  ///< GPU-hours those runs lost.
};

/// One point of the cluster's cost series (one time bucket).
struct CostBucket {
  double start_s = 0;         ///< Bucket start.
  double burn_usd_per_h = 0;  ///< Mean burn rate of the samples in the bucket.
  double total_usd = 0;       ///< Cumulative cost at the bucket's last sample.
};

/// The `costs` table, summarised.
struct CostsReport {
  std::vector<CostBucket> cluster;                       ///< Scope 'cluster' over time.
  std::optional<double> cluster_total_usd;               ///< Its last total.
  std::vector<std::pair<std::string, double>> users;     ///< Final total per user, largest first.
  std::vector<std::pair<std::string, double>> accounts;  ///< Final total per account, largest first.
};

/// Checkpointed jobs with the same plan: job_checkpoints rows equal but for job_id.
struct CheckpointGroup {
  std::int64_t gpus = 0;                  ///< GPUs of each job.
  std::vector<std::int64_t> job_ids;      ///< Its jobs, by id.
  std::optional<double> interval_s;       ///< Compute between checkpoints (none: no finite interval).
  double write_s = 0;                     ///< Checkpoint write time.
  double restart_s = 0;                   ///< Restart overhead after a failure.
  bool blocking = true;                   ///< Training waits for each write (false: asynchronous).
  std::optional<double> mttf_h;           ///< The job's MTTF from the fault profile (none without one).
  std::optional<double> young_s;          ///< Young's interval sqrt(2 write MTTF).
  std::optional<double> daly_s;           ///< Daly's interval.
  std::optional<double> goodput;          ///< Expected goodput at interval_s (Daly's model).
  std::optional<double> goodput_at_daly;  ///< ... at daly_s.
};

/// The `job_checkpoints` table, summarised.
struct CheckpointsReport {
  std::size_t jobs = 0;                 ///< Rows (checkpointed jobs).
  std::vector<CheckpointGroup> groups;  ///< Every group, most GPUs first, then by first job id.
};

/// Rows of one action of the `scaling` table.
struct ScalingAction {
  std::string action;  ///< "create", "ready", "boot_failed", "remove", "removed" (control/scaling_controller) or other.
  std::size_t rows = 0;            ///< Rows.
  std::size_t nodes = 0;           ///< Distinct nodes among them.
  std::vector<double> per_bucket;  ///< Rows in each time bucket.
};

/// The `scaling` table (autoscaler and Slurm power-saving actions), summarised. Series have one value per time
/// bucket, from 0 to the bucket of the last row.
struct ScalingReport {
  std::size_t rows = 0;                ///< Rows.
  std::vector<ScalingAction> actions;  ///< Actions seen, in the autoscaler's order, then others by name.
  std::vector<double> created;         ///< "create" rows up to the end of each bucket.
  std::vector<double> demand_max;      ///< Largest demand of the create and remove rows in each bucket; NaN: none.
};

/// One user's rows of the `quota_events` table.
struct QuotaUser {
  std::string user;                   ///< User.
  std::size_t warnings = 0;           ///< "warn" rows.
  std::size_t blocks = 0;             ///< "block" rows.
  std::size_t cancelled = 0;          ///< "cancel" rows: running jobs cancelled.
  std::size_t refused = 0;            ///< "refuse" rows: pending jobs refused.
  std::size_t refused_at_submit = 0;  ///< Jobs refused at submission: jobs.reason AssocGrpBillingMinutes, no row.
  std::size_t other = 0;              ///< Rows of any other action.
  std::optional<double> blocked_s;    ///< Time of the first block.
  double last_s = 0;                  ///< Time of the last row.
  double spend_usd = 0;               ///< Spend at the last row.
  double projected_usd = 0;           ///< Spend projected to the next check at the last row.
};

/// The `quota_events` table, summarised.
struct QuotaReport {
  std::size_t events = 0;        ///< Rows.
  std::vector<QuotaUser> users;  ///< Per user, by name.
};

/// Rows of the `operations` table with the same time, action, step and name, merged.
struct OperationStep {
  double time_s = 0;  ///< When.
  std::string
      action;  ///< "add_nodes", "remove_nodes", "update_image", "attach_volume", "maintenance", "restart_workers".
  std::string step;                ///< "start", "node_ready", "node_removed", "node_restarted", "node_back".
  std::string name;                ///< Image or volume ("" for none).
  std::vector<std::string> nodes;  ///< Nodes of per-node rows, in row order (empty for whole-operation rows).
  std::int64_t jobs_killed = 0;    ///< Job runs the rows ended.
};

/// The `operations` table, summarised.
struct OperationsReport {
  std::size_t rows = 0;                                      ///< Rows.
  std::vector<std::pair<std::string, std::size_t>> started;  ///< "start" rows per action, by action.
  std::int64_t jobs_killed = 0;                              ///< Sum of jobs_killed.
  std::vector<OperationStep> timeline;                       ///< Steps in time order.
};

/// Everything a report shows.
struct ReportData {
  std::string results_file;                          ///< The results.sqlite read.
  ReportRun run;                                     ///< Which run.
  std::map<std::string, double> summary;             ///< Table `summary`, by key.
  double horizon_s = 0;                              ///< Last time in the jobs (submit, start, end) and series.
  double step_s = 0;                                 ///< Bucket of the time series.
  std::size_t started_jobs = 0;                      ///< Jobs with a start time.
  std::vector<WaitBucket> waits;                     ///< Every bucket from 0 to the last start (empty ones: jobs 0).
  std::vector<ClusterBucket> cluster;                ///< Buckets with samples; empty without cluster_metrics.
  std::size_t cluster_samples = 0;                   ///< Rows of cluster_metrics read.
  std::optional<FaultsReport> faults;                ///< When table `faults` exists.
  std::optional<InterruptionsReport> interruptions;  ///< When table `job_interruptions` exists.
  std::optional<CheckpointsReport> checkpoints;      ///< When table `job_checkpoints` exists.
  std::optional<CostsReport> costs;                  ///< When table `costs` exists.
  std::optional<ScalingReport> scaling;              ///< When table `scaling` exists.
  std::optional<QuotaReport> quota;                  ///< When table `quota_events` exists.
  std::optional<OperationsReport> operations;        ///< When table `operations` exists.
};

/// The default bucket for `horizon_s`: the smallest of 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6,
/// 12 h, then whole days, that makes at most 100 buckets.
double default_step_s(double horizon_s);

/// Reads `results_dir`/results.sqlite (read-only). `step_s` 0 picks default_step_s. Throws InputError naming the
/// file (and table) when the file is missing, not a database, or lacks a table or column the report reads.
ReportData load_report_data(const std::filesystem::path& results_dir, double step_s);

}  // namespace gputwin
