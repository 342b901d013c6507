// Read-only access to a results folder's results.sqlite, for the commands that read a run back (metrics, report).
// Every failure is an InputError naming the file (and the table, where one is at fault), so a missing or malformed
// results folder gives one line and exit status 2.
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

/// A results.sqlite opened read-only.
class ResultsDb {
 public:
  /// Opens `file` read-only. Throws InputError if it does not exist or cannot be opened.
  explicit ResultsDb(const std::filesystem::path& file);
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

 private:
  /// The column names of `table` (PRAGMA table_info); empty if there is no such table.
  std::vector<std::string> columns(std::string_view table);

  std::string path_;
  sqlite3* db_ = nullptr;
};

/// Column `i` of a result row as text; "" for NULL.
std::string column_text(sqlite3_stmt* row, int i);

}  // namespace gputwin
