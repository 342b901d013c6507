#include "twin/twin_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "control/control_plane.hpp"
#include "control/health_controller.hpp"
#include "control/operations_controller.hpp"
#include "control/quota_controller.hpp"
#include "control/scaling_controller.hpp"
#include "model/errors.hpp"
#include "results/output_lock.hpp"
#include "results/results_store.hpp"
#include "twin/mirror.hpp"
#include "twin/twin_results.hpp"

namespace gputwin {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::int64_t unix_now() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

// The controllers the options name, added to `plane`; throws std::invalid_argument for one the policy cannot run.
struct Controllers {
  std::unique_ptr<HealthController> health;
  std::unique_ptr<ScalingController> scaling;
  std::unique_ptr<QuotaController> quota;
  std::unique_ptr<OperationsController> priority;
  std::vector<ClusterOperation> job_operations;
};

void add_controllers(const TwinOptions& options, const Scenario& policy, SlurmWorld& world, ControlPlane& plane,
                     Controllers& c) {
  for (const std::string& name : options.controllers) {
    if (name == "health") {
      c.health = std::make_unique<HealthController>(policy.faults, world);
      plane.add(ControllerId::kHealth, c.health.get());
    } else if (name == "scaling") {
      if (!policy.autoscaler.enabled)
        throw std::invalid_argument("--controllers scaling needs /autoscaler in the --scenario");
      c.scaling = std::make_unique<ScalingController>(policy.autoscaler, world);
      plane.add(ControllerId::kScaling, c.scaling.get());
    } else if (name == "quota") {
      if (policy.cost.quotas.empty())
        throw std::invalid_argument("--controllers quota needs /cost/quotas in the --scenario");
      c.quota = std::make_unique<QuotaController>(policy.cost, world);
      plane.add(ControllerId::kQuota, c.quota.get());
    } else if (name == "priority") {
      for (const ClusterOperation& op : policy.operations) {
        if (op.action == ClusterOperation::Action::kHoldJobs || op.action == ClusterOperation::Action::kReleaseJobs ||
            op.action == ClusterOperation::Action::kSetPriority)
          c.job_operations.push_back(op);
      }
      c.priority = std::make_unique<OperationsController>(c.job_operations, world);
      plane.add(ControllerId::kOperations, c.priority.get());
    } else {
      throw std::invalid_argument("--controllers: unknown controller '" + name +
                                  "' (health, scaling, quota, priority)");
    }
  }
}

// The saved polls of `dir`: "DIR/NNNNNN" for every NNNNNN-jobs.json, in order.
std::vector<std::string> saved_polls(const std::filesystem::path& dir) {
  std::vector<std::string> polls;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 16 && name.compare(6, 10, "-jobs.json") == 0)
      polls.push_back((dir / name.substr(0, 6)).string());
  }
  std::sort(polls.begin(), polls.end());
  return polls;
}

// Writes one reply of poll `poll` as DIR/NNNNNN-what.json.
void save_reply(const std::filesystem::path& dir, std::uint64_t poll, const char* what, const std::string& body) {
  char name[64];
  std::snprintf(name, sizeof name, "%06llu-%s.json", static_cast<unsigned long long>(poll), what);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << body;
}

// Reads a file whole (bounded: a saved reply larger than 16 GiB is refused).
std::string read_whole(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": cannot read: " + ec.message());
  if (size > (16ULL << 30)) throw std::runtime_error(path + ": larger than 16 GiB");
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) throw std::runtime_error(path + ": cannot read");
  return text;
}

// Fills `snapshot` from the saved poll `prefix` (its diag gives the time).
void read_saved_poll(const std::string& prefix, Snapshot& snapshot) {
  const std::string diag = read_whole(prefix + "-diag.json");
  snapshot.time = parse_diag(diag, prefix + "-diag.json").server_time;
  snapshot.nodes = parse_nodes(read_whole(prefix + "-nodes.json"), prefix + "-nodes.json");
  snapshot.partitions = parse_partitions(read_whole(prefix + "-partitions.json"), prefix + "-partitions.json");
  snapshot.jobs = parse_jobs(read_whole(prefix + "-jobs.json"), prefix + "-jobs.json");
  if (snapshot.time <= 0) throw std::runtime_error(prefix + "-diag.json: no req_time: cannot place the poll in time");
}

// Adds the run times of finished jobs to the predictors' history.
void add_finished(const std::vector<RestJob>& jobs, RuntimeHistory& history) {
  for (const RestJob& job : jobs) {
    if (job.start_time <= 0 || job.end_time < job.start_time || !job_ended(job.state)) continue;
    history.add(job.user, job.account, job.name, job.end_time - job.start_time, job.time_limit_s.value_or(-1));
  }
}

// Seeds the run time predictors with the finished jobs of the last `days` days (slurmdb); failures are noted.
void seed_history(SlurmrestdClient& client, std::int64_t days, RuntimeHistory& history, std::ostream& err) {
  if (days <= 0) return;
  try {
    const std::int64_t now = unix_now();
    add_finished(client.finished_jobs(now - days * 86400, now), history);
    err << "twin: " << history.size() << " finished jobs of the last " << days << " days seed the predictor\n";
  } catch (const std::exception& e) {
    err << "twin: no job history (" << e.what() << "); predictions start from time limits\n";
  }
}

}  // namespace

int run_twin(const TwinOptions& options, std::ostream& err, const std::atomic<bool>& stop) {
  const auto started = Clock::now();
  const Scenario& policy = options.policy;
  const bool replaying = !options.replay.empty();
  std::vector<std::string> replay_polls;  // prefixes "DIR/000001" of saved polls, in order
  if (replaying) {
    replay_polls = saved_polls(options.replay);
    if (replay_polls.empty()) {
      err << "gputwin twin: " << options.replay.string() << ": no saved polls (NNNNNN-jobs.json)\n";
      return 2;
    }
  }
  // The twin owns its results folder from its first write (a twin that never reaches the cluster creates none): a
  // second twin (or run) into the same folder stops there.
  std::optional<OutputFolderLock> lock;
  ClientOptions client_options = options.client;
  std::uint64_t poll_number = 0;
  if (!options.save_replies.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.save_replies, ec);
    if (ec) {
      err << "gputwin twin: " << options.save_replies.string() << ": cannot create: " << ec.message() << "\n";
      return 2;
    }
    client_options.on_reply = [&options, &poll_number](const RestResponse& reply) {
      if (poll_number == 0 && reply.endpoint.rfind("GET /slurmdb/", 0) == 0 &&
          reply.endpoint.find("/jobs") != std::string::npos) {
        save_reply(options.save_replies, 0, "history", reply.body);  // the predictors' seed
        return;
      }
      for (const char* what : {"diag", "nodes", "partitions", "jobs"}) {
        if (reply.endpoint.size() > std::strlen(what) &&
            reply.endpoint.compare(reply.endpoint.size() - std::strlen(what), std::string::npos, what) == 0 &&
            reply.endpoint.rfind("GET /slurm/", 0) == 0) {
          save_reply(options.save_replies, poll_number, what, reply.body);
        }
      }
    };
  }
  SlurmrestdClient client(client_options);
  std::string api = "replay";
  if (!replaying) {
    try {
      client.connect();
    } catch (const SlurmrestdError& e) {
      err << "gputwin twin: cannot reach slurmrestd: " << e.what() << "\n";
      return 1;
    }
    api = api_version_name(client.version());
    err << "twin: " << options.client.url << " speaks " << api << "; node updates through "
        << (client.can_update_nodes()  ? "slurmrestd"
            : options.scontrol.empty() ? "nothing (no scontrol)"
                                       : "scontrol")
        << "; " << (options.act ? "acting" : "dry-run") << "\n";
  } else {
    err << "twin: replaying " << replay_polls.size() << " polls from " << options.replay.string() << " (dry-run)\n";
  }
  SlurmrestdActions actions(client, options.scontrol);

  Mirror mirror;
  TwinLog log;
  RuntimeHistory history;
  if (replaying) {
    const std::string seed = (options.replay / "000000-history.json").string();
    if (std::filesystem::exists(seed)) {
      try {
        add_finished(parse_jobs(read_whole(seed), seed), history);
      } catch (const std::exception& e) {
        err << "twin: " << e.what() << "\n";
      }
    }
  } else {
    seed_history(client, options.history_days, history, err);
    try {
      log.associations = client.associations();
      log.qos = client.qos();
    } catch (const SlurmrestdError& e) {
      err << "twin: no associations or QOS (" << e.what() << ")\n";
    }
  }
  std::string controller_names;
  for (const std::string& c : options.controllers) controller_names += (controller_names.empty() ? "" : ",") + c;
  TwinInfo info{options.client.url, api,         std::string(runtime_predictor_name(options.forecast.predictor)),
                controller_names,   options.act, 0};

  std::unique_ptr<SlurmWorld> world;
  ControlPlane plane;
  Controllers controllers;
  double last_write_s = 0;
  int status = 0;
  while (!stop) {
    const auto poll_start = Clock::now();
    PollRecord poll;
    poll.time = unix_now();
    Snapshot snapshot;
    ++poll_number;
    try {
      if (replaying) {
        read_saved_poll(replay_polls[poll_number - 1], snapshot);
      } else {
        const RestDiag diag = client.diag();
        snapshot.time = diag.server_time > 0 ? diag.server_time : poll.time;
        snapshot.nodes = client.nodes();
        snapshot.partitions = client.partitions();
        snapshot.jobs = client.jobs();
      }
    } catch (const std::exception& e) {
      poll.error = e.what();
      err << "twin: poll failed: " << poll.error << "\n";
    }
    poll.fetch_s = since(poll_start);
    if (poll.error.empty()) {
      poll.time = snapshot.time;
      const auto mirror_start = Clock::now();
      const PollChanges changes = mirror.apply(std::move(snapshot));
      for (std::uint64_t id : changes.started) {
        if (const MirrorJob* mj = mirror.job(id)) log.job_started(id, mj->record.start_time);
      }
      for (std::uint64_t id : changes.ended) {
        const MirrorJob* mj = mirror.job(id);
        if (mj == nullptr || mj->record.start_time <= 0 || mj->first_seen == mirror.now()) continue;
        history.add(mj->record.user, mj->record.account, mj->record.name, mj->record.end_time - mj->record.start_time,
                    mj->record.time_limit_s.value_or(-1));
      }
      poll.mirror_s = since(mirror_start);
      for (const MirrorJob& mj : mirror.jobs()) {
        if (!mj.listed) continue;
        poll.jobs += 1;
        poll.pending += mj.record.state == "PENDING" ? 1 : 0;
        poll.running += mj.record.state == "RUNNING" ? 1 : 0;
      }
      for (NodeIndex n = 0; n < mirror.nodes().size(); ++n) poll.nodes += mirror.node_listed(n) ? 1 : 0;
      if (!options.no_forecast && poll.pending > 0) {
        try {
          const Forecast f = forecast(mirror, history, policy, options.forecast);
          poll.forecast_s = f.wall_s;
          log.add(f);
        } catch (const std::exception& e) {
          err << "twin: forecast failed: " << e.what() << "\n";
        }
      }
      if (!options.controllers.empty()) {
        if (!world) {
          world = std::make_unique<SlurmWorld>(mirror, replaying ? nullptr : &actions, options.act && !replaying,
                                               options.limits, log);
          world->set_prices(&policy.cost);
          try {
            add_controllers(options, policy, *world, plane, controllers);
          } catch (const std::invalid_argument& e) {
            err << "gputwin twin: " << e.what() << "\n";
            return 2;
          }
          world->set_control_plane(&plane);
          plane.start(ControllerId::kOperations);
          plane.start(ControllerId::kQuota);
          plane.start(ControllerId::kScaling);
          plane.start(ControllerId::kHealth);
        }
        world->observe(changes);
      }
    }
    poll.write_s = last_write_s;
    log.polls.push_back(poll);
    info.wall_time_s = since(started);
    const auto write_start = Clock::now();
    if (mirror.polls() > 0) {
      try {
        if (!lock) lock.emplace(options.out);
        std::unique_lock<std::mutex> writing;
        if (options.results_mutex != nullptr) writing = std::unique_lock(*options.results_mutex);
        write_twin_results(options.out, mirror, log, info);
      } catch (const ResultsError& e) {
        err << "gputwin twin: " << e.what() << "\n";
        return 1;
      }
      if (options.on_written) options.on_written();
    }
    last_write_s = since(write_start);
    if (options.once) {
      status = poll.error.empty() ? 0 : 1;
      break;
    }
    if (options.max_polls > 0 && poll_number >= options.max_polls) break;
    if (replaying) {
      if (poll_number >= replay_polls.size()) break;
      continue;
    }
    if (options.duration_s > 0 && since(started) >= options.duration_s) break;
    const auto next = poll_start + std::chrono::duration<double>(options.interval_s);
    while (!stop && Clock::now() < next) {
      if (options.duration_s > 0 && since(started) >= options.duration_s) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (options.duration_s > 0 && since(started) >= options.duration_s) break;
  }
  return status;
}

}  // namespace gputwin
