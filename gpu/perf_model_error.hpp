// The typed error of the performance models (collectives, job speed, calibration): bad profile fields, a
// placement the models cannot cost, or observations that do not determine a fit. Callers that read these from a
// scenario wrap it into their own located error (the field name maps onto a JSON pointer).
#pragma once

#include <stdexcept>
#include <string>

namespace gputwin {

/// A performance-model input the models cannot use. `what()` is "<field>: <problem>".
class PerfModelError : public std::invalid_argument {
 public:
  /// `field` names the offending input ("data_parallel.overlap", "path.inter_node_gbps"); `problem` says why.
  PerfModelError(std::string field, std::string problem)
      : std::invalid_argument(field + ": " + problem), field_(std::move(field)), problem_(std::move(problem)) {}
  /// The input at fault, as a dotted name.
  [[nodiscard]] const std::string& field() const { return field_; }
  /// The problem alone, without the field.
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string field_;
  std::string problem_;
};

}  // namespace gputwin
