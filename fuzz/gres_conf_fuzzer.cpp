// gres.conf: parsed and applied to a small node table (typed and untyped GPUs). Bad input must end in InputError.
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/slurm_conf.hpp"

namespace {

gputwin::SlurmConf node_table() {
  std::istringstream in(
      "ClusterName=fuzz\nNodeName=gpu[01-04] CPUs=64 Gres=gpu:8 RealMemory=1000\n"
      "NodeName=a100n[1-2] CPUs=32 Gres=gpu:a100:4,gpu:2\nNodeName=cpu1 CPUs=8\n"
      "PartitionName=all Nodes=ALL Default=YES\n");
  return gputwin::parse_slurm_conf(in, "slurm.conf", ".");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gputwin::SlurmConf nodes = node_table();
  std::istringstream in{std::string(gputwin::fuzz::as_text(data, size))};
  try {
    const gputwin::GresConf gres = gputwin::parse_gres_conf(in, "gres.conf");
    gputwin::SlurmConf conf = nodes;
    (void)gputwin::apply_gres_conf(conf, gres);
  } catch (const gputwin::InputError&) {
  }
  return 0;
}
