#include "cli/serve_command.hpp"

#include <fmt/core.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "model/errors.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/http_server.hpp"

namespace gputwin {

void add_serve_command(CLI::App& app, ServeCommand& command) {
  command.app = app.add_subcommand(
      "serve", "The web dashboard, its JSON API and Prometheus /metrics over a results folder (a run or a twin's)");
  command.app->add_option("results", command.results, "Results folder (gputwin run --out, or gputwin twin --out)")
      ->required();
  command.app->add_option("--listen", command.listen, "Address and port to serve on (default 127.0.0.1:8080)");
  command.app->add_option("--assets", command.assets, "Folder of the built dashboard pages (default: this build's)");
  command.app->add_option("--duration", command.duration_s, "Stop after this many seconds (default: until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9));
}

int run_serve_command(const ServeCommand& command) {
  if (command.app == nullptr || !*command.app) return -1;
  // Block SIGINT/SIGTERM before the server's threads start (they inherit the mask), then wait for one here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::filesystem::path assets =
      command.assets.empty() ? std::filesystem::path(GPUTWIN_WEB_ASSETS_DIR) : std::filesystem::path(command.assets);
  const auto started = std::chrono::steady_clock::now();
  DashboardApi api(command.results, assets);
  std::unique_ptr<HttpServer> server;
  try {
    HttpServer::Options options;
    options.listen = command.listen;
    server = std::make_unique<HttpServer>(options, [&api](const HttpRequest& r) { return api.handle(r); });
  } catch (const std::invalid_argument& e) {
    throw InputError("--listen", "", e.what());
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("gputwin: serving {} ({} jobs, {} nodes, read in {:.2f} s) on {}\n", command.results,
             api.view().info().jobs, api.view().info().nodes, load_s, server->url());
  if (!std::filesystem::is_regular_file(assets / "index.html")) {
    fmt::print("gputwin: the dashboard's pages are not built ({}): the API answers; see {}/ for how\n", assets.string(),
               server->url());
  }
  std::fflush(stdout);
  if (command.duration_s > 0) {
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(command.duration_s);
    timeout.tv_nsec = static_cast<long>((command.duration_s - static_cast<double>(timeout.tv_sec)) * 1e9);
    while (sigtimedwait(&signals, nullptr, &timeout) < 0 && errno == EINTR) {
    }
  } else {
    int signal = 0;
    sigwait(&signals, &signal);
  }
  fmt::print("gputwin: stopped serving\n");
  return 0;
}

}  // namespace gputwin
