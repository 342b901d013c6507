// Job history readers; see sacct.hpp for what each record becomes. Both readers fill the same intermediate record
// (what accounting says), and one conversion turns records into jobs, so the three formats agree by construction.
#include "model/sacct.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "model/errors.hpp"
#include "model/input_file.hpp"
#include "model/input_limits.hpp"
#include "model/scenario.hpp"
#include "model/text.hpp"

namespace gputwin {
namespace {

using nlohmann::json;

constexpr std::int64_t kUnknown = -1;
/// The columns to ask sacct for (README, sacct.hpp).
constexpr std::string_view kSacctFormat =
    "JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,NNodes,"
    "NCPUS,ReqTRES,AllocTRES,NodeList";
/// NO_VAL (0xfffffffe) and INFINITE (0xffffffff) as slurmdb stores them in 32-bit fields.
constexpr std::int64_t kNoVal32 = 0xfffffffeLL;

// ---- text helpers -------------------------------------------------------------------------------------------------

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename T>
bool parse_int(std::string_view s, T& out) {
  s = trim(s);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto at = s.find(sep, pos);
    out.emplace_back(s.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (at == std::string_view::npos) break;
    pos = at + 1;
  }
  return out;
}

std::string squote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

/// A number with an optional K/M/G/T/P suffix (powers of 1024, as Slurm's convert_num_unit prints them) in units of
/// 1024^base_power: memory is read in MB (base 2: "64G" -> 65536, "512" -> 512), counts in ones (base 0:
/// "1.5K" -> 1536). Rounded up; false if malformed or above 2^53.
bool parse_scaled(std::string_view s, int base_power, std::int64_t& out) {
  s = trim(s);
  if (s.empty()) return false;
  int power = base_power;
  const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (std::isalpha(static_cast<unsigned char>(unit))) {
    const char* units = "KMGTP";
    const char* at = std::strchr(units, unit);
    if (at == nullptr) return false;
    power = static_cast<int>(at - units) + 1;
    s.remove_suffix(1);
  }
  const std::string number(s);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(v >= 0)) return false;
  const double scaled = std::ceil(v * std::pow(1024.0, power - base_power) - 1e-9);
  // Beyond 2^53 no count or size is a real job's, and beyond 2^63 the conversion is undefined: malformed.
  if (!(scaled <= 9'007'199'254'740'992.0)) return false;
  out = static_cast<std::int64_t>(scaled);
  return true;
}

bool parse_mem_mb(std::string_view s, std::int64_t& mb) {
  return parse_scaled(s, 2, mb);
}
bool parse_count(std::string_view s, std::int64_t& n) {
  return parse_scaled(s, 0, n);
}

// ---- the intermediate record ---------------------------------------------------------------------------------------

/// Trackable resources of one job (-1 where absent).
struct Tres {
  std::int64_t cpu = kUnknown;
  std::int64_t mem_mb = kUnknown;
  std::int64_t node = kUnknown;
  std::int64_t gpu = kUnknown;  // untyped gres/gpu if given, else the sum of typed ones
  std::int64_t typed_gpu = kUnknown;

  [[nodiscard]] bool any() const { return cpu >= 0 || mem_mb >= 0 || node >= 0 || gpus() >= 0; }
  [[nodiscard]] std::int64_t gpus() const { return gpu >= 0 ? gpu : typed_gpu; }
  void add_gpu(const std::string& name, std::int64_t count) {  // name: "gpu" or "gpu:h100"
    if (name == "gpu") {
      gpu = count;
    } else {
      typed_gpu = std::max<std::int64_t>(typed_gpu, 0) + count;
    }
  }
};

/// What accounting says about one job record, before any decision.
struct Record {
  std::uint64_t line = 0;  // text: 1-based line
  std::string pointer;     // JSON: /jobs/N
  std::uint64_t id = 0;
  bool needs_id = false;  // array task without its own job id: gets a fresh one
  std::string name, user, account, partition, qos, state;
  std::int64_t submit = kUnknown, eligible = kUnknown, start = kUnknown, end = kUnknown, elapsed = kUnknown;
  std::int64_t time_limit_s = kNoTimeLimit;
  bool none_assigned = false;  // NodeList "None assigned": never got nodes
  Tres alloc, req;
  std::int64_t nnodes = kUnknown, ncpus = kUnknown, req_nodes = kUnknown, req_mem_per_node_mb = kUnknown;
  std::uint64_t array_job_id = 0;
  std::int32_t array_task_id = -1;
  std::vector<std::int32_t> pending_tasks;  // "123_[5-9%2]": the array's tasks not yet started
  std::uint32_t array_throttle = 0;
  std::string dependency;
  std::int32_t nice = 0;
  std::string submit_line;
};

[[noreturn]] void fail_at(const std::string& file, const Record& r, const std::string& problem) {
  if (r.pointer.empty()) throw TraceError(file, r.line, problem);
  throw TraceError(file, 0, r.pointer + ": " + problem);
}

enum class Disposition : std::uint8_t { kEnded, kRunning, kPending, kRevoked };

struct StateInfo {
  Disposition disposition;
  JobState outcome;
};

/// Base state of "CANCELLED by 0", "COMPLETED+", "NODE_FAIL"; nullopt if unknown.
std::optional<StateInfo> classify_state(std::string_view text) {
  text = trim(text);
  if (const auto space = text.find(' '); space != std::string_view::npos) text = text.substr(0, space);
  while (!text.empty() && text.back() == '+') text.remove_suffix(1);
  const std::string s = upper(text);
  if (s == "BOOT_FAIL") return StateInfo{Disposition::kEnded, JobState::kNodeFail};
  if (s == "DEADLINE") return StateInfo{Disposition::kEnded, JobState::kCancelled};
  if (s == "SPECIAL_EXIT") return StateInfo{Disposition::kEnded, JobState::kFailed};
  if (s == "RUNNING" || s == "SUSPENDED" || s == "COMPLETING" || s == "STAGE_OUT" || s == "SIGNALING" ||
      s == "RESIZING" || s == "STOPPED" || s == "CONFIGURING" || s == "POWER_UP_NODE")
    return StateInfo{Disposition::kRunning, JobState::kCompleted};
  if (s == "PENDING" || s == "REQUEUED" || s == "REQUEUE_HOLD" || s == "REQUEUE_FED" || s == "RESV_DEL_HOLD")
    return StateInfo{Disposition::kPending, JobState::kCompleted};
  if (s == "REVOKED") return StateInfo{Disposition::kRevoked, JobState::kCancelled};
  if (const auto state = parse_job_state(s)) return StateInfo{Disposition::kEnded, *state};
  return std::nullopt;
}

/// GPUs a submit line asks for, given the job's node count: --gpus/-G (total), --gpus-per-node, --gres=gpu:...,
/// --gpus-per-task x --ntasks, --gpus-per-socket x --sockets-per-node. -1 when it names none.
std::int64_t gpus_in_submit_line(const std::string& line, std::int64_t nodes) {
  std::vector<std::string> tokens;
  std::istringstream in(line);
  for (std::string t; in >> t;) tokens.push_back(t);
  auto gpu_count = [](const std::string& value, bool gres_syntax) {  // "4", "h100:1,h200:1", "gpu:h100:4"
    std::int64_t total = 0;
    bool any = false;
    for (const std::string& item : split(value, ',')) {
      std::vector<std::string> parts = split(item, ':');
      if (gres_syntax) {
        if (lower(parts[0]) != "gpu") continue;
        parts.erase(parts.begin());
      }
      std::int64_t n = 1;
      if (!parts.empty() && !parse_int(parts.back(), n)) n = 1;
      total += n;
      any = true;
    }
    return any ? total : -1;
  };
  std::int64_t per_node = -1, total = -1, per_task = -1, per_socket = -1, ntasks = 1, sockets = 1;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string opt = tokens[i], value;
    if (const auto eq = opt.find('='); eq != std::string::npos && opt.rfind("--", 0) == 0) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    } else if (i + 1 < tokens.size()) {
      value = tokens[i + 1];
    }
    if (opt == "--gpus" || opt == "-G") total = gpu_count(value, false);
    if (opt == "--gpus-per-node") per_node = gpu_count(value, false);
    if (opt == "--gres") per_node = gpu_count(value, true);
    if (opt == "--gpus-per-task") per_task = gpu_count(value, false);
    if (opt == "--gpus-per-socket") per_socket = gpu_count(value, false);
    if (opt == "--ntasks" || opt == "-n") parse_int(value, ntasks);
    if (opt == "--sockets-per-node") parse_int(value, sockets);
  }
  nodes = std::max<std::int64_t>(nodes, 1);
  if (per_node >= 0) return per_node * nodes;
  if (per_socket >= 0) return per_socket * sockets * nodes;
  if (total >= 0) return total;
  if (per_task >= 0) return per_task * ntasks;
  return -1;
}

/// Turns records into jobs (see sacct.hpp for the rules).
SacctImport convert(std::vector<Record>& records, const std::string& file, const SacctImportOptions& options,
                    SacctImport result) {
  // An array's throttle from any of its records; the last record of each job id wins (sacct -D prints earlier
  // runs of a requeued job first).
  std::unordered_map<std::uint64_t, std::uint32_t> throttle;
  std::unordered_map<std::uint64_t, std::size_t> last_of_id;
  std::uint64_t max_id = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.array_job_id != 0 && r.array_throttle > 0) throttle[r.array_job_id] = r.array_throttle;
    if (!r.needs_id) {
      last_of_id[r.id] = i;
      max_id = std::max(max_id, r.id);
    }
    max_id = std::max(max_id, r.array_job_id);
  }
  auto skip = [&](const std::string& reason) { ++result.skipped[reason]; };

  struct Draft {
    JobSpec job;
    bool needs_id;
  };
  std::vector<Draft> drafts;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& base = records[i];
    if (!base.needs_id && last_of_id[base.id] != i) {
      skip("earlier record of the same job id (requeued run)");
      continue;
    }
    std::vector<Record> expanded;
    if (!base.pending_tasks.empty()) {
      for (std::int32_t task : base.pending_tasks) {
        Record t = base;
        t.pending_tasks.clear();
        t.array_task_id = task;
        t.needs_id = true;
        t.start = t.end = t.elapsed = kUnknown;
        expanded.push_back(std::move(t));
      }
    } else {
      expanded.push_back(base);
    }
    for (const Record& r : expanded) {
      const auto info = classify_state(r.state);
      if (!info) fail_at(file, r, "State: " + squote(r.state) + " is not a Slurm job state");
      const bool started = r.start > 0 && !r.none_assigned && info->disposition != Disposition::kPending;
      JobSpec job;
      job.outcome = info->outcome;
      switch (info->disposition) {
        case Disposition::kRevoked:
          skip("revoked (federated job that ran on another cluster)");
          continue;
        case Disposition::kEnded:
          if (!started) {
            if (info->outcome == JobState::kCancelled) {
              if (!options.keep_cancelled_before_start) {
                skip("cancelled before it started");
                continue;
              }
              job.run_time_s = 0;
            } else {
              skip("ended (" + std::string(job_state_name(info->outcome)) + ") without starting");
              continue;
            }
          } else {
            std::int64_t run = r.elapsed;
            if (run < 0) run = r.end > 0 ? std::max<std::int64_t>(0, r.end - r.start) : 0;
            if (info->outcome == JobState::kTimeout && r.time_limit_s >= 0) run = std::max(run, r.time_limit_s + 1);
            job.run_time_s = run;
          }
          break;
        case Disposition::kRunning:
          if (!started) {
            fail_at(file, r, "State " + squote(r.state) + " but no start time");
          }
          if (!options.keep_running) {
            skip("still running when the history was taken");
            continue;
          }
          job.run_time_s = std::max<std::int64_t>(r.time_limit_s, r.elapsed >= 0 ? r.elapsed : 0);
          job.outcome = JobState::kCompleted;
          break;
        case Disposition::kPending:
          if (!options.keep_pending) {
            skip("still pending when the history was taken");
            continue;
          }
          if (r.time_limit_s < 0) {
            skip("still pending, with no time limit to stand for its run time");
            continue;
          }
          job.run_time_s = r.time_limit_s;
          job.outcome = JobState::kCompleted;
          break;
      }
      if (r.submit < 0) fail_at(file, r, "Submit: no submit time");

      // Shape: allocated if it started, else requested.
      const Tres& t = started && r.alloc.any() ? r.alloc : (r.req.any() ? r.req : r.alloc);
      std::int64_t node_count = t.node > 0 ? t.node : (r.nnodes > 0 ? r.nnodes : 1);
      std::int64_t gpus = t.gpus();
      if (gpus < 0 && options.gpus_from_submit_line && !r.submit_line.empty()) {
        gpus = gpus_in_submit_line(r.submit_line, node_count);
        if (gpus > 0) ++result.gpus_from_submit_line;
      }
      const std::int64_t cpus = t.cpu > 0 ? t.cpu : (r.ncpus > 0 ? r.ncpus : 1);
      job.cpus = static_cast<std::uint32_t>(std::min<std::int64_t>(cpus, std::numeric_limits<std::uint32_t>::max()));
      if (gpus > 0) {
        job.nodes = static_cast<std::uint32_t>(node_count);
        job.gpus_per_node = static_cast<std::uint32_t>((gpus + node_count - 1) / node_count);
      } else {
        const std::int64_t asked = r.req.node > 0 ? r.req.node : r.req_nodes;
        job.nodes = asked > 1 ? static_cast<std::uint32_t>(asked) : 0;
        if (job.nodes > 0) node_count = job.nodes;
      }
      if (t.mem_mb > 0) {
        job.mem_per_node_mb = static_cast<std::uint64_t>((t.mem_mb + node_count - 1) / node_count);
      } else if (r.req_mem_per_node_mb > 0) {
        job.mem_per_node_mb = static_cast<std::uint64_t>(r.req_mem_per_node_mb);
      }

      job.id = r.id;
      job.name = r.name;
      job.user = r.user;
      job.account = r.account;
      job.partition = r.partition.substr(0, r.partition.find(','));  // pending in several partitions: the first
      job.qos = r.qos;
      job.submit_s = r.submit;
      job.time_limit_s = r.time_limit_s;
      job.nice = r.nice;
      job.dependency = r.dependency;
      job.observed_start_s = started ? r.start : -1;
      if (options.eligible_as_begin && r.eligible > r.submit) job.begin_s = r.eligible;
      job.array_job_id = r.array_job_id;
      job.array_task_id = r.array_task_id;
      if (r.array_job_id != 0) {
        auto it = throttle.find(r.array_job_id);
        if (it != throttle.end()) job.array_max_running = it->second;
      }
      if (drafts.size() == kMaxJobs)
        fail_at(file, r, "more than " + std::to_string(kMaxJobs) + " jobs (an input bound)");
      drafts.push_back({std::move(job), r.needs_id});
    }
  }

  // Epoch and ids.
  std::int64_t epoch = options.epoch_unix_s;
  if (epoch < 0) {
    epoch = drafts.empty() ? 0 : std::numeric_limits<std::int64_t>::max();
    for (const Draft& d : drafts) epoch = std::min(epoch, d.job.submit_s);
  }
  result.epoch_unix_s = epoch;
  for (Draft& d : drafts) {
    JobSpec& j = d.job;
    j.submit_s -= epoch;
    if (j.observed_start_s >= 0) j.observed_start_s -= epoch;
    if (j.begin_s >= 0) j.begin_s -= epoch;
    if (d.needs_id) {
      j.id = ++max_id;
      ++result.synthesized_ids;
    }
    result.jobs.push_back(std::move(j));
  }
  return result;
}

// ---- sacct -P -----------------------------------------------------------------------------------------------------

/// Parses "123", "123_4", "123_[5-9%2]", "123+0" into `r`; returns false for steps ("123.batch") and sets
/// `het_component` for "123+1".
bool parse_job_id(const std::string& text, Record& r, bool& het_component, const std::string& file) {
  het_component = false;
  std::string id(trim(text));
  if (id.find('.') != std::string::npos) return false;  // a step
  if (const auto plus = id.find('+'); plus != std::string::npos) {
    std::uint32_t offset = 0;
    if (!parse_int(std::string_view(id).substr(plus + 1), offset)) {
      fail_at(file, r, "JobID: " + squote(text) + " is not a job id");
    }
    het_component = offset > 0;
    id.resize(plus);
  }
  const auto underscore = id.find('_');
  if (!parse_int(std::string_view(id).substr(0, underscore), r.id) || r.id == 0) {
    fail_at(file, r, "JobID: " + squote(text) + " is not a job id (123, 123_4, 123_[5-9%2] or a step)");
  }
  if (underscore == std::string::npos) return true;
  std::string_view task = std::string_view(id).substr(underscore + 1);
  r.array_job_id = r.id;
  r.needs_id = true;
  if (!task.empty() && task.front() == '[') {
    if (task.back() != ']') fail_at(file, r, "JobID: " + squote(text) + ": unbalanced '['");
    task = task.substr(1, task.size() - 2);
    std::uint32_t max_running = 0;
    if (!parse_array_spec(task, r.pending_tasks, max_running)) {
      fail_at(file, r, "JobID: " + squote(text) + ": bad array task list");
    }
    r.array_throttle = max_running;
    return true;
  }
  if (!parse_int(task, r.array_task_id) || r.array_task_id < 0) {
    fail_at(file, r, "JobID: " + squote(text) + ": bad array task id");
  }
  return true;
}

/// Parses "billing=8,cpu=8,gres/gpu=8,mem=64G,node=1" (ReqTRES/AllocTRES).
Tres parse_tres_text(const std::string& text, const std::string& column, const std::string& file, const Record& r) {
  Tres t;
  for (const std::string& raw : split(text, ',')) {
    const std::string item(trim(raw));
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) fail_at(file, r, column + ": " + squote(item) + " is not TRES=count");
    const std::string key = lower(item.substr(0, eq));
    const std::string value = item.substr(eq + 1);
    std::int64_t n = 0;
    auto count = [&]() {
      if (!(key == "mem" ? parse_mem_mb(value, n) : parse_count(value, n)))
        fail_at(file, r, column + ": " + squote(item) + " has a bad count");
      return n;
    };
    if (key == "cpu") {
      t.cpu = count();
    } else if (key == "node") {
      t.node = count();
    } else if (key == "mem") {
      t.mem_mb = count();
    } else if (key.rfind("gres/gpu", 0) == 0) {
      const std::string name = key.substr(5);  // "gpu" or "gpu:h100"
      if (name == "gpu" || name.rfind("gpu:", 0) == 0) t.add_gpu(name, count());
    }
  }
  return t;
}

/// Submit/Start/End/Eligible: a time, or kUnknown for Unknown/None/empty.
std::int64_t parse_time_field(const std::string& value, const char* column, const std::string& file, const Record& r) {
  const std::string_view v = trim(value);
  if (v.empty() || v == "Unknown" || v == "None" || v == "N/A") return kUnknown;
  std::int64_t t = 0;
  if (!parse_sacct_time(v, t)) {
    fail_at(
        file, r,
        std::string(column) + ": " + squote(v) + " is not a time (YYYY-MM-DDTHH:MM:SS, Unix seconds, Unknown or None)");
  }
  return t;
}

/// Timelimit: "01:00:00", "1-00:00:00", "UNLIMITED", "Partition_Limit"; TimelimitRaw: minutes.
std::int64_t parse_limit_field(const std::string& value, const char* column, const std::string& file, const Record& r) {
  const std::string v(trim(value));
  const std::string u = upper(v);
  if (v.empty() || u == "UNLIMITED" || u == "PARTITION_LIMIT" || u == "INFINITE" || u == "NONE") return kNoTimeLimit;
  std::int64_t s = 0;
  if (!parse_slurm_time(v, s)) fail_at(file, r, std::string(column) + ": " + squote(v) + " is not a Slurm time");
  return s < 0 ? kNoTimeLimit : s;
}

/// ReqMem "4000M", "4000Mn" (per node), "2000Mc" (per CPU, older Slurm): MB per node, given the CPUs per node.
std::int64_t parse_req_mem(std::string value, std::int64_t cpus_per_node) {
  value = std::string(trim(value));
  if (value.empty()) return kUnknown;
  std::int64_t factor = 1;
  const char last = value.back();
  if (last == 'n' || last == 'N') {
    value.pop_back();
  } else if (last == 'c' || last == 'C') {
    value.pop_back();
    factor = std::max<std::int64_t>(cpus_per_node, 1);
  }
  std::int64_t mb = 0;
  if (!parse_mem_mb(value, mb)) return kUnknown;
  return mb * factor;
}

}  // namespace

std::string_view sacct_format_name(SacctFormat format) {
  switch (format) {
    case SacctFormat::kParsable:
      return "sacct";
    case SacctFormat::kJson:
      return "sacct-json";
    case SacctFormat::kSlurmdbJson:
      return "slurmdb-json";
  }
  return "unknown";
}

bool parse_sacct_format(std::string_view name, SacctFormat& out) {
  for (auto f : {SacctFormat::kParsable, SacctFormat::kJson, SacctFormat::kSlurmdbJson}) {
    if (sacct_format_name(f) == name) {
      out = f;
      return true;
    }
  }
  return false;
}

std::uint64_t SacctImport::skipped_total() const {
  std::uint64_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  return total;
}

bool parse_sacct_time(std::string_view text, std::int64_t& unix_s) {
  text = trim(text);
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return parse_int(text, unix_s);
  }
  // YYYY-MM-DDTHH:MM:SS (a space instead of T accepted)
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != ' ') ||
      text[13] != ':' || text[16] != ':') {
    return false;
  }
  std::int64_t y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!parse_int(text.substr(0, 4), y) || !parse_int(text.substr(5, 2), mo) || !parse_int(text.substr(8, 2), d) ||
      !parse_int(text.substr(11, 2), h) || !parse_int(text.substr(14, 2), mi) || !parse_int(text.substr(17, 2), s)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  unix_s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return true;
}

SacctImport parse_sacct_text(std::istream& in, const std::string& file_name, const SacctImportOptions& options) {
  SacctImport result;
  std::vector<Record> records;
  std::vector<std::string> header;
  std::unordered_map<std::string, std::size_t> col;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split(line, '|');
    if (header.empty()) {
      if (fields.size() > 1 && trim(fields.back()).empty()) fields.pop_back();  // sacct -p: trailing '|'
      for (std::size_t i = 0; i < fields.size(); ++i) {
        header.push_back(lower(trim(fields[i])));
        col[header.back()] = i;
      }
      for (const char* required : {"jobid", "submit", "state"}) {
        if (!col.count(required)) {
          throw TraceError(file_name, number,
                           std::string("the header line has no ") + required + " column (found " + line +
                               "; run sacct -P --format=" + std::string(kSacctFormat) + ")");
        }
      }
      continue;
    }
    if (fields.size() == header.size() + 1 && trim(fields.back()).empty()) fields.pop_back();
    Record r;
    r.line = number;
    if (fields.size() != header.size()) {
      fail_at(file_name, r,
              "expected " + std::to_string(header.size()) + " '|'-separated fields as in the header, found " +
                  std::to_string(fields.size()));
    }
    auto get = [&](const char* name) -> const std::string* {
      auto it = col.find(name);
      return it == col.end() ? nullptr : &fields[it->second];
    };
    bool het_component = false;
    if (!parse_job_id(*get("jobid"), r, het_component, file_name)) {
      ++result.steps;
      continue;
    }
    ++result.records;
    if (het_component) {
      ++result.skipped["heterogeneous job component after the first"];
      continue;
    }
    if (const std::string* raw = get("jobidraw"); raw != nullptr && r.pending_tasks.empty()) {
      std::uint64_t id = 0;
      const std::string v(trim(*raw));
      if (parse_int(std::string_view(v).substr(0, v.find_first_of("_+.")), id) && id > 0 &&
          v.find_first_of("_[") == std::string::npos) {
        r.id = id;
        r.needs_id = false;
      }
    }
    auto text = [&](const char* name, std::string& out) {
      if (const std::string* v = get(name)) out = std::string(trim(*v));
    };
    text("jobname", r.name);
    text("user", r.user);
    text("account", r.account);
    text("partition", r.partition);
    text("qos", r.qos);
    text("state", r.state);
    text("dependency", r.dependency);
    if (r.dependency == "(null)") r.dependency.clear();
    r.submit = parse_time_field(*get("submit"), "Submit", file_name, r);
    if (r.submit < 0) fail_at(file_name, r, "Submit: " + squote(*get("submit")) + ": every job has a submit time");
    if (const std::string* v = get("eligible")) r.eligible = parse_time_field(*v, "Eligible", file_name, r);
    if (const std::string* v = get("start")) r.start = parse_time_field(*v, "Start", file_name, r);
    if (const std::string* v = get("end")) r.end = parse_time_field(*v, "End", file_name, r);
    if (const std::string* v = get("elapsedraw"); v != nullptr && !trim(*v).empty()) {
      if (!parse_int(*v, r.elapsed)) fail_at(file_name, r, "ElapsedRaw: " + squote(*v) + " is not a number of seconds");
    } else if (const std::string* e = get("elapsed"); e != nullptr && !trim(*e).empty()) {
      if (!parse_slurm_time(trim(*e), r.elapsed) || r.elapsed < 0) {
        fail_at(file_name, r, "Elapsed: " + squote(*e) + " is not a duration ([D-]HH:MM:SS)");
      }
    }
    if (const std::string* v = get("timelimit")) {
      r.time_limit_s = parse_limit_field(*v, "Timelimit", file_name, r);
    } else if (const std::string* raw_limit = get("timelimitraw")) {
      const std::string v(trim(*raw_limit));
      std::int64_t minutes = 0;
      if (parse_int(v, minutes)) {
        r.time_limit_s = minutes * 60;
      } else {
        r.time_limit_s = parse_limit_field(v, "TimelimitRaw", file_name, r);
      }
    }
    if (const std::string* v = get("nodelist")) r.none_assigned = trim(*v) == "None assigned";
    if (const std::string* v = get("alloctres")) r.alloc = parse_tres_text(*v, "AllocTRES", file_name, r);
    if (const std::string* v = get("reqtres")) r.req = parse_tres_text(*v, "ReqTRES", file_name, r);
    auto count = [&](const char* name, std::int64_t& out) {
      const std::string* v = get(name);
      if (v == nullptr || trim(*v).empty()) return;
      std::string s(trim(*v));
      s = s.substr(0, s.find('-'));  // ReqNodes may print a range "2-4"
      if (!parse_count(s, out)) fail_at(file_name, r, std::string(name) + ": " + squote(*v) + " is not a count");
    };
    count("nnodes", r.nnodes);
    count("ncpus", r.ncpus);
    if (r.ncpus < 0) count("alloccpus", r.ncpus);
    if (r.ncpus <= 0) count("reqcpus", r.ncpus);
    count("reqnodes", r.req_nodes);
    if (const std::string* v = get("reqmem")) {
      const std::int64_t nodes = r.req_nodes > 0 ? r.req_nodes : (r.nnodes > 0 ? r.nnodes : 1);
      r.req_mem_per_node_mb = parse_req_mem(*v, r.ncpus > 0 ? (r.ncpus + nodes - 1) / nodes : 1);
    }
    if (const std::string* v = get("nice"); v != nullptr && !trim(*v).empty()) {
      if (!parse_int(*v, r.nice)) fail_at(file_name, r, "Nice: " + squote(*v) + " is not an integer");
    }
    records.push_back(std::move(r));
  }
  if (header.empty()) throw TraceError(file_name, 0, "empty file: expected sacct -P output with its header line");
  return convert(records, file_name, options, std::move(result));
}

// ---- JSON ---------------------------------------------------------------------------------------------------------

namespace {

constexpr std::int64_t kInfinite = std::numeric_limits<std::int64_t>::max();

class JsonReader {
 public:
  explicit JsonReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw TraceError(file_, 0, pointer + ": " + problem);
  }

  /// A number in any of slurmrestd's shapes: 5, 5.0, {"set":true,"infinite":false,"number":5}, null. nullopt when
  /// unset (or NO_VAL), kInfinite when infinite.
  std::optional<std::int64_t> number(const json& parent, const std::string& key, const std::string& pointer) const {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return std::nullopt;
    const std::string at = pointer + "/" + key;
    const json& v = *it;
    if (v.is_object()) {
      if (v.contains("infinite") && v["infinite"].is_boolean() && v["infinite"].get<bool>()) return kInfinite;
      if (v.contains("set") && v["set"].is_boolean() && !v["set"].get<bool>()) return std::nullopt;
      return number(v, "number", at);
    }
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u >= static_cast<std::uint64_t>(kNoVal32) && u <= 0xffffffffULL) return std::nullopt;  // NO_VAL, INFINITE
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
      return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number_float()) return static_cast<std::int64_t>(std::floor(v.get<double>()));
    fail(at, "expected a number");
  }

  std::string string(const json& parent, const std::string& key, const std::string& pointer) const {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return "";
    if (!it->is_string()) fail(pointer + "/" + key, "expected a string");
    return it->get<std::string>();
  }

  const json* object(const json& parent, const std::string& key, const std::string& pointer) const {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return nullptr;
    if (!it->is_object()) fail(pointer + "/" + key, "expected an object");
    return &*it;
  }

  /// tres.allocated / tres.requested: [{"type":"cpu","name":"","count":4}, {"type":"gres","name":"gpu","count":2}]
  Tres tres(const json& parent, const std::string& key, const std::string& pointer) const {
    Tres t;
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return t;
    const std::string at = pointer + "/" + key;
    if (!it->is_array()) fail(at, "expected an array of TRES");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      const std::string p = at + "/" + std::to_string(i);
      if (!e.is_object()) fail(p, "expected a TRES object");
      const std::string type = lower(string(e, "type", p));
      const std::string name = lower(string(e, "name", p));
      const std::optional<std::int64_t> count = number(e, "count", p);
      if (!count || *count < 0 || *count == kInfinite) continue;  // energy reports -2 when unknown
      if (type == "cpu") t.cpu = *count;
      if (type == "mem") t.mem_mb = *count;
      if (type == "node") t.node = *count;
      if (type == "gres" && (name == "gpu" || name.rfind("gpu:", 0) == 0)) t.add_gpu(name, *count);
    }
    return t;
  }

 private:
  const std::string& file_;
};

/// Unix time from a slurmdb time field: 0 and NO_VAL mean unknown.
std::int64_t json_time(const std::optional<std::int64_t>& v) {
  if (!v || *v <= 0 || *v >= kNoVal32) return kUnknown;
  return *v;
}

}  // namespace

SacctImport parse_sacct_json(const std::string& text, const std::string& file_name, const SacctImportOptions& options) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw TraceError(file_name, 0, "invalid JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  } catch (const json::out_of_range&) {
    throw TraceError(file_name, 0, "invalid JSON: a number too large for a double");  // 1e999, as in scenarios
  }
  const JsonReader rd(file_name);
  if (!doc.is_object()) rd.fail("", "expected an object with a \"jobs\" array");
  SacctImport result;
  if (const json* meta = rd.object(doc, "meta", "")) {
    if (const json* plugin = rd.object(*meta, "plugin", "/meta")) {
      std::string v = rd.string(*plugin, "data_parser", "/meta/plugin");
      if (v.empty()) v = rd.string(*plugin, "type", "/meta/plugin");
      if (const auto at = v.find("v0.0."); at != std::string::npos) v = v.substr(at);
      result.source_version = v;
    }
  }
  auto jobs_it = doc.find("jobs");
  if (jobs_it == doc.end() || !jobs_it->is_array()) {
    std::string errors;
    if (auto e = doc.find("errors"); e != doc.end() && e->is_array()) {
      for (const json& err : *e) {
        if (err.is_object())
          errors += (errors.empty() ? "" : "; ") + rd.string(err, "description", "/errors") + " " +
                    rd.string(err, "error", "/errors");
      }
    }
    rd.fail("/jobs", "missing job array" + (errors.empty() ? "" : " (slurmrestd reported: " + errors + ")"));
  }
  std::vector<Record> records;
  for (std::size_t i = 0; i < jobs_it->size(); ++i) {
    const json& j = (*jobs_it)[i];
    const std::string p = "/jobs/" + std::to_string(i);
    if (!j.is_object()) rd.fail(p, "expected a job object");
    Record r;
    r.pointer = p;
    ++result.records;
    const auto id = rd.number(j, "job_id", p);
    if (!id || *id <= 0 || *id == kInfinite) rd.fail(p + "/job_id", "expected a positive job id");
    r.id = static_cast<std::uint64_t>(*id);
    if (const json* het = rd.object(j, "het", p)) {
      const auto het_id = rd.number(*het, "job_id", p + "/het");
      const auto offset = rd.number(*het, "job_offset", p + "/het");
      if (het_id && *het_id > 0 && offset && *offset > 0 && *offset != kInfinite) {
        ++result.skipped["heterogeneous job component after the first"];
        continue;
      }
    }
    r.name = rd.string(j, "name", p);
    r.user = rd.string(j, "user", p);
    r.account = rd.string(j, "account", p);
    r.partition = rd.string(j, "partition", p);
    r.qos = rd.string(j, "qos", p);
    r.submit_line = rd.string(j, "submit_line", p);
    if (const json* assoc = rd.object(j, "association", p)) {
      if (r.user.empty()) r.user = rd.string(*assoc, "user", p + "/association");
      if (r.account.empty()) r.account = rd.string(*assoc, "account", p + "/association");
    }
    const json* time = rd.object(j, "time", p);
    if (time == nullptr && j.contains("submit_time")) {
      rd.fail(p,
              "this is slurmctld's queue (/slurm/v0.0.XX/jobs), not job history: use /slurmdb/v0.0.XX/jobs or "
              "sacct --json");
    }
    if (time == nullptr) rd.fail(p + "/time", "missing");
    const std::string tp = p + "/time";
    r.submit = json_time(rd.number(*time, "submission", tp));
    if (r.submit < 0) rd.fail(tp + "/submission", "expected a submit time");
    r.eligible = json_time(rd.number(*time, "eligible", tp));
    r.start = json_time(rd.number(*time, "start", tp));
    r.end = json_time(rd.number(*time, "end", tp));
    if (const auto e = rd.number(*time, "elapsed", tp); e && *e >= 0 && *e != kInfinite) r.elapsed = *e;
    if (const auto limit = rd.number(*time, "limit", tp); limit && *limit != kInfinite && *limit >= 0) {
      r.time_limit_s = *limit * 60;
    }
    // state.current: "COMPLETED" (v0.0.38) or ["COMPLETED"] (v0.0.39+); older sacct --json had "state" a string.
    auto state_it = j.find("state");
    if (state_it == j.end()) rd.fail(p + "/state", "missing");
    const json* current = &*state_it;
    if (state_it->is_object()) {
      auto c = state_it->find("current");
      if (c == state_it->end()) rd.fail(p + "/state/current", "missing");
      current = &*c;
    }
    if (current->is_string()) {
      r.state = current->get<std::string>();
    } else if (current->is_array() && !current->empty() && (*current)[0].is_string()) {
      r.state = (*current)[0].get<std::string>();
    } else {
      rd.fail(p + "/state/current", "expected a state name or a list of them");
    }
    r.none_assigned = rd.string(j, "nodes", p) == "None assigned";
    if (const json* tres = rd.object(j, "tres", p)) {
      r.alloc = rd.tres(*tres, "allocated", p + "/tres");
      r.req = rd.tres(*tres, "requested", p + "/tres");
    }
    if (const auto n = rd.number(j, "allocation_nodes", p); n && *n > 0 && *n != kInfinite) r.nnodes = *n;
    if (const json* req = rd.object(j, "required", p)) {
      const std::string rp = p + "/required";
      if (const auto c = rd.number(*req, "CPUs", rp); c && *c > 0 && *c != kInfinite) r.ncpus = *c;
      if (const auto m = rd.number(*req, "memory_per_node", rp); m && *m > 0 && *m != kInfinite) {
        r.req_mem_per_node_mb = *m;
      } else if (const auto m38 = rd.number(*req, "memory", rp); m38 && *m38 > 0 && *m38 != kInfinite) {
        r.req_mem_per_node_mb = *m38;
      }
    }
    if (const json* array = rd.object(j, "array", p)) {
      const std::string ap = p + "/array";
      const auto array_id = rd.number(*array, "job_id", ap);
      if (array_id && *array_id > 0 && *array_id != kInfinite) {
        r.array_job_id = static_cast<std::uint64_t>(*array_id);
        const auto task_id = rd.number(*array, "task_id", ap);
        const std::string task = rd.string(*array, "task", ap);
        if (task_id && *task_id >= 0 && *task_id != kInfinite) {
          r.array_task_id = static_cast<std::int32_t>(*task_id);
        } else if (!task.empty()) {  // the array's record of tasks not yet started: "5-9%2"
          std::uint32_t max_running = 0;
          if (!parse_array_spec(task, r.pending_tasks, max_running)) {
            rd.fail(ap + "/task", squote(task) + " is not an array task list");
          }
          r.array_throttle = max_running;
          r.needs_id = true;
        }
        if (const json* limits = rd.object(*array, "limits", ap)) {
          const json* max = rd.object(*limits, "max", ap + "/limits");
          const json* running = max ? rd.object(*max, "running", ap + "/limits/max") : nullptr;
          const auto tasks = running ? rd.number(*running, "tasks", ap + "/limits/max/running") : std::nullopt;
          if (tasks && *tasks > 0 && *tasks != kInfinite) r.array_throttle = static_cast<std::uint32_t>(*tasks);
        }
      }
    }
    r.dependency = rd.string(j, "dependency", p);
    records.push_back(std::move(r));
  }
  return convert(records, file_name, options, std::move(result));
}

SacctImport read_sacct(const std::filesystem::path& path, SacctFormat format, const SacctImportOptions& options) {
  if (const auto problem = input_file_problem(path, "trace", kMaxTraceBytes)) {
    throw TraceError(path.string(), 0, *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path.string(), 0, std::string("cannot open: ") + std::strerror(errno));
  if (format == SacctFormat::kParsable) return parse_sacct_text(in, path.string(), options);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_sacct_json(buffer.str(), path.string(), options);
}

}  // namespace gputwin
