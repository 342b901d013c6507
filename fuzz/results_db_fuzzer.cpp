// results.sqlite as bytes: the input is written as a results folder's database and read by every reader (report,
// squeue, compare, metrics, serve). Seeds are small runs' databases, so mutations change values, types and
// structure inside files SQLite still opens as well as making files it refuses.
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/results_readers.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gputwin::fuzz::silence_stdout();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gputwin::fuzz::write_scratch("results.sqlite", gputwin::fuzz::as_text(data, size));
  gputwin::fuzz::read_results_folder(gputwin::fuzz::scratch_dir());
  return 0;
}
