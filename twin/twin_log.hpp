// What a twin records beyond the mirror: each poll, each forecast (pending jobs' predicted starts beside
// slurmctld's estimate, nodes' predicted returns) and each action its controllers took or would take. The results
// folder stores them as the tables polls, forecasts, node_forecasts and actions.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "twin/forecast.hpp"
#include "twin/rest/rest_types.hpp"

namespace gputwin {

/// One poll of the live cluster.
struct PollRecord {
  std::int64_t time = 0;      ///< Poll time (epoch seconds).
  double fetch_s = 0;         ///< Wall seconds fetching and parsing the replies.
  double mirror_s = 0;        ///< Wall seconds applying them to the mirror.
  double forecast_s = 0;      ///< Wall seconds of the forecast (0 when none ran).
  double write_s = 0;         ///< Wall seconds writing the results folder (of the previous poll).
  std::uint64_t nodes = 0;    ///< Nodes listed.
  std::uint64_t jobs = 0;     ///< Jobs listed.
  std::uint64_t pending = 0;  ///< Pending jobs.
  std::uint64_t running = 0;  ///< Running jobs.
  std::string error;          ///< Why the poll failed (empty when it did not); the twin carries on.
};

/// One action a controller took (or, in dry-run, would take) on the live cluster.
struct ActionRecord {
  std::int64_t time = 0;   ///< When (epoch seconds).
  std::string controller;  ///< health, scaling, quota, priority.
  std::string action;      ///< drain, resume, down, reboot, cancel, hold, release, set_priority, power_up, ...
  std::string target;      ///< Node name or job id.
  std::string reason;      ///< The reason given to Slurm.
  std::string outcome;     ///< dry-run, done, skipped (why), refused (which bound), failed (the error).
  std::string call;        ///< The call that carries it out ("POST /slurm/v0.0.44/node/gpu01", "scontrol ...").
};

/// A pending job's forecast and, once known, its actual start.
struct ForecastRow {
  JobForecast forecast;            ///< The prediction.
  std::int64_t actual_start = -1;  ///< The job's actual start (epoch seconds), -1 until it starts.
};

/// Everything a twin recorded.
struct TwinLog {
  std::vector<PollRecord> polls;              ///< Every poll, in order.
  std::vector<ForecastRow> forecasts;         ///< Every pending job's forecast at every poll.
  std::vector<NodeForecast> node_forecasts;   ///< Every node out of service at every poll.
  std::vector<ActionRecord> actions;          ///< Every action, in order.
  std::vector<RestAssociation> associations;  ///< slurmdbd's associations (read at start; empty without slurmdbd).
  std::vector<RestQos> qos;                   ///< slurmdbd's QOS (read at start).
  /// Fills in the actual start of `job_id` in its forecasts.
  void job_started(std::uint64_t job_id, std::int64_t start) {
    const auto it = forecast_rows_.find(job_id);
    if (it == forecast_rows_.end()) return;
    for (std::size_t i : it->second) forecasts[i].actual_start = start;
  }
  /// Adds a forecast's rows.
  void add(const Forecast& forecast) {
    for (const JobForecast& f : forecast.jobs) {
      forecast_rows_[f.job_id].push_back(forecasts.size());
      forecasts.push_back(ForecastRow{f, -1});
    }
    node_forecasts.insert(node_forecasts.end(), forecast.nodes.begin(), forecast.nodes.end());
  }

 private:
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> forecast_rows_;
};

}  // namespace gputwin
