// Calibration by least squares: recover known profile parameters from synthetic step times with noise.
#include "gpu/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace gputwin {
namespace {

// H100 placements that differ in node count and in scale-out bandwidth (packed, 2:1 and 4:1 spines).
std::vector<CommPath> placements() {
  std::vector<CommPath> paths;
  for (std::uint32_t nodes : {1U, 2U, 4U, 8U, 16U, 32U}) {
    for (double oversub : {1.0, 2.0, 4.0}) {
      if (nodes == 1 && oversub > 1) continue;  // one node has no scale-out traffic
      paths.push_back({.nodes = nodes,
                       .gpus_per_node = 8,
                       .intra_node_gbps = 450,
                       .inter_node_gbps = 376 / oversub,
                       .inter_latency_us = nodes <= 2 ? 0.6 : 1.8,
                       .switch_hops = nodes <= 2 ? 1U : 3U});
    }
  }
  return paths;  // 1 + 5 x 3 = 16 placements
}

constexpr FittedProfile kTruth{.compute_s = 0.8, .exposed_bytes = 5e9, .latency_count = 100};

std::vector<Observation> observe(double noise_fraction, std::uint32_t seed) {
  // Noise: uniform in +-noise_fraction of the step, from mt19937 (whose output is fixed by the standard).
  std::mt19937 rng(seed);
  std::vector<Observation> obs;
  for (const CommPath& p : placements()) {
    const double u = static_cast<double>(rng()) / 4294967295.0 * 2 - 1;
    obs.push_back({p, step_time_s(kTruth, p) * (1 + noise_fraction * u)});
  }
  return obs;
}

TEST(Calibration, RecoversExactParametersWithoutNoise) {
  const CalibrationResult r = calibrate(observe(0, 1));
  EXPECT_NEAR(r.profile.compute_s, 0.8, 1e-9);
  EXPECT_NEAR(r.profile.exposed_bytes / 5e9, 1, 1e-9);
  EXPECT_NEAR(r.profile.latency_count / 100, 1, 1e-6);
  EXPECT_LT(r.rms_residual_s, 1e-9);
}

TEST(Calibration, RecoversParametersFromNoisyTimes) {
  // Steps run 0.83 s (one node) to 1.28 s (32 nodes behind a 4:1 spine); 0.1% noise is ~1 ms, against a
  // latency term of 100 x 5.6 us (one node) to 100 x 3.5 ms (32 nodes). Tolerances: compute and bytes 1%,
  // latency count 5%.
  const std::vector<Observation> obs = observe(0.001, 42);
  const CalibrationResult r = calibrate(obs);
  EXPECT_NEAR(r.profile.compute_s, 0.8, 0.8 * 0.01);
  EXPECT_NEAR(r.profile.exposed_bytes, 5e9, 5e9 * 0.01);
  EXPECT_NEAR(r.profile.latency_count, 100, 100 * 0.05);
  // Residuals: one per observation, within twice the noise (0.1% of a <= 1.28 s step).
  ASSERT_EQ(r.residuals_s.size(), obs.size());
  for (double res : r.residuals_s) EXPECT_LT(std::abs(res), 2 * 0.001 * 1.28);
  EXPECT_GT(r.rms_residual_s, 0);
  // The fitted profile predicts the slowdown of a spread placement like the truth does.
  const std::vector<CommPath> paths = placements();
  EXPECT_NEAR(speed_factor(r.profile, paths[15], paths[13]), speed_factor(kTruth, paths[15], paths[13]), 0.01);
}

TEST(Calibration, RefusesObservationsThatDoNotDetermineTheUnknowns) {
  const std::vector<CommPath> paths = placements();
  // Three observations of one placement: the three regressors are one point, rank 1.
  const std::vector<Observation> same{{paths[4], 1.0}, {paths[4], 1.1}, {paths[4], 0.9}};
  try {
    calibrate(same);
    FAIL() << "expected CalibrationError";
  } catch (const CalibrationError& e) {
    EXPECT_EQ(e.kind(), CalibrationError::Kind::kRankDeficient);
    EXPECT_NE(std::string(e.what()).find("determine only 1 of the 3"), std::string::npos) << e.what();
  }
  // Two distinct placements, repeated: rank 2.
  const std::vector<Observation> two{{paths[1], 1.0}, {paths[4], 1.2}, {paths[1], 1.01}, {paths[4], 1.19}};
  try {
    calibrate(two);
    FAIL() << "expected CalibrationError";
  } catch (const CalibrationError& e) {
    EXPECT_EQ(e.kind(), CalibrationError::Kind::kRankDeficient);
  }
  // Fewer observations than unknowns.
  const std::vector<Observation> few{{paths[1], 1.0}, {paths[4], 1.2}};
  try {
    calibrate(few);
    FAIL() << "expected CalibrationError";
  } catch (const CalibrationError& e) {
    EXPECT_EQ(e.kind(), CalibrationError::Kind::kTooFewObservations);
  }
  // A bad time names the observation.
  const std::vector<Observation> bad{{paths[1], 1.0}, {paths[4], -1}, {paths[7], 1.2}};
  try {
    calibrate(bad);
    FAIL() << "expected CalibrationError";
  } catch (const CalibrationError& e) {
    EXPECT_EQ(e.kind(), CalibrationError::Kind::kBadObservation);
    EXPECT_EQ(e.field(), "observations/1/step_s");
  }
}

}  // namespace
}  // namespace gputwin
