// SWF traces: parse, write back and parse again (the round trip the README promises), and turn the records into jobs
// under every processor mapping. Bad input must end in TraceError.
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/swf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(gputwin::fuzz::as_text(data, size))};
  try {
    const gputwin::SwfTrace trace = gputwin::parse_swf(in, "fuzz.swf");
    std::ostringstream written;
    gputwin::write_swf(written, trace);
    std::istringstream again(written.str());
    if (!(gputwin::parse_swf(again, "written.swf") == trace)) __builtin_trap();  // the round trip lost something
    for (const auto mapping : {gputwin::SwfProcessorMapping::kCpus, gputwin::SwfProcessorMapping::kNodes,
                               gputwin::SwfProcessorMapping::kGpus}) {
      (void)gputwin::swf_to_jobs(trace, {.processors = mapping, .cpus_per_node = 4}, "fuzz.swf");
    }
    (void)gputwin::swf_to_jobs(trace, {.estimates = gputwin::SwfEstimateRule::kRequested, .skip_invalid = false},
                               "fuzz.swf");
  } catch (const gputwin::InputError&) {
  }
  return 0;
}
