// `gputwin serve RESULTS [RESULTS ...]`: the web dashboard, its JSON API and /metrics over a results folder (a
// finished run or a twin's folder), until interrupted; with two or more folders, a compare tab puts them side by side
// (the other tabs show the first).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gputwin {

/// The parsed options of `gputwin serve`.
struct ServeCommand {
  CLI::App* app = nullptr;                ///< The subcommand.
  std::vector<std::string> results;       ///< The results folders (the first is the one the tabs show).
  std::string listen = "127.0.0.1:8080";  ///< --listen ADDR:PORT.
  std::string assets;                     ///< --assets: the built pages (default: this build's ui/web/dist).
  double duration_s = 0;                  ///< --duration: stop after this many seconds (0: until SIGINT/SIGTERM).
  std::string slurmrestd_listen = "127.0.0.1:6820";  ///< --slurmrestd-listen: the slurmrestd-compatible API.
  bool no_slurmrestd = false;                        ///< --no-slurmrestd: do not serve it.
  std::string jwt_key;                               ///< --jwt-key FILE: check X-SLURM-USER-TOKEN (HS256).
  double at_s = -1;  ///< --at: simulated time the slurmrestd-compatible API shows (-1: the run's end).
};

/// The bytes of a --jwt-key file: a regular file of 1 byte to 64 KiB (Slurm's are 32 random bytes or more). Throws
/// InputError naming the file.
std::string read_jwt_key(const std::string& file);

/// Adds `serve` to `app`; `command` receives its options.
void add_serve_command(CLI::App& app, ServeCommand& command);
/// Runs `serve` if it was given: the exit status, or -1 when it was not.
int run_serve_command(const ServeCommand& command);

}  // namespace gputwin
