// Scenario JSON and its `--set` overrides: the input is a scenario, then any number of overrides each after a line
// "--set " ("{...}\n--set /scheduler/policy=easy"). A scenario that loads has its workload materialised too (trace
// read from the scratch folder, inline jobs checked, synthetic jobs generated). Bad input must end in InputError.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/scenario.hpp"

namespace {

// Synthetic workloads above this many jobs are generated at the speed of a run, not a parse (a million takes
// seconds); they are parsed and checked but not generated, so the fuzzer keeps its pace.
constexpr std::uint64_t kMaxGeneratedJobs = 20'000;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Golden scenarios name "four_nodes.swf" beside them: give them one to read.
  gputwin::fuzz::write_scratch("four_nodes.swf",
                               "; tiny\n1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
                               "2 10 -1 50 8 -1 -1 8 60 -1 1 2 1 -1 1 -1 1 -1\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> parts = gputwin::fuzz::split_at(gputwin::fuzz::as_text(data, size), "\n--set ");
  std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  try {
    const gputwin::Scenario scenario =
        gputwin::parse_scenario(std::string(parts.front()), "fuzz.json", gputwin::fuzz::scratch_dir(), overrides);
    if (scenario.has_trace || scenario.has_inline_jobs || scenario.synthetic.jobs <= kMaxGeneratedJobs) {
      (void)gputwin::load_workload(scenario);
    }
  } catch (const gputwin::InputError&) {
    // refused with a message naming the file and place: the expected way out for bad input
  }
  return 0;
}
