// For tests that write a results.sqlite by hand: what write_results adds that the readers check before trusting a
// results folder (results/results_db.hpp): gputwin's application id, the schema version, and summary.json beside it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "results/results_db.hpp"

namespace gputwin::testing {

/// SQL stamping a database as a gputwin results.sqlite of this build's schema, as write_results does.
inline std::string results_stamp_sql() {
  return "PRAGMA application_id = " + std::to_string(kResultsApplicationId) +
         "; PRAGMA user_version = " + std::to_string(kResultsSchemaVersion) + ";";
}

/// Writes the summary.json that marks `dir`'s results as written whole.
inline void write_summary_marker(const std::filesystem::path& dir) {
  std::ofstream(dir / "summary.json") << "{}\n";
}

}  // namespace gputwin::testing
