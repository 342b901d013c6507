// slurm.conf, gres.conf and sacctmgr output parsing; see slurm_conf.hpp. Line handling follows Slurm's own readers:
// parse_config.c (comments, continuation, Key=Value pairs, Include) and sacctmgr/file_functions.c (dump lines).
#include "model/slurm_conf.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "model/errors.hpp"
#include "model/hostlist.hpp"
#include "model/input_file.hpp"
#include "model/input_limits.hpp"
#include "model/scenario.hpp"
#include "model/text.hpp"

namespace gputwin {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Small text helpers.

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

bool parse_u64(std::string_view s, std::uint64_t& out) {
  s = trim(s);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_i64(std::string_view s, std::int64_t& out) {
  s = trim(s);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_bool(std::string_view s, bool& out) {
  const std::string u = upper(trim(s));
  if (u == "YES" || u == "Y" || u == "TRUE" || u == "1") {
    out = true;
    return true;
  }
  if (u == "NO" || u == "N" || u == "FALSE" || u == "0") {
    out = false;
    return true;
  }
  return false;
}

/// Splits at `sep` outside [] and () (hostlists, "gpu:4(S:0-1)"); keeps empty items.
std::vector<std::string> split_top_level(std::string_view s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string item;
  for (char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') depth = std::max(0, depth - 1);
    if (c == sep && depth == 0) {
      out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(item);
  return out;
}

[[noreturn]] void fail(const ConfSource& at, const std::string& problem) {
  throw ConfigError(at.file, at.line, problem);
}

std::string squote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

/// A count with an optional K/M/G suffix (x1024 each), as Slurm accepts for GRES counts.
bool parse_count_with_suffix(std::string_view s, std::uint64_t& out) {
  s = trim(s);
  std::uint64_t mult = 1;
  if (!s.empty()) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
    if (c == 'K' || c == 'M' || c == 'G') {
      mult = c == 'K' ? 1024ULL : c == 'M' ? 1024ULL * 1024 : 1024ULL * 1024 * 1024;
      s.remove_suffix(1);
    }
  }
  if (!parse_u64(s, out)) return false;
  out *= mult;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Lines and Key=Value pairs.

struct LogicalLine {
  std::string text;
  std::uint64_t line = 0;
};

/// Cuts the line at the first '#' not escaped by an odd number of backslashes (parse_config.c:_strip_comments).
void strip_comment(std::string& line) {
  int backslashes = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && backslashes % 2 == 0) {
      line.resize(i);
      return;
    }
    backslashes = line[i] == '\\' ? backslashes + 1 : 0;
  }
}

/// True if the line ends in an odd run of backslashes (trailing blanks after it allowed); removes it.
bool strip_continuation(std::string& line) {
  std::size_t end = line.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(line[end - 1])) && line[end - 1] != '\\') --end;
  std::size_t bs = 0;
  while (bs < end && line[end - 1 - bs] == '\\') ++bs;
  if (bs % 2 == 0) return false;
  line.resize(end - 1);
  return true;
}

/// Removes escaping backslashes ("\#" -> "#", "\\" -> "\"), as parse_config.c:_strip_escapes does.
std::string unescape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

std::vector<LogicalLine> read_logical_lines(std::istream& in) {
  std::vector<LogicalLine> out;
  std::string physical, pending;
  std::uint64_t number = 0, start = 0;
  bool continuing = false;
  while (std::getline(in, physical)) {
    ++number;
    if (!physical.empty() && physical.back() == '\r') physical.pop_back();
    strip_comment(physical);
    if (!continuing) start = number;
    continuing = strip_continuation(physical);
    pending += physical;
    if (!continuing) {
      out.push_back({unescape(pending), start});
      pending.clear();
    }
  }
  if (continuing) out.push_back({unescape(pending), start});
  return out;
}

struct Pair {
  std::string key;  // as written
  std::string value;
};

/// Splits a line into Key=Value pairs separated by blanks; double quotes group a value with blanks in it.
std::vector<Pair> tokenize(const std::string& text, const ConfSource& at) {
  std::vector<Pair> pairs;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    std::string token;
    bool in_quotes = false;
    while (i < text.size() && (in_quotes || !std::isspace(static_cast<unsigned char>(text[i])))) {
      if (text[i] == '"') {
        in_quotes = !in_quotes;
      } else {
        token += text[i];
      }
      ++i;
    }
    if (in_quotes) fail(at, "unbalanced double quote");
    const auto eq = token.find('=');
    if (eq == std::string::npos || eq == 0) fail(at, "expected Key=Value, found " + squote(token));
    pairs.push_back({token.substr(0, eq), token.substr(eq + 1)});
  }
  return pairs;
}

std::string read_file_text(const std::filesystem::path& path, const ConfSource& from) {
  if (const auto problem = input_file_problem(path, "configuration", kMaxConfigBytes)) {
    if (from.file.empty()) throw ConfigError(path.string(), 0, *problem);
    constexpr std::string_view kCannotOpen = "cannot open: ";
    if (problem->starts_with(kCannotOpen)) {
      fail(from, "cannot open " + squote(path.string()) + ": " + problem->substr(kCannotOpen.size()));
    }
    fail(from, squote(path.string()) + ": " + *problem);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (from.file.empty()) throw ConfigError(path.string(), 0, std::string("cannot open: ") + std::strerror(errno));
    fail(from, "cannot open " + squote(path.string()) + ": " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// ---------------------------------------------------------------------------------------------------------------
// Typed values with located errors.

/// Keyed access to one line's pairs (keys case-insensitive) for error messages naming the line's object.
class Record {
 public:
  Record(std::string context, ConfSource source) : context_(std::move(context)), source_(std::move(source)) {}

  void set(const Pair& p) { values_[lower(p.key)] = p; }
  [[nodiscard]] bool has(const std::string& lower_key) const { return values_.count(lower_key) > 0; }
  [[nodiscard]] const std::string& value(const std::string& lower_key) const { return values_.at(lower_key).value; }
  [[nodiscard]] const std::map<std::string, Pair>& values() const { return values_; }

  [[noreturn]] void fail_key(const std::string& lower_key, const std::string& problem) const {
    const Pair& p = values_.at(lower_key);
    fail(source_, context_ + p.key + ": " + squote(p.value) + " " + problem);
  }

  std::uint32_t u32(const std::string& k) const {
    std::uint64_t v = 0;
    if (!parse_u64(value(k), v) || v > 0xffffffffULL) fail_key(k, "is not a non-negative integer");
    return static_cast<std::uint32_t>(v);
  }
  std::uint64_t u64(const std::string& k) const {
    std::uint64_t v = 0;
    if (!parse_u64(value(k), v)) fail_key(k, "is not a non-negative integer");
    return v;
  }
  bool boolean(const std::string& k) const {
    bool b = false;
    if (!parse_bool(value(k), b)) fail_key(k, "is not YES or NO");
    return b;
  }
  /// Slurm time in seconds (bare numbers are minutes); -1 for UNLIMITED/INFINITE.
  std::int64_t time(const std::string& k) const {
    std::int64_t s = 0;
    if (!parse_slurm_time(trim(value(k)), s)) {
      fail_key(k, "is not a Slurm time (minutes, mm:ss, hh:mm:ss, d-hh, d-hh:mm:ss or UNLIMITED)");
    }
    return s;
  }

 private:
  std::string context_;  // "NodeName=gpu[01-04]: " or ""
  ConfSource source_;
  std::map<std::string, Pair> values_;
};

// ---------------------------------------------------------------------------------------------------------------
// slurm.conf keys.

/// Global keys with no effect on what the simulator schedules: daemons, ports, paths, logging, authentication,
/// accounting storage plumbing, process tracking. They are counted in `ignored`, not listed as "not modelled".
const std::set<std::string>& plumbing_keys() {
  static const std::set<std::string> keys = {"accountingstoragebackuphost",
                                             "accountingstorageexternalhost",
                                             "accountingstoragehost",
                                             "accountingstorageloc",
                                             "accountingstorageparameters",
                                             "accountingstoragepass",
                                             "accountingstorageport",
                                             "accountingstoragetres",
                                             "accountingstoragetype",
                                             "accountingstorageuser",
                                             "accountingstoreflags",
                                             "acctgatherenergytype",
                                             "acctgatherfilesystemtype",
                                             "acctgatherinterconnecttype",
                                             "acctgathernodefreq",
                                             "acctgatherprofiletype",
                                             "authaltparameters",
                                             "authalttypes",
                                             "authinfo",
                                             "authtype",
                                             "backupaddr",
                                             "backupcontroller",
                                             "batchstarttimeout",
                                             "bcastexclude",
                                             "bcastparameters",
                                             "burstbuffertype",
                                             "clifilterplugins",
                                             "communicationparameters",
                                             "completewait",
                                             "controladdr",
                                             "controlmachine",
                                             "corespecplugin",
                                             "credtype",
                                             "cryptotype",
                                             "debugflags",
                                             "disablerootjobs",
                                             "eiotimeout",
                                             "epilog",
                                             "epilogmsgtime",
                                             "epilogslurmctld",
                                             "federationparameters",
                                             "getenvtimeout",
                                             "grestypes",
                                             "groupupdateforce",
                                             "groupupdatetime",
                                             "hashplugin",
                                             "healthcheckinterval",
                                             "healthchecknodestate",
                                             "healthcheckprogram",
                                             "jobacctgatherfrequency",
                                             "jobacctgatherparams",
                                             "jobacctgathertype",
                                             "jobcompcolumns",
                                             "jobcomphost",
                                             "jobcomploc",
                                             "jobcompparams",
                                             "jobcomppass",
                                             "jobcompport",
                                             "jobcomptype",
                                             "jobcompuser",
                                             "jobcontainertype",
                                             "jobfileappend",
                                             "killonbadexit",
                                             "launchparameters",
                                             "launchtype",
                                             "logtimeformat",
                                             "mailprog",
                                             "maildomain",
                                             "maxjobcount",
                                             "maxstepcount",
                                             "messagetimeout",
                                             "mincpunode",
                                             "minjobage",
                                             "mpidefault",
                                             "mpiparams",
                                             "plugindir",
                                             "plugstackconfig",
                                             "prepplugins",
                                             "prolog",
                                             "prologepilogtimeout",
                                             "prologflags",
                                             "prologslurmctld",
                                             "propagateprioprocess",
                                             "propagateresourcelimits",
                                             "propagateresourcelimitsexcept",
                                             "proctracktype",
                                             "rebootprogram",
                                             "reconfigflags",
                                             "requeueexit",
                                             "requeueexithold",
                                             "resumefailprogram",
                                             "resumeprogram",
                                             "resumerate",
                                             "resumetimeout",
                                             "resvepilog",
                                             "resvprolog",
                                             "returntoservice",
                                             "routeplugin",
                                             "schedulertimeslice",
                                             "scronparameters",
                                             "slurmctldaddr",
                                             "slurmctlddebug",
                                             "slurmctldhost",
                                             "slurmctldlogfile",
                                             "slurmctldparameters",
                                             "slurmctldpidfile",
                                             "slurmctldport",
                                             "slurmctldprimaryoffprog",
                                             "slurmctldprimaryonprog",
                                             "slurmctldsyslogdebug",
                                             "slurmctldtimeout",
                                             "slurmddebug",
                                             "slurmdlogfile",
                                             "slurmdparameters",
                                             "slurmdpidfile",
                                             "slurmdport",
                                             "slurmdspooldir",
                                             "slurmdsyslogdebug",
                                             "slurmdtimeout",
                                             "slurmduser",
                                             "slurmschedlogfile",
                                             "slurmschedloglevel",
                                             "slurmuser",
                                             "srunepilog",
                                             "srunportrange",
                                             "srunprolog",
                                             "statesavelocation",
                                             "suspendexcnodes",
                                             "suspendexcparts",
                                             "suspendprogram",
                                             "suspendrate",
                                             "suspendtimeout",
                                             "switchparameters",
                                             "switchtype",
                                             "taskepilog",
                                             "taskplugin",
                                             "taskpluginparam",
                                             "taskprolog",
                                             "tcptimeout",
                                             "tmpfs",
                                             "trackwckey",
                                             "treewidth",
                                             "unkillablestepprogram",
                                             "unkillablesteptimeout",
                                             "usepam",
                                             "vsizefactor",
                                             "waittime",
                                             "x11parameters",
                                             "inactivelimit",
                                             "maxtaskspernode",
                                             "firstjobid",
                                             "maxarraysize",
                                             "interactivestepoptions",
                                             "authalttype",
                                             "certmgrtype",
                                             "tlstype",
                                             "dataparserparameters",
                                             "accountingstoragebackup",
                                             "slurmctldsyslog"};
  return keys;
}

/// Node keys that describe how to reach a node, not what it offers.
const std::set<std::string>& node_plumbing_keys() {
  static const std::set<std::string> keys = {"nodehostname", "nodeaddr",  "port",        "reason",    "comment",
                                             "extra",        "bcastaddr", "nodeaddress", "parameters"};
  return keys;
}

void parse_scheduler_parameters(SlurmConf& conf, const Pair& p, const ConfSource& at) {
  SlurmSchedulerParameters& s = conf.scheduler;
  for (const std::string& raw : split_top_level(p.value, ',')) {
    const std::string item(trim(raw));
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = lower(item.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::optional<std::int64_t>* target = nullptr;
    if (name == "sched_interval") target = &s.sched_interval;
    if (name == "default_queue_depth") target = &s.default_queue_depth;
    if (name == "batch_sched_delay") target = &s.batch_sched_delay;
    if (name == "bf_interval") target = &s.bf_interval;
    if (name == "bf_window") target = &s.bf_window;
    if (name == "bf_resolution") target = &s.bf_resolution;
    if (name == "bf_max_job_test") target = &s.bf_max_job_test;
    if (name == "bf_max_job_start") target = &s.bf_max_job_start;
    if (target != nullptr) {
      std::int64_t v = 0;
      if (!parse_i64(value, v)) {
        fail(at, p.key + ": " + name + ": " + squote(value) + " is not an integer");
      }
      *target = v;
    } else if (name == "bf_continue") {
      s.bf_continue = true;
    } else {
      conf.not_modelled.push_back({p.key, item, at});
    }
  }
}

void check_preempt_mode(const std::string& value, const std::string& context, const ConfSource& at) {
  static const std::set<std::string> kModes = {"OFF", "CANCEL", "REQUEUE", "SUSPEND", "GANG", "WITHIN", "PRIORITY"};
  for (const std::string& item : split_top_level(value, ',')) {
    if (!kModes.count(upper(trim(item)))) {
      fail(at, context + "PreemptMode: " + squote(value) +
                   " is not a preempt mode (OFF, CANCEL, REQUEUE, SUSPEND, GANG, WITHIN)");
    }
  }
}

void handle_global(SlurmConf& conf, const Pair& p, const ConfSource& at) {
  const std::string k = lower(p.key);
  Record r("", at);
  r.set(p);
  auto u32 = [&](std::optional<std::uint32_t>& out) { out = r.u32(k); };
  auto seconds_time = [&](std::optional<std::int64_t>& out) { out = r.time(k); };
  if (k == "clustername") {
    conf.cluster_name = p.value;
  } else if (k == "schedulertype") {
    conf.scheduler_type = p.value;
  } else if (k == "selecttype") {
    conf.select_type = p.value;
  } else if (k == "selecttypeparameters") {
    conf.select_type_parameters = p.value;
  } else if (k == "schedulerparameters") {
    conf.scheduler = SlurmSchedulerParameters{};  // a repeated key replaces the whole list, as in Slurm
    std::erase_if(conf.not_modelled, [](const ConfSetting& s) { return lower(s.key) == "schedulerparameters"; });
    parse_scheduler_parameters(conf, p, at);
  } else if (k == "overtimelimit") {
    if (upper(trim(p.value)) == "UNLIMITED") {
      conf.over_time_limit_min = -1;
    } else {
      conf.over_time_limit_min = static_cast<std::int64_t>(r.u64(k));
    }
  } else if (k == "killwait") {
    conf.kill_wait_s = static_cast<std::int64_t>(r.u64(k));
  } else if (k == "prioritytype") {
    conf.priority.type = p.value;
  } else if (k == "priorityweightage") {
    u32(conf.priority.weight_age);
  } else if (k == "priorityweightassoc") {
    u32(conf.priority.weight_assoc);
  } else if (k == "priorityweightfairshare") {
    u32(conf.priority.weight_fairshare);
  } else if (k == "priorityweightjobsize") {
    u32(conf.priority.weight_job_size);
  } else if (k == "priorityweightpartition") {
    u32(conf.priority.weight_partition);
  } else if (k == "priorityweightqos") {
    u32(conf.priority.weight_qos);
  } else if (k == "priorityweighttres") {
    conf.priority.weight_tres = p.value;
  } else if (k == "prioritymaxage") {
    seconds_time(conf.priority.max_age_s);
  } else if (k == "priorityfavorsmall") {
    conf.priority.favor_small = r.boolean(k);
  } else if (k == "prioritycalcperiod") {
    seconds_time(conf.priority.calc_period_s);
  } else if (k == "prioritydecayhalflife") {
    seconds_time(conf.priority.decay_half_life_s);
  } else if (k == "priorityusageresetperiod") {
    static const std::set<std::string> kPeriods = {"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"};
    const std::string v = upper(trim(p.value));
    if (!kPeriods.count(v)) r.fail_key(k, "is not NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY");
    conf.priority.usage_reset_period = v;
  } else if (k == "priorityflags") {
    conf.priority.flags = p.value;
  } else if (k == "fairsharedampeningfactor") {
    u32(conf.priority.fairshare_dampening_factor);
  } else if (k == "accountingstorageenforce") {
    conf.accounting_storage_enforce = p.value;
  } else if (k == "preempttype") {
    conf.preempt_type = p.value;
  } else if (k == "preemptmode") {
    check_preempt_mode(p.value, "", at);
    conf.preempt_mode = upper(trim(p.value));
  } else if (k == "preemptexempttime") {
    if (trim(p.value) == "-1") {
      conf.preempt_exempt_time_s.reset();
    } else {
      seconds_time(conf.preempt_exempt_time_s);
    }
  } else if (plumbing_keys().count(k)) {
    conf.ignored.push_back({p.key, p.value, at});
  } else {
    conf.not_modelled.push_back({p.key, p.value, at});
  }
}

/// Parses a node's Gres= ("gpu:h100:8,nic:1", "gpu:4(S:0-1)", "gpu:no_consume:2") into the GPU fields.
void parse_node_gres(const Record& r, SlurmNode& node, std::set<std::string>& other_gres) {
  const std::string value = r.value("gres");
  node.gpus = 0;
  node.gpu_type.clear();
  node.mixed_gpu_types = false;
  if (trim(value).empty() || upper(trim(value)) == "(NULL)") return;
  for (const std::string& raw : split_top_level(value, ',')) {
    std::string item(trim(raw));
    if (const auto paren = item.find('('); paren != std::string::npos) item.resize(paren);  // (S:0-1) socket binding
    if (item.empty()) r.fail_key("gres", "has an empty entry");
    std::vector<std::string> parts = split_top_level(item, ':');
    const std::string name = lower(parts[0]);
    if (name != "gpu") {
      other_gres.insert(parts[0]);
      continue;
    }
    std::vector<std::string> rest;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      if (lower(parts[i]) != "no_consume") rest.push_back(parts[i]);
    }
    std::uint64_t count = 1;
    std::string type;
    if (rest.size() == 1) {
      if (!parse_count_with_suffix(rest[0], count)) type = rest[0];
    } else if (rest.size() == 2) {
      type = rest[0];
      if (!parse_count_with_suffix(rest[1], count)) r.fail_key("gres", "has a bad GPU count in " + squote(item));
    } else if (rest.size() > 2) {
      r.fail_key("gres", "has " + squote(item) + ", expected gpu[:type][:count]");
    }
    if (count > 0xffffffffULL) r.fail_key("gres", "has a GPU count that is too large");
    node.gpus += static_cast<std::uint32_t>(count);
    if (!type.empty()) {
      if (node.gpu_type.empty()) {
        node.gpu_type = type;
      } else if (lower(node.gpu_type) != lower(type)) {
        node.mixed_gpu_types = true;
      }
    }
  }
}

struct NodeSetDef {
  std::string name;
  std::string nodes_expr;
  std::string feature;
  ConfSource source;
};

struct DownNodesDef {
  std::string nodes_expr;
  std::string state;
  ConfSource source;
};

/// Reader state across slurm.conf and its includes.
class ConfReader {
 public:
  explicit ConfReader(SlurmConf& conf) : conf_(conf) {}

  void read_stream(std::istream& in, const std::string& file_name, const std::filesystem::path& base_dir, int depth) {
    conf_.files.push_back(file_name);
    for (const LogicalLine& line : read_logical_lines(in)) {
      const ConfSource at{file_name, line.line};
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      if (text.size() > 8 && lower(text.substr(0, 7)) == "include" &&
          std::isspace(static_cast<unsigned char>(text[7]))) {
        include(std::string(trim(text.substr(8))), at, base_dir, depth);
        continue;
      }
      const std::vector<Pair> pairs = tokenize(std::string(text), at);
      const std::string first = lower(pairs.front().key);
      if (first == "nodename") {
        node_line(pairs, at);
      } else if (first == "partitionname") {
        partition_line(pairs, at);
      } else if (first == "nodeset") {
        nodeset_line(pairs, at);
      } else if (first == "downnodes") {
        downnodes_line(pairs, at);
      } else if (first == "frontendname" || first == "switchname") {
        conf_.not_modelled.push_back({pairs.front().key, pairs.front().value, at});
      } else {
        for (const Pair& p : pairs) handle_global(conf_, p, at);
      }
    }
  }

  /// Resolves what refers to nodes once every NodeName line is known (slurmctld reads nodes before partitions).
  void finish() {
    for (std::size_t i = 0; i < conf_.nodes.size(); ++i) index_[conf_.nodes[i].name] = i;
    for (const DownNodesDef& d : down_nodes_) {
      for (std::size_t i : resolve(d.nodes_expr, d.source, "DownNodes=" + d.nodes_expr + ": ")) {
        conf_.nodes[i].state = d.state;
      }
    }
    for (const NodeSetDef& s : node_sets_) {
      std::vector<std::size_t> members;
      if (!s.feature.empty()) {
        for (std::size_t i = 0; i < conf_.nodes.size(); ++i) {
          for (const std::string& f : split_top_level(conf_.nodes[i].features, ',')) {
            if (trim(f) == s.feature) members.push_back(i);
          }
        }
      }
      if (!s.nodes_expr.empty()) {
        for (std::size_t i : resolve(s.nodes_expr, s.source, "NodeSet=" + s.name + ": Nodes: ")) members.push_back(i);
      }
      node_set_members_[s.name] = members;
    }
    for (SlurmPartition& p : conf_.partitions) {
      p.nodes = resolve(p.nodes_expr, p.source, "PartitionName=" + p.name + ": Nodes: ");
      p.all_nodes = upper(trim(p.nodes_expr)) == "ALL";
    }
  }

 private:
  void include(std::string name, const ConfSource& at, const std::filesystem::path& base_dir, int depth) {
    if (depth >= 10) fail(at, "Include nested more than 10 deep (a loop?)");
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    for (std::size_t pos; (pos = name.find("%c")) != std::string::npos;) name.replace(pos, 2, conf_.cluster_name);
    std::filesystem::path path(name);
    if (path.is_relative()) path = base_dir / path;
    std::istringstream in(read_file_text(path, at));
    read_stream(in, path.string(), path.parent_path(), depth + 1);
  }

  void node_line(const std::vector<Pair>& pairs, const ConfSource& at) {
    const std::string expr = pairs.front().value;
    if (upper(expr) == "DEFAULT") {
      for (std::size_t i = 1; i < pairs.size(); ++i) node_defaults_[lower(pairs[i].key)] = pairs[i];
      return;
    }
    Record r("NodeName=" + expr + ": ", at);
    for (const auto& [key, pair] : node_defaults_) r.set(pair);
    for (const Pair& p : pairs) r.set(p);
    std::vector<std::string> names;
    try {
      names = expand_hostlist(expr);
    } catch (const std::invalid_argument& e) {
      fail(at, "NodeName=" + expr + ": " + e.what());
    }
    SlurmNode node;
    node.source = at;
    std::uint32_t sockets_per_board = 0;
    bool has_sockets = false;
    std::set<std::string> other_gres;
    for (const auto& [k, pair] : r.values()) {
      if (k == "nodename") continue;
      if (k == "cpus" || k == "procs") {
        node.cpus = r.u32(k);
      } else if (k == "boards") {
        node.boards = r.u32(k);
      } else if (k == "sockets") {
        node.sockets = r.u32(k);
        has_sockets = true;
      } else if (k == "socketsperboard") {
        sockets_per_board = r.u32(k);
      } else if (k == "corespersocket") {
        node.cores_per_socket = r.u32(k);
      } else if (k == "threadspercore") {
        node.threads_per_core = r.u32(k);
      } else if (k == "realmemory") {
        node.real_memory_mb = r.u64(k);
      } else if (k == "gres") {
        parse_node_gres(r, node, other_gres);
      } else if (k == "weight") {
        node.weight = r.u32(k);
      } else if (k == "state") {
        static const std::set<std::string> kStates = {"UNKNOWN", "IDLE",    "DOWN",   "DRAIN",
                                                      "FAIL",    "FAILING", "FUTURE", "CLOUD"};
        const std::string s = upper(trim(pair.value));
        if (!kStates.count(s)) {
          r.fail_key(k, "is not a node state (UNKNOWN, IDLE, DOWN, DRAIN, FAIL, FAILING, FUTURE, CLOUD)");
        }
        node.state = s;
      } else if (k == "feature" || k == "features") {
        node.features = pair.value;
      } else if (node_plumbing_keys().count(k)) {
        // How to reach the node; nothing to model.
      } else {
        conf_.not_modelled.push_back({"NodeName=" + expr + " " + pair.key, pair.value, at});
      }
    }
    for (const std::string& g : other_gres) conf_.not_modelled.push_back({"NodeName=" + expr + " Gres", g, at});
    if (!has_sockets) node.sockets = node.boards * std::max<std::uint32_t>(sockets_per_board, 1);
    if (!r.has("cpus") && !r.has("procs")) {
      const std::uint64_t cpus =
          static_cast<std::uint64_t>(node.sockets) * node.cores_per_socket * node.threads_per_core;
      if (cpus == 0 || cpus > 0xffffffffULL) fail(at, "NodeName=" + expr + ": CPU count out of range");
      node.cpus = static_cast<std::uint32_t>(cpus);
    }
    if (node.cpus > kMaxCpusPerNode) {
      fail(at, "NodeName=" + expr + ": " + std::to_string(node.cpus) + " CPUs per node, more than the bound of " +
                   std::to_string(kMaxCpusPerNode));
    }
    if (node.gpus > kMaxGpusPerNode) {
      fail(at, "NodeName=" + expr + ": " + std::to_string(node.gpus) + " GPUs per node, more than the bound of " +
                   std::to_string(kMaxGpusPerNode));
    }
    if (conf_.nodes.size() + names.size() > kMaxNodes) {
      fail(at, "NodeName=" + expr + ": more than " + std::to_string(kMaxNodes) + " nodes in all (an input bound)");
    }
    for (const std::string& name : names) {
      if (!seen_nodes_.insert(name).second)
        fail(at, "NodeName=" + expr + ": node " + squote(name) + " is defined twice");
      node.name = name;
      conf_.nodes.push_back(node);
    }
  }

  void partition_line(const std::vector<Pair>& pairs, const ConfSource& at) {
    const std::string name = pairs.front().value;
    if (upper(name) == "DEFAULT") {
      for (std::size_t i = 1; i < pairs.size(); ++i) partition_defaults_[lower(pairs[i].key)] = pairs[i];
      return;
    }
    if (name.empty()) fail(at, "PartitionName: empty name");
    if (conf_.partition_index(name) >= 0) fail(at, "PartitionName=" + name + ": defined twice");
    Record r("PartitionName=" + name + ": ", at);
    for (const auto& [key, pair] : partition_defaults_) r.set(pair);
    for (const Pair& p : pairs) r.set(p);
    SlurmPartition part;
    part.name = name;
    part.source = at;
    for (const auto& [k, pair] : r.values()) {
      if (k == "partitionname") continue;
      if (k == "nodes") {
        part.nodes_expr = pair.value;
      } else if (k == "default") {
        part.is_default = r.boolean(k);
      } else if (k == "defaulttime") {
        if (upper(trim(pair.value)) != "NONE") part.default_time_s = r.time(k);
      } else if (k == "maxtime") {
        part.max_time_s = r.time(k);
      } else if (k == "state") {
        const std::string s = upper(trim(pair.value));
        if (s != "UP" && s != "DOWN" && s != "DRAIN" && s != "INACTIVE") {
          r.fail_key(k, "is not a partition state (UP, DOWN, DRAIN, INACTIVE)");
        }
        part.state = s;
      } else if (k == "prioritytier") {
        part.priority_tier = r.u32(k);
      } else if (k == "priorityjobfactor") {
        part.priority_job_factor = r.u32(k);
      } else if (k == "priority") {  // before 16.05 one value set both
        if (!r.has("prioritytier")) part.priority_tier = r.u32(k);
        if (!r.has("priorityjobfactor")) part.priority_job_factor = r.u32(k);
      } else if (k == "tresbillingweights") {
        check_billing_weights(r, k);
        part.tres_billing_weights = pair.value;
      } else if (k == "qos") {
        part.qos = pair.value;
      } else if (k == "preemptmode") {
        check_preempt_mode(pair.value, "PartitionName=" + name + ": ", at);
        part.preempt_mode = upper(trim(pair.value));
      } else if (k == "gracetime") {
        part.grace_time_s = static_cast<std::int64_t>(r.u64(k));
      } else {
        conf_.not_modelled.push_back({"PartitionName=" + name + " " + pair.key, pair.value, at});
      }
    }
    conf_.partitions.push_back(std::move(part));
  }

  /// "CPU=1.0,Mem=0.25G,GRES/gpu=2.0": each item KEY=number with an optional K/M/G/T suffix.
  static void check_billing_weights(const Record& r, const std::string& k) {
    for (const std::string& raw : split_top_level(r.value(k), ',')) {
      const std::string item(trim(raw));
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) r.fail_key(k, "has " + squote(item) + ", expected TRES=weight");
      std::string number = item.substr(eq + 1);
      if (!number.empty() && std::strchr("KMGTkmgt", number.back()) != nullptr) number.pop_back();
      char* end = nullptr;
      std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size()) {
        r.fail_key(k, "has " + squote(item) + ", expected TRES=weight");
      }
    }
  }

  void nodeset_line(const std::vector<Pair>& pairs, const ConfSource& at) {
    NodeSetDef s{pairs.front().value, "", "", at};
    for (std::size_t i = 1; i < pairs.size(); ++i) {
      const std::string k = lower(pairs[i].key);
      if (k == "nodes") {
        s.nodes_expr = pairs[i].value;
      } else if (k == "feature") {
        s.feature = pairs[i].value;
      } else {
        fail(at, "NodeSet=" + s.name + ": unknown key " + squote(pairs[i].key) + " (expected Nodes= or Feature=)");
      }
    }
    node_sets_.push_back(std::move(s));
  }

  void downnodes_line(const std::vector<Pair>& pairs, const ConfSource& at) {
    DownNodesDef d{pairs.front().value, "DOWN", at};
    for (std::size_t i = 1; i < pairs.size(); ++i) {
      if (lower(pairs[i].key) == "state") d.state = upper(trim(pairs[i].value));
    }
    static const std::set<std::string> kStates = {"DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN"};
    if (!kStates.count(d.state))
      fail(at, "DownNodes=" + d.nodes_expr + ": State: " + squote(d.state) +
                   " is not DOWN, DRAIN, FAIL, FAILING or FUTURE");
    down_nodes_.push_back(std::move(d));
  }

  /// Node indices of a Nodes= expression: ALL, NodeSet names and hostlists joined by commas; ascending, unique.
  std::vector<std::size_t> resolve(const std::string& expr, const ConfSource& at, const std::string& context) {
    std::vector<std::size_t> out;
    for (const std::string& raw : split_top_level(expr, ',')) {
      const std::string item(trim(raw));
      if (item.empty()) continue;
      if (upper(item) == "ALL") {
        for (std::size_t i = 0; i < conf_.nodes.size(); ++i) out.push_back(i);
        continue;
      }
      if (auto it = node_set_members_.find(item); it != node_set_members_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        continue;
      }
      std::vector<std::string> names;
      try {
        names = expand_hostlist(item);
      } catch (const std::invalid_argument& e) {
        fail(at, context + e.what());
      }
      for (const std::string& n : names) {
        auto it = index_.find(n);
        if (it == index_.end()) fail(at, context + "no node named " + squote(n) + " (no NodeName line defines it)");
        out.push_back(it->second);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  SlurmConf& conf_;
  std::map<std::string, Pair> node_defaults_;
  std::map<std::string, Pair> partition_defaults_;
  std::set<std::string> seen_nodes_;
  std::vector<NodeSetDef> node_sets_;
  std::vector<DownNodesDef> down_nodes_;
  std::unordered_map<std::string, std::size_t> index_;
  std::map<std::string, std::vector<std::size_t>> node_set_members_;
};

// ---------------------------------------------------------------------------------------------------------------
// Pipe-separated sacctmgr output.

std::vector<std::string> split_pipes(const std::string& line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto bar = line.find('|', pos);
    out.push_back(line.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos));
    if (bar == std::string::npos) break;
    pos = bar + 1;
  }
  return out;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------

std::int64_t SlurmConf::node_index(std::string_view name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<std::int64_t>(i);
  }
  return -1;
}

std::int64_t SlurmConf::partition_index(std::string_view name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].name == name) return static_cast<std::int64_t>(i);
  }
  return -1;
}

SlurmConf parse_slurm_conf(std::istream& in, const std::string& file_name, const std::filesystem::path& base_dir) {
  SlurmConf conf;
  ConfReader reader(conf);
  reader.read_stream(in, file_name, base_dir, 0);
  reader.finish();
  return conf;
}

SlurmConf read_slurm_conf(const std::filesystem::path& path) {
  std::istringstream in(read_file_text(path, {}));
  return parse_slurm_conf(in, path.string(), path.parent_path());
}

// ---- gres.conf ----------------------------------------------------------------------------------------------------

GresConf parse_gres_conf(std::istream& in, const std::string& file_name) {
  GresConf gres;
  for (const LogicalLine& line : read_logical_lines(in)) {
    const ConfSource at{file_name, line.line};
    if (trim(line.text).empty()) continue;
    const std::vector<Pair> pairs = tokenize(line.text, at);
    Record r("", at);
    for (const Pair& p : pairs) r.set(p);
    if (r.has("autodetect") && !r.has("name")) {
      gres.autodetect = r.value("autodetect");
      continue;
    }
    if (!r.has("name")) fail(at, "expected Name= (the GRES name, e.g. Name=gpu)");
    const std::string name = r.value("name");
    if (lower(name) != "gpu") {
      gres.not_modelled.push_back({"Name", name, at});
      continue;
    }
    GresConfGpu g;
    g.source = at;
    for (const auto& [k, pair] : r.values()) {
      if (k == "name") continue;
      if (k == "nodename") {
        try {
          g.nodes = expand_hostlist(pair.value);
        } catch (const std::invalid_argument& e) {
          fail(at, "NodeName: " + std::string(e.what()));
        }
      } else if (k == "type") {
        g.type = pair.value;
      } else if (k == "count") {
        std::uint64_t c = 0;
        if (!parse_count_with_suffix(pair.value, c) || c > 0xffffffffULL) {
          r.fail_key(k, "is not a count");
        }
        g.count = static_cast<std::uint32_t>(c);
      } else if (k == "file") {
        std::vector<std::string> files;
        try {
          files = expand_hostlist(pair.value);
        } catch (const std::invalid_argument& e) {
          fail(at, "File: " + std::string(e.what()));
        }
        if (!r.has("count")) g.count = static_cast<std::uint32_t>(files.size());
      } else if (k == "autodetect") {
        gres.autodetect = pair.value;
      } else if (k != "cores" && k != "cpus" && k != "links" && k != "flags" && k != "multiplefiles") {
        gres.not_modelled.push_back({pair.key, pair.value, at});
      }
    }
    gres.gpus.push_back(std::move(g));
  }
  return gres;
}

GresConf read_gres_conf(const std::filesystem::path& path) {
  std::istringstream in(read_file_text(path, {}));
  return parse_gres_conf(in, path.string());
}

std::vector<std::string> apply_gres_conf(SlurmConf& conf, const GresConf& gres) {
  std::vector<std::string> notes;
  std::unordered_map<std::string, std::vector<const GresConfGpu*>> by_node;
  std::vector<const GresConfGpu*> for_all;
  // Only slurm.conf's nodes are indexed: a NodeName= may expand to up to a million hosts slurm.conf never names.
  for (const GresConfGpu& g : gres.gpus) {
    if (g.nodes.empty()) for_all.push_back(&g);
    bool noted = false;
    for (const std::string& n : g.nodes) {
      if (conf.node_index(n) >= 0) {
        by_node[n].push_back(&g);
      } else if (!noted) {
        notes.push_back(g.source.file + ": line " + std::to_string(g.source.line) + ": node '" + n +
                        "' is not in slurm.conf; ignored");
        noted = true;
      }
    }
  }
  for (SlurmNode& node : conf.nodes) {
    auto it = by_node.find(node.name);
    const std::vector<const GresConfGpu*>& lines = it != by_node.end() ? it->second : for_all;
    if (lines.empty()) {
      if (node.gpus > 0 && node.gpu_type.empty() && !gres.autodetect.empty() && lower(gres.autodetect) != "off") {
        notes.push_back("node " + node.name + ": GPU type unknown (gres.conf relies on AutoDetect=" + gres.autodetect +
                        ")");
      }
      continue;
    }
    std::vector<std::string> types;
    std::uint64_t total = 0;
    bool counts_known = true;
    for (const GresConfGpu* g : lines) {
      if (!g->type.empty() && std::find(types.begin(), types.end(), g->type) == types.end()) types.push_back(g->type);
      if (g->count) {
        total += *g->count;
      } else {
        counts_known = false;
      }
    }
    if (node.gpus == 0 && total > 0) {
      notes.push_back("node " + node.name + ": gres.conf lists " + std::to_string(total) +
                      " GPUs but slurm.conf's Gres= has none; slurm.conf's count is used");
      continue;
    }
    if (counts_known && total != node.gpus) {
      notes.push_back("node " + node.name + ": gres.conf lists " + std::to_string(total) +
                      " GPUs, slurm.conf's Gres= " + std::to_string(node.gpus) + "; slurm.conf's count is used");
    }
    if (node.gpu_type.empty() && !types.empty()) {
      node.gpu_type = types.front();
      node.mixed_gpu_types = types.size() > 1;
    } else if (!node.gpu_type.empty() && !types.empty() &&
               std::none_of(types.begin(), types.end(),
                            [&](const std::string& t) { return lower(t) == lower(node.gpu_type); })) {
      notes.push_back("node " + node.name + ": gres.conf Type=" + types.front() +
                      " differs from slurm.conf's gpu:" + node.gpu_type + "; slurm.conf's type is used");
    }
  }
  return notes;
}

// ---- sacctmgr dump -------------------------------------------------------------------------------------------------

namespace {

/// Splits "'name':Key=Value:Key='a:b'" at colons outside quotes (file_functions.c:_parse_options).
std::vector<std::string> split_dump_options(const std::string& s, const ConfSource& at) {
  std::vector<std::string> out;
  std::string item;
  char quote = 0;
  for (char c : s) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      item += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      item += c;
    } else if (c == ':') {
      out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (quote != 0) fail(at, "unbalanced quote in " + squote(s));
  out.push_back(item);
  return out;
}

std::string strip_quotes(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

/// Reads one "Key=Value" option of an Account/User/Cluster line into `a`.
void set_dump_option(SacctmgrAssoc& a, const std::string& key, const std::string& value, const std::string& context,
                     const ConfSource& at) {
  const std::string k = lower(key);
  auto number = [&](std::optional<std::int64_t>& out) {
    std::int64_t v = 0;
    if (!parse_i64(value, v) || v < -1) fail(at, context + key + ": " + squote(value) + " is not a count");
    if (v >= 0) {
      out = v;
    } else {
      out.reset();
    }
  };
  if (k == "fairshare" || k == "share" || k == "shares") {
    std::uint64_t v = 0;
    if (lower(value) == "parent" || (parse_u64(value, v) && v == 0x7fffffffULL)) {
      a.fairshare_parent = true;
      a.fairshare.reset();
    } else if (parse_u64(value, v) && v <= 0xffffffffULL) {
      a.fairshare = static_cast<std::uint32_t>(v);
      a.fairshare_parent = false;
    } else {
      fail(at, context + key + ": " + squote(value) + " is not a number of shares or 'parent'");
    }
  } else if (k == "priority") {
    std::uint64_t v = 0;
    if (!parse_u64(value, v) || v > 0xffffffffULL) fail(at, context + key + ": " + squote(value) + " is not a number");
    a.priority = static_cast<std::uint32_t>(v);
  } else if (k == "grptres") {
    a.grp_tres = value;
  } else if (k == "maxtres" || k == "maxtresperjob" || k == "maxtrespj") {
    a.max_tres = value;
  } else if (k == "grpjobs") {
    number(a.grp_jobs);
  } else if (k == "grpsubmitjobs" || k == "grpsubmit") {
    number(a.grp_submit_jobs);
  } else if (k == "maxjobs") {
    number(a.max_jobs);
  } else if (k == "maxsubmitjobs" || k == "maxsubmit") {
    number(a.max_submit_jobs);
  } else if (k == "maxwalldurationperjob" || k == "maxwall" || k == "maxwallduration") {
    std::int64_t s = 0;
    if (!parse_slurm_time(value, s)) fail(at, context + key + ": " + squote(value) + " is not minutes or a Slurm time");
    a.max_wall_s = s;
  } else if (k == "defaultqos" || k == "defqos") {
    a.default_qos = value;
  } else if (k == "qos" || k == "qoslevel") {
    a.qos = value;
  } else if (k == "defaultaccount") {
    a.default_account = value;
  } else if (k == "partition") {
    a.partition = value;
  } else {
    a.other.emplace_back(key, value);
  }
}

}  // namespace

SacctmgrDump parse_sacctmgr_dump(std::istream& in, const std::string& file_name) {
  SacctmgrDump dump;
  std::string parent;
  std::set<std::string> accounts{"root"};
  bool have_cluster = false;
  for (const LogicalLine& line : read_logical_lines(in)) {
    const ConfSource at{file_name, line.line};
    const std::string text(trim(line.text));
    if (text.empty()) continue;
    const auto dash = text.find(" - ");
    if (dash == std::string::npos) {
      fail(at,
           "expected \"Cluster - 'name'\", \"Parent - 'account'\", \"Account - 'name':...\" or \"User - "
           "'name':...\", found " +
               squote(text));
    }
    const std::string kind = lower(trim(text.substr(0, dash)));
    const std::vector<std::string> items = split_dump_options(text.substr(dash + 3), at);
    const std::string name = strip_quotes(items.front());
    if (name.empty()) fail(at, std::string(trim(text.substr(0, dash))) + ": empty name");
    SacctmgrAssoc a;
    a.name = name;
    a.source = at;
    const std::string context = std::string(trim(text.substr(0, dash))) + " '" + name + "': ";
    for (std::size_t i = 1; i < items.size(); ++i) {
      const std::string item(trim(items[i]));
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) fail(at, context + "expected Key=Value, found " + squote(item));
      set_dump_option(a, item.substr(0, eq), strip_quotes(item.substr(eq + 1)), context, at);
    }
    if (kind == "cluster") {
      if (have_cluster) fail(at, "a second Cluster line (one cluster per dump file)");
      have_cluster = true;
      dump.cluster = name;
      dump.root = std::move(a);
      parent = "root";
    } else if (kind == "parent") {
      if (!accounts.count(name)) fail(at, "Parent - '" + name + "': no Account line defines it before");
      parent = name;
    } else if (kind == "account") {
      a.parent = parent.empty() ? "root" : parent;
      if (accounts.count(name)) fail(at, context + "account defined twice");
      accounts.insert(name);
      dump.accounts.push_back(std::move(a));
    } else if (kind == "user") {
      if (parent.empty()) fail(at, context + "User line before any Parent line");
      a.parent = parent;
      dump.users.push_back(std::move(a));
    } else {
      fail(at,
           "unknown line type " + squote(trim(text.substr(0, dash))) + " (expected Cluster, Parent, Account, User)");
    }
  }
  return dump;
}

SacctmgrDump read_sacctmgr_dump(const std::filesystem::path& path) {
  std::istringstream in(read_file_text(path, {}));
  return parse_sacctmgr_dump(in, path.string());
}

// ---- sacctmgr show qos -P ------------------------------------------------------------------------------------------

std::vector<SacctmgrQos> parse_sacctmgr_qos(std::istream& in, const std::string& file_name) {
  std::vector<SacctmgrQos> out;
  std::vector<std::string> header;        // lower case
  std::vector<std::string> header_names;  // as printed
  std::string line;
  std::uint64_t number = 0;
  int name_col = -1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    const ConfSource at{file_name, number};
    std::vector<std::string> fields = split_pipes(line);
    // -p ends every line with '|'; -P does not (and its last field may be empty).
    if (fields.size() > 1 && fields.back().empty() && (header.empty() || fields.size() == header.size() + 1)) {
      fields.pop_back();
    }
    if (header.empty()) {
      for (const std::string& f : fields) {
        header_names.emplace_back(trim(f));
        header.push_back(lower(trim(f)));
      }
      const auto it = std::find(header.begin(), header.end(), "name");
      if (it == header.end()) {
        fail(at, "expected a header line naming the columns, with a Name column (sacctmgr show qos -P, without -n)");
      }
      name_col = static_cast<int>(it - header.begin());
      continue;
    }
    if (fields.size() != header.size()) {
      fail(at, "expected " + std::to_string(header.size()) + " '|'-separated fields as in the header, found " +
                   std::to_string(fields.size()));
    }
    SacctmgrQos q;
    q.source = at;
    q.name = std::string(trim(fields[static_cast<std::size_t>(name_col)]));
    if (q.name.empty()) fail(at, "Name: empty QOS name");
    for (std::size_t c = 0; c < header.size(); ++c) {
      const std::string& col = header[c];
      const std::string value(trim(fields[c]));
      if (col == "name" || value.empty()) continue;
      const std::string context = "QOS " + q.name + ": " + header_names[c] + ": " + squote(value);
      auto count = [&](std::optional<std::int64_t>& target) {
        std::int64_t v = 0;
        if (!parse_i64(value, v) || v < -1) fail(at, context + " is not a count");
        if (v >= 0) target = v;
      };
      auto seconds = [&](std::optional<std::int64_t>& target) {
        std::int64_t s = 0;
        if (!parse_slurm_time(value, s)) fail(at, context + " is not a Slurm time");
        target = s;
      };
      if (col == "priority") {
        std::uint64_t v = 0;
        if (!parse_u64(value, v) || v > 0xffffffffULL) fail(at, context + " is not a non-negative integer");
        q.priority = static_cast<std::uint32_t>(v);
      } else if (col == "usagefactor") {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str() + value.size() || !(v >= 0)) fail(at, context + " is not a non-negative number");
        q.usage_factor = v;
      } else if (col == "preempt") {
        for (const std::string& p : split_top_level(value, ',')) {
          if (!trim(p).empty()) q.preempt.emplace_back(trim(p));
        }
      } else if (col == "preemptmode") {
        if (lower(value) != "cluster") {
          check_preempt_mode(value, "QOS " + q.name + ": ", at);
          q.preempt_mode = upper(value);
        }
      } else if (col == "gracetime") {
        seconds(q.grace_time_s);
      } else if (col == "flags") {
        q.flags = value;
      } else if (col == "grptres") {
        q.grp_tres = value;
      } else if (col == "grpjobs") {
        count(q.grp_jobs);
      } else if (col == "grpsubmit" || col == "grpsubmitjobs") {
        count(q.grp_submit_jobs);
      } else if (col == "maxtres" || col == "maxtresperjob") {
        q.max_tres = value;
      } else if (col == "maxtrespu" || col == "maxtresperuser") {
        q.max_tres_per_user = value;
      } else if (col == "maxjobspu" || col == "maxjobsperuser") {
        count(q.max_jobs_per_user);
      } else if (col == "maxsubmitpu" || col == "maxsubmitjobsperuser") {
        count(q.max_submit_per_user);
      } else if (col == "maxwall" || col == "maxwalldurationperjob") {
        seconds(q.max_wall_s);
      } else if (col == "id" || col == "descr" || col == "description") {
        // Identity and free text.
      } else {
        q.other.emplace_back(header_names[c], value);
      }
    }
    out.push_back(std::move(q));
  }
  if (header.empty()) throw ConfigError(file_name, 0, "empty file: expected sacctmgr show qos -P output");
  return out;
}

std::vector<SacctmgrQos> read_sacctmgr_qos(const std::filesystem::path& path) {
  std::istringstream in(read_file_text(path, {}));
  return parse_sacctmgr_qos(in, path.string());
}

std::string format_slurm_time(std::int64_t seconds) {
  if (seconds < 0) return "UNLIMITED";
  const std::int64_t d = seconds / 86400, h = (seconds / 3600) % 24, m = (seconds / 60) % 60, s = seconds % 60;
  char buf[64];
  if (d > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(d), static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  }
  return buf;
}

}  // namespace gputwin
