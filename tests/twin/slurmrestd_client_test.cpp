// Tests of the slurmrestd client against a fake slurmrestd (CivetWeb) serving real recorded replies of Slurm 25.11
// (v0.0.44) and 22.05 (v0.0.38) from shared/slurmrestd: version discovery, the JWT headers, and the classification
// of every failure (connection refused or dropped, timeout, auth, HTTP errors, HTML, truncated or oversized replies,
// errors[] in a 200), retries, and that the token never reaches a message. The LiveSlurmrestd tests talk to a real
// slurmrestd when SLURMRESTD_URL and SLURM_JWT are set (shared/slurmrestd/local-slurm.sh), and skip otherwise.
#include "twin/rest/slurmrestd_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/twin/fake_slurmrestd.hpp"

namespace gputwin {
namespace {

using testing::FakeReply;
using testing::FakeSlurmrestd;

const std::string kRecorded = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/recorded/25.11/";
const std::string kExamples38 = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/examples/v0.0.38/";
const std::string kExamples43 = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/examples/v0.0.43/";
const std::string kSpec22 = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd/openapi-22.05.json";
const std::string kToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJyb290In0.SECRET-signature-0123456789";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string recorded44(const std::string& name) {
  return read_file(kRecorded + "0.0.44/" + name);
}

/// Options for `server`: fast retries, short timeouts, the test token.
ClientOptions options_for(const FakeSlurmrestd& server, std::optional<ApiVersion> version = ApiVersion::k44) {
  ClientOptions options;
  options.url = server.url() + "/";
  options.user = "root";
  options.token = kToken;
  options.version = version;
  options.connect_timeout_s = 1;
  options.timeout_s = 5;
  options.retries = 2;
  options.backoff_s = 0.01;
  options.on_warning = [](const std::string&) {};
  return options;
}

/// The SlurmrestdError `call` throws; fails the test if it throws none.
SlurmrestdError error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const SlurmrestdError& error) {
    return error;
  }
  ADD_FAILURE() << "no SlurmrestdError thrown";
  return SlurmrestdError(RestFailure::kReply, "none", 0, "none");
}

const char* kind_name(RestFailure kind) {
  switch (kind) {
    case RestFailure::kConnect:
      return "kConnect";
    case RestFailure::kTimeout:
      return "kTimeout";
    case RestFailure::kAuth:
      return "kAuth";
    case RestFailure::kHttp:
      return "kHttp";
    case RestFailure::kReply:
      return "kReply";
    case RestFailure::kSlurm:
      return "kSlurm";
    case RestFailure::kTls:
      return "kTls";
  }
  return "?";
}

#define EXPECT_KIND(error, expected) EXPECT_STREQ(kind_name((error).kind()), kind_name(expected)) << (error).what()

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- discovery

TEST(SlurmrestdClient, DiscoversV44AndNodeUpdatesFromThe2511Spec) {
  FakeSlurmrestd server;
  server.serve("GET", "/openapi/v3", FakeReply::json(read_file(kRecorded + "openapi-v3.json")));
  SlurmrestdClient client(options_for(server, std::nullopt));
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k44);
  EXPECT_TRUE(client.can_update_nodes());
  EXPECT_EQ(client.slurm_path("jobs"), "/slurm/v0.0.44/jobs");
  EXPECT_EQ(client.slurmdb_path("qos"), "/slurmdb/v0.0.44/qos");
  EXPECT_EQ(server.requests().size(), 1u);  // The spec alone decides: no probing.
}

TEST(SlurmrestdClient, DiscoversV38WithoutNodeUpdatesFromThe2205Spec) {
  FakeSlurmrestd server;
  server.serve("GET", "/openapi/v3", FakeReply::json(read_file(kSpec22)));
  SlurmrestdClient client(options_for(server, std::nullopt));
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k38);
  EXPECT_FALSE(client.can_update_nodes());
}

TEST(SlurmrestdClient, ProbesPingDownwardsWhenOpenapiIsAbsent) {
  FakeSlurmrestd server;  // /openapi/v3 and v0.0.44 ... v0.0.42 answer slurmrestd's 404.
  server.serve("GET", "/slurm/v0.0.41/ping", FakeReply::json(read_file(kRecorded + "0.0.41/slurm-ping.json")));
  server.serve("GET", "/slurm/v0.0.40/ping", FakeReply::json(read_file(kRecorded + "0.0.41/slurm-ping.json")));
  SlurmrestdClient client(options_for(server, std::nullopt));
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k41);
  EXPECT_TRUE(client.can_update_nodes());
  std::vector<std::string> paths;
  for (const auto& request : server.requests()) paths.push_back(request.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/openapi/v3", "/slurm/v0.0.44/ping", "/slurm/v0.0.43/ping",
                                             "/slurm/v0.0.42/ping", "/slurm/v0.0.41/ping"}));
}

TEST(SlurmrestdClient, ProbingFindsV38On2205) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.38/ping", FakeReply::json(read_file(kExamples38 + "ping.json")));
  SlurmrestdClient client(options_for(server, std::nullopt));
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k38);
  EXPECT_FALSE(client.can_update_nodes());
}

TEST(SlurmrestdClient, NoVersionAnsweringIsAnError) {
  FakeSlurmrestd server;
  SlurmrestdClient client(options_for(server, std::nullopt));
  SlurmrestdError error = error_of([&] { client.connect(); });
  EXPECT_KIND(error, RestFailure::kHttp);
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.38/ping"), 1u);  // 404 is not retried.
}

TEST(SlurmrestdClient, ForcedVersionIsCheckedWithPing) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.43/ping", FakeReply::json(read_file(kRecorded + "0.0.43/slurm-ping.json")));
  ClientOptions options = options_for(server, ApiVersion::k43);
  SlurmrestdClient client(options);
  client.connect();
  EXPECT_EQ(client.version(), ApiVersion::k43);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].path, "/slurm/v0.0.43/ping");

  options.version = ApiVersion::k42;  // Not served: 404.
  SlurmrestdClient wrong(options);
  EXPECT_KIND(error_of([&] { wrong.connect(); }), RestFailure::kHttp);
}

// --- requests and headers

TEST(SlurmrestdClient, SendsUserTokenAndJsonHeaders) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/nodes/", FakeReply::json(recorded44("slurm-nodes.json")));
  server.serve("POST", "/slurm/v0.0.44/job/7", FakeReply::json(read_file(kExamples43 + "job-update-response.json")));
  SlurmrestdClient client(options_for(server));
  std::vector<RestNode> nodes = client.nodes();
  EXPECT_FALSE(nodes.empty());
  client.update_job(7, R"({"priority": 100})");

  std::vector<testing::RecordedRequest> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].header("X-SLURM-USER-NAME"), "root");
  EXPECT_EQ(requests[0].header("X-SLURM-USER-TOKEN"), kToken);
  EXPECT_EQ(requests[0].header("Accept"), "application/json");
  EXPECT_EQ(requests[0].header("Content-Type"), "");
  EXPECT_EQ(requests[1].method, "POST");
  EXPECT_EQ(requests[1].path, "/slurm/v0.0.44/job/7");
  EXPECT_EQ(requests[1].header("Content-Type"), "application/json");
  EXPECT_EQ(requests[1].header("X-SLURM-USER-TOKEN"), kToken);
  EXPECT_EQ(requests[1].body, R"({"priority": 100})");
}

TEST(SlurmrestdClient, NoUserOrTokenHeaderWhenNotGiven) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/ping", FakeReply::json(recorded44("slurm-ping.json")));
  ClientOptions options = options_for(server);
  options.user.clear();
  options.token.clear();
  SlurmrestdClient client(options);
  client.ping();
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].headers.count("x-slurm-user-name"), 0u);
  EXPECT_EQ(server.requests()[0].headers.count("x-slurm-user-token"), 0u);
}

// --- authentication failures: kAuth, never retried

struct AuthCase {
  const char* name;
  std::string path;
  FakeReply reply;
};

TEST(SlurmrestdClient, AuthFailuresAreAuthAndNotRetried) {
  const std::vector<AuthCase> cases = {
      {"401 text (missing headers)", "/slurm/v0.0.44/jobs", FakeReply::text(401, "Authentication failure")},
      {"403", "/slurm/v0.0.44/jobs", FakeReply::text(403, "Forbidden")},
      {"511 expired token (25.11)", "/slurm/v0.0.44/jobs",
       FakeReply::json(recorded44("slurm-jwt-expired-token.json"), 511)},
      {"500 1007 (25.11 body)", "/slurm/v0.0.44/jobs",
       FakeReply::json(recorded44("slurm-jwt-invalid-token.json"), 500)},
      {"500 text invalid headers (25.11)", "/slurm/v0.0.44/jobs",
       FakeReply::text(500, recorded44("slurm-jwt-invalid-headers.txt"))},
      {"500 Unspecified error (22.05 bogus token)", "/slurm/v0.0.38/jobs",
       FakeReply::json(read_file(kExamples38 + "error-bad-token.json"), 500)},
  };
  for (const AuthCase& c : cases) {
    SCOPED_TRACE(c.name);
    FakeSlurmrestd server;
    server.serve("GET", c.path, c.reply);
    const bool v38 = c.path.find("v0.0.38") != std::string::npos;
    SlurmrestdClient client(options_for(server, v38 ? ApiVersion::k38 : ApiVersion::k44));
    SlurmrestdError error = error_of([&] { client.jobs(); });
    EXPECT_KIND(error, RestFailure::kAuth);
    EXPECT_EQ(error.status(), c.reply.status);
    EXPECT_EQ(error.endpoint(), "GET " + c.path);
    EXPECT_NE(std::string(error.what()).find("check the token (SLURM_JWT) and user"), std::string::npos)
        << error.what();
    EXPECT_EQ(server.count("GET", c.path), 1u);
  }
}

TEST(SlurmrestdClient, AuthErrorsInA200AreAuth) {
  FakeSlurmrestd server;  // 25.11's expired-token body, answered with 200.
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(recorded44("slurm-jwt-expired-token.json")));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kAuth);
  ASSERT_EQ(error.errors.size(), 1u);
  EXPECT_EQ(error.errors[0].error_number, 1007);
}

// --- HTTP errors

const char* kUnspecified500 = R"({"meta": {}, "errors": [{"description": "Failed while looking for jobs",
  "error_number": -1, "error": "Unspecified error", "source": "slurm_load_jobs"}], "warnings": []})";

TEST(SlurmrestdClient, Other500IsHttpRetriedWithSlurmsErrorText) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(kUnspecified500, 500));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kHttp);
  EXPECT_EQ(error.status(), 500);
  EXPECT_STREQ(error.what(),
               "GET /slurm/v0.0.44/jobs: HTTP 500: Unspecified error: Failed while looking for jobs (slurm_load_jobs)");
  ASSERT_EQ(error.errors.size(), 1u);
  EXPECT_EQ(error.errors[0].source, "slurm_load_jobs");
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 3u);  // 1 + retries (2).
}

TEST(SlurmrestdClient, RetriesUntilSuccessAndBacksOff) {
  FakeSlurmrestd server;
  server.serve_once("GET", "/slurm/v0.0.44/jobs", FakeReply::json(kUnspecified500, 503));
  server.serve_once("GET", "/slurm/v0.0.44/jobs", FakeReply::drop());
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(recorded44("slurm-jobs.json")));
  ClientOptions options = options_for(server);
  options.backoff_s = 0.1;  // Sleeps 0.1 s, then 0.2 s.
  SlurmrestdClient client(options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client.jobs().empty());
  EXPECT_GE(seconds_since(start), 0.29);
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 3u);
}

TEST(SlurmrestdClient, PostsAreNotRetried) {
  FakeSlurmrestd server;
  server.serve("POST", "/slurm/v0.0.44/job/submit", FakeReply::json(kUnspecified500, 500));
  server.serve("POST", "/slurm/v0.0.44/job/5", FakeReply::drop());
  SlurmrestdClient client(options_for(server));
  EXPECT_KIND(error_of([&] { client.submit_job("{}"); }), RestFailure::kHttp);
  EXPECT_KIND(error_of([&] { client.update_job(5, R"({"hold": true})"); }), RestFailure::kConnect);
  EXPECT_EQ(server.count("POST", "/slurm/v0.0.44/job/submit"), 1u);
  EXPECT_EQ(server.count("POST", "/slurm/v0.0.44/job/5"), 1u);
}

TEST(SlurmrestdClient, ClientErrorStatusIsNotRetried) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(recorded44("slurm-job-unfound.json"), 404));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kHttp);
  EXPECT_NE(std::string(error.what()).find("HTTP 404: Invalid job id specified"), std::string::npos) << error.what();
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 1u);
}

TEST(SlurmrestdClient, HtmlErrorPageIsReadable) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/nodes",
               FakeReply::text(502, "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>",
                               "text/html; charset=utf-8"));
  ClientOptions options = options_for(server);
  options.retries = 0;
  SlurmrestdClient client(options);
  SlurmrestdError error = error_of([&] { client.nodes(); });
  EXPECT_KIND(error, RestFailure::kHttp);
  EXPECT_EQ(error.status(), 502);
  EXPECT_STREQ(error.what(), "GET /slurm/v0.0.44/nodes: HTTP 502: not a slurmrestd reply (text/html)");
}

TEST(SlurmrestdClient, PlainTextErrorIsQuotedOnOneLine) {
  FakeSlurmrestd server;  // 25.11's own 404 text for an unknown path.
  server.serve("GET", "/slurm/v0.0.44/partitions", FakeReply::text(404, recorded44("slurm-not-found.txt")));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.partitions(); });
  EXPECT_KIND(error, RestFailure::kHttp);
  const std::string what = error.what();
  EXPECT_EQ(what.rfind("GET /slurm/v0.0.44/partitions: HTTP 404: Unable to find requested URL endpoint.", 0), 0u)
      << what;
  EXPECT_EQ(what.find('\n'), std::string::npos);
  EXPECT_LE(what.size(), 300u);  // Quotes about 200 characters, then "...".
}

// --- transport failures

TEST(SlurmrestdClient, ConnectionRefusedIsConnect) {
  int port = 0;
  {
    FakeSlurmrestd closed;  // Take a free port, then free it again.
    port = closed.port();
  }
  ClientOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(port);
  options.token = kToken;
  options.retries = 1;
  options.backoff_s = 0.01;
  SlurmrestdClient client(options);
  SlurmrestdError error = error_of([&] { client.connect(); });
  EXPECT_KIND(error, RestFailure::kConnect);
  EXPECT_EQ(error.status(), 0);
  EXPECT_EQ(error.endpoint(), "GET /openapi/v3");
  EXPECT_NE(std::string(error.what()).find("cannot connect"), std::string::npos) << error.what();
}

TEST(SlurmrestdClient, DroppedConnectionIsConnectAfterRetries) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::drop());
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kConnect);
  EXPECT_STREQ(error.what(), "GET /slurm/v0.0.44/jobs: connection closed without a reply");
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 3u);
}

// A body cut short by the connection (Content-Length says more than arrives) is kConnect: the transfer failed,
// the server or the network dropped it, and a retry may well succeed (so GETs retry it). A body that arrives
// complete but is not a whole JSON document is kReply: the server said this is the reply, and asking again would
// only get the same broken answer.
TEST(SlurmrestdClient, BodyCutByTheConnectionIsConnectAndRetried) {
  FakeSlurmrestd server;
  const std::string body = recorded44("slurm-jobs.json");
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::truncated(body, body.size() / 2));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kConnect);
  EXPECT_NE(std::string(error.what()).find("closed in the middle of the reply"), std::string::npos) << error.what();
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 3u);
}

TEST(SlurmrestdClient, CompleteButTruncatedJsonIsReplyAndNotRetried) {
  FakeSlurmrestd server;
  const std::string body = recorded44("slurm-jobs.json");
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(body.substr(0, body.size() / 2)));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kReply);
  EXPECT_EQ(error.status(), 200);
  EXPECT_NE(std::string(error.what()).find("not a complete JSON object"), std::string::npos) << error.what();
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 1u);
}

TEST(SlurmrestdClient, NonJsonSuccessIsReply) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/nodes", FakeReply::text(200, "<html><body>login</body></html>", "text/html"));
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json("[1, 2, 3]"));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError html = error_of([&] { client.nodes(); });
  EXPECT_KIND(html, RestFailure::kReply);
  EXPECT_STREQ(html.what(), "GET /slurm/v0.0.44/nodes: HTTP 200: not a slurmrestd reply (text/html)");
  EXPECT_KIND(error_of([&] { client.jobs(); }), RestFailure::kReply);
}

TEST(SlurmrestdClient, SlowReplyTimesOutWithinTheTimeout) {
  auto server = std::make_unique<FakeSlurmrestd>();
  server->serve("GET", "/slurm/v0.0.44/jobs", FakeReply::delayed(5, FakeReply::json(recorded44("slurm-jobs.json"))));
  ClientOptions options = options_for(*server);
  options.timeout_s = 0.5;
  options.retries = 0;
  SlurmrestdClient client(options);
  const auto start = std::chrono::steady_clock::now();
  SlurmrestdError error = error_of([&] { client.jobs(); });
  const double elapsed = seconds_since(start);
  EXPECT_KIND(error, RestFailure::kTimeout);
  EXPECT_EQ(error.status(), 0);
  EXPECT_GE(elapsed, 0.45);
  EXPECT_LE(elapsed, 4.0);  // well before the 5 s reply, with room for a loaded machine

  const auto stop = std::chrono::steady_clock::now();
  server.reset();  // The fake abandons its late reply (4.5 s to go) at once.
  EXPECT_LE(seconds_since(stop), 3.0);
}

TEST(SlurmrestdClient, TimeoutIsRetried) {
  FakeSlurmrestd server;
  server.serve_once("GET", "/slurm/v0.0.44/ping", FakeReply::delayed(3, FakeReply::json("{}")));
  server.serve("GET", "/slurm/v0.0.44/ping", FakeReply::json(recorded44("slurm-ping.json")));
  ClientOptions options = options_for(server);
  options.timeout_s = 0.3;
  SlurmrestdClient client(options);
  EXPECT_EQ(client.ping().hostname, "admin.nova");
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/ping"), 2u);
}

TEST(SlurmrestdClient, ReplyLargerThanTheLimitIsReply) {
  FakeSlurmrestd server;
  const std::string body = recorded44("slurm-jobs.json");  // 291 KB.
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(body));
  FakeReply chunked = FakeReply::json(body);
  chunked.chunked = true;  // No Content-Length: the limit is enforced while reading.
  server.serve("GET", "/slurm/v0.0.44/nodes", chunked);
  ClientOptions options = options_for(server);
  options.max_reply_bytes = 100000;
  SlurmrestdClient client(options);
  for (const auto& call : std::vector<std::function<void()>>{[&] { client.jobs(); }, [&] { client.nodes(); }}) {
    SlurmrestdError error = error_of(call);
    EXPECT_KIND(error, RestFailure::kReply);
    EXPECT_NE(std::string(error.what()).find("reply larger than 100000 bytes"), std::string::npos) << error.what();
  }
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/jobs"), 1u);  // Not retried.

  options.max_reply_bytes = body.size();  // Exactly at the limit is fine, chunked or not.
  SlurmrestdClient roomy(options);
  EXPECT_NO_THROW(roomy.jobs());
  EXPECT_NO_THROW(roomy.request("GET", "/slurm/v0.0.44/nodes"));
}

// --- errors[] in a successful reply

TEST(SlurmrestdClient, ErrorsInA200AreSlurm) {
  FakeSlurmrestd server;  // 25.11 answers an unknown node with 200 and errors[].
  server.serve("GET", "/slurm/v0.0.44/nodes", FakeReply::json(recorded44("slurm-node-unfound.json")));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.nodes(); });
  EXPECT_KIND(error, RestFailure::kSlurm);
  EXPECT_EQ(error.status(), 200);
  ASSERT_EQ(error.errors.size(), 1u);
  EXPECT_EQ(error.errors[0].description, "Failure to query node unexisting-node");
  EXPECT_NE(std::string(error.what()).find("Failure to query node unexisting-node (_dump_nodes)"), std::string::npos)
      << error.what();
  EXPECT_EQ(server.count("GET", "/slurm/v0.0.44/nodes"), 1u);
}

TEST(SlurmrestdClient, CancelOfAnUnknownJobIsSlurm) {
  FakeSlurmrestd server;  // 22.05: 500 + errors[] 2017; 25.05: 200 + status[0].error.code 2017.
  server.serve("DELETE", "/slurm/v0.0.38/job/999999",
               FakeReply::json(read_file(kExamples38 + "error-job-not-found.json"), 500));
  server.serve("DELETE", "/slurm/v0.0.43/job/999999",
               FakeReply::json(read_file(kExamples43 + "error-job-delete-unknown.json")));
  server.serve("DELETE", "/slurm/v0.0.43/job/5", FakeReply::json(read_file(kExamples43 + "job-delete-response.json")));
  SlurmrestdClient v38(options_for(server, ApiVersion::k38));
  SlurmrestdError old = error_of([&] { v38.cancel_job(999999); });
  EXPECT_KIND(old, RestFailure::kHttp);
  ASSERT_EQ(old.errors.size(), 1u);
  EXPECT_EQ(old.errors[0].error_number, 2017);
  EXPECT_EQ(server.count("DELETE", "/slurm/v0.0.38/job/999999"), 1u);  // DELETE is not retried.

  SlurmrestdClient v43(options_for(server, ApiVersion::k43));
  SlurmrestdError recent = error_of([&] { v43.cancel_job(999999); });
  EXPECT_KIND(recent, RestFailure::kSlurm);
  ASSERT_EQ(recent.errors.size(), 1u);
  EXPECT_EQ(recent.errors[0].error_number, 2017);
  EXPECT_NO_THROW(v43.cancel_job(5));
}

// --- the token stays secret

TEST(SlurmrestdClient, TokenNeverAppearsInMessages) {
  const std::string echo_json = R"({"meta": {}, "errors": [{"error": "bad token )" + kToken +
                                R"(", "description": "token=)" + kToken + R"(", "source": ")" + kToken + R"("}]})";
  std::string long_text(190, 'x');  // The token straddles the 200-character quote limit.
  long_text += kToken + " and more text after it";
  std::string cut_text = "header X-SLURM-USER-TOKEN: " + kToken.substr(0, kToken.size() - 5);  // Cut short.
  struct Case {
    const char* name;
    std::string path;
    FakeReply reply;
  };
  const std::vector<Case> cases = {
      {"500 JSON echo", "/slurm/v0.0.44/jobs", FakeReply::json(echo_json, 500)},
      {"200 errors echo", "/slurm/v0.0.44/nodes", FakeReply::json(echo_json)},
      {"401 text echo", "/slurm/v0.0.44/partitions", FakeReply::text(401, "Rejected token " + kToken)},
      {"502 text echo at the cut", "/slurm/v0.0.44/diag", FakeReply::text(502, long_text)},
      {"400 text ending in a partial token", "/slurm/v0.0.44/ping", FakeReply::text(400, cut_text)},
      {"200 not JSON echo", "/slurmdb/v0.0.44/qos", FakeReply::text(200, kToken)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeSlurmrestd server;
    server.serve("GET", c.path, c.reply);
    ClientOptions options = options_for(server);
    options.retries = 0;
    SlurmrestdClient client(options);
    SlurmrestdError error = error_of([&] { client.request("GET", c.path); });
    const std::string what = error.what();
    EXPECT_EQ(what.find(kToken), std::string::npos) << what;
    EXPECT_EQ(what.find(kToken.substr(0, 12)), std::string::npos) << what;
    EXPECT_EQ(what.find("SECRET"), std::string::npos) << what;
    for (const RestMessage& m : error.errors) {
      EXPECT_EQ((m.error + m.description + m.source).find(kToken), std::string::npos);
    }
  }
}

// --- endpoints with their own rules

TEST(SlurmrestdClient, UpdateNodeOnV38RefusesWithoutARequest) {
  FakeSlurmrestd server;
  SlurmrestdClient client(options_for(server, ApiVersion::k38));
  SlurmrestdError error = error_of([&] { client.update_node("gpu01", R"({"state": ["DRAIN"]})"); });
  EXPECT_KIND(error, RestFailure::kHttp);
  EXPECT_STREQ(error.what(), "POST /slurm/v0.0.38/node/gpu01: node updates need v0.0.39+ (use scontrol)");
  EXPECT_TRUE(server.requests().empty());
}

TEST(SlurmrestdClient, UpdateNodeOnV43Posts) {
  FakeSlurmrestd server;
  server.serve("POST", "/slurm/v0.0.43/node/gpu01",
               FakeReply::json(read_file(kExamples43 + "node-update-response.json")));
  SlurmrestdClient client(options_for(server, ApiVersion::k43));
  client.update_node("gpu01", R"({"state": ["DRAIN"], "reason": "test"})");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].body, R"({"state": ["DRAIN"], "reason": "test"})");
}

TEST(SlurmrestdClient, HeldSubmitWithJobIdAndErrorsIsSubmitted) {
  FakeSlurmrestd server;  // 22.05: a held submit answers 200 with job_id 2 and errors[] 2042.
  server.serve("POST", "/slurm/v0.0.38/job/submit",
               FakeReply::json(read_file(kExamples38 + "job-submit-held-response.json")));
  SlurmrestdClient client(options_for(server, ApiVersion::k38));
  const std::string request = read_file(kExamples38 + "job-submit-request.json");
  EXPECT_EQ(client.submit_job(request), 2u);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].body, request);
  EXPECT_EQ(server.requests()[0].header("Content-Type"), "application/json");
}

TEST(SlurmrestdClient, RefusedSubmitWithoutJobIdIsSlurm) {
  FakeSlurmrestd server;
  server.serve("POST", "/slurm/v0.0.44/job/submit",
               FakeReply::json(R"json({"meta": {}, "errors": [{"error": "Invalid partition name specified",
                 "error_number": 2000, "source": "slurm_submit_batch_job()"}], "warnings": []})json"));
  SlurmrestdClient client(options_for(server));
  SlurmrestdError error = error_of([&] { client.submit_job("{}"); });
  EXPECT_KIND(error, RestFailure::kSlurm);
  EXPECT_NE(std::string(error.what()).find("Invalid partition name specified"), std::string::npos);
}

TEST(SlurmrestdClient, FinishedJobsAsksForTheWindow) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurmdb/v0.0.44/jobs", FakeReply::json(recorded44("slurmdb-job-completed.json")));
  SlurmrestdClient client(options_for(server));
  EXPECT_EQ(client.finished_jobs(1700000000, 1700003600).size(), 1u);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].query, "start_time=1700000000&end_time=1700003600");
}

TEST(SlurmrestdClient, FinishedJobsOnV38UsesUtsTimesAndNothingFoundIsEmpty) {
  FakeSlurmrestd server;  // 22.05 refuses integer times, and answers "no match" with errors[] 9003.
  server.serve("GET", "/slurmdb/v0.0.38/jobs", FakeReply::json(R"({"meta": {"plugin": {}}, "errors": [{
      "description": "Nothing found", "error_number": 9003, "error": "Nothing found with query",
      "source": "slurmdb_jobs_get"}]})"));
  SlurmrestdClient client(options_for(server, ApiVersion::k38));
  EXPECT_TRUE(client.finished_jobs(0, 1700003600).empty());
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].query, "start_time=uts1000000&end_time=uts1700003600");
}

TEST(SlurmrestdClient, EmptyFinishedJobsAreCheckedForAuth) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurmdb/v0.0.44/jobs", FakeReply::json(R"({"jobs": []})"));  // No meta: not a real reply.
  SlurmrestdClient client(options_for(server));
  SlurmrestdError no_meta = error_of([&] { client.finished_jobs(1700000000, 1700003600); });
  EXPECT_KIND(no_meta, RestFailure::kAuth);
  EXPECT_NE(std::string(no_meta.what()).find("check the token (SLURM_JWT) and user"), std::string::npos);

  server.serve("GET", "/slurmdb/v0.0.44/jobs",
               FakeReply::json(R"({"jobs": [], "meta": {}, "errors": [], "warnings": [{"description":
                 "Authentication failed for user", "source": "_dump_jobs"}]})"));
  EXPECT_KIND(error_of([&] { client.finished_jobs(1700000000, 1700003600); }), RestFailure::kAuth);

  server.serve("GET", "/slurmdb/v0.0.44/jobs", FakeReply::json(recorded44("slurmdb-job-unfound.json")));
  EXPECT_TRUE(client.finished_jobs(1700000000, 1700003600).empty());  // A real "found nothing".
}

TEST(SlurmrestdClient, AssociationsWithoutSlurmdbdAreEmpty) {
  FakeSlurmrestd server;  // Nothing served: 404, as a slurmrestd without the slurmdb plugins answers.
  std::vector<std::string> warnings;
  ClientOptions options = options_for(server);
  options.on_warning = [&](const std::string& text) { warnings.push_back(text); };
  SlurmrestdClient client(options);
  EXPECT_TRUE(client.associations().empty());
  EXPECT_EQ(warnings.size(), 1u);

  server.serve("GET", "/slurmdb/v0.0.44/associations",
               FakeReply::json(R"({"meta": {}, "errors": [{"error": "Unable to connect to database",
                 "error_number": 7000, "source": "slurmdb_associations_get"}], "warnings": []})",
                               500));
  EXPECT_TRUE(client.associations().empty());
  server.serve("GET", "/slurmdb/v0.0.44/associations",
               FakeReply::json(R"({"meta": {}, "errors": [{"error": "Unable to connect to database",
                 "error_number": 7000, "source": "slurmdb_associations_get"}], "warnings": []})"));
  EXPECT_TRUE(client.associations().empty());
  EXPECT_EQ(warnings.size(), 3u);

  server.serve("GET", "/slurmdb/v0.0.44/associations", FakeReply::json(recorded44("slurmdb-associations.json")));
  EXPECT_FALSE(client.associations().empty());

  server.serve("GET", "/slurmdb/v0.0.44/associations", FakeReply::text(401, "Authentication failure"));
  EXPECT_KIND(error_of([&] { client.associations(); }), RestFailure::kAuth);
  server.serve("GET", "/slurmdb/v0.0.44/associations", FakeReply::drop());
  EXPECT_KIND(error_of([&] { client.associations(); }), RestFailure::kConnect);
}

TEST(SlurmrestdClient, ParsesEveryRecordedEndpoint) {
  FakeSlurmrestd server;
  server.serve("GET", "/slurm/v0.0.44/ping", FakeReply::json(recorded44("slurm-ping.json")));
  server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(recorded44("slurm-jobs.json")));
  server.serve("GET", "/slurm/v0.0.44/nodes", FakeReply::json(recorded44("slurm-nodes.json")));
  server.serve("GET", "/slurm/v0.0.44/partitions", FakeReply::json(recorded44("slurm-partitions.json")));
  server.serve("GET", "/slurmdb/v0.0.44/qos", FakeReply::json(recorded44("slurm-qos.json")));
  server.serve("GET", "/slurm/v0.0.38/diag", FakeReply::json(read_file(kExamples38 + "diag.json")));
  SlurmrestdClient client(options_for(server));
  EXPECT_EQ(client.ping().hostname, "admin.nova");
  EXPECT_GT(client.jobs().size(), 10u);
  EXPECT_GT(client.nodes().size(), 1u);
  EXPECT_FALSE(client.partitions().empty());
  EXPECT_FALSE(client.qos().empty());
  SlurmrestdClient v38(options_for(server, ApiVersion::k38));
  EXPECT_NO_THROW(v38.diag());
}

// --- a real slurmrestd (shared/slurmrestd/local-slurm.sh), when one is configured

std::optional<ClientOptions> live_options() {
  const char* url = std::getenv("SLURMRESTD_URL");
  const char* token = std::getenv("SLURM_JWT");
  if (url == nullptr || token == nullptr || *url == '\0' || *token == '\0') return std::nullopt;
  ClientOptions options;
  options.url = url;
  options.user = std::getenv("SLURM_TWIN_LIVE_USER") != nullptr ? std::getenv("SLURM_TWIN_LIVE_USER") : "root";
  options.token = token;
  options.timeout_s = 20;
  options.retries = 0;
  options.on_warning = [](const std::string&) {};
  return options;
}

TEST(LiveSlurmrestd, ListsNodesJobsAndPartitions) {
  std::optional<ClientOptions> options = live_options();
  if (!options) GTEST_SKIP() << "SLURMRESTD_URL and SLURM_JWT are not set";
  SlurmrestdClient client(*options);
  client.connect();
  EXPECT_EQ(client.can_update_nodes(), client.version() >= ApiVersion::k39);
  EXPECT_TRUE(client.ping().responding);
  const std::vector<RestNode> nodes = client.nodes();
  EXPECT_FALSE(nodes.empty());
  for (const RestNode& node : nodes) EXPECT_FALSE(node.name.empty());
  EXPECT_FALSE(client.partitions().empty());
  EXPECT_NO_THROW(client.jobs());
  EXPECT_NO_THROW(client.diag());
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  EXPECT_NO_THROW(client.finished_jobs(now - 86400, now));
  EXPECT_NO_THROW(client.associations());
}

TEST(LiveSlurmrestd, BogusTokenIsAuth) {
  std::optional<ClientOptions> options = live_options();
  if (!options) GTEST_SKIP() << "SLURMRESTD_URL and SLURM_JWT are not set";
  SlurmrestdClient good(*options);
  good.connect();
  options->version = good.version();
  options->token = "bogus-" + options->token.substr(0, options->token.size() / 2);
  SlurmrestdClient client(*options);
  SlurmrestdError error = error_of([&] { client.jobs(); });
  EXPECT_KIND(error, RestFailure::kAuth);
  EXPECT_EQ(std::string(error.what()).find(options->token), std::string::npos);
}

TEST(LiveSlurmrestd, UnknownJobCancelIsAnError) {
  std::optional<ClientOptions> options = live_options();
  if (!options) GTEST_SKIP() << "SLURMRESTD_URL and SLURM_JWT are not set";
  SlurmrestdClient client(*options);
  client.connect();
  SlurmrestdError error = error_of([&] { client.cancel_job(987654321); });
  EXPECT_TRUE(error.kind() == RestFailure::kHttp || error.kind() == RestFailure::kSlurm) << error.what();
  EXPECT_FALSE(error.errors.empty());
}

}  // namespace
}  // namespace gputwin
