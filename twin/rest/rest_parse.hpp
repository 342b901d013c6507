// Parsers of slurmrestd replies, one per endpoint, for every API version the twin speaks (v0.0.38's plain fields,
// v0.0.39+'s state arrays and {set, infinite, number} numbers): the JSON is read by shape, not by version, so a
// field that changed form between versions parses either way. Parsed with simdjson (a 100,000-job reply is several
// hundred MB). A reply that is not what the endpoint returns (not JSON, truncated, a field of the wrong type) throws
// RestReplyError naming the endpoint and the JSON path of the bad value; missing optional fields keep their defaults.
//
//   std::vector<RestJob> jobs = parse_jobs(body, "GET /slurm/v0.0.44/jobs");
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "twin/rest/rest_types.hpp"

namespace gputwin {

/// A slurmrestd reply the twin cannot use: `what()` is "<endpoint>: <path>: <problem>".
class RestReplyError : public std::runtime_error {
 public:
  /// Error in the reply of `endpoint` ("GET /slurm/v0.0.44/jobs") at JSON path `path` ("/jobs/3/job_state").
  RestReplyError(std::string endpoint, std::string path, std::string problem);
  /// The endpoint whose reply is at fault.
  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }

 private:
  std::string endpoint_;
};

/// errors[] and warnings[] of any reply (empty when absent); throws RestReplyError if the body is not a JSON object.
RestMessages parse_messages(std::string_view body, const std::string& endpoint);
/// GET ping.
RestPing parse_ping(std::string_view body, const std::string& endpoint);
/// GET diag.
RestDiag parse_diag(std::string_view body, const std::string& endpoint);
/// GET nodes or node/{name} (the "nodes" array); with `messages`, also its errors[] and warnings[] (one parse of a
/// large reply instead of two).
std::vector<RestNode> parse_nodes(std::string_view body, const std::string& endpoint, RestMessages* messages = nullptr);
/// GET jobs or job/{id} (the "jobs" array); with `messages`, also its errors[] and warnings[].
std::vector<RestJob> parse_jobs(std::string_view body, const std::string& endpoint, RestMessages* messages = nullptr);
/// GET partitions or partition/{name} (the "partitions" array).
std::vector<RestPartition> parse_partitions(std::string_view body, const std::string& endpoint);
/// GET slurmdb associations (the "associations" array).
std::vector<RestAssociation> parse_associations(std::string_view body, const std::string& endpoint);
/// GET slurmdb qos (the "qos" array).
std::vector<RestQos> parse_qos(std::string_view body, const std::string& endpoint);
/// POST job/submit: the new job id (job_id; 0 when the reply has none).
std::uint64_t parse_submit(std::string_view body, const std::string& endpoint);
/// The API versions a GET /openapi/v3 (or /openapi) spec serves: the vX in its "/slurm/vX/" paths, ascending;
/// `node_update` is set when it has a POST on "/slurm/vX/node/{node_name}" for the newest of them.
std::vector<ApiVersion> parse_openapi_versions(std::string_view body, const std::string& endpoint,
                                               bool* node_update = nullptr);

}  // namespace gputwin
