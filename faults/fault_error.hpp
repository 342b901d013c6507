// The typed error of the fault library: a profile, cluster shape, process or detection setting it cannot use.
// Thrown only by constructors and validators (never while generating faults). Callers that read these settings
// from a scenario wrap it into their own located error (the field name maps onto a JSON pointer).
#pragma once

#include <stdexcept>
#include <string>

namespace gputwin {

/// A fault-model input the library cannot use. `what()` is "<field>: <problem>".
class FaultConfigError : public std::invalid_argument {
 public:
  /// `field` names the offending input ("lemons.rate_multiplier", "health_check.program"); `problem` says why.
  FaultConfigError(std::string field, std::string problem)
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
