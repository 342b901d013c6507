#include "ui/civet_listener.hpp"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gputwin {
namespace {

void init_civetweb_once() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

int quiet_log(const mg_connection*, const char*) {
  return 1;
}

/// Opens and closes a connection to `host`:`port`, which wakes CivetWeb's accept loop at once.
void wake(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::close(fd);
}

}  // namespace

CivetListener::CivetListener(const char** options, const std::string& ports, Handler handler, void* self) {
  init_civetweb_once();
  const std::string host = ports.substr(0, ports.rfind(':'));
  wake_host_ = host.empty() || host.front() == '[' || host == "0.0.0.0" ? "127.0.0.1" : host;
  mg_callbacks callbacks{};
  callbacks.log_message = quiet_log;
  context_ = mg_start(&callbacks, self, options);
  if (context_ == nullptr)
    throw std::runtime_error("cannot listen on " + ports + " (in use, or not an address of this machine?)");
  mg_set_request_handler(context_, "/", handler, self);
  mg_server_port bound[1] = {};
  if (mg_get_server_ports(context_, 1, bound) < 1) {
    mg_stop(context_);
    throw std::runtime_error("cannot listen on " + ports);
  }
  port_ = bound[0].port;
}

CivetListener::~CivetListener() {
  // CivetWeb's accept loop polls in 2 s quanta (SOCKET_TIMEOUT_QUANTUM): connect to it until mg_stop returns, so it
  // notices the stop at once instead of up to 2 s later.
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    mg_stop(context_);
    stopped = true;
  });
  while (!stopped) {
    wake(wake_host_, port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stopper.join();
}

}  // namespace gputwin
