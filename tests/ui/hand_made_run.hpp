// A fixture that writes the hand-made results database (tests/ui/hand_made_database.hpp) into a fresh folder per
// test, shared by the dashboard and slurmrestd-compatible API tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/ui/hand_made_database.hpp"

namespace gputwin {

class HandMadeRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gputwin-run-view-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(write_hand_made_run(dir_), "");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace gputwin
