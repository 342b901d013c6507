// sacctmgr output: the same text read as a `sacctmgr dump` file and as `sacctmgr show qos -P` output, then both
// imported with a small slurm.conf as `gputwin import --assoc --qos` does. Bad input must end in InputError.
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/import_command.hpp"
#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/slurm_conf.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gputwin::fuzz::write_scratch("slurm.conf",
                               "ClusterName=fuzz\nNodeName=gpu[01-04] CPUs=64 Gres=gpu:h100:8 RealMemory=1000\n"
                               "PartitionName=gpu Nodes=ALL Default=YES\nPriorityType=priority/multifactor\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gputwin::fuzz::as_text(data, size));
  bool dump_ok = true, qos_ok = true;
  try {
    std::istringstream in(text);
    (void)gputwin::parse_sacctmgr_dump(in, "assoc.cfg");
  } catch (const gputwin::InputError&) {
    dump_ok = false;
  }
  try {
    std::istringstream in(text);
    (void)gputwin::parse_sacctmgr_qos(in, "qos.txt");
  } catch (const gputwin::InputError&) {
    qos_ok = false;
  }
  if (!dump_ok && !qos_ok) return 0;
  const std::filesystem::path file = gputwin::fuzz::write_scratch("sacctmgr.txt", text);
  gputwin::ImportRequest request{.slurm_conf = (gputwin::fuzz::scratch_dir() / "slurm.conf").string()};
  if (dump_ok) request.assoc = file.string();
  if (qos_ok) request.qos = file.string();
  std::ostringstream scenario, notes;
  try {
    (void)gputwin::run_import(request, scenario, notes);
  } catch (const gputwin::InputError&) {
  }
  return 0;
}
