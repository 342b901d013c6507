// Reads /performance (job communication profiles and the contention model) and /metrics (sampling of GPU and
// cluster metrics).
#include <algorithm>
#include <cstdio>

#include "gpu/perf_model_error.hpp"
#include "model/performance.hpp"
#include "model/scenario_field.hpp"
#include "model/text.hpp"

namespace gputwin {

const ProfileRule* match_profile(const PerformanceConfig& config, std::uint32_t gpus, const std::string& name) {
  for (const ProfileRule& rule : config.profiles) {
    if (gpus < rule.min_gpus || gpus > rule.max_gpus) continue;
    if (!rule.name_prefix.empty() && name.rfind(rule.name_prefix, 0) != 0) continue;
    return &rule;
  }
  return nullptr;
}

namespace detail {
namespace {

double fraction(const Field& f) {
  const double v = f.number();
  if (v < 0 || v > 1) f.fail("expected a number from 0 to 1");
  return v;
}

double positive_number(const Field& f) {
  const double v = f.number();
  if (!(v > 0)) f.fail("expected a positive number");
  return v;
}

double non_negative_number(const Field& f) {
  const double v = f.number();
  if (v < 0) f.fail("expected a non-negative number");
  return v;
}

DataParallelProfile read_data_parallel(const Field& f) {
  f.expect_object(
      {"parameters_billion", "gradient_bytes_per_parameter", "compute_s", "overlap", "sharding", "bucket_mib"});
  DataParallelProfile p;
  p.parameters_billion = positive_number(f.at("parameters_billion"));
  p.compute_s = positive_number(f.at("compute_s"));
  if (f.has("gradient_bytes_per_parameter"))
    p.gradient_bytes_per_parameter = positive_number(f.at("gradient_bytes_per_parameter"));
  if (f.has("overlap")) p.overlap = fraction(f.at("overlap"));
  if (f.has("bucket_mib")) p.bucket_mib = non_negative_number(f.at("bucket_mib"));
  if (f.has("sharding")) {
    const std::string s = f.at("sharding").string();
    if (s == "none")
      p.sharding = Sharding::kNone;
    else if (s == "zero2")
      p.sharding = Sharding::kZero2;
    else if (s == "zero3" || s == "fsdp")
      p.sharding = Sharding::kZero3;
    else
      f.at("sharding").fail("expected none, zero2 or zero3 (fsdp)");
  }
  return p;
}

HybridProfile read_hybrid(const Field& f) {
  f.expect_object({"tp", "pp", "dp", "compute_s", "micro_batches", "layers", "hidden_size", "sequence_length",
                   "micro_batch_size", "activation_bytes_per_element", "activation_bytes", "parameters_billion",
                   "gradient_bytes_per_parameter", "overlap", "bucket_mib"});
  HybridProfile p;
  p.tp = static_cast<std::uint32_t>(f.at("tp").positive());
  p.pp = f.has("pp") ? static_cast<std::uint32_t>(f.at("pp").positive()) : 1;
  p.dp = f.has("dp") ? f.at("dp").u32() : 0;
  p.compute_s = positive_number(f.at("compute_s"));
  p.parameters_billion = positive_number(f.at("parameters_billion"));
  if (f.has("micro_batches")) p.micro_batches = static_cast<std::uint32_t>(f.at("micro_batches").positive());
  if (f.has("layers")) p.layers = f.at("layers").u32();
  if (f.has("hidden_size")) p.hidden_size = non_negative_number(f.at("hidden_size"));
  if (f.has("sequence_length")) p.sequence_length = f.at("sequence_length").u32();
  if (f.has("micro_batch_size")) p.micro_batch_size = static_cast<std::uint32_t>(f.at("micro_batch_size").positive());
  if (f.has("activation_bytes_per_element"))
    p.activation_bytes_per_element = positive_number(f.at("activation_bytes_per_element"));
  if (f.has("activation_bytes")) p.activation_bytes = non_negative_number(f.at("activation_bytes"));
  if (f.has("gradient_bytes_per_parameter"))
    p.gradient_bytes_per_parameter = positive_number(f.at("gradient_bytes_per_parameter"));
  if (f.has("overlap")) p.overlap = fraction(f.at("overlap"));
  if (f.has("bucket_mib")) p.bucket_mib = non_negative_number(f.at("bucket_mib"));
  return p;
}

FittedProfile read_fitted(const Field& f) {
  f.expect_object({"compute_s", "exposed_bytes", "latency_count"});
  FittedProfile p;
  p.compute_s = positive_number(f.at("compute_s"));
  if (f.has("exposed_bytes")) p.exposed_bytes = non_negative_number(f.at("exposed_bytes"));
  if (f.has("latency_count")) p.latency_count = non_negative_number(f.at("latency_count"));
  return p;
}

}  // namespace

void read_performance(const Field& field, PerformanceConfig& config) {
  field.expect_object({"contention", "profiles", "network"});
  config.enabled = true;
  if (field.has("network")) {
    const Field net = field.at("network");
    net.expect_object({"oversubscription", "switch_latency_us", "degraded"});
    if (net.has("degraded")) {
      const Field list = net.at("degraded");
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        const Field d = list.at(i);
        d.expect_object({"switch", "node", "remaining"});
        DegradedLink link;
        if (d.has("switch")) link.switch_name = d.at("switch").non_empty_string();
        if (d.has("node")) link.node_name = d.at("node").non_empty_string();
        if (link.switch_name.empty() == link.node_name.empty())
          d.fail("expected exactly one of \"switch\" or \"node\"");
        link.remaining = d.at("remaining").number();
        if (!(link.remaining > 0 && link.remaining <= 1))
          d.at("remaining").fail("expected the share of capacity left, in (0, 1] (a dead switch: drain its nodes)");
        config.network.degraded.push_back(std::move(link));
      }
    }
    if (net.has("oversubscription")) {
      const Field o = net.at("oversubscription");
      for (std::size_t i = 0; i < o.array_size(); ++i) {
        const double ratio = o.at(i).number();
        if (!(ratio >= 1)) o.at(i).fail("expected a ratio >= 1 (downlink : uplink capacity)");
        config.network.oversubscription.push_back(ratio);
      }
    }
    if (net.has("switch_latency_us"))
      config.network.switch_latency_us = non_negative_number(net.at("switch_latency_us"));
  }
  if (field.has("contention")) {
    const std::string c = field.at("contention").string();
    if (c == "none")
      config.contention = ContentionKind::kNone;
    else if (c == "analytic")
      config.contention = ContentionKind::kAnalytic;
    else if (c == "simgrid")
      config.contention = ContentionKind::kSimGrid;
    else
      field.at("contention").fail("expected none, analytic or simgrid");
  }
  if (!field.has("profiles")) return;
  const Field profiles = field.at("profiles");
  for (std::size_t i = 0; i < profiles.array_size(); ++i) {
    const Field f = profiles.at(i);
    f.expect_object({"name", "min_gpus", "max_gpus", "name_prefix", "data_parallel", "hybrid", "fitted"});
    ProfileRule rule;
    rule.name = f.at("name").non_empty_string();
    if (f.has("min_gpus")) rule.min_gpus = f.at("min_gpus").u32();
    if (f.has("max_gpus")) rule.max_gpus = f.at("max_gpus").u32();
    if (rule.max_gpus < rule.min_gpus) f.at("max_gpus").fail("smaller than min_gpus");
    if (f.has("name_prefix")) rule.name_prefix = f.at("name_prefix").string();
    const int kinds = int(f.has("data_parallel")) + int(f.has("hybrid")) + int(f.has("fitted"));
    if (kinds != 1) f.fail("expected exactly one of \"data_parallel\", \"hybrid\" or \"fitted\"");
    if (f.has("data_parallel")) rule.profile = read_data_parallel(f.at("data_parallel"));
    if (f.has("hybrid")) rule.profile = read_hybrid(f.at("hybrid"));
    if (f.has("fitted")) rule.profile = read_fitted(f.at("fitted"));
    if (!std::holds_alternative<HybridProfile>(rule.profile)) {
      try {
        validate_profile(rule.profile);
      } catch (const PerfModelError& e) {
        f.fail(e.what());
      }
    }
    config.profiles.push_back(std::move(rule));
  }
}

void read_metrics(const Field& field, MetricsConfig& config) {
  field.expect_object({"enabled", "interval_s", "per_gpu", "max_gpu_samples", "epoch", "busy_util_pct",
                       "compute_power_share", "comm_power_share", "idle_temp_c", "full_power_temp_c",
                       "thermal_time_constant_s", "fb_used_fraction"});
  if (field.has("enabled")) config.enabled = field.at("enabled").boolean();
  if (field.has("per_gpu")) config.per_gpu = field.at("per_gpu").boolean();
  if (field.has("interval_s")) {
    const Field interval = field.at("interval_s");
    if (!interval.raw().is_number_integer() || interval.integer() < 1)
      interval.fail("expected a sample period of at least 1 second, in whole seconds");
    config.interval_s = static_cast<double>(interval.integer());
  }
  if (field.has("max_gpu_samples")) config.max_gpu_samples = field.at("max_gpu_samples").positive();
  TelemetryAssumptions& t = config.telemetry;
  const auto share = [&](const char* key, double& out) {
    if (!field.has(key)) return;
    out = field.at(key).number();
    if (!(out >= 0 && out <= 1)) field.at(key).fail("expected a share in [0, 1]");
  };
  share("compute_power_share", t.compute_power_share);
  share("comm_power_share", t.comm_power_share);
  share("fb_used_fraction", t.fb_used_fraction);
  if (field.has("busy_util_pct")) {
    t.busy_util_pct = field.at("busy_util_pct").number();
    if (!(t.busy_util_pct >= 0 && t.busy_util_pct <= 100)) field.at("busy_util_pct").fail("expected 0 to 100");
  }
  if (field.has("idle_temp_c")) t.idle_temp_c = field.at("idle_temp_c").number();
  if (field.has("full_power_temp_c")) t.full_power_temp_c = field.at("full_power_temp_c").number();
  if (t.full_power_temp_c < t.idle_temp_c)
    field.at(field.has("full_power_temp_c") ? "full_power_temp_c" : "idle_temp_c")
        .fail("full_power_temp_c must be at least idle_temp_c");
  if (field.has("thermal_time_constant_s"))
    t.thermal_time_constant_s = non_negative_number(field.at("thermal_time_constant_s"));
  if (field.has("epoch")) {
    const Field e = field.at("epoch");
    if (e.raw().is_number_integer()) {
      config.epoch_unix_s = e.integer();
    } else {
      const std::string text = e.string();
      int y = 0;
      unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
      char zone = 0, after_date = 0;
      const int n = std::sscanf(text.c_str(), "%4d-%2u-%2uT%2u:%2u:%2u%c", &y, &mo, &d, &h, &mi, &s, &zone);
      const bool with_time = n == 7 && zone == 'Z';
      const bool date_only = !with_time && std::sscanf(text.c_str(), "%4d-%2u-%2u%c", &y, &mo, &d, &after_date) == 3;
      if (date_only) h = mi = s = 0;
      if (!(date_only || with_time) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        e.fail("expected a UTC time \"YYYY-MM-DD\" or \"YYYY-MM-DDTHH:MM:SSZ\", or Unix seconds");
      config.epoch_unix_s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    }
  }
}

}  // namespace detail
}  // namespace gputwin
