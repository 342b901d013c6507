// Forecasts of a live cluster: a SimWorld started from the mirrored state (running jobs on their nodes with their
// elapsed times and limits, pending jobs with slurmctld's priorities, nodes out of service) runs forward under the
// site's policy and predicts when each pending job starts and when each node out of service returns.
//
// Run times are predicted, not assumed equal to time limits (RuntimePredictor): users ask for 2-4x what their jobs
// use, so a plan on limits (slurmctld's own estimate) is late. A running job that has already outlived its
// prediction is expected to end a quarter of its elapsed time later (at least a minute), never past its limit.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/scenario.hpp"
#include "twin/mirror.hpp"

namespace gputwin {

/// How a job's run time is predicted.
enum class RuntimePredictor : std::uint8_t {
  kTimeLimit,   ///< "limit": the job's time limit (what slurmctld plans with).
  kUserRecent,  ///< "recent": the mean of the last two run times of the user's jobs of the same name, else of any of
                ///< the user's jobs (Tsafrir, Etsion, Feitelson 2007), capped at the limit; the limit while the user
                ///< has no history.
  kUserRatio,   ///< "ratio": the limit times the user's fitted run/limit ratio (else the account's, else the
                ///< cluster's), a least-squares fit through the origin over the recent history.
};

/// The predictor's name ("limit", "recent", "ratio").
std::string_view runtime_predictor_name(RuntimePredictor predictor);
/// Parses a predictor name; nullopt if unknown.
std::optional<RuntimePredictor> parse_runtime_predictor(std::string_view name);

/// Run times of finished jobs, per user and account, for the predictors.
class RuntimeHistory {
 public:
  /// A job `name` of `user` in `account` ran `run_s` seconds under a limit of `limit_s` (<= 0: none).
  void add(const std::string& user, const std::string& account, const std::string& name, std::int64_t run_s,
           std::int64_t limit_s);
  /// Predicted run seconds of a job `name` of `user`/`account` with limit `limit_s` (> 0).
  [[nodiscard]] std::int64_t predict(RuntimePredictor predictor, const std::string& user, const std::string& account,
                                     const std::string& name, std::int64_t limit_s) const;
  /// Finished runs recorded.
  [[nodiscard]] std::uint64_t size() const { return count_; }

 private:
  struct Fit {
    double run_x_limit = 0;         // sum of run * limit
    double limit_sq = 0;            // sum of limit^2
    std::deque<std::int64_t> last;  // the user's last run times (at most kWindow)
  };
  static double ratio(const Fit& fit) { return fit.limit_sq > 0 ? fit.run_x_limit / fit.limit_sq : -1; }
  std::map<std::string, Fit> users_;
  std::map<std::string, Fit> user_names_;  // user + '\n' + job name
  std::map<std::string, Fit> accounts_;
  Fit cluster_;
  std::uint64_t count_ = 0;
};

/// What a forecast runs with.
struct ForecastOptions {
  RuntimePredictor predictor = RuntimePredictor::kUserRecent;  ///< Run time predictor.
  std::int64_t horizon_s = 7 * 86400;                          ///< How far ahead it simulates.
  std::int64_t reboot_s = 300;    ///< How long a rebooting node takes to return (REBOOT_ISSUED).
  std::int64_t power_up_s = 300;  ///< How long a node powering up takes to return (POWERING_UP).
};

/// One pending job's predicted start.
struct JobForecast {
  std::uint64_t job_id = 0;           ///< Slurm job id.
  std::int64_t made_at = 0;           ///< When the forecast was made (epoch seconds).
  std::int64_t predicted_start = -1;  ///< gputwin's prediction (epoch seconds); -1 if not within the horizon.
  std::int64_t slurm_estimate = 0;    ///< slurmctld's estimate at that moment (its start_time; 0 if none).
};

/// One node's predicted return to service.
struct NodeForecast {
  std::string node;                    ///< Node name.
  std::int64_t made_at = 0;            ///< When the forecast was made (epoch seconds).
  std::string state;                   ///< Its state then (DRAINED, DOWN, ...).
  std::string reason;                  ///< Slurm's reason then.
  std::int64_t predicted_return = -1;  ///< Predicted return (epoch seconds); -1 if nothing returns it by itself.
};

/// A forecast made at one poll.
struct Forecast {
  std::int64_t made_at = 0;         ///< The poll time (epoch seconds).
  std::vector<JobForecast> jobs;    ///< Every pending job.
  std::vector<NodeForecast> nodes;  ///< Every node out of service.
  std::uint64_t running = 0;        ///< Running jobs it started from.
  double wall_s = 0;                ///< Wall seconds it took.
};

/// Forecasts the mirrored cluster from its last poll, under `policy` (the site's scheduler, priority and
/// accounting configuration; its cluster is replaced by the mirror's).
Forecast forecast(const Mirror& mirror, const RuntimeHistory& history, const Scenario& policy,
                  const ForecastOptions& options);

}  // namespace gputwin
