// What a job's placement offers its collectives: the interface between the fabric (model/fabric.hpp), which
// computes it from the nodes a job got, and the collective and job-speed models (gpu/), which cost traffic on it.
#pragma once

#include <cstdint>

namespace gputwin {

/// The communication resources of one placement, at its slowest tier.
struct CommPath {
  std::uint32_t nodes = 1;              ///< Nodes the job spans.
  std::uint32_t gpus_per_node = 1;      ///< GPUs (ranks) per node.
  double intra_node_gbps = 0;           ///< Scale-up (NVLink) bandwidth per GPU and direction, GB/s.
  double inter_node_gbps = 0;           ///< Scale-out bandwidth per node and direction at the bottleneck tier, GB/s
                                        ///< (NICs x NIC speed, divided by the oversubscription of the slowest
                                        ///< tier the job crosses, less failed links and contention).
  double inter_latency_us = 0;          ///< One-way latency between the two farthest nodes (all hops), µs.
  std::uint32_t switch_hops = 0;        ///< Switch hops between the two farthest nodes (0 within a node or domain).
  std::uint32_t scale_up_domain_nodes = 1;  ///< Nodes sharing one NVLink domain with each node (NVL72 tray: 18).
};

}  // namespace gputwin
