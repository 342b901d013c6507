#include "fidelity/recording.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "model/input_file.hpp"

namespace gputwin {
namespace {

using Json = nlohmann::json;

std::string read_text(const std::filesystem::path& path) {
  if (auto problem = input_file_problem(path, "recording", kMaxTraceBytes)) {
    throw RecordingError(path.string(), "", *problem);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const Json& field(const Json& job, const std::string& file, const std::string& pointer, const char* key) {
  if (!job.contains(key)) throw RecordingError(file, pointer, std::string("missing field '") + key + "'");
  return job.at(key);
}

double number(const Json& job, const std::string& file, const std::string& pointer, const char* key) {
  const Json& v = field(job, file, pointer, key);
  if (!v.is_number()) throw RecordingError(file, pointer + "/" + key, "expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::abs(d) > 1e12) throw RecordingError(file, pointer + "/" + key, "out of range");
  return d;
}

std::string text(const Json& job, const std::string& file, const std::string& pointer, const char* key) {
  const Json& v = field(job, file, pointer, key);
  if (!v.is_string()) throw RecordingError(file, pointer + "/" + key, "expected a string");
  return v.get<std::string>();
}

std::uint64_t whole(const Json& job, const std::string& file, const std::string& pointer, const char* key,
                    std::uint64_t max) {
  const Json& v = field(job, file, pointer, key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::uint64_t>() > max) {
    throw RecordingError(file, pointer + "/" + key, "expected a non-negative integer");
  }
  return v.get<std::uint64_t>();
}

}  // namespace

Recording read_recording(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw RecordingError(dir.string(), "", "not a folder");
  Recording r;
  r.dir = dir;
  r.slurm_conf = dir / "slurm.conf";
  r.sacct = dir / "sacct.txt";
  r.assoc = dir / "assoc.txt";
  const std::filesystem::path result = dir / "result.json";
  const std::string file = result.string();
  for (const auto& p : {r.slurm_conf, r.sacct}) {
    if (!std::filesystem::exists(p)) throw RecordingError(p.string(), "", "missing (a recording has it)");
  }
  Json doc;
  try {
    doc = Json::parse(read_text(result));
  } catch (const Json::parse_error& e) {
    throw RecordingError(file, "", std::string("not JSON: ") + e.what());
  } catch (const Json::out_of_range&) {
    throw RecordingError(file, "", "not JSON: a number too large for a double");  // 1e999, as in scenarios
  }
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array()) {
    throw RecordingError(file, "/jobs", "expected an array of jobs");
  }
  if (doc.contains("slurm_version")) {
    if (!doc["slurm_version"].is_string()) throw RecordingError(file, "/slurm_version", "expected a string");
    r.slurm_version = doc["slurm_version"].get<std::string>();
  }
  const Json& jobs = doc["jobs"];
  if (jobs.empty()) throw RecordingError(file, "/jobs", "no jobs");
  struct Raw {
    RecordedJob job;
    double submit, start, end;
  };
  std::vector<Raw> raw;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string ptr = "/jobs/" + std::to_string(i);
    const Json& j = jobs[i];
    if (!j.is_object()) throw RecordingError(file, ptr, "expected an object");
    Raw x;
    x.job.idx = static_cast<std::uint32_t>(whole(j, file, ptr, "idx", std::numeric_limits<std::uint32_t>::max()));
    x.job.job_id = whole(j, file, ptr, "job_id", std::numeric_limits<std::uint32_t>::max());
    x.submit = number(j, file, ptr, "submit");
    x.start = number(j, file, ptr, "start");
    x.end = number(j, file, ptr, "end");
    x.job.state = text(j, file, ptr, "state");
    if (j.contains("nodes") && j["nodes"].is_string()) x.job.nodes = j["nodes"].get<std::string>();
    if (x.start < x.submit) throw RecordingError(file, ptr + "/start", "before the job's submit");
    if (x.end < x.start) throw RecordingError(file, ptr + "/end", "before the job's start");
    if (!seen.insert(x.job.idx).second) {
      throw RecordingError(file, ptr + "/idx", "workload index " + std::to_string(x.job.idx) + " given twice");
    }
    raw.push_back(std::move(x));
  }
  // slurmctld stamps whole seconds: every time is an integer minus t0's fraction, so differences from the first
  // submission round to exact whole seconds (bench/fidelity.py does the same).
  double base = raw.front().submit;
  for (const Raw& x : raw) base = std::min(base, x.submit);
  for (Raw& x : raw) {
    x.job.submit_s = std::llround(x.submit - base);
    x.job.start_s = std::llround(x.start - base);
    x.job.end_s = std::llround(x.end - base);
    r.jobs.push_back(std::move(x.job));
  }
  std::sort(r.jobs.begin(), r.jobs.end(), [](const RecordedJob& a, const RecordedJob& b) { return a.idx < b.idx; });
  return r;
}

double mean_wait_s(const std::vector<RecordedJob>& jobs) {
  if (jobs.empty()) return 0;
  double sum = 0;
  for (const RecordedJob& j : jobs) sum += static_cast<double>(j.start_s - j.submit_s);
  return sum / static_cast<double>(jobs.size());
}

}  // namespace gputwin
