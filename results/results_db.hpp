// Read-only access to a results folder's results.sqlite, for the commands that read a run back (report, metrics,
// compare, squeue, serve, twin-score). Every failure is an InputError naming the file (and the table, where one is
// at fault), so a missing or malformed results folder gives one line and exit status 2. Before anything is read the
// file is checked whole: summary.json beside a results.sqlite (the mark of a complete write), a regular file,
// gputwin's application id and a schema version this build reads, SQLite's quick_check, and no non-finite or
// non-numeric value in a numeric column (a hand-edited inf or 'nan').
//
//   ResultsDb db(dir / "results.sqlite");
//   db.require_columns("jobs", {"job_id", "gpus"});
//   db.query("SELECT job_id, gpus FROM jobs", {}, [&](sqlite3_stmt* row) { ... });
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin {

/// PRAGMA application_id of a gputwin results.sqlite ("GPTW").
inline constexpr int kResultsApplicationId = 0x47505457;
/// PRAGMA user_version: the results schema this build writes and the newest it reads. 2: node_events rows cover
/// node_count consecutive nodes, and cluster_metrics holds only the samples at which something changed (readers
/// expand both; version 1 files, one node per row and every sample, read the same way).
inline constexpr int kResultsSchemaVersion = 2;
/// Largest results.sqlite the readers open: 64 GiB.
inline constexpr std::uintmax_t kMaxResultsBytes = std::uintmax_t{64} << 30;

/// How much of a results.sqlite is checked before it is read.
enum class ResultsCheck : std::uint8_t {
  kWhole,        ///< Everything in the file comment: any file a user gives.
  kWrittenHere,  ///< Only the mark, application id and schema version: a file this process has just written (a
                 ///< live run's snapshot in its private folder, or its results at the end), whose quick_check and
                 ///< column scans cost as much as the write.
};

/// A results.sqlite opened read-only.
class ResultsDb {
 public:
  /// Opens `file` read-only and checks it (whole by default; see the file comment). Throws InputError naming the
  /// file, and the table and column where one is at fault, if it is missing, cannot be opened or fails a check.
  explicit ResultsDb(const std::filesystem::path& file, ResultsCheck check = ResultsCheck::kWhole);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  /// Runs `sql` with integer parameters bound in order and calls `row` for each result row. Throws InputError
  /// (naming the file) if the query fails, e.g. on a file that is not a database.
  void query(const char* sql, std::initializer_list<std::int64_t> params,
             const std::function<void(sqlite3_stmt*)>& row);
  /// True if the database has table `name`.
  bool has_table(std::string_view name);
  /// Throws InputError naming the table unless it exists and has every one of `columns`.
  void require_columns(std::string_view table, const std::vector<std::string_view>& columns);
  /// True if table `table` has column `column` (a column newer runs write and older ones lack).
  bool has_column(std::string_view table, std::string_view column);
  /// Throws InputError naming the file, `what` failed and SQLite's message.
  [[noreturn]] void fail(const char* what);
  /// The file, as given.
  [[nodiscard]] const std::string& path() const { return path_; }
  /// The open connection, for queries with text parameters.
  [[nodiscard]] sqlite3* handle() const { return db_; }

 private:
  /// The column names of `table` (PRAGMA table_info); empty if there is no such table.
  std::vector<std::string> columns(std::string_view table);
  /// The checks before anything is read: application id, schema version, and with kWhole quick_check and the
  /// numeric columns.
  void check(ResultsCheck check);
  /// A new read-only connection to the file; throws InputError naming it if it cannot be opened.
  [[nodiscard]] sqlite3* open_read_only() const;
  /// PRAGMA quick_check's lines on a connection of its own ("ok" alone when the file is sound).
  [[nodiscard]] std::vector<std::string> quick_check_problems() const;
  /// Throws InputError naming the table and column if a numeric column holds text, a blob or an infinity.
  void check_numeric_columns();
  /// A single integer PRAGMA's value.
  std::int64_t pragma_int(const char* pragma);

  std::string path_;
  sqlite3* db_ = nullptr;
};

/// Column `i` of a result row as text; "" for NULL.
std::string column_text(sqlite3_stmt* row, int i);

}  // namespace gputwin
