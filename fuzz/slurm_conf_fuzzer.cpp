// slurm.conf: parsed, then imported as `gputwin import` does (its scenario JSON parsed back as a scenario). Include
// lines resolve in the scratch folder, which holds one small include file. Bad input must end in InputError.
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/import_command.hpp"
#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "model/slurm_conf.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gputwin::fuzz::silence_stdout();
  gputwin::fuzz::write_scratch("nodes.conf", "NodeName=inc[1-2] CPUs=8 Gres=gpu:h100:4 RealMemory=1000\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = gputwin::fuzz::as_text(data, size);
  try {
    std::istringstream in{std::string(text)};
    (void)gputwin::parse_slurm_conf(in, "slurm.conf", gputwin::fuzz::scratch_dir());
  } catch (const gputwin::InputError&) {
    return 0;
  }
  const std::filesystem::path conf = gputwin::fuzz::write_scratch("slurm.conf", text);
  std::ostringstream scenario, notes;
  try {
    if (gputwin::run_import({.slurm_conf = conf.string()}, scenario, notes) != 0) return 0;
  } catch (const gputwin::InputError&) {
    return 0;
  }
  try {
    (void)gputwin::parse_scenario(scenario.str(), "imported.json", gputwin::fuzz::scratch_dir());
  } catch (const gputwin::InputError&) {
    // an import may be refused when it is checked as a scenario (a cluster without nodes, say), with a message
  }
  return 0;
}
