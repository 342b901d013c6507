// Reads /autoscaler (cloud node pool, cold start, scale-down) and /cost (prices, purchase models, spot
// interruptions, quotas). Every error names the JSON pointer of the bad value.
#include <algorithm>
#include <cmath>

#include "model/cloud_config.hpp"
#include "model/scenario_field.hpp"

namespace gputwin::detail {
namespace {

double non_negative_number(const Field& f) {
  const double v = f.number();
  if (!(v >= 0) || !std::isfinite(v)) f.fail("expected a non-negative number");
  return v;
}

double percentage(const Field& f) {
  const double v = f.number();
  if (!(v >= 0 && v <= 1000)) f.fail("expected a percentage from 0 to 1000");
  return v;
}

void read_cold_start(const Field& f, ColdStart& c) {
  f.expect_object({"provision_s", "gpu_advertise_s", "driver_s", "image_s", "image", "register_s", "health_check_s"});
  read_seconds_if(f, "provision_s", c.provision_s);
  read_seconds_if(f, "gpu_advertise_s", c.gpu_advertise_s);
  read_seconds_if(f, "driver_s", c.driver_s);
  if (f.has("image") && f.has("image_s")) f.fail("give image or image_s, not both");
  if (f.has("image")) {
    const std::string image = f.at("image").string();
    if (image == "shared")
      c.image_s = 10;  // Enroot squashfs on shared storage: a mount, no per-node pull [U]
    else if (image == "pull")
      c.image_s = 600;  // a 10-20 GB training image pulled without a cache, up to ~10 min [U]
    else
      f.at("image").fail("expected shared (squashfs on shared storage) or pull");
  }
  read_seconds_if(f, "image_s", c.image_s);
  read_seconds_if(f, "register_s", c.register_s);
  read_seconds_if(f, "health_check_s", c.health_check_s);
}

}  // namespace

void read_autoscaler(const Field& f, const ClusterConfig& cluster, AutoscalerConfig& config) {
  f.expect_object({"nodes", "min_nodes", "max_nodes", "poll_s", "idle_window_s", "scale_down_s", "scale_up_per_poll",
                   "scale_down_per_poll", "cold_start", "boot_failure_probability"});
  config.enabled = true;
  if (f.has("nodes")) {
    config.nodes = read_node_set(f.at("nodes"), cluster);
  } else {
    for (std::uint32_t n = 0; n < cluster.nodes.size(); ++n) config.nodes.push_back(n);
  }
  const auto pool = static_cast<std::uint32_t>(config.nodes.size());
  config.max_nodes = f.has("max_nodes") ? f.at("max_nodes").u32() : pool;
  if (config.max_nodes > pool) f.at("max_nodes").fail("the pool has only " + std::to_string(pool) + " nodes");
  if (f.has("min_nodes")) config.min_nodes = f.at("min_nodes").u32();
  if (config.min_nodes > config.max_nodes) f.at("min_nodes").fail("more than max_nodes");
  if (f.has("poll_s")) config.poll_s = positive_seconds(f.at("poll_s"));
  read_seconds_if(f, "idle_window_s", config.idle_window_s);
  read_seconds_if(f, "scale_down_s", config.scale_down_s);
  if (f.has("scale_up_per_poll"))
    config.scale_up_per_poll = static_cast<std::uint32_t>(f.at("scale_up_per_poll").positive());
  if (f.has("scale_down_per_poll"))
    config.scale_down_per_poll = static_cast<std::uint32_t>(f.at("scale_down_per_poll").positive());
  if (f.has("cold_start")) read_cold_start(f.at("cold_start"), config.cold_start);
  if (f.has("boot_failure_probability")) {
    config.boot_failure_probability = f.at("boot_failure_probability").number();
    if (!(config.boot_failure_probability >= 0 && config.boot_failure_probability < 1))
      f.at("boot_failure_probability").fail("expected a probability from 0 to below 1");
  }
}

void read_power_save(const Field& f, const ClusterConfig& cluster, AutoscalerConfig& config) {
  f.expect_object({"SuspendTime", "SuspendTimeout", "ResumeTimeout", "ResumeRate", "SuspendRate", "SuspendExcNodes",
                   "cold_start", "poll_s", "CLOUD", "resume_failure_probability"});
  config.enabled = true;
  config.slurm_power_save = true;
  // Physical nodes start powered up and are suspended when idle; CLOUD nodes start POWERED_DOWN.
  config.start_powered_down = f.has("CLOUD") && f.at("CLOUD").boolean();
  std::vector<std::uint8_t> excluded(cluster.nodes.size(), 0);
  if (f.has("SuspendExcNodes")) {
    for (std::uint32_t n : read_node_set(f.at("SuspendExcNodes"), cluster)) excluded[n] = 1;
  }
  for (std::uint32_t n = 0; n < cluster.nodes.size(); ++n) {
    if (!excluded[n]) config.nodes.push_back(n);
  }
  config.max_nodes = static_cast<std::uint32_t>(config.nodes.size());
  // power_save.c runs its work about once a second; 10 s keeps the event count low at the same timing scale.
  config.poll_s = f.has("poll_s") ? positive_seconds(f.at("poll_s")) : 10;
  config.idle_window_s = positive_seconds(f.at("SuspendTime"));  // required: power saving is off without it
  config.scale_down_s = f.has("SuspendTimeout") ? non_negative_seconds(f.at("SuspendTimeout")) : 30;
  config.resume_timeout_s = f.has("ResumeTimeout") ? non_negative_seconds(f.at("ResumeTimeout")) : 60;
  // ResumeRate and SuspendRate are nodes per minute (0: unlimited); per decision at poll_s.
  const auto per_poll = [&](const char* key, double per_minute) {
    const double rate = f.has(key) ? f.at(key).number() : per_minute;
    if (!(rate >= 0)) f.at(key).fail("expected a non-negative number of nodes per minute");
    if (rate == 0) return static_cast<std::uint32_t>(config.nodes.size() + 1);
    return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(rate * config.poll_s / 60.0));
  };
  config.scale_up_per_poll = per_poll("ResumeRate", 300);
  config.scale_down_per_poll = per_poll("SuspendRate", 60);
  if (f.has("cold_start")) read_cold_start(f.at("cold_start"), config.cold_start);
  // A node that never registers (a failed ResumeProgram, a cloud API error): DOWN after ResumeTimeout.
  if (f.has("resume_failure_probability")) {
    config.boot_failure_probability = f.at("resume_failure_probability").number();
    if (!(config.boot_failure_probability >= 0 && config.boot_failure_probability < 1))
      f.at("resume_failure_probability").fail("expected a probability below 1 (1 would fail every resume)");
  }
  if (config.resume_timeout_s > 0 && config.cold_start.total_s() > config.resume_timeout_s) {
    f.fail("ResumeTimeout (" + std::to_string(static_cast<long long>(config.resume_timeout_s)) +
           " s) is shorter than the cold start (" +
           std::to_string(static_cast<long long>(config.cold_start.total_s())) +
           " s): every resume would fail; raise ResumeTimeout or shorten /power_save/cold_start");
  }
}

void read_operations(const Field& f, const ClusterConfig& cluster, std::vector<ClusterOperation>& operations) {
  for (std::size_t i = 0; i < f.array_size(); ++i) {
    const Field o = f.at(i);
    o.expect_object({"time", "action", "nodes", "image", "volume", "cold_start_s", "restart_s", "rolling", "duration",
                     "jobs", "priority"});
    ClusterOperation op;
    op.time_s = non_negative_seconds(o.at("time"));
    const std::string action = o.at("action").string();
    using A = ClusterOperation::Action;
    if (action == "add_nodes")
      op.action = A::kAddNodes;
    else if (action == "remove_nodes")
      op.action = A::kRemoveNodes;
    else if (action == "update_image")
      op.action = A::kUpdateImage;
    else if (action == "attach_volume")
      op.action = A::kAttachVolume;
    else if (action == "maintenance")
      op.action = A::kMaintenance;
    else if (action == "restart_workers")
      op.action = A::kRestartWorkers;
    else if (action == "hold")
      op.action = A::kHoldJobs;
    else if (action == "release")
      op.action = A::kReleaseJobs;
    else if (action == "set_priority")
      op.action = A::kSetPriority;
    else
      o.at("action").fail(
          "expected add_nodes, remove_nodes, update_image, attach_volume, maintenance, restart_workers, hold, release "
          "or set_priority");
    const bool on_jobs = op.action == A::kHoldJobs || op.action == A::kReleaseJobs || op.action == A::kSetPriority;
    if (on_jobs) {
      if (!o.has("jobs")) o.fail("\"" + action + "\" needs \"jobs\" (job ids)");
      const Field jobs = o.at("jobs");
      for (std::size_t j = 0; j < jobs.array_size(); ++j) op.jobs.push_back(jobs.at(j).non_negative());
      if (op.jobs.empty()) jobs.fail("expected at least one job id");
      if (op.action == A::kSetPriority) {
        if (!o.has("priority")) o.fail("\"set_priority\" needs \"priority\"");
        op.priority = o.at("priority").u32();
        if (op.priority == 0) o.at("priority").fail("expected a priority above 0 (hold a job to stop it)");
      }
      if (o.has("nodes")) o.at("nodes").fail("\"" + action + "\" acts on jobs, not nodes");
      operations.push_back(std::move(op));
      continue;
    }
    if (o.has("jobs")) o.at("jobs").fail("\"" + action + "\" acts on nodes, not jobs");
    const bool needs_nodes = op.action == A::kAddNodes || op.action == A::kRemoveNodes || op.action == A::kMaintenance;
    if (o.has("nodes")) {
      op.nodes = read_node_set(o.at("nodes"), cluster);
    } else if (needs_nodes) {
      o.fail("\"" + action + "\" needs \"nodes\"");
    } else {
      for (std::uint32_t n = 0; n < cluster.nodes.size(); ++n) op.nodes.push_back(n);
    }
    if (o.has("image")) op.name = o.at("image").non_empty_string();
    if (o.has("volume")) op.name = o.at("volume").non_empty_string();
    if (op.action == A::kUpdateImage && op.name.empty()) o.fail("\"update_image\" needs \"image\"");
    if (op.action == A::kAttachVolume && op.name.empty()) o.fail("\"attach_volume\" needs \"volume\"");
    switch (op.action) {
      case A::kAddNodes:
        op.duration_s = o.has("cold_start_s") ? non_negative_seconds(o.at("cold_start_s")) : ColdStart{}.total_s();
        break;
      case A::kAttachVolume:
        op.duration_s = o.has("restart_s") ? non_negative_seconds(o.at("restart_s")) : 600;  // reboot + GPU stack
        if (o.has("rolling")) op.rolling = o.at("rolling").boolean();
        break;
      case A::kRestartWorkers:
        // A worker pod restart: container start, shared image mount, slurmd registration (no host reboot) [U].
        op.duration_s = o.has("restart_s") ? non_negative_seconds(o.at("restart_s")) : 60;
        if (o.has("rolling")) op.rolling = o.at("rolling").boolean();
        break;
      case A::kMaintenance:
        op.duration_s = positive_seconds(o.at("duration"));
        break;
      default:
        break;
    }
    operations.push_back(std::move(op));
  }
  std::stable_sort(operations.begin(), operations.end(),
                   [](const ClusterOperation& a, const ClusterOperation& b) { return a.time_s < b.time_s; });
}

void read_cost(const Field& f, const ClusterConfig& cluster, CostConfig& config) {
  f.expect_object(
      {"prices", "spot_interruptions_per_node_day", "spot_notice_s", "sample_s", "quota_check_s", "quotas"});
  config.enabled = true;
  if (f.has("prices")) {
    const Field prices = f.at("prices");
    std::vector<std::uint8_t> priced(cluster.nodes.size(), 0);
    for (std::size_t i = 0; i < prices.array_size(); ++i) {
      const Field p = prices.at(i);
      p.expect_object({"nodes", "usd_per_node_hour", "usd_per_gpu_hour", "model"});
      NodePrice price;
      if (p.has("nodes")) {
        price.nodes = read_node_set(p.at("nodes"), cluster);
      } else {
        for (std::uint32_t n = 0; n < cluster.nodes.size(); ++n) price.nodes.push_back(n);
      }
      for (std::uint32_t n : price.nodes) {
        if (priced[n]) p.at("nodes").fail("node '" + cluster.nodes[n].name + "' already has a price");
        priced[n] = 1;
      }
      if (p.has("usd_per_node_hour") == p.has("usd_per_gpu_hour")) p.fail("give usd_per_node_hour or usd_per_gpu_hour");
      if (p.has("usd_per_node_hour")) {
        price.usd_per_node_hour = non_negative_number(p.at("usd_per_node_hour"));
      } else {
        // A GPU price makes a node price per node, so mixed node groups are charged by their GPU counts.
        const double per_gpu = non_negative_number(p.at("usd_per_gpu_hour"));
        std::uint32_t gpus = 0;
        for (std::uint32_t n : price.nodes) gpus = std::max(gpus, cluster.nodes[n].gpus);
        for (std::uint32_t n : price.nodes) {
          if (cluster.nodes[n].gpus != gpus)
            p.at("usd_per_gpu_hour").fail("nodes with different GPU counts need separate prices");
        }
        price.usd_per_node_hour = per_gpu * gpus;
      }
      if (p.has("model")) {
        const std::string m = p.at("model").string();
        if (m == "on_demand")
          price.model = PurchaseModel::kOnDemand;
        else if (m == "reserved")
          price.model = PurchaseModel::kReserved;
        else if (m == "spot")
          price.model = PurchaseModel::kSpot;
        else
          p.at("model").fail("expected on_demand, reserved or spot");
      }
      config.prices.push_back(std::move(price));
    }
  }
  if (f.has("spot_interruptions_per_node_day")) {
    config.spot_interruptions_per_node_day = non_negative_number(f.at("spot_interruptions_per_node_day"));
    if (config.spot_interruptions_per_node_day > 1440)  // more than one a minute per node is no spot market
      f.at("spot_interruptions_per_node_day").fail("expected at most 1440 (one a minute)");
  }
  read_seconds_if(f, "spot_notice_s", config.spot_notice_s);
  if (f.has("sample_s")) config.sample_s = positive_seconds(f.at("sample_s"));
  if (f.has("quota_check_s")) config.quota_check_s = positive_seconds(f.at("quota_check_s"));
  if (f.has("quotas")) {
    const Field quotas = f.at("quotas");
    for (std::size_t i = 0; i < quotas.array_size(); ++i) {
      const Field q = quotas.at(i);
      q.expect_object({"user", "limit_usd", "warn_pct", "buffer_pct", "action"});
      Quota quota;
      quota.user = q.at("user").non_empty_string();
      quota.limit_usd = non_negative_number(q.at("limit_usd"));
      if (q.has("warn_pct")) quota.warn_pct = percentage(q.at("warn_pct"));
      if (q.has("buffer_pct")) quota.buffer_pct = percentage(q.at("buffer_pct"));
      if (q.has("action")) {
        const std::string a = q.at("action").string();
        if (a == "warn")
          quota.action = QuotaAction::kWarn;
        else if (a == "block_and_kill")
          quota.action = QuotaAction::kBlockAndKill;
        else
          q.at("action").fail("expected warn or block_and_kill");
      }
      for (const Quota& other : config.quotas) {
        if (other.user == quota.user) q.at("user").fail("user '" + quota.user + "' already has a quota");
      }
      config.quotas.push_back(std::move(quota));
    }
  }
}

}  // namespace gputwin::detail
