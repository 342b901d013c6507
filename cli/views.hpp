// Slurm-style views of a run at a chosen simulated time: squeue (from a results folder's recorded history),
// sprio and sshare (by re-running the scenario deterministically up to that time).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model/scenario.hpp"

namespace gputwin {

/// Parses a simulated time: seconds ("3600"), or Slurm's "d-hh:mm:ss" / "hh:mm:ss". False if malformed.
bool parse_sim_time(const std::string& text, std::int64_t& seconds);

/// Prints squeue's default columns for the jobs queued or running at `at_s` in `results_dir`/results.sqlite,
/// pending jobs with their reason at that time; `user` filters when not empty. Returns the exit code.
int print_squeue(const std::filesystem::path& results_dir, std::int64_t at_s, const std::string& user);

/// Runs `scenario` up to `at_s` and prints sprio's columns (weighted factors) for every pending job.
int print_sprio(const Scenario& scenario, std::int64_t at_s);

/// Runs `scenario` up to `at_s` and prints sshare's columns (with `long_format`, sshare -l's).
int print_sshare(const Scenario& scenario, std::int64_t at_s, bool long_format);

}  // namespace gputwin
