// Bookkeeping shared by the two contention models (gpu/contention.hpp): jobs, their flows in a flat slot table,
// the flows crossing each link, and the share and changed-jobs logic. Included only by gpu/contention*.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "gpu/contention.hpp"

namespace gputwin::contention_detail {

/// Index of a flow slot.
using FlowId = std::uint32_t;

struct JobRec;

/// One active flow.
struct FlowRec {
  JobRec* owner = nullptr;    ///< Its job (unordered_map nodes do not move); null while the slot is free.
  std::vector<LinkId> route;  ///< Kept across reuse of the slot, so steady state does not allocate.
  double demand_gbps = 0;     ///< 0 = unbounded.
  double rate_gbps = 0;       ///< Current rate.
};

/// One active job.
struct JobRec {
  JobKey key = 0;
  std::vector<FlowId> flows;  ///< In add_job's order.
  double alone_gbps = 0;      ///< Slowest flow alone on the network.
  double rate_gbps = 0;       ///< Slowest flow now.
  double share = 1;           ///< rate / alone, 1 without flows.
  std::uint32_t mark = 0;     ///< mark_jobs_on dedup.
};

/// The jobs and flows of one model, and the ContentionModel queries over them.
class FlowTable {
 public:
  explicit FlowTable(FlowNetwork net);

  [[nodiscard]] const FlowNetwork& network() const { return net_; }
  /// Validates and inserts a job; its flows are indexed on their links with rate 0 and the job's alone rate 0.
  JobRec& insert_job(JobKey job, std::span<const Flow> flows);
  /// Unindexes and frees the job's flows and forgets the job.
  void erase_job(JobKey job);
  /// The job, or a FlowNetworkError naming it.
  [[nodiscard]] const JobRec& at(JobKey job) const;
  [[nodiscard]] JobRec& at(JobKey job);
  [[nodiscard]] FlowRec& flow(FlowId id) { return flows_[id]; }
  [[nodiscard]] const FlowRec& flow(FlowId id) const { return flows_[id]; }
  /// Flows crossing a link now.
  [[nodiscard]] const std::vector<FlowId>& flows_on(LinkId link) const { return on_link_[link]; }
  [[nodiscard]] std::size_t job_count() const { return jobs_.size(); }
  [[nodiscard]] bool contains(JobKey job) const { return jobs_.contains(job); }

  /// Collects, once each, the links of the given job's flows into `links` (appended).
  void collect_links(const JobRec& rec, std::vector<LinkId>& links);
  /// Marks the job of every flow on `links` for refresh_marked().
  void mark_jobs_on(std::span<const LinkId> links);
  /// Marks one job for refresh_marked().
  void mark_job(JobKey job) { mark(at(job)); }
  /// Marks one job for refresh_marked().
  void mark(JobRec& rec) {
    if (rec.mark != mark_stamp_ + 1) {
      rec.mark = mark_stamp_ + 1;
      marked_.push_back(&rec);
    }
  }
  /// Recomputes rate and share of the marked jobs from their flows' rates and sets changed_jobs() to those,
  /// other than `except`, whose share moved by more than `tolerance`.
  void refresh_marked(JobKey except, double tolerance);
  /// Result of the last refresh_marked().
  [[nodiscard]] std::span<const JobKey> changed() const { return changed_; }

 private:
  FlowNetwork net_;
  std::vector<FlowRec> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<std::vector<FlowId>> on_link_;
  std::unordered_map<JobKey, JobRec> jobs_;
  std::vector<std::uint32_t> link_stamp_;  ///< collect_links dedup.
  std::uint32_t stamp_ = 0;
  std::uint32_t mark_stamp_ = 0;
  std::vector<JobRec*> marked_;
  std::vector<JobKey> changed_;
};

/// Max-min fair rates (progressive filling) of `flows` alone on `net`, in the flows' order, GB/s: the allocation
/// SimGrid's solver computes, used for a job's rate on an otherwise empty network.
std::vector<double> max_min_rates(const FlowNetwork& net, std::span<const Flow> flows);

/// ContentionModel queries answered from a FlowTable; the models implement add_job and remove_job.
class TableModel : public ContentionModel {
 public:
  explicit TableModel(FlowNetwork net) : table_(std::move(net)) {}
  [[nodiscard]] double share(JobKey job) const override { return table_.at(job).share; }
  [[nodiscard]] double rate_gbps(JobKey job) const override { return table_.at(job).rate_gbps; }
  [[nodiscard]] double alone_rate_gbps(JobKey job) const override { return table_.at(job).alone_gbps; }
  [[nodiscard]] double flow_rate_gbps(JobKey job, std::size_t index) const override;
  [[nodiscard]] std::span<const JobKey> changed_jobs() const override { return table_.changed(); }
  [[nodiscard]] std::size_t job_count() const override { return table_.job_count(); }
  [[nodiscard]] bool contains(JobKey job) const override { return table_.contains(job); }

 protected:
  FlowTable table_;
};

}  // namespace gputwin::contention_detail
