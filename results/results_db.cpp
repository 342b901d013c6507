#include "results/results_db.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace gputwin {

ResultsDb::ResultsDb(const std::filesystem::path& file) : path_(file.string()) {
  if (!std::filesystem::exists(file)) throw InputError(path_, "", "no such file (run `gputwin run --out DIR` first)");
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw InputError(path_, "", "cannot open: " + msg);
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
