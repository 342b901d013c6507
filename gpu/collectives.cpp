#include "gpu/collectives.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "gpu/perf_model_error.hpp"

namespace gputwin {
namespace {

constexpr std::size_t kAlgorithms = 5;
constexpr std::size_t kProtocols = 3;

std::size_t idx(Algorithm a) {
  return static_cast<std::size_t>(a);
}
std::size_t idx(Protocol p) {
  return static_cast<std::size_t>(p);
}

// Latencies in µs, indexed [algorithm][protocol] = {LL, LL128, Simple}: gpu-domain.md 4.4, which reads them
// from NVIDIA/nccl src/graph/tuning.cc (baseLat and hwLat[NCCL_HW_NVLINK / NCCL_HW_NET]). The NVLink NVLS-Tree
// entry is NCCL's own (23, the same as NVLS); the reference table leaves it out. Point-to-point (all-to-all) has
// no entry in tuning.cc: we charge it one Simple ring step (see p2p_cost()).
constexpr std::array<std::array<double, kProtocols>, kAlgorithms> kBaseLat{{
    {6.6, 14.0, 8.4},  // Ring
    {6.8, 14.0, 0.0},  // Tree
    {0.0, 0.0, 0.0},   // NVLS
    {0.0, 0.0, 0.0},   // NVLS-Tree
    {0.0, 0.0, 8.4},   // point-to-point: the ring's Simple base
}};
constexpr std::array<std::array<double, kProtocols>, kAlgorithms> kNvlinkLat{{
    {0.6, 1.9, 3.4},  // Ring
    {0.6, 1.25, 28},  // Tree
    {0, 0, 23},       // NVLS
    {0, 0, 23},       // NVLS-Tree
    {0, 0, 3.4},      // point-to-point
}};
constexpr std::array<std::array<double, kProtocols>, kAlgorithms> kNetLat{{
    {2.7, 4.0, 14},  // Ring
    {5.0, 8.5, 28},  // Tree
    {0, 0, 18},      // NVLS
    {0, 0, 14},      // NVLS-Tree
    {0, 0, 14},      // point-to-point
}};

// tuning.cc, the rest of the model (Hopper-era code, NVIDIA/nccl at the NVLS-Tree version):
// - getNetOverhead(): 1 µs per network post on Intel (2 on AMD), x3 for Simple; a ring step costs at least that.
constexpr double kNetOverheadUs = 1.0;
// - llMaxBws: the LL protocol's bandwidth cap, GB/s. One node: Ampere/Hopper row (87.7); several nodes: by CPU
//   vendor, Intel row (39.0 on 2 nodes, 20.4 beyond).
constexpr double kLlMaxBwOneNode = 87.7;
constexpr double kLlMaxBwTwoNodes = 39.0;
constexpr double kLlMaxBwManyNodes = 20.4;
// - ncclTopoGetAlgoTime(): "plateau effect of ring": multi-node Simple ring all-reduce latency x1.4 on
//   compute capability >= 8.0 (x1.9 before; gpu-domain.md quotes the older 1.9), once
//   bytes / (nChannels * nRanks) >= 64. NCCL's channel count comes from its topology search; we assume 16.
constexpr double kRingPlateau = 1.4;
constexpr double kAssumedChannels = 16;

// What NCCL's topology search would find on the path, in the terms tuning.cc uses.
struct Shape {
  std::uint32_t ranks;
  std::uint32_t nodes;      // NCCL's nNodes: 1 when the whole path is one NVLink domain (MNNVL)
  double ppn;               // ranks per NCCL node
  double nvlink_gbps;       // NVLink bandwidth NCCL moves per GPU and direction (line rate x efficiency)
  double net_gbps;          // scale-out bandwidth per node and direction
  double latency_inter_us;  // NCCL's graph latencyInter: added to every network step (twice for Simple)
};

std::uint32_t log2i(std::uint32_t n) {
  return n <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(n) - 1);
}

Shape shape_of(const CommPath& path, const NcclOptions& opts) {
  if (path.nodes == 0) throw PerfModelError("path.nodes", "must be at least 1");
  if (path.gpus_per_node == 0) throw PerfModelError("path.gpus_per_node", "must be at least 1");
  if (!(opts.nvlink_efficiency > 0 && opts.nvlink_efficiency <= 1)) {
    throw PerfModelError("nccl.nvlink_efficiency", "must be in (0, 1]");
  }
  if (!(path.inter_latency_us >= 0) || !std::isfinite(path.inter_latency_us)) {
    throw PerfModelError("path.inter_latency_us", "must be a finite non-negative number");
  }
  Shape s{};
  s.ranks = path.nodes * path.gpus_per_node;
  // tuning.cc: "MNNVL support - treat as a single NVLink connected node" when all ranks share one NVLink domain.
  const bool one_domain = path.nodes == 1 || path.scale_up_domain_nodes >= path.nodes;
  s.nodes = one_domain ? 1 : path.nodes;
  s.ppn = static_cast<double>(s.ranks) / s.nodes;
  s.nvlink_gbps = path.intra_node_gbps * opts.nvlink_efficiency;
  s.net_gbps = path.inter_node_gbps;
  s.latency_inter_us = path.inter_latency_us;
  if (s.ranks > 1 && s.ppn > 1 && !(path.intra_node_gbps > 0 && std::isfinite(path.intra_node_gbps))) {
    throw PerfModelError("path.intra_node_gbps", "must be positive when several GPUs share a node");
  }
  if (s.nodes > 1 && !(path.inter_node_gbps > 0 && std::isfinite(path.inter_node_gbps))) {
    throw PerfModelError("path.inter_node_gbps", "must be positive when the path spans several nodes");
  }
  return s;
}

bool offered(Collective c, Algorithm a, Protocol p, const Shape& s, const NcclOptions& opts) {
  if (c == Collective::kAllToAll) return a == Algorithm::kPointToPoint && p == Protocol::kSimple;
  if (a == Algorithm::kPointToPoint) return false;
  if (p == Protocol::kLL128 && !opts.ll128) return false;
  // tuning.cc: NVLS and NVLS-Tree run Simple only.
  if ((a == Algorithm::kNvls || a == Algorithm::kNvlsTree) && p != Protocol::kSimple) return false;
  switch (a) {
    case Algorithm::kRing:
      return true;
    case Algorithm::kTree:  // Tree: all-reduce only.
      return c == Collective::kAllReduce;
    case Algorithm::kNvls:  // NVLS: all-reduce, all-gather, reduce-scatter; multi-node needs CollNet (not modelled).
      return opts.nvls && s.nodes == 1 &&
             (c == Collective::kAllReduce || c == Collective::kAllGather || c == Collective::kReduceScatter);
    case Algorithm::kNvlsTree:  // NVLS-Tree: multi-node all-reduce ("if nNodes == 1 disable NVLS_TREE").
      return opts.nvls && s.nodes > 1 && c == Collective::kAllReduce;
    case Algorithm::kPointToPoint:
      return false;
  }
  return false;
}

// NCCL's graph bandwidth (nChannels x bwIntra/bwInter) for an algorithm on the path. NCCL's search picks
// channels whose intra- and inter-node speed both fit, so a multi-node ring or tree runs at the smaller of the
// per-GPU NVLink rate and the node's scale-out rate: each ring channel leaves every node once, so the node's
// NICs carry what one GPU's link carries (gpu-domain.md 4.6: "the node's NICs ~46 GB/s x 8 ~ 370 GB/s").
double graph_bw(Algorithm a, const Shape& s) {
  const bool gpu_links = s.ppn > 1;  // with one GPU per node only the NIC matters
  if (s.nodes == 1) return s.nvlink_gbps;
  const double intra = gpu_links ? s.nvlink_gbps : std::numeric_limits<double>::infinity();
  // tuning.cc: NVLS-Tree uses bwInter on 2 nodes and bwInter / 2 beyond (a tree node sends to two children).
  if (a == Algorithm::kNvlsTree) return std::min(intra, s.nodes <= 2 ? s.net_gbps : s.net_gbps / 2);
  return std::min(intra, s.net_gbps);
}

// Algorithm bandwidth (GB/s) as ncclTopoTuneModel computes comm->bandwidths[coll][a][p]. NCCL also caps some
// entries by nChannels x a per-channel maximum (perChMax*Bws); we do not know the channel count and leave the
// caps out: at 16+ channels they do not bind on H100 (36-41 GB/s per channel).
double algo_bandwidth(Collective c, Algorithm a, Protocol p, const Shape& s) {
  double bus = graph_bw(a, s);
  const double ll_max = s.nodes == 1 ? kLlMaxBwOneNode : s.nodes <= 2 ? kLlMaxBwTwoNodes : kLlMaxBwManyNodes;
  if (a == Algorithm::kRing && p == Protocol::kLL) {
    bus = std::min(ll_max, bus * ((s.nodes > 1 || c == Collective::kAllReduce) ? 1.0 / 4.0 : 1.0 / 3.0));
  }
  if (a == Algorithm::kRing && p == Protocol::kLL128) bus *= (s.ppn < 2 ? 0.7 : 0.92);
  if (a == Algorithm::kTree) bus *= 0.92;
  if (a == Algorithm::kTree && p == Protocol::kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == Algorithm::kTree && p == Protocol::kLL128) bus *= (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
  // "Convert bus BW to algorithm BW": ring nRanks / nsteps; NVLS and NVLS-Tree 5/6; tree 1/2.
  const double n = s.ranks;
  const double nsteps = c == Collective::kAllReduce                                        ? 2 * (n - 1)
                        : (c == Collective::kAllGather || c == Collective::kReduceScatter) ? n - 1
                                                                                           : n;
  if (a == Algorithm::kRing) return bus * n / nsteps;
  if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) return bus * 5.0 / 6.0;
  return bus * 0.5;
}

// Latency (µs) as ncclTopoTuneModel computes comm->latencies[coll][a][p].
double algo_latency(Collective c, Algorithm a, Protocol p, const Shape& s) {
  const double n = s.ranks;
  const double nodes = s.nodes;
  double lat = kBaseLat[idx(a)][idx(p)];
  double intra = kNvlinkLat[idx(a)][idx(p)];
  // graphs[a]->latencyInter: the path's own network latency, once more for Simple ("the flush extra latency").
  double inter = kNetLat[idx(a)][idx(p)] + s.latency_inter_us;
  if (p == Protocol::kSimple) inter += s.latency_inter_us;
  switch (a) {
    case Algorithm::kRing: {
      if (c == Collective::kBroadcast) {
        // Broadcast (and reduce): nsteps x one hop, the Tree's Simple hop for Simple ("add some chunk latency").
        // NCCL adds a single hop when its rings share channels (sameChannels); we take the other branch.
        const auto& hw = s.nodes == 1 ? kNvlinkLat : kNetLat;
        const double hop = p == Protocol::kSimple ? hw[idx(Algorithm::kTree)][idx(p)] : hw[idx(a)][idx(p)];
        return lat + n * hop;
      }
      const double nsteps = c == Collective::kAllReduce ? 2 * (n - 1) : n - 1;
      // NCCL counts 2 x nNodes network steps for all-reduce (one more per direction than the ring has node
      // boundaries), so with one GPU per node nsteps - nInterSteps is -2; we keep NCCL's arithmetic.
      const double inter_steps = c == Collective::kAllReduce ? (nodes > 1 ? 2 * nodes : 0) : nodes - 1;
      // "Inter-node rings still have to launch nsteps * net overhead."
      const double overhead = nodes > 1 ? kNetOverheadUs * (p == Protocol::kSimple ? 3 : 1) : 0;
      intra = std::max(intra, overhead);
      return lat + (nsteps - inter_steps) * intra + inter_steps * inter;
    }
    case Algorithm::kTree:
      return lat + 2 * ((s.ppn - 1) * intra + log2i(s.nodes) * inter);
    case Algorithm::kNvls:
      return intra + (nodes > 1 ? inter : 0);
    case Algorithm::kNvlsTree:
      return lat + intra + 2 * log2i(s.nodes) * inter;
    case Algorithm::kPointToPoint:
      return lat + (nodes > 1 ? inter : intra);
  }
  return lat;
}

// All-to-all is not in tuning.cc (NCCL runs it as grouped send/recv). Each rank sends bytes/n to every other
// rank at once: (ppn-1) shares over its NVLink, and the node's ppn x (n-ppn) shares over the node's NICs; the
// slower of the two sets the transfer time, and one Simple ring step the latency.
CollectiveCost p2p_cost(double bytes, const Shape& s) {
  const double n = s.ranks;
  const double intra_bytes = (s.ppn - 1) * bytes / n;
  const double inter_bytes = s.ppn * (n - s.ppn) * bytes / n;
  double transfer_us = 0;
  if (intra_bytes > 0) transfer_us = std::max(transfer_us, intra_bytes / (1000 * s.nvlink_gbps));
  if (inter_bytes > 0) transfer_us = std::max(transfer_us, inter_bytes / (1000 * s.net_gbps));
  CollectiveCost cost;
  cost.algorithm = Algorithm::kPointToPoint;
  cost.protocol = Protocol::kSimple;
  cost.latency_us = algo_latency(Collective::kAllToAll, Algorithm::kPointToPoint, Protocol::kSimple, s);
  cost.bandwidth_gbps = transfer_us > 0 ? bytes / (1000 * transfer_us) : std::numeric_limits<double>::infinity();
  cost.time_s = (cost.latency_us + transfer_us) * 1e-6;
  return cost;
}

void check_bytes(double bytes) {
  if (!(bytes >= 0) || !std::isfinite(bytes)) throw PerfModelError("bytes", "must be a finite non-negative number");
}

}  // namespace

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kAllToAll:
      return "alltoall";
  }
  return "?";
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kPointToPoint:
      return "p2p";
  }
  return "?";
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "ll";
    case Protocol::kLL128:
      return "ll128";
    case Protocol::kSimple:
      return "simple";
  }
  return "?";
}

NcclOptions nccl_options_for_nvlink(std::uint32_t nvlink_generation) {
  NcclOptions opts;
  opts.nvls = nvlink_generation >= 4;
  return opts;
}

std::uint32_t path_ranks(const CommPath& path) {
  return path.nodes * path.gpus_per_node;
}

std::optional<CollectiveCost> nccl_cost(Collective collective, Algorithm algorithm, Protocol protocol, double bytes,
                                        const CommPath& path, const NcclOptions& opts) {
  check_bytes(bytes);
  const Shape s = shape_of(path, opts);
  if (s.ranks <= 1 || !offered(collective, algorithm, protocol, s, opts)) return std::nullopt;
  if (collective == Collective::kAllToAll) return p2p_cost(bytes, s);
  CollectiveCost cost;
  cost.algorithm = algorithm;
  cost.protocol = protocol;
  cost.bandwidth_gbps = algo_bandwidth(collective, algorithm, protocol, s);
  cost.latency_us = algo_latency(collective, algorithm, protocol, s);
  // ncclTopoGetAlgoTime(): the ring plateau, then time = lat + bytes / (1000 * bw) in µs.
  if (algorithm == Algorithm::kRing && protocol == Protocol::kSimple && s.nodes > 1 &&
      collective == Collective::kAllReduce && bytes / (kAssumedChannels * s.ranks) >= 64) {
    cost.latency_us *= kRingPlateau;
  }
  cost.time_s = (cost.latency_us + bytes / (1000 * cost.bandwidth_gbps)) * 1e-6;
  return cost;
}

CollectiveCost nccl_collective(Collective collective, double bytes, const CommPath& path, const NcclOptions& opts) {
  check_bytes(bytes);
  const Shape s = shape_of(path, opts);
  if (s.ranks <= 1) return CollectiveCost{};
  std::optional<CollectiveCost> best;
  for (std::size_t a = 0; a < kAlgorithms; ++a) {
    const auto algorithm = static_cast<Algorithm>(a);
    if (opts.algorithm && *opts.algorithm != algorithm && collective != Collective::kAllToAll) continue;
    for (std::size_t p = 0; p < kProtocols; ++p) {
      const auto protocol = static_cast<Protocol>(p);
      if (opts.protocol && *opts.protocol != protocol && collective != Collective::kAllToAll) continue;
      auto cost = nccl_cost(collective, algorithm, protocol, bytes, path, opts);
      if (cost && (!best || cost->time_s < best->time_s)) best = cost;
    }
  }
  if (!best) {
    // NCCL falls back to the ring when the user's NCCL_ALGO/NCCL_PROTO leave nothing ("at least set ring algo").
    NcclOptions ring = opts;
    ring.algorithm = Algorithm::kRing;
    ring.protocol.reset();
    return nccl_collective(collective, bytes, path, ring);
  }
  return *best;
}

double p2p_time_s(double bytes, const CommPath& path, const NcclOptions& opts) {
  check_bytes(bytes);
  const Shape s = shape_of(path, opts);
  const std::size_t ring = idx(Algorithm::kRing);
  const std::size_t simple = idx(Protocol::kSimple);
  if (s.nodes == 1) {
    if (s.ranks <= 1) return 0;
    return (kBaseLat[ring][simple] + kNvlinkLat[ring][simple] + bytes / (1000 * s.nvlink_gbps)) * 1e-6;
  }
  const double per_rank_gbps =
      std::min(s.ppn > 1 ? s.nvlink_gbps : std::numeric_limits<double>::infinity(), s.net_gbps / path.gpus_per_node);
  const double latency_us = kBaseLat[ring][simple] + kNetLat[ring][simple] + 2 * s.latency_inter_us;
  return (latency_us + bytes / (1000 * per_rank_gbps)) * 1e-6;
}

double algbw_gbps(double bytes, double time_s) {
  return time_s > 0 ? bytes / time_s / 1e9 : 0;
}

double busbw_factor(Collective collective, std::uint32_t ranks) {
  if (ranks == 0) return 0;
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return (n - 1) / n;
    case Collective::kBroadcast:
      return 1;
  }
  return 1;
}

double busbw_gbps(Collective collective, double bytes, double time_s, std::uint32_t ranks) {
  return algbw_gbps(bytes, time_s) * busbw_factor(collective, ranks);
}

// ---- Textbook alpha-beta (Thakur, Rabenseifner & Gropp 2005, section 4; gpu-domain.md 4.4). ----

namespace {
double lg(std::uint32_t p) {
  return p <= 1 ? 0 : std::log2(static_cast<double>(p));
}
double share(std::uint32_t p) {
  return p == 0 ? 0 : (p - 1.0) / p;
}
}  // namespace

double ring_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return 2 * (p - 1.0) * ab.alpha_s + 2 * share(p) * n * ab.beta_s_per_byte + share(p) * n * ab.gamma_s_per_byte;
}

double rabenseifner_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return 2 * lg(p) * ab.alpha_s + 2 * share(p) * n * ab.beta_s_per_byte + share(p) * n * ab.gamma_s_per_byte;
}

double recursive_doubling_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return lg(p) * (ab.alpha_s + n * ab.beta_s_per_byte + n * ab.gamma_s_per_byte);
}

double ring_allgather_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return (p - 1.0) * ab.alpha_s + share(p) * n * ab.beta_s_per_byte;
}

double binomial_broadcast_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return std::ceil(lg(p)) * (ab.alpha_s + n * ab.beta_s_per_byte);
}

double scatter_allgather_broadcast_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return (lg(p) + p - 1.0) * ab.alpha_s + 2 * share(p) * n * ab.beta_s_per_byte;
}

double pairwise_alltoall_s(const AlphaBeta& ab, std::uint32_t p, double n) {
  if (p <= 1) return 0;
  return (p - 1.0) * ab.alpha_s + share(p) * n * ab.beta_s_per_byte;
}

AlphaBeta alpha_beta_of(const CommPath& path, const NcclOptions& opts) {
  const Shape s = shape_of(path, opts);
  AlphaBeta ab;
  if (s.ranks <= 1) return ab;
  const std::size_t ring = idx(Algorithm::kRing);
  const std::size_t simple = idx(Protocol::kSimple);
  ab.alpha_s = (s.nodes > 1 ? kNetLat[ring][simple] + s.latency_inter_us : kNvlinkLat[ring][simple]) * 1e-6;
  ab.beta_s_per_byte = 1.0 / (graph_bw(Algorithm::kRing, s) * 1e9);
  return ab;
}

double alpha_beta_time_s(Collective collective, double bytes, const CommPath& path, const NcclOptions& opts) {
  check_bytes(bytes);
  const AlphaBeta ab = alpha_beta_of(path, opts);
  const std::uint32_t p = path_ranks(path);
  switch (collective) {
    case Collective::kAllReduce:
      return std::min(ring_allreduce_s(ab, p, bytes), rabenseifner_allreduce_s(ab, p, bytes));
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return ring_allgather_s(ab, p, bytes);
    case Collective::kBroadcast:
      return std::min(binomial_broadcast_s(ab, p, bytes), scatter_allgather_broadcast_s(ab, p, bytes));
    case Collective::kAllToAll:
      return pairwise_alltoall_s(ab, p, bytes);
  }
  return 0;
}

}  // namespace gputwin
