// Seeded random streams. Each component draws from its own named stream, derived from the scenario seed
// and the stream's name, so adding a component never shifts the numbers another component sees.
// Distributions are implemented here (not <random>'s), so results are identical across standard libraries.
#pragma once

#include <cstdint>
#include <string_view>

namespace gputwin {

/// xoshiro256** generator with portable distributions.
class Rng {
 public:
  /// Seeds the generator state from one 64-bit value (expanded with splitmix64).
  explicit Rng(std::uint64_t seed);
  /// Derives the stream `name` of a scenario seeded with `scenario_seed`.
  static Rng stream(std::uint64_t scenario_seed, std::string_view name);

  /// Next raw 64-bit value.
  std::uint64_t next_u64();
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [lo, hi] (inclusive), without modulo bias.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Exponential with the given mean.
  double exponential(double mean);
  /// Standard normal (Box-Muller, one value per call).
  double normal();
  /// Lognormal with parameters mu and sigma of the underlying normal.
  double lognormal(double mu, double sigma);

 private:
  std::uint64_t s_[4];
};

/// 64-bit FNV-1a hash of a string (stable across platforms; used to name streams).
std::uint64_t fnv1a64(std::string_view text);

/// splitmix64's finaliser: every bit of `z` reaches every bit of the result (seeds, ids, order-free folds).
inline std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace gputwin
