// results.sqlite as SQL: the input is an SQL script (seeds: `sqlite3 results.sqlite .dump` of small runs and the
// tests' hand-made run) executed into a fresh database, which every reader then reads (report, squeue, compare,
// metrics, serve). This reaches odd values the readers must refuse or survive (NULLs, text for numbers, NaN,
// huge times, missing rows) far faster than byte mutations of a database file. Statements that fail are skipped;
// ATTACH is refused and a statement may run at most a bounded number of SQLite steps, so a script cannot write
// elsewhere or loop.
#include <sqlite3.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/results_readers.hpp"
#include "tests/support/hand_made_results.hpp"

namespace {

int refuse_attach(void*, int action, const char*, const char*, const char*, const char*) {
  return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

// Executes the script statement by statement, skipping those that fail.
void execute(sqlite3* db, const std::string& script) {
  // about a million virtual machine steps per statement: enough for any seed, not for a recursive CTE's millions
  int steps = 0;
  sqlite3_progress_handler(
      db, 1000, [](void* count) { return ++*static_cast<int*>(count) > 1000 ? 1 : 0; }, &steps);
  const char* sql = script.c_str();
  const char* end = sql + script.size();
  while (sql < end && *sql != '\0') {
    sqlite3_stmt* statement = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, sql, static_cast<int>(end - sql), &statement, &tail) != SQLITE_OK) {
      // skip to the next ';' and try again from there
      const char* next = static_cast<const char*>(std::memchr(sql, ';', static_cast<std::size_t>(end - sql)));
      sql = next == nullptr ? end : next + 1;
      continue;
    }
    if (statement != nullptr) {
      steps = 0;
      while (sqlite3_step(statement) == SQLITE_ROW) {
      }
      sqlite3_finalize(statement);
    }
    if (tail == nullptr || tail <= sql) break;
    sql = tail;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gputwin::fuzz::silence_stdout();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path file = gputwin::fuzz::scratch_dir() / "results.sqlite";
  std::filesystem::remove(file);
  sqlite3* db = nullptr;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return 0;
  }
  sqlite3_set_authorizer(db, refuse_attach, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
  // Stamped as write_results stamps it (a script may change the stamp, and the readers must then refuse it).
  execute(db, gputwin::testing::results_stamp_sql() + std::string(gputwin::fuzz::as_text(data, size)));
  sqlite3_close(db);
  gputwin::fuzz::read_results_folder(gputwin::fuzz::scratch_dir());
  return 0;
}
