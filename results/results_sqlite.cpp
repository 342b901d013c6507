#include "results/results_sqlite.hpp"

#include <new>
#include <string>

#include "results/results_db.hpp"

namespace gputwin::results_sqlite {
namespace {

struct FeedCursor {
  sqlite3_vtab_cursor base;
  const RowBatch* batch = nullptr;
  int row = 0;
};

int feed_connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  std::string sql = "CREATE TABLE x(";
  for (int c = 0; c < kFeedColumns; ++c) sql += "c" + std::to_string(c) + ",";
  sql += "batch HIDDEN)";
  if (const int rc = sqlite3_declare_vtab(db, sql.c_str()); rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<sqlite3_vtab*>(sqlite3_malloc(sizeof(sqlite3_vtab)));
  if (vtab == nullptr) return SQLITE_NOMEM;
  *vtab = sqlite3_vtab{};
  *out = vtab;
  return SQLITE_OK;
}
int feed_disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}
// The batch argument (the hidden column, by equality) is required: without it the feed has no rows to give.
int feed_best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn == kFeedColumns && c.op == SQLITE_INDEX_CONSTRAINT_EQ && c.usable) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->estimatedCost = 1;
      info->idxNum = 1;
      return SQLITE_OK;
    }
  }
  return SQLITE_CONSTRAINT;
}
int feed_open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* cursor = new (std::nothrow) FeedCursor{};
  if (cursor == nullptr) return SQLITE_NOMEM;
  *out = &cursor->base;
  return SQLITE_OK;
}
int feed_close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<FeedCursor*>(cursor);
  return SQLITE_OK;
}
int feed_filter(sqlite3_vtab_cursor* base, int, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<FeedCursor*>(base);
  cursor->batch = argc == 1 ? static_cast<const RowBatch*>(sqlite3_value_pointer(argv[0], kRowBatchPointer)) : nullptr;
  cursor->row = 0;
  return SQLITE_OK;
}
int feed_next(sqlite3_vtab_cursor* base) {
  ++reinterpret_cast<FeedCursor*>(base)->row;
  return SQLITE_OK;
}
int feed_eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<FeedCursor*>(base);
  return cursor->batch == nullptr || cursor->row >= cursor->batch->rows ? 1 : 0;
}
int feed_column(sqlite3_vtab_cursor* base, sqlite3_context* context, int column) {
  const auto* cursor = reinterpret_cast<FeedCursor*>(base);
  if (column >= cursor->batch->columns) return SQLITE_OK;  // NULL
  const RowBatch::Value& v =
      cursor->batch->values[static_cast<std::size_t>(cursor->row * cursor->batch->columns + column)];
  switch (v.type) {
    case RowBatch::Value::kInt:
      sqlite3_result_int64(context, v.i);
      break;
    case RowBatch::Value::kReal:
      sqlite3_result_double(context, v.d);
      break;
    case RowBatch::Value::kText:  // the batch keeps the text until its step is done
      sqlite3_result_text(context, v.view.data(), static_cast<int>(v.view.size()), SQLITE_STATIC);
      break;
    case RowBatch::Value::kNull:
    case RowBatch::Value::kUnset:  // BatchInsert refuses a batch with an unset value before it steps
      break;
  }
  return SQLITE_OK;
}
int feed_rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = reinterpret_cast<FeedCursor*>(base)->row;
  return SQLITE_OK;
}

constexpr sqlite3_module row_feed_module() {
  sqlite3_module m{};
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous only: gputwin_rows(...) needs no CREATE VIRTUAL TABLE
  m.xConnect = feed_connect;
  m.xBestIndex = feed_best_index;
  m.xDisconnect = feed_disconnect;
  m.xDestroy = feed_disconnect;
  m.xOpen = feed_open;
  m.xClose = feed_close;
  m.xFilter = feed_filter;
  m.xNext = feed_next;
  m.xEof = feed_eof;
  m.xColumn = feed_column;
  m.xRowid = feed_rowid;
  return m;
}
constexpr sqlite3_module kRowFeedModule = row_feed_module();

}  // namespace

const sqlite3_module& row_feed_module_definition() {
  return kRowFeedModule;
}

void start_results_database(Database& db) {
  // A 64 MiB page cache keeps the indexes built at the end in memory.
  db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;");
  db.exec("BEGIN");
  db.exec(kSchema);
  // Who wrote it and which schema: the readers (results_db.hpp) refuse a file without them.
  db.exec(("PRAGMA application_id = " + std::to_string(kResultsApplicationId) +
           "; PRAGMA user_version = " + std::to_string(kResultsSchemaVersion) + ";")
              .c_str());
}

}  // namespace gputwin::results_sqlite
