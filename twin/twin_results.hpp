// A twin's results folder: the live cluster's mirror in the same schema as a simulation (results.sqlite with jobs,
// nodes, node_events, job_reasons, summary; jobs.csv; summary.json), so squeue, report and metrics read it as they
// read a run, plus the twin's own tables: polls, forecasts, node_forecasts, actions, job_states and twin_info.
// Times are seconds after the twin's epoch (its first poll), as a run's are after its scenario's; twin_info and
// summary.json give the epoch in Unix seconds. Written whole at every poll (a temporary file renamed into place).
#pragma once

#include <filesystem>
#include <string>

#include "model/cluster_state.hpp"
#include "results/recorder.hpp"
#include "twin/mirror.hpp"
#include "twin/twin_log.hpp"

namespace gputwin {

/// What the runs table and twin_info say about the twin.
struct TwinInfo {
  std::string url;          ///< slurmrestd base URL.
  std::string api_version;  ///< API version in use ("v0.0.44").
  std::string predictor;    ///< Run time predictor name.
  std::string controllers;  ///< Controllers that run ("health,quota"), empty for none.
  bool act = false;         ///< Acting (false: dry-run).
  double wall_time_s = 0;   ///< Wall seconds the twin has run.
};

/// The mirror as a ClusterState (every job ever seen, ended ones released) with its node and reason history in
/// `recorder`, for the results store and the views.
ClusterState mirror_state(const Mirror& mirror, RunRecorder& recorder);

/// Writes the results folder `out_dir` for `mirror` and `log`. Throws ResultsError naming the file.
void write_twin_results(const std::filesystem::path& out_dir, const Mirror& mirror, const TwinLog& log,
                        const TwinInfo& info);

}  // namespace gputwin
