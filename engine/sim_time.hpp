// Virtual time of the simulator: integer microseconds since the scenario epoch.
#pragma once

#include <cstdint>

namespace gputwin {

/// Simulated time in microseconds since the scenario epoch (t = 0).
using SimTime = std::int64_t;

/// Microseconds in one second.
inline constexpr SimTime kMicrosPerSecond = 1'000'000;

/// A time far beyond any simulated horizon; used as "never".
inline constexpr SimTime kNever = INT64_MAX / 4;

/// Converts whole seconds to SimTime.
constexpr SimTime from_seconds(std::int64_t seconds) {
  return seconds * kMicrosPerSecond;
}

/// Converts fractional seconds to SimTime, rounding to the nearest microsecond.
constexpr SimTime from_seconds_f(double seconds) {
  return static_cast<SimTime>(seconds * static_cast<double>(kMicrosPerSecond) + (seconds >= 0 ? 0.5 : -0.5));
}

/// Whole seconds of a SimTime, truncated toward negative infinity (Slurm-facing values are seconds).
constexpr std::int64_t to_seconds(SimTime t) {
  return t >= 0 ? t / kMicrosPerSecond : -((-t + kMicrosPerSecond - 1) / kMicrosPerSecond);
}

/// Seconds of a SimTime as a double.
constexpr double to_seconds_f(SimTime t) {
  return static_cast<double>(t) / static_cast<double>(kMicrosPerSecond);
}

/// Smallest multiple of `period` that is >= t, measured from `phase` (phase + k * period).
constexpr SimTime next_tick_at_or_after(SimTime t, SimTime phase, SimTime period) {
  if (t <= phase) return phase;
  const SimTime k = (t - phase + period - 1) / period;
  return phase + k * period;
}

}  // namespace gputwin
