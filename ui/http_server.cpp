#include "ui/http_server.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "model/text.hpp"

namespace gputwin {

namespace {

/// Decodes %XX and '+' (in a query). Invalid escapes are kept as they are.
std::string url_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string error_body(const std::string& message) {
  // The message may quote the request (its method, path or a parameter), which may hold any bytes: dump() would throw
  // on bytes that are not UTF-8 and end the server, so they are replaced with U+FFFD.
  return nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::map<std::string, std::string> parse_query(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    const std::size_t amp = q.find('&');
    const std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string key = url_decode(pair.substr(0, eq), true);
    out[key] = eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1), true);
  }
  return out;
}

std::optional<std::string> HttpRequest::param(const std::string& name) const {
  const auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::string HttpRequest::header(const std::string& name) const {
  const auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

bool EventStream::send(std::string_view event, std::string_view data, std::string_view id) {
  std::string frame;
  if (!id.empty()) frame += "id: " + std::string(id) + "\n";
  if (!event.empty()) frame += "event: " + std::string(event) + "\n";
  std::size_t from = 0;
  while (from <= data.size()) {  // one data: line per line of `data`
    const std::size_t nl = data.find('\n', from);
    frame +=
        "data: " + std::string(data.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from)) +
        "\n";
    if (nl == std::string_view::npos) break;
    from = nl + 1;
  }
  frame += "\n";
  return mg_write(connection_, frame.data(), frame.size()) > 0;
}

bool EventStream::ping() {
  return mg_write(connection_, ": ping\n\n", 8) > 0;
}

HttpResponse HttpResponse::json(std::string body, int status) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::text(std::string body, std::string content_type) {
  HttpResponse r;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

std::string listen_spec(std::string_view listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) throw std::invalid_argument("'" + std::string(listen) + "': expected ADDR:PORT");
  std::string host(listen.substr(0, colon));
  const std::string_view port_text = listen.substr(colon + 1);
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) {
    throw std::invalid_argument("'" + std::string(listen) + "': the port must be a number from 0 to 65535");
  }
  if (host.empty()) host = "127.0.0.1";
  if (host == "localhost") host = "127.0.0.1";
  if (host.front() == '[') {  // IPv6: CivetWeb's form is [addr]:port with a trailing x
    in6_addr a6{};
    if (host.back() != ']' || ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a6) != 1) {
      throw std::invalid_argument("'" + std::string(listen) + "': not an IPv6 address");
    }
    return host + ":" + std::to_string(port) + "x";
  }
  in_addr a4{};
  if (::inet_pton(AF_INET, host.c_str(), &a4) != 1) {
    throw std::invalid_argument("'" + std::string(listen) + "': not an IPv4 address (give 127.0.0.1, 0.0.0.0, ...)");
  }
  return host + ":" + std::to_string(port);
}

void send_response(mg_connection* connection, const HttpResponse& response) {
  mg_response_header_start(connection, response.status);
  mg_response_header_add(connection, "Content-Type", response.content_type.c_str(), -1);
  mg_response_header_add(connection, "Content-Length", std::to_string(response.body.size()).c_str(), -1);
  mg_response_header_add(connection, "X-Content-Type-Options", "nosniff", -1);
  for (const auto& [name, value] : response.headers) {
    mg_response_header_add(connection, name.c_str(), value.c_str(), -1);
  }
  mg_response_header_send(connection);
  std::size_t offset = 0;
  while (offset < response.body.size()) {
    const std::size_t n = std::min<std::size_t>(1 << 20, response.body.size() - offset);
    if (mg_write(connection, response.body.data() + offset, n) <= 0) return;
    offset += n;
  }
}

HttpServer::HttpServer(Options options, HttpHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  const std::string ports = listen_spec(options_.listen);
  host_ = ports.substr(0, ports.rfind(':'));
  const std::string threads = std::to_string(std::max(2, options_.threads));
  const std::string timeout = std::to_string(std::max(1000, options_.request_timeout_ms));
  const char* civet_options[] = {"listening_ports",
                                 ports.c_str(),
                                 "num_threads",
                                 threads.c_str(),
                                 "request_timeout_ms",
                                 timeout.c_str(),
                                 "enable_keep_alive",
                                 "yes",
                                 "keep_alive_timeout_ms",
                                 "5000",
                                 nullptr};
  listener_.emplace(civet_options, ports, &HttpServer::on_request, this);
}

HttpServer::~HttpServer() {
  stopping_ = true;  // streams end; then listener_ stops CivetWeb, waiting for the requests in progress
}

std::string HttpServer::url() const {
  const std::string host = host_ == "0.0.0.0" ? "127.0.0.1" : host_;
  return "http://" + host + ":" + std::to_string(port());
}

int HttpServer::on_request(mg_connection* connection, void* self) {
  return static_cast<HttpServer*>(self)->answer(connection);
}

int HttpServer::answer(mg_connection* connection) {
  if (options_.thread_nice > 0) {
    thread_local bool niced = false;  // CivetWeb's worker threads live as long as the server
    if (!niced) {
      niced = true;
      nice_this_thread(options_.thread_nice);
    }
  }
  const mg_request_info* info = mg_get_request_info(connection);
  HttpRequest request;
  request.method = info->request_method ? info->request_method : "";
  request.path = info->local_uri ? info->local_uri : "/";
  if (info->query_string != nullptr) request.query = parse_query(info->query_string);
  for (int i = 0; i < info->num_headers; ++i) {
    request.headers[lower(info->http_headers[i].name)] = info->http_headers[i].value;
  }
  if (info->content_length > 0 && static_cast<std::uint64_t>(info->content_length) > options_.max_body_bytes) {
    send_response(
        connection,
        HttpResponse::json(error_body("request body over " + std::to_string(options_.max_body_bytes) + " bytes"), 413));
    return 413;
  }
  char buffer[16 * 1024];
  for (int n = mg_read(connection, buffer, sizeof buffer); n > 0; n = mg_read(connection, buffer, sizeof buffer)) {
    if (request.body.size() + static_cast<std::size_t>(n) > options_.max_body_bytes) {
      send_response(connection,
                    HttpResponse::json(
                        error_body("request body over " + std::to_string(options_.max_body_bytes) + " bytes"), 413));
      return 413;
    }
    request.body.append(buffer, static_cast<std::size_t>(n));
  }
  HttpResponse response;
  try {
    response = handler_(request);
  } catch (const HttpError& error) {
    response = HttpResponse::json(error_body(error.what()), error.status());
  } catch (const std::bad_alloc&) {
    response = HttpResponse::json(error_body("out of memory answering this request"), 503);
  } catch (const std::exception& error) {
    response = HttpResponse::json(error_body(error.what()), 500);
  }
  if (response.stream) {
    mg_response_header_start(connection, 200);
    mg_response_header_add(connection, "Content-Type", "text/event-stream", -1);
    mg_response_header_add(connection, "Cache-Control", "no-cache", -1);
    mg_response_header_add(connection, "X-Accel-Buffering", "no", -1);
    mg_response_header_send(connection);
    EventStream stream(connection);
    try {
      response.stream(stream);
    } catch (const std::exception&) {
      // the stream ends; the client reconnects (EventSource does by itself)
    }
    return 200;
  }
  send_response(connection, response);
  return response.status;
}

void nice_this_thread(int by) {
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, 0);  // PRIO_PROCESS with 0 on Linux: this thread
  if (errno == 0) (void)::setpriority(PRIO_PROCESS, 0, std::min(19, current + by));
}

}  // namespace gputwin
