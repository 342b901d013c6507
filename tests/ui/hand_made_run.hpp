// A fixture that writes the hand-made results database (tests/ui/hand_made_database.hpp) into a fresh folder per
// test, shared by the dashboard and slurmrestd-compatible API tests.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/hand_made_results.hpp"
#include "tests/ui/hand_made_database.hpp"

namespace gputwin {

class HandMadeRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gputwin-run-view-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "results.sqlite").c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, (testing::results_stamp_sql() + kHandMadeDatabase).c_str(), nullptr, nullptr, &error),
              SQLITE_OK)
        << (error ? error : "");
    sqlite3_close(db);
    testing::write_summary_marker(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace gputwin
