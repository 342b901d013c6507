// `gputwin run SCENARIO --serve`: a live simulation served by the dashboard (with its controls) and the
// slurmrestd-compatible API, until it ends and then until interrupted; Ctrl-C while it runs stops the simulation at
// the simulated time it reached and writes the results as a run stopped then.
#pragma once

#include <filesystem>
#include <string>

#include "model/scenario.hpp"
#include "sim/runner.hpp"

namespace gputwin {

/// run --serve's options.
struct LiveServeOptions {
  std::string listen = "127.0.0.1:8080";             ///< --listen: the dashboard.
  std::string slurmrestd_listen = "127.0.0.1:6820";  ///< --slurmrestd-listen.
  bool no_slurmrestd = false;                        ///< --no-slurmrestd.
  std::string token_file;                            ///< --token-file: the controls' token (else one is made).
  std::string jwt_key;                               ///< --jwt-key: the slurmrestd-compatible API's JWT key.
  std::string assets;                                ///< --assets: the built pages.
  std::string speed = "60";                          ///< --speed: simulated seconds per wall second, or "max".
  bool paused = false;                               ///< --paused: start with the clock held.
  int refresh_ms = 1000;                             ///< --refresh-ms: how old a snapshot the readers may get.
};

/// Runs `scenario` live and serves it; results go to `out_dir` when the simulation ends (empty: none). Returns the
/// exit status.
int run_live_command(Scenario scenario, RunOptions options, const std::filesystem::path& out_dir,
                     const LiveServeOptions& serve);

}  // namespace gputwin
