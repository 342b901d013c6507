// Inputs are regular files within a size bound per kind (issue 17): devices, FIFOs and folders are refused at once,
// whichever loader reads them, instead of being read for ever.
#include "model/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "model/slurm_conf.hpp"
#include "model/swf.hpp"

namespace gputwin {
namespace {

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gputwin-input-file-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(InputFile, RegularFilesWithinTheBoundPass) {
  const auto file = dir_ / "a.conf";
  std::ofstream(file) << "ClusterName=x\n";
  EXPECT_FALSE(input_file_problem(file, "configuration", kMaxConfigBytes));
  std::filesystem::create_symlink(file, dir_ / "link.conf");  // a link to a regular file is read through
  EXPECT_FALSE(input_file_problem(dir_ / "link.conf", "configuration", kMaxConfigBytes));
}

TEST_F(InputFile, DevicesFifosFoldersAndMissingFilesAreRefused) {
  const auto refused = [](const std::filesystem::path& p) {
    return input_file_problem(p, "scenario", kMaxScenarioBytes).value_or("");
  };
  EXPECT_EQ(refused("/dev/zero"), "not a regular file (a device, FIFO, socket or folder): a scenario must be a file");
  EXPECT_EQ(refused(dir_), refused("/dev/zero"));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(refused(dir_ / "fifo"), refused("/dev/zero"));
  EXPECT_EQ(refused(dir_ / "missing.json"), "cannot open: No such file or directory");
}

TEST_F(InputFile, FilesOverTheBoundAreRefusedWithTheLimit) {
  const auto big = dir_ / "big.conf";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, kMaxConfigBytes + 1);  // sparse: no disk used
  EXPECT_EQ(input_file_problem(big, "configuration", kMaxConfigBytes).value_or(""),
            "larger than 64 MiB, the limit for a configuration (67108865 bytes)");
  std::filesystem::resize_file(big, kMaxConfigBytes);
  EXPECT_FALSE(input_file_problem(big, "configuration", kMaxConfigBytes));
  // Smaller bounds are named in their own unit (the JWT key and token files: 64 KiB).
  EXPECT_EQ(input_file_problem(big, "key", 64 * 1024).value_or(""),
            "larger than 64 KiB, the limit for a key (67108864 bytes)");
}

TEST_F(InputFile, EveryLoaderRefusesADevice) {
  // The scenario, an SWF trace, slurm.conf and a slurm.conf Include target each name the file at fault.
  try {
    (void)load_scenario("/dev/zero", {});
    FAIL() << "a device was read as a scenario";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), "/dev/zero");
  }
  EXPECT_THROW((void)read_swf("/dev/urandom"), TraceError);
  EXPECT_THROW((void)read_slurm_conf("/dev/zero"), ConfigError);
  const auto conf = dir_ / "slurm.conf";
  std::ofstream(conf) << "ClusterName=x\nInclude /dev/zero\n";
  try {
    (void)read_slurm_conf(conf);
    FAIL() << "an Include of a device was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'/dev/zero': not a regular file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gputwin
