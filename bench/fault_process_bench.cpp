// Cost per fault of the fault process (faults/fault_process.hpp): a year of faults on 4,096 nodes x 8 GPUs
// (8 NIC links per node, leaf switches of 32 nodes, racks of 2) at the llama3 profile, exponential and Weibull
// (k = 0.8), with and without 15% lemon nodes at 5x (gpu-domain.md 2.6), and with the simulator's usual calls:
// each fault's detection time (HealthCheckInterval=120, CYCLE) and set_out_of_service for the repair. Prints
// faults generated, setup time and ns per fault (the best of `repeats` runs with different seeds).
//
//   fault_process_bench [--years 1] [--repeats 5] [--nodes 4096]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "faults/fault_process.hpp"
#include "faults/health_check.hpp"

namespace {

using namespace gputwin;
using Clock = std::chrono::steady_clock;

struct Result {
  std::uint64_t faults = 0;
  std::uint64_t suppressed = 0;
  double setup_ms = 0;
  double ns_per_fault = 0;
};

Result run(const FaultProfile& profile, const ClusterShape& cluster, FaultProcessConfig config, double years,
           bool simulate_repairs) {
  const SimTime horizon = from_seconds_f(years * 365 * 24 * 3600.0);
  DetectionConfig detection;
  detection.slurm = {
      .health_check_interval_s = 120, .health_check_node_state = {.cycle = true}, .node_count = cluster.nodes};
  detection.program.checks = {CheckKind::kXidLog, CheckKind::kNvidiaSmi, CheckKind::kIbLink, CheckKind::kNodeBasics};

  const auto t0 = Clock::now();
  FaultProcess process(profile, cluster, config);
  const auto t1 = Clock::now();
  Result r;
  SimTime checksum = 0;
  while (auto f = process.next()) {
    if (f->time >= horizon) break;
    ++r.faults;
    if (simulate_repairs) {
      const std::uint32_t node = f->node == kNoIndex ? process.affected_nodes(*f).front() : f->node;
      const Detection seen = detect_node_fault(detection, node, f->time, f->symptom);
      checksum += seen.time < kNever ? seen.time - f->time : 0;
      if (f->effect == FaultEffect::kResetGpu) process.set_out_of_service(*f, f->time + from_seconds(300));
      if (f->effect == FaultEffect::kRebootNode) process.set_out_of_service(*f, f->time + from_seconds(600));
      if (f->effect == FaultEffect::kRepairNode) process.set_out_of_service(*f, f->time + from_seconds(7200));
    }
  }
  const auto t2 = Clock::now();
  r.suppressed = process.suppressed();
  r.setup_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.ns_per_fault = r.faults ? std::chrono::duration<double, std::nano>(t2 - t1).count() / r.faults : 0;
  if (checksum == -1) std::puts("");  // keep the detection work
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double years = 1;
  int repeats = 5;
  std::uint32_t nodes = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--years"))
      years = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeats"))
      repeats = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--nodes"))
      nodes = static_cast<std::uint32_t>(std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: fault_process_bench [--years 1] [--repeats 5] [--nodes 4096]\n");
      return 2;
    }
  }
  const FaultProfile profile = *find_fault_profile("llama3");
  ClusterShape cluster{.nodes = nodes,
                       .gpus_per_node = 8,
                       .links_per_node = 8,
                       .switch_groups = contiguous_groups(nodes, 32),
                       .rack_groups = contiguous_groups(nodes, 2)};
  std::printf("llama3 on %u nodes x 8 GPUs, %.3g year(s), best of %d seeds\n", nodes, years, repeats);
  std::printf("%-34s %10s %11s %10s %12s\n", "variant", "faults", "suppressed", "setup ms", "ns/fault");
  struct Variant {
    const char* name;
    InterFailure distribution;
    double lemon_fraction;
    bool repairs;
  };
  const Variant variants[] = {
      {"exponential", InterFailure::kExponential, 0, false},
      {"exponential + 15% lemons x5", InterFailure::kExponential, 0.15, false},
      {"exponential + detection/repairs", InterFailure::kExponential, 0, true},
      {"weibull k=0.8", InterFailure::kWeibull, 0, false},
      {"weibull k=0.8 + 15% lemons x5", InterFailure::kWeibull, 0.15, false},
      {"weibull k=0.8 + detection/repairs", InterFailure::kWeibull, 0, true},
  };
  for (const Variant& v : variants) {
    Result best;
    best.ns_per_fault = 1e300;
    for (int rep = 0; rep < repeats; ++rep) {
      FaultProcessConfig config;
      config.seed = 1000u + static_cast<std::uint64_t>(rep);
      config.distribution = v.distribution;
      config.lemons.fraction = v.lemon_fraction;
      config.lemons.rate_multiplier = 5;
      config.lemons.preserve_fleet_rate = true;
      const Result r = run(profile, cluster, config, years, v.repairs);
      if (r.ns_per_fault < best.ns_per_fault) best = r;
    }
    std::printf("%-34s %10llu %11llu %10.2f %12.1f\n", v.name, static_cast<unsigned long long>(best.faults),
                static_cast<unsigned long long>(best.suppressed), best.setup_ms, best.ns_per_fault);
  }
  return 0;
}
