// The rows of a run's results that the results store and the results stream (results_stream.hpp) both write: a job's
// line of jobs.csv and its row of the jobs table, from a JobRunRecord (what the ClusterState says of the job beyond its
// JobSpec, copied out so that a job's row can be written on another thread while the run goes on, and checked
// against the final state), and the node_events and job_reasons rows.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.hpp"
#include "model/hostlist.hpp"
#include "model/topology.hpp"
#include "results/recorder.hpp"
#include "results/results_sqlite.hpp"
#include "results/results_store.hpp"

namespace gputwin {

/// What jobs.csv and the jobs table record of a job beyond its JobSpec (and its nodes, kept beside it).
struct JobRunRecord {
  SimTime start = -1;                           ///< Start of its last run, -1 if it never started.
  SimTime end = -1;                             ///< End, -1 if it has not ended.
  std::int64_t time_limit_s = 0;                ///< Effective time limit.
  JobTres tres;                                 ///< Allocated (or requested) nodes, CPUs, GPUs.
  std::uint32_t partition = 0;                  ///< Partition index.
  std::uint32_t priority = 0;                   ///< Priority as the scheduler sorted it.
  JobState state = JobState::kPending;          ///< Its state.
  PendingReason reason = PendingReason::kNone;  ///< Last pending reason.
  bool rejected = false;                        ///< Refused at submit.
};

/// Job `j`'s record as `state` has it now; its nodes, in allocation order, are appended to `nodes`.
JobRunRecord job_run_record(const ClusterState& state, JobIndex j, std::vector<NodeIndex>& nodes);

/// Folds a record and its nodes into `hash` (order-sensitive): equal records with equal nodes fold alike.
std::uint64_t fold_job_run_record(std::uint64_t hash, const JobRunRecord& r, std::span<const NodeIndex> nodes);

/// The jobs table's columns, then its rowid: an insert of a job's row at a given place (results_stream.hpp).
inline constexpr std::string_view kJobsColumnsAndRowid =
    "job_id, name, user, account, partition, qos, submit_time, start_time, end_time, state, nodes, cpus, gpus, "
    "time_limit, node_list, priority, reason, wait_time, run_time, array_job_id, array_task_id, trace_run_time, "
    "leaf_switches, rowid";

/// jobs.csv is written out in pieces of about this many bytes (by the results store and the results stream alike).
inline constexpr std::size_t kJobsCsvFlushBytes = std::size_t{1} << 20;

/// jobs.csv's first line.
inline constexpr std::string_view kJobsCsvHeader =
    "job_id,name,user,account,partition,submit_time,start_time,end_time,state,nodes,cpus,gpus,time_limit,"
    "node_list,priority\n";

/// What writing jobs' rows needs of the cluster, copied so that it can be used on another thread: partition names,
/// node names, the topology.
class JobRowFormat {
 public:
  /// Copies what it needs of `config`.
  explicit JobRowFormat(const ClusterConfig& config);
  /// The Slurm hostlist of `nodes` ("n[001-004]"; empty for none).
  [[nodiscard]] std::string node_list(std::span<const NodeIndex> nodes) const;
  /// Appends the job's jobs.csv line (`node_list` from node_list()).
  void append_csv_line(std::string& out, const JobSpec& spec, const JobRunRecord& r, std::string_view node_list) const;
  /// Sets columns 1 to 23 of an insert into the jobs table to the job's row (the caller ends the row); `spec` must
  /// outlive the insert's batch.
  void add_jobs_row(results_sqlite::BatchInsert& ins, const JobSpec& spec, const JobRunRecord& r,
                    std::string_view node_list, std::span<const NodeIndex> nodes) const;

 private:
  std::vector<std::string> partition_names_;
  HostlistFormatter node_names_;
  SlurmTopology topology_;
};

/// Adds a node_events row (a change of e.count consecutive nodes at one time to one state).
void add_node_event_row(results_sqlite::BatchInsert& ins, const NodeEvent& e);

/// Adds a job_reasons row; `job_id` is the Slurm id of e.job.
void add_reason_row(results_sqlite::BatchInsert& ins, const ReasonEvent& e, std::uint64_t job_id);

/// Folds a node event into `hash`.
std::uint64_t fold_node_event(std::uint64_t hash, const NodeEvent& e);

/// Folds a reason event into `hash`.
std::uint64_t fold_reason_event(std::uint64_t hash, const ReasonEvent& e);

}  // namespace gputwin
