// A fake slurmrestd on CivetWeb for client tests and benchmarks: it listens on 127.0.0.1, answers each method +
// path with a canned reply (status, content type, body) and records every request (method, path, query, headers,
// body). A reply can also misbehave: close the connection without answering, answer late, send fewer bytes than its
// Content-Length, or stream without a Content-Length. Bodies are shared, not copied, per request and written in
// 1 MiB pieces, so a multi-hundred-MB reply serves at socket speed. Thread-safe; stops promptly even while a
// handler is waiting to answer late.
//
//   FakeSlurmrestd server;
//   server.serve("GET", "/slurm/v0.0.44/jobs", FakeReply::json(body));
//   SlurmrestdClient client({.url = server.url()});
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ui/civet_listener.hpp"

struct mg_connection;

namespace gputwin::testing {

/// How the fake answers a request.
enum class FakeBehaviour : std::uint8_t {
  kReply,     ///< Answer normally.
  kDrop,      ///< Close the connection without a byte of reply.
  kDelay,     ///< Answer after delay_s.
  kTruncate,  ///< Send headers with the full Content-Length, then truncate_at body bytes, then close.
};

/// One canned reply.
struct FakeReply {
  int status = 200;                                 ///< HTTP status.
  std::string content_type = "application/json";    ///< Content-Type.
  std::string body;                                 ///< Body.
  FakeBehaviour behaviour = FakeBehaviour::kReply;  ///< Normal or a misbehaviour.
  double delay_s = 0;                               ///< kDelay: seconds to wait before answering.
  std::size_t truncate_at = 0;                      ///< kTruncate: body bytes sent before closing.
  bool chunked = false;                             ///< Chunked transfer encoding instead of a Content-Length.

  /// A JSON reply.
  static FakeReply json(std::string body, int status = 200);
  /// A reply of any content type ("text/plain", "text/html").
  static FakeReply text(int status, std::string body, std::string content_type = "text/plain");
  /// Closes the connection without answering.
  static FakeReply drop();
  /// `reply`, after `delay_s` seconds.
  static FakeReply delayed(double delay_s, FakeReply reply);
  /// `body` announced whole, cut after `sent_bytes`, then the connection closes.
  static FakeReply truncated(std::string body, std::size_t sent_bytes);
};

/// One request the fake received.
struct RecordedRequest {
  std::string method;                          ///< "GET".
  std::string path;                            ///< URL-decoded path, without the query ("/slurm/v0.0.44/jobs").
  std::string query;                           ///< Query string without '?' (empty when none).
  std::map<std::string, std::string> headers;  ///< Headers by lower-case name.
  std::string body;                            ///< Request body.
  /// The header `name` (any case), empty when absent.
  [[nodiscard]] std::string header(const std::string& name) const;
};

/// A fake slurmrestd listening on 127.0.0.1.
class FakeSlurmrestd {
 public:
  /// Starts listening on `port` (0: a free port chosen by the system). Throws std::runtime_error if it cannot.
  explicit FakeSlurmrestd(int port = 0);
  /// Stops at once (a late reply in progress is abandoned).
  ~FakeSlurmrestd();
  FakeSlurmrestd(const FakeSlurmrestd&) = delete;
  FakeSlurmrestd& operator=(const FakeSlurmrestd&) = delete;

  /// The port listened on.
  [[nodiscard]] int port() const { return listener_->port(); }
  /// "http://127.0.0.1:<port>".
  [[nodiscard]] std::string url() const;

  /// Answers every `method` `path` request with `reply` (replacing an earlier one). A path matches with or without
  /// a trailing '/'; the query is ignored. Unknown paths get slurmrestd's 404 text.
  void serve(const std::string& method, const std::string& path, FakeReply reply);
  /// Answers the next `method` `path` request with `reply`; queued one-shot replies come before serve()'s.
  void serve_once(const std::string& method, const std::string& path, FakeReply reply);
  /// Forgets every reply.
  void clear_replies();

  /// Every request received so far, oldest first.
  [[nodiscard]] std::vector<RecordedRequest> requests() const;
  /// How many `method` `path` requests were received.
  [[nodiscard]] std::size_t count(const std::string& method, const std::string& path) const;
  /// Forgets the recorded requests.
  void clear_requests();

 private:
  struct Route {
    std::shared_ptr<const FakeReply> always;
    std::vector<std::shared_ptr<const FakeReply>> once;
  };
  static int on_request(mg_connection* connection, void* self);
  int answer(mg_connection* connection);
  std::shared_ptr<const FakeReply> take_reply(const std::string& method, const std::string& path);
  bool wait(double seconds) const;
  void send(mg_connection* connection, const FakeReply& reply) const;

  mutable std::mutex mutex_;
  std::map<std::string, Route> routes_;
  std::vector<RecordedRequest> requests_;
  std::atomic<bool> stopping_{false};
  std::optional<CivetListener> listener_;  // last: stopped first, while the routes and requests still live
};

}  // namespace gputwin::testing
