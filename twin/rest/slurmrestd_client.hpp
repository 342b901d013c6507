// A slurmrestd client on libcurl: finds the newest API version the server speaks (v0.0.44 down to v0.0.38), sends
// the JWT headers, and turns every failure (connection refused or dropped, timeout, HTTP 401/403/500/511, an HTML
// page, truncated JSON, errors[] in a 200) into a SlurmrestdError naming the endpoint. Idempotent GETs are retried
// with exponential backoff; POST and DELETE are not retried unless asked. The token never appears in a message.
//
//   SlurmrestdClient client({.url = "http://127.0.0.1:6820", .user = "root", .token = jwt});
//   client.connect();                          // discovers client.version()
//   std::vector<RestJob> jobs = client.jobs();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "twin/rest/rest_parse.hpp"
#include "twin/rest/rest_types.hpp"

namespace gputwin {

/// What went wrong talking to slurmrestd.
enum class RestFailure : std::uint8_t {
  kConnect,  ///< Could not connect, or the connection dropped.
  kTimeout,  ///< No complete reply within the timeout.
  kAuth,     ///< 401, 403, 511, or a 500 whose errors[] say authentication failed (22.05).
  kHttp,     ///< Another HTTP error status.
  kReply,    ///< The reply is not what the endpoint returns (not JSON, truncated, wrong shape, too large).
  kSlurm,    ///< A reply that parsed, with errors[] from Slurm (unknown job, refused update).
  kTls,      ///< TLS handshake or certificate failure.
};

/// A failed slurmrestd call: "GET /slurm/v0.0.44/jobs: HTTP 500: Unspecified error (slurm_load_jobs)".
class SlurmrestdError : public std::runtime_error {
 public:
  /// Failure of `endpoint` ("GET /slurm/v0.0.44/jobs") of kind `kind` with HTTP status `status` (0 without one).
  SlurmrestdError(RestFailure kind, std::string endpoint, long status, const std::string& problem);
  /// What kind of failure.
  [[nodiscard]] RestFailure kind() const { return kind_; }
  /// The endpoint, method first.
  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  /// HTTP status (0 when there was no reply).
  [[nodiscard]] long status() const { return status_; }
  /// Slurm's errors[] of the reply, when it had some.
  std::vector<RestMessage> errors;

 private:
  RestFailure kind_;
  std::string endpoint_;
  long status_;
};

/// One HTTP reply.
struct RestResponse {
  long status = 0;           ///< HTTP status.
  std::string body;          ///< Body (padded for simdjson is not required: parsers copy when needed).
  std::string endpoint;      ///< "GET /slurm/v0.0.44/jobs".
  std::string content_type;  ///< Content-Type header ("application/json"), empty when absent.
};

/// How to reach slurmrestd.
struct ClientOptions {
  std::string url;                             ///< Base URL, "http://127.0.0.1:6820" (a trailing '/' is ignored).
  std::string user;                            ///< X-SLURM-USER-NAME (empty: not sent).
  std::string token;                           ///< X-SLURM-USER-TOKEN (empty: not sent). Never logged.
  std::string cacert;                          ///< CA bundle for https (empty: the system's).
  std::optional<ApiVersion> version;           ///< Use this version instead of discovering one.
  double connect_timeout_s = 5;                ///< Connect timeout.
  double timeout_s = 30;                       ///< Whole-request timeout.
  int retries = 2;                             ///< Extra attempts of a failed GET (connect, timeout, 5xx except auth).
  double backoff_s = 0.5;                      ///< First retry delay; doubles each retry.
  std::uint64_t max_reply_bytes = 4ull << 30;  ///< Larger replies fail with kReply (no unbounded read).
  std::function<void(const std::string&)> on_warning;  ///< Receives warnings (empty: written to stderr).
  std::function<void(const RestResponse&)> on_reply;   ///< Sees every reply that passed the checks (may be empty).
};

/// A connection to one slurmrestd. Not thread-safe: one client per thread (it reuses one connection).
class SlurmrestdClient {
 public:
  /// Client with `options`; nothing is sent until connect() or a call.
  explicit SlurmrestdClient(ClientOptions options);
  ~SlurmrestdClient();
  SlurmrestdClient(const SlurmrestdClient&) = delete;
  SlurmrestdClient& operator=(const SlurmrestdClient&) = delete;

  /// Discovers the API version (GET /openapi/v3, else probing ping from v0.0.44 down) and whether nodes can be
  /// updated over REST (v0.0.39+, advertised in the spec). Throws SlurmrestdError.
  void connect();
  /// The API version in use (after connect(), or the forced one).
  [[nodiscard]] ApiVersion version() const { return version_; }
  /// True if POST /slurm/vX/node/{name} exists (v0.0.39+).
  [[nodiscard]] bool can_update_nodes() const { return node_update_; }
  /// The base URL.
  [[nodiscard]] const std::string& url() const { return options_.url; }

  /// GET /slurm/vX/ping.
  RestPing ping();
  /// GET /slurm/vX/diag.
  RestDiag diag();
  /// GET /slurm/vX/nodes.
  std::vector<RestNode> nodes();
  /// GET /slurm/vX/jobs.
  std::vector<RestJob> jobs();
  /// GET /slurm/vX/partitions.
  std::vector<RestPartition> partitions();
  /// GET /slurmdb/vX/associations; empty with a warning logged when slurmdbd is absent (404 or errors).
  std::vector<RestAssociation> associations();
  /// GET /slurmdb/vX/qos.
  std::vector<RestQos> qos();
  /// GET /slurmdb/vX/jobs?start_time=S&end_time=E: finished jobs of the window. An empty list is checked: when
  /// the reply has no meta or an error, it throws kAuth instead ("no jobs" versus "not allowed").
  std::vector<RestJob> finished_jobs(std::int64_t start_time, std::int64_t end_time);

  /// POST /slurm/vX/job/{id} with `json_body` (an update: {"hold": true}, {"priority": N}). Throws on errors[].
  void update_job(std::uint64_t job_id, const std::string& json_body);
  /// DELETE /slurm/vX/job/{id} (scancel). Throws on errors[] (an unknown job is kSlurm).
  void cancel_job(std::uint64_t job_id);
  /// POST /slurm/vX/node/{name} with `json_body` ({"state": ["DRAIN"], "reason": R}); needs can_update_nodes().
  void update_node(const std::string& name, const std::string& json_body);
  /// POST /slurm/vX/job/submit with `json_body`; returns the job id (a reply with a job id and errors[] counts as
  /// submitted, as 22.05 does for a held submit).
  std::uint64_t submit_job(const std::string& json_body);

  /// One request to `path` ("/slurm/v0.0.44/jobs"), with the checks of every call (status, JSON object, errors[])
  /// but no parsing; GETs are retried. `body` empty sends none.
  RestResponse request(const std::string& method, const std::string& path, const std::string& body = {});

  /// "/slurm/v0.0.44/" + `rest` for the version in use.
  [[nodiscard]] std::string slurm_path(std::string_view rest) const;
  /// "/slurmdb/v0.0.44/" + `rest`.
  [[nodiscard]] std::string slurmdb_path(std::string_view rest) const;

 private:
  /// One HTTP exchange; with `reuse_buffer` the reply is read into the spare buffer of the last large reply.
  RestResponse perform(const std::string& method, const std::string& path, const std::string& body,
                       bool reuse_buffer = false);
  // GET `path` and parse its records and messages in one pass (large replies: nodes, jobs); retried as GETs are.
  template <typename Parse>
  auto get_records(const std::string& path, Parse&& parse)
      -> decltype(parse(std::string_view(), std::string(), nullptr));
  RestResponse exchange(const std::string& method, const std::string& path, const std::string& body, bool retry,
                        RestMessages* messages);
  void check_reply(const RestResponse& response, RestMessages* messages) const;
  void throw_on_errors(const RestResponse& response, const RestMessages& messages) const;
  template <class Parse>
  auto parsed(const RestResponse& response, Parse&& parse) const -> decltype(parse());
  [[noreturn]] void fail(RestFailure kind, const std::string& endpoint, long status, const std::string& problem,
                         std::vector<RestMessage> errors = {}) const;
  void warn(const std::string& message) const;
  bool discover_from_spec();
  void probe_versions();
  ClientOptions options_;
  ApiVersion version_ = ApiVersion::k38;
  bool node_update_ = false;
  struct Curl;
  std::unique_ptr<Curl> curl_;
  // The memory of the last large reply (nodes, jobs), reused for the next one: on these machines first-touching
  // a fresh GiB costs 4-7 s, far more than reading it.
  std::string spare_body_;
};

}  // namespace gputwin
