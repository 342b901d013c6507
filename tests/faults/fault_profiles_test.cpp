// The built-in fault profiles against the figures printed in gpu-domain.md (section cited per test): counts and
// totals exactly, derived rates to the precision the reference prints them.
#include "faults/fault_profiles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "faults/xid_catalogue.hpp"

namespace gputwin {
namespace {

// Half a unit in the last of `digits` significant digits of `printed`: the rounding any printed value allows.
double half_unit(double printed, int digits) {
  return 0.5 * std::pow(10.0, std::floor(std::log10(std::abs(printed))) - (digits - 1));
}

const FaultClass& by_name(const FaultProfile& p, const std::string& name) {
  for (const FaultClass& c : p.classes)
    if (c.name == name) return c;
  throw std::runtime_error("no class " + name);
}

TEST(FaultProfiles, BuiltInNames) {
  EXPECT_EQ(fault_profile_names(), "llama3, meta-rsc, meta-rsc-infra, meta-rsc-2, delta-a100, delta-h100, alibaba-hpn");
  EXPECT_FALSE(find_fault_profile("nope").has_value());
  for (const FaultProfile& p : fault_profiles()) {
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_FALSE(p.classes.empty()) << p.name;
  }
}

TEST(FaultProfiles, Llama3TotalsMatchTheReference) {
  // 2.1: 419 unexpected interruptions over 16,384 GPUs x 54 days = 21,233,664 GPU-h (2,048 nodes).
  const FaultProfile p = *find_fault_profile("llama3");
  EXPECT_EQ(p.classes.size(), 18u);
  std::uint32_t count = 0;
  for (const FaultClass& c : p.classes) count += c.source_count.value();
  EXPECT_EQ(count, 419u);
  // The rates reproduce the counts on the source fleet: 419 / 1,296 h.
  EXPECT_NEAR(source_faults_per_hour(p) * 54 * 24, 419.0, 1e-9);
  // Derived figures of 2.1 [D]: 1.97e-5 per GPU-hour, 3.79 per 1000 node-days, job MTBI 3.09 h, node MTBF 264 d.
  const double per_gpu_hour = source_faults_per_hour(p) / 16384;  // 419 / 21,233,664 = 1.9733e-5
  EXPECT_NEAR(per_gpu_hour, 1.97e-5, half_unit(1.97e-5, 3));
  EXPECT_NEAR(per_gpu_hour * 8 * 24 * 1000, 3.79, half_unit(3.79, 3));     // 419 / (2,048 x 54) x 1000 = 3.789
  EXPECT_NEAR(1.0 / source_faults_per_hour(p), 3.09, half_unit(3.09, 3));  // 1,296 / 419 = 3.093 h
  EXPECT_NEAR(1.0 / (per_gpu_hour * 8) / 24, 264, 0.5);                    // 2,048 x 54 / 419 = 263.9 d
}

TEST(FaultProfiles, Llama3ClassRatesMatchTable5Columns) {
  // 2.1 Table 5: count, per GPU-h [D] (3 significant digits) and per 1000 node-days [D] (3 decimals). Host
  // classes are rated per node-hour (or per NIC link: 8 per node), so convert back to per GPU-hour.
  struct Row {
    const char* name;
    std::uint32_t count;
    double per_gpu_hour;
    double per_1000_node_days;
  };
  const Row rows[] = {
      {"faulty_gpu", 148, 6.97e-6, 1.338},
      {"gpu_hbm3", 72, 3.39e-6, 0.651},
      {"software_bug", 54, 2.54e-6, 0.488},
      {"network_switch_cable", 35, 1.65e-6, 0.316},
      {"host_maintenance", 32, 1.51e-6, 0.289},
      {"gpu_sram", 19, 8.95e-7, 0.172},
      {"gpu_gsp", 17, 8.01e-7, 0.154},
      {"nic", 7, 3.30e-7, 0.063},
      {"nccl_watchdog", 7, 3.30e-7, 0.063},
      {"silent_data_corruption", 6, 2.83e-7, 0.054},
      {"gpu_thermal", 6, 2.83e-7, 0.054},
      {"ssd", 3, 1.41e-7, 0.027},
      {"power_supply", 3, 1.41e-7, 0.027},
      {"server_chassis", 2, 9.42e-8, 0.018},
      {"io_expansion_board", 2, 9.42e-8, 0.018},
      {"dependency", 2, 9.42e-8, 0.018},
      {"cpu", 2, 9.42e-8, 0.018},
      {"system_memory", 2, 9.42e-8, 0.018},
  };
  const FaultProfile p = *find_fault_profile("llama3");
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const FaultClass& c = by_name(p, r.name);
    EXPECT_EQ(c.source_count, r.count);
    const double per_component_of_gpu = c.component == ComponentKind::kGpu       ? 1.0
                                        : c.component == ComponentKind::kNicLink ? 1.0  // 8 links = 8 GPUs per node
                                                                                 : 1.0 / 8;
    const double per_gpu_hour = c.rate_per_component_hour * per_component_of_gpu;
    EXPECT_NEAR(per_gpu_hour, r.per_gpu_hour, half_unit(r.per_gpu_hour, 3));
    EXPECT_NEAR(per_gpu_hour * 8 * 24 * 1000, r.per_1000_node_days, 0.0005);
  }
}

TEST(FaultProfiles, Llama3SharesAsPrintedAndAsCounted) {
  // 2.1: "GPU issues were 58.7%" = the printed shares of the GPU-category rows (30.1 + 17.2 + 4.5 + 4.1 + 1.4 +
  // 1.4); the data caveat: by count Faulty GPU is 148 / 419 = 35.3%, not the printed 30.1%.
  const FaultProfile p = *find_fault_profile("llama3");
  double gpu_printed = 0;
  double printed = 0;
  double shares = 0;
  for (const FaultClass& c : p.classes) {
    printed += c.printed_share_pct.value();
    shares += c.share.value();
    if (c.component == ComponentKind::kGpu) gpu_printed += *c.printed_share_pct;
  }
  EXPECT_NEAR(gpu_printed, 58.7, 1e-9);
  EXPECT_NEAR(shares, 1.0, 1e-12);
  // As printed the rows add to 94.9%: 100.1% with Faulty GPU at its count's 35.3% instead of 30.1%.
  EXPECT_NEAR(printed, 94.9, 1e-9);
  EXPECT_NEAR(by_name(p, "faulty_gpu").share.value(), 0.353, 0.0005);
  EXPECT_NEAR(by_name(p, "faulty_gpu").printed_share_pct.value(), 30.1, 1e-12);
  // "About 78% ... confirmed or suspected hardware": all but software bug, NCCL watchdog, dependency and unplanned
  // host maintenance: (419 - 54 - 7 - 2 - 32) / 419 = 324 / 419 = 77.3%, within a point of 78.
  double hardware = 0;
  for (const FaultClass& c : p.classes)
    if (c.component != ComponentKind::kSoftware && c.name != "host_maintenance") hardware += *c.share;
  EXPECT_NEAR(hardware * 100, 78, 1.0);
}

TEST(FaultProfiles, EffectsOfXidClassesComeFromTheCatalogue) {
  for (const FaultProfile& p : fault_profiles())
    for (const FaultClass& c : p.classes) {
      if (c.xid == 0) continue;
      SCOPED_TRACE(p.name + "/" + c.name);
      const XidInfo* x = find_xid(c.xid);
      ASSERT_NE(x, nullptr);
      EXPECT_EQ(c.effect, x->effect);
      EXPECT_EQ(c.symptom, x->symptom);
    }
  const FaultProfile llama = *find_fault_profile("llama3");
  EXPECT_EQ(by_name(llama, "faulty_gpu").effect, FaultEffect::kRebootNode);  // Xid 79
  EXPECT_EQ(by_name(llama, "gpu_hbm3").effect, FaultEffect::kResetGpu);      // Xid 48
}

TEST(FaultProfiles, MetaResearchClusterRates) {
  // 2.2: r_f 6.50 (RSC-1) and 2.34 (RSC-2) per 1000 node-days = 2.7e-4 and 9.8e-5 per node-hour, node MTBF 154 d
  // and 427 d; about 22 per 1000 node-days of non-user job failures in all.
  const FaultProfile rsc1 = *find_fault_profile("meta-rsc-infra");
  const FaultProfile rsc2 = *find_fault_profile("meta-rsc-2");
  const FaultProfile all = *find_fault_profile("meta-rsc");
  const double r1 = rsc1.classes.at(0).rate_per_component_hour;
  const double r2 = rsc2.classes.at(0).rate_per_component_hour;
  EXPECT_NEAR(r1 * 24 * 1000, 6.50, 1e-12);
  EXPECT_NEAR(r2 * 24 * 1000, 2.34, 1e-12);
  EXPECT_NEAR(r1, 2.7e-4, half_unit(2.7e-4, 2));
  EXPECT_NEAR(r2, 9.8e-5, half_unit(9.8e-5, 2));
  EXPECT_NEAR(1 / r1 / 24, 154, 0.5);
  EXPECT_NEAR(1 / r2 / 24, 427, 0.5);
  double total = 0;
  for (const FaultClass& c : all.classes) total += c.rate_per_component_hour;  // both per node-hour
  EXPECT_NEAR(total * 24 * 1000, 22.0, 1e-12);
  EXPECT_NEAR(by_name(all, "infra_failure").share.value(), 6.5 / 22, 1e-12);
  EXPECT_EQ(by_name(all, "infra_failure").effect, FaultEffect::kRepairNode);
  EXPECT_EQ(by_name(all, "non_user_job_failure").effect, FaultEffect::kRestartApp);
}

TEST(FaultProfiles, DeltaTable1) {
  // 1.3 Table 1: counts, and per GPU-h [D] to two significant digits, over 9.6 M (A100) and 2.1 M (H100) GPU-h.
  struct Row {
    const char* name;
    std::uint32_t a100;
    double a100_rate;  // < 0: the reference prints none
    std::uint32_t h100;
    double h100_rate;
  };
  const Row rows[] = {
      {"xid48_dbe", 1, 1.0e-7, 17, 8.1e-6},          {"xid63_row_remap", 34, 3.5e-6, 16, 7.6e-6},
      {"xid64_remap_failure", 0, -1, 8, 3.8e-6},     {"xid94_contained", 13, 1.4e-6, 14, 6.7e-6},
      {"xid95_uncontained", 11, 1.1e-6, 19, 9.0e-6},
  };
  const FaultProfile a100 = *find_fault_profile("delta-a100");
  const FaultProfile h100 = *find_fault_profile("delta-h100");
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(by_name(a100, r.name).source_count, r.a100);
    EXPECT_EQ(by_name(h100, r.name).source_count, r.h100);
    if (r.a100_rate > 0) {
      EXPECT_NEAR(by_name(a100, r.name).rate_per_component_hour, r.a100_rate, half_unit(r.a100_rate, 2));
    }
    EXPECT_NEAR(by_name(h100, r.name).rate_per_component_hour, r.h100_rate, half_unit(r.h100_rate, 2));
  }
  // Coalesced hardware errors: A100 8,863 MMU, 3,857 GSP, 1,922 NVLink, 77 PMU-SPI; H100 3 GSP, 0, 0.
  EXPECT_EQ(by_name(a100, "mmu_xid31").source_count, 8863u);
  EXPECT_EQ(by_name(a100, "gsp").source_count, 3857u);
  EXPECT_EQ(by_name(a100, "nvlink").source_count, 1922u);
  EXPECT_EQ(by_name(a100, "pmu_spi").source_count, 77u);
  EXPECT_EQ(by_name(h100, "gsp").source_count, 3u);
  EXPECT_EQ(by_name(h100, "nvlink").source_count, 0u);
  // The stated GPU-hours round the fleets: 448 x 895 d = 9,623,040 (9.6 M), 608 x 146 d = 2,130,432 (2.1 M).
  EXPECT_NEAR(448.0 * 895 * 24, a100.fleet.gpu_hours, half_unit(9.6e6, 2));
  EXPECT_NEAR(608.0 * 146 * 24, h100.fleet.gpu_hours, half_unit(2.1e6, 2));
  // A100 system MTBE 1.4 h: 895 x 24 h / 14,778 events = 1.45 h. The reference's 1.4 h is 3.8% lower than the
  // events listed give (it may count more event types); a tolerance of 0.1 h covers it.
  EXPECT_NEAR(1.0 / source_faults_per_hour(a100), 1.4, 0.1);
  // H100: the listed events are 77; the 1.9 h system MTBE implies ~1,844 over 146 days, the missing ones being
  // the H100 MMU count the reference does not give (1.3). The profile does not invent it.
  EXPECT_NEAR(source_faults_per_hour(h100) * h100.fleet.hours, 77, 1e-9);
}

TEST(FaultProfiles, AlibabaHpnPerMonth) {
  // 2.4: 0.057% of NIC-ToR links fail per month, 0.051% of ToR switches crash per month (month = 720 h [D]).
  const FaultProfile p = *find_fault_profile("alibaba-hpn");
  EXPECT_NEAR(by_name(p, "hpn_nic_tor_link").rate_per_component_hour * 720, 0.00057, 1e-15);
  EXPECT_NEAR(by_name(p, "hpn_tor_switch").rate_per_component_hour * 720, 0.00051, 1e-15);
  EXPECT_EQ(by_name(p, "hpn_tor_switch").component, ComponentKind::kSwitch);
  EXPECT_FALSE(by_name(p, "hpn_tor_switch").share.has_value());  // different bases: no shares
}

TEST(FaultProfiles, MergeKeepsEveryClass) {
  const FaultProfile parts[] = {*find_fault_profile("llama3"), *find_fault_profile("alibaba-hpn")};
  const FaultProfile merged = merge_profiles("llama3+hpn", parts);
  EXPECT_EQ(merged.classes.size(), 20u);
  EXPECT_EQ(merged.fleet.gpus, 16384u);
  EXPECT_EQ(merged.classes.back().name, "hpn_tor_switch");
  EXPECT_FALSE(merged.classes.front().share.has_value());
}

}  // namespace
}  // namespace gputwin
