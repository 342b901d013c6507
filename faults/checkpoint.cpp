// Checkpoint-restart formulas (checkpoint.hpp); the formulas are gpu-domain.md 3.5's (Young 1974, Daly 2006,
// Meta HPCA'25's first-order ETTR) and 2.2's series model MTTF = 1 / (N x r_f).
#include "faults/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gputwin {
namespace {

double transfer_s(double size_gb, double volume_gbps, double per_node_gbps, std::uint32_t nodes) {
  double gbps = volume_gbps;
  if (per_node_gbps > 0) gbps = std::min(gbps, per_node_gbps * nodes);
  if (!(gbps > 0)) return std::numeric_limits<double>::infinity();
  return size_gb / gbps;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

}  // namespace

double checkpoint_size_gb(double parameters, double bytes_per_parameter) {
  return parameters * bytes_per_parameter / 1e9;
}

double checkpoint_write_s(double size_gb, const StorageVolume& volume, std::uint32_t writer_nodes) {
  return transfer_s(size_gb, volume.write_gbps, volume.per_node_gbps, writer_nodes);
}

double checkpoint_read_s(double size_gb, const StorageVolume& volume, std::uint32_t reader_nodes) {
  return transfer_s(size_gb, volume.read_gbps, volume.per_node_gbps, reader_nodes);
}

double young_interval_s(double write_s, double mtbf_s) {
  return std::sqrt(2.0 * write_s * mtbf_s);
}

double daly_interval_s(double write_s, double mtbf_s) {
  if (write_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = write_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * write_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - write_s;
}

double expected_lost_work_s(const CheckpointPlan& plan) {
  return plan.restart_s + plan.interval_s / 2.0;
}

double expected_lost_work_exponential_s(const CheckpointPlan& plan, double mtbf_s) {
  const double s = plan.interval_s + (plan.blocking_write ? plan.write_s : 0.0);
  if (s <= 0) return plan.restart_s;
  const double e = std::exp(-s / mtbf_s);
  return plan.restart_s + mtbf_s - s * e / (1.0 - e);
}

double goodput_first_order(const CheckpointPlan& plan, double mtbf_s) {
  if (!(plan.interval_s > 0) || !(mtbf_s > 0)) return 0;
  const double write_term = plan.blocking_write ? plan.write_s / plan.interval_s : 0.0;
  return std::clamp(1.0 - write_term - expected_lost_work_s(plan) / mtbf_s, 0.0, 1.0);
}

double daly_wall_time_s(const CheckpointPlan& plan, double solve_s, double mtbf_s) {
  const double m = mtbf_s;
  const double delta = plan.blocking_write ? plan.write_s : 0.0;
  return m * std::exp(plan.restart_s / m) * std::expm1((plan.interval_s + delta) / m) * solve_s / plan.interval_s;
}

double goodput_daly(const CheckpointPlan& plan, double mtbf_s) {
  if (!(plan.interval_s > 0) || !(mtbf_s > 0)) return 0;
  return 1.0 / daly_wall_time_s(plan, 1.0, mtbf_s);
}

JobFootprint dense_footprint(std::uint32_t gpus, std::uint32_t gpus_per_node, std::uint32_t links_per_node,
                             std::uint32_t nodes_per_switch, std::uint32_t nodes_per_rack) {
  JobFootprint job;
  job.gpus = gpus;
  job.nodes = ceil_div(gpus, gpus_per_node);
  job.nic_links = job.nodes * links_per_node;
  job.switches = ceil_div(job.nodes, nodes_per_switch);
  job.racks = ceil_div(job.nodes, nodes_per_rack);
  return job;
}

double job_failure_rate_per_hour(const FaultProfile& profile, const JobFootprint& job) {
  double rate = 0;
  for (const FaultClass& c : profile.classes) {
    if (c.effect == FaultEffect::kNone) continue;
    double components = 0;
    switch (c.component) {
      case ComponentKind::kGpu:
      case ComponentKind::kNvlink:
        components = job.gpus;
        break;
      case ComponentKind::kNode:
      case ComponentKind::kSoftware:
        components = job.nodes;
        break;
      case ComponentKind::kNicLink:
        components = job.nic_links;
        break;
      case ComponentKind::kSwitch:
        components = job.switches;
        break;
      case ComponentKind::kRack:
        components = job.racks;
        break;
    }
    rate += c.rate_per_component_hour * components;
  }
  return rate;
}

double job_mttf_hours(const FaultProfile& profile, const JobFootprint& job) {
  const double rate = job_failure_rate_per_hour(profile, job);
  return rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
}

}  // namespace gputwin
