// CivetWeb started and stopped as one object, for every server of ours built on it (the dashboard's HttpServer and
// the tests' fake slurmrestd): the library initialised once, its log kept quiet, the bound port read back, and a
// stop that does not wait for the accept loop's 2 s poll (it is woken by a connection until mg_stop returns).
#pragma once

#include <string>

struct mg_connection;
struct mg_context;

namespace gputwin {

/// A running CivetWeb context; stops (waiting for the requests in progress) when destroyed.
class CivetListener {
 public:
  /// Called for every request: CivetWeb's request handler (return the HTTP status sent, or 0 to decline).
  using Handler = int (*)(mg_connection* connection, void* self);
  /// Starts CivetWeb with `options` (name/value pairs ending with nullptr, as mg_start takes them; one of them is
  /// "listening_ports" = `ports`, an ADDR:PORT) and routes every request to `handler(connection, self)`. Throws
  /// std::runtime_error naming `ports` if it cannot listen.
  CivetListener(const char** options, const std::string& ports, Handler handler, void* self);
  ~CivetListener();
  CivetListener(const CivetListener&) = delete;
  CivetListener& operator=(const CivetListener&) = delete;

  /// The bound port (the system's choice when asked for port 0).
  [[nodiscard]] int port() const { return port_; }

 private:
  mg_context* context_ = nullptr;
  int port_ = 0;
  std::string wake_host_;  // an IPv4 address that reaches the listening socket
};

}  // namespace gputwin
