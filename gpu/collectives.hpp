// Cost of NCCL collectives on a placement (CommPath): NCCL's own tuning model, which NCCL uses to pick an
// algorithm and protocol per call, and the textbook alpha-beta formulas as a simpler second option.
//
// NCCL model: the structure of NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel + ncclTopoGetAlgoTime, the
// 2.19/2.20-era version with NVLS and NVLS-Tree) with the constants of shared/reference/gpu-domain.md 4.4:
//   time_us = latency_us + bytes / (1000 * bandwidth_GBps)
// where latency and bandwidth depend on collective, algorithm (Ring, Tree, NVLS, NVLS-Tree) and protocol (LL,
// LL128, Simple). nccl_collective() returns the fastest choice, which is what NCCL picks. What NCCL learns
// from its topology search (channels and their bandwidth) comes here from the CommPath; see nccl_cost().
//
//   CommPath node8{.nodes = 1, .gpus_per_node = 8, .intra_node_gbps = 450};
//   CollectiveCost c = nccl_collective(Collective::kAllReduce, 1 << 30, node8, {.nvls = true});
//   double bus = busbw_gbps(Collective::kAllReduce, 1 << 30, c.time_s, 8);  // ~522 GB/s (NVLS)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpu/comm_path.hpp"

namespace gputwin {

/// The collectives costed (nccl-tests' names: all_reduce_perf, all_gather_perf, ...).
enum class Collective : std::uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll };

/// NCCL's algorithms (CollNet is not modelled). kPointToPoint: all-to-all, which NCCL runs as grouped send/recv.
enum class Algorithm : std::uint8_t { kRing, kTree, kNvls, kNvlsTree, kPointToPoint };

/// NCCL's protocols.
enum class Protocol : std::uint8_t { kLL, kLL128, kSimple };

/// Lower-case names ("all_reduce", "nvls_tree", "ll128"), as in NCCL_ALGO/NCCL_PROTO and nccl-tests.
std::string_view to_string(Collective c);
/// See to_string(Collective).
std::string_view to_string(Algorithm a);
/// See to_string(Protocol).
std::string_view to_string(Protocol p);

/// What NCCL may use on the path, and how much of the NVLink line rate it attains.
struct NcclOptions {
  bool nvls = false;                   ///< NVLink SHARP present (NVSwitch gen3+: H100, H200, B200, GB200).
  bool ll128 = true;                   ///< LL128 enabled (NCCL's default on NVLink Ampere/Hopper/Blackwell).
  double nvlink_efficiency = 0.8;      ///< Share of intra_node_gbps NCCL moves: 450 line rate "less ~20%
                                       ///< protocol overhead" (nccl-tests#212, gpu-domain.md 4.5).
  std::optional<Algorithm> algorithm;  ///< Force an algorithm (NCCL_ALGO); unset: the fastest.
  std::optional<Protocol> protocol;    ///< Force a protocol (NCCL_PROTO); unset: the fastest.
};

/// NCCL options for a catalogued GPU: NVLS iff NVLink generation >= 4 (NVSwitch gen3, Hopper and later).
NcclOptions nccl_options_for_nvlink(std::uint32_t nvlink_generation);

/// One costed choice of algorithm and protocol.
struct CollectiveCost {
  Algorithm algorithm = Algorithm::kRing;  ///< Algorithm.
  Protocol protocol = Protocol::kSimple;   ///< Protocol.
  double latency_us = 0;                   ///< NCCL's latency term, µs (with the ring plateau factor).
  double bandwidth_gbps = 0;               ///< NCCL's algorithm bandwidth, GB/s (bytes / transfer time).
  double time_s = 0;                       ///< latency + bytes / bandwidth, seconds.
};

/// Ranks of a path: nodes x gpus_per_node.
std::uint32_t path_ranks(const CommPath& path);

/// NCCL's cost of `collective` on `bytes` with one algorithm and protocol, or nullopt if NCCL does not offer
/// that pair there (Tree only for all-reduce; NVLS only in one NVLink domain and with opts.nvls; NVLS-Tree only
/// for multi-node all-reduce; NVLS protocols Simple only). `bytes` is nccl-tests' size: the whole buffer for
/// all-reduce and broadcast, the gathered (output) size for all-gather, the input size for reduce-scatter,
/// the per-rank send buffer for all-to-all. Throws PerfModelError if the path lacks a bandwidth it needs.
std::optional<CollectiveCost> nccl_cost(Collective collective, Algorithm algorithm, Protocol protocol, double bytes,
                                        const CommPath& path, const NcclOptions& opts = {});

/// The fastest choice NCCL's model allows (honouring opts.algorithm / opts.protocol): NCCL's own pick.
/// A single rank costs nothing (time 0). Throws PerfModelError like nccl_cost().
CollectiveCost nccl_collective(Collective collective, double bytes, const CommPath& path, const NcclOptions& opts = {});

/// Point-to-point: every rank of `path` sends `bytes` to a peer at the same time, in its node when path.nodes
/// is 1 (NVLink), else on another node (the node's NICs shared by its gpus_per_node senders). Latency is one
/// Simple ring step of tuning.cc (8.4 + 3.4 µs on NVLink, 8.4 + 14 + 2 x inter_latency_us over the network).
/// Pipeline-parallel activations use it. Throws PerfModelError like nccl_cost().
double p2p_time_s(double bytes, const CommPath& path, const NcclOptions& opts = {});

/// nccl-tests' algorithm bandwidth S / t in GB/s (doc/PERFORMANCE.md).
double algbw_gbps(double bytes, double time_s);

/// nccl-tests' bus-bandwidth factor: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
/// broadcast 1 (doc/PERFORMANCE.md, gpu-domain.md 4.4).
double busbw_factor(Collective collective, std::uint32_t ranks);

/// nccl-tests' bus bandwidth: algbw x busbw_factor, GB/s.
double busbw_gbps(Collective collective, double bytes, double time_s, std::uint32_t ranks);

// ---- Textbook alpha-beta costs (Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005; gpu-domain.md 4.4). ----

/// Hockney parameters: alpha per message (s), beta per byte (s/B), gamma per reduced byte (s/B).
struct AlphaBeta {
  double alpha_s = 0;           ///< Start-up cost per message.
  double beta_s_per_byte = 0;   ///< Transfer cost per byte (1 / bandwidth).
  double gamma_s_per_byte = 0;  ///< Reduction cost per byte (0: reductions are free, as on GPUs at this scale).
};

/// Ring all-reduce: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
double ring_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Rabenseifner (reduce-scatter by recursive halving + all-gather by doubling):
/// 2 log2(p) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
double rabenseifner_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Recursive doubling all-reduce: log2(p) (alpha + n beta + n gamma).
double recursive_doubling_allreduce_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Ring all-gather of n gathered bytes (also ring reduce-scatter without gamma): (p-1) alpha + (p-1)/p n beta.
double ring_allgather_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Binomial-tree broadcast: ceil(log2 p) (alpha + n beta).
double binomial_broadcast_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Van de Geijn broadcast (scatter + ring all-gather): (log2 p + p - 1) alpha + 2(p-1)/p n beta.
double scatter_allgather_broadcast_s(const AlphaBeta& ab, std::uint32_t p, double n);
/// Pairwise-exchange all-to-all of n bytes sent per rank: (p-1) alpha + (p-1)/p n beta.
double pairwise_alltoall_s(const AlphaBeta& ab, std::uint32_t p, double n);

/// Alpha and beta of a path at its slowest tier: alpha = NCCL's per-step Simple ring latency there (NVLink
/// 3.4 µs; network 14 µs + inter_latency_us), beta = 1 / min(NVLink x efficiency, inter_node_gbps).
AlphaBeta alpha_beta_of(const CommPath& path, const NcclOptions& opts = {});

/// The textbook time of `collective` on the path with alpha_beta_of(): the cheaper of ring and Rabenseifner for
/// all-reduce, ring for all-gather and reduce-scatter, the cheaper of binomial and scatter-all-gather for
/// broadcast, pairwise exchange for all-to-all. `bytes` as in nccl_cost().
double alpha_beta_time_s(Collective collective, double bytes, const CommPath& path, const NcclOptions& opts = {});

}  // namespace gputwin
