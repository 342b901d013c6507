// Writing results.sqlite: a connection whose failures name the file (Database), statements finalized on scope exit,
// and batch inserts through an eponymous table-valued function that hands SQLite a whole batch of rows at a time
// (BatchInsert). Shared by the results store and the stream that writes results while a run goes on.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "results/results_store.hpp"

namespace gputwin::results_sqlite {

/// One batch of buffered rows, handed to the row feed below through sqlite3_bind_pointer.
struct RowBatch {
  /// A buffered value: set by BatchInsert, read back by the feed.
  struct Value {
    enum Type : std::uint8_t { kUnset, kNull, kInt, kReal, kText } type = kUnset;
    sqlite3_int64 i = 0;
    double d = 0;
    std::string text;       // an owned copy (BatchInsert::text())
    std::string_view view;  // what is inserted: `text`, or text the caller keeps (BatchInsert::text_ref())
  };
  const Value* values = nullptr;  // rows x columns, row-major
  int columns = 0;
  int rows = 0;
};

// The row feed: an eponymous table-valued function, `gputwin_rows(?1)`, whose rows are a RowBatch passed as a
// pointer (sqlite3_bind_pointer, type kRowBatchPointer). `INSERT INTO t SELECT c0, c1, ... FROM gputwin_rows(?1)`
// inserts a whole batch in one step with no sqlite3_bind_* per value (a call that checks the statement and copies
// the value into it, which the statement then copies again): about 9% fewer instructions per 11-column row
// than a multi-row INSERT of bound values (callgrind, 500,000 rows, BENCHMARKS.md "Writing results, round 3").
inline constexpr const char* kRowBatchPointer = "gputwin_row_batch";
inline constexpr int kFeedColumns = 32;  // the widest insert through it: jobs, 23 columns and its rowid

/// The row feed's module (registered by Database::use_row_feed).
const sqlite3_module& row_feed_module_definition();

/// Owns a sqlite3 connection; every failure becomes a ResultsError naming the file.
class Database {
 public:
  explicit Database(const std::filesystem::path& path) : path_(path) {
    // One thread uses a connection at a time (each writer opens its own): no per-call mutex (NOMUTEX).
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      const std::string msg = path.string() + ": cannot open: " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
      sqlite3_close(db_);  // sqlite3_open may return a handle even on failure
      throw ResultsError(msg);
    }
  }
  ~Database() { sqlite3_close(db_); }
  sqlite3* handle() { return db_; }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw ResultsError(path_.string() + ": " + msg);
    }
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) fail("prepare");
    return stmt;
  }
  void step(sqlite3_stmt* stmt) {
    if (sqlite3_step(stmt) != SQLITE_DONE) fail("insert");
    sqlite3_reset(stmt);
  }
  /// Registers the row feed (gputwin_rows) on this connection, once.
  void use_row_feed() {
    if (row_feed_) return;
    if (sqlite3_create_module_v2(db_, "gputwin_rows", &row_feed_module_definition(), nullptr, nullptr) != SQLITE_OK) {
      fail("register the row feed");
    }
    row_feed_ = true;
  }
  [[noreturn]] void fail(const char* what) {
    throw ResultsError(path_.string() + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "no connection"));
  }

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  bool row_feed_ = false;
};

/// Finalizes a statement when it goes out of scope.
struct Statement {
  sqlite3_stmt* stmt;
  ~Statement() { sqlite3_finalize(stmt); }
};

/// Inserts rows into one table kRows at a time through the row feed: every column of a row is set (1-based, as
/// sqlite3_bind_*), then end_row(); a full batch is inserted by one step, and finish() inserts the last, partial one.
/// Values are kept here until their batch is written (text copied), so callers may pass temporaries.
class BatchInsert {
 public:
  static constexpr int kRows = 1024;

  /// Inserts into `table`'s columns in order, or into those `column_list` names ("a, b, rowid").
  BatchInsert(Database& db, const char* table, int columns, std::string_view column_list = {})
      : db_(db), columns_(columns), values_(static_cast<std::size_t>(kRows * columns)) {
    if (columns < 1 || columns > kFeedColumns) {
      throw std::logic_error(std::string("BatchInsert: ") + table + " has " + std::to_string(columns) +
                             " columns; the row feed takes 1 to " + std::to_string(kFeedColumns));
    }
    db.use_row_feed();
    std::string sql = std::string("INSERT INTO ") + table;
    if (!column_list.empty()) sql += "(" + std::string(column_list) + ")";
    sql += " SELECT ";
    for (int c = 0; c < columns; ++c) sql += (c == 0 ? "c" : ", c") + std::to_string(c);
    sql += " FROM gputwin_rows(?1)";
    insert_.stmt = db.prepare(sql.c_str());
  }
  BatchInsert(const BatchInsert&) = delete;
  BatchInsert& operator=(const BatchInsert&) = delete;

  /// Sets column `col` of the current row.
  void int64(int col, sqlite3_int64 v) {
    Value& slot = value(col);
    slot.type = Value::kInt;
    slot.i = v;
  }
  /// Sets column `col` of the current row.
  void real(int col, double v) {
    Value& slot = value(col);
    slot.type = Value::kReal;
    slot.d = v;
  }
  /// Sets column `col` of the current row (copied).
  void text(int col, std::string_view v) {
    Value& slot = value(col);
    slot.type = Value::kText;
    slot.text.assign(v);
    slot.view = slot.text;
  }
  /// Sets column `col` of the current row to text that outlives the batch (not copied).
  void text_ref(int col, std::string_view v) {
    Value& slot = value(col);
    slot.type = Value::kText;
    slot.view = v;
  }
  /// Sets column `col` of the current row to NULL.
  void null(int col) { value(col).type = Value::kNull; }
  /// Ends the current row; a full batch is written.
  void end_row() {
    if (++row_ < kRows) return;
    insert_rows();
  }
  /// Writes the rows of the last, partial batch.
  void finish() {
    if (row_ > 0) insert_rows();
  }

 private:
  using Value = RowBatch::Value;
  Value& value(int col) { return values_[static_cast<std::size_t>(row_ * columns_ + col - 1)]; }
  // Inserts the buffered rows in one step; each value is then unset (a text's bytes stay until it is assigned again),
  // so a column left unset in a later row is caught.
  void insert_rows() {
    const std::size_t count = static_cast<std::size_t>(row_ * columns_);
    for (std::size_t i = 0; i < count; ++i) {
      if (values_[i].type == Value::kUnset) db_.fail("a column left unset in a batch insert");
    }
    const RowBatch batch{values_.data(), columns_, row_};
    sqlite3_bind_pointer(insert_.stmt, 1, const_cast<RowBatch*>(&batch), kRowBatchPointer, nullptr);
    db_.step(insert_.stmt);
    sqlite3_bind_null(insert_.stmt, 1);
    for (std::size_t i = 0; i < count; ++i) values_[i].type = Value::kUnset;
    row_ = 0;
  }

  Database& db_;
  int columns_;
  std::vector<Value> values_;  // kRows rows of columns_ values
  int row_ = 0;                // rows set in the current batch
  Statement insert_{nullptr};
};

/// The results database's tables (the metrics, fault, interruption and cloud tables are created by their writers).
inline constexpr const char* kSchema = R"sql(
CREATE TABLE runs (run_id INTEGER PRIMARY KEY, scenario TEXT NOT NULL, scenario_file TEXT, seed INTEGER NOT NULL,
  policy TEXT NOT NULL, version TEXT NOT NULL, wall_time_s REAL NOT NULL, events INTEGER NOT NULL, parameters TEXT);
CREATE TABLE jobs (job_id INTEGER NOT NULL, name TEXT, user TEXT, account TEXT, partition TEXT, qos TEXT,
  submit_time INTEGER NOT NULL, start_time INTEGER, end_time INTEGER, state TEXT NOT NULL, nodes INTEGER NOT NULL,
  cpus INTEGER NOT NULL, gpus INTEGER NOT NULL, time_limit INTEGER NOT NULL, node_list TEXT, priority INTEGER,
  reason TEXT, wait_time INTEGER, run_time INTEGER, array_job_id INTEGER, array_task_id INTEGER,
  trace_run_time INTEGER NOT NULL, leaf_switches INTEGER);
CREATE TABLE nodes (node_index INTEGER PRIMARY KEY, name TEXT NOT NULL, cpus INTEGER NOT NULL,
  memory_mb INTEGER NOT NULL, gpus INTEGER NOT NULL, gpu_type TEXT, weight INTEGER NOT NULL);
CREATE TABLE node_events (time INTEGER NOT NULL, node_index INTEGER NOT NULL, state TEXT NOT NULL,
  node_count INTEGER NOT NULL);
CREATE TABLE partitions (name TEXT NOT NULL, nodes TEXT, is_default INTEGER NOT NULL, default_time INTEGER,
  max_time INTEGER, state TEXT, priority_tier INTEGER, priority_job_factor INTEGER, total_nodes INTEGER,
  total_cpus INTEGER);
CREATE TABLE job_reasons (time INTEGER NOT NULL, job_id INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE preemptions (time INTEGER NOT NULL, job_id INTEGER NOT NULL, preemptor_id INTEGER NOT NULL,
  end_time INTEGER NOT NULL, mode TEXT NOT NULL);
CREATE TABLE summary (key TEXT PRIMARY KEY, value REAL);
)sql";

/// The indexes of the jobs and job_reasons tables: built after the rows in a write after the run, before them in a
/// stream's database (kept up as the rows go in, on the writer's thread, while the run goes on).
inline constexpr const char* kJobIndexes =
    "CREATE INDEX jobs_by_id ON jobs(job_id); CREATE INDEX job_reasons_by_job ON job_reasons(job_id, time);";

/// Opens a new results database at `path` (a leftover file there is removed first) and begins its one transaction:
/// journal off (the file is renamed into place only when complete), the tables of kSchema, gputwin's application id
/// and schema version.
void start_results_database(Database& db);

}  // namespace gputwin::results_sqlite
