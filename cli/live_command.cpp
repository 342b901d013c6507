#include "cli/live_command.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <random>

#include "cli/serve_command.hpp"
#include "cli/twin_command.hpp"
#include "model/errors.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/http_server.hpp"
#include "ui/live_run.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {

namespace {

/// 32 random bytes as hex (std::random_device reads the kernel's getrandom).
std::string new_token() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 8; ++i) token += fmt::format("{:08x}", random());
  return token;
}

/// Writes `token` to `file` with mode 0600 (replacing a regular file; refusing a link or anything else, without
/// blocking on a FIFO).
void write_token(const std::filesystem::path& file, const std::string& token) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) throw InputError(file.string(), "", "cannot write the control token file");
  struct stat st {};
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::fchmod(fd, 0600) == 0 &&
                  ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size()) &&
                  ::write(fd, "\n", 1) == 1;
  ::close(fd);
  if (!ok) throw InputError(file.string(), "", "cannot write the control token file");
}

double parse_speed(const std::string& text) {
  if (text == "max") return 0;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v > 0 && v <= 1e9)) {
    throw InputError("--speed", "", "'" + text + "': expected simulated seconds per wall second (above 0) or max");
  }
  return v;
}

}  // namespace

int run_live_command(Scenario scenario, RunOptions options, const std::filesystem::path& out_dir,
                     const LiveServeOptions& serve) {
  // Block SIGINT/SIGTERM before any thread starts (they inherit the mask), then wait for one here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Bad options stop here, before anything runs or listens.
  LiveOptions live_options;
  live_options.speed = parse_speed(serve.speed);
  live_options.start_paused = serve.paused;
  live_options.refresh_ms = serve.refresh_ms;
  live_options.out_dir = out_dir;
  const std::string jwt_key =
      serve.no_slurmrestd || serve.jwt_key.empty() ? std::string() : read_jwt_key(serve.jwt_key);
  std::string token;
  std::filesystem::path token_path;
  if (!serve.token_file.empty()) {
    token = read_token_file(serve.token_file);
  } else {
    token = new_token();
    if (!out_dir.empty()) {
      std::filesystem::create_directories(out_dir);
      token_path = out_dir / "control.token";
    } else {
      std::string pattern = (std::filesystem::temp_directory_path() / "gputwin-control-XXXXXX").string();
      const int fd = ::mkstemp(pattern.data());
      if (fd < 0) throw InputError(pattern, "", "cannot create the control token file");
      ::close(fd);
      token_path = pattern;
    }
    write_token(token_path, token);
  }
  const std::filesystem::path assets =
      serve.assets.empty() ? std::filesystem::path(GPUTWIN_WEB_ASSETS_DIR) : std::filesystem::path(serve.assets);
  // The HTTP threads are readers too: at kReaderNice, as the live run's own (ui/live_run.hpp).
  HttpServer::Options dashboard_options;
  dashboard_options.listen = serve.listen;
  dashboard_options.thread_nice = kReaderNice;
  HttpServer::Options slurm_options;
  slurm_options.listen = serve.slurmrestd_listen;
  slurm_options.thread_nice = kReaderNice;
  try {
    (void)listen_spec(serve.listen);
  } catch (const std::invalid_argument& e) {
    throw InputError("--listen", "", e.what());
  }
  if (!serve.no_slurmrestd) {
    try {
      (void)listen_spec(serve.slurmrestd_listen);
    } catch (const std::invalid_argument& e) {
      throw InputError("--slurmrestd-listen", "", e.what());
    }
  }

  const std::string name = scenario.name;
  LiveRun live(std::move(scenario), std::move(options), live_options);
  DashboardApi api(live, assets, token);
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<HttpServer> slurm_server;
  SlurmApiOptions slurm_api_options;
  slurm_api_options.jwt_key = jwt_key;
  LiveSlurmWriter slurm_writer(live);
  slurm_api_options.writer = &slurm_writer;
  slurm_api_options.write_token = token;
  try {
    server = std::make_unique<HttpServer>(dashboard_options, [&api](const HttpRequest& r) { return api.handle(r); });
    if (!serve.no_slurmrestd) {
      // Each request reads one copy of the state in memory throughout (the cluster as it stood at one simulated
      // time), or, once the run has ended, one snapshot (its end, then its results).
      slurm_server = std::make_unique<HttpServer>(slurm_options, [&live, &slurm_api_options](const HttpRequest& r) {
        std::shared_ptr<const LivePresent> present;
        try {
          present = live.present_slurm();
        } catch (const LiveError&) {
          present = nullptr;  // none yet: the snapshot's wait and answer
        }
        if (const RunViewSlurmSource* source = present != nullptr ? present->slurm() : nullptr)
          return SlurmApi(*source, slurm_api_options).handle(r);
        const std::shared_ptr<const RunSnapshot> snap = live.snapshot();
        return SlurmApi(snap->slurm(), slurm_api_options).handle(r);
      });
    }
  } catch (const std::runtime_error& e) {
    live.stop();
    live.close_streams();
    throw;
  }
  const LiveStatus start = live.status();
  fmt::print("gputwin: live simulation of {} ({} jobs, {}) on {}\n", name, start.total_jobs,
             live_options.speed > 0 ? fmt::format("{:g} simulated s per wall s", live_options.speed) : "full speed",
             server->url());
  if (!token_path.empty()) {
    fmt::print("gputwin: control token in {} (mode 0600; send it as Authorization: Bearer)\n", token_path.string());
  }
  if (slurm_server) {
    fmt::print(
        "gputwin: slurmrestd-compatible API (v0.0.41-v0.0.44; v0.0.44 node update, job submit, update and cancel; {}) "
        "on {}\n",
        jwt_key.empty() ? "no token check" : "JWT checked", slurm_server->url());
  }
  if (!std::filesystem::is_regular_file(assets / "index.html")) {
    fmt::print("gputwin: the dashboard's pages are not built ({}): the API answers; see {}/ for how\n", assets.string(),
               server->url());
  }
  std::fflush(stdout);

  bool ended_said = false;
  int status = 0;
  while (true) {
    timespec tick{0, 200'000'000};
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    const bool finished = live.wait_finished(std::chrono::milliseconds(0));
    if (finished && !ended_said) {
      ended_said = true;
      const LiveStatus s = live.status();
      if (s.state == "failed") {
        fmt::print(stderr, "gputwin: the simulation failed: {}\n", s.error);
        status = 1;
        break;
      }
      const RunOutcome* outcome = live.outcome();
      fmt::print(
          "gputwin: the simulation ended at simulated second {} ({} events in {:.3f} s wall, its thread on a CPU "
          "{:.0f}% of the time and waiting for one {:.3f} s; {} copies of the state ({} into an earlier copy's memory) "
          "in {:.3f} s of it, {} snapshots written in {:.3f} s beside it){}; still serving it (Ctrl-C to stop)\n",
          s.now_s, s.events, outcome != nullptr ? outcome->sim_wall_s : 0.0, 100 * s.simulation_on_cpu,
          s.simulation_cpu_wait_s, s.copies, s.reused_copies, s.snapshot_copy_wall_s, s.snapshots, s.snapshot_wall_s,
          out_dir.empty() ? "" : "; results in " + out_dir.string());
      std::fflush(stdout);
    }
    if (signal == SIGINT || signal == SIGTERM) {
      if (!finished) {
        fmt::print("gputwin: stopping the simulation at simulated second {}; writing its results\n",
                   live.status().now_s);
        std::fflush(stdout);
        live.stop();
        live.wait_finished(std::chrono::hours(24 * 365));
        const LiveStatus s = live.status();
        if (s.state == "failed") {
          fmt::print(stderr, "gputwin: the simulation failed: {}\n", s.error);
          status = 1;
        } else {
          fmt::print("gputwin: stopped at simulated second {}{}\n", s.now_s,
                     out_dir.empty() ? "" : "; results in " + out_dir.string());
        }
      }
      break;
    }
  }
  live.close_streams();
  slurm_server.reset();
  server.reset();
  fmt::print("gputwin: stopped serving\n");
  return status;
}

}  // namespace gputwin
