// `gputwin twin` (mirror, forecast and act beside a real cluster through slurmrestd; with --serve, the web
// dashboard of its results folder while it polls) and `gputwin twin-score` (how good its forecasts were): their
// options and how they run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "twin/twin_runner.hpp"

namespace gputwin {

/// The parsed options of the twin commands.
struct TwinCommands {
  CLI::App* twin = nullptr;                          ///< `gputwin twin`.
  CLI::App* score = nullptr;                         ///< `gputwin twin-score`.
  TwinOptions options;                               ///< Options of `twin`.
  std::string token_file;                            ///< --token-file.
  std::string scenario;                              ///< --scenario (site policy).
  std::string slurm_conf;                            ///< --slurm-conf (site policy through import).
  std::string controllers;                           ///< --controllers, comma separated.
  std::string predictor = "recent";                  ///< --predictor.
  bool dry_run = false;                              ///< --dry-run (the default; conflicts with --act).
  std::string score_path;                            ///< twin-score's folder.
  bool serve = false;                                ///< --serve: the dashboard of the twin's folder while it polls.
  std::string listen = "127.0.0.1:8080";             ///< --listen ADDR:PORT (with --serve).
  std::string slurmrestd_listen = "127.0.0.1:6820";  ///< --slurmrestd-listen (with --serve).
  bool no_slurmrestd = false;                        ///< --no-slurmrestd (with --serve).
  std::string jwt_key;                               ///< --jwt-key FILE (with --serve).
  std::string assets;                                ///< --assets: the built pages (with --serve).
};

/// The token of a --token-file (twin's slurmrestd token, run --serve's control token): a regular file of mode 0600
/// or stricter, at most 64 KiB, trailing white space and a leading "SLURM_JWT=" dropped. Throws ConfigError.
std::string read_token_file(const std::string& path);

/// Adds the twin commands to `app`; the returned object receives their options.
void add_twin_commands(CLI::App& app, TwinCommands& commands);
/// Runs whichever twin command was given; returns the exit status (2 for bad options or input).
int run_twin_commands(TwinCommands& commands);

}  // namespace gputwin
