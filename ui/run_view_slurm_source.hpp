// A finished run (or a twin's folder, or a live run's copy in memory) as the slurmrestd-compatible API sees it: the
// cluster as it stood at one simulated time of the run. Accounts, associations and QOS are those the run's jobs used
// (root above every account, one association per account and per account/user pair).
//
//   RunView view(dir);
//   RunViewSlurmSource source(view, view.info().end_s);
//   SlurmApi api(source, {});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

/// What the source reads of a run as it stood at one simulated second: a RunView's (a results folder), or a live
/// run's copy of its state in memory (ui/live_run), which give the same for the same state.
struct SlurmRunState {
  RunDescription info;                   ///< What the run is (scenario and epoch are read).
  std::int64_t at_s = 0;                 ///< The second every answer shows.
  const JobTable* jobs = nullptr;        ///< Every job's row (a row knows its history: any second).
  std::vector<NodeRow> nodes;            ///< Every node at at_s, without GPU use (RunView::nodes(at_s, false)).
  std::vector<PartitionRow> partitions;  ///< Every partition at at_s.
  /// The GPU indices each node held of job `job_id`'s run that began at `start_s` (RunView::job_gpus).
  std::function<std::vector<std::pair<std::int32_t, std::string>>(std::int64_t job_id, std::int64_t start_s)> job_gpus;
  std::shared_ptr<const void> keep;  ///< What `jobs` and `job_gpus` refer to, kept as long as the source.
};

/// Serves a run at a fixed simulated time.
class RunViewSlurmSource : public SlurmSource {
 public:
  /// `view` must outlive the source. `at_s` is the simulated time every answer shows.
  RunViewSlurmSource(const RunView& view, std::int64_t at_s);
  /// A run as `state` holds it at its second.
  explicit RunViewSlurmSource(SlurmRunState state);

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

  SlurmRunState run_;
  std::int64_t at_s_;
  std::unordered_map<std::string, std::int32_t> node_index_;       // name -> index into run_.nodes
  std::vector<ServedAssociation> associations_;                    // root, then accounts, then account/user pairs
  std::unordered_map<std::string, std::int32_t> association_ids_;  // "account\x1fuser" -> id
};

}  // namespace gputwin
