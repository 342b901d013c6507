// What every reader of a results folder does with it, for the results fuzzers: `gputwin report`, `squeue`,
// `compare` and `metrics`, and the answers of `gputwin serve` (the dashboard's JSON API and the slurmrestd-compatible
// API) to a fixed list of requests. A folder they cannot use must end in InputError (the readers) or HttpError (the
// dashboard), never in a crash, a hang or another exception.
#pragma once

#include <filesystem>

namespace gputwin::fuzz {

/// Reads results folder `dir` (its results.sqlite) with every reader.
void read_results_folder(const std::filesystem::path& dir);

}  // namespace gputwin::fuzz
