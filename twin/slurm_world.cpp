#include "twin/slurm_world.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "faults/xid_catalogue.hpp"
#include "twin/rest/slurmrestd_client.hpp"
#include "twin/twin_results.hpp"

namespace gputwin {

namespace {

constexpr std::int64_t kMinute = 60;

// The XID in "XID 79", "Xid: 79", "xid=79 gpu 3" (case-insensitive), 0 if none; its GPU in `gpu` when named.
std::uint32_t xid_in(std::string_view text, std::uint32_t& gpu) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::uint32_t xid = 0;
  std::size_t i = 0;
  for (std::size_t at = lower.find("xid"); at != std::string::npos; at = lower.find("xid", at + 3)) {
    i = at + 3;
    while (i < lower.size() && (lower[i] == ' ' || lower[i] == ':' || lower[i] == '=')) ++i;
    std::size_t digits = 0;
    xid = 0;
    while (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) && digits < 4) {
      xid = xid * 10 + static_cast<std::uint32_t>(lower[i++] - '0');
      ++digits;
    }
    if (digits > 0) break;
    xid = 0;
  }
  if (xid == 0) return 0;
  gpu = UINT32_MAX;
  if (const std::size_t g = lower.find("gpu", i); g != std::string::npos) {
    std::size_t k = g + 3;
    while (k < lower.size() && (lower[k] == ' ' || lower[k] == ':' || lower[k] == '=')) ++k;
    std::uint32_t index = 0;
    std::size_t n = 0;
    while (k < lower.size() && std::isdigit(static_cast<unsigned char>(lower[k])) && n < 3) {
      index = index * 10 + static_cast<std::uint32_t>(lower[k++] - '0');
      ++n;
    }
    if (n > 0) gpu = index;
  }
  return xid;
}

}  // namespace

// ---- SlurmrestdActions ----

SlurmrestdActions::SlurmrestdActions(SlurmrestdClient& client, std::string scontrol)
    : client_(client), scontrol_(std::move(scontrol)) {}

bool SlurmrestdActions::nodes_by_scontrol() const {
  return !client_.can_update_nodes();
}

std::string SlurmrestdActions::scontrol(const std::vector<std::string>& args) {
  if (scontrol_.empty()) throw std::runtime_error("needs scontrol (Slurm's client), which is not available");
  std::vector<std::string> argv_store{scontrol_};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::string call;
  for (const std::string& a : argv_store) call += (call.empty() ? "" : " ") + a;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error(call + ": cannot create a pipe");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(call + ": cannot fork");
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (std::string& a : argv_store) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  std::array<char, 512> buf{};
  ssize_t got = 0;
  while ((got = read(pipe_fds[0], buf.data(), buf.size())) > 0 && output.size() < 4096)
    output.append(buf.data(), static_cast<std::size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!output.empty() && std::isspace(static_cast<unsigned char>(output.back()))) output.pop_back();
    throw std::runtime_error(call + ": " + (output.empty() ? "failed" : output));
  }
  return call;
}

std::string SlurmrestdActions::update_node(const std::string& node, const std::string& state,
                                           const std::string& reason) {
  if (!client_.can_update_nodes()) {
    std::vector<std::string> args{"update", "nodename=" + node, "state=" + state};
    if (!reason.empty()) args.push_back("reason=" + reason);
    return scontrol(args);
  }
  nlohmann::json body{{"state", nlohmann::json::array({state})}};
  if (!reason.empty()) body["reason"] = reason;
  client_.update_node(node, body.dump());
  return "POST " + client_.slurm_path("node/" + node) + " " + body.dump();
}

std::string SlurmrestdActions::reboot_node(const std::string& node, const std::string& reason) {
  return scontrol({"reboot", "ASAP", "nextstate=RESUME", "reason=" + reason, node});
}

std::string SlurmrestdActions::cancel_job(std::uint64_t job_id) {
  client_.cancel_job(job_id);
  return "DELETE " + client_.slurm_path("job/" + std::to_string(job_id));
}

std::string SlurmrestdActions::requeue_job(std::uint64_t job_id) {
  return scontrol({"requeue", std::to_string(job_id)});
}

std::string SlurmrestdActions::update_job(std::uint64_t job_id, const std::string& update) {
  client_.update_job(job_id, update);
  return "POST " + client_.slurm_path("job/" + std::to_string(job_id)) + " " + update;
}

// ---- SlurmWorld ----

SlurmWorld::SlurmWorld(const Mirror& mirror, ClusterActions* actions, bool act, ActionLimits limits, TwinLog& log)
    : mirror_(mirror), actions_(actions), act_(act && actions != nullptr), limits_(limits), log_(log) {
  rebuild_state();
}

void SlurmWorld::rebuild_state() {
  state_.emplace(mirror_state(mirror_, recorder_));
  for (NodeIndex n = 0; n < state_->node_count(); ++n) {
    const NodeCondition c = mirror_.node_listed(n) ? node_condition_of(mirror_.nodes()[n]) : NodeCondition::kDown;
    state_->set_node_condition(n, c, mirror_.nodes()[n].reason);
    if (c != NodeCondition::kNone) state_->set_node_schedulable(n, false);
  }
  now_ = from_seconds(mirror_.now() - mirror_.epoch());
}

void SlurmWorld::observe(const PollChanges& changes) {
  std::vector<NodeCondition> before(state_->node_count());
  for (NodeIndex n = 0; n < before.size(); ++n) before[n] = state_->node_condition(n);
  rebuild_state();
  taken_out_.clear();
  if (plane_ == nullptr) return;
  set_acting("");
  const auto index_of = [&](std::uint64_t id) -> std::optional<JobIndex> {
    const MirrorJob* mj = mirror_.job(id);
    if (mj == nullptr) return std::nullopt;
    return static_cast<JobIndex>(mj - mirror_.jobs().data());
  };
  // Node changes, then health events, then jobs, then timers: the order a SimWorld instant has.
  for (NodeIndex n = 0; n < controller_nodes_; ++n) {
    const NodeCondition was = n < before.size() ? before[n] : NodeCondition::kNone;
    const NodeCondition is = state_->node_condition(n);
    if (was != is) plane_->on_node_changed(n, was, is);
    if (held_out(was) && is == NodeCondition::kNone) plane_->on_node_recovered(n);
  }
  std::vector<NodeIndex> recovered;
  recovered.swap(injected_recoveries_);
  for (NodeIndex n : recovered) plane_->on_node_recovered(n);
  deliver_health_events(before);
  for (const MirrorJob& mj : mirror_.jobs()) {
    if (mj.first_seen != mirror_.now() || mirror_.polls() == 1) continue;
    const auto j = index_of(mj.record.job_id);
    if (!j) continue;
    if (mj.record.state == "PENDING") {
      if (const PendingReason r = plane_->admit(*j); r != PendingReason::kNone) {
        reject_job(*j, r);
        continue;
      }
    }
    plane_->on_job_submitted(*j);
  }
  for (std::uint64_t id : changes.started) {
    if (const auto j = index_of(id)) plane_->on_job_started(*j);
  }
  for (std::uint64_t id : changes.ended) {
    if (const auto j = index_of(id)) plane_->on_job_released(*j);
  }
  fire_timers();
  plane_->on_instant_end();
}

void SlurmWorld::deliver_health_events(const std::vector<NodeCondition>& before) {
  if (seen_xid_.size() < state_->node_count()) seen_xid_.resize(state_->node_count(), 0);
  std::vector<HealthEvent> events;
  events.swap(injected_);
  for (NodeIndex n = 0; n < controller_nodes_; ++n) {
    const RestNode& node = mirror_.nodes()[n];
    const NodeCondition was = n < before.size() ? before[n] : NodeCondition::kNone;
    if (was != NodeCondition::kDown && state_->node_condition(n) == NodeCondition::kDown &&
        has_flag(node, "NOT_RESPONDING")) {
      HealthEvent e;
      e.node = n;
      e.by = DetectedBy::kSlurmdTimeout;
      e.not_responding = true;
      e.needs = FaultEffect::kRebootNode;
      events.push_back(e);
    }
    std::uint32_t gpu = UINT32_MAX;
    std::uint32_t xid = xid_in(node.comment, gpu);
    if (xid == 0) xid = xid_in(node.reason, gpu);
    if (xid == 0) {
      seen_xid_[n] = 0;
      continue;
    }
    if (xid == seen_xid_[n]) continue;  // reported at an earlier poll
    seen_xid_[n] = xid;
    HealthEvent e;
    e.node = n;
    e.by = DetectedBy::kHealthCheck;
    e.xid = xid;
    e.gpu = gpu;
    if (const XidInfo* info = find_xid(xid)) {
      if (info->effect <= FaultEffect::kRestartApp) continue;  // the job's error, not the node's: it stays in service
      e.needs = info->effect;
      e.symptom = info->symptom;
    } else {
      e.needs = FaultEffect::kRebootNode;
    }
    events.push_back(e);
  }
  set_acting("health");
  for (const HealthEvent& e : events) plane_->on_health_event(e);
  set_acting("");
}

void SlurmWorld::fire_timers() {
  while (true) {
    auto due = timers_.end();
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->second <= now_ && (due == timers_.end() || it->second < due->second)) due = it;
    }
    if (due == timers_.end()) return;
    const auto [controller, timer] = due->first;
    timers_.erase(due);
    static constexpr const char* kNames[] = {"scheduler", "health", "scaling", "quota", "priority"};
    set_acting(kNames[static_cast<std::size_t>(controller)]);
    plane_->on_timer(controller, timer);
    set_acting("");
  }
}

Spend SlurmWorld::user_spend(std::string_view user) const {
  Spend spend;
  if (cost_ == nullptr || cost_->prices.empty()) return spend;
  const ClusterState& s = *state_;
  for (JobIndex j = 0; j < s.job_count(); ++j) {
    // Times are relative to the first poll: a job running since before it has a negative start (and one that ended
    // before it a negative end), so the state, not the sign, says whether it ran and still runs.
    const JobRuntime& rt = s.job(j);
    if (s.spec(j).user != user || rt.state == JobState::kPending) continue;
    const bool running = rt.state == JobState::kRunning;
    const SimTime end = running ? now_ : rt.end;
    for (const NodeAllocation& a : s.allocation(j)) {
      double usd_per_hour = 0;
      for (const NodePrice& price : cost_->prices) {
        if (std::find(price.nodes.begin(), price.nodes.end(), a.node) == price.nodes.end()) continue;
        const std::uint32_t gpus = s.config().nodes[a.node].gpus;
        usd_per_hour = gpus > 0 ? price.usd_per_node_hour * a.gpus / gpus : price.usd_per_node_hour;
        break;
      }
      spend.usd += usd_per_hour * to_seconds_f(end - rt.start) / 3600.0;
      if (running) spend.usd_per_hour += usd_per_hour;
    }
  }
  return spend;
}

void SlurmWorld::set_timer(ControllerId controller, TimerId timer, SimTime at) {
  timers_[{controller, timer}] = at;
}

std::uint32_t SlurmWorld::nodes_out() const {
  std::uint32_t out = 0;
  for (NodeIndex n = 0; n < state_->node_count(); ++n)
    out += held_out(state_->node_condition(n)) || taken_out_.count(n) != 0 ? 1 : 0;
  return out;
}

bool SlurmWorld::act(const std::string& action, const std::string& target, std::string_view reason,
                     std::optional<NodeIndex> takes_out, const std::function<std::string()>& call) {
  const bool takes_node_out =
      takes_out && !held_out(state_->node_condition(*takes_out)) && taken_out_.count(*takes_out) == 0;
  ActionRecord record{mirror_.now(), acting_.empty() ? "twin" : acting_, action, target, std::string(reason), "", ""};
  const std::string key = action + '\n' + target;
  if (const auto it = done_.find(key); it != done_.end() && it->second == mirror_.now()) return true;  // same poll
  while (!recent_actions_.empty() && recent_actions_.front() <= mirror_.now() - kMinute) recent_actions_.pop_front();
  if (recent_actions_.size() >= limits_.max_actions_per_minute) {
    record.outcome = "refused: more than " + std::to_string(limits_.max_actions_per_minute) + " actions a minute";
    log_.actions.push_back(std::move(record));
    return false;
  }
  if (takes_node_out) {
    // At least one node may always be out, as the health controller's own limit allows.
    const double limit =
        std::max(1.0, std::floor(limits_.max_nodes_out_pct / 100.0 * static_cast<double>(state_->node_count())));
    if (static_cast<double>(nodes_out() + 1) > limit) {
      record.outcome = "refused: would hold more than " + fmt_pct(limits_.max_nodes_out_pct) + " of the nodes out";
      log_.actions.push_back(std::move(record));
      return false;
    }
  }
  recent_actions_.push_back(mirror_.now());
  done_[key] = mirror_.now();
  if (takes_node_out) taken_out_.insert(*takes_out);
  if (!act_) {
    record.outcome = "dry-run";
  } else {
    try {
      record.call = call();
      record.outcome = "done";
    } catch (const std::exception& e) {
      record.outcome = std::string("failed: ") + e.what();
    }
  }
  const bool ok = record.outcome == "done" || record.outcome == "dry-run";
  log_.actions.push_back(std::move(record));
  return ok;
}

std::string SlurmWorld::fmt_pct(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", pct);
  return buf;
}

void SlurmWorld::node_update(NodeIndex n, const std::string& action, const std::string& state, std::string_view reason,
                             bool takes_node_out) {
  const std::string& name = state_->config().nodes[n].name;
  act(action, name, reason, takes_node_out ? std::optional<NodeIndex>(n) : std::nullopt,
      [&] { return actions_->update_node(name, state, std::string(reason)); });
}

void SlurmWorld::job_update(JobIndex job, const std::string& action, const std::string& update,
                            std::string_view reason) {
  const std::uint64_t id = state_->spec(job).id;
  act(action, std::to_string(id), reason, std::nullopt, [&] { return actions_->update_job(id, update); });
}

void SlurmWorld::reject_job(JobIndex job, PendingReason reason) {
  cancel_job(job, reason);  // slurmctld took the submission already: the twin cancels it on sight
}

void SlurmWorld::cancel_job(JobIndex job, PendingReason reason) {
  const JobState s = state_->job(job).state;
  if (s != JobState::kPending && s != JobState::kRunning) return;  // ended: nothing to cancel
  const std::uint64_t id = state_->spec(job).id;
  act("cancel", std::to_string(id), pending_reason_name(reason), std::nullopt,
      [&] { return actions_->cancel_job(id); });
}

void SlurmWorld::hold_job(JobIndex job) {
  if (state_->job(job).state != JobState::kPending || mirror_.jobs()[job].record.held) return;
  job_update(job, "hold", R"({"hold":true})", "");
}

void SlurmWorld::release_job(JobIndex job) {
  if (state_->job(job).state != JobState::kPending || !mirror_.jobs()[job].record.held) return;
  job_update(job, "release", R"({"hold":false})", "");
}

void SlurmWorld::set_job_priority(JobIndex job, std::uint32_t priority) {
  const RestJob& record = mirror_.jobs()[job].record;
  if (record.state != "PENDING" || (record.priority && *record.priority == priority)) return;
  job_update(job, "set_priority", R"({"priority":)" + std::to_string(priority) + "}", "");
}

void SlurmWorld::drain_node(NodeIndex n, std::string_view reason) {
  if (state_->node_condition(n) != NodeCondition::kNone) return;  // already out of service
  node_update(n, "drain", "DRAIN", reason, true);
}

void SlurmWorld::fail_node(NodeIndex n, std::string_view reason) {
  if (state_->node_condition(n) == NodeCondition::kFail || state_->node_condition(n) == NodeCondition::kDown) return;
  node_update(n, "fail", "FAIL", reason, state_->node_condition(n) == NodeCondition::kNone);
}

std::uint32_t SlurmWorld::down_nodes(std::span<const NodeIndex> nodes, InterruptionCause, std::string_view reason) {
  for (NodeIndex n : nodes) {
    if (state_->node_condition(n) == NodeCondition::kDown) continue;
    node_update(n, "down", "DOWN", reason, state_->node_condition(n) == NodeCondition::kNone);
  }
  return 0;  // slurmctld ends the jobs; the next poll shows them
}

void SlurmWorld::resume_node(NodeIndex n) {
  const NodeCondition c = state_->node_condition(n);
  if (!held_out(c)) return;  // in service (or in a power state, which RESUME does not change)
  node_update(n, "resume", "RESUME", "", false);
}

std::uint32_t SlurmWorld::requeue_jobs_on(NodeIndex n, InterruptionCause, std::string_view reason) {
  std::uint32_t count = 0;
  for (JobIndex j = 0; j < state_->job_count(); ++j) {
    if (state_->job(j).state != JobState::kRunning) continue;
    const auto allocation = state_->allocation(j);
    if (std::none_of(allocation.begin(), allocation.end(), [n](const NodeAllocation& a) { return a.node == n; }))
      continue;
    const std::uint64_t id = state_->spec(j).id;
    const bool requeue = state_->spec(j).requeue;
    act(requeue ? "requeue" : "cancel", std::to_string(id), reason, std::nullopt,
        [&] { return requeue ? actions_->requeue_job(id) : actions_->cancel_job(id); });
    ++count;
  }
  return count;
}

std::uint32_t SlurmWorld::reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                                       const RebootOptions&) {
  for (NodeIndex n : nodes) {
    if (state_->node_condition(n) == NodeCondition::kRebooting) continue;
    const std::string& name = state_->config().nodes[n].name;
    act("reboot", name, reason, std::nullopt, [&] { return actions_->reboot_node(name, std::string(reason)); });
  }
  return 0;
}

void SlurmWorld::reset_gpus(NodeIndex n, std::string_view reason) {
  // Not a Slurm call: the node's agent resets its GPUs. Logged; the reset is taken as done by the next poll.
  const std::string& name = state_->config().nodes[n].name;
  act("reset_gpus", name, reason, std::nullopt, [] { return std::string("(node agent: nvidia-smi -r)"); });
  injected_recoveries_.push_back(n);
}

void SlurmWorld::send_to_repair(NodeIndex n, std::string_view reason) {
  const std::string& name = state_->config().nodes[n].name;
  act("repair", name, reason, std::nullopt, [] { return std::string("(repair ticket)"); });
}

void SlurmWorld::power_up_node(NodeIndex n, std::optional<double>) {
  const NodeCondition c = state_->node_condition(n);
  if (c != NodeCondition::kPoweredDown && c != NodeCondition::kPoweringDown) return;
  node_update(n, "power_up", "POWER_UP", "", false);
}

void SlurmWorld::power_down_node(NodeIndex n) {
  const NodeCondition c = state_->node_condition(n);
  if (c == NodeCondition::kPoweredDown || c == NodeCondition::kPoweringDown) return;
  node_update(n, "power_down", "POWER_DOWN", "", false);
}

void SlurmWorld::delete_node(NodeIndex n, std::string_view reason) {
  if (state_->node_condition(n) == NodeCondition::kPoweredDown) return;
  node_update(n, "power_down", "POWER_DOWN", reason, false);
}

}  // namespace gputwin
