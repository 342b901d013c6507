// `gputwin twin`: polls a real cluster's slurmrestd, mirrors it into a results folder, forecasts every pending
// job's start at each poll, and runs the named controllers on a SlurmWorld (dry-run unless asked to act).
// A failed poll (slurmrestd down, a bad token, a garbage reply) is recorded with the endpoint's error and the twin
// carries on; the results folder always holds every poll so far.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "twin/forecast.hpp"
#include "twin/rest/slurmrestd_client.hpp"
#include "twin/slurm_world.hpp"

namespace gputwin {

/// Everything `gputwin twin` is told.
struct TwinOptions {
  ClientOptions client;                  ///< slurmrestd URL, user, token, TLS, timeouts.
  std::filesystem::path out;             ///< Results folder.
  double interval_s = 30;                ///< Seconds between polls.
  bool once = false;                     ///< One mirror and forecast, then exit.
  double duration_s = 0;                 ///< Stop after this many seconds (0: until interrupted).
  std::uint64_t max_polls = 0;           ///< Stop after this many polls (0: no limit).
  Scenario policy;                       ///< Site policy: scheduler, priority, accounting; faults, cost, operations
                                         ///< for the controllers (its cluster and workload are not used).
  ForecastOptions forecast;              ///< Predictor and horizon.
  bool no_forecast = false;              ///< Mirror only.
  std::vector<std::string> controllers;  ///< health, scaling, quota, priority.
  bool act = false;                      ///< Carry actions out (else dry-run).
  ActionLimits limits;                   ///< Bounds on actions.
  std::string scontrol = "scontrol";     ///< Slurm's client for what the API cannot do ("" to never use it).
  std::int64_t history_days = 7;         ///< Days of slurmdb history that seed the run time predictors (0: none).
  std::filesystem::path save_replies;  ///< Keep every poll's raw replies here (NNNNNN-diag/nodes/partitions/jobs.json).
  std::filesystem::path replay;        ///< Replay replies saved by save_replies instead of polling (dry-run, no waits).
  /// Held while the results folder is written, so that a reader of the folder (`twin --serve`) sees whole polls.
  std::mutex* results_mutex = nullptr;
  /// Called after each write of the results folder (on the twin's thread).
  std::function<void()> on_written;
};

/// Runs the twin until done (`once`, `duration_s`, `max_polls`) or `stop` becomes true; returns the exit status (0, 1
/// when the first connection failed, 2 for bad options). Progress and errors go to `err`.
int run_twin(const TwinOptions& options, std::ostream& err, const std::atomic<bool>& stop);

}  // namespace gputwin
