// A graph-neutral description of the scale-out network for the contention models (gpu/contention.hpp): directed
// links with a capacity, and each job's flows as routes over link ids. The fabric (model/fabric.*) builds it from
// its topology (which uplinks a job's ring crosses); the contention models never see the topology itself.
//
//   FlowNetwork net;
//   LinkId up = net.add_link(400, 0.6);     // node 0 -> leaf 0, 400 GB/s, 0.6 µs
//   LinkId spine = net.add_link(800, 0.6);  // leaf 0 -> spine 0
//   std::vector<Flow> ring{{{up, spine}}};  // one flow of the job's ring crosses both
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gputwin {

/// Index of a link in FlowNetwork::links.
using LinkId = std::uint32_t;
/// The caller's name for a job (its job id, or any unique key).
using JobKey = std::uint64_t;

/// One directed link: a cable in one direction, a NIC port, a switch uplink.
struct NetLink {
  double capacity_gbps = 0;  ///< Bandwidth in this direction, GB/s (> 0).
  double latency_us = 0;     ///< One-way latency, µs; the contention models ignore it (see route_latency_us).
};

/// The links of a fabric. Link ids are indices into `links`.
struct FlowNetwork {
  std::vector<NetLink> links;  ///< All links; a flow names them by index.

  /// Appends a link and returns its id.
  LinkId add_link(double capacity_gbps, double latency_us = 0) {
    links.push_back({capacity_gbps, latency_us});
    return static_cast<LinkId>(links.size() - 1);
  }
};

/// One long-lived flow of a job: a rank's traffic to its ring neighbour, for example.
struct Flow {
  std::vector<LinkId> route;  ///< Links the flow crosses, in order; no link twice; empty is not allowed.
  double demand_gbps = 0;     ///< Most the flow would use, GB/s; 0 = as much as the links give.
};

/// A malformed network or flow set handed to a contention model (a caller bug, reported with the job, flow and
/// link it concerns, e.g. "job 7: flow 2: link 99 does not exist (the network has 40 links)").
class FlowNetworkError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Throws FlowNetworkError unless every link has a finite capacity > 0 and a latency >= 0.
void validate_network(const FlowNetwork& net);

/// Throws FlowNetworkError unless every flow of `job` has a non-empty route of existing, distinct links and a
/// finite demand >= 0.
void validate_flows(const FlowNetwork& net, JobKey job, std::span<const Flow> flows);

/// Sum of the latencies of the flow's links, µs (what the collective model adds per hop; contention does not).
double route_latency_us(const FlowNetwork& net, const Flow& flow);

}  // namespace gputwin
