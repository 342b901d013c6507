// Typed errors for bad user input, each naming where the problem is (file and JSON pointer or line).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gputwin {

/// Bad input at a boundary: a scenario, trace, config or reply. `what()` is the full message
/// "<file>: <location>: <problem>", ready to show to a user.
class InputError : public std::runtime_error {
 public:
  /// `location` is a JSON pointer ("/cluster/nodes/0/gpus") or "line N"; it may be empty. In what(), a file,
  /// location or problem longer than 400 characters (one quoting a huge value) keeps only its two ends.
  InputError(std::string file, std::string location, std::string problem);
  /// The file the problem is in.
  [[nodiscard]] const std::string& file() const { return file_; }
  /// Where in the file: a JSON pointer or "line N".
  [[nodiscard]] const std::string& location() const { return location_; }
  /// The problem alone, without file and location.
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  std::string location_;
  std::string problem_;
};

/// A scenario file error at a JSON pointer.
class ScenarioError : public InputError {
 public:
  /// Error in `file` at JSON pointer `pointer`.
  ScenarioError(std::string file, std::string pointer, std::string problem)
      : InputError(std::move(file), std::move(pointer), std::move(problem)) {}
};

/// A trace file error at a line.
class TraceError : public InputError {
 public:
  /// Error in `file` at 1-based line `line` (0 when the whole file is at fault).
  TraceError(std::string file, std::uint64_t line, std::string problem)
      : InputError(std::move(file), line ? "line " + std::to_string(line) : std::string(), std::move(problem)),
        line_(line) {}
  /// 1-based line number, 0 for whole-file problems.
  [[nodiscard]] std::uint64_t line() const { return line_; }

 private:
  std::uint64_t line_;
};

/// A configuration file error (slurm.conf and its includes, gres.conf, sacctmgr output) at a line.
class ConfigError : public InputError {
 public:
  /// Error in `file` at 1-based line `line` (0 when the whole file is at fault).
  ConfigError(std::string file, std::uint64_t line, std::string problem)
      : InputError(std::move(file), line ? "line " + std::to_string(line) : std::string(), std::move(problem)),
        line_(line) {}
  /// 1-based line number, 0 for whole-file problems.
  [[nodiscard]] std::uint64_t line() const { return line_; }

 private:
  std::uint64_t line_;
};

}  // namespace gputwin
