// A live run (gputwin run SCENARIO --serve) through the dashboard API and the slurmrestd-compatible API: the clock
// held by pause and paced by speed, an operator's drain seen by the simulation, the readers and the event stream,
// and the controls' token and body checks. The scenario is small enough to work out by hand: two nodes of 8 GPUs
// (n01, n02) and three whole-node jobs: 1 at 0 s and 2 at 10 s, each running 1,000 s, and 3 at 100,000 s (it keeps
// the run going for the paced tests).
#include "ui/live_run.hpp"

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "model/scenario.hpp"
#include "results/run_view.hpp"
#include "twin/rest/slurmrestd_client.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/http_server.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "s3cret-token";

constexpr const char* kScenario = R"({
  "name": "live",
  "seed": 1,
  "cluster": {
    "nodes": [{"prefix": "n", "count": 2, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100", "digits": 2}],
    "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "UNLIMITED"}]
  },
  "workload": {"jobs": [
    {"id": 1, "name": "a", "user": "u1", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8,
     "run_time": 1000, "time_limit": 2000, "submit": 0},
    {"id": 2, "name": "b", "user": "u1", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8,
     "run_time": 1000, "time_limit": 2000, "submit": 10},
    {"id": 3, "name": "c", "user": "u2", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8,
     "run_time": 100, "time_limit": 2000, "submit": 100000}
  ]},
  "scheduler": {"policy": "slurm"}
})";

constexpr const char* kQueueScenario = R"({"name": "queue", "seed": 2,
    "cluster": {"nodes": [{"prefix": "g", "count": 6, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "UNLIMITED"},
                               {"name": "small", "nodes": "g[001-002]", "max_time": 3600}]},
    "workload": {"synthetic": {"profile": "acme-seren", "jobs": 300, "load": 3, "users": 7, "accounts": 3}},
    "scheduler": {"policy": "slurm"}})";

// An autoscaled cloud cluster with a cost model, a spend quota and an operation (about 107,000 simulated seconds).
constexpr const char* kCloudScenario = R"({
    "name": "cloud-records", "seed": 1,
    "cluster": {"nodes": [{"prefix": "gpu", "count": 8, "cpus": 112, "memory_gb": 2048, "gpus": 8, "gpu_type": "h100"}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "14-00:00:00"}]},
    "workload": {"synthetic": {"profile": "acme-seren", "jobs": 200, "load": 0.3, "users": 5, "accounts": 2}},
    "scheduler": {"policy": "slurm"},
    "metrics": {"enabled": false},
    "autoscaler": {"poll_s": 20, "idle_window_s": 300, "scale_down_s": 30,
                   "cold_start": {"provision_s": 90, "gpu_advertise_s": 60, "driver_s": 120, "image": "shared",
                                  "register_s": 20, "health_check_s": 0}},
    "cost": {"prices": [{"usd_per_gpu_hour": 3, "model": "on_demand"}], "sample_s": 3600,
             "quotas": [{"user": "user001", "limit_usd": 50, "warn_pct": 80, "buffer_pct": 10,
                         "action": "block_and_kill"}]},
    "operations": [{"time": 3600, "action": "update_image", "image": "img2"}]})";

class LiveRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gputwin-live-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "live.json") << kScenario;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<LiveRun> start(double speed, bool paused, std::optional<SchedulerPolicy> policy = std::nullopt) {
    LiveOptions options;
    options.speed = speed;
    options.start_paused = paused;
    options.refresh_ms = 200;
    options.out_dir = dir_ / "out";
    RunOptions run;
    run.policy = policy;
    return std::make_unique<LiveRun>(load_scenario((dir_ / "live.json").string()), run, options);
  }

  /// A run of `scenario` (written to dir_/`file`) with its results into dir_/out and copies at most every 200 ms,
  /// paused at its start when `paused`; `at_end`, if given, is its LiveOptions::at_end hook.
  std::unique_ptr<LiveRun> start_scenario(const char* file, const char* scenario, bool paused,
                                          std::function<void()> at_end = {}) {
    std::ofstream(dir_ / file) << scenario;
    LiveOptions options;
    options.start_paused = paused;
    options.refresh_ms = 200;
    options.out_dir = dir_ / "out";
    options.at_end = std::move(at_end);
    return std::make_unique<LiveRun>(load_scenario((dir_ / file).string()), RunOptions{}, options);
  }

  /// A run of kQueueScenario (300 jobs offered 3x the GPUs of 6 nodes), paused at its start.
  std::unique_ptr<LiveRun> start_queue() { return start_scenario("queue.json", kQueueScenario, true); }

  /// Waits until the run's clock reaches `second`, polling every millisecond for 20 s at most (a starved
  /// simulation thread on a loaded machine).
  static void wait_for_second(const LiveRun& live, std::int64_t second) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (live.status().now_s < second && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
  }

  /// Lets a paused run go at 1,000 simulated seconds a wall second until second `until_s` (20 s of wall time at most),
  /// then pauses it.
  static void run_until(LiveRun& live, std::int64_t until_s) {
    live.set_speed(1000);
    live.resume();
    wait_for_second(live, until_s);
    live.pause();
  }

  /// Lets a paused queue run go until 200 jobs are submitted, then pauses it; `meanwhile`, if given, is called every
  /// 20 polls. At 10,000 simulated seconds a wall second the 200th submit (t = 38,296; about 25 jobs pending then)
  /// comes after about 3.8 s and the last (t = 51,436) 1.3 s later, so the pause lands between them however late a
  /// 1 ms sleep wakes on a loaded machine. (At full speed the run could pass both between two polls, and a pause right
  /// after the 150th submit left only 5 jobs pending once one is cancelled.)
  static void run_to_the_200th_submit(LiveRun& live, const std::function<void()>& meanwhile = {}) {
    live.set_speed(10000);
    live.resume();
    for (int i = 0; i < 20000 && live.status().submitted < 200; ++i) {
      if (meanwhile && i % 20 == 0) meanwhile();
      std::this_thread::sleep_for(1ms);
    }
    live.pause();
  }

  /// Lets a paused run go until jobs 1 and 2 are submitted (10 s), then pauses it before job 2 starts (11 s): at 10x
  /// to second 8, then in real time, so the pause has a second of wall time to land (at 10x a loaded machine's
  /// late wake-up let job 2 start first).
  static void run_past_the_second_submit(LiveRun& live) {
    live.set_speed(10);
    live.resume();
    wait_for_second(live, 8);
    live.set_speed(1);
    for (int i = 0; i < 2000 && live.status().submitted < 2; ++i) std::this_thread::sleep_for(10ms);
    live.pause();
  }

  std::filesystem::path dir_;
};

/// `method target` as the server hands it to a handler (its query parsed).
HttpRequest request_to(const std::string& method, const std::string& target) {
  HttpRequest r;
  r.method = method;
  const std::size_t q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) r.query = parse_query(target.substr(q + 1));
  return r;
}

/// `api`'s answer (a DashboardApi's or a SlurmApi's) to GET `target`, body and all; HttpErrors are thrown.
template <typename Api>
HttpResponse get(const Api& api, const std::string& target) {
  return api.handle(request_to("GET", target));
}

/// Expects `got`, the answer to `target`, to equal `expected` byte for byte; a failure says where they first differ
/// rather than printing both (a series of hundreds of points).
void expect_same_body(const std::string& target, const std::string& got, const std::string& expected) {
  const auto differs = std::mismatch(got.begin(), got.end(), expected.begin(), expected.end());
  const std::ptrdiff_t at = differs.first - got.begin();
  EXPECT_TRUE(got == expected) << target << ": " << got.size() << " against " << expected.size()
                               << " bytes, first difference at " << at << ": "
                               << got.substr(static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, at - 80)), 160);
}

/// GETs each of `targets` from `api` into `answers`; each must answer 200.
void get_all(const DashboardApi& api, const std::vector<std::string>& targets, std::vector<std::string>& answers) {
  for (const std::string& target : targets) {
    const HttpResponse r = get(api, target);
    ASSERT_EQ(r.status, 200) << target << " " << r.body;
    answers.push_back(r.body);
  }
}

/// Expects `written` (a written snapshot's API) to answer each of `targets` with 200 and, byte for byte, `answers`.
void expect_written_answers(const DashboardApi& written, const std::vector<std::string>& targets,
                            const std::vector<std::string>& answers) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const HttpResponse expected = get(written, targets[i]);
    ASSERT_EQ(expected.status, 200) << targets[i];
    expect_same_body(targets[i], answers[i], expected.body);
  }
}

/// A hook for one of a live run's threads (LiveOptions::at_end, before_present): while the hold is closed the thread
/// waits in it. Take open_on_exit() after making the run, so a failed assertion opens it before the run's destructor
/// joins that thread.
class ThreadHold {
 public:
  explicit ThreadHold(bool closed) : closed_(closed) {}
  /// The hook to give the run.
  std::function<void()> hook() {
    return [this] {
      std::unique_lock lock(mutex_);
      arrived_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !closed_; });
    };
  }
  /// Closes or opens the hold.
  void set_closed(bool closed) {
    std::lock_guard lock(mutex_);
    closed_ = closed;
    cv_.notify_all();
  }
  /// True once the thread has come to the hook (within `timeout`).
  bool wait_arrived(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return arrived_; });
  }
  /// Opens the hold when the returned handle goes.
  [[nodiscard]] std::shared_ptr<void> open_on_exit() {
    return {nullptr, [this](void*) { set_closed(false); }};
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool closed_;
  bool arrived_ = false;
};

/// Answers `method path` (with its query) from `api` as status and JSON body; HttpErrors become their status.
std::pair<int, json> call(const DashboardApi& api, const std::string& method, const std::string& target,
                          const std::string& body = "",
                          const std::string& authorization = std::string("Bearer ") + kToken) {
  HttpRequest r = request_to(method, target);
  if (!authorization.empty()) r.headers["authorization"] = authorization;
  r.body = body;
  try {
    const HttpResponse response = api.handle(r);
    return {response.status, json::parse(response.body)};
  } catch (const HttpError& e) {
    return {e.status(), json{{"error", e.what()}}};
  }
}

std::int64_t live_now(const DashboardApi& api) {
  return call(api, "GET", "/api/live").second.at("now").get<std::int64_t>();
}

const json* node_named(const json& nodes, const std::string& name) {
  for (const json& n : nodes)
    if (n.at("name") == name) return &n;
  return nullptr;
}

std::size_t append(char* data, std::size_t size, std::size_t n, void* out) {
  auto* text = static_cast<std::string*>(out);
  text->append(data, size * n);
  // An SSE stream does not end: stop reading once the test has what it looks for (or after the timeout).
  return text->find("drain (maint)") != std::string::npos ? 0 : size * n;
}

/// Reads `url` (an SSE stream) for at most `timeout` or until "drain (maint)" arrives.
std::string read_stream(const std::string& url, std::chrono::milliseconds timeout) {
  CURL* curl = curl_easy_init();
  std::string out;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  return out;
}

TEST_F(LiveRunTest, PauseHoldsTheClockAndResumeLetsItRun) {
  auto live = start(1000, false);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  std::this_thread::sleep_for(200ms);
  auto [status, body] = call(api, "POST", "/api/control/pause");
  ASSERT_EQ(status, 200) << body.dump();
  std::this_thread::sleep_for(150ms);  // the simulation's thread sees the pause within one 50 ms tick
  const std::int64_t held = live_now(api);
  EXPECT_EQ(call(api, "GET", "/api/live").second.at("state"), "paused");
  std::this_thread::sleep_for(600ms);  // at 1000x this would be 600 simulated seconds
  EXPECT_EQ(live_now(api), held);
  // The readers show the held clock too: the snapshot's default time is the simulation's now.
  EXPECT_EQ(call(api, "GET", "/api/info").second.at("end").get<std::int64_t>(), held);
  std::tie(status, body) = call(api, "POST", "/api/control/resume");
  ASSERT_EQ(status, 200);
  // About 500 simulated seconds in half a second; waits up to 20 s for a starved simulation thread.
  for (int i = 0; i < 2000 && live_now(api) <= held + 200; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_GT(live_now(api), held + 200);
}

TEST_F(LiveRunTest, SpeedSetsThePace) {
  auto live = start(500, false);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  // Between the jobs' ends (about 1,010 s) and job 3 (100,000 s) only timers happen: the clock is the pace alone.
  std::this_thread::sleep_for(200ms);
  auto measure = [&](double wall_s) {
    const std::int64_t a = live_now(api);
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(wall_s));
    const std::int64_t b = live_now(api);
    return static_cast<double>(b - a) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Over 3 s, so that a late wake-up of this thread or the simulation's on a loaded machine moves the rate little.
  const double slow = measure(3.0);
  EXPECT_NEAR(slow, 500, 500 * 0.25);  // 500 simulated s per wall s, within 25% (50 ms ticks on a busy machine)
  auto [status, body] = call(api, "POST", "/api/control/speed", R"({"factor": 4000})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("speed"), 4000.0);
  std::this_thread::sleep_for(100ms);
  const double fast = measure(3.0);
  EXPECT_NEAR(fast, 4000, 4000 * 0.25);
  std::tie(status, body) = call(api, "POST", "/api/control/speed", R"({"factor": "max"})");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body.at("speed"), "max");
  // At full speed the rest of the run (to job 3's end at 100,100 s) takes well under the wait.
  ASSERT_TRUE(live->wait_finished(20s));
  EXPECT_EQ(call(api, "GET", "/api/live").second.at("state"), "ended");
  EXPECT_GE(call(api, "GET", "/api/info").second.at("end").get<std::int64_t>(), 100100);
}

TEST_F(LiveRunTest, DrainShowsInBothApisAndTheStreamAndTheSimulationHonoursIt) {
  // Paused before the first instant: nothing has run. Drain n01 there; then job 1 must start on n02 (3 s after its
  // submit: batch_sched_delay) and job 2 wait for it (n01 is drained) to start on n02 when job 1 ends, 1,000 s later.
  // Without the drain job 2 would start on n01 at 13 s.
  auto live = start(0, true);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  HttpServer server(options, [&](const HttpRequest& r) { return api.handle(r); });

  auto [status, body] = call(api, "POST", "/api/control/node/drain", R"({"node": "n01", "reason": "maint"})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("time"), 0);
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  ASSERT_EQ(status, 200);
  const json* n01 = node_named(body.at("nodes"), "n01");
  ASSERT_NE(n01, nullptr);
  EXPECT_EQ(n01->at("state"), "DRAINED");
  EXPECT_EQ(n01->at("group"), "DRAIN");
  EXPECT_EQ(node_named(body.at("nodes"), "n02")->at("state"), "IDLE");

  // The slurmrestd-compatible API reads the same snapshot: IDLE+DRAIN, as slurmrestd shows a drained idle node.
  const auto snap = api.snapshot();
  const SlurmApi slurm(snap->slurm(), {});
  HttpRequest nodes_request;
  nodes_request.method = "GET";
  nodes_request.path = "/slurm/v0.0.44/nodes";
  const json slurm_nodes = json::parse(slurm.handle(nodes_request).body).at("nodes");
  const json* slurm_n01 = node_named(slurm_nodes, "n01");
  ASSERT_NE(slurm_n01, nullptr);
  EXPECT_EQ(slurm_n01->at("state"), json::array({"IDLE", "DRAIN"}));
  EXPECT_EQ(node_named(slurm_nodes, "n02")->at("state"), json::array({"IDLE"}));

  // The event stream from its start has the operator's action and the node's change.
  const std::string stream = read_stream(server.url() + "/api/stream?since=0", 5000ms);
  EXPECT_NE(stream.find(R"("kind":"action")"), std::string::npos) << stream;
  EXPECT_NE(stream.find(R"x("subject":"n01","text":"drain (maint)")x"), std::string::npos) << stream;

  std::tie(status, body) = call(api, "POST", "/api/control/speed", R"({"factor": "max"})");
  ASSERT_EQ(status, 200);
  std::tie(status, body) = call(api, "POST", "/api/control/resume");
  ASSERT_EQ(status, 200);
  ASSERT_TRUE(live->wait_finished(20s));
  const RunView results(dir_ / "out");
  const auto job1 = results.job(1, 5000);
  const auto job2 = results.job(2, 5000);
  ASSERT_TRUE(job1 && job2);
  EXPECT_EQ(job1->node_list, "n02");
  EXPECT_EQ(job1->start_s, 3);
  EXPECT_EQ(job1->end_s, 1003);
  EXPECT_EQ(job2->node_list, "n02");
  EXPECT_EQ(job2->start_s, 1003);
  // Once ended, the controls say so.
  std::tie(status, body) = call(api, "POST", "/api/control/node/resume", R"({"node": "n01"})");
  EXPECT_EQ(status, 409);
}

TEST_F(LiveRunTest, RestartRebootsANodeOnceIdleAndResumesIt) {
  // POST /api/control/node/restart is `scontrol reboot ASAP nextstate=RESUME` through the health controller: an idle
  // node reboots at once, a busy one drains and reboots when its jobs end, and each is back in service after the
  // reboot time (faults.repair.reboot_s: the default 600 s here; RestartTakesTheScenariosRebootTime below). Paused at 0
  // s: n01 is idle, so it reboots 0-600 s; job 1 (submitted at 0 s) starts on n02 at 3 s (batch_sched_delay) and job 2
  // (10 s) waits for a node until n01 is back at 600 s. Restarted while job 1 runs, n02 drains, reboots when job 1 ends
  // at 1,003 s and is back at 1,603 s.
  auto live = start(0, true);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  auto [status, body] = call(api, "POST", "/api/control/node/restart", R"({"node": "n01"})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("time"), 0);
  EXPECT_EQ(body.at("rebooting"), true);
  EXPECT_EQ(body.at("action"), "restart");
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(node_named(body.at("nodes"), "n01")->at("state"), "REBOOTING");
  EXPECT_EQ(node_named(body.at("nodes"), "n01")->at("group"), "DOWN");
  // Refused: a node rebooting already (409), an unknown node (404), bad fields (400); nothing reaches the run.
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n01"})");
  EXPECT_EQ(status, 409) << body.dump();
  EXPECT_NE(body.at("error").get<std::string>().find("REBOOTING"), std::string::npos) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n99"})");
  EXPECT_EQ(status, 404);
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"reason": "x"})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'node'", 0), 0u) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n02", "reason": 7})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'reason'", 0), 0u) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n02"})", "Bearer nope");
  EXPECT_EQ(status, 401);

  run_past_the_second_submit(*live);
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n02", "reason": "kernel"})");
  ASSERT_EQ(status, 200) << body.dump();
  const std::int64_t asked = body.at("time").get<std::int64_t>();
  EXPECT_GE(asked, 10);
  EXPECT_LT(asked, 600);
  EXPECT_EQ(body.at("rebooting"), false);  // job 1 runs there: it drains first
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  EXPECT_EQ(node_named(body.at("nodes"), "n02")->at("state"), "DRAINING");

  // The stream has both operator actions, with the node changes they made.
  std::string actions;
  for (const LiveEvent& e : live->events_after(0, 1000, 0ms)) {
    if (e.kind == "action" && e.text.rfind("restart", 0) == 0)
      actions += std::to_string(e.time) + " " + e.subject + " " + e.text + "\n";
  }
  EXPECT_EQ(actions, "0 n01 restart (Reboot ASAP)\n" + std::to_string(asked) + " n02 restart (kernel)\n");

  ASSERT_EQ(call(api, "POST", "/api/control/speed", R"({"factor": "max"})").first, 200);
  ASSERT_EQ(call(api, "POST", "/api/control/resume").first, 200);
  ASSERT_TRUE(live->wait_finished(20s));
  std::tie(status, body) = call(api, "POST", "/api/control/node/restart", R"({"node": "n01"})");
  EXPECT_EQ(status, 409);
  const RunView results(dir_ / "out");
  const auto job1 = results.job(1, 5000);
  const auto job2 = results.job(2, 5000);
  ASSERT_TRUE(job1 && job2);
  EXPECT_EQ(job1->node_list, "n02");
  EXPECT_EQ(job1->start_s, 3);
  EXPECT_EQ(job1->end_s, 1003);
  EXPECT_EQ(job2->node_list, "n01");
  EXPECT_EQ(job2->start_s, 600);
  std::string n01, n02;
  for (const EventLine& e : results.events(5000, 1000, "node")) {
    (e.subject == "n01" ? n01 : n02) += std::to_string(e.time) + " " + e.text + "\n";
  }
  // Drained, then rebooting in the same second once idle (the drain, then the reboot, as slurmctld records them).
  EXPECT_EQ(n01, "0 now DRAINED\n0 now REBOOTING\n600 now IDLE\n600 now ALLOCATED\n1600 now IDLE\n") << n01;
  EXPECT_EQ(n02, "3 now ALLOCATED\n" + std::to_string(asked) +
                     " now DRAINING\n1003 now DRAINED\n1003 now REBOOTING\n1603 now IDLE\n")
      << n02;
}

TEST_F(LiveRunTest, RestartTakesTheScenariosRebootTime) {
  // The scenario's /faults/repair/reboot_s (300 s, no random faults): n01 restarted idle at 0 s is back at 300 s,
  // so job 2 (submitted at 10 s, both nodes taken otherwise: job 1 on n02) starts there then.
  std::string text = kScenario;
  text.replace(text.rfind('}'), 1, R"(, "faults": {"rate_scale": 0, "repair": {"reboot_s": 300}}})");
  std::ofstream(dir_ / "reboot300.json") << text;
  LiveOptions options;
  options.start_paused = true;
  options.out_dir = dir_ / "out";
  LiveRun live(load_scenario((dir_ / "reboot300.json").string()), RunOptions{}, options);
  EXPECT_TRUE(live.restart_node("n01", "kernel").rebooting);
  live.resume();
  ASSERT_TRUE(live.wait_finished(20s));
  const RunView results(dir_ / "out");
  const auto job2 = results.job(2, 5000);
  ASSERT_TRUE(job2.has_value());
  EXPECT_EQ(job2->node_list, "n01");
  EXPECT_EQ(job2->start_s, 300);
}

TEST_F(LiveRunTest, ControlsCheckTokenAndBody) {
  auto live = start(0, true);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  auto [status, body] = call(api, "POST", "/api/control/pause", "", "");
  EXPECT_EQ(status, 401);
  EXPECT_NE(body.at("error").get<std::string>().find("Authorization: Bearer"), std::string::npos);
  std::tie(status, body) = call(api, "POST", "/api/control/pause", "", "Bearer not-the-token");
  EXPECT_EQ(status, 401);
  std::tie(status, body) = call(api, "POST", "/api/control/pause", "", std::string("Basic ") + kToken);
  EXPECT_EQ(status, 401);
  std::tie(status, body) = call(api, "POST", "/api/control/speed", "{\"factor\": ");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error"), "body: not JSON");
  std::tie(status, body) = call(api, "POST", "/api/control/speed", R"({"factor": "fast"})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'factor'", 0), 0u) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/speed", R"({"factor": -2})");
  EXPECT_EQ(status, 400);
  std::tie(status, body) = call(api, "POST", "/api/control/node/drain", R"({"reason": "x"})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'node'", 0), 0u) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/node/drain", R"({"node": "n01", "reason": 7})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'reason'", 0), 0u) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/node/drain", R"({"node": "n99"})");
  EXPECT_EQ(status, 404);
  std::tie(status, body) = call(api, "POST", "/api/control/reboot", "{}");
  EXPECT_EQ(status, 404);
  std::tie(status, body) = call(api, "GET", "/api/control/pause");
  EXPECT_EQ(status, 405);
  // Nothing of the refused requests reached the run: still paused at its start, no action in the stream.
  EXPECT_EQ(call(api, "GET", "/api/live").second.at("state"), "paused");
  EXPECT_TRUE(live->events_after(0, 100, 0ms).empty());
}

TEST_F(LiveRunTest, AFinishedRunHasNoControls) {
  {
    auto live = start(0, false);
    ASSERT_TRUE(live->wait_finished(20s));
  }
  const DashboardApi api(dir_ / "out", dir_ / "no-assets");
  auto [status, body] = call(api, "POST", "/api/control/pause");
  EXPECT_EQ(status, 403);
  std::tie(status, body) = call(api, "GET", "/api/live");
  EXPECT_EQ(body.at("live"), false);
  std::tie(status, body) = call(api, "GET", "/api/info");
  EXPECT_EQ(body.at("live"), false);
  EXPECT_EQ(body.at("controls"), false);
}

/// Every row of `table` in `dir`/results.sqlite, in rowid order, as text ("a|b|c\n" per row).
std::string table_text(const std::filesystem::path& dir, const std::string& table) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2((dir / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + dir.string();
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, ("SELECT * FROM " + table + " ORDER BY rowid").c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    out = "no table " + table + ": " + sqlite3_errmsg(db);
  }
  while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const unsigned char* text = sqlite3_column_text(stmt, c);
      out += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
      out += c + 1 < sqlite3_column_count(stmt) ? "|" : "\n";
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

TEST_F(LiveRunTest, ASnapshotHoldsWhatTheRunStoppedThenWrites) {
  // A snapshot is written on its own thread from a copy of the simulation's state, each run's GPU load taken from the
  // speed model when copied: its tables are those the run writes when stopped at the snapshot's time. Four nodes of
  // 8 GPUs; jobs of 16 GPUs run a data-parallel profile (GPU use below 100%: the loads are in the series).
  std::ofstream(dir_ / "profiled.json") << R"({
    "name": "profiled", "seed": 3,
    "cluster": {
      "nodes": [{"prefix": "n", "count": 4, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100", "digits": 2}],
      "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "UNLIMITED"}],
      "topology": {"fat_tree": {"nodes_per_leaf": 2, "leaves_per_spine": 2}}
    },
    "workload": {"jobs": [
      {"id": 1, "user": "u1", "account": "acc", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 1000,
       "time_limit": 2000, "submit": 0},
      {"id": 2, "user": "u1", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 500,
       "time_limit": 2000, "submit": 0},
      {"id": 3, "user": "u2", "account": "acc", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 3000,
       "time_limit": 4000, "submit": 100},
      {"id": 4, "user": "u2", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 2000,
       "time_limit": 3000, "submit": 50},
      {"id": 5, "user": "u2", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100,
       "time_limit": 2000, "submit": 100000}
    ]},
    "scheduler": {"policy": "fcfs"},
    "metrics": {"interval_s": 60},
    "performance": {"profiles": [{"name": "dp", "min_gpus": 16,
                                  "data_parallel": {"parameters_billion": 7, "compute_s": 2.0, "overlap": 0.5}}]}
  })";
  LiveOptions options;
  options.start_paused = true;
  options.refresh_ms = 200;
  options.out_dir = dir_ / "out";
  LiveRun live(load_scenario((dir_ / "profiled.json").string()), RunOptions{}, options);
  live.set_speed(5000);
  live.resume();
  wait_for_second(live, 1800);
  live.pause();
  const std::int64_t paused_at = live.status().now_s;
  ASSERT_GT(paused_at, 1500);
  ASSERT_LT(paused_at, 100000);
  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, paused_at);
  live.stop();
  ASSERT_TRUE(live.wait_finished(20s));
  ASSERT_EQ(live.status().now_s, paused_at);
  for (const char* table : {"jobs", "nodes", "node_events", "gpu_metrics", "cluster_metrics", "job_gpus"}) {
    const std::string snapshot_rows = table_text(snap->dir, table);
    EXPECT_FALSE(snapshot_rows.empty()) << table;
    EXPECT_EQ(snapshot_rows, table_text(dir_ / "out", table)) << table;
  }
  // The profile's load is in the series: some GPU busy below 100% (a snapshot without the loads shows 100).
  const RunView view(dir_ / "out");
  bool partial = false;
  for (const GpuPoint& p : view.gpu_series(0, 0, paused_at, 1000)) partial |= p.util_pct > 0 && p.util_pct < 99;
  EXPECT_TRUE(partial);
  EXPECT_GT(live.status().snapshot_copy_wall_s, 0);
  EXPECT_GT(live.status().snapshot_wall_s, 0);
}

TEST_F(LiveRunTest, AnOldSnapshotAnswersAtOnceWhileTheNextIsWritten) {
  // Readers never wait for a snapshot that is only old (refresh_ms, 200 ms here): they get the one there, and the
  // request makes the simulation copy its state for the next, which a later reader gets.
  auto live = start(0, true);
  const auto first = live->snapshot();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(live->snapshot(), first);
  std::shared_ptr<const RunSnapshot> next = first;
  for (int i = 0; i < 1000 && next == first; ++i) {
    std::this_thread::sleep_for(10ms);
    next = live->snapshot();
  }
  EXPECT_NE(next, first);
  EXPECT_GE(live->status().snapshots, 2u);  // 3 if a poll asked again while the second was written
  // After an operator's action a reader waits for a snapshot that shows it.
  live->drain_node("n01", "maint");
  const auto after = live->snapshot();
  EXPECT_NE(after, next);
  EXPECT_EQ(after->view->nodes(after->now_s, false).at(0).state, "DRAINED");
}

// The profiled scenario of ASnapshotHoldsWhatTheRunStoppedThenWrites, for the in-memory answers.
constexpr const char* kProfiledScenario = R"({
    "name": "profiled", "seed": 3,
    "cluster": {
      "nodes": [{"prefix": "n", "count": 4, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100", "digits": 2}],
      "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "UNLIMITED"},
                     {"name": "half", "nodes": "n[01-02]", "default_time": 600, "max_time": 3600}],
      "topology": {"fat_tree": {"nodes_per_leaf": 2, "leaves_per_spine": 2}}
    },
    "workload": {"jobs": [
      {"id": 1, "user": "u1", "account": "acc", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 1000,
       "time_limit": 2000, "submit": 0},
      {"id": 2, "user": "u1", "account": "acc", "nodes": 1, "cpus": 4, "gpus_per_node": 3, "run_time": 500,
       "time_limit": 2000, "submit": 0},
      {"id": 3, "user": "u2", "account": "acc", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 3000,
       "time_limit": 4000, "submit": 100},
      {"id": 4, "user": "u2", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 2000,
       "time_limit": 3000, "submit": 50},
      {"id": 5, "user": "u2", "account": "acc", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100,
       "time_limit": 2000, "submit": 100000}
    ]},
    "scheduler": {"policy": "fcfs"},
    "metrics": {"interval_s": 60},
    "performance": {"profiles": [{"name": "dp", "min_gpus": 16,
                                  "data_parallel": {"parameters_billion": 7, "compute_s": 2.0, "overlap": 0.5}}]}
  })";

TEST_F(LiveRunTest, OverviewNodesAndInfoFromTheCopyEqualTheWrittenSnapshots) {
  // Paused part way (about 2,000 s: jobs 3 and 4 running at loads below 100%, job 5 not submitted), after an XID on
  // n03 GPU 5 and a drain of n02 at about 1,800 s: /api/overview, /api/nodes and /api/info come from the copy in memory
  // (no snapshot is written for them), and equal, field by field, what the snapshot written of the same state answers
  // through a RunView (a dashboard over its folder) at the copy's second.
  std::ofstream(dir_ / "profiled.json") << kProfiledScenario;
  LiveOptions options;
  options.start_paused = true;
  options.refresh_ms = 200;
  options.out_dir = dir_ / "out";
  LiveRun live(load_scenario((dir_ / "profiled.json").string()), RunOptions{}, options);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  ASSERT_EQ(call(api, "POST", "/api/control/speed", R"({"factor": 5000})").first, 200);
  ASSERT_EQ(call(api, "POST", "/api/control/resume").first, 200);
  wait_for_second(live, 1800);
  ASSERT_EQ(call(api, "POST", "/api/control/node/inject", R"({"node": "n03", "xid": 48, "gpu": 5})").first, 200);
  ASSERT_EQ(call(api, "POST", "/api/control/node/drain", R"({"node": "n02", "reason": "maint"})").first, 200);
  // On until a GPU sample (every 60 s) after the XID: the GPU use shown is the sample at or before the second.
  const std::int64_t injected = live.status().now_s;
  wait_for_second(live, injected + 150);
  ASSERT_EQ(call(api, "POST", "/api/control/pause").first, 200);
  const std::int64_t now = live.status().now_s;
  ASSERT_GT(now, 1500);
  ASSERT_LT(now, 100000);

  const auto [overview_status, overview] = call(api, "GET", "/api/overview");
  const auto [nodes_status, nodes] = call(api, "GET", "/api/nodes");
  const auto [thin_status, thin] = call(api, "GET", "/api/nodes?gpu=false&filter=failed");
  const auto [later_status, later] = call(api, "GET", "/api/overview?t=" + std::to_string(now + 5000));
  auto [info_status, info] = call(api, "GET", "/api/info");
  ASSERT_EQ(overview_status, 200) << overview.dump();
  ASSERT_EQ(nodes_status, 200);
  ASSERT_EQ(thin_status, 200);
  ASSERT_EQ(later_status, 200);
  ASSERT_EQ(info_status, 200);
  EXPECT_EQ(live.status().snapshots, 0u);  // nothing written for them
  EXPECT_GE(live.status().copies, 1u);
  EXPECT_EQ(overview.at("snapshot_s"), now);
  EXPECT_EQ(overview.at("t"), now);
  EXPECT_EQ(later, overview);  // a later second shows the newest state known: the copy's
  EXPECT_EQ(info.at("end"), now);
  // What the checks go through (else equal answers could be empty ones).
  EXPECT_GT(overview.at("running_jobs").get<int>(), 0);
  EXPECT_GT(overview.at("gpu_util_pct").get<double>(), 0);
  EXPECT_LT(overview.at("gpu_util_pct").get<double>(), 100);
  EXPECT_EQ(node_named(nodes.at("nodes"), "n03")->at("xid"), 48);
  EXPECT_EQ(node_named(nodes.at("nodes"), "n02")->at("group"), "DRAIN");
  EXPECT_EQ(thin.at("nodes").size(), 1u);

  // The snapshot written of the same state (the run is paused: a copy now is the same state), read as a finished
  // run's folder is read.
  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  EXPECT_EQ(live.status().snapshots, 1u);
  const DashboardApi written(snap->dir, dir_ / "no-assets");
  const std::string at = "?t=" + std::to_string(now);
  auto [status, expected] = call(written, "GET", "/api/overview" + at);
  ASSERT_EQ(status, 200);
  expected["snapshot_s"] = now;  // a folder's view says its end (the last job's submit), the live API the copy's second
  EXPECT_EQ(overview, expected) << overview.dump() << "\n" << expected.dump();
  std::tie(status, expected) = call(written, "GET", "/api/nodes" + at);
  EXPECT_EQ(nodes, expected) << nodes.dump() << "\n" << expected.dump();
  std::tie(status, expected) = call(written, "GET", "/api/nodes" + at + "&gpu=false&filter=failed");
  EXPECT_EQ(thin, expected);
  std::tie(status, expected) = call(written, "GET", "/api/info");
  for (const char* key : {"end", "live", "controls"}) {
    expected.erase(key);
    info.erase(key);
  }
  EXPECT_EQ(info, expected);
}

TEST_F(LiveRunTest, JobsPagesFromTheCopyEqualTheWrittenSnapshots) {
  // A queue part way through: 300 jobs offered 3x the GPUs of 6 nodes (pending with reasons, running, ended, not
  // submitted yet), paused once 200 are submitted, then one pending job cancelled by an operator. Every page of the
  // Jobs tab (each filter, sort and direction, two offsets, three searches, at the copy's second, an earlier one and
  // a later one) and single jobs come from the copy in memory (no snapshot is written for them) and equal what the
  // snapshot written of the same state answers through a RunView at that second.
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  run_to_the_200th_submit(live);
  ASSERT_GE(live.status().submitted, 200u);
  ASSERT_LT(live.status().submitted, 300u);
  auto [status, pending] = call(api, "GET", "/api/jobs?filter=pending&limit=1");
  ASSERT_EQ(status, 200) << pending.dump();
  ASSERT_EQ(pending.at("jobs").size(), 1u);
  const std::int64_t cancelled = pending.at("jobs")[0].at("job_id").get<std::int64_t>();
  live.cancel_job(cancelled);
  // The operator's action shows at once (a copy made after it), still without a snapshot.
  json job;
  std::tie(status, job) = call(api, "GET", "/api/jobs/" + std::to_string(cancelled));
  ASSERT_EQ(status, 200);
  EXPECT_EQ(job.at("state"), "CANCELLED");
  const std::int64_t now = live.status().now_s;
  auto [first_status, first] = call(api, "GET", "/api/jobs");
  ASSERT_EQ(first_status, 200);
  EXPECT_EQ(first.at("t"), now);
  // What the checks go through (else equal answers could be empty ones).
  EXPECT_GT(first.at("counts").at("PENDING").get<int>(), 5);
  EXPECT_GT(first.at("counts").at("RUNNING").get<int>(), 0);
  EXPECT_GT(first.at("counts").at("COMPLETED").get<int>(), 0);
  EXPECT_GT(first.at("counts").at("FAILED").get<int>(), 0);  // the cancelled one at least

  std::vector<std::pair<std::string, json>> answers;  // request, live answer
  const std::vector<std::string> sorts = {"job_id",   "name",       "user",  "partition", "nodes",       "gpus",
                                          "run_time", "time_limit", "state", "priority",  "submit_time", "start_time"};
  std::size_t reasons = 0;
  for (const std::int64_t t : {now, now / 2, now + 1000}) {
    for (const char* filter : {"all", "running", "pending", "completed", "failed", "unknown"}) {
      for (const std::string& sort : sorts) {
        for (const char* order : {"asc", "desc"}) {
          for (const char* search : {"", "u", "1"}) {
            for (const char* offset : {"0", "20"}) {
              const std::string target = "/api/jobs?t=" + std::to_string(t) + "&filter=" + filter + "&sort=" + sort +
                                         "&order=" + order + "&search=" + search + "&offset=" + offset + "&limit=9";
              auto [code, body] = call(api, "GET", target);
              ASSERT_EQ(code, 200) << target << " " << body.dump();
              for (const json& r : body.at("jobs")) reasons += r.at("state") == "PENDING" && r.at("reason") != "";
              answers.emplace_back(target, std::move(body));
            }
          }
        }
      }
    }
  }
  EXPECT_GT(reasons, 0u);
  for (const std::int64_t id : {std::int64_t{1}, cancelled, std::int64_t{200}, std::int64_t{299}}) {
    const std::string target = "/api/jobs/" + std::to_string(id);
    auto [code, body] = call(api, "GET", target);
    ASSERT_EQ(code, 200) << target;
    answers.emplace_back(target, std::move(body));
  }
  EXPECT_EQ(call(api, "GET", "/api/jobs/123456").first, 404);
  EXPECT_EQ(call(api, "GET", "/api/jobs?sort=colour").first, 400);
  EXPECT_EQ(live.status().snapshots, 0u);  // nothing written for them

  // The snapshot written of the same state (the run is paused), read as a finished run's folder is read.
  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  const DashboardApi written(snap->dir, dir_ / "no-assets");
  for (const auto& [target, got] : answers) {
    // A later second shows the newest state known, the copy's: the snapshot at its own second.
    std::string asked = target;
    const std::string later = "t=" + std::to_string(now + 1000);
    if (const std::size_t at = asked.find(later); at != std::string::npos)
      asked.replace(at, later.size(), "t=" + std::to_string(now));
    if (asked.find("t=") == std::string::npos) asked += "?t=" + std::to_string(now);
    const auto [code, expected] = call(written, "GET", asked);
    ASSERT_EQ(code, 200) << asked;
    EXPECT_EQ(got, expected) << target << "\n" << got.dump() << "\n" << expected.dump();
  }
}

TEST_F(LiveRunTest, ACopyMadeIntoAnEarlierCopysMemoryAnswersAsTheWrittenSnapshot) {
  // Copies no reader holds any more are kept and the next copy is made into their memory (no page faults), so such a
  // copy must be the state of its own instant, not the earlier one's: the queue of JobsPagesFromTheCopy...,
  // read while it runs (copies every 100 ms of wall time, each then replaced and let go), then paused and read until
  // a copy is made into a reused one; the Overview, the node list, Jobs pages, a job and the waits from that copy equal
  // what the snapshot written of the same state answers, at its second and earlier ones. (Copying the state only into a
  // fresh copy fails this: the reused one is of an earlier second.)
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  run_to_the_200th_submit(live, [&] { EXPECT_EQ(call(api, "GET", "/api/overview").first, 200); });
  ASSERT_GE(live.status().submitted, 200u);
  ASSERT_LT(live.status().submitted, 300u);
  const std::int64_t now = live.status().now_s;
  const std::uint64_t reused_before = live.status().reused_copies;
  EXPECT_GT(reused_before, 0u);  // copies while running were made into reused ones too
  // While paused a copy is made for a reader at most every half refresh_ms; the pause (an operator's action) asks one.
  // Read until one of them is made into a reused copy: the answers below then come from it (or a later one).
  for (int i = 0; i < 100 && live.status().reused_copies == reused_before; ++i) {
    ASSERT_EQ(call(api, "GET", "/api/overview").first, 200);
    ASSERT_EQ(call(api, "GET", "/api/jobs").first, 200);
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(live.status().reused_copies, reused_before);
  std::vector<std::pair<std::string, json>> answers;
  for (const std::string& target : std::vector<std::string>{
           "/api/overview", "/api/nodes", "/api/jobs", "/api/jobs?filter=pending&sort=priority&order=desc",
           "/api/jobs?filter=pending&sort=submit_time&order=desc", "/api/jobs?filter=running&sort=start_time",
           "/api/jobs?filter=completed&offset=20", "/api/jobs/200",
           "/api/jobs?filter=pending&sort=submit_time&order=desc&t=" + std::to_string(now - 300),
           "/api/jobs?sort=state&t=" + std::to_string(now - 600), "/api/waits",
           "/api/waits?points=20&t=" + std::to_string(now - 600)}) {
    auto [code, body] = call(api, "GET", target);
    ASSERT_EQ(code, 200) << target << " " << body.dump();
    answers.emplace_back(target, std::move(body));
  }
  EXPECT_EQ(answers[0].second.at("snapshot_s"), now);
  EXPECT_GT(answers[0].second.at("running_jobs").get<int>(), 0);
  EXPECT_GT(answers[2].second.at("counts").at("PENDING").get<int>(), 5);
  EXPECT_EQ(live.status().snapshots, 0u);
  EXPECT_GT(answers[10].second.at("jobs").get<int>(), 100);
  EXPECT_EQ(answers[11].second.at("cdf").at("wait").size(), 20u);

  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  const DashboardApi written(snap->dir, dir_ / "no-assets");
  for (auto& [target, got] : answers) {
    const std::string asked =
        target.find("&t=") != std::string::npos
            ? target
            : target + (target.find('?') == std::string::npos ? "?" : "&") + "t=" + std::to_string(now);
    auto [code, expected] = call(written, "GET", asked);
    ASSERT_EQ(code, 200) << asked;
    if (target == "/api/overview") expected["snapshot_s"] = now;  // a folder says its end, the live API the copy's
    EXPECT_EQ(got, expected) << target << "\n" << got.dump() << "\n" << expected.dump();
  }
}

TEST_F(LiveRunTest, ClusterSeriesAndMetricsFromTheCopyEqualTheWrittenSnapshots) {
  // The queue paused part way, a few hundred seconds after an operator drained g002 and an XID 31 struck GPU 5 of
  // g004 (a node condition and an XID in the history): the Monitoring tab's cluster series (whole, thinned, a window),
  // its all-nodes overlay and a node's per-GPU drill-down, and /metrics (both label sets, the copy's second asked for
  // or not), answered from the copy in memory with no snapshot written, equal byte for byte what the snapshot written
  // of the same state answers at that second.
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  run_to_the_200th_submit(live);
  const std::int64_t drained = live.drain_node("g002", "maint");
  live.inject_fault("g004", 31, 5);
  run_until(live, drained + 400);
  ASSERT_GE(live.status().now_s, drained + 400);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const std::int64_t now = live.status().now_s;
  const std::vector<std::string> targets = {
      "/api/series/cluster",
      "/api/series/cluster?points=37",
      "/api/series/cluster?from=3000&to=" + std::to_string(now - 500) + "&points=200",
      "/api/series/cluster?to=" + std::to_string(now + 5000),
      "/metrics",
      "/metrics?labels=snake",
      "/metrics?t=" + std::to_string(now),
      "/api/series/nodes",
      "/api/series/nodes?points=50&lines=3&from=10000&to=" + std::to_string(now - 100),
      "/api/nodes/g004/gpus",
      "/api/nodes/g001/gpus?from=0&points=40&to=" + std::to_string(now)};
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  EXPECT_EQ(live.status().snapshots, 0u);
  const json series = json::parse(answers[0]);
  ASSERT_GT(series.at("time").size(), 100u);
  EXPECT_GT(series.at("time").back().get<std::int64_t>(), now - 300);  // thinned to 600 points of 30 s
  EXPECT_GT(*std::max_element(series.at("running").begin(), series.at("running").end()), json(3));
  EXPECT_EQ(series.at("nodes_drain").back(), 1);  // g002
  EXPECT_EQ(json::parse(answers[1]).at("time").size(), 37u);
  EXPECT_NE(answers[4].find("Hostname=\"g004\"} 31\n"), std::string::npos);  // DCGM_FI_DEV_XID_ERRORS
  EXPECT_NE(answers[4].find("slurm_nodes_drain 1\n"), std::string::npos);
  EXPECT_NE(answers[5].find("hostname=\"g001\""), std::string::npos);
  const json overlay = json::parse(answers[7]);
  EXPECT_EQ(overlay.at("nodes_sampled"), 6);
  EXPECT_EQ(overlay.at("lines").size(), 6u);
  EXPECT_EQ(json::parse(answers[8]).at("lines").size(), 3u);
  const json drill = json::parse(answers[9]).at("gpus");
  ASSERT_EQ(drill.size(), 8u);
  EXPECT_EQ(drill.at("5").at("xid").back(), 31);
  try {
    (void)get(api, "/api/nodes/g999/gpus");
    ADD_FAILURE() << "an unknown node's drill-down was answered";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.status(), 404);
  }

  // A later second than the copy's shows the series up to the copy's.
  EXPECT_EQ(json::parse(answers[3]).at("time"), series.at("time"));

  // The written folder ends at its last submit (not yet made): ask it for the copy's second.
  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  const DashboardApi written(snap->dir, dir_ / "no-assets");
  const std::string at_now = std::to_string(now);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (i == 3) continue;
    std::string target = targets[i];
    if (i == 0 || i == 7 || i == 9) target += "?to=" + at_now;
    if (i == 1) target += "&to=" + at_now;
    if (i == 4) target += "?t=" + at_now;
    if (i == 5) target += "&t=" + at_now;
    const HttpResponse expected = get(written, target);
    ASSERT_EQ(expected.status, 200) << target;
    expect_same_body(target, answers[i], expected.body);
  }
}

TEST_F(LiveRunTest, TheEventLogFromTheCopyEqualsTheWrittenSnapshots) {
  // The queue paused part way, a few hundred seconds after an operator drained g002 and two XIDs struck g004 and g003
  // at the same second (two fault lines of one time, which the written log orders its own way): the Logs tab's event
  // log answered from the copy in memory, with no snapshot written, equals what the snapshot written of the same state
  // answers at that second and earlier ones, for every kind, small and large limits, as JSON and as text.
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  run_to_the_200th_submit(live);
  const std::int64_t drained = live.drain_node("g002", "maint");
  live.inject_fault("g004", 31, 5);
  live.inject_fault("g003", 13, 2);
  run_until(live, drained + 400);
  ASSERT_GE(live.status().now_s, drained + 400);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const std::int64_t now = live.status().now_s;
  const std::string at = "t=" + std::to_string(now);
  const std::vector<std::string> targets = {"/api/events?" + at,
                                            "/api/events?limit=7&" + at,
                                            "/api/events?limit=100000&" + at,
                                            "/api/events?kind=node&limit=25&" + at,
                                            "/api/events?kind=fault&" + at,
                                            "/api/events?kind=job&limit=1000&" + at,
                                            "/api/events?kind=preemption&" + at,
                                            "/api/events?kind=scaling&" + at,
                                            "/api/events?limit=40&t=" + std::to_string(drained),
                                            "/api/events?limit=300&t=" + std::to_string(now - 20000),
                                            "/api/events?format=text&limit=60&" + at};
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  EXPECT_EQ(live.status().snapshots, 0u);
  // The default asks for the copy's second.
  EXPECT_EQ(get(api, "/api/events").body, answers[0]);
  const json faults = json::parse(answers[4]).at("events");
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].at("time"), faults[1].at("time"));
  EXPECT_NE(answers[2].find("now DRAIN"), std::string::npos);
  EXPECT_GT(json::parse(answers[5]).at("events").size(), 300u);

  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  expect_written_answers(DashboardApi(snap->dir, dir_ / "no-assets"), targets, answers);
}

TEST_F(LiveRunTest, TheGanttFromTheCopyEqualsTheWrittenSnapshots) {
  // The queue paused part way, after an operator drained g002: the Gantt answered from the copy in memory, with no
  // snapshot written, equals what the snapshot written of the same state answers for windows up to the copy's second
  // (the default, earlier windows, node ranges, exact segments and the density grid). Past the copy's second the
  // running jobs end at it, where the written snapshot draws them on to the end of its RunView (its last submit).
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  run_to_the_200th_submit(live);
  const std::int64_t drained = live.drain_node("g002", "maint");
  run_until(live, drained + 300);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const std::int64_t now = live.status().now_s;
  const std::string to = "to=" + std::to_string(now);
  const std::vector<std::string> targets = {
      "/api/gantt?" + to,
      "/api/gantt?from=0&" + to,
      "/api/gantt?from=" + std::to_string(now - 3000) + "&" + to,
      "/api/gantt?from=" + std::to_string(now / 3) + "&to=" + std::to_string(now / 2) + "&node_from=1&node_to=3",
      "/api/gantt?width=40&height=2&" + to,
      "/api/gantt?from=" + std::to_string(now - 1) + "&" + to,
      "/api/gantt?from=0&to=1"};
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  EXPECT_EQ(live.status().snapshots, 0u);
  EXPECT_EQ(get(api, "/api/gantt").body, answers[0]);  // the default window ends at the copy's second
  EXPECT_EQ(get(api, "/api/gantt?from=" + std::to_string(now - 3000)).body, answers[2]);  // so does one with `from`
  const json all = json::parse(answers[1]);
  ASSERT_TRUE(all.at("exact").get<bool>());
  EXPECT_GT(all.at("segments").size(), 4u * 100);
  EXPECT_FALSE(json::parse(answers[4]).at("exact").get<bool>());
  EXPECT_EQ(call(api, "GET", "/api/gantt?node_to=abc").first, 400);

  // Past the copy's second: the jobs still running end at it.
  const json later = json::parse(get(api, "/api/gantt?from=0&to=" + std::to_string(now + 100000)).body);
  const json& segments = later.at("segments");
  std::size_t running = 0;
  for (std::size_t i = 0; i + 3 < segments.size(); i += 4) {
    EXPECT_LE(segments[i + 2].get<std::int64_t>(), now);
    running += segments[i + 2].get<std::int64_t>() == now ? 1 : 0;
  }
  EXPECT_GT(running, 0u);

  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  expect_written_answers(DashboardApi(snap->dir, dir_ / "no-assets"), targets, answers);
}

TEST_F(LiveRunTest, SlurmrestdReadsFromTheCopyEqualTheWrittenSnapshots) {
  // The queue of JobsPagesFromTheCopyEqualTheWrittenSnapshots, paused part way after an operator's drain of g002:
  // every read endpoint of the slurmrestd-compatible API, v0.0.41-v0.0.44, answered from the copy in memory (no
  // snapshot written), equals, byte for byte, what the snapshot written of the same state answers through its
  // RunView at that second (jobs with their GPU indices per node, nodes, partitions, diag, slurmdb).
  const std::unique_ptr<LiveRun> run = start_queue();
  LiveRun& live = *run;
  run_to_the_200th_submit(live);  // paused between the 200th and the last submit
  ASSERT_GE(live.status().submitted, 200u);
  live.drain_node("g002", "maint");
  const auto present = live.present_slurm();
  ASSERT_NE(present, nullptr);
  ASSERT_NE(present->slurm(), nullptr);
  EXPECT_EQ(live.status().snapshots, 0u);
  const SlurmApi from_copy(*present->slurm(), {});
  // A running job (its GPU indices), a pending one, one ended within MinJobAge or long ago.
  const json jobs = json::parse(get(from_copy, "/slurm/v0.0.44/jobs").body).at("jobs");
  ASSERT_GT(jobs.size(), 5u);
  std::vector<std::string> ids;
  bool gres_indices = false;
  for (const json& j : jobs) {
    ids.push_back(std::to_string(j.at("job_id").get<std::int64_t>()));
    gres_indices |= j.dump().find("IDX:") != std::string::npos;
  }
  EXPECT_TRUE(gres_indices);  // what the GPU placement shows
  const std::vector<std::string> some = {ids.front(), ids[ids.size() / 2], ids.back(), "1", "2", "424242"};
  std::vector<std::string> targets;
  for (const char* v : {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}) {
    const std::string slurm = std::string("/slurm/") + v, db = std::string("/slurmdb/") + v;
    for (const char* path : {"/ping", "/diag", "/jobs", "/nodes", "/node/g002", "/node/nope", "/partitions",
                             "/partition/small", "/reservations"})
      targets.push_back(slurm + path);
    for (const std::string& id : some) targets.push_back(slurm + "/job/" + id);
    for (const char* path : {"/jobs", "/jobs?start_time=0&end_time=100000000", "/qos", "/accounts", "/associations"})
      targets.push_back(db + path);
    for (const std::string& id : some) targets.push_back(db + "/job/" + id);
  }
  std::vector<HttpResponse> answers;
  for (const std::string& target : targets) answers.push_back(get(from_copy, target));
  EXPECT_EQ(live.status().snapshots, 0u);  // nothing written for them

  const auto snap = live.snapshot();  // paused: the same state, written
  ASSERT_EQ(snap->now_s, present->now_s());
  const SlurmApi written(snap->slurm(), {});
  std::size_t ok = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const HttpResponse expected = get(written, targets[i]);
    EXPECT_EQ(answers[i].status, expected.status) << targets[i];
    EXPECT_EQ(answers[i].body, expected.body) << targets[i];
    ok += answers[i].status == 200;
  }
  EXPECT_GT(ok, targets.size() / 2);
}

TEST_F(LiveRunTest, TheOverviewAnswersFromTheCopyWhileTheHistoryNeedsASnapshot) {
  // The Overview's and the Jobs tab's reads do not wait for a snapshot to be written; an Overview at a second in the
  // past does (the written snapshot is the run's history); after an operator's action the in-memory answer shows it
  // at once.
  auto live = start(0, true);
  run_past_the_second_submit(*live);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  // Paused at 10 s: job 1 runs on n01 (from 3 s), job 2 was just submitted (it would start at 13 s).
  auto [status, body] = call(api, "GET", "/api/overview");
  ASSERT_EQ(status, 200);
  const std::int64_t now = body.at("snapshot_s").get<std::int64_t>();
  EXPECT_EQ(body.at("running_jobs"), 1);
  EXPECT_EQ(body.at("pending_jobs"), 1);
  EXPECT_EQ(live->status().snapshots, 0u);
  std::tie(status, body) = call(api, "GET", "/api/jobs");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body.at("counts").at("PENDING"), 1);
  EXPECT_EQ(body.at("t"), now);
  EXPECT_EQ(live->status().snapshots, 0u);
  // A second before the copy's: from the written snapshot, which knows the run's history (job 2 not yet submitted).
  std::tie(status, body) = call(api, "GET", "/api/overview?t=5");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body.at("t"), 5);
  EXPECT_EQ(body.at("running_jobs"), 1);
  EXPECT_EQ(body.at("pending_jobs"), 0);
  EXPECT_EQ(body.at("snapshot_s"), now);
  const std::uint64_t copies = live->status().copies;
  ASSERT_EQ(call(api, "POST", "/api/control/node/drain", R"({"node": "n01", "reason": "maint"})").first, 200);
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(node_named(body.at("nodes"), "n01")->at("state"), "DRAINING");  // its job still runs
  EXPECT_GT(live->status().copies, copies);
  // Once the run has ended, its results answer.
  live->stop();
  ASSERT_TRUE(live->wait_finished(20s));
  EXPECT_EQ(live->present(), nullptr);
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(node_named(body.at("nodes"), "n01")->at("state"), "DRAINING");
  std::tie(status, body) = call(api, "GET", "/api/overview");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(body.at("running_jobs"), 1);  // stopped there (t: the results' end)
}

TEST_F(LiveRunTest, ASecondBetweenTwoCopiesIsAnsweredByTheEarlier) {
  // A page asks for the second the clock last showed, which a copy made since may have passed: the copy before the
  // newest (its figures made) answers it, still without a snapshot; a second before both needs the written one.
  LiveOptions options;
  options.start_paused = true;
  options.refresh_ms = 100;
  options.out_dir = dir_ / "out";
  std::ofstream(dir_ / "profiled.json") << kProfiledScenario;
  LiveRun live(load_scenario((dir_ / "profiled.json").string()), RunOptions{}, options);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const auto run_to = [&](std::int64_t second) {
    live.set_speed(2000);
    live.resume();
    wait_for_second(live, second);
    live.pause();
  };
  run_to(300);
  auto [status, first] = call(api, "GET", "/api/overview");
  ASSERT_EQ(status, 200);
  const std::int64_t a = first.at("snapshot_s").get<std::int64_t>();
  run_to(a + 600);
  std::this_thread::sleep_for(200ms);  // past refresh_ms: the next read asks for a copy
  json second;
  for (int i = 0; i < 1500; ++i) {  // up to 30 s for the present thread (niceness 19) on a loaded machine
    std::tie(status, second) = call(api, "GET", "/api/overview");
    if (second.at("snapshot_s") != a) break;
    std::this_thread::sleep_for(20ms);
  }
  const std::int64_t b = second.at("snapshot_s").get<std::int64_t>();
  ASSERT_GT(b, a + 100);
  json between;
  std::tie(status, between) = call(api, "GET", "/api/overview?t=" + std::to_string(b - 1));
  ASSERT_EQ(status, 200);
  EXPECT_EQ(between.at("snapshot_s"), a);
  EXPECT_EQ(between, first);
  std::tie(status, between) = call(api, "GET", "/api/nodes?t=" + std::to_string(a));
  ASSERT_EQ(status, 200);
  EXPECT_EQ(between.at("t"), a);
  EXPECT_EQ(live.status().snapshots, 0u);
  std::tie(status, between) = call(api, "GET", "/api/overview?t=" + std::to_string(a - 1));
  ASSERT_EQ(status, 200);
  EXPECT_EQ(between.at("t"), a - 1);
  EXPECT_EQ(live.status().snapshots, 1u);
}

TEST_F(LiveRunTest, StopEndsTheRunWhereItIsAndWritesItsResults) {
  // Ctrl-C: the simulation stops at its current time; the results are those of a run stopped then.
  auto live = start(0, true);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  ASSERT_EQ(call(api, "POST", "/api/control/speed", R"({"factor": 10000})").first, 200);
  ASSERT_EQ(call(api, "POST", "/api/control/resume").first, 200);
  // About 5,000 simulated seconds in half a second: jobs 1 and 2 done, job 3 not submitted. Then past 2,010 s at
  // least, waiting up to 20 s for a starved simulation thread.
  std::this_thread::sleep_for(500ms);
  wait_for_second(*live, 2011);
  live->stop();
  ASSERT_TRUE(live->wait_finished(20s));
  const std::int64_t stopped = live_now(api);
  EXPECT_GT(stopped, 2010);
  EXPECT_LT(stopped, 100000);
  const RunView results(dir_ / "out");
  EXPECT_EQ(results.job(1, stopped)->state, "COMPLETED");
  EXPECT_EQ(results.job(2, stopped)->state, "COMPLETED");
  // Job 3 (submitted at 100,000 s, 100 s long) never ran: the run ended where it was stopped, as `run --until`.
  const auto job3 = results.job(3, 200000);
  ASSERT_TRUE(job3.has_value());
  EXPECT_EQ(job3->state, "PENDING");
  EXPECT_EQ(job3->start_s, -1);
}

/// The property names of schema `name` of the recorded 25.11 OpenAPI spec.
std::vector<std::string> spec_properties(const std::string& name) {
  std::ifstream in(std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/recorded/25.11/openapi-v3.json");
  const json spec = json::parse(in);
  std::vector<std::string> out;
  for (const auto& [key, value] : spec.at("components").at("schemas").at(name).at("properties").items()) {
    out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> keys(const json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(LiveRunTest, SlurmrestdNodeUpdateAndJobCancelInV0044Shape) {
  auto live = start(0, true);
  const DashboardApi dashboard(*live, dir_ / "no-assets", kToken);
  LiveSlurmWriter writer(*live);
  SlurmApiOptions options;
  options.writer = &writer;
  options.write_token = kToken;
  std::string user_token = kToken;
  const auto send = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.headers["x-slurm-user-token"] = user_token;
    const auto snap = dashboard.snapshot();
    const HttpResponse response = SlurmApi(snap->slurm(), options).handle(r);
    return std::make_pair(response.status, json::parse(response.body));
  };
  const auto node_state = [&](const std::string& name) {
    return node_named(call(dashboard, "GET", "/api/nodes?gpu=false").second.at("nodes"), name)->at("state");
  };
  // Writes need the control token (no JWT key here): without it, slurmrestd's authentication error, and no drain.
  user_token = "";
  auto [status, body] = send("POST", "/slurm/v0.0.44/node/n02", R"({"state": ["DRAIN"]})");
  EXPECT_EQ(status, 511);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 1007);
  user_token = "wrong";
  std::tie(status, body) = send("DELETE", "/slurm/v0.0.44/job/1");
  EXPECT_EQ(status, 511);
  EXPECT_EQ(node_state("n02"), "IDLE");
  user_token = kToken;
  // Node update, as slurmrestd's v0.0.44 POST node/{name} (update_node_msg in, openapi_resp out).
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/node/n02", R"({"state": ["DRAIN"], "reason": "via rest"})");
  EXPECT_EQ(status, 200) << body.dump();
  EXPECT_EQ(keys(body), spec_properties("v0.0.44_openapi_resp"));
  EXPECT_EQ(body.at("errors"), json::array());
  EXPECT_EQ(node_state("n02"), "DRAINED");
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/node/n02", R"({"state": ["RESUME"]})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(node_state("n02"), "IDLE");
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/node/n99", R"({"state": ["DRAIN"]})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2018);
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/node/n01", R"({"state": ["POWER_UP"]})");
  EXPECT_EQ(status, 500);
  EXPECT_NE(body.at("errors").at(0).at("description").get<std::string>().find("DRAIN, RESUME or UNDRAIN"),
            std::string::npos);
  // No reboot through it either: slurmctld's update_node takes no REBOOT_REQUESTED (the README's "Restart a node").
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/node/n01", R"({"state": ["REBOOT_REQUESTED"]})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(node_state("n01"), "IDLE");
  std::tie(status, body) = send("POST", "/slurm/v0.0.43/node/n02", R"({"state": ["DRAIN"]})");
  EXPECT_EQ(status, 403);  // writes only in v0.0.44's shape
  EXPECT_EQ(node_state("n02"), "IDLE");

  // Job cancel. Paused before the first instant, job 1 is not submitted: slurmctld would not know it.
  std::tie(status, body) = send("DELETE", "/slurm/v0.0.44/job/1");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2017);
  // Job 2 is submitted at 10 s and would start at 11 s: pause in between (10x to second 8, then real time, so the
  // pause has a second of wall time to land).
  ASSERT_EQ(call(dashboard, "POST", "/api/control/speed", R"({"factor": 10})").first, 200);
  ASSERT_EQ(call(dashboard, "POST", "/api/control/resume").first, 200);
  wait_for_second(*live, 8);
  ASSERT_EQ(call(dashboard, "POST", "/api/control/speed", R"({"factor": 1})").first, 200);
  for (int i = 0; i < 2000 && live->status().submitted < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(call(dashboard, "POST", "/api/control/pause").first, 200);
  std::tie(status, body) = send("DELETE", "/slurm/v0.0.44/job/2");
  EXPECT_EQ(status, 200) << body.dump();
  EXPECT_EQ(keys(body), spec_properties("v0.0.44_openapi_kill_job_resp"));
  EXPECT_EQ(call(dashboard, "GET", "/api/jobs/2").second.at("state"), "CANCELLED");
  std::tie(status, body) = send("DELETE", "/slurm/v0.0.44/job/2");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2021);
  // The simulation honours it: job 2 never runs; the run ends with job 1 and job 3 completed.
  ASSERT_EQ(call(dashboard, "POST", "/api/control/speed", R"({"factor": "max"})").first, 200);
  ASSERT_EQ(call(dashboard, "POST", "/api/control/resume").first, 200);
  ASSERT_TRUE(live->wait_finished(20s));
  const RunView results(dir_ / "out");
  EXPECT_EQ(results.job(2, 200000)->state, "CANCELLED");
  EXPECT_EQ(results.job(2, 200000)->start_s, -1);
  EXPECT_EQ(results.job(1, 200000)->state, "COMPLETED");
  EXPECT_EQ(results.job(3, 200000)->state, "COMPLETED");
}

TEST_F(LiveRunTest, ASubmittedJobIsScheduledRecordedAndGetsTheNextId) {
  // Slurm policy. Jobs 1 and 2 hold n01 and n02 from 3 s and 11 s (as a batch run of the scenario has them) for
  // 1,000 s. A whole-node job submitted at s (10 < s < 1,000) with gputwin:run=500 waits for the first node that
  // frees: job 1 ends at 1,003 and releases n01, and the epilog-complete pass starts it there at once (as job 2 in
  // the drain test), so it runs 1,003-1,503. Its id is 4 (after the largest, 3); its submit time is s.
  auto live = start(0, true);
  run_past_the_second_submit(*live);
  JobSpec spec;
  spec.name = "live-submit";
  spec.user = "u3";
  spec.account = "acc";
  spec.nodes = 1;
  spec.cpus = 8;
  spec.gpus_per_node = 8;
  spec.time_limit_s = 2000;
  spec.run_time_s = 500;
  const LiveSubmitted done = live->submit_job(spec);
  EXPECT_EQ(done.job_id, 4);
  EXPECT_EQ(done.refused, PendingReason::kNone);
  EXPECT_GE(done.time, 10);
  EXPECT_LT(done.time, 1000);
  EXPECT_EQ(live->status().total_jobs, 4u);
  // Slurm's checks at submit: no such partition (2000, nothing recorded); more GPUs than any node has: refused
  // (BadConstraints, 2014 through the API) and recorded REJECTED with the next id, 5.
  JobSpec lost = spec;
  lost.partition = "nope";
  try {
    live->submit_job(lost);
    ADD_FAILURE() << "an unknown partition was taken";
  } catch (const LiveError& e) {
    EXPECT_EQ(e.slurm_error(), 2000);
  }
  JobSpec huge = spec;
  huge.gpus_per_node = 16;
  const LiveSubmitted refused = live->submit_job(huge);
  EXPECT_EQ(refused.job_id, 5);
  EXPECT_EQ(refused.refused, PendingReason::kBadConstraints);
  live->set_speed(0);
  live->resume();
  ASSERT_TRUE(live->wait_finished(20s));
  const RunView results(dir_ / "out");
  const auto job4 = results.job(4, 200000);
  ASSERT_TRUE(job4.has_value());
  EXPECT_EQ(job4->submit_s, done.time);
  EXPECT_EQ(job4->start_s, 1003);
  EXPECT_EQ(job4->end_s, 1503);
  EXPECT_EQ(job4->node_list, "n01");
  EXPECT_EQ(job4->state, "COMPLETED");
  const auto job5 = results.job(5, 200000);
  ASSERT_TRUE(job5.has_value());
  EXPECT_EQ(job5->state, "REJECTED");
  EXPECT_EQ(job5->start_s, -1);
  // The loaded jobs kept their schedule (a batch run of the scenario: job 2 at 11 s).
  EXPECT_EQ(results.job(2, 200000)->start_s, 11);
  EXPECT_EQ(results.job(3, 200000)->state, "COMPLETED");
}

TEST_F(LiveRunTest, AHeldJobWaitsForItsReleaseAndATimeLimitUpdateKillsIt) {
  // EASY backfill (a classic policy plans at the end of each instant, and an operator's action is one). Jobs 1 and
  // 2 run 0-1,000 on n01 and 10-1,010 on n02. Submitted between 10 and 1,000 s: H (held, whole node, run 100) then
  // P (whole node, run 50). P starts at 1,000 on n01 although H came first; n02 frees at 1,010 and H, held, stays
  // pending. At T (about 5,000 s) H's time limit is set to 1 minute and it is released: both nodes are idle, so H
  // starts at T on n01 and its limit kills it at T + 60 (TIMEOUT), before its 100 s of work.
  auto live = start(0, true, SchedulerPolicy::kEasy);
  run_past_the_second_submit(*live);
  JobSpec spec;
  spec.user = "u3";
  spec.account = "acc";
  spec.nodes = 1;
  spec.cpus = 8;
  spec.gpus_per_node = 8;
  spec.time_limit_s = 2000;
  spec.run_time_s = 100;
  const LiveSubmitted held = live->submit_job(spec, true);
  spec.run_time_s = 50;
  const LiveSubmitted plain = live->submit_job(spec);
  ASSERT_EQ(held.job_id, 4);
  ASSERT_EQ(plain.job_id, 5);
  // A held job's priority cannot be set (2042); a running one takes no update (2073); an unknown id: 2017.
  const auto slurm_error = [&](std::int64_t id, const LiveJobUpdate& update) {
    try {
      live->update_job(id, update);
    } catch (const LiveError& e) {
      return e.slurm_error();
    }
    return 0;
  };
  EXPECT_EQ(slurm_error(4, LiveJobUpdate{std::nullopt, 7, std::nullopt}), 2042);
  EXPECT_EQ(slurm_error(1, LiveJobUpdate{true, std::nullopt, std::nullopt}), 2073);
  EXPECT_EQ(slurm_error(99, LiveJobUpdate{true, std::nullopt, std::nullopt}), 2017);
  live->set_speed(10000);
  live->resume();
  std::this_thread::sleep_for(500ms);  // about 5,000 simulated seconds: past 1,050, well before 100,000
  wait_for_second(*live, 1051);
  live->pause();
  std::this_thread::sleep_for(100ms);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  auto [status, body] = call(api, "GET", "/api/jobs/4");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("state"), "PENDING");
  EXPECT_EQ(body.at("reason"), "JobHeldAdmin");
  EXPECT_EQ(slurm_error(5, LiveJobUpdate{true, std::nullopt, std::nullopt}), 2021);  // P has ended
  EXPECT_EQ(slurm_error(4, LiveJobUpdate{std::nullopt, std::nullopt, 60}), 0);
  const std::int64_t released = live->update_job(4, LiveJobUpdate{false, std::nullopt, std::nullopt});
  EXPECT_GT(released, 1050);
  live->set_speed(0);
  live->resume();
  ASSERT_TRUE(live->wait_finished(20s));
  const RunView results(dir_ / "out");
  const auto p = results.job(5, 200000);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->start_s, 1000);
  EXPECT_EQ(p->end_s, 1050);
  EXPECT_EQ(p->node_list, "n01");
  const auto h = results.job(4, 200000);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->submit_s, held.time);
  EXPECT_EQ(h->start_s, released);
  EXPECT_EQ(h->end_s, released + 60);
  EXPECT_EQ(h->state, "TIMEOUT");
  EXPECT_EQ(h->node_list, "n01");
}

TEST_F(LiveRunTest, SlurmrestdSubmitAndUpdateThroughTheLiveRun) {
  // The slurmrestd-compatible writes end to end: submitted in v0.0.44 shape (the run time from the comment), read
  // back with GET job/{id}, held and released.
  auto live = start(0, true);
  const DashboardApi dashboard(*live, dir_ / "no-assets", kToken);
  LiveSlurmWriter writer(*live);
  SlurmApiOptions options;
  options.writer = &writer;
  options.write_token = kToken;
  const auto send = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.headers["x-slurm-user-token"] = kToken;
    const auto snap = dashboard.snapshot();
    const HttpResponse response = SlurmApi(snap->slurm(), options).handle(r);
    return std::make_pair(response.status, json::parse(response.body));
  };
  auto [status, body] = send("POST", "/slurm/v0.0.44/job/submit",
                             R"({"job": {"name": "rest", "account": "acc", "user_id": "u9", "nodes": "1",
                                 "tres_per_node": "gres/gpu:h100:4", "minimum_cpus": 4,
                                 "time_limit": {"set": true, "number": 30}, "comment": "gputwin:run=600",
                                 "script": "#!/bin/bash\ntrue\n", "environment": ["PATH=/bin"]}})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("job_id"), 4);
  std::tie(status, body) = send("GET", "/slurm/v0.0.44/job/4");
  ASSERT_EQ(status, 200) << body.dump();
  const json& job = body.at("jobs").at(0);
  EXPECT_EQ(job.at("name"), "rest");
  EXPECT_EQ(job.at("user_name"), "u9");
  EXPECT_EQ(job.at("job_state"), json::array({"PENDING"}));
  EXPECT_EQ(job.at("time_limit").at("number"), 30);
  // Slurm's refusals: an unknown partition (2000), a bad account is recorded and refused only when associations
  // are enforced (not here: auto associations), a job no node can hold (2014).
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/submit", R"({"job": {"partition": "cpu"}})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2000);
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/submit", R"({"job": {"tres_per_node": "gres/gpu:9"}})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2014);
  // Hold and release through POST job/{id}.
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/4", R"({"hold": true})");
  ASSERT_EQ(status, 200) << body.dump();
  std::tie(status, body) = send("GET", "/slurm/v0.0.44/job/4");
  EXPECT_EQ(body.at("jobs").at(0).at("state_reason"), "JobHeldAdmin");
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/4", R"({"priority": {"set": true, "number": 5}})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2042);
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/4", R"({"hold": false})");
  EXPECT_EQ(status, 200) << body.dump();
  std::tie(status, body) = send("POST", "/slurm/v0.0.44/job/424242", R"({"hold": false})");
  EXPECT_EQ(body.at("errors").at(0).at("error_number"), 2017);
  ASSERT_EQ(call(dashboard, "POST", "/api/control/resume").first, 200);
  ASSERT_TRUE(live->wait_finished(20s));
  const RunView results(dir_ / "out");
  const auto job4 = results.job(4, 200000);
  ASSERT_TRUE(job4.has_value());
  EXPECT_EQ(job4->state, "COMPLETED");
  EXPECT_EQ(job4->end_s - job4->start_s, 600);
}

TEST_F(LiveRunTest, InjectAndScaleControls) {
  // An XID injected on a node through the dashboard control: XID 79 (the GPU fell off the bus) strikes n01 through
  // the fault mechanics (the scenario has no /faults: a live run carries them with no random faults), which the
  // fault log records. Scaling needs a cloud pool, which this scenario has not: 409.
  auto live = start(0, true);
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  auto [status, body] = call(api, "POST", "/api/control/node/inject", R"({"node": "n01", "xid": 79})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("struck"), true);
  EXPECT_EQ(body.at("effect"), "reboot_node");
  EXPECT_EQ(body.at("time"), 0);
  for (const auto& [text, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"xid": 79})", "node"},
                                                        {R"({"node": "n01"})", "xid"},
                                                        {R"({"node": "n01", "xid": "79"})", "xid"},
                                                        {R"({"node": "n01", "xid": -3})", "xid"},
                                                        {R"({"node": "n01", "xid": 79, "gpu": 8})", "gpu"},
                                                        {R"({"node": "n01", "xid": 77777})", "xid"},
                                                        {R"({"node": "n01", "xid": 9999})", "xid"}}) {
    std::tie(status, body) = call(api, "POST", "/api/control/node/inject", text);
    EXPECT_EQ(status, 400) << text << " " << body.dump();
    EXPECT_EQ(body.at("error").get<std::string>().rfind("field '" + field + "'", 0), 0u) << text << body.dump();
  }
  std::tie(status, body) = call(api, "POST", "/api/control/node/inject", R"({"node": "n99", "xid": 79})");
  EXPECT_EQ(status, 404);
  std::tie(status, body) = call(api, "POST", "/api/control/scale", R"({"action": "up", "count": 2})");
  EXPECT_EQ(status, 409) << body.dump();
  std::tie(status, body) = call(api, "POST", "/api/control/scale", R"({"action": "sideways", "count": 2})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'action'", 0), 0u);
  std::tie(status, body) = call(api, "POST", "/api/control/scale", R"({"action": "up", "count": 0})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(body.at("error").get<std::string>().rfind("field 'count'", 0), 0u);
  std::tie(status, body) = call(api, "POST", "/api/control/scale", R"({"action": "up"})", "Bearer nope");
  EXPECT_EQ(status, 401);
  ASSERT_EQ(call(api, "POST", "/api/control/speed", R"({"factor": "max"})").first, 200);
  ASSERT_EQ(call(api, "POST", "/api/control/resume").first, 200);
  ASSERT_TRUE(live->wait_finished(20s));
  const RunOutcome* outcome = live->outcome();
  ASSERT_NE(outcome, nullptr);
  ASSERT_NE(fault_log(*outcome), nullptr);
  ASSERT_EQ(fault_log(*outcome)->faults.size(), 1u);
  EXPECT_EQ(fault_log(*outcome)->faults[0].xid, 79u);
  EXPECT_EQ(fault_log(*outcome)->faults[0].node, 0u);
}

TEST_F(LiveRunTest, ScaleUpAndDownAPool) {
  // A pool of 4 cloud nodes (min 0), all powered down at the start, and no job until 100,000 s: scale up 2 powers
  // up c1 and c2 (lowest first); scaling down 5 powers down the idle ones that are up, as the autoscaler would.
  std::ofstream(dir_ / "pool.json") << R"({
    "name": "pool", "seed": 1,
    "cluster": {"nodes": [{"prefix": "c", "count": 4, "digits": 1, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100"}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
    "autoscaler": {"nodes": "c[1-4]", "min_nodes": 0, "max_nodes": 4, "idle_window_s": 100000},
    "workload": {"jobs": [{"id": 1, "cpus": 8, "run_time": 10, "submit": 100000}]},
    "scheduler": {"policy": "fcfs"}})";
  LiveOptions options;
  options.start_paused = true;
  options.refresh_ms = 200;
  LiveRun live(load_scenario((dir_ / "pool.json").string()), RunOptions{}, options);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  auto [status, body] = call(api, "POST", "/api/control/scale", R"({"action": "up", "count": 2})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("nodes"), json::array({"c1", "c2"}));
  // The scaling controller's records reach the stream as they are made (kind "scaling", as in the event log), after
  // the operator's action; paused at the start, the clock is at the first submit (100,000 s).
  std::string stream;
  for (const LiveEvent& e : live.events_after(0, 100, 0ms)) {
    if (e.kind != "node") stream += std::to_string(e.time) + " " + e.kind + " " + e.subject + " " + e.text + "\n";
  }
  EXPECT_EQ(stream,
            "100000 action cluster scale up 2: 2 node(s)\n"
            "100000 scaling c1 create (demand 0 node(s))\n"
            "100000 scaling c2 create (demand 0 node(s))\n");
  std::tie(status, body) = call(api, "GET", "/api/nodes?gpu=false");
  EXPECT_EQ(node_named(body.at("nodes"), "c1")->at("state"), "POWERING_UP");
  EXPECT_EQ(node_named(body.at("nodes"), "c3")->at("state"), "POWERED_DOWN");
  // Up only once booted: a scale down now finds no idle node in service.
  std::tie(status, body) = call(api, "POST", "/api/control/scale", R"({"action": "down", "count": 5})");
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.at("nodes"), json::array());
  live.stop();
}

TEST_F(LiveRunTest, ControllerRecordsStreamAsTheEventLogHasThem) {
  // An autoscaled cloud cluster with a spend quota and an operation, run live at full speed: the stream's scaling,
  // quota and operation events are, line for line (time, subject, text), the results' event log of those kinds.
  std::ofstream(dir_ / "cloud.json") << kCloudScenario;
  LiveOptions options;
  options.out_dir = dir_ / "out";
  options.event_buffer = 1'000'000;
  LiveRun live(load_scenario((dir_ / "cloud.json").string()), RunOptions{}, options);
  ASSERT_TRUE(live.wait_finished(60s));
  std::map<std::string, std::string> streamed, logged;
  for (const LiveEvent& e : live.events_after(0, 1'000'000, 0ms)) {
    if (e.kind == "scaling" || e.kind == "quota" || e.kind == "operation")
      streamed[e.kind] += std::to_string(e.time) + "|" + e.subject + "|" + e.text + "\n";
  }
  const RunView results(dir_ / "out");
  for (const char* kind : {"scaling", "quota", "operation"}) {
    for (const EventLine& e : results.events(results.info().end_s + 1, 100000, kind))
      logged[kind] += std::to_string(e.time) + "|" + e.subject + "|" + e.text + "\n";
    EXPECT_FALSE(logged[kind].empty()) << kind;
    EXPECT_EQ(streamed[kind], logged[kind]) << kind;
  }
  EXPECT_NE(logged["scaling"].find("|create (demand "), std::string::npos);
  EXPECT_NE(logged["scaling"].find("|ready\n"), std::string::npos);
  EXPECT_NE(logged["quota"].find("|user001|warn: spend "), std::string::npos);
  EXPECT_EQ(logged["operation"], "3600|cluster|update_image img2: start\n");
}

TEST_F(LiveRunTest, CostsAndControllerRecordsFromTheCopyEqualTheWrittenSnapshots) {
  // The cloud cluster paused part way: the Costs page's series answered from the copy in memory (so far: a last
  // point per scope at the copy's second, as the run's end closes them), with no snapshot written, equal what the
  // snapshot written of the same state answers, for every scope and window (the default window ends at the copy's
  // second); so do the event log's scaling, quota and operation lines.
  const std::unique_ptr<LiveRun> run = start_scenario("cloud.json", kCloudScenario, true);
  LiveRun& live = *run;
  live.set_speed(10000);
  live.resume();
  wait_for_second(live, 40000);
  live.pause();
  const std::int64_t now = live.status().now_s;
  ASSERT_GE(now, 40000);
  ASSERT_LT(now, 100000);  // paused before the end
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const json first = json::parse(get(api, "/api/costs").body);
  const std::vector<std::string> scopes = first.at("scopes").get<std::vector<std::string>>();
  for (const char* scope : {"account:acct01", "account:acct02", "cluster", "idle", "user:user001"})
    EXPECT_NE(std::find(scopes.begin(), scopes.end(), scope), scopes.end()) << scope;
  const json& times = first.at("series").at("time");
  ASSERT_GE(times.size(), 12u);  // t = 0, every 3,600 s, and the copy's second
  EXPECT_EQ(times.back(), now);
  EXPECT_EQ(first.at("to"), now);
  EXPECT_GT(first.at("series").at("total_usd").back().get<double>(), 0.0);
  const std::string to = "&to=" + std::to_string(now);
  std::vector<std::string> targets;
  for (const std::string& scope : scopes) targets.push_back("/api/costs?scope=" + scope + to);
  targets.push_back("/api/costs?scope=cluster&from=7200&to=" + std::to_string(now - 1));
  targets.push_back("/api/costs?scope=idle&points=3" + to);
  const std::string at = "&t=" + std::to_string(now);
  for (const char* kind : {"scaling", "quota", "operation"})
    targets.push_back(std::string("/api/events?limit=100000&kind=") + kind + at);
  targets.push_back("/api/events?limit=300" + at);
  targets.push_back("/api/events?kind=scaling&limit=5&t=3600");
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  const auto cluster = std::find(scopes.begin(), scopes.end(), "cluster") - scopes.begin();
  EXPECT_EQ(get(api, "/api/costs?scope=cluster").body, answers[static_cast<std::size_t>(cluster)]);
  EXPECT_EQ(call(api, "GET", "/api/costs?scope=nobody").first, 400);
  EXPECT_EQ(call(api, "GET", "/api/costs?points=1").first, 400);
  const std::size_t events = targets.size() - 5;  // the first of the event log's targets
  EXPECT_NE(answers[events].find("create (demand "), std::string::npos) << answers[events];
  EXPECT_NE(answers[events + 1].find("warn: spend "), std::string::npos) << answers[events + 1];
  EXPECT_NE(answers[events + 2].find("update_image img2: start"), std::string::npos) << answers[events + 2];
  EXPECT_EQ(live.status().snapshots, 0u);

  const auto snap = live.snapshot();
  ASSERT_EQ(snap->now_s, now);
  expect_written_answers(DashboardApi(snap->dir, dir_ / "no-assets"), targets, answers);
  live.stop();
}

TEST_F(LiveRunTest, ARunThatFailsMidwayIsReportedNotServedFromFreedMemory) {
  // 101 whole-node jobs killed at 999,999,960 s each chain past the bound on simulated time (1e11 s): the run
  // throws after its events began (tests/sim/time_bound_test.cpp). The live run says so and serves nothing stale.
  std::string list;
  for (int i = 1; i <= 101; ++i) {
    list += (i > 1 ? "," : "") + std::string(R"({"id": )") + std::to_string(i) +
            R"(, "cpus": 4, "run_time": 1000000000, "time_limit": 16666666})";
  }
  Scenario scenario = parse_scenario(R"({"name": "chain", "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 4}],
    "partitions": [{"name": "p", "nodes": "ALL", "default": true}]}, "workload": {"jobs": [)" +
                                         list + R"(]}, "scheduler": {"policy": "fcfs"}})",
                                     "chain.json", "/base");
  LiveOptions options;
  options.out_dir = dir_ / "out";
  LiveRun live(std::move(scenario), RunOptions{}, options);
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  ASSERT_TRUE(live.wait_finished(60s));
  const LiveStatus status = live.status();
  EXPECT_EQ(status.state, "failed");
  EXPECT_NE(status.error.find("simulated seconds"), std::string::npos) << status.error;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out" / "summary.json"));
  // No snapshot was ever taken: the readers get a 503 naming the failure.
  const auto [code, body] = call(api, "GET", "/api/overview");
  EXPECT_EQ(code, 503);
  EXPECT_NE(body.at("error").get<std::string>().find("simulated seconds"), std::string::npos) << body.dump();
  // The stream's last event says it failed (the run's own last events were dropped with its state).
  const auto events = live.events_after(0, 100000, 0ms);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().text.rfind("failed: ", 0), 0u) << events.back().text;
}

TEST_F(LiveRunTest, OurTwinClientDrainsANodeThroughTheLiveSlurmrestdApi) {
  // The twin's own slurmrestd client (twin/rest), as it would act on a real cluster, against a live run.
  auto live = start(0, true);
  LiveSlurmWriter writer(*live);
  SlurmApiOptions api_options;
  api_options.writer = &writer;
  api_options.write_token = kToken;
  HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  HttpServer server(options, [&](const HttpRequest& r) {
    const auto snap = live->snapshot();
    return SlurmApi(snap->slurm(), api_options).handle(r);
  });
  ClientOptions client_options;
  client_options.url = server.url();
  client_options.token = kToken;
  client_options.retries = 0;
  client_options.on_warning = [](const std::string&) {};
  SlurmrestdClient client(client_options);
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k44);
  ASSERT_TRUE(client.can_update_nodes());
  client.update_node("n01", R"({"state": ["DRAIN"], "reason": "twin"})");
  const std::vector<RestNode> nodes = client.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "n01");
  EXPECT_EQ(nodes[0].flags, (std::vector<std::string>{"DRAIN"}));
  EXPECT_TRUE(nodes[1].flags.empty());
  EXPECT_THROW(client.cancel_job(424242), std::exception);  // Slurm's 2017 comes back as an error
  // It submits jobs too, and reads them back: one whole-node job held at submit, released by an update.
  const std::uint64_t id = client.submit_job(
      R"({"job": {"name": "from-twin", "account": "acc", "user_id": "twin", "nodes": "1", "minimum_cpus": 8,
          "tres_per_node": "gres/gpu:8", "time_limit": 10, "comment": "gputwin:run=120", "hold": true,
          "script": "#!/bin/bash\n", "environment": ["PATH=/bin"]}})");
  EXPECT_EQ(id, 4u);
  const auto find = [&](std::uint64_t job_id) {
    for (const RestJob& j : client.jobs())
      if (j.job_id == job_id) return j;
    return RestJob{};
  };
  RestJob job = find(id);
  EXPECT_EQ(job.name, "from-twin");
  EXPECT_EQ(job.user, "twin");
  EXPECT_EQ(job.state, "PENDING");
  EXPECT_EQ(job.reason, "JobHeldAdmin");
  EXPECT_EQ(job.time_limit_s, std::optional<std::int64_t>(600));
  client.update_job(id, R"({"hold": false})");
  EXPECT_THROW(client.update_job(id, R"({"comment": "x"})"), std::exception);  // a field gputwin does not take
}

TEST_F(LiveRunTest, TheEndsCopyAnswersTheCostsAsTheResultsDo) {
  // The cloud cluster at full speed, held at its end (after the last copy, before the results are written): the
  // Costs tab answered from the end's copy equals, byte for byte, what the results answer once written (the run's
  // end has closed the cost meter's series by then; the copy must take the closed log, not the meter's remains).
  ThreadHold end_hold(true);
  const std::unique_ptr<LiveRun> run = start_scenario("cloud.json", kCloudScenario, false, end_hold.hook());
  const std::shared_ptr<void> unhold = end_hold.open_on_exit();
  LiveRun& live = *run;
  ASSERT_TRUE(end_hold.wait_arrived(60s));
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const std::vector<std::string> targets = {"/api/costs?scope=cluster", "/api/costs?scope=idle&points=5",
                                            "/api/costs?scope=user:user002", "/api/events?kind=scaling&limit=100000"};
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  EXPECT_EQ(live.status().snapshots, 0u);
  EXPECT_GT(json::parse(answers[0]).at("series").at("time").size(), 25u);  // every 3,600 s over about 107,000 s
  end_hold.set_closed(false);
  ASSERT_TRUE(live.wait_finished(60s));
  const DashboardApi results(dir_ / "out", dir_ / "no-assets");
  expect_written_answers(results, targets, answers);
}

TEST_F(LiveRunTest, TheEndIsWrittenAsASnapshotOnlyWhenASnapshotReaderAsks) {
  // The queue at full speed, held at its end (after the last copy, before the results are written): the Overview,
  // the Jobs tab, the event log, the Gantt and the slurmrestd-compatible source answer from the end's copy, parts
  // nobody read during the run included, and no snapshot is written for them (before, the end was always written as
  // one beside the results). A snapshot reader (an earlier second: here snapshot()) then gets the end
  // written, once, and it answers the same pages byte for byte.
  ThreadHold end_hold(true);
  const std::unique_ptr<LiveRun> run = start_scenario("queue.json", kQueueScenario, false, end_hold.hook());
  const std::shared_ptr<void> unhold = end_hold.open_on_exit();
  LiveRun& live = *run;
  ASSERT_TRUE(end_hold.wait_arrived(60s));
  const DashboardApi api(live, dir_ / "no-assets", kToken);
  const auto [overview_status, overview] = call(api, "GET", "/api/overview");
  ASSERT_EQ(overview_status, 200);
  const std::int64_t end = overview.at("snapshot_s").get<std::int64_t>();  // the end's copy
  ASSERT_GT(end, 51436);                                                   // past the last submit
  // Long enough for the end's snapshot to be written, had it been handed over (a few tens of ms for this run).
  std::this_thread::sleep_for(1s);
  const std::string at = "t=" + std::to_string(end);
  const std::vector<std::string> targets = {
      "/api/overview?" + at, "/api/jobs?" + at, "/api/jobs?filter=completed&sort=start_time&order=desc&" + at,
      "/api/events?limit=500&" + at, "/api/gantt?from=0&to=" + std::to_string(end)};
  std::vector<std::string> answers;
  ASSERT_NO_FATAL_FAILURE(get_all(api, targets, answers));
  EXPECT_NE(live.present_slurm(), nullptr);
  EXPECT_EQ(live.status().snapshots, 0u);
  EXPECT_EQ(live.status().snapshot_wall_s, 0.0);  // nothing written, nor being written
  EXPECT_EQ(json::parse(answers[0]).at("snapshot_s"), end);
  EXPECT_GT(json::parse(answers[1]).at("counts").at("COMPLETED").get<int>(), 100);

  // The writing runs at niceness 19: on a machine busy with other tests it may take longer than one request waits
  // (30 s), which then answers 503 "try again", as a client would.
  std::shared_ptr<const RunSnapshot> snap;
  for (int attempt = 0; attempt < 6 && snap == nullptr; ++attempt) {
    try {
      snap = live.snapshot();
    } catch (const LiveError& e) {
      ASSERT_EQ(e.status(), 503) << e.what();
    }
  }
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->now_s, end);
  EXPECT_EQ(live.status().snapshots, 1u);
  EXPECT_GT(live.status().snapshot_wall_s, 0.0);
  EXPECT_EQ(live.snapshot(), snap);  // once
  // All but the Overview, whose snapshot_s differs by design (a folder says its end, the live API the copy's second).
  expect_written_answers(DashboardApi(snap->dir, dir_ / "no-assets"), {targets.begin() + 1, targets.end()},
                         {answers.begin() + 1, answers.end()});

  end_hold.set_closed(false);
  ASSERT_TRUE(live.wait_finished(60s));
  EXPECT_EQ(live.status().state, "ended");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out" / "jobs.csv"));
}

TEST_F(LiveRunTest, AnActionShowsEvenBeforeThePresentThreadMadeTheCopysFigures) {
  // A paused run whose present thread is held (as a busy machine may starve it at niceness 19): after an operator
  // drains a node, a copy is made for a snapshot reader, and the next Overview and node list must come from it, not
  // from the last copy whose figures the present thread made (the same second, before the drain). Before the fix
  // they showed the node IDLE, as LiveRunTest.SlurmrestdNodeUpdateAndJobCancelInV0044Shape once did under load.
  ThreadHold present_hold(false);
  LiveOptions options;
  options.start_paused = true;
  options.refresh_ms = 60'000;  // copies are reused: only the action asks for a new one
  options.out_dir = dir_ / "out";
  options.before_present = present_hold.hook();
  auto live = std::make_unique<LiveRun>(load_scenario((dir_ / "live.json").string()), RunOptions{}, options);
  const std::shared_ptr<void> unhold = present_hold.open_on_exit();
  const DashboardApi api(*live, dir_ / "no-assets", kToken);
  const auto node_state = [&](const std::string& name) {
    return node_named(call(api, "GET", "/api/nodes?gpu=false").second.at("nodes"), name)->at("state");
  };
  ASSERT_EQ(node_state("n02"), "IDLE");
  // The present thread made that copy's figures (it was not held): wait until the Overview comes from a made one.
  for (int i = 0; i < 2000 && live->status().copies == 0; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(200ms);
  present_hold.set_closed(true);
  live->drain_node("n02", "held present");
  (void)live->snapshot();  // a copy made after the drain, for the snapshot; its figures wait for the held thread
  EXPECT_EQ(node_state("n02"), "DRAINED");
  EXPECT_EQ(call(api, "GET", "/api/overview").second.at("node_groups").at("DRAIN"), 1);
}

}  // namespace
}  // namespace gputwin
