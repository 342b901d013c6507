// A fidelity recording's result.json (`gputwin fidelity --recorded DIR`): the input is written as result.json beside
// a small slurm.conf and sacct.txt, read with read_recording, and compared as two replicas of itself. Bad input
// must end in RecordingError (an InputError); the report of a recording against itself must show no spread.
#include <cstdint>
#include <string>

#include "fidelity/recording.hpp"
#include "fidelity/report.hpp"
#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gputwin::fuzz::write_scratch("slurm.conf", "ClusterName=fuzz\n");
  gputwin::fuzz::write_scratch("sacct.txt", "JobID|Submit|Start|End|State\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gputwin::fuzz::write_scratch("result.json", gputwin::fuzz::as_text(data, size));
  try {
    const gputwin::Recording r = gputwin::read_recording(gputwin::fuzz::scratch_dir());
    (void)gputwin::mean_wait_s(r.jobs);
    if (gputwin::mean_start_difference_s(r.jobs, r.jobs) != 0) __builtin_trap();
    std::vector<std::int64_t> starts;
    for (const gputwin::RecordedJob& j : r.jobs) starts.push_back(j.start_s);
    if (gputwin::kendall_tau_b(starts, starts) != 1) __builtin_trap();
  } catch (const gputwin::InputError&) {
  }
  return 0;
}
