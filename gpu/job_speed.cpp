#include "gpu/job_speed.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "gpu/perf_model_error.hpp"

namespace gputwin {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kFeatureBytes = 1024.0 * kMiB;  // "large message" for CommFeatures: 1 GiB

void require(bool ok, const char* field, const char* problem) {
  if (!ok) throw PerfModelError(field, problem);
}

bool finite_nonneg(double v) {
  return std::isfinite(v) && v >= 0;
}
bool fraction(double v) {
  return std::isfinite(v) && v >= 0 && v <= 1;
}

// Time of `calls` collectives moving `total_bytes` in buckets of `bucket_mib` (0: one call): full buckets plus
// the remainder, each costed by NCCL's pick for its size.
double bucketed_s(Collective c, double total_bytes, double bucket_mib, const CommPath& path, const NcclOptions& o) {
  if (total_bytes <= 0 || path_ranks(path) <= 1) return 0;
  const double bucket = bucket_mib * kMiB;
  if (bucket <= 0 || bucket >= total_bytes) return nccl_collective(c, total_bytes, path, o).time_s;
  const double full = std::floor(total_bytes / bucket);
  const double rest = total_bytes - full * bucket;
  double t = full * nccl_collective(c, bucket, path, o).time_s;
  if (rest > 0) t += nccl_collective(c, rest, path, o).time_s;
  return t;
}

// One data-parallel step's collectives: DDP all-reduce, or ZeRO's reduce-scatter + all-gather(s).
double data_parallel_comm_s(double bytes, Sharding sharding, double bucket_mib, const CommPath& path,
                            const NcclOptions& o) {
  switch (sharding) {
    case Sharding::kNone:
      return bucketed_s(Collective::kAllReduce, bytes, bucket_mib, path, o);
    case Sharding::kZero2:
      return bucketed_s(Collective::kReduceScatter, bytes, bucket_mib, path, o) +
             bucketed_s(Collective::kAllGather, bytes, bucket_mib, path, o);
    case Sharding::kZero3:
      return bucketed_s(Collective::kReduceScatter, bytes, bucket_mib, path, o) +
             2 * bucketed_s(Collective::kAllGather, bytes, bucket_mib, path, o);
  }
  return 0;
}

double hybrid_activation_bytes(const HybridProfile& h) {
  if (h.activation_bytes > 0) return h.activation_bytes;
  return static_cast<double>(h.micro_batch_size) * h.sequence_length * h.hidden_size * h.activation_bytes_per_element;
}

void validate(const DataParallelProfile& p) {
  require(finite_nonneg(p.parameters_billion), "data_parallel.parameters_billion", "must be >= 0");
  require(finite_nonneg(p.gradient_bytes_per_parameter), "data_parallel.gradient_bytes_per_parameter", "must be >= 0");
  require(finite_nonneg(p.compute_s), "data_parallel.compute_s", "must be >= 0");
  require(fraction(p.overlap), "data_parallel.overlap", "must be in [0, 1]");
  require(finite_nonneg(p.bucket_mib), "data_parallel.bucket_mib", "must be >= 0");
}

void validate(const HybridProfile& h) {
  require(h.tp >= 1, "hybrid.tp", "must be at least 1");
  require(h.pp >= 1, "hybrid.pp", "must be at least 1");
  require(h.dp >= 1, "hybrid.dp", "must be at least 1");
  require(h.micro_batches >= 1, "hybrid.micro_batches", "must be at least 1");
  require(finite_nonneg(h.compute_s), "hybrid.compute_s", "must be >= 0");
  require(finite_nonneg(h.hidden_size), "hybrid.hidden_size", "must be >= 0");
  require(finite_nonneg(h.activation_bytes_per_element), "hybrid.activation_bytes_per_element", "must be >= 0");
  require(finite_nonneg(h.activation_bytes), "hybrid.activation_bytes", "must be >= 0");
  require(finite_nonneg(h.parameters_billion), "hybrid.parameters_billion", "must be >= 0");
  require(finite_nonneg(h.gradient_bytes_per_parameter), "hybrid.gradient_bytes_per_parameter", "must be >= 0");
  require(fraction(h.overlap), "hybrid.overlap", "must be in [0, 1]");
  require(finite_nonneg(h.bucket_mib), "hybrid.bucket_mib", "must be >= 0");
  if (h.tp > 1 || h.pp > 1) {
    require(hybrid_activation_bytes(h) > 0, "hybrid.activation_bytes",
            "needed when tp or pp > 1: give it, or hidden_size, sequence_length and micro_batch_size");
  }
  if (h.tp > 1) require(h.layers >= 1, "hybrid.layers", "must be at least 1 when tp > 1");
  if (h.layers > 0) require(h.layers >= h.pp, "hybrid.layers", "must be at least pp (one layer per stage)");
}

void validate(const MeasuredProfile& m) {
  require(std::isfinite(m.step_s) && m.step_s > 0, "measured.step_s", "must be > 0");
  require(fraction(m.exposed_comm_fraction), "measured.exposed_comm_fraction", "must be in [0, 1]");
  require(std::isfinite(m.message_bytes) && m.message_bytes > 0, "measured.message_bytes", "must be > 0");
}

void validate(const FittedProfile& f) {
  require(std::isfinite(f.compute_s), "fitted.compute_s", "must be finite");
  require(std::isfinite(f.exposed_bytes), "fitted.exposed_bytes", "must be finite");
  require(std::isfinite(f.latency_count), "fitted.latency_count", "must be finite");
}

StepBreakdown breakdown(const DataParallelProfile& p, const CommPath& path, const NcclOptions& o) {
  StepBreakdown b;
  b.compute_s = p.compute_s;
  const double bytes = p.parameters_billion * 1e9 * p.gradient_bytes_per_parameter;
  b.dp_s = data_parallel_comm_s(bytes, p.sharding, p.bucket_mib, path, o);
  b.hidden_s = std::min(p.overlap * b.dp_s, b.compute_s);
  return b;
}

StepBreakdown breakdown(const HybridProfile& h, const CommPath& path, const NcclOptions& o) {
  const std::uint64_t gpus = static_cast<std::uint64_t>(h.tp) * h.pp * h.dp;
  if (gpus != path_ranks(path)) {
    throw PerfModelError("hybrid", "tp x pp x dp = " + std::to_string(gpus) + " GPUs, but the placement has " +
                                       std::to_string(path_ranks(path)));
  }
  StepBreakdown b;
  b.compute_s = h.compute_s;
  const double act = hybrid_activation_bytes(h);
  // 1F1B pipeline: (m + pp - 1) slots per direction lie on the critical path (Narayanan et al., SC'21, 2.2).
  const double slots = static_cast<double>(h.micro_batches) + h.pp - 1;
  if (h.tp > 1) {
    const double layers_per_stage = static_cast<double>(h.layers) / h.pp;
    const CommPath tp_path = group_path(path, 1, h.tp);
    b.tp_s = slots * layers_per_stage * 4 * nccl_collective(Collective::kAllReduce, act, tp_path, o).time_s;
  }
  if (h.pp > 1) {
    // The slowest stage boundary: across nodes when the pipeline spans nodes; there all tp ranks of a stage
    // (at most the node's GPUs) send at once through the node's NICs.
    const CommPath pipe = group_path(path, h.tp, h.pp);
    CommPath pair = pipe;
    if (pipe.nodes > 1) {
      pair.nodes = 2;
      pair.gpus_per_node = std::min(h.tp, path.gpus_per_node);
      pair.inter_node_gbps = path.inter_node_gbps;
      pair.scale_up_domain_nodes = pipe.scale_up_domain_nodes >= pipe.nodes ? 2 : 1;
    } else {
      pair.nodes = 1;
      pair.gpus_per_node = 2;
    }
    b.pp_s = slots * 2 * p2p_time_s(act, pair, o);
  }
  if (h.dp > 1) {
    const double bytes =
        h.parameters_billion * 1e9 / (static_cast<double>(h.tp) * h.pp) * h.gradient_bytes_per_parameter;
    b.dp_s = bucketed_s(Collective::kAllReduce, bytes, h.bucket_mib, group_path(path, h.tp * h.pp, h.dp), o);
  }
  b.hidden_s = std::min(h.overlap * b.dp_s, b.compute_s);
  return b;
}

StepBreakdown breakdown(const MeasuredProfile& m, const CommPath& path, const NcclOptions& o) {
  StepBreakdown b;
  b.compute_s = m.step_s * (1 - m.exposed_comm_fraction);
  const double exposed_ref = m.step_s * m.exposed_comm_fraction;
  if (exposed_ref > 0) {
    const double t_ref = nccl_collective(Collective::kAllReduce, m.message_bytes, m.reference, o).time_s;
    if (!(t_ref > 0)) {
      throw PerfModelError("measured.reference", "a single-GPU reference placement has no communication to scale");
    }
    b.dp_s = exposed_ref * nccl_collective(Collective::kAllReduce, m.message_bytes, path, o).time_s / t_ref;
  }
  return b;
}

StepBreakdown breakdown(const FittedProfile& f, const CommPath& path, const NcclOptions& o) {
  StepBreakdown b;
  b.compute_s = f.compute_s;
  const CommFeatures x = comm_features(path, o);
  b.dp_s = f.exposed_bytes * x.seconds_per_byte + f.latency_count * x.latency_s;
  return b;
}

}  // namespace

CommFeatures comm_features(const CommPath& path, const NcclOptions& opts) {
  const auto ring = nccl_cost(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, kFeatureBytes, path, opts);
  if (!ring) return {};
  return {1.0 / (ring->bandwidth_gbps * 1e9), ring->latency_us * 1e-6};
}

CommPath group_path(const CommPath& job, std::uint32_t stride, std::uint32_t size) {
  CommPath g = job;
  const std::uint32_t ppn = std::max<std::uint32_t>(job.gpus_per_node, 1);
  stride = std::max<std::uint32_t>(stride, 1);
  if (size <= 1) {
    g.nodes = 1;
    g.gpus_per_node = 1;
    g.switch_hops = 0;
    g.inter_latency_us = 0;
    g.scale_up_domain_nodes = 1;
    return g;
  }
  // Ranks of the group on one node: consecutive members are `stride` ranks apart, nodes hold ppn ranks.
  const std::uint32_t per_node = stride >= ppn ? 1 : std::max<std::uint32_t>(1, std::min(size, ppn / stride));
  const std::uint32_t nodes = (size + per_node - 1) / per_node;
  if (nodes == 1) {
    g.nodes = 1;
    g.gpus_per_node = size;
    g.switch_hops = 0;
    g.inter_latency_us = 0;
    g.scale_up_domain_nodes = 1;
    return g;
  }
  g.nodes = nodes;
  g.gpus_per_node = per_node;
  // ppn / per_node groups of this kind share each node's NICs.
  g.inter_node_gbps = job.inter_node_gbps * per_node / ppn;
  // Nodes the group stretches over (its members are stride / ppn nodes apart): one NVLink domain if that fits.
  const std::uint32_t node_stride = stride >= ppn ? stride / ppn : 1;
  const std::uint64_t span = static_cast<std::uint64_t>(nodes - 1) * node_stride + 1;
  g.scale_up_domain_nodes = job.scale_up_domain_nodes >= span ? nodes : 1;
  return g;
}

void validate_profile(const JobProfile& profile) {
  std::visit([](const auto& p) { validate(p); }, profile);
}

StepBreakdown step_breakdown(const JobProfile& profile, const CommPath& path, const NcclOptions& opts) {
  validate_profile(profile);
  StepBreakdown b = std::visit([&](const auto& p) { return breakdown(p, path, opts); }, profile);
  b.step_s = b.compute_s + b.tp_s + b.pp_s + b.dp_s - b.hidden_s;
  return b;
}

double step_time_s(const JobProfile& profile, const CommPath& path, const NcclOptions& opts) {
  return step_breakdown(profile, path, opts).step_s;
}

double speed_factor(const JobProfile& profile, const CommPath& actual, const CommPath& reference,
                    const NcclOptions& opts) {
  const double ref = step_time_s(profile, reference, opts);
  const double act = step_time_s(profile, actual, opts);
  if (!(act > 0)) {
    if (!(ref > 0)) return 1.0;  // nothing to do on either placement
    throw PerfModelError("profile", "step time on the actual placement is not positive");
  }
  return ref / act;
}

}  // namespace gputwin
