#include "gpu/calibration.hpp"

#include <Eigen/Dense>
#include <cmath>

namespace gputwin {
namespace {

// Relative pivot threshold of the rank decision, on columns scaled to a maximum of 1: a column that the others
// reproduce to within 1e-9 of its size is taken as dependent.
constexpr double kRankThreshold = 1e-9;
constexpr int kUnknowns = 3;

}  // namespace

CalibrationResult calibrate(std::span<const Observation> observations, const NcclOptions& opts) {
  using Kind = CalibrationError::Kind;
  const auto m = static_cast<Eigen::Index>(observations.size());
  if (m < kUnknowns) {
    throw CalibrationError(Kind::kTooFewObservations, "observations",
                           "need at least 3 placements to fit compute, bytes and latency; got " + std::to_string(m));
  }
  Eigen::MatrixXd a(m, kUnknowns);
  Eigen::VectorXd b(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const Observation& o = observations[static_cast<std::size_t>(i)];
    const std::string where = "observations/" + std::to_string(i);
    if (!std::isfinite(o.step_s) || o.step_s <= 0) {
      throw CalibrationError(Kind::kBadObservation, where + "/step_s", "must be a positive number of seconds");
    }
    CommFeatures x;
    try {
      x = comm_features(o.path, opts);
    } catch (const PerfModelError& e) {
      throw CalibrationError(Kind::kBadObservation, where + "/" + e.field(), e.problem());
    }
    a(i, 0) = 1.0;
    a(i, 1) = x.seconds_per_byte;
    a(i, 2) = x.latency_s;
    b(i) = o.step_s;
  }
  // Columns differ by ~10 orders of magnitude (s/B vs s): scale each to a maximum of 1 before the QR.
  Eigen::Vector3d scale;
  for (int j = 0; j < kUnknowns; ++j) {
    const double mx = a.col(j).cwiseAbs().maxCoeff();
    scale(j) = mx > 0 ? 1.0 / mx : 1.0;
  }
  const Eigen::MatrixXd scaled = a * scale.asDiagonal();
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(scaled);
  qr.setThreshold(kRankThreshold);
  if (qr.rank() < kUnknowns) {
    throw CalibrationError(Kind::kRankDeficient, "observations",
                           "the placements determine only " + std::to_string(qr.rank()) +
                               " of the 3 unknowns (compute, bytes, latency): observe the job on more placements "
                               "that differ in bandwidth and in node count");
  }
  const Eigen::Vector3d x = scale.asDiagonal() * qr.solve(b);
  CalibrationResult r;
  r.profile.compute_s = x(0);
  r.profile.exposed_bytes = x(1);
  r.profile.latency_count = x(2);
  const Eigen::VectorXd res = b - a * x;
  r.residuals_s.assign(res.data(), res.data() + res.size());
  r.rms_residual_s = std::sqrt(res.squaredNorm() / static_cast<double>(m));
  return r;
}

}  // namespace gputwin
