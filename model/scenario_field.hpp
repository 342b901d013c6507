// Field: a JSON value with its JSON pointer, so scenario readers report "file: /pointer: problem". Internal to
// the scenario loader (model/scenario*.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "model/accounting.hpp"
#include "model/cloud_config.hpp"
#include "model/cluster.hpp"
#include "model/errors.hpp"
#include "model/faults_config.hpp"
#include "model/input_limits.hpp"
#include "model/job.hpp"
#include "model/performance.hpp"

namespace gputwin {

bool parse_slurm_time(std::string_view text, std::int64_t& seconds);

namespace detail {

using nlohmann::json;

/// A JSON value together with its pointer, for reading with located errors.
class Field {
 public:
  Field(const json& value, std::string pointer, const std::string& file)
      : value_(value), pointer_(std::move(pointer)), file_(file) {}

  [[noreturn]] void fail(const std::string& problem) const { throw ScenarioError(file_, pointer_, problem); }

  const json& raw() const { return value_; }
  const std::string& pointer() const { return pointer_; }

  Field at(const std::string& key) const {
    if (!value_.is_object()) fail("expected an object");
    auto it = value_.find(key);
    if (it == value_.end()) throw ScenarioError(file_, pointer_ + "/" + key, "missing required key");
    return Field(*it, pointer_ + "/" + key, file_);
  }
  bool has(const std::string& key) const { return value_.is_object() && value_.contains(key); }
  Field at(std::size_t index) const { return Field(value_[index], pointer_ + "/" + std::to_string(index), file_); }

  void expect_object(std::initializer_list<std::string_view> allowed) const {
    if (!value_.is_object()) fail("expected an object");
    for (auto it = value_.begin(); it != value_.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        std::string names;
        for (auto a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
        throw ScenarioError(file_, pointer_ + "/" + it.key(), "unknown key (allowed: " + names + ")");
      }
    }
  }
  std::size_t array_size() const {
    if (!value_.is_array()) fail("expected an array");
    return value_.size();
  }
  std::string string() const {
    if (!value_.is_string()) fail("expected a string");
    return value_.get<std::string>();
  }
  std::string non_empty_string() const {
    std::string s = string();
    if (s.empty()) fail("expected a non-empty string");
    return s;
  }
  bool boolean() const {
    if (!value_.is_boolean()) fail("expected true or false");
    return value_.get<bool>();
  }
  std::uint64_t non_negative() const {
    if (!value_.is_number_integer() ||
        (value_.is_number_integer() && !value_.is_number_unsigned() && value_.get<std::int64_t>() < 0)) {
      fail("expected a non-negative integer");
    }
    return value_.get<std::uint64_t>();
  }
  std::uint64_t positive() const {
    if (!value_.is_number_integer() || value_.get<std::int64_t>() <= 0) fail("expected a positive integer");
    return value_.get<std::uint64_t>();
  }
  std::int64_t integer() const {
    if (!value_.is_number_integer()) fail("expected an integer");
    return value_.get<std::int64_t>();
  }
  double number() const {
    if (!value_.is_number()) fail("expected a number");
    return value_.get<double>();
  }
  /// A non-negative integer no larger than `max` (one of gputwin's input bounds, model/input_limits.hpp).
  std::uint64_t at_most(std::uint64_t max) const {
    const std::uint64_t v = non_negative();
    if (v > max) fail("expected at most " + std::to_string(max) + " (an input bound, README \"Reliability\")");
    return v;
  }
  /// A positive integer no larger than `max`.
  std::uint64_t positive_at_most(std::uint64_t max) const {
    const std::uint64_t v = positive();
    if (v > max) fail("expected at most " + std::to_string(max) + " (an input bound, README \"Reliability\")");
    return v;
  }
  std::uint32_t u32() const {
    const std::uint64_t v = non_negative();
    if (v > std::numeric_limits<std::uint32_t>::max()) fail("value too large");
    return static_cast<std::uint32_t>(v);
  }
  /// A Slurm time: integer minutes, or a string in Slurm's formats. Returns seconds, -1 for UNLIMITED.
  std::int64_t slurm_time() const {
    if (value_.is_number_integer()) {
      const auto minutes = value_.get<std::int64_t>();
      if (minutes < 0) fail("expected a non-negative number of minutes");
      if (minutes > kMaxDurationSeconds / 60)
        fail("expected at most " + std::to_string(kMaxDurationSeconds / 60) + " minutes");
      return minutes * 60;
    }
    if (!value_.is_string()) fail("expected minutes or a Slurm time string such as \"2-00:00:00\" or \"UNLIMITED\"");
    std::int64_t seconds = 0;
    if (!parse_slurm_time(value_.get<std::string>(), seconds)) {
      fail("'" + value_.get<std::string>() + "' is not a Slurm time (minutes, mm:ss, hh:mm:ss, d-hh:mm:ss, UNLIMITED)");
    }
    if (seconds > kMaxDurationSeconds) fail("expected at most " + std::to_string(kMaxDurationSeconds) + " seconds");
    return seconds;
  }

 private:
  const json& value_;
  std::string pointer_;
  const std::string& file_;
};

}  // namespace detail
}  // namespace gputwin

namespace gputwin::detail {

/// Reads /accounting.
void read_accounting(const Field& field, AccountingConfig& config);
/// Reads /scheduler/priority.
void read_priority(const Field& field, PriorityConfig& config);
/// Reads /performance.
void read_performance(const Field& field, PerformanceConfig& config);
/// Reads /metrics.
void read_metrics(const Field& field, MetricsConfig& config);
/// Seconds: a non-negative number, or a Slurm time string ("12:00:00").
double non_negative_seconds(const Field& f);
/// A positive number of seconds, or a Slurm time string.
double positive_seconds(const Field& f);
/// Sets `out` from the non-negative seconds of `f`'s member `key`, when there is one.
inline void read_seconds_if(const Field& f, const char* key, double& out) {
  if (f.has(key)) out = non_negative_seconds(f.at(key));
}
/// Node indices of a hostlist ("gpu[001-004]") or an array of node names, ascending, without repeats.
std::vector<std::uint32_t> read_node_set(const Field& f, const ClusterConfig& cluster);
/// Reads /autoscaler (node names resolved against `cluster`).
void read_autoscaler(const Field& field, const ClusterConfig& cluster, AutoscalerConfig& config);
/// Reads /power_save (Slurm's SuspendTime, SuspendTimeout, ResumeTimeout, ResumeRate, SuspendRate,
/// SuspendExcNodes) into the autoscaler's terms.
void read_power_save(const Field& field, const ClusterConfig& cluster, AutoscalerConfig& config);
/// Reads /operations.
void read_operations(const Field& field, const ClusterConfig& cluster, std::vector<ClusterOperation>& operations);
/// Reads /cost.
void read_cost(const Field& field, const ClusterConfig& cluster, CostConfig& config);
/// Reads /faults (node names resolved against `cluster`).
void read_faults(const Field& field, const ClusterConfig& cluster, FaultsConfig& config);
/// Reads /workload/jobs (array tasks expanded, ids checked unique).
std::vector<JobSpec> read_inline_jobs(const Field& field);

}  // namespace gputwin::detail
