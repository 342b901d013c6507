#include "fidelity/live_recorder.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "model/input_file.hpp"
#include "twin/rest/slurmrestd_client.hpp"

#ifndef GPUTWIN_SHARED_DIR
#define GPUTWIN_SHARED_DIR "../shared"
#endif

namespace gputwin {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::system_clock;

double unix_now() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error(p.string() + ": cannot write");
}

std::string iso_utc(std::int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string limit_text(std::optional<std::int64_t> limit_s) {
  if (!limit_s) return "UNLIMITED";
  const std::int64_t s = *limit_s;
  if (s >= 86400) return fmt::format("{}-{:02}:{:02}:{:02}", s / 86400, (s / 3600) % 24, (s / 60) % 60, s % 60);
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

// The local test cluster of ../shared/slurmrestd/local-slurm.sh: started fresh (clean + start) for one replica,
// stopped when this goes out of scope.
class LocalCluster {
 public:
  LocalCluster(const RecordingOptions& o, std::ostream& log) : o_(o), log_(log) {
    script_ = o.local_slurm_script.empty() ? std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/local-slurm.sh"
                                           : o.local_slurm_script;
    if (!std::filesystem::exists(script_)) {
      throw RecordingError(script_, "", "local-slurm.sh not found (give --local-slurm-script)");
    }
    run("clean");
    log_ << "fidelity: starting the local cluster in " << o.local_state << " (port base " << o.local_port_base << ")\n";
    // Several first starts at once can fail in mariadb-install-db (its temporary tables in /tmp collide): once
    // more from a clean state before giving up.
    if (!run("start")) {
      log_ << "fidelity: the local cluster did not start (see " << output_ << "); cleaning and trying once more\n";
      run("clean");
      if (!run("start")) {
        throw std::runtime_error(script_ + " start " + o_.local_state +
                                 " failed twice (it needs root); its output: " + output_);
      }
    }
    started_ = true;
    const std::filesystem::path env_file = std::filesystem::path(o.local_state) / "env";
    std::istringstream env(read_file(env_file));
    std::string line;
    while (std::getline(env, line)) {
      const auto eq = line.find('=');
      if (eq != std::string::npos && line[0] != '#') env_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    for (const char* key : {"SLURMRESTD_URL", "SLURM_JWT", "SLURM_CONF"}) {
      if (env_[key].empty()) throw RecordingError(env_file.string(), key, "missing");
    }
  }
  ~LocalCluster() {
    if (started_) {
      try {
        run("stop");
      } catch (...) {
      }
    }
  }
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  /// A value of its env file.
  const std::string& env(const std::string& key) { return env_[key]; }

 private:
  // Runs `local-slurm.sh WHAT STATE`, its output kept in STATE.local-slurm.log (the state folder is cleaned);
  // returns true on exit status 0. The variables another local cluster's env file sets are dropped first: with
  // that cluster's SLURM_JWT in the environment, sacctmgr authenticates to this cluster's slurmdbd with a token
  // signed by the other key and the start times out ("jwt_decode failure").
  bool run(const std::string& what) {
    output_ = o_.local_state + ".local-slurm.log";
    const std::string cmd =
        "env -u SLURM_JWT -u SLURM_CONF -u SLURM_TWIN_DIR -u SLURM_TWIN_USER_JWT -u SLURM_TWIN_JOB_DIR "
        "-u SLURMRESTD_URL -u SLURMRESTD_API SLURM_TWIN_PORT_BASE=" +
        shell_quote(o_.local_port_base) + " bash " + shell_quote(script_) + " " + what + " " +
        shell_quote(o_.local_state) + " >" + shell_quote(output_) + " 2>&1";
    const int rc = std::system(cmd.c_str());
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  }
  const RecordingOptions& o_;
  std::ostream& log_;
  std::string script_;
  std::string output_;
  bool started_ = false;
  std::map<std::string, std::string> env_;
};

// The submit body of one job: record_real_slurm.py's for v0.0.38/39, the v0.0.40+ shapes otherwise.
std::string submit_body(const WorkloadJob& j, ApiVersion v, const std::string& job_dir, const std::string& gpu_type) {
  const std::string gres =
      gpu_type.empty() ? fmt::format("gpu:{}", j.gpus_per_node) : fmt::format("gpu:{}:{}", gpu_type, j.gpus_per_node);
  const std::string script = fmt::format("#!/bin/bash\nsleep {}\n", j.runtime_s);
  Json job = {{"name", fmt::format("w{:03}", j.idx)},
              {"partition", j.partition},
              {"account", j.account},
              {"nodes", std::to_string(j.nodes)},
              {"tasks", j.nodes},
              {"cpus_per_task", j.gpus_per_node * j.cpus_per_gpu},
              {"current_working_directory", job_dir},
              {"standard_output", "/dev/null"}};
  Json body;
  if (v < ApiVersion::k40) {
    job["memory_per_node"] = 8192;
    job["gres"] = gres;
    job["time_limit"] = j.time_limit_min;
    job["environment"] = {{"PATH", "/usr/bin:/bin"}};
    body = {{"job", job}, {"script", script}};
  } else {
    job["memory_per_node"] = {{"set", true}, {"number", 8192}};
    job["tres_per_node"] = "gres/" + gres;
    job["time_limit"] = {{"set", true}, {"number", j.time_limit_min}};
    job["environment"] = Json::array({"PATH=/usr/bin:/bin"});
    job["script"] = script;
    body = {{"job", job}};
  }
  return body.dump();
}

bool active(const RestJob& j) {
  static const std::set<std::string> kActive = {"PENDING",  "RUNNING",  "SUSPENDED", "COMPLETING", "CONFIGURING",
                                                "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT"};
  if (kActive.count(j.state)) return true;
  for (const std::string& f : j.flags) {
    if (f == "COMPLETING" || f == "CONFIGURING") return true;
  }
  return false;
}

std::filesystem::path record_one(const RecordingOptions& o, const std::vector<WorkloadJob>& jobs, std::uint32_t k,
                                 std::ostream& log) {
  std::unique_ptr<LocalCluster> local;
  ClientOptions co;
  std::string slurm_conf = o.slurm_conf;
  std::string job_dir = "/tmp";
  if (o.local_slurm) {
    local = std::make_unique<LocalCluster>(o, log);
    co.url = local->env("SLURMRESTD_URL");
    co.token = local->env("SLURM_JWT");
    slurm_conf = local->env("SLURM_CONF");
    if (!local->env("SLURM_TWIN_JOB_DIR").empty()) job_dir = local->env("SLURM_TWIN_JOB_DIR");
  } else {
    co.url = o.url;
    if (!o.token.empty()) {
      co.token = o.token;
    } else if (const char* t = std::getenv("SLURM_JWT")) {
      co.token = t;
    }
  }
  co.user = o.user;
  SlurmrestdClient reader(co);
  reader.connect();
  std::map<std::string, std::unique_ptr<SlurmrestdClient>> submitters;  // X-SLURM-USER-NAME is the job's user
  const std::filesystem::path dir = o.out / fmt::format("replica-{}", k);
  std::filesystem::create_directories(dir);
  Json workload = Json::array();
  for (const WorkloadJob& j : jobs) {
    workload.push_back({{"idx", j.idx},
                        {"submit_offset", j.submit_offset_s},
                        {"gpus", j.gpus_per_node * j.nodes},
                        {"nodes", j.nodes},
                        {"gpus_per_node", j.gpus_per_node},
                        {"cpus_per_gpu", j.cpus_per_gpu},
                        {"runtime_s", j.runtime_s},
                        {"time_limit_min", j.time_limit_min},
                        {"user", j.user},
                        {"partition", j.partition},
                        {"account", j.account}});
  }
  write_file(dir / "workload.json", workload.dump(1) + "\n");
  if (!slurm_conf.empty())
    std::filesystem::copy_file(slurm_conf, dir / "slurm.conf", std::filesystem::copy_options::overwrite_existing);
  // When slurmctld started (diag's req_time_start): the phase of its periodic activities before the first submit.
  std::int64_t slurmctld_start = 0;
  try {
    const Json diag = Json::parse(reader.request("GET", reader.slurm_path("diag")).body);
    if (diag.contains("statistics") && diag["statistics"].contains("req_time_start")) {
      const Json& v = diag["statistics"]["req_time_start"];
      if (v.is_number_integer()) slurmctld_start = v.get<std::int64_t>();
      if (v.is_object() && v.contains("number")) slurmctld_start = v["number"].get<std::int64_t>();
    }
  } catch (const std::exception& e) {
    log << "fidelity: replica " << k << ": no slurmctld start time from diag (" << e.what() << ")\n";
  }
  // The release ("22.05.8"), from a reply's meta: the replay models release-dependent behaviour by it.
  std::string slurm_release;
  try {
    const Json ping = Json::parse(reader.request("GET", reader.slurm_path("ping")).body);
    for (const char* key : {"Slurm", "slurm"}) {
      if (ping.contains("meta") && ping["meta"].contains(key) && ping["meta"][key].contains("release") &&
          ping["meta"][key]["release"].is_string()) {
        slurm_release = ping["meta"][key]["release"].get<std::string>();
      }
    }
  } catch (const std::exception& e) {
    log << "fidelity: replica " << k << ": no Slurm release from ping (" << e.what() << ")\n";
  }
  log << "fidelity: replica " << k << ": submitting " << jobs.size() << " jobs to " << co.url << "\n";
  const double t0 = unix_now();
  std::map<std::uint64_t, std::uint32_t> ids;
  for (const WorkloadJob& j : jobs) {
    const double delay = t0 + j.submit_offset_s - unix_now();
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    auto& client = submitters[j.user];
    if (!client) {
      ClientOptions uo = co;
      uo.user = j.user;
      client = std::make_unique<SlurmrestdClient>(uo);
      client->connect();
    }
    ids[client->submit_job(submit_body(j, client->version(), job_dir, "h100"))] = j.idx;
  }
  log << "fidelity: replica " << k << ": all submitted, waiting for the queue to drain\n";
  while (true) {
    bool busy = false;
    for (const RestJob& j : reader.jobs()) busy = busy || (ids.count(j.job_id) && active(j));
    if (!busy) break;
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  // slurmdbd learns of the last ends a moment later: ask until every job is there with its end.
  std::map<std::uint64_t, RestJob> done;
  for (int attempt = 0; attempt < 30 && done.size() < ids.size(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    for (RestJob& j :
         reader.finished_jobs(static_cast<std::int64_t>(t0) - 3600, static_cast<std::int64_t>(unix_now()) + 3600)) {
      if (ids.count(j.job_id) && j.end_time > 0 && j.start_time > 0) done[j.job_id] = std::move(j);
    }
  }
  if (done.size() < ids.size()) {
    throw std::runtime_error(
        fmt::format("replica {}: slurmdbd reports {} of the {} jobs finished", k, done.size(), ids.size()));
  }
  std::string assoc;
  for (const RestAssociation& a : reader.associations()) {
    std::string qos;
    for (const std::string& q : a.qos) qos += (qos.empty() ? "" : ",") + q;
    assoc += fmt::format("cluster|{}|{}|{}|{}|{}\n", a.account, a.user, a.shares_raw, qos, a.default_qos);
  }
  write_file(dir / "assoc.txt", assoc);
  std::string sacct = "JobID|JobName|User|Account|Submit|Start|End|State|NodeList|AllocTRES|Timelimit|Priority\n";
  Json result = Json::array();
  for (const auto& [id, j] : done) {
    const std::string tres =
        !j.tres_alloc.empty() ? j.tres_alloc : fmt::format("cpu={},gres/gpu={},node={}", j.cpus, j.gpus, j.node_count);
    sacct += fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", id, j.name, j.user, j.account, iso_utc(j.submit_time),
                         iso_utc(j.start_time), iso_utc(j.end_time), j.state, j.nodes, tres, limit_text(j.time_limit_s),
                         j.priority ? std::to_string(*j.priority) : "");
    result.push_back({{"idx", ids.at(id)},
                      {"job_id", id},
                      {"submit", std::round((static_cast<double>(j.submit_time) - t0) * 10) / 10},
                      {"start", std::round((static_cast<double>(j.start_time) - t0) * 10) / 10},
                      {"end", std::round((static_cast<double>(j.end_time) - t0) * 10) / 10},
                      {"state", j.state},
                      {"nodes", j.nodes}});
  }
  write_file(dir / "sacct.txt", sacct);
  Json doc = {{"t0", t0}, {"jobs", result}};
  if (slurmctld_start > 0) doc["slurmctld_start"] = slurmctld_start;
  if (!slurm_release.empty()) doc["slurm_version"] = slurm_release;
  write_file(dir / "result.json", doc.dump(1) + "\n");
  log << fmt::format("fidelity: replica {}: recorded {} jobs in {:.0f} s into {}\n", k, done.size(), unix_now() - t0,
                     dir.string());
  return dir;
}

}  // namespace

std::vector<WorkloadJob> read_workload(const std::filesystem::path& path) {
  const std::string file = path.string();
  if (auto problem = input_file_problem(path, "workload", kMaxTraceBytes)) throw RecordingError(file, "", *problem);
  Json doc;
  try {
    doc = Json::parse(read_file(path));
  } catch (const Json::parse_error& e) {
    throw RecordingError(file, "", std::string("not JSON: ") + e.what());
  }
  if (!doc.is_array() || doc.empty()) throw RecordingError(file, "", "expected a non-empty array of jobs");
  std::vector<WorkloadJob> jobs;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::string ptr = "/" + std::to_string(i);
    const Json& j = doc[i];
    if (!j.is_object()) throw RecordingError(file, ptr, "expected an object");
    auto num = [&](const char* key, double lo, double hi) {
      if (!j.contains(key)) throw RecordingError(file, ptr, std::string("missing field '") + key + "'");
      if (!j[key].is_number() || j[key].get<double>() < lo || j[key].get<double>() > hi) {
        throw RecordingError(file, ptr + "/" + key, fmt::format("expected a number in [{}, {}]", lo, hi));
      }
      return j[key].get<double>();
    };
    auto str = [&](const char* key, const char* fallback) {
      if (!j.contains(key)) return std::string(fallback);
      if (!j[key].is_string() || j[key].get<std::string>().empty()) {
        throw RecordingError(file, ptr + "/" + key, "expected a non-empty string");
      }
      return j[key].get<std::string>();
    };
    WorkloadJob w;
    w.idx = j.contains("idx") ? static_cast<std::uint32_t>(num("idx", 0, 1e9)) : static_cast<std::uint32_t>(i);
    w.submit_offset_s = num("submit_offset", 0, 1e7);
    w.nodes = static_cast<std::uint32_t>(num("nodes", 1, 1e5));
    w.gpus_per_node = j.contains("gpus_per_node") ? static_cast<std::uint32_t>(num("gpus_per_node", 0, 1024))
                                                  : static_cast<std::uint32_t>(num("gpus", 0, 1e6)) / w.nodes;
    w.cpus_per_gpu = j.contains("cpus_per_gpu") ? static_cast<std::uint32_t>(num("cpus_per_gpu", 1, 1024)) : 8;
    w.runtime_s = static_cast<std::int64_t>(num("runtime_s", 0, 1e7));
    w.time_limit_min = static_cast<std::int64_t>(num("time_limit_min", 1, 1e6));
    w.user = str("user", "root");
    w.account = str("account", "ml");
    w.partition = str("partition", "gpu");
    jobs.push_back(std::move(w));
  }
  return jobs;
}

std::vector<WorkloadJob> scale_workload(std::vector<WorkloadJob> jobs, double scale) {
  for (WorkloadJob& j : jobs) {
    j.submit_offset_s = std::round(j.submit_offset_s * scale * 10) / 10;
    j.runtime_s = std::max<std::int64_t>(1, std::llround(static_cast<double>(j.runtime_s) * scale));
    j.time_limit_min =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(j.time_limit_min) * scale)));
  }
  return jobs;
}

std::vector<std::filesystem::path> record_replicas(const RecordingOptions& options, std::ostream& log) {
  const std::vector<WorkloadJob> jobs = scale_workload(read_workload(options.workload), options.time_scale);
  if (!options.local_slurm && options.slurm_conf.empty()) {
    throw RecordingError(options.url, "", "--slurm-conf is required with --slurmrestd (the replay imports it)");
  }
  if (!options.local_slurm && options.replicas > 1) {
    log << "fidelity: note: replicas on one running cluster follow each other; each inherits the fair-share usage "
           "of the ones before (--local-slurm starts each from a clean cluster)\n";
  }
  std::vector<std::filesystem::path> dirs;
  for (std::uint32_t k = 1; k <= options.replicas; ++k) dirs.push_back(record_one(options, jobs, k, log));
  return dirs;
}

}  // namespace gputwin
