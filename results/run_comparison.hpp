// Two or more runs' results side by side (what-if studies: the same workload under other configurations): the
// headline numbers of each run's summary table, and the mean wait per account and per partition. `gputwin compare`
// prints it; the dashboard's compare tab (`gputwin serve RUN1 RUN2 ...`) shows it.
//
//   RunComparison c = compare_runs({"out/a", "out/b"});   // throws InputError naming the file at fault
//   for (const ComparisonRow& row : c.summary) ...        // row.values[i]: run i's value, empty when it has none
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gputwin {

/// One compared quantity: its key, how people read it, and each run's value (empty: that run has none).
struct ComparisonRow {
  std::string key;                            ///< Summary key ("wait_p50_s") or account / partition name.
  std::string label;                          ///< "wait p50 (s)"; the key itself for accounts and partitions.
  std::vector<std::optional<double>> values;  ///< One per run, in the order the runs were given.
};

/// Runs compared.
struct RunComparison {
  std::vector<std::filesystem::path> runs;       ///< The results folders, as given.
  std::vector<ComparisonRow> summary;            ///< Headline numbers any run has, in a fixed order.
  std::vector<ComparisonRow> wait_by_account;    ///< Mean wait (s) of the started jobs per account, by name.
  std::vector<ComparisonRow> wait_by_partition;  ///< The same per partition.
};

/// Reads the results folders `dirs` (each opened and checked whole, as every reader does, before anything is
/// compared). Throws InputError naming the file, table or column at fault.
RunComparison compare_runs(const std::vector<std::filesystem::path>& dirs);

class RunView;

/// The same for folders `dirs` already read into `views` (one each; their databases are not opened and checked
/// again).
RunComparison compare_runs(const std::vector<std::filesystem::path>& dirs, const std::vector<const RunView*>& views);

/// The change from `a` to `b` as people read it: "+12.5%", "-3" when `a` is 0, "" when equal.
std::string comparison_change(double a, double b);

}  // namespace gputwin
