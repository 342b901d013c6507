// The fake slurmrestd; see fake_slurmrestd.hpp. Keep-alive is off, so a handler that returns without writing
// closes the connection (kDrop) and a short body is followed by a close (kTruncate), as a crashing slurmrestd would.
#include "tests/twin/fake_slurmrestd.hpp"

#include <civetweb.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace gputwin::testing {
namespace {

constexpr std::size_t kWriteChunkBytes = 1 << 20;  // mg_write piece: large, yet stop is noticed within one piece.
constexpr double kWaitStepS = 0.01;                // A late reply checks for stop this often.
constexpr const char* kNotFound =
    "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit "
    "'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a list of all possible "
    "slurmrestd endpoints.";

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string without_trailing_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string route_key(const std::string& method, const std::string& path) {
  return method + " " + without_trailing_slash(path);
}

std::string read_body(mg_connection* connection) {
  std::string body;
  // On the heap: CivetWeb's worker threads have small stacks, and 64 KiB here overflowed them under AddressSanitizer
  // (whose redzones and interceptors take more stack) in every SlurmrestdClient test of the sanitizer build.
  std::vector<char> buffer(64 * 1024);
  for (int n = mg_read(connection, buffer.data(), buffer.size()); n > 0;
       n = mg_read(connection, buffer.data(), buffer.size())) {
    body.append(buffer.data(), static_cast<std::size_t>(n));
  }
  return body;
}

}  // namespace

FakeReply FakeReply::json(std::string body, int status) {
  FakeReply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

FakeReply FakeReply::text(int status, std::string body, std::string content_type) {
  FakeReply reply;
  reply.status = status;
  reply.body = std::move(body);
  reply.content_type = std::move(content_type);
  return reply;
}

FakeReply FakeReply::drop() {
  FakeReply reply;
  reply.behaviour = FakeBehaviour::kDrop;
  return reply;
}

FakeReply FakeReply::delayed(double delay_s, FakeReply reply) {
  reply.behaviour = FakeBehaviour::kDelay;
  reply.delay_s = delay_s;
  return reply;
}

FakeReply FakeReply::truncated(std::string body, std::size_t sent_bytes) {
  FakeReply reply = json(std::move(body));
  reply.behaviour = FakeBehaviour::kTruncate;
  reply.truncate_at = std::min(sent_bytes, reply.body.size());
  return reply;
}

std::string RecordedRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

FakeSlurmrestd::FakeSlurmrestd(int port) {
  const std::string listen = "127.0.0.1:" + std::to_string(port);
  const char* options[] = {"listening_ports",    listen.c_str(), "num_threads", "8", "enable_keep_alive", "no",
                           "request_timeout_ms", "10000",        nullptr};
  try {
    listener_.emplace(options, listen, &FakeSlurmrestd::on_request, this);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("fake slurmrestd: ") + e.what());
  }
}

FakeSlurmrestd::~FakeSlurmrestd() {
  stopping_ = true;  // a late reply in progress gives up; then listener_ stops CivetWeb at once
}

std::string FakeSlurmrestd::url() const {
  return "http://127.0.0.1:" + std::to_string(port());
}

void FakeSlurmrestd::serve(const std::string& method, const std::string& path, FakeReply reply) {
  auto shared = std::make_shared<const FakeReply>(std::move(reply));
  std::lock_guard lock(mutex_);
  routes_[route_key(method, path)].always = std::move(shared);
}

void FakeSlurmrestd::serve_once(const std::string& method, const std::string& path, FakeReply reply) {
  auto shared = std::make_shared<const FakeReply>(std::move(reply));
  std::lock_guard lock(mutex_);
  routes_[route_key(method, path)].once.push_back(std::move(shared));
}

void FakeSlurmrestd::clear_replies() {
  std::lock_guard lock(mutex_);
  routes_.clear();
}

std::vector<RecordedRequest> FakeSlurmrestd::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t FakeSlurmrestd::count(const std::string& method, const std::string& path) const {
  const std::string key = route_key(method, path);
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [&](const RecordedRequest& r) {
    return route_key(r.method, r.path) == key;
  }));
}

void FakeSlurmrestd::clear_requests() {
  std::lock_guard lock(mutex_);
  requests_.clear();
}

int FakeSlurmrestd::on_request(mg_connection* connection, void* self) {
  return static_cast<FakeSlurmrestd*>(self)->answer(connection);
}

std::shared_ptr<const FakeReply> FakeSlurmrestd::take_reply(const std::string& method, const std::string& path) {
  std::lock_guard lock(mutex_);
  auto it = routes_.find(route_key(method, path));
  if (it == routes_.end()) return nullptr;
  Route& route = it->second;
  if (!route.once.empty()) {
    std::shared_ptr<const FakeReply> reply = route.once.front();
    route.once.erase(route.once.begin());
    return reply;
  }
  return route.always;
}

bool FakeSlurmrestd::wait(double seconds) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!stopping_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kWaitStepS));
  }
  return !stopping_;
}

void FakeSlurmrestd::send(mg_connection* connection, const FakeReply& reply) const {
  const bool truncate = reply.behaviour == FakeBehaviour::kTruncate;
  const std::size_t sent = truncate ? reply.truncate_at : reply.body.size();
  mg_response_header_start(connection, reply.status);
  mg_response_header_add(connection, "Content-Type", reply.content_type.c_str(), -1);
  if (reply.chunked && !truncate) {
    mg_response_header_add(connection, "Transfer-Encoding", "chunked", -1);
  } else {
    mg_response_header_add(connection, "Content-Length", std::to_string(reply.body.size()).c_str(), -1);
  }
  mg_response_header_send(connection);
  for (std::size_t offset = 0; offset < sent && !stopping_; offset += kWriteChunkBytes) {
    const std::size_t bytes = std::min(kWriteChunkBytes, sent - offset);
    const int written = reply.chunked && !truncate ? mg_send_chunk(connection, reply.body.data() + offset, bytes)
                                                   : mg_write(connection, reply.body.data() + offset, bytes);
    if (written <= 0) return;  // The client went away.
  }
  if (reply.chunked && !truncate) mg_send_chunk(connection, "", 0);
}

int FakeSlurmrestd::answer(mg_connection* connection) {
  const mg_request_info* info = mg_get_request_info(connection);
  RecordedRequest request;
  request.method = info->request_method != nullptr ? info->request_method : "";
  request.path = info->local_uri != nullptr ? info->local_uri : "";
  request.query = info->query_string != nullptr ? info->query_string : "";
  for (int i = 0; i < info->num_headers; ++i) {
    request.headers[lower(info->http_headers[i].name)] = info->http_headers[i].value;
  }
  request.body = read_body(connection);
  std::shared_ptr<const FakeReply> reply = take_reply(request.method, request.path);
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(request));
  }
  if (reply == nullptr) {
    send(connection, FakeReply::text(404, kNotFound));
    return 404;
  }
  switch (reply->behaviour) {
    case FakeBehaviour::kDrop:
      return 1;  // Nothing written: with keep-alive off, civetweb closes the connection.
    case FakeBehaviour::kDelay:
      if (!wait(reply->delay_s)) return 1;
      break;
    default:
      break;
  }
  send(connection, *reply);
  return reply->status;
}

}  // namespace gputwin::testing
