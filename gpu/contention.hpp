// Contention between jobs that share links: each running job's long-lived flows (its collectives' traffic, as
// routes over a FlowNetwork) compete for link capacity, and the model gives each job the bandwidth it achieves
// as a fraction of what it would get alone: the slowdown input of the job-speed model. Two implementations:
//
// - analytic (make_analytic_contention): every link splits its capacity equally among the flows crossing it and a
//   flow gets the smallest such split on its route (capped by its demand). Incremental: a change touches only the
//   links of the job added or removed and the flows on them, O(route length x sharers). It never gives more than
//   max-min fairness and gives less when a flow is held back elsewhere and leaves its split of a link unused
//   (parking lot: a flow short of its split on one link does not hand the rest to the others).
// - SimGrid (make_simgrid_contention): SimGrid 3.32's flow-level max-min solver (network model CM02, no latency or
//   bandwidth factors, no cross traffic): the allocation where no flow can get more without taking from a flow
//   that has no more. Every flow is a long-lived SimGrid communication; a change runs the engine for one second
//   of its own clock and reads each flow's progress. Slower per change than the analytic model; exact max-min.
//
// A job's bandwidth is its slowest flow's rate: ring and tree collectives are synchronous, the slowest link paces
// every step. Its share is that rate over the same job's slowest rate on an otherwise empty network (in the same
// model), in (0, 1]; a job without flows (one node) has share 1.
//
//   auto model = make_analytic_contention(net);
//   model->add_job(7, ring_flows);
//   for (JobKey j : model->changed_jobs()) replan(j, model->share(j));
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "gpu/flow_network.hpp"

namespace gputwin {

/// Bandwidth sharing between the jobs on one network.
class ContentionModel {
 public:
  virtual ~ContentionModel() = default;

  /// Starts a job's flows and updates every share. Throws FlowNetworkError if `job` is already present or a flow
  /// is malformed (nothing changes then).
  virtual void add_job(JobKey job, std::span<const Flow> flows) = 0;
  /// Stops a job's flows and updates every share. Throws FlowNetworkError if `job` is not present.
  virtual void remove_job(JobKey job) = 0;

  /// The job's bandwidth as a fraction of what it gets alone, in (0, 1]. Throws FlowNetworkError if not present.
  [[nodiscard]] virtual double share(JobKey job) const = 0;
  /// The job's achieved bandwidth: its slowest flow's rate, GB/s (0 for a job without flows).
  [[nodiscard]] virtual double rate_gbps(JobKey job) const = 0;
  /// The job's slowest flow's rate alone on the network, GB/s (0 for a job without flows).
  [[nodiscard]] virtual double alone_rate_gbps(JobKey job) const = 0;
  /// Rate of the job's `index`-th flow (in add_job's order), GB/s.
  [[nodiscard]] virtual double flow_rate_gbps(JobKey job, std::size_t index) const = 0;
  /// Jobs, other than the one just added or removed, whose share changed in the last add_job or remove_job,
  /// in increasing key order: the only ones a simulator needs to re-plan.
  [[nodiscard]] virtual std::span<const JobKey> changed_jobs() const = 0;
  /// Jobs present.
  [[nodiscard]] virtual std::size_t job_count() const = 0;
  /// Whether `job` is present.
  [[nodiscard]] virtual bool contains(JobKey job) const = 0;
};

/// The equal-split model over `net`. Throws FlowNetworkError for a malformed network.
std::unique_ptr<ContentionModel> make_analytic_contention(FlowNetwork net);

/// Settings of the SimGrid model. SimGrid allows one engine per process and freezes its platform when it first
/// runs, so the first SimGrid model of a process creates pools of links and flow slots (`link_pool`,
/// `flow_pool`; ignored afterwards) and every later model (several may coexist) takes its links and flows from
/// what is left of them.
struct SimGridOptions {
  std::size_t link_pool = 4096;   ///< Links in the pool (a 1,024-node two-level fat tree needs 2,560).
  std::size_t flow_pool = 16384;  ///< Flows active at once across all SimGrid models (about 1.3 kB each).
  double flow_life_steps = 1e6;   ///< Changes a flow's SimGrid communication lasts at full rate before it is
                                  ///< restarted; rates read to about 1e-16 x this, relative.
};

/// The SimGrid max-min model over `net`. Throws FlowNetworkError for a malformed network or when the pool cannot
/// hold its links; add_job throws FlowNetworkError when the flow pool is exhausted.
std::unique_ptr<ContentionModel> make_simgrid_contention(FlowNetwork net, SimGridOptions options = {});

}  // namespace gputwin
