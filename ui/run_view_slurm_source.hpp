// A finished run (or a twin's folder) as the slurmrestd-compatible API sees it: the cluster as it stood at one
// simulated time of the run. Accounts, associations and QOS are those the run's jobs used (root above every account,
// one association per account and per account/user pair).
//
//   RunView view(dir);
//   RunViewSlurmSource source(view, view.info().end_s);
//   SlurmApi api(source, {});
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "results/run_view.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {

/// The Unix time shown for simulated time 0 when the run does not record one: 2026-01-01T00:00:00Z.
inline constexpr std::int64_t kDefaultEpochUnixS = 1'767'225'600;

/// slurmctld's MinJobAge default: ended jobs stay in GET jobs this long.
inline constexpr std::int64_t kMinJobAgeS = 300;

/// Serves a RunView at a fixed simulated time.
class RunViewSlurmSource : public SlurmSource {
 public:
  /// `view` must outlive the source. `at_s` is the simulated time every answer shows.
  RunViewSlurmSource(const RunView& view, std::int64_t at_s);

  [[nodiscard]] SlurmShapeContext context() const override;
  [[nodiscard]] std::vector<ServedJob> controller_jobs() const override;
  [[nodiscard]] std::optional<ServedJob> controller_job(std::int64_t job_id) const override;
  [[nodiscard]] std::vector<ServedNode> nodes() const override;
  [[nodiscard]] std::vector<PartitionRow> partitions() const override;
  [[nodiscard]] std::vector<ServedJob> accounting_jobs(std::int64_t from_s, std::int64_t to_s,
                                                       std::size_t max_jobs) const override;
  [[nodiscard]] std::optional<ServedJob> accounting_job(std::int64_t job_id) const override;
  [[nodiscard]] std::vector<ServedQos> qos() const override;
  [[nodiscard]] std::vector<ServedAccount> accounts() const override;
  [[nodiscard]] std::vector<ServedAssociation> associations() const override;
  [[nodiscard]] SlurmDiagCounts diag() const override;

  /// The cluster name shown: the scenario's name in lower case, other characters than letters, digits, '-' and
  /// '_' replaced by '-' ("gputwin" if that leaves nothing).
  [[nodiscard]] static std::string cluster_name(std::string_view scenario);

 private:
  /// A job row with what the shapes need besides it (its nodes, their CPUs and GPU indices, ids).
  [[nodiscard]] ServedJob slurm_job(JobRow row) const;

  const RunView& view_;
  std::int64_t at_s_;
  std::unordered_map<std::string, std::int32_t> node_index_;       // name -> index into node_rows_
  std::vector<NodeRow> node_rows_;                                 // static facts (CPUs, GPU type) of every node
  std::vector<ServedAssociation> associations_;                    // root, then accounts, then account/user pairs
  std::unordered_map<std::string, std::int32_t> association_ids_;  // "account\x1fuser" -> id
};

}  // namespace gputwin
