// Calibration of a job's communication profile from observed step (or run) times at several placements, by
// linear least squares (Eigen, column-pivoting Householder QR):
//   step_i = c + v x seconds_per_byte(path_i) + a x latency_s(path_i)
// with comm_features() (gpu/job_speed.hpp) as regressors and unknowns c (communication-free time, s), v (exposed
// all-reduce bytes per step) and a (exposed latency-bound calls per step). The result is a FittedProfile, which
// step_time_s() / speed_factor() take like any other JobProfile.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu/collectives.hpp"
#include "gpu/comm_path.hpp"
#include "gpu/job_speed.hpp"
#include "gpu/perf_model_error.hpp"

namespace gputwin {

/// One observed step (or run) time of the job on a placement.
struct Observation {
  CommPath path;      ///< The placement.
  double step_s = 0;  ///< The time observed there, seconds.
};

/// A least-squares fit and how well it fits.
struct CalibrationResult {
  FittedProfile profile;            ///< Fitted c, v, a.
  std::vector<double> residuals_s;  ///< observed - fitted, per observation, in input order.
  double rms_residual_s = 0;        ///< Root mean square of residuals_s.
};

/// Why observations cannot be calibrated.
class CalibrationError : public PerfModelError {
 public:
  /// The failure kinds.
  enum class Kind : std::uint8_t {
    kTooFewObservations,  ///< Fewer observations than the 3 unknowns.
    kRankDeficient,       ///< The placements do not tell the unknowns apart (too few distinct placements).
    kBadObservation,      ///< A non-finite or non-positive time, or a path the model cannot cost.
  };
  /// `field` names the input ("observations/2/step_s"); `problem` says why.
  CalibrationError(Kind kind, std::string field, std::string problem)
      : PerfModelError(std::move(field), std::move(problem)), kind_(kind) {}
  /// The failure kind.
  [[nodiscard]] Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// Fits c, v, a to `observations`. Throws CalibrationError when there are fewer than 3 observations, when the
/// placements' regressors are rank-deficient (e.g. all observations on placements with the same features), or
/// for a bad observation.
CalibrationResult calibrate(std::span<const Observation> observations, const NcclOptions& opts = {});

}  // namespace gputwin
