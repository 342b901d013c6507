// The fidelity report: a simulated schedule against several real replicas of the same workload, measured against
// the replicas' own run-to-run spread. Per replica, the mean |start difference| between the simulated and the real
// schedule (jobs matched by workload index, times from the first submission), Kendall's tau-b of the start order,
// the mean waits; per pair of replicas the same difference and tau; the band of the replicas' mean waits; and the
// verdict: inside the real cluster's spread when the simulated mean wait lies inside the band (or within
// `edge_tolerance` of its nearer edge) and the mean simulated start difference is no larger than the replicas'
// mean pairwise difference.
//
//   FidelityReport r = compare_with_replicas(recordings, simulated, {});
//   std::cout << format_report(r);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fidelity/recording.hpp"

namespace gputwin {

/// Kendall's tau-b of two rankings (ties handled as scipy.stats.kendalltau does); 1 when both are constant.
double kendall_tau_b(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y);

/// Mean |a.start - b.start| over jobs matched by index (both sorted by idx, same indices), seconds.
double mean_start_difference_s(const std::vector<RecordedJob>& a, const std::vector<RecordedJob>& b);

/// What the verdict requires.
struct FidelityCriteria {
  double edge_tolerance = 0.01;  ///< How far outside the band of real mean waits still counts, as a fraction of the
                                 ///< nearer edge (the issue's 1%).
  double start_tolerance = 0;    ///< How much larger than the replicas' mean pairwise start difference the
                                 ///< simulator's may be, as a fraction of it (0: no larger).
};

/// The simulated schedule against one real replica (the simulator replaying that replica's own submissions).
struct ReplicaComparison {
  std::string name;         ///< The replica's folder name.
  double start_diff_s = 0;  ///< Mean |simulated start - real start|.
  double tau = 0;           ///< Kendall tau-b of the start order, simulated vs real.
  double real_wait_s = 0;   ///< The replica's mean wait.
  double sim_wait_s = 0;    ///< The simulation's mean wait on the replica's submissions.
  double sim_bias_s = 0;    ///< Mean (simulated start - real start).
};

/// Two real replicas against each other.
struct PairSpread {
  std::string a, b;         ///< Replica names.
  double start_diff_s = 0;  ///< Mean |start difference|.
  double tau = 0;           ///< Kendall tau-b of their start orders.
};

/// The whole comparison.
struct FidelityReport {
  std::size_t jobs = 0;                       ///< Jobs per replica.
  std::vector<ReplicaComparison> replicas;    ///< One per replica.
  std::vector<PairSpread> pairs;              ///< Every pair of replicas.
  double sim_start_diff_s = 0;                ///< Mean over replicas of ReplicaComparison::start_diff_s.
  double pair_start_diff_s = 0;               ///< Mean over pairs of PairSpread::start_diff_s (0 without pairs).
  double pair_start_diff_min_s = 0;           ///< Smallest pairwise difference.
  double pair_start_diff_max_s = 0;           ///< Largest pairwise difference.
  double sim_tau = 0;                         ///< Mean simulated-vs-real tau-b.
  double pair_tau_min = 0, pair_tau_max = 0;  ///< Range of the replicas' pairwise tau-b.
  double sim_wait_s = 0;                      ///< Mean over replicas of the simulated mean wait.
  double band_low_s = 0, band_high_s = 0;     ///< The band of the replicas' mean waits.
  double wait_outside_pct = 0;                ///< How far the simulated mean wait is outside the band, % of the nearer
                                              ///< edge (0 inside, + above, - below).
  bool has_spread = false;                    ///< At least two replicas: a verdict can be given.
  bool wait_inside = false;                   ///< Mean wait inside the band, or within the edge tolerance.
  bool starts_inside = false;                 ///< sim_start_diff_s <= pair_start_diff_s.
  bool inside = false;                        ///< Both: the simulator is inside the real run-to-run spread.
};

/// Compares `simulated[k]` (the simulation of replica k's submissions, jobs by workload index) with
/// `recordings[k]`, and the recordings with each other. Throws RecordingError when the replicas do not hold the
/// same workload indices, or a simulated schedule lacks a job.
FidelityReport compare_with_replicas(const std::vector<Recording>& recordings,
                                     const std::vector<std::vector<RecordedJob>>& simulated,
                                     const FidelityCriteria& criteria);

/// The report as the table `gputwin fidelity` prints.
std::string format_report(const FidelityReport& report, const std::string& title);

/// Writes DIR/fidelity.json (the report) and DIR/jobs.csv (per job: index, then per replica its real and simulated
/// start and wait). Creates DIR. Throws std::runtime_error naming the file on failure.
void write_report(const FidelityReport& report, const std::vector<Recording>& recordings,
                  const std::vector<std::vector<RecordedJob>>& simulated, const std::filesystem::path& dir);

}  // namespace gputwin
