// SWF reading, writing and conversion to jobs; see swf.hpp. Fields are parsed with std::from_chars and written with
// std::to_chars (shortest round-trip form): a million-record (90 MB) trace reads in about 0.4 s of CPU, plus the
// page faults of its ~180 MB of records.
#include "model/swf.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "model/errors.hpp"
#include "model/input_file.hpp"
#include "model/input_limits.hpp"

namespace gputwin {
namespace {

constexpr std::size_t kFieldCount = 18;

// The 18 standard fields in order: name for messages, whether integer, and where they live in SwfRecord.
struct FieldInfo {
  std::string_view name;
  std::int64_t SwfRecord::*int_member;
  double SwfRecord::*double_member;
};

constexpr std::array<FieldInfo, kFieldCount> kFields{{
    {"job number", &SwfRecord::job_number, nullptr},
    {"submit time", nullptr, &SwfRecord::submit_time_s},
    {"wait time", nullptr, &SwfRecord::wait_time_s},
    {"run time", nullptr, &SwfRecord::run_time_s},
    {"allocated processors", &SwfRecord::allocated_processors, nullptr},
    {"average CPU time", nullptr, &SwfRecord::average_cpu_time_s},
    {"used memory", nullptr, &SwfRecord::used_memory_kb},
    {"requested processors", &SwfRecord::requested_processors, nullptr},
    {"requested time", nullptr, &SwfRecord::requested_time_s},
    {"requested memory", nullptr, &SwfRecord::requested_memory_kb},
    {"status", &SwfRecord::status, nullptr},
    {"user ID", &SwfRecord::user_id, nullptr},
    {"group ID", &SwfRecord::group_id, nullptr},
    {"executable number", &SwfRecord::executable_id, nullptr},
    {"queue number", &SwfRecord::queue_id, nullptr},
    {"partition number", &SwfRecord::partition_id, nullptr},
    {"preceding job number", &SwfRecord::preceding_job, nullptr},
    {"think time", nullptr, &SwfRecord::think_time_s},
}};

// Space, tab, CR and other control characters separate fields (one compare per byte on the hot path).
bool is_space(char c) {
  return static_cast<unsigned char>(c) <= ' ';
}

// Splits whitespace-separated tokens off the front of a line.
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}
  // Next token, or "" at the end of the line.
  std::string_view next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // The rest of the line without surrounding whitespace.
  std::string_view rest() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    std::size_t end = text_.size();
    while (end > pos_ && is_space(text_[end - 1])) --end;
    return text_.substr(pos_, end - pos_);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Parses a whole token as a finite double; a leading '+' is allowed.
bool parse_double(std::string_view token, double& value) {
  if (token.size() > 1 && token[0] == '+' && token[1] != '-') token.remove_prefix(1);
  const char* const end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

std::string field_problem(std::size_t index, std::string_view token, std::string_view problem) {
  std::string out = "field " + std::to_string(index + 1) + " (" + std::string(kFields[index].name) + "): '";
  out.append(token);
  out += "' ";
  out.append(problem);
  return out;
}

// Parses one integer field: an integer (or a number with no fractional part) of -1 or more.
std::int64_t parse_int_field(std::string_view token, std::size_t index, const std::string& file, std::uint64_t line) {
  std::int64_t value = 0;
  std::string_view digits = token;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    double real = 0;
    if (!parse_double(token, real)) throw TraceError(file, line, field_problem(index, token, "is not a number"));
    if (real != std::trunc(real)) throw TraceError(file, line, field_problem(index, token, "is not an integer"));
    if (std::abs(real) >= 9.2e18) throw TraceError(file, line, field_problem(index, token, "is out of range"));
    value = static_cast<std::int64_t>(real);
  }
  if (value < -1) {
    throw TraceError(file, line, field_problem(index, token, "is negative; only -1 (unknown) is allowed"));
  }
  return value;
}

SwfRecord parse_record(std::string_view text, const std::string& file, std::uint64_t line) {
  SwfRecord record;
  record.line = line;
  Tokenizer tokens(text);
  std::array<std::string_view, kFieldCount> fields;
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    fields[i] = tokens.next();
    if (fields[i].empty()) {
      throw TraceError(file, line, "expected " + std::to_string(kFieldCount) + " fields, found " + std::to_string(i));
    }
  }
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    const FieldInfo& field = kFields[i];
    if (field.int_member != nullptr) {
      record.*field.int_member = parse_int_field(fields[i], i, file, line);
    } else if (!parse_double(fields[i], record.*field.double_member)) {
      throw TraceError(file, line, field_problem(i, fields[i], "is not a number"));
    }
  }
  record.extra = tokens.rest();
  return record;
}

template <typename T>
void append_number(std::string& out, T value) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof(buf), value).ptr;
  out.append(buf, end);
}

// Seconds as a whole number; clamped far beyond any real trace so llround cannot overflow.
std::int64_t round_s(double seconds) {
  return std::llround(std::clamp(seconds, -1e15, 1e15));
}

std::string number_text(double value) {
  std::string out;
  append_number(out, value);
  return out;
}

// Why `record` cannot become a job (`processors` is its requested, else allocated, count), or "" if it can.
std::string unusable_reason(const SwfRecord& r, std::int64_t processors, std::uint64_t cpus) {
  if (r.job_number < 0) return "job number is unknown (-1)";
  const std::string job = "job " + std::to_string(r.job_number) + ": ";
  if (r.submit_time_s < 0) return job + "submit time " + number_text(r.submit_time_s) + " is unknown or negative";
  if (r.status == 5 && r.run_time_s <= 0) return job + "cancelled before it started";
  if (r.run_time_s < 0) return job + "run time " + number_text(r.run_time_s) + " is unknown or negative";
  if (processors <= 0) return job + "no processor count (requested and allocated are unknown or 0)";
  if (cpus > std::numeric_limits<std::uint32_t>::max()) {
    return job + std::to_string(processors) + " processors is too many";
  }
  return {};
}

// Which of `r`'s times is beyond the input bounds (model/input_limits.hpp), or "" if none.
std::string beyond_time_bound(const SwfRecord& r) {
  const std::string job = "job " + std::to_string(r.job_number) + ": ";
  if (r.submit_time_s > static_cast<double>(kMaxTimeSeconds)) {
    return job + "submit time " + number_text(r.submit_time_s) + " s is beyond the bound of 1e10 s (about 317 years)";
  }
  const auto longest = static_cast<double>(kMaxDurationSeconds);
  if (r.run_time_s > longest) {
    return job + "run time " + number_text(r.run_time_s) + " s is beyond the bound of 1e9 s (about 31 years)";
  }
  if (r.requested_time_s > longest) {
    return job + "requested time " + number_text(r.requested_time_s) +
           " s is beyond the bound of 1e9 s (about 31 years)";
  }
  return {};
}

}  // namespace

bool operator==(const SwfRecord& a, const SwfRecord& b) {
  for (const FieldInfo& field : kFields) {
    if (field.int_member != nullptr ? a.*field.int_member != b.*field.int_member
                                    : a.*field.double_member != b.*field.double_member) {
      return false;
    }
  }
  return a.extra == b.extra;
}

SwfTrace read_swf(const std::filesystem::path& path) {
  if (const auto problem = input_file_problem(path, "trace", kMaxTraceBytes)) {
    throw TraceError(path.string(), 0, *problem);
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path.string(), 0, std::string("cannot open: ") + std::strerror(errno ? errno : ENOENT));
  return parse_swf(in, path.string());
}

SwfTrace parse_swf(std::istream& in, const std::string& file_name) {
  // Whole text first: memchr line splitting, and counting lines first lets records be reserved once.
  std::string data;
  std::array<char, std::size_t{1} << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) data.append(chunk.data(), in.gcount());
  if (in.bad()) throw TraceError(file_name, 0, "read error");

  SwfTrace trace;
  const std::string_view all = data;
  std::size_t lines = 1;
  for (std::size_t at = all.find('\n'); at != std::string_view::npos; at = all.find('\n', at + 1)) ++lines;
  trace.records.reserve(std::min<std::size_t>(lines, kMaxJobs));
  std::uint64_t line = 0;
  std::size_t pos = 0;
  while (pos < all.size()) {
    ++line;
    const std::size_t end = std::min(all.find('\n', pos), all.size());
    std::string_view text = all.substr(pos, end - pos);
    pos = end + 1;
    // CRLF line ends, and any further CRs before them, which write_swf could not give back (a comment "a\r" would be
    // written as ";a\r\n" and read back as "a")
    while (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    std::size_t first = 0;
    while (first < text.size() && is_space(text[first])) ++first;
    if (first == text.size()) continue;
    if (text[first] == ';') {
      trace.header_comments.emplace_back(text.substr(first + 1));
    } else {
      if (trace.records.size() == kMaxJobs) {
        throw TraceError(file_name, line, "more than " + std::to_string(kMaxJobs) + " jobs (an input bound)");
      }
      trace.records.push_back(parse_record(text, file_name, line));
    }
  }
  // A job number names one job: twice only for the parts of a checkpointed job (status 2, 3 or 4 on each part).
  std::unordered_map<std::int64_t, const SwfRecord*> seen;
  seen.reserve(trace.records.size());
  const auto is_part = [](const SwfRecord& r) { return r.status >= 2 && r.status <= 4; };
  for (const SwfRecord& r : trace.records) {
    if (r.job_number < 0) continue;
    const auto [it, added] = seen.emplace(r.job_number, &r);
    if (!added && !(is_part(r) && is_part(*it->second))) {
      throw TraceError(file_name, r.line,
                       "job number " + std::to_string(r.job_number) + " again (first at line " +
                           std::to_string(it->second->line) +
                           "); a job number appears twice only for the parts of a checkpointed job (status 2-4)");
    }
  }
  return trace;
}

void write_swf(std::ostream& out, const SwfTrace& trace) {
  std::string text;
  for (const auto& comment : trace.header_comments) {
    text += ';';
    text += comment;
    text += '\n';
  }
  for (const auto& record : trace.records) {
    for (std::size_t i = 0; i < kFieldCount; ++i) {
      if (i > 0) text += ' ';
      const FieldInfo& field = kFields[i];
      if (field.int_member != nullptr) {
        append_number(text, record.*field.int_member);
      } else {
        append_number(text, record.*field.double_member);
      }
    }
    if (!record.extra.empty()) {
      text += ' ';
      text += record.extra;
    }
    text += '\n';
    if (text.size() >= (std::size_t{1} << 16)) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

SwfImportResult swf_to_jobs(const SwfTrace& trace, const SwfImportOptions& options, const std::string& file_name) {
  if (options.cpus_per_node == 0) throw std::invalid_argument("swf_to_jobs: cpus_per_node must be positive");
  if (options.processors == SwfProcessorMapping::kGpus && options.gpus_per_node == 0) {
    throw std::invalid_argument("swf_to_jobs: gpus_per_node must be positive to map processors to GPUs");
  }
  constexpr std::uint64_t kMaxCount = std::numeric_limits<std::uint32_t>::max();
  const std::uint64_t cpus_per_gpu =
      options.cpus_per_gpu != 0 ? options.cpus_per_gpu : options.cpus_per_node / std::max(options.gpus_per_node, 1U);

  SwfImportResult result;
  result.jobs.reserve(trace.records.size());
  for (const SwfRecord& r : trace.records) {
    const std::int64_t processors = r.requested_processors > 0 ? r.requested_processors : r.allocated_processors;
    const std::uint64_t procs = processors > 0 ? static_cast<std::uint64_t>(processors) : 0;
    std::uint64_t nodes = 0;
    std::uint64_t cpus = procs;
    std::uint64_t gpus_per_node = 0;
    switch (options.processors) {
      case SwfProcessorMapping::kCpus:
        break;
      case SwfProcessorMapping::kNodes:
        nodes = procs;
        cpus = procs * options.cpus_per_node;
        break;
      case SwfProcessorMapping::kGpus:
        nodes = (procs + options.gpus_per_node - 1) / options.gpus_per_node;
        gpus_per_node = nodes > 0 ? (procs + nodes - 1) / nodes : 0;
        cpus = std::max(procs * cpus_per_gpu, nodes);  // At least one CPU per node when CPUs per GPU is 0.
        break;
    }
    if (const std::string problem = beyond_time_bound(r); !problem.empty()) {
      throw TraceError(file_name, r.line, problem);
    }
    // Products cannot wrap: procs and the per-node sizes are at most 2^32 when the checks below pass.
    const bool usable = r.job_number >= 0 && r.submit_time_s >= 0 && !(r.status == 5 && r.run_time_s <= 0) &&
                        r.run_time_s >= 0 && procs > 0 && procs <= kMaxCount && cpus <= kMaxCount;
    if (!usable) {
      if (!options.skip_invalid) {
        throw TraceError(file_name, r.line, unusable_reason(r, processors, std::max(procs, cpus)));
      }
      ++result.skipped;
      continue;
    }
    JobSpec& job = result.jobs.emplace_back();
    job.id = static_cast<std::uint64_t>(r.job_number);
    job.name = "job" + std::to_string(r.job_number);
    job.user = r.user_id >= 0 ? "u" + std::to_string(r.user_id) : "unknown";
    job.account = r.group_id >= 0 ? "g" + std::to_string(r.group_id) : "unknown";
    job.partition = options.partition;
    job.submit_s = round_s(r.submit_time_s);
    job.nodes = static_cast<std::uint32_t>(nodes);
    job.cpus = static_cast<std::uint32_t>(cpus);
    job.gpus_per_node = static_cast<std::uint32_t>(gpus_per_node);
    job.exclusive = options.processors == SwfProcessorMapping::kNodes;
    job.run_time_s = round_s(r.run_time_s);
    const std::int64_t requested_s = r.requested_time_s > 0 ? round_s(r.requested_time_s) : 0;
    if (requested_s > 0) {
      job.time_limit_s = requested_s;
    } else {
      job.time_limit_s = options.estimates == SwfEstimateRule::kExact ? job.run_time_s : kNoTimeLimit;
    }
    job.outcome = r.status == 0 ? JobState::kFailed : r.status == 5 ? JobState::kCancelled : JobState::kCompleted;
  }
  return result;
}

}  // namespace gputwin
