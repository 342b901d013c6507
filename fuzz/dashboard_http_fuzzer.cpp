// The dashboard's HTTP requests (gputwin serve): the input is a request (fuzz/http_input.hpp) answered by
// DashboardApi over the tests' hand-made run (tests/ui/hand_made_database.hpp) with a small assets folder. A bad
// request must end in HttpError (a 4xx answer), never in a crash, a hang or another exception.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/http_input.hpp"
#include "tests/ui/hand_made_database.hpp"
#include "ui/dashboard_api.hpp"

namespace {

std::unique_ptr<gputwin::DashboardApi> api;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::filesystem::path run = gputwin::fuzz::scratch_dir() / "run";
  std::filesystem::create_directories(run / "assets" / "assets");
  if (!gputwin::write_hand_made_run(run).empty()) throw std::runtime_error("fuzz: cannot write the hand-made run");
  gputwin::fuzz::write_scratch("run/assets/index.html", "<!doctype html><title>fuzz</title>");
  gputwin::fuzz::write_scratch("run/assets/assets/app.js", "console.log(1)");
  gputwin::fuzz::write_scratch("run/secret.txt", "outside the assets folder");
  api = std::make_unique<gputwin::DashboardApi>(run, run / "assets");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gputwin::HttpRequest request = gputwin::fuzz::request_from_text(gputwin::fuzz::as_text(data, size));
  try {
    const gputwin::HttpResponse response = api->handle(request);
    // An asset answer must never be a file outside the assets folder.
    if (response.body == "outside the assets folder") __builtin_trap();
  } catch (const gputwin::HttpError&) {
  }
  return 0;
}
