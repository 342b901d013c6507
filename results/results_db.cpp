#include "results/results_db.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <string>
#include <vector>

#include "model/errors.hpp"
#include "model/input_file.hpp"

namespace gputwin {

ResultsDb::ResultsDb(const std::filesystem::path& file, ResultsCheck check_level) : path_(file.string()) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw InputError(path_, "", "no such file (run `gputwin run --out DIR` first)");
  // write_results renames summary.json into place last (and removes the old one first): without it, a run was
  // stopped while it replaced these results, and the folder may hold files of two runs.
  if (file.filename() == "results.sqlite" && !std::filesystem::exists(file.parent_path() / "summary.json", ec)) {
    throw InputError(path_, "",
                     "incomplete results: summary.json beside it is missing (a run was stopped while it "
                     "wrote this folder; run it again)");
  }
  if (const auto problem = input_file_problem(file, "results database", kMaxResultsBytes)) {
    throw InputError(path_, "", *problem);
  }
  db_ = open_read_only();
  try {
    check(check_level);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

std::int64_t ResultsDb::pragma_int(const char* pragma) {
  std::int64_t value = 0;
  query(pragma, {}, [&](sqlite3_stmt* row) { value = sqlite3_column_int64(row, 0); });
  return value;
}

void ResultsDb::check(ResultsCheck check_level) {
  const std::int64_t application_id = pragma_int("PRAGMA application_id");
  if (application_id != kResultsApplicationId) {
    throw InputError(path_, "",
                     "not a gputwin results database (its SQLite application_id is " + std::to_string(application_id) +
                         ", not gputwin's; written by another program or " +
                         "by a gputwin older than its schema versions: run it again)");
  }
  const std::int64_t version = pragma_int("PRAGMA user_version");
  if (version > kResultsSchemaVersion) {
    throw InputError(path_, "",
                     "results schema version " + std::to_string(version) + " is newer than this gputwin reads (" +
                         std::to_string(kResultsSchemaVersion) + "); read it with the gputwin that wrote it");
  }
  if (version < 1) throw InputError(path_, "", "no results schema version (not written whole by gputwin)");
  if (check_level == ResultsCheck::kWrittenHere) return;
  // SQLite's quick_check runs on a connection of its own beside the numeric scans on this one: each reads the whole
  // file, so on two cores they take the longer one's time rather than the sum (1.9 s and 4-5 s at 1,000,000 jobs).
  // Nothing is read before both are done, and a damaged file is reported as such even if a scan failed on it first.
  std::future<std::vector<std::string>> quick_check =
      std::async(std::launch::async, [this] { return quick_check_problems(); });
  std::exception_ptr scan_error;
  try {
    check_numeric_columns();
  } catch (...) {
    scan_error = std::current_exception();
  }
  const std::vector<std::string> problems = quick_check.get();
  if (problems.size() != 1 || problems[0] != "ok") {
    std::string text;
    for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
    throw InputError(path_, "", "damaged: SQLite's quick_check reports: " + text);
  }
  if (scan_error) std::rethrow_exception(scan_error);
}

sqlite3* ResultsDb::open_read_only() const {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw InputError(path_, "", "cannot open: " + msg);
  }
  return db;
}

std::vector<std::string> ResultsDb::quick_check_problems() const {
  sqlite3* db = open_read_only();
  std::vector<std::string> problems;
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(3)", -1, &st, nullptr);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      problems.emplace_back(text != nullptr ? text : "");
    }
  }
  if (rc != SQLITE_DONE) problems.push_back(std::string("quick_check failed: ") + sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return problems;
}

void ResultsDb::check_numeric_columns() {
  // Numeric columns hold numbers: SQLite keeps what it is given, so a hand-edited 'nan' (text) or 9e999 (inf)
  // would otherwise reach the readers' arithmetic. In SQLite's order every text and blob sorts above every number
  // and NULL compares as nothing, so "c > DBL_MAX OR c < -DBL_MAX" holds exactly for text, blobs and infinities: one
  // scan per table of plain comparisons (a 1,000,000-job run's tables in about a quarter of the time typeof() and
  // abs() per column took), then, only if a row is found, the column at fault is named.
  constexpr const char* kAboveMaxOr = " > 1.7976931348623157e308 OR ";
  constexpr const char* kBelowMin = " < -1.7976931348623157e308";
  std::vector<std::string> tables;
  query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", {},
        [&](sqlite3_stmt* row) { tables.push_back(column_text(row, 0)); });
  for (const std::string& table : tables) {
    std::vector<std::string> numeric;
    query(("PRAGMA table_info(\"" + table + "\")").c_str(), {}, [&](sqlite3_stmt* row) {
      const std::string type = column_text(row, 2);
      if (type == "INTEGER" || type == "REAL") numeric.push_back(column_text(row, 1));
    });
    if (numeric.empty()) continue;
    const auto not_finite = [&](const std::string& column) {
      const std::string c = "\"" + column + "\"";
      return c + kAboveMaxOr + c + kBelowMin;
    };
    std::string any;
    for (const std::string& column : numeric) any += (any.empty() ? "" : " OR ") + not_finite(column);
    bool found = false;
    query(("SELECT 1 FROM \"" + table + "\" WHERE " + any + " LIMIT 1").c_str(), {},
          [&](sqlite3_stmt*) { found = true; });
    if (!found) continue;
    for (const std::string& column : numeric) {
      std::string bad;
      found = false;
      query(("SELECT \"" + column + "\" FROM \"" + table + "\" WHERE " + not_finite(column) + " LIMIT 1").c_str(), {},
            [&](sqlite3_stmt* row) {
              found = true;
              bad = column_text(row, 0);
            });
      if (found) {
        throw InputError(path_, "table " + table + ", column " + column,
                         "holds '" + bad.substr(0, 40) + "', not a finite number (the file was changed after " +
                             "gputwin wrote it)");
      }
    }
  }
}

ResultsDb::~ResultsDb() {
  sqlite3_close(db_);
}

void ResultsDb::query(const char* sql, std::initializer_list<std::int64_t> params,
                      const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) fail("query");
  int i = 1;
  for (std::int64_t p : params) sqlite3_bind_int64(st, i++, p);
  int rc = 0;
  try {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  } catch (...) {
    sqlite3_finalize(st);
    throw;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) fail("query");
}

bool ResultsDb::has_table(std::string_view name) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, nullptr) !=
      SQLITE_OK) {
    fail("query");
  }
  sqlite3_bind_text(st, 1, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail("query");
  return rc == SQLITE_ROW;
}

std::vector<std::string> ResultsDb::columns(std::string_view table) {
  std::vector<std::string> have;
  // PRAGMA arguments cannot be bound; the table name comes from our code, not from the file.
  query(("PRAGMA table_info(" + std::string(table) + ")").c_str(), {},
        [&](sqlite3_stmt* st) { have.push_back(column_text(st, 1)); });
  return have;
}

void ResultsDb::require_columns(std::string_view table, const std::vector<std::string_view>& columns) {
  const std::string where = "table " + std::string(table);
  if (!has_table(table)) throw InputError(path_, where, "missing (not a gputwin results database?)");
  const std::vector<std::string> have = this->columns(table);
  std::string missing;
  for (const std::string_view c : columns) {
    if (std::find(have.begin(), have.end(), c) == have.end()) missing += (missing.empty() ? "" : ", ") + std::string(c);
  }
  if (!missing.empty()) throw InputError(path_, where, "missing column(s) " + missing);
}

bool ResultsDb::has_column(std::string_view table, std::string_view column) {
  const std::vector<std::string> have = columns(table);
  return std::find(have.begin(), have.end(), column) != have.end();
}

void ResultsDb::fail(const char* what) {
  throw InputError(path_, "", std::string(what) + ": " + sqlite3_errmsg(db_));
}

std::string column_text(sqlite3_stmt* row, int i) {
  const unsigned char* t = sqlite3_column_text(row, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace gputwin
