// Speed of the twin on a large cluster: how long one poll of a 10,000-node, 100,000-job cluster takes to mirror
// (fetch + parse the slurmrestd replies, Mirror::apply), to forecast and to write the results folder. Targets:
// mirroring under 2 s per poll, a forecast under 5 s, on the project's 2-core machine.
//
// The replies are generated in v0.0.44 shapes from the recorded Slurm 25.11 replies
// (../shared/slurmrestd/recorded/25.11/0.0.44): every node is the recorded GPU node object, every job the recorded
// running or pending GPU job object, with names, ids, states, nodes, GPU counts and times varied, so each reply is
// as large per object as the real one. Running jobs are placed on real nodes without over-committing any node's
// GPUs, CPUs or memory (best fit); the rest of the jobs pend with priorities and a reason. A fake slurmrestd
// (tests/twin/fake_slurmrestd) serves them on 127.0.0.1, with the recorded OpenAPI spec for version discovery.
//
// Each of --repeat polls fetches diag, nodes, partitions and jobs through SlurmrestdClient, applies them to one
// Mirror (the first poll sees every job for the first time, later ones see the same jobs again), forecasts with the
// `slurm` policy (and `fcfs` for comparison) and writes the results folder. Printed: reply sizes, each phase's
// minimum and median seconds, per-job costs and peak RSS.
//
//   twin_bench [--nodes 10000] [--jobs 100000] [--repeat 3] [--gpus-per-node 8] [--running 0.2] [--seed 1]
//              [--compact] [--no-fcfs] [--no-forecast] [--no-breakdown] [--horizon HOURS] [--log-polls K]
//              [--interval S] [--out DIR] [--dump DIR] [--recorded DIR]
//
// --compact serves compact JSON instead of slurmrestd's pretty-printed replies; --no-forecast measures the mirror
// alone (for profiling the fetch and parse); --dump writes the generated replies (nodes.json, jobs.json, ...) to DIR;
// --out keeps the results folder in DIR (default: a temporary folder, removed); --interval sleeps S seconds between
// polls, as the twin does between its polls (memory freed by one poll may then cost more to touch again). After each
// poll the jobs reply is fetched and parsed once more, separately (client.request, then parse_jobs), to split its
// cost; --no-breakdown skips that. --horizon is the forecasts' horizon (ForecastOptions::horizon_s; 168 h).
// --log-polls K starts the twin's log with K - 1 earlier copies of the first forecast, so the results write shows
// its cost after K polls (the folder is written whole at every poll, every forecast row of every poll).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "model/hostlist.hpp"
#include "model/scenario.hpp"
#include "tests/twin/fake_slurmrestd.hpp"
#include "twin/forecast.hpp"
#include "twin/mirror.hpp"
#include "twin/rest/rest_parse.hpp"
#include "twin/rest/slurmrestd_client.hpp"
#include "twin/twin_log.hpp"
#include "twin/twin_results.hpp"

#ifndef GPUTWIN_SHARED_DIR
#define GPUTWIN_SHARED_DIR "../shared"
#endif

namespace {

using namespace gputwin;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kNow = 1762790000;   // "now" of the generated cluster (Nov 2025, as the recording)
constexpr std::int64_t kPollInterval = 30;  // seconds between the simulated polls
constexpr double kLongShare = 0.2;          // the first 20% of the nodes are also in partition "long"

struct Options {
  int nodes = 10000;
  int jobs = 100000;
  int repeat = 3;
  int gpus_per_node = 8;
  double running = 0.2;
  std::uint64_t seed = 1;
  bool compact = false;
  bool fcfs = true;
  bool forecast = true;
  double interval_s = 0;
  bool breakdown = true;
  double horizon_h = 7 * 24;
  int log_polls = 1;
  std::string out;
  std::string dump;
  std::string recorded = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/recorded/25.11";
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "twin_bench: %s\nusage: twin_bench [--nodes N] [--jobs N] [--repeat R] [--gpus-per-node G] "
               "[--running FRACTION] [--seed S] [--compact] [--no-fcfs] [--no-forecast] [--no-breakdown] "
               "[--horizon HOURS] [--log-polls K] [--interval S] [--out DIR] [--dump DIR] [--recorded DIR]\n",
               problem.c_str());
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    try {
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) usage("missing value of " + arg);
        return argv[++i];
      };
      if (arg == "--nodes") {
        o.nodes = std::stoi(value());
      } else if (arg == "--jobs") {
        o.jobs = std::stoi(value());
      } else if (arg == "--repeat") {
        o.repeat = std::stoi(value());
      } else if (arg == "--gpus-per-node") {
        o.gpus_per_node = std::stoi(value());
      } else if (arg == "--running") {
        o.running = std::stod(value());
      } else if (arg == "--seed") {
        o.seed = std::stoull(value());
      } else if (arg == "--compact") {
        o.compact = true;
      } else if (arg == "--no-fcfs") {
        o.fcfs = false;
      } else if (arg == "--no-forecast") {
        o.forecast = false;
        o.fcfs = false;
      } else if (arg == "--log-polls") {
        o.log_polls = std::stoi(value());
      } else if (arg == "--horizon") {
        o.horizon_h = std::stod(value());
      } else if (arg == "--no-breakdown") {
        o.breakdown = false;
      } else if (arg == "--interval") {
        o.interval_s = std::stod(value());
      } else if (arg == "--dump") {
        o.dump = value();
      } else if (arg == "--out") {
        o.out = value();
      } else if (arg == "--recorded") {
        o.recorded = value();
      } else {
        usage("unknown option " + arg);
      }
    } catch (const std::logic_error&) {  // std::stoi and friends: not a number, or out of range
      usage("bad value of " + arg + ": " + argv[i]);
    }
  }
  if (o.nodes < 1 || o.jobs < 0 || o.repeat < 1 || o.gpus_per_node < 1 || o.running < 0 || o.running > 1 ||
      o.log_polls < 1 || o.horizon_h <= 0 || o.interval_s < 0)
    usage("an option value is out of range");
  return o;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const std::filesystem::path& path) {
  return json::parse(read_text(path));
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Peak resident set of the process so far (getrusage), MB.
double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

/// A field of /proc/self/status ("VmRSS", "VmHWM") in MB; -1 if unreadable.
double proc_status_mb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::strtod(line.c_str() + field.size() + 1, nullptr) / 1024.0;
  }
  return -1;
}

/// Resets VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs), so later peaks exclude generation.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// ---- The generated cluster ------------------------------------------------------------------------------------

/// {"set": true, "infinite": false, "number": value}, the v0.0.39+ number shape.
json number(std::int64_t value) {
  return json{{"set", true}, {"infinite", false}, {"number", value}};
}

json unset_number() {
  return json{{"set", false}, {"infinite", false}, {"number", 0}};
}

/// "0-3" for GPUs 0..3, "5" for one.
std::string index_range(int first, int count) {
  return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
}

enum class NodeKind : std::uint8_t { kNormal, kDrained, kDown, kRebooting, kDraining };

/// One generated job before it becomes JSON.
struct GenJob {
  bool running = false;
  int nodes = 1;          // node count
  int gpus_per_node = 1;  // GPUs asked for per node
  std::vector<int> node_ids;
  std::vector<int> gpu_first;  // first GPU index used on each node
  std::vector<int> cpu_first;  // first CPU used on each node
  std::int64_t submit = 0;
  std::int64_t start = 0;  // running: actual start; pending: slurmctld's estimate (0 none)
  std::int64_t limit_min = 60;
  std::int64_t priority = 0;
  std::int64_t eligible = 0;
  std::string reason = "None";
  bool held = false;
  int user = 0;
  int name = 0;
  bool long_partition = false;
};

constexpr const char* kJobNames[] = {"train-llm", "finetune", "eval", "sweep", "prep", "infer", "bench", "render"};
constexpr std::int64_t kLimitsMin[] = {30, 60, 120, 240, 480, 720, 1440, 2880};

/// Everything served, plus what the bench checks against.
struct Generated {
  std::string nodes;
  std::string jobs;
  std::string partitions;
  std::string diag;
  std::string ping;
  std::string spec;
  int running = 0;
  int pending = 0;
  int multi_node_running = 0;
  int downsized = 0;  // running jobs that did not fit as drawn and were made smaller
  int demoted = 0;    // running jobs that fitted nowhere and pend instead
  std::uint64_t gpus_total = 0;
  std::uint64_t gpus_used = 0;
  int out_of_service = 0;
  RuntimeHistory history;
};

/// Appends `text` (pretty JSON) to `out`, every line after the first indented by `indent` more spaces.
void append_indented(std::string& out, const std::string& text, std::size_t indent) {
  const std::string pad(indent, ' ');
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      out.append(text, pos, std::string::npos);
      break;
    }
    out.append(text, pos, nl + 1 - pos);
    out += pad;
    pos = nl + 1;
  }
}

/// A reply {"<key>": [items...], <the template's other members>} formatted as slurmrestd does (2-space pretty), or
/// compact.
class ReplyWriter {
 public:
  ReplyWriter(std::string key, bool compact) : key_(std::move(key)), compact_(compact) {
    out_ = compact_ ? "{\"" + key_ + "\":[" : "{\n  \"" + key_ + "\": [";
  }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  void add(const json& item) {
    if (compact_) {
      if (count_ > 0) out_ += ',';
      out_ += item.dump();
    } else {
      out_ += count_ > 0 ? ",\n    " : "\n    ";
      append_indented(out_, item.dump(2), 4);
    }
    ++count_;
  }
  /// The reply, closed with `rest`'s members other than key (meta, errors, warnings, ...).
  std::string finish(json rest) {
    rest.erase(key_);
    if (compact_) {
      out_ += ']';
      std::string tail = rest.dump();
      if (tail.size() > 2)
        out_ += ',' + tail.substr(1);
      else
        out_ += '}';
    } else {
      out_ += count_ > 0 ? "\n  ]" : "]";
      std::string tail = rest.dump(2);  // "{\n  \"meta\": ...\n}"
      if (tail.size() > 2)
        out_ += ",\n" + tail.substr(2);
      else
        out_ += "\n}";
    }
    return std::move(out_);
  }

 private:
  std::string key_;
  bool compact_;
  std::string out_;
  std::size_t count_ = 0;
};

/// Best-fit placement of GPUs on nodes: buckets of nodes by free GPUs (stale entries skipped), so a job goes to the
/// fullest node that still fits it and whole nodes stay free for whole-node jobs.
class Placer {
 public:
  Placer(const std::vector<NodeKind>& kinds, int gpus)
      : gpus_(gpus), free_(kinds.size(), gpus), out_(kinds.size(), 0), buckets_(gpus + 1) {
    for (int n = static_cast<int>(kinds.size()) - 1; n >= 0; --n) {
      if (kinds[n] == NodeKind::kNormal || kinds[n] == NodeKind::kDraining) {
        buckets_[gpus].push_back(n);
      } else {
        free_[n] = 0;  // out of service: nothing placed, nothing used
        out_[n] = 1;
      }
    }
  }
  /// A node with at least `k` free GPUs (the fullest such), taken out of its bucket; -1 if none.
  int take(int k, bool whole) {
    for (int f = whole ? gpus_ : k; f <= gpus_; ++f) {
      auto& bucket = buckets_[f];
      while (!bucket.empty()) {
        const int n = bucket.back();
        bucket.pop_back();
        if (free_[n] == f) return n;
      }
    }
    return -1;
  }
  /// Gives back a node taken but not used.
  void put_back(int n) { buckets_[free_[n]].push_back(n); }
  /// Uses `k` GPUs of node `n` (taken); returns the first GPU index.
  int use(int n, int k) {
    const int first = gpus_ - free_[n];
    free_[n] -= k;
    if (free_[n] > 0) buckets_[free_[n]].push_back(n);
    return first;
  }
  [[nodiscard]] int used(int n) const { return out_[n] ? 0 : gpus_ - free_[n]; }

 private:
  int gpus_;
  std::vector<int> free_;
  std::vector<std::uint8_t> out_;
  std::vector<std::vector<int>> buckets_;
};

/// Draws a job's shape: mostly one node with 1, 2, G/2 or G GPUs, some whole-node multi-node jobs.
void draw_shape(std::mt19937_64& rng, int gpus, double multi_share, GenJob& job) {
  std::uniform_real_distribution<double> u(0, 1);
  if (u(rng) < multi_share) {
    job.nodes = std::uniform_int_distribution<int>(2, 8)(rng);
    job.gpus_per_node = gpus;
    return;
  }
  job.nodes = 1;
  const double x = u(rng);
  job.gpus_per_node = x < 0.45 ? 1 : x < 0.70 ? 2 : x < 0.87 ? std::max(1, gpus / 2) : gpus;
  job.gpus_per_node = std::min(job.gpus_per_node, gpus);
}

Generated generate(const Options& o) {
  const std::filesystem::path dir = o.recorded;
  const std::filesystem::path v44 = dir / "0.0.44";
  Generated g;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  const auto uniform_int = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };

  const json nodes_doc = read_json(v44 / "slurm-nodes.json");
  json node_template;
  for (const json& n : nodes_doc["nodes"]) {
    if (n["gres"].get<std::string>().find("gpu:h100") != std::string::npos) {
      node_template = n;
      break;
    }
  }
  if (node_template.is_null()) throw std::runtime_error("slurm-nodes.json: no GPU node to use as a template");
  const json running_doc = read_json(v44 / "slurm-job-gpus-running.json");
  const json pending_doc = read_json(v44 / "slurm-job-gpus-pending.json");
  const json running_template = running_doc["jobs"][0];
  const json pending_template = pending_doc["jobs"][0];
  const json parts_doc = read_json(v44 / "slurm-partitions.json");
  json part_template;
  for (const json& p : parts_doc["partitions"]) {
    if (p["name"] == "gpu") part_template = p;
  }
  if (part_template.is_null()) throw std::runtime_error("slurm-partitions.json: no partition 'gpu'");
  g.ping = read_text(v44 / "slurm-ping.json");
  g.spec = read_text(dir / "openapi-v3.json");

  const int N = o.nodes;
  const int G = o.gpus_per_node;
  const int cpus = node_template["cpus"].get<int>();
  const int cpus_per_gpu = std::max(1, cpus / G);
  const std::int64_t real_memory = node_template["real_memory"].get<std::int64_t>();
  const std::int64_t mem_per_gpu = real_memory / G;
  const int long_nodes = std::max(1, static_cast<int>(N * kLongShare));
  const int width = std::max<int>(5, static_cast<int>(std::to_string(N).size()));
  std::vector<std::string> names(N);
  for (int n = 0; n < N; ++n) {
    const std::string digits = std::to_string(n + 1);
    names[n] = "gpu" + std::string(width - digits.size(), '0') + digits;
  }

  // Nodes out of service: 1% drained, 0.3% down, 0.1% rebooting (no jobs); 0.5% of the busy ones draining.
  std::vector<NodeKind> kinds(N, NodeKind::kNormal);
  for (int n = 0; n < N; ++n) {
    const double x = u(rng);
    kinds[n] = x < 0.010   ? NodeKind::kDrained
               : x < 0.013 ? NodeKind::kDown
               : x < 0.014 ? NodeKind::kRebooting
                           : NodeKind::kNormal;
  }

  // Users (400 for 100,000 jobs) in 40 accounts.
  const int users = std::max(50, o.jobs / 250);
  const int accounts = std::max(5, users / 10);
  const auto user_name = [](int u) {
    std::string d = std::to_string(u + 1);
    return "user" + std::string(d.size() < 4 ? 4 - d.size() : 0, '0') + d;
  };
  const auto account_name = [&](int u) { return "acct" + std::to_string(u % accounts + 1); };

  // Finished runs seed the "recent" predictor: two per user and job name, 20-60% of a limit.
  for (int user = 0; user < users; ++user) {
    for (int name = 0; name < static_cast<int>(std::size(kJobNames)); ++name) {
      for (int run = 0; run < 2; ++run) {
        const std::int64_t limit_s = kLimitsMin[uniform_int(0, std::size(kLimitsMin) - 1)] * 60;
        const auto run_s = static_cast<std::int64_t>(static_cast<double>(limit_s) * (0.2 + 0.4 * u(rng)));
        g.history.add(user_name(user), account_name(user), kJobNames[name], run_s, limit_s);
      }
    }
  }

  // Jobs: the running ones placed best-fit on real nodes; the rest pending.
  Placer placer(kinds, G);
  std::vector<GenJob> jobs(static_cast<std::size_t>(o.jobs));
  const int want_running = static_cast<int>(o.jobs * o.running);
  for (int i = 0; i < o.jobs; ++i) {
    GenJob& job = jobs[i];
    job.user = static_cast<int>(uniform_int(0, users - 1));
    job.name = static_cast<int>(uniform_int(0, std::size(kJobNames) - 1));
    job.limit_min = kLimitsMin[uniform_int(0, std::size(kLimitsMin) - 1)];
    job.running = i < want_running;
    draw_shape(rng, G, job.running ? 0.02 : 0.05, job);
    if (!job.running) continue;
    bool placed = false;
    bool downsized = false;
    while (!placed) {
      std::vector<int> taken;
      const bool whole = job.nodes > 1 || job.gpus_per_node == G;
      for (int k = 0; k < job.nodes; ++k) {
        const int n = placer.take(job.gpus_per_node, whole);
        if (n < 0) break;
        taken.push_back(n);
      }
      if (static_cast<int>(taken.size()) == job.nodes) {
        std::sort(taken.begin(), taken.end());
        for (int n : taken) {
          const int first = placer.use(n, job.gpus_per_node);
          job.node_ids.push_back(n);
          job.gpu_first.push_back(first);
          job.cpu_first.push_back(first * cpus_per_gpu);
        }
        placed = true;
        break;
      }
      for (int n : taken) placer.put_back(n);
      if (job.nodes > 1) {
        --job.nodes;
      } else if (job.gpus_per_node > 1) {
        job.gpus_per_node /= 2;
      } else {
        break;
      }
      downsized = true;
    }
    if (!placed) {
      job.running = false;
      ++g.demoted;
      continue;
    }
    if (downsized) ++g.downsized;
    if (job.nodes > 1) ++g.multi_node_running;
    job.long_partition = job.node_ids.back() < long_nodes && u(rng) < 0.3;
    if (job.long_partition) job.limit_min = std::max<std::int64_t>(job.limit_min, 4320);
    const std::int64_t elapsed = uniform_int(0, job.limit_min * 60 * 9 / 10);
    job.start = kNow - elapsed;
    job.submit = job.start - uniform_int(0, 6 * 3600);
    job.eligible = job.submit;
    job.priority = uniform_int(1000, 100000);
  }
  for (GenJob& job : jobs) {
    if (job.running) continue;
    job.long_partition = u(rng) < 0.1;
    if (job.long_partition) job.limit_min = std::max<std::int64_t>(job.limit_min, 4320);
    job.submit = kNow - uniform_int(60, 3 * 86400);
    job.eligible = job.submit;
    job.priority = uniform_int(1000, 100000);
    job.start = u(rng) < 0.3 ? kNow + uniform_int(3600, 3 * 86400) : 0;
    const double x = u(rng);
    if (x < 0.01) {
      job.held = true;
      job.priority = 0;
      job.reason = "JobHeldUser";
      job.start = 0;
    } else if (x < 0.02) {
      job.reason = "BeginTime";
      job.eligible = kNow + uniform_int(3600, 86400);
    } else if (x < 0.05) {
      job.reason = "Resources";
    } else {
      job.reason = "Priority";
    }
  }
  // Job ids in submit order, as slurmctld gives them.
  std::vector<std::uint32_t> order(jobs.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return jobs[a].submit < jobs[b].submit; });

  // ---- nodes reply
  for (int n = 0; n < N; ++n) {
    if (placer.used(n) > 0 && kinds[n] == NodeKind::kNormal && u(rng) < 0.005) kinds[n] = NodeKind::kDraining;
  }
  ReplyWriter node_reply("nodes", o.compact);
  node_reply.reserve(static_cast<std::size_t>(N) * 3500);
  const std::string gres = "gpu:h100:" + std::to_string(G);
  for (int n = 0; n < N; ++n) {
    json node = node_template;
    const int used = placer.used(n);
    const int alloc_cpus = used * cpus_per_gpu;
    const std::int64_t alloc_mem = used * mem_per_gpu;
    g.gpus_total += static_cast<std::uint64_t>(G);
    g.gpus_used += static_cast<std::uint64_t>(used);
    node["name"] = names[n];
    node["address"] = names[n];
    node["hostname"] = names[n];
    node["gres"] = gres;
    node["gres_used"] =
        used > 0 ? "gpu:h100:" + std::to_string(used) + "(IDX:" + index_range(0, used) + ")" : "gpu:h100:0(IDX:N/A)";
    const std::string base = used == G && alloc_cpus >= cpus ? "ALLOCATED" : used > 0 ? "MIXED" : "IDLE";
    std::string reason;
    switch (kinds[n]) {
      case NodeKind::kNormal:
        node["state"] = json::array({base});
        break;
      case NodeKind::kDrained:
        node["state"] = json::array({"IDLE", "DRAIN"});
        reason = "Kill task failed";
        break;
      case NodeKind::kDown:
        node["state"] = json::array({"DOWN", "NOT_RESPONDING"});
        reason = "Not responding";
        break;
      case NodeKind::kRebooting:
        node["state"] = json::array({"DOWN", "REBOOT_ISSUED"});
        reason = "Reboot ASAP";
        break;
      case NodeKind::kDraining:
        node["state"] = json::array({base, "DRAIN"});
        reason = "XID 79 GPU 3";
        break;
    }
    if (kinds[n] != NodeKind::kNormal && kinds[n] != NodeKind::kDraining) ++g.out_of_service;
    node["reason"] = reason;
    node["reason_changed_at"] = number(reason.empty() ? 0 : kNow - uniform_int(60, 86400));
    node["reason_set_by_user"] = reason.empty() ? "" : "root";
    node["alloc_cpus"] = alloc_cpus;
    node["alloc_idle_cpus"] = cpus - alloc_cpus;
    node["alloc_memory"] = alloc_mem;
    node["partitions"] = n < long_nodes ? json::array({"gpu", "long"}) : json::array({"gpu"});
    node["tres"] = "cpu=" + std::to_string(cpus) + ",mem=" + std::to_string(real_memory / 1024) +
                   "G,billing=" + std::to_string(cpus) + ",gres/gpu=" + std::to_string(G);
    node["tres_used"] = used > 0 ? "cpu=" + std::to_string(alloc_cpus) + ",mem=" + std::to_string(alloc_mem) +
                                       "M,gres/gpu=" + std::to_string(used)
                                 : "";
    node["last_busy"] = number(used > 0 ? kNow : kNow - uniform_int(0, 86400));
    node_reply.add(node);
  }
  g.nodes = node_reply.finish(nodes_doc);

  // ---- partitions reply
  ReplyWriter part_reply("partitions", o.compact);
  const auto partition = [&](const std::string& name, int count, std::int64_t max_min, int tier) {
    json p = part_template;
    std::vector<std::string> members(names.begin(), names.begin() + count);
    p["name"] = name;
    p["nodes"]["configured"] = format_hostlist(members);
    p["nodes"]["total"] = count;
    p["cpus"]["total"] = static_cast<std::int64_t>(count) * cpus;
    p["tres"]["configured"] = "cpu=" + std::to_string(static_cast<std::int64_t>(count) * cpus) +
                              ",mem=" + std::to_string(count * real_memory / 1024) + "G,node=" + std::to_string(count) +
                              ",billing=" + std::to_string(static_cast<std::int64_t>(count) * cpus) +
                              ",gres/gpu=" + std::to_string(static_cast<std::int64_t>(count) * G);
    p["maximums"]["time"] = number(max_min);
    p["priority"]["tier"] = tier;
    part_reply.add(p);
  };
  partition("gpu", N, 2880, 1);
  partition("long", long_nodes, 10080, 1);
  g.partitions = part_reply.finish(parts_doc);

  // ---- jobs reply
  ReplyWriter job_reply("jobs", o.compact);
  job_reply.reserve(static_cast<std::size_t>(o.jobs) * (o.compact ? 5000 : 11000));
  const json alloc_template = running_template["job_resources"]["nodes"]["allocation"][0];
  std::uint64_t next_id = 1000001;
  for (std::uint32_t i : order) {
    const GenJob& job = jobs[i];
    const std::uint64_t id = next_id++;
    json j = job.running ? running_template : pending_template;
    const std::string user = user_name(job.user);
    const std::string part = job.long_partition ? "long" : "gpu";
    const int cpus_total = job.nodes * job.gpus_per_node * cpus_per_gpu;
    const std::int64_t mem_node = job.gpus_per_node * mem_per_gpu;
    const int gpus_total = job.nodes * job.gpus_per_node;
    j["job_id"] = id;
    j["step_id"]["job_id"] = number(static_cast<std::int64_t>(id));
    j["name"] = kJobNames[job.name];
    j["user_name"] = user;
    j["user_id"] = 10000 + job.user;
    j["mail_user"] = user;
    j["account"] = account_name(job.user);
    j["partition"] = part;
    j["priority"] = number(job.priority);
    j["hold"] = job.held;
    j["submit_time"] = number(job.submit);
    j["eligible_time"] = number(job.eligible);
    j["accrue_time"] = number(job.held ? 0 : job.eligible);
    j["last_sched_evaluation"] = number(kNow - uniform_int(0, 60));
    j["time_limit"] = number(job.limit_min);
    j["start_time"] = number(job.start);
    j["end_time"] = number(job.start > 0 ? job.start + job.limit_min * 60 : 0);
    j["state_reason"] = job.reason;
    j["cpus"] = number(cpus_total);
    j["node_count"] = number(job.nodes);
    j["tasks"] = number(job.nodes);
    j["memory_per_cpu"] = unset_number();
    j["memory_per_node"] = number(mem_node);
    j["tres_per_job"] = "";
    j["tres_per_node"] = "gres/gpu:" + std::to_string(job.gpus_per_node);
    const std::string tres = "cpu=" + std::to_string(cpus_total) + ",mem=" + std::to_string(mem_node * job.nodes) +
                             "M,node=" + std::to_string(job.nodes) + ",billing=" + std::to_string(cpus_total) +
                             ",gres/gpu=" + std::to_string(gpus_total);
    j["tres_req_str"] = tres;
    j["submit_line"] = "sbatch --nodes " + std::to_string(job.nodes) + " --gpus-per-node " +
                       std::to_string(job.gpus_per_node) + " --time " + std::to_string(job.limit_min) +
                       " --partition " + part + " " + kJobNames[job.name] + ".sh";
    j["command"] = "/home/" + user + "/jobs/" + kJobNames[job.name] + ".sh";
    j["current_working_directory"] = "/home/" + user;
    j["stdout_expanded"] = "/home/" + user + "/slurm-" + std::to_string(id) + ".out";
    if (job.running) {
      std::vector<std::string> job_nodes;
      for (int n : job.node_ids) job_nodes.push_back(names[n]);
      const std::string hostlist = format_hostlist(job_nodes);
      j["nodes"] = hostlist;
      j["batch_host"] = job_nodes.front();
      j["tres_alloc_str"] = tres;
      json detail = json::array();
      json allocation = json::array();
      for (std::size_t k = 0; k < job.node_ids.size(); ++k) {
        detail.push_back("gpu:h100:" + std::to_string(job.gpus_per_node) +
                         "(IDX:" + index_range(job.gpu_first[k], job.gpus_per_node) + ")");
        json a = alloc_template;
        const int first_cpu = job.cpu_first[k];
        const int ncpu = job.gpus_per_node * cpus_per_gpu;
        a["index"] = k;
        a["name"] = job_nodes[k];
        a["cpus"]["count"] = ncpu;
        a["memory"]["allocated"] = mem_node;
        int core = 0;
        for (json& socket : a["sockets"]) {
          for (json& c : socket["cores"]) {
            c["status"] = json::array({core >= first_cpu && core < first_cpu + ncpu ? "ALLOCATED" : "UNALLOCATED"});
            ++core;
          }
        }
        allocation.push_back(std::move(a));
      }
      j["gres_detail"] = std::move(detail);
      j["job_resources"]["nodes"]["count"] = job.nodes;
      j["job_resources"]["nodes"]["list"] = hostlist;
      j["job_resources"]["nodes"]["allocation"] = std::move(allocation);
      j["job_resources"]["cpus"] = cpus_total;
      ++g.running;
    } else {
      ++g.pending;
    }
    job_reply.add(j);
  }
  g.jobs = job_reply.finish(running_doc);

  // ---- diag (a small sdiag in v0.0.44 shape)
  json diag = json::object();
  diag["statistics"] = {{"parts_packed", 1},
                        {"req_time", number(kNow)},
                        {"req_time_start", number(kNow - 86400)},
                        {"server_thread_count", 3},
                        {"agent_queue_size", 0},
                        {"jobs_submitted", o.jobs},
                        {"jobs_started", g.running},
                        {"jobs_completed", 0},
                        {"jobs_pending", g.pending},
                        {"jobs_running", g.running},
                        {"schedule_cycle_last", 183000},
                        {"schedule_cycle_max", 950000},
                        {"bf_active", false},
                        {"bf_cycle_last", 5400000},
                        {"bf_last_backfilled_jobs", 12},
                        {"bf_when_last_cycle", number(kNow - 20)}};
  diag["meta"] = running_doc["meta"];
  diag["errors"] = json::array();
  diag["warnings"] = json::array();
  g.diag = o.compact ? diag.dump() : diag.dump(2);
  return g;
}

// ---- Measuring --------------------------------------------------------------------------------------------------

/// Seconds of one phase over the repeats.
struct Samples {
  std::vector<double> s;
  void add(double v) { s.push_back(v); }
  [[nodiscard]] double min() const { return s.empty() ? 0 : *std::min_element(s.begin(), s.end()); }
  [[nodiscard]] double median() const {
    if (s.empty()) return 0;
    std::vector<double> v = s;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};

/// Checks the mirrored running jobs against the nodes: GPUs per node summed over the running jobs (their totals
/// spread evenly, as slurmrestd gives per-job totals) never above the node's GPUs, and equal to its gres_used.
void check_allocation(const Mirror& mirror) {
  std::vector<std::uint64_t> used(mirror.nodes().size(), 0);
  std::size_t running = 0;
  for (const MirrorJob& mj : mirror.jobs()) {
    if (!mj.listed || mj.record.state != "RUNNING") continue;
    ++running;
    const std::vector<NodeIndex> nodes = mirror.nodes_of(mj.record.nodes);
    for (NodeIndex n : nodes) used[n] += mj.record.gpus / std::max<std::size_t>(nodes.size(), 1);
  }
  std::size_t over = 0, mismatch = 0;
  for (NodeIndex n = 0; n < used.size(); ++n) {
    over += used[n] > mirror.nodes()[n].gpus ? 1 : 0;
    mismatch += used[n] != mirror.nodes()[n].alloc_gpus ? 1 : 0;
  }
  std::printf(
      "mirrored running jobs: %zu; nodes over-committed: %zu; nodes whose gres_used differs from their jobs: "
      "%zu\n",
      running, over, mismatch);
}

double mb(std::size_t bytes) {
  return static_cast<double>(bytes) / 1e6;
}

}  // namespace

int run(const Options& o);

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twin_bench: %s\n", e.what());
    return 1;
  }
}

int run(const Options& o) {
  std::printf("twin_bench: %d nodes x %d GPUs, %d jobs, %d polls, %s JSON\n", o.nodes, o.gpus_per_node, o.jobs,
              o.repeat, o.compact ? "compact" : "pretty (2-space, as slurmrestd)");
  const auto gen_start = Clock::now();
  Generated g = generate(o);
  std::printf(
      "generated in %.1f s: %d running (%d multi-node, %d downsized to fit, %d made pending), %d pending; "
      "GPUs %llu of %llu allocated (%.1f%%); %d nodes out of service\n",
      seconds_since(gen_start), g.running, g.multi_node_running, g.downsized, g.demoted, g.pending,
      static_cast<unsigned long long>(g.gpus_used), static_cast<unsigned long long>(g.gpus_total),
      100.0 * static_cast<double>(g.gpus_used) / static_cast<double>(std::max<std::uint64_t>(g.gpus_total, 1)),
      g.out_of_service);
  std::printf(
      "replies: jobs %.1f MB (%.2f KB/job), nodes %.1f MB (%.2f KB/node), partitions %.3f MB, "
      "openapi/v3 %.1f MB\n",
      mb(g.jobs.size()), static_cast<double>(g.jobs.size()) / 1e3 / std::max(o.jobs, 1), mb(g.nodes.size()),
      static_cast<double>(g.nodes.size()) / 1e3 / o.nodes, mb(g.partitions.size()), mb(g.spec.size()));
  const std::size_t served_bytes = g.jobs.size() + g.nodes.size() + g.partitions.size() + g.spec.size();
  const std::size_t spec_bytes = g.spec.size();
  if (!o.dump.empty()) {
    std::filesystem::create_directories(o.dump);
    for (const auto& [name, text] : {std::pair<const char*, const std::string*>{"nodes.json", &g.nodes},
                                     {"jobs.json", &g.jobs},
                                     {"partitions.json", &g.partitions},
                                     {"diag.json", &g.diag}}) {
      std::ofstream(std::filesystem::path(o.dump) / name, std::ios::binary) << *text;
    }
    std::printf("replies written to %s\n", o.dump.c_str());
  }

  testing::FakeSlurmrestd server;
  const std::string api = "/slurm/v0.0.44/";
  server.serve("GET", "/openapi/v3", testing::FakeReply::json(std::move(g.spec)));
  server.serve("GET", api + "ping", testing::FakeReply::json(std::move(g.ping)));
  server.serve("GET", api + "diag", testing::FakeReply::json(std::move(g.diag)));
  server.serve("GET", api + "nodes", testing::FakeReply::json(std::move(g.nodes)));
  server.serve("GET", api + "partitions", testing::FakeReply::json(std::move(g.partitions)));
  server.serve("GET", api + "jobs", testing::FakeReply::json(std::move(g.jobs)));

  const double rss_served = proc_status_mb("VmRSS");
  const double peak_generation = peak_rss_mb();
  const bool peak_reset = reset_peak_rss();

  ClientOptions client_options;
  client_options.url = server.url();
  client_options.user = "root";
  client_options.token = "bench-token";
  client_options.timeout_s = 600;
  SlurmrestdClient client(client_options);
  auto t = Clock::now();
  client.connect();
  const double connect_s = seconds_since(t);
  std::printf("connect (GET /openapi/v3, %.1f MB spec): %.3f s -> %s\n", mb(spec_bytes), connect_s,
              api_version_name(client.version()));

  std::filesystem::path out_dir = o.out;
  if (out_dir.empty()) out_dir = std::filesystem::temp_directory_path() / ("twin_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(out_dir);

  Mirror mirror;
  TwinLog log;
  Scenario slurm_policy;  // the defaults: policy slurm
  Scenario fcfs_policy;
  fcfs_policy.scheduler.policy = SchedulerPolicy::kFcfs;
  ForecastOptions forecast_options;
  forecast_options.predictor = RuntimePredictor::kUserRecent;
  forecast_options.horizon_s = static_cast<std::int64_t>(o.horizon_h * 3600);
  TwinInfo info{server.url(), api_version_name(client.version()), "recent", "", false, 0};

  Samples diag_s, nodes_s, parts_s, jobs_s, apply_s, mirror_s, slurm_s, fcfs_s, write_s, get_s, parse_s;
  std::vector<double> peak_after;
  for (int r = 0; r < o.repeat; ++r) {
    if (r > 0 && o.interval_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    const auto poll_start = Clock::now();
    t = Clock::now();
    const RestDiag diag = client.diag();
    diag_s.add(seconds_since(t));
    t = Clock::now();
    std::vector<RestNode> nodes = client.nodes();
    nodes_s.add(seconds_since(t));
    t = Clock::now();
    std::vector<RestPartition> partitions = client.partitions();
    parts_s.add(seconds_since(t));
    t = Clock::now();
    std::vector<RestJob> jobs = client.jobs();
    jobs_s.add(seconds_since(t));
    const std::size_t listed_nodes = nodes.size(), listed_jobs = jobs.size();
    t = Clock::now();
    const PollChanges changes = mirror.apply(
        Snapshot{diag.server_time + r * kPollInterval, std::move(nodes), std::move(partitions), std::move(jobs)});
    apply_s.add(seconds_since(t));
    mirror_s.add(seconds_since(poll_start));
    const double fetch_s = diag_s.s.back() + nodes_s.s.back() + parts_s.s.back() + jobs_s.s.back();

    Forecast f;
    if (o.forecast) {
      t = Clock::now();
      f = forecast(mirror, g.history, slurm_policy, forecast_options);
      slurm_s.add(seconds_since(t));
    }
    if (r == 0) {
      for (int k = o.log_polls - 1; k >= 1; --k) {
        Forecast earlier = f;
        earlier.made_at -= k * kPollInterval;
        for (JobForecast& jf : earlier.jobs) jf.made_at = earlier.made_at;
        log.add(earlier);
      }
    }
    log.add(f);
    if (r == 0) check_allocation(mirror);
    std::size_t predicted = 0;
    std::int64_t last_start = f.made_at;
    for (const JobForecast& jf : f.jobs) {
      predicted += jf.predicted_start >= 0 ? 1 : 0;
      last_start = std::max(last_start, jf.predicted_start);
    }
    double fcfs_wall = 0;
    std::size_t fcfs_predicted = 0;
    if (o.fcfs) {
      t = Clock::now();
      const Forecast ff = forecast(mirror, g.history, fcfs_policy, forecast_options);
      fcfs_wall = seconds_since(t);
      fcfs_s.add(fcfs_wall);
      for (const JobForecast& jf : ff.jobs) fcfs_predicted += jf.predicted_start >= 0 ? 1 : 0;
    }

    PollRecord poll;
    poll.time = mirror.now();
    poll.fetch_s = fetch_s;
    poll.mirror_s = apply_s.s.back();
    poll.forecast_s = f.wall_s;
    poll.write_s = r > 0 ? write_s.s.back() : 0;
    poll.nodes = listed_nodes;
    poll.jobs = listed_jobs;
    poll.running = f.running;
    poll.pending = f.jobs.size();
    log.polls.push_back(poll);
    t = Clock::now();
    write_twin_results(out_dir, mirror, log, info);
    write_s.add(seconds_since(t));
    peak_after.push_back(peak_rss_mb());

    // Where the jobs fetch goes: the transfer (with the client's reply check) versus parse_jobs.
    std::size_t parsed = 0;
    if (o.breakdown) {
      t = Clock::now();
      RestResponse response = client.request("GET", client.slurm_path("jobs"));
      get_s.add(seconds_since(t));
      t = Clock::now();
      parsed = parse_jobs(response.body, response.endpoint).size();
      parse_s.add(seconds_since(t));
    }

    char fcfs_text[96] = "";
    if (o.fcfs) std::snprintf(fcfs_text, sizeof fcfs_text, ", fcfs %.3f s (%zu started)", fcfs_wall, fcfs_predicted);
    std::printf(
        "poll %d: mirror %.3f s (diag %.3f, nodes %.3f, partitions %.3f, jobs %.3f, apply %.3f; %u new, "
        "%u changed jobs); forecast slurm %.3f s (%zu pending, %zu started within the horizon, the last at "
        "+%.1f h, %llu running)%s; write %.3f s; jobs parsed again %zu; peak RSS %.0f MB\n",
        r + 1, mirror_s.s.back(), diag_s.s.back(), nodes_s.s.back(), parts_s.s.back(), jobs_s.s.back(),
        apply_s.s.back(), changes.jobs_new, changes.jobs_changed, f.wall_s, f.jobs.size(), predicted,
        static_cast<double>(last_start - f.made_at) / 3600.0, static_cast<unsigned long long>(f.running), fcfs_text,
        write_s.s.back(), parsed, peak_after.back());
    std::fflush(stdout);
  }

  const double jobs_n = std::max(o.jobs, 1);
  const auto row = [&](const char* name, const Samples& s, double per) {
    if (s.s.empty()) return;
    std::printf("%-34s %9.3f %9.3f %12.2f\n", name, s.min(), s.median(), s.median() / per * 1e6);
  };
  std::printf("\n%-34s %9s %9s %12s\n", "phase (seconds)", "min", "median", "us/job (med)");
  row("GET diag", diag_s, jobs_n);
  row("GET+parse nodes", nodes_s, jobs_n);
  row("GET+parse partitions", parts_s, jobs_n);
  // The first poll allocates everything for the first time and sees every job as new; later ones are the steady
  // state of a twin that keeps running.
  const auto later_of = [](const Samples& s) {
    Samples later;
    later.s.assign(s.s.begin() + (s.s.size() > 1 ? 1 : 0), s.s.end());
    return later;
  };
  const auto split = [&](const Samples& s) {
    if (o.repeat < 2) return;
    std::printf("%-34s %9.3f %9s %12.2f\n", "  first poll", s.s.front(), "", s.s.front() / jobs_n * 1e6);
    row("  later polls", later_of(s), jobs_n);
  };
  row("GET+parse jobs", jobs_s, jobs_n);
  split(jobs_s);
  row("  GET + reply check (again)", get_s, jobs_n);
  row("  parse_jobs (again)", parse_s, jobs_n);
  row("Mirror::apply", apply_s, jobs_n);
  split(apply_s);
  row("mirror = fetch+parse+apply", mirror_s, jobs_n);
  split(mirror_s);
  row("forecast slurm (recent)", slurm_s, jobs_n);
  row("forecast fcfs (recent)", fcfs_s, jobs_n);
  row("write_twin_results", write_s, jobs_n);
  const double steady = later_of(mirror_s).median();
  std::printf(
      "\ntargets: mirror %.3f s median, %.3f s median of the later polls (< 2 s: %s), forecast %.3f s median "
      "(< 5 s: %s)\n",
      mirror_s.median(), steady, steady < 2 ? "met" : "MISSED", slurm_s.median(),
      !o.forecast            ? "not run"
      : slurm_s.median() < 5 ? "met"
                             : "MISSED");
  std::printf(
      "memory: peak RSS %.0f MB (getrusage); %.0f MB while generating; %.0f MB resident once the replies "
      "(%.0f MB) were served; peak since then %.0f MB%s\n",
      peak_rss_mb(), peak_generation, rss_served, mb(served_bytes), proc_status_mb("VmHWM"),
      peak_reset ? " (VmHWM reset after generation)" : " (VmHWM could not be reset)");
  std::printf("results folder: %s%s\n", out_dir.string().c_str(), o.out.empty() ? " (removed; --out keeps it)" : "");
  if (o.out.empty()) std::filesystem::remove_all(out_dir);
  return 0;
}
