#include "cli/serve_command.hpp"

#include <fmt/core.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>

#include "model/errors.hpp"
#include "model/input_file.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/http_server.hpp"
#include "ui/run_view_slurm_source.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {

void add_serve_command(CLI::App& app, ServeCommand& command) {
  command.app = app.add_subcommand(
      "serve", "The web dashboard, its JSON API and Prometheus /metrics over a results folder (a run or a twin's)");
  command.app
      ->add_option("results", command.results,
                   "Results folder (gputwin run --out, or gputwin twin --out); two or more: compared side by side")
      ->required()
      ->expected(1, -1);
  command.app->add_option("--listen", command.listen, "Address and port to serve on (default 127.0.0.1:8080)");
  command.app->add_option("--assets", command.assets, "Folder of the built dashboard pages (default: this build's)");
  command.app->add_option("--duration", command.duration_s, "Stop after this many seconds (default: until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9));
  command.app->add_option("--slurmrestd-listen", command.slurmrestd_listen,
                          "Address and port of the slurmrestd-compatible API (default 127.0.0.1:6820)");
  command.app->add_flag("--no-slurmrestd", command.no_slurmrestd, "Do not serve the slurmrestd-compatible API");
  command.app->add_option("--jwt-key", command.jwt_key,
                          "Key file (raw bytes, as slurm.conf's jwt_key) to check X-SLURM-USER-TOKEN with; "
                          "without it the slurmrestd-compatible API checks no token");
  command.app
      ->add_option("--at", command.at_s,
                   "Simulated second the slurmrestd-compatible API shows (default: the run's end)")
      ->check(CLI::Range(0.0, 1e15));
}

std::string read_jwt_key(const std::string& file) {
  if (const auto problem = input_file_problem(file, "key", 64 * 1024))
    throw InputError(file, "", "--jwt-key: " + *problem);
  std::ifstream in(file, std::ios::binary);
  std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) throw InputError(file, "", "--jwt-key: cannot read it");
  if (key.empty()) throw InputError(file, "", "--jwt-key: the key file is empty");
  return key;
}

int run_serve_command(const ServeCommand& command) {
  if (command.app == nullptr || !*command.app) return -1;
  // Block SIGINT/SIGTERM before the server's threads start (they inherit the mask), then wait for one here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Bad options stop here, before anything listens.
  const std::string jwt_key =
      command.no_slurmrestd || command.jwt_key.empty() ? std::string() : read_jwt_key(command.jwt_key);
  const std::filesystem::path assets =
      command.assets.empty() ? std::filesystem::path(GPUTWIN_WEB_ASSETS_DIR) : std::filesystem::path(command.assets);
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::filesystem::path> dirs(command.results.begin(), command.results.end());
  DashboardApi api(dirs, assets);
  std::unique_ptr<HttpServer> server;
  try {
    HttpServer::Options options;
    options.listen = command.listen;
    server = std::make_unique<HttpServer>(options, [&api](const HttpRequest& r) { return api.handle(r); });
  } catch (const std::invalid_argument& e) {
    throw InputError("--listen", "", e.what());
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string others;
  for (std::size_t i = 1; i < command.results.size(); ++i) others += (i > 1 ? ", " : "") + command.results[i];
  fmt::print("gputwin: serving {} ({} jobs, {} nodes{}, read in {:.2f} s) on {}\n", command.results.front(),
             api.view().info().jobs, api.view().info().nodes,
             others.empty() ? "" : "; compared with " + others + " in the compare tab", load_s, server->url());
  if (!std::filesystem::is_regular_file(assets / "index.html")) {
    fmt::print("gputwin: the dashboard's pages are not built ({}): the API answers; see {}/ for how\n", assets.string(),
               server->url());
  }
  std::unique_ptr<RunViewSlurmSource> slurm_source;
  std::unique_ptr<SlurmApi> slurm_api;
  std::unique_ptr<HttpServer> slurm_server;
  if (!command.no_slurmrestd) {
    const auto& info = api.view().info();
    const std::int64_t at = command.at_s < 0 ? info.end_s : static_cast<std::int64_t>(command.at_s);
    slurm_source = std::make_unique<RunViewSlurmSource>(api.view(), at);
    SlurmApiOptions options;
    options.jwt_key = jwt_key;
    slurm_api = std::make_unique<SlurmApi>(*slurm_source, options);
    try {
      HttpServer::Options server_options;
      server_options.listen = command.slurmrestd_listen;
      slurm_server = std::make_unique<HttpServer>(server_options,
                                                  [&slurm_api](const HttpRequest& r) { return slurm_api->handle(r); });
    } catch (const std::invalid_argument& e) {
      throw InputError("--slurmrestd-listen", "", e.what());
    }
    fmt::print("gputwin: slurmrestd-compatible API (v0.0.41-v0.0.44, read only, {}) at simulated second {} on {}\n",
               options.jwt_key.empty() ? "no token check" : "JWT checked", at, slurm_server->url());
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
