#include "results/summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gputwin {

double nearest_rank_percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

RunSummary summarize(const ClusterState& state, const FaultLog* faults, const CloudLog* cloud) {
  RunSummary s;
  s.jobs = state.job_count();
  std::vector<double> waits;
  waits.reserve(state.job_count());
  double cpu_seconds = 0, gpu_seconds = 0, slowdown_sum = 0;
  std::uint64_t slowdown_count = 0;
  bool any = false;
  double leaves_sum = 0;
  std::vector<NodeIndex> nodes;
  std::vector<SimTime> last_requeue;
  if (!state.past_runs().empty()) {
    last_requeue.assign(state.job_count(), -1);
    for (const PastRun& r : state.past_runs()) last_requeue[r.job] = r.requeued;
  }
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    const JobSpec& spec = state.spec(j);
    if (rt.rejected) {
      --s.jobs;
      ++s.rejected;
      continue;
    }
    s.by_state[std::string(job_state_name(rt.state))]++;
    if (!any || spec.submit_s < s.first_submit_s) s.first_submit_s = static_cast<double>(spec.submit_s);
    any = true;
    s.last_submit_s = std::max(s.last_submit_s, static_cast<double>(spec.submit_s));
    s.requeues += rt.restarts;
    s.lost_gpu_hours += rt.lost_gpu_s / 3600.0;
    s.allocated_gpu_hours += rt.prior_runs_gpu_s / 3600.0;
    s.gpu_hours_lost_fault_work += rt.fault_lost_gpu_s / 3600.0;
    s.gpu_hours_lost_restart += rt.restart_gpu_s / 3600.0;
    s.gpu_hours_checkpoint += rt.checkpoint_gpu_s / 3600.0;
    if (rt.start < 0) continue;
    ++s.started;
    // A requeue resets submit_time (slurm-semantics.md 4): a requeued job waits from its last requeue.
    const double submitted = last_requeue.empty() || last_requeue[j] < 0 ? static_cast<double>(spec.submit_s)
                                                                         : to_seconds_f(last_requeue[j]);
    const double wait = to_seconds_f(rt.start) - submitted;
    waits.push_back(wait);
    if (rt.end < 0) continue;
    const double run = to_seconds_f(rt.end - rt.start);
    s.last_end_s = std::max(s.last_end_s, to_seconds_f(rt.end));
    for (const NodeAllocation& a : state.allocation(j)) {
      cpu_seconds += a.cpus * run;
      gpu_seconds += a.gpus * run;
    }
    slowdown_sum += std::max(1.0, (wait + run) / std::max(run, kSlowdownTauS));
    ++slowdown_count;
    const auto& allocation = state.allocation(j);
    if (allocation.size() > 1) {
      ++s.multi_node_jobs;
      nodes.clear();
      for (const NodeAllocation& a : allocation) nodes.push_back(a.node);
      const std::uint32_t leaves = leaves_spanned(state.config().topology.slurm, nodes);
      leaves_sum += leaves;
      if (leaves > 1) ++s.cross_leaf_jobs;
    }
    if (rt.state == spec.outcome && rt.state != JobState::kTimeout) {  // ran to its own end
      const double job_gpus = state.allocated_gpus(j);
      // The run's planned reference length (its trace time, plus restart and checkpoint overheads with faults).
      const double planned = rt.run_length_s > 0 ? rt.run_length_s : static_cast<double>(spec.run_time_s);
      s.placement_gpu_hours += job_gpus * (run - planned) / 3600.0;
    }
  }
  // Runs discarded by requeues held their nodes too: utilisation counts every run (gpu_hours only the last ones).
  double past_cpu_seconds = 0, past_gpu_seconds = 0;
  for (const PastRun& r : state.past_runs()) {
    const double run = to_seconds_f(r.end - r.start);
    for (const NodeAllocation& a : state.allocation(r)) {
      past_cpu_seconds += a.cpus * run;
      past_gpu_seconds += a.gpus * run;
    }
  }
  if (s.multi_node_jobs > 0) s.leaves_per_multi_node_job = leaves_sum / static_cast<double>(s.multi_node_jobs);
  s.makespan_s = std::max(0.0, s.last_end_s - s.first_submit_s);
  const auto cpus = static_cast<double>(state.config().total_cpus());
  const auto gpus = static_cast<double>(state.config().total_gpus());
  if (s.makespan_s > 0) {
    s.cpu_utilization = cpus > 0 ? (cpu_seconds + past_cpu_seconds) / (cpus * s.makespan_s) : 0;
    s.gpu_utilization = gpus > 0 ? (gpu_seconds + past_gpu_seconds) / (gpus * s.makespan_s) : 0;
  }
  s.cpu_hours = cpu_seconds / 3600.0;
  s.gpu_hours = gpu_seconds / 3600.0;
  s.allocated_gpu_hours += s.gpu_hours;
  if (s.allocated_gpu_hours > 0) {
    const double losses =
        s.gpu_hours_lost_fault_work + s.gpu_hours_lost_restart + s.gpu_hours_checkpoint + s.lost_gpu_hours;
    s.goodput = std::max(0.0, 1 - losses / s.allocated_gpu_hours);
  }
  if (faults != nullptr) {
    s.lifecycle = true;
    s.faults = faults->faults.size();
    s.faults_suppressed = faults->suppressed;
    s.job_interruptions = faults->interruptions.size();
    for (const InterruptionRecord& r : faults->interruptions) s.black_hole_interruptions += r.black_hole ? 1 : 0;
    for (const FaultRecord& f : faults->faults) s.lost_gpu_hours_by_class[f.fault_class] += f.lost_gpu_s / 3600.0;
    const double node_seconds = static_cast<double>(faults->nodes) * to_seconds_f(faults->horizon);
    if (node_seconds > 0) s.node_availability = std::max(0.0, 1 - faults->node_out_s / node_seconds);
  }
  if (cloud != nullptr) {
    s.autoscaled = !cloud->scaling.empty() || cloud->pool_node_hours > 0;
    for (const ScalingRecord& r : cloud->scaling) {
      s.nodes_created += r.action == ScalingRecord::Action::kCreate ? 1 : 0;
      s.boot_failures += r.action == ScalingRecord::Action::kBootFailed ? 1 : 0;
      s.nodes_removed += r.action == ScalingRecord::Action::kRemove ? 1 : 0;
    }
    s.pool_node_hours = cloud->pool_node_hours;
    s.cold_start_s = cloud->cold_start_s;
    s.costed = cloud->has_cost;
    s.cost_total_usd = cloud->cost_total_usd;
    s.cost_idle_usd = cloud->cost_idle_usd;
    if (s.allocated_gpu_hours > 0) s.cost_per_used_gpu_hour = s.cost_total_usd / s.allocated_gpu_hours;
    s.spot_interruptions = cloud->spot_interruptions;
    s.cloud_job_interruptions = cloud->interruptions.size();
    for (const InterruptionRecord& r : cloud->interruptions) s.gpu_hours_lost_cloud += r.lost_gpu_s / 3600.0;
    for (const QuotaEvent& e : cloud->quota_events)
      s.quota_cancels += e.action == "cancel" || e.action == "refuse" ? 1 : 0;
  }
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    s.wait_mean_s = sum / static_cast<double>(waits.size());
    std::sort(waits.begin(), waits.end());
    s.wait_p50_s = nearest_rank_percentile(waits, 50);
    s.wait_p95_s = nearest_rank_percentile(waits, 95);
    s.wait_p99_s = nearest_rank_percentile(waits, 99);
    s.wait_max_s = waits.back();
  }
  if (slowdown_count > 0) s.bounded_slowdown_mean = slowdown_sum / static_cast<double>(slowdown_count);
  return s;
}

}  // namespace gputwin
