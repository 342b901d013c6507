// The results store of one run: results.sqlite (tables runs, jobs, nodes, node_events, summary, and the metrics
// tables), summary.json
// and jobs.csv in the output folder. Each file is written to a temporary name in one transaction and renamed
// into place, so a crash never leaves half a result.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "model/cluster_state.hpp"
#include "model/hostlist.hpp"
#include "results/gpu_metrics.hpp"
#include "results/recorder.hpp"
#include "results/summary.hpp"

struct sqlite3;

namespace gputwin {

class ResultsStream;

/// What the `runs` table and summary.json say about the run itself.
struct RunInfo {
  std::string scenario;         ///< Scenario name.
  std::string scenario_file;    ///< Scenario path as given.
  std::uint64_t seed = 0;       ///< Seed used.
  std::string policy;           ///< Policy name.
  std::string version;          ///< gputwin version.
  double wall_time_s = 0;       ///< Wall-clock seconds of the simulation (not counting writing results).
  std::uint64_t events = 0;     ///< Events processed.
  std::string parameters_json;  ///< Scheduler parameters as JSON text.
};

/// Error writing results (names the file).
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the metrics tables are built from (see gpu_metrics.hpp).
struct MetricsInput {
  MetricsConfig config;                             ///< Sampling and telemetry assumptions (/metrics).
  SimTime horizon = 0;                              ///< Where the run stopped.
  JobLoadFn load;                                   ///< Per-run GPU load from the speed model (may be empty).
  std::vector<XidEvent> xids;                       ///< XIDs reported during the run, in time order.
  std::vector<NodeConditionEvent> node_conditions;  ///< Node condition changes, in time order.
};

/// Writes further tables into results.sqlite inside the same transaction (a twin's forecasts, actions and polls);
/// throws ResultsError on failure, which leaves no result at all.
using ExtraTablesWriter = std::function<void(sqlite3* db)>;

/// The temporary names write_results writes results.sqlite, jobs.csv and summary.json under, in the results
/// folder, before renaming each into place.
inline constexpr std::array<const char*, 3> kResultsTemporaryFiles = {".results.sqlite.tmp", ".jobs.csv.tmp",
                                                                      ".summary.json.tmp"};

/// Writes results.sqlite, summary.json and jobs.csv into `out_dir` (created if missing), each whole under a
/// temporary name first; an old summary.json is removed before the others are renamed into place and the new one
/// is renamed last, so a folder with summary.json holds one write's three files. With `metrics`, also
/// the tables gpu_metrics, cluster_metrics, job_gpus and metrics_info, and the energy and fragmentation figures.
/// With `faults`, also the node lifecycle's tables faults, job_interruptions and job_checkpoints; with `cloud`, the
/// tables scaling, costs and quota_events. With `stream` (the run's ResultsStream, which wrote what settled while
/// the run went on), the stream writes the rest of jobs.csv and of the jobs, node_events and job_reasons tables.
void write_results(const std::filesystem::path& out_dir, const RunInfo& info, const ClusterState& state,
                   const RunSummary& summary, const RunRecorder& recorder, const MetricsInput* metrics = nullptr,
                   const FaultLog* faults = nullptr, const CloudLog* cloud = nullptr,
                   const ExtraTablesWriter* extra = nullptr, ResultsStream* stream = nullptr);

/// summary.json's content (with the metrics figures when `totals` is given).
std::string summary_json(const RunInfo& info, const RunSummary& summary, const MetricsTotals* totals = nullptr);

/// The state the jobs table and jobs.csv record for a job: Slurm's name of its state, or REJECTED for a job
/// refused at submit (not a Slurm state: sbatch fails and Slurm keeps no record; the reason column says why).
std::string_view recorded_state_name(const JobRuntime& job);

/// recorded_state_name of a job in `state`, refused at submit or not.
std::string_view recorded_state_name(JobState state, bool rejected);

/// The partitions table's name of a partition state (slurm.conf's State=UP, DOWN, DRAIN, INACTIVE).
std::string_view partition_state_name(PartitionState state);

/// Requested or allocated node/CPU/GPU counts of a job, as sacct's AllocTRES (or ReqTRES if it never ran).
struct JobTres {
  std::uint64_t nodes = 0, cpus = 0, gpus = 0;
};

/// What the jobs table records of job `j`'s nodes, CPUs and GPUs: its allocation once started, else its request.
JobTres job_tres(const ClusterState& state, JobIndex j);

/// Slurm hostlist of a job's nodes ("n[001-004]"); empty if it never ran.
std::string job_node_list(const ClusterState& state, JobIndex job);

/// The cluster's node names, split and ordered once, for job_node_list over many jobs.
HostlistFormatter node_list_formatter(const ClusterState& state);

/// node_list_formatter of a cluster configuration.
HostlistFormatter node_list_formatter(const ClusterConfig& config);

/// job_node_list(state, job), formatted by `nodes` (node_list_formatter of the same cluster).
std::string job_node_list(const ClusterState& state, JobIndex job, const HostlistFormatter& nodes);

}  // namespace gputwin
