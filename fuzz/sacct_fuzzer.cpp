// Job history: `sacct -P` text (GPUTWIN_FUZZ_SACCT_TEXT) or sacct --json / slurmdb jobs JSON (the JSON build of this
// file), read with the default options and with each option
// turned the other way. Bad input must end in InputError.
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "model/sacct.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gputwin::fuzz::as_text(data, size));
  gputwin::SacctImportOptions other;  // every option away from its default, and a fixed epoch
  other.keep_pending = false;
  other.keep_cancelled_before_start = true;
  other.eligible_as_begin = false;
  other.gpus_from_submit_line = false;
  other.epoch_unix_s = 1'700'000'000;
  for (const gputwin::SacctImportOptions& options : {gputwin::SacctImportOptions{}, other}) {
    try {
#ifdef GPUTWIN_FUZZ_SACCT_TEXT
      std::istringstream in(text);
      (void)gputwin::parse_sacct_text(in, "fuzz.txt", options);
#else
      (void)gputwin::parse_sacct_json(text, "fuzz.json", options);
#endif
    } catch (const gputwin::InputError&) {
    }
  }
  return 0;
}
