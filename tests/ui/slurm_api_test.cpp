// The slurmrestd-compatible API over the hand-made run (tests/ui/hand_made_run.hpp): what slurmctld and slurmdbd
// would answer at a time, worked out by hand; the not-found, version, write and JWT answers of Slurm 25.11; and our
// own twin client reading it back over HTTP.
#include "ui/slurm_api.hpp"

#include <gtest/gtest.h>
#include <jwt.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>

#include "results/run_view.hpp"
#include "tests/ui/hand_made_run.hpp"
#include "twin/rest/slurmrestd_client.hpp"
#include "ui/http_server.hpp"
#include "ui/run_view_slurm_source.hpp"

namespace gputwin {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kEpoch = kDefaultEpochUnixS;  // the hand-made run records no epoch

HttpRequest get(std::string path) {
  HttpRequest r;
  r.method = "GET";
  r.path = std::move(path);
  return r;
}

Json body(const HttpResponse& r) {
  return Json::parse(r.body);
}

/// Job ids of a jobs reply.
std::vector<std::int64_t> job_ids(const Json& reply) {
  std::vector<std::int64_t> ids;
  for (const Json& j : reply.at("jobs")) ids.push_back(j.at("job_id").get<std::int64_t>());
  return ids;
}

std::string token(const std::string& key, const std::string& user, std::int64_t expires) {
  jwt_t* jwt = nullptr;
  jwt_new(&jwt);
  jwt_add_grant_int(jwt, "iat", std::time(nullptr));
  jwt_add_grant_int(jwt, "exp", expires);
  jwt_add_grant(jwt, "sun", user.c_str());
  jwt_set_alg(jwt, JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(key.data()), static_cast<int>(key.size()));
  char* text = jwt_encode_str(jwt);
  std::string out = text;
  free(text);  // libjwt 1.10 returns malloc()ed text
  jwt_free(jwt);
  return out;
}

// A node_list or partition node list that is not a hostlist (a damaged results.sqlite) lists no nodes for that row
// instead of making every jobs and nodes answer fail (std::invalid_argument; found by fuzz_results_sql).
TEST_F(HandMadeRun, ANodeListThatIsNotAHostlistListsNoNodes) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(
                db, "UPDATE jobs SET node_list = 'n[001-000]' WHERE job_id = 4; UPDATE partitions SET nodes = 'n[2-'",
                nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const RunView view(dir_);
  const RunViewSlurmSource source(view, 250);
  const SlurmApi api(source, {});
  const HttpResponse jobs = api.handle(get("/slurm/v0.0.44/jobs"));
  EXPECT_EQ(jobs.status, 200);
  EXPECT_EQ(api.handle(get("/slurm/v0.0.44/nodes")).status, 200);
  EXPECT_EQ(api.handle(get("/slurmdb/v0.0.44/jobs")).status, 200);
}

TEST_F(HandMadeRun, ControllerJobsAreThoseSlurmctldStillHolds) {
  const RunView view(dir_);
  // At 150: 1 ended at 110 (40 s ago, inside MinJobAge 300), 2 running, 3 cancelled at 50 (100 s ago), 4 pending;
  // 5 is not submitted yet.
  const RunViewSlurmSource at150(view, 150);
  const SlurmApi api(at150, {});
  const Json jobs = body(api.handle(get("/slurm/v0.0.44/jobs")));
  EXPECT_EQ(job_ids(jobs), (std::vector<std::int64_t>{1, 2, 3, 4}));
  const Json& running = jobs.at("jobs").at(1);
  EXPECT_EQ(running.at("job_state"), Json::array({"RUNNING"}));
  EXPECT_EQ(running.at("start_time").at("number"), kEpoch + 110);
  EXPECT_EQ(running.at("end_time").at("number"), kEpoch + 110 + 600);  // start + time limit while running
  EXPECT_EQ(running.at("time_limit").at("number"), 10);                // 600 s in minutes
  EXPECT_EQ(running.at("gres_detail"), Json::array({"gpu:h100:4(IDX:0-3)"}));
  EXPECT_EQ(running.at("tres_alloc_str"), "cpu=4,node=1,billing=4,gres/gpu=4");
  EXPECT_EQ(running.at("job_resources").at("nodes").at("allocation").at(0).at("cpus").at("count"), 4);
  EXPECT_EQ(running.at("user_name"), "bob");
  const Json& pending = jobs.at("jobs").at(3);
  EXPECT_EQ(pending.at("job_state"), Json::array({"PENDING"}));
  EXPECT_EQ(pending.at("state_reason"), "Resources");  // job_reasons: Resources from 150
  EXPECT_TRUE(pending.at("job_resources").is_null());
  EXPECT_EQ(jobs.at("jobs").at(0).at("exit_code").at("status"), Json::array({"SUCCESS"}));
  EXPECT_EQ(jobs.at("jobs").at(2).at("exit_code").at("signal").at("name"), "TERM");  // CANCELLED
  EXPECT_EQ(jobs.at("last_update").at("number"), kEpoch + 150);

  // At 500: 1 (ended 390 s ago) and 3 are purged; 2 ended 200 s ago; 4 runs; 5 pends.
  const RunViewSlurmSource at500(view, 500);
  const SlurmApi api500(at500, {});
  EXPECT_EQ(job_ids(body(api500.handle(get("/slurm/v0.0.44/jobs")))), (std::vector<std::int64_t>{2, 4, 5}));
  // A purged job answers as slurmctld does: 404 with error 2017 and an empty list.
  const HttpResponse gone = api500.handle(get("/slurm/v0.0.44/job/1"));
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.content_type, "application/json");
  const Json gone_body = body(gone);
  EXPECT_TRUE(gone_body.at("jobs").empty());
  EXPECT_EQ(gone_body.at("errors").at(0).at("error_number"), 2017);
  EXPECT_EQ(gone_body.at("errors").at(0).at("description"), "Unable to query JobId=1");
  // ... while slurmdbd still has it.
  const Json accounted = body(api500.handle(get("/slurmdb/v0.0.44/job/1")));
  ASSERT_EQ(accounted.at("jobs").size(), 1u);
  EXPECT_EQ(accounted.at("jobs").at(0).at("time").at("elapsed"), 100);
  EXPECT_EQ(accounted.at("jobs").at(0).at("time").at("start"), kEpoch + 10);
  EXPECT_EQ(accounted.at("jobs").at(0).at("state").at("current"), Json::array({"COMPLETED"}));
}

TEST_F(HandMadeRun, NodesCarryTheirAllocationAndState) {
  const RunView view(dir_);
  const RunViewSlurmSource at150(view, 150);
  const SlurmApi api(at150, {});
  const Json nodes = body(api.handle(get("/slurm/v0.0.43/nodes/")));  // trailing slash, as the spec's paths
  ASSERT_EQ(nodes.at("nodes").size(), 2u);
  const Json& n1 = nodes.at("nodes").at(0);
  EXPECT_EQ(n1.at("name"), "n1");
  EXPECT_EQ(n1.at("state"), Json::array({"MIXED"}));  // node_events: MIXED from 110
  EXPECT_EQ(n1.at("alloc_cpus"), 4);                  // job 2's 4 CPUs
  EXPECT_EQ(n1.at("gres"), "gpu:h100:8");
  EXPECT_EQ(n1.at("gres_used"), "gpu:h100:4(IDX:0-3)");
  EXPECT_EQ(n1.at("partitions"), Json::array({"gpu"}));
  const Json& n2 = nodes.at("nodes").at(1);
  EXPECT_EQ(n2.at("state"), Json::array({"IDLE", "DRAIN"}));  // DRAINED from 120 to 180, nothing on it
  EXPECT_EQ(n2.at("gres_used"), "gpu:h100:0(IDX:N/A)");
  // One node, and an unknown one (200 with an error and no nodes key, as slurmctld).
  EXPECT_EQ(body(api.handle(get("/slurm/v0.0.44/node/n2"))).at("nodes").size(), 1u);
  const HttpResponse unknown = api.handle(get("/slurm/v0.0.44/node/n9"));
  EXPECT_EQ(unknown.status, 200);
  const Json unknown_body = body(unknown);
  EXPECT_FALSE(unknown_body.contains("nodes"));
  EXPECT_EQ(unknown_body.at("errors").at(0).at("description"), "Failure to query node n9");
}

TEST_F(HandMadeRun, AccountingAnswersQosAccountsAssociationsAndJobWindows) {
  const RunView view(dir_);
  const RunViewSlurmSource at500(view, 500);
  const SlurmApi api(at500, {});
  const Json qos = body(api.handle(get("/slurmdb/v0.0.41/qos")));
  ASSERT_EQ(qos.at("qos").size(), 1u);
  EXPECT_EQ(qos.at("qos").at(0).at("name"), "normal");
  EXPECT_FALSE(qos.at("qos").at(0).at("limits").at("max").at("jobs").contains("count"));  // v0.0.41 has none
  const Json accounts = body(api.handle(get("/slurmdb/v0.0.44/accounts")));
  std::vector<std::string> names;
  for (const Json& a : accounts.at("accounts")) names.push_back(a.at("name"));
  EXPECT_EQ(names, (std::vector<std::string>{"cv", "ml", "root"}));
  // root, cv, ml, then (cv, bob), (cv, carol), (ml, alice), (ml, bob): bob's default is cv (first by name).
  const Json assoc = body(api.handle(get("/slurmdb/v0.0.44/associations"))).at("associations");
  ASSERT_EQ(assoc.size(), 7u);
  EXPECT_EQ(assoc.at(3).at("user"), "bob");
  EXPECT_EQ(assoc.at(3).at("account"), "cv");
  EXPECT_EQ(assoc.at(3).at("lineage"), "/cv/0-bob/");
  EXPECT_TRUE(assoc.at(3).at("is_default"));
  EXPECT_FALSE(assoc.at(6).at("is_default"));  // (ml, bob)
  // Jobs of a window: start_time 250 .. end_time 500 (Unix): 2 (ended 300), 4 (running), 5 (submitted 400).
  const auto window = [&](std::int64_t from, std::int64_t to) {
    HttpRequest r = get("/slurmdb/v0.0.44/jobs");
    r.query["start_time"] = std::to_string(kEpoch + from);
    r.query["end_time"] = std::to_string(kEpoch + to);
    return job_ids(body(api.handle(r)));
  };
  EXPECT_EQ(window(250, 500), (std::vector<std::int64_t>{2, 4, 5}));
  EXPECT_EQ(window(0, 25), (std::vector<std::int64_t>{1, 2, 3}));
  HttpRequest bad = get("/slurmdb/v0.0.44/jobs");
  bad.query["start_time"] = "yesterday";
  EXPECT_EQ(api.handle(bad).status, 400);
  // slurmdbd's answer for a job it never saw: 200, no jobs, a warning.
  const Json none = body(api.handle(get("/slurmdb/v0.0.44/job/77")));
  EXPECT_TRUE(none.at("jobs").empty());
  EXPECT_EQ(none.at("warnings").at(0).at("description"), "slurmdb_jobs_get() found nothing");
  // diag counts at 500: 5 submitted, 1 pending, 1 running, 1 completed, 2 failed (FAILED, CANCELLED).
  const Json diag = body(api.handle(get("/slurm/v0.0.44/diag"))).at("statistics");
  EXPECT_EQ(diag.at("jobs_submitted"), 5);
  EXPECT_EQ(diag.at("jobs_pending"), 1);
  EXPECT_EQ(diag.at("jobs_running"), 1);
}

TEST_F(HandMadeRun, VersionsPathsAndWritesAnswerAsSlurmrestd) {
  const RunView view(dir_);
  const RunViewSlurmSource source(view, 150);
  const SlurmApi api(source, {});
  for (const char* version : {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}) {
    const HttpResponse ping = api.handle(get(std::string("/slurm/") + version + "/ping"));
    EXPECT_EQ(ping.status, 200);
    const Json b = body(ping);
    EXPECT_EQ(b.at("meta").at("plugin").at("data_parser"), std::string("data_parser/") + version);
    EXPECT_EQ(b.at("meta").at("slurm").at("cluster"), "hand");
    EXPECT_EQ(b.at("pings").at(0).contains("responding"), std::string(version) != "v0.0.41");
  }
  // Unknown versions and paths: 404 text/plain, so that clients probing versions go on to the next.
  for (const char* path : {"/slurm/v0.0.40/ping", "/slurm/v0.0.44/licenses", "/openapi/v3", "/", "/slurm"}) {
    const HttpResponse r = api.handle(get(path));
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.content_type, "text/plain") << path;
  }
  HttpRequest post = get("/slurm/v0.0.44/job/4");
  post.method = "POST";
  post.body = R"({"priority": 9})";
  const HttpResponse refused = api.handle(post);
  EXPECT_EQ(refused.status, 403);
  EXPECT_FALSE(body(refused).at("errors").empty());
  // A method that is not UTF-8 is quoted with U+FFFD in its place (dump() threw, a 500 with nlohmann's message; found
  // by fuzz_slurmrestd_http).
  post.method = "P\xffST";
  const HttpResponse odd = api.handle(post);
  EXPECT_EQ(odd.status, 403);
  EXPECT_NE(body(odd).at("errors").at(0).at("description").get<std::string>().find("P\xEF\xBF\xBDST"),
            std::string::npos);
}

/// A live run's writes as the API hands them over: it keeps what it was given and answers as told.
class RecordingWriter final : public SlurmWriter {
 public:
  std::pair<int, std::string> update_node(const std::string&, bool, const std::string&) override { return {0, ""}; }
  std::pair<int, std::string> cancel_job(std::int64_t) override { return {0, ""}; }
  SlurmSubmitResult submit_job(const JobSpec& spec, bool hold) override {
    submitted = spec;
    held = hold;
    ++submits;
    return submit_answer;
  }
  std::pair<int, std::string> update_job(std::int64_t job_id, const SlurmJobUpdate& update) override {
    updated_id = job_id;
    last_update = update;
    ++updates;
    return update_answer;
  }
  JobSpec submitted;
  bool held = false;
  int submits = 0;
  std::int64_t updated_id = 0;
  SlurmJobUpdate last_update;
  int updates = 0;
  SlurmSubmitResult submit_answer{77, 0, ""};
  std::pair<int, std::string> update_answer{0, ""};
};

/// The property names of schema `name` of the recorded 25.11 OpenAPI spec.
std::vector<std::string> spec_properties(const std::string& name) {
  std::ifstream in(std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/recorded/25.11/openapi-v3.json");
  const Json spec = Json::parse(in);
  std::vector<std::string> out;
  for (const auto& [key, value] : spec.at("components").at("schemas").at(name).at("properties").items())
    out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(HandMadeRun, JobSubmitAndUpdateAreReadAsSlurmrestdTakesThem) {
  const RunView view(dir_);
  const RunViewSlurmSource source(view, 150);
  RecordingWriter writer;
  SlurmApiOptions options;
  options.writer = &writer;
  options.write_token = "t0k";
  const SlurmApi api(source, options);
  const auto post = [&](const std::string& path, const std::string& text) {
    HttpRequest r = get(path);
    r.method = "POST";
    r.body = text;
    r.headers["x-slurm-user-token"] = "t0k";
    r.headers["x-slurm-user-name"] = "bob";
    const HttpResponse response = api.handle(r);
    EXPECT_EQ(response.content_type, "application/json") << path << " " << text;
    return std::make_pair(response.status, body(response));
  };

  // A submit as real clients send it (job_desc_msg with script, environment, ...): the fields gputwin takes.
  auto [status, reply] = post("/slurm/v0.0.44/job/submit", R"({"job": {"name": "train", "partition": "gpu",
      "account": "lab", "qos": "high", "time_limit": {"set": true, "infinite": false, "number": 60}, "nodes": "2",
      "tres_per_node": "gres/gpu:h100:8", "tasks": 2, "cpus_per_task": 16,
      "memory_per_node": {"set": true, "number": 4096}, "comment": "smoke gputwin:run=1800",
      "script": "#!/bin/bash\nsleep 1\n", "environment": ["PATH=/bin"], "current_working_directory": "/tmp",
      "user_id": "alice"}})");
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_EQ(keys_of(reply), spec_properties("v0.0.44_openapi_job_submit_response"));
  EXPECT_EQ(reply.at("job_id"), 77);
  EXPECT_EQ(reply.at("step_id"), "batch");
  EXPECT_EQ(reply.at("job_submit_user_msg"), "");
  EXPECT_EQ(reply.at("errors"), Json::array());
  EXPECT_EQ(reply.at("warnings"), Json::array());
  const JobSpec& s = writer.submitted;
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.account, "lab");
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.user, "alice");
  EXPECT_EQ(s.time_limit_s, 3600);
  EXPECT_EQ(s.nodes, 2u);
  EXPECT_EQ(s.gpus_per_node, 8u);
  EXPECT_EQ(s.cpus, 32u);
  EXPECT_EQ(s.mem_per_node_mb, 4096u);
  EXPECT_EQ(s.run_time_s, 1800);
  EXPECT_FALSE(writer.held);

  // Plain numbers, GPUs per job split over the nodes, the user from X-SLURM-USER-NAME, no run time (-1: the run
  // gives the job its time limit), held: a warning beside the job id.
  std::tie(status, reply) = post("/slurm/v0.0.44/job/submit", R"({"job": {"time_limit": 30, "minimum_nodes": 2,
      "tres_per_job": "gres/gpu:16", "hold": true, "priority": {"set": true, "number": 500}}})");
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_EQ(writer.submitted.time_limit_s, 1800);
  EXPECT_EQ(writer.submitted.nodes, 2u);
  EXPECT_EQ(writer.submitted.gpus_per_node, 8u);
  EXPECT_EQ(writer.submitted.cpus, 2u);
  EXPECT_EQ(writer.submitted.user, "bob");
  EXPECT_EQ(writer.submitted.run_time_s, -1);
  EXPECT_EQ(writer.submitted.priority, 500u);
  EXPECT_TRUE(writer.held);
  EXPECT_EQ(reply.at("warnings").at(0).at("description"), "Job is in held state, pending scheduler release");

  // Every bad field is a 400 naming it (slurmrestd's 9000), and nothing reaches the run.
  const int before = writer.submits;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"job": {"time_limit": "soon"}})", "time_limit"},
      {R"({"job": {"time_limit": {"set": true, "number": -5}}})", "time_limit.number"},
      {R"({"job": {"time_limit": {"set": "yes", "number": 5}}})", "time_limit.set"},
      {R"({"job": {"time_limit": 1e300}})", "time_limit"},
      {R"({"job": {"nodes": "0"}})", "nodes"},
      {R"({"job": {"nodes": "two"}})", "nodes"},
      {R"({"job": {"nodes": "4-2"}})", "nodes"},
      {R"({"job": {"minimum_nodes": 2000000}})", "minimum_nodes"},
      {R"({"job": {"tres_per_node": "gres/gpu:many"}})", "tres_per_node"},
      {R"({"job": {"tres_per_node": "cpu=4"}})", "tres_per_node"},
      {R"({"job": {"tres_per_node": "gres/gpu:99999"}})", "tres_per_node"},
      {R"({"job": {"tres_per_node": "gres/gpu:1,gres/gpu:2"}})", "tres_per_node"},
      {R"({"job": {"nodes": "3", "tres_per_job": "gres/gpu:16"}})", "tres_per_job"},
      {R"({"job": {"tasks": 2147483647, "cpus_per_task": 4}})", "tasks"},
      {R"({"job": {"cpus_per_task": 70000}})", "cpus_per_task"},
      {R"({"job": {"memory_per_node": {"set": true, "number": 18446744073709551615}}})", "memory_per_node.number"},
      {R"({"job": {"comment": "gputwin:run=-1"}})", "comment"},
      {R"({"job": {"comment": "gputwin:run=99999999999"}})", "comment"},
      {R"({"job": {"hold": "yes"}})", "hold"},
      {R"({"job": {"name": 12}})", "name"},
      {R"({"job": {"partition": "a,b"}})", "partition"},
      {R"({"job": {"array": "0-3"}})", "array"},
      {R"({"job": {"dependency": "afterok:1"}})", "dependency"},
      {R"({"job": 5})", "job"},
      {R"({"script": "x"})", "job"},
      {R"({"jobs": [{}]})", "jobs"},
  };
  for (const auto& [text, field] : bad) {
    std::tie(status, reply) = post("/slurm/v0.0.44/job/submit", text);
    EXPECT_EQ(status, 400) << text;
    EXPECT_EQ(reply.at("errors").at(0).at("error_number"), 9000) << text;
    EXPECT_EQ(reply.at("errors").at(0).at("description").get<std::string>().rfind("field '" + field + "'", 0), 0u)
        << text << " -> " << reply.dump();
  }
  std::tie(status, reply) = post("/slurm/v0.0.44/job/submit", "{\"job\": ");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(writer.submits, before);

  // A submit the run refuses: Slurm's error number, no job id.
  writer.submit_answer = SlurmSubmitResult{0, 2000, "Invalid partition name specified"};
  std::tie(status, reply) = post("/slurm/v0.0.44/job/submit", R"({"job": {"partition": "nope"}})");
  EXPECT_EQ(status, 500);
  EXPECT_FALSE(reply.contains("job_id"));
  EXPECT_EQ(reply.at("errors").at(0).at("error_number"), 2000);
  EXPECT_EQ(reply.at("errors").at(0).at("description"), "Invalid partition name specified");

  // Updates: hold, release, priority (0 holds), time limit in minutes.
  std::tie(status, reply) = post("/slurm/v0.0.44/job/4", R"({"hold": true})");
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_EQ(keys_of(reply), spec_properties("v0.0.44_openapi_job_post_response"));
  EXPECT_TRUE(reply.at("results").is_null());  // as 25.05's slurmrestd answered an update of a job (not an array)
  EXPECT_EQ(writer.updated_id, 4);
  EXPECT_EQ(writer.last_update.hold, std::optional<bool>(true));
  std::tie(status, reply) = post("/slurm/v0.0.44/job/4", R"({"hold": false, "priority": {"set": true, "number": 9}})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(writer.last_update.hold, std::optional<bool>(false));
  EXPECT_EQ(writer.last_update.priority, std::optional<std::uint32_t>(9));
  std::tie(status, reply) = post("/slurm/v0.0.44/job/4", R"({"priority": 0})");
  EXPECT_EQ(writer.last_update.hold, std::optional<bool>(true));
  EXPECT_FALSE(writer.last_update.priority.has_value());
  std::tie(status, reply) = post("/slurm/v0.0.44/job/4", R"({"time_limit": {"set": true, "number": 90}})");
  EXPECT_EQ(writer.last_update.time_limit_s, std::optional<std::int64_t>(5400));
  const int updates = writer.updates;
  for (const auto& [text, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"name": "x"})", "name"},
                                                        {R"({"hold": "no"})", "hold"},
                                                        {R"({"priority": -1})", "priority"},
                                                        {R"({"priority": {"infinite": true}})", "priority"},
                                                        {R"({"time_limit": 0})", "time_limit"},
                                                        {R"({"job_id": 5, "hold": true})", "job_id"},
                                                        {R"([1])", "body"}}) {
    std::tie(status, reply) = post("/slurm/v0.0.44/job/4", text);
    EXPECT_EQ(status, 400) << text;
    EXPECT_EQ(reply.at("errors")
                  .at(0)
                  .at("description")
                  .get<std::string>()
                  .rfind(field == "body" ? "body" : "field '" + field + "'", 0),
              0u)
        << text << " -> " << reply.dump();
  }
  EXPECT_EQ(writer.updates, updates);
  std::tie(status, reply) = post("/slurm/v0.0.44/job/abc", R"({"hold": true})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(reply.at("errors").at(0).at("error_number"), 2017);
  writer.update_answer = {2021, "Job/step already completing or completed"};
  std::tie(status, reply) = post("/slurm/v0.0.44/job/1", R"({"hold": true})");
  EXPECT_EQ(status, 500);
  EXPECT_EQ(reply.at("errors").at(0).at("error_number"), 2021);
  // Other versions take no writes.
  std::tie(status, reply) = post("/slurm/v0.0.43/job/submit", R"({"job": {}})");
  EXPECT_EQ(status, 403);
}

TEST_F(HandMadeRun, JwtIsCheckedWhenAKeyIsGiven) {
  const RunView view(dir_);
  const RunViewSlurmSource source(view, 150);
  const std::string key = "0123456789abcdef0123456789abcdef";
  const SlurmApi api(source, {.jwt_key = key});
  HttpRequest r = get("/slurm/v0.0.44/jobs");
  const HttpResponse missing = api.handle(r);
  EXPECT_EQ(missing.status, 500);  // Slurm 25.11: text/plain "Authentication does not apply to request"
  EXPECT_EQ(missing.content_type, "text/plain");
  EXPECT_EQ(missing.body, "Authentication does not apply to request");
  r.headers["x-slurm-user-name"] = "alice";
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  for (const std::string& bad : {token("another key of 32 bytes, not it!", "alice", now + 600),
                                 token(key, "alice", now - 1), token(key, "bob", now + 600), std::string("x.y.z")}) {
    r.headers["x-slurm-user-token"] = bad;
    const HttpResponse refused = api.handle(r);
    EXPECT_EQ(refused.status, 511);
    const Json b = body(refused);
    EXPECT_EQ(b.at("errors").at(0).at("error_number"), 1007);
    EXPECT_TRUE(b.at("jobs").empty());
  }
  r.headers["x-slurm-user-token"] = token(key, "alice", now + 600);
  const HttpResponse ok = api.handle(r);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(body(ok).at("meta").at("client").at("user"), "alice");
  // A root token may act as another user, as Slurm's SlurmUser/root tokens may.
  r.headers["x-slurm-user-token"] = token(key, "root", now + 600);
  EXPECT_EQ(api.handle(r).status, 200);
}

TEST_F(HandMadeRun, OurTwinClientReadsItBack) {
  const RunView view(dir_);
  const RunViewSlurmSource source(view, 150);
  const SlurmApi api(source, {});
  HttpServer::Options options;
  options.listen = "127.0.0.1:0";
  HttpServer server(options, [&api](const HttpRequest& r) { return api.handle(r); });
  ClientOptions client_options;
  client_options.url = server.url();
  client_options.retries = 0;
  client_options.on_warning = [](const std::string&) {};
  SlurmrestdClient client(client_options);
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k44);  // discovered by probing, newest first
  EXPECT_TRUE(client.ping().responding);
  const std::vector<RestNode> nodes = client.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].state, "MIXED");
  EXPECT_EQ(nodes[0].gpus, 8u);
  EXPECT_EQ(nodes[0].alloc_gpus, 4u);
  EXPECT_EQ(nodes[0].gpu_type, "h100");
  EXPECT_EQ(nodes[1].state, "IDLE");
  EXPECT_EQ(nodes[1].flags, (std::vector<std::string>{"DRAIN"}));
  const std::vector<RestJob> jobs = client.jobs();
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[1].job_id, 2u);
  EXPECT_EQ(jobs[1].state, "RUNNING");
  EXPECT_EQ(jobs[1].start_time, kEpoch + 110);
  EXPECT_EQ(jobs[1].time_limit_s, 600);
  EXPECT_EQ(jobs[1].gpus, 4u);
  EXPECT_EQ(jobs[1].nodes, "n1");
  EXPECT_EQ(jobs[3].state, "PENDING");
  EXPECT_EQ(jobs[3].reason, "Resources");
  EXPECT_EQ(jobs[3].priority, 60);
  const std::vector<RestPartition> partitions = client.partitions();
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_EQ(partitions[0].name, "gpu");
  EXPECT_EQ(client.qos().size(), 1u);
  EXPECT_EQ(client.associations().size(), 7u);
  const std::vector<RestJob> finished = client.finished_jobs(kEpoch, kEpoch + 150);
  EXPECT_EQ(finished.size(), 4u);  // every job submitted by 150
}

}  // namespace
}  // namespace gputwin
