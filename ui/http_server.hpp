// A small HTTP server on CivetWeb: requests in, whole responses or Server-Sent Events streams out. It owns the
// protocol edge (bounded bodies and headers, timeouts, URL decoding, JSON errors for anything a handler throws), so
// a handler only maps a parsed request to a response.
//
//   HttpServer server({.listen = "127.0.0.1:8080"}, [&](const HttpRequest& r) { return api.handle(r); });
//   std::cout << server.url();  // http://127.0.0.1:8080
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ui/civet_listener.hpp"

struct mg_connection;

namespace gputwin {

/// A parsed request.
struct HttpRequest {
  std::string method;                          ///< GET, POST, ...
  std::string path;                            ///< URL-decoded path, without the query.
  std::map<std::string, std::string> query;    ///< Decoded query parameters (the last of repeated names).
  std::map<std::string, std::string> headers;  ///< Header names in lower case.
  std::string body;                            ///< At most Options::max_body_bytes.

  /// Query parameter `name`, if given.
  [[nodiscard]] std::optional<std::string> param(const std::string& name) const;
  /// Header `name` (any case), or "".
  [[nodiscard]] std::string header(const std::string& name) const;
};

/// What a handler throws for a request it refuses: answered as {"error": message} with `status`.
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  /// The HTTP status (4xx for a bad request).
  [[nodiscard]] int status() const { return status_; }

 private:
  int status_;
};

/// A live Server-Sent Events stream to one client.
class EventStream {
 public:
  explicit EventStream(mg_connection* connection) : connection_(connection) {}
  /// Sends one event (`event` may be empty: a plain message; `id` may be empty: none, else what a reconnecting
  /// EventSource sends back as Last-Event-ID). False once the client is gone.
  bool send(std::string_view event, std::string_view data, std::string_view id = {});
  /// Sends an SSE comment (a keep-alive). False once the client is gone.
  bool ping();

 private:
  mg_connection* connection_;
};

/// A response: a whole body, or (when `stream` is set) an SSE stream the server keeps open while it runs.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< Extra headers.
  std::function<void(EventStream&)> stream;                  ///< Runs on the connection's thread until it returns.

  /// A JSON body.
  static HttpResponse json(std::string body, int status = 200);
  /// A plain-text body.
  static HttpResponse text(std::string body, std::string content_type = "text/plain; charset=utf-8");
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

/// Decodes a URL's query string ("t=100&search=a%20b+c") into parameters, as the server fills HttpRequest::query:
/// %XX and '+' decoded (invalid escapes kept as written), the last of repeated names.
std::map<std::string, std::string> parse_query(std::string_view query);

/// Parses "ADDR:PORT" (or "[v6]:PORT", or ":PORT" for 127.0.0.1) into CivetWeb's listening_ports form. Throws
/// std::invalid_argument naming what is wrong.
std::string listen_spec(std::string_view listen);

/// An HTTP server; stops (waiting for its requests) when destroyed.
class HttpServer {
 public:
  struct Options {
    std::string listen = "127.0.0.1:8080";  ///< ADDR:PORT; port 0 takes a free one.
    int threads = 16;                       ///< Worker threads: concurrent requests and SSE streams.
    std::size_t max_body_bytes = 1 << 20;   ///< Larger request bodies are refused with 413.
    int request_timeout_ms = 30000;         ///< A client that sends nothing for this long is dropped.
    /// Niceness the worker threads add to their own (Linux: each thread has one) before their first answer; a
    /// live simulation's servers use it so that readers take the CPU the simulation leaves, not the reverse.
    int thread_nice = 0;
  };
  /// Starts listening. Throws std::runtime_error if the address cannot be bound.
  HttpServer(Options options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The bound port.
  [[nodiscard]] int port() const { return listener_->port(); }
  /// http://ADDR:PORT of the server.
  [[nodiscard]] std::string url() const;
  /// True while the server runs (false from the start of its destruction): streams end when it turns false.
  [[nodiscard]] bool running() const { return !stopping_; }

 private:
  static int on_request(mg_connection* connection, void* self);
  int answer(mg_connection* connection);

  Options options_;
  HttpHandler handler_;
  std::string host_;
  volatile bool stopping_ = false;
  std::optional<CivetListener> listener_;  // last: stopped first, while the handler's state still lives
};

/// Sends `response` on `connection` (used by the server; public for tests of odd clients).
void send_response(mg_connection* connection, const HttpResponse& response);

/// Makes the calling thread `by` (> 0) nicer than it is, at most 19 (readers' threads: the HTTP workers, a live run's
/// snapshot thread), so a simulation on the same machine keeps its CPU. Best effort: a refusal is ignored.
void nice_this_thread(int by);

}  // namespace gputwin
