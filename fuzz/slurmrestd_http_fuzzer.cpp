// The slurmrestd-compatible API's HTTP requests (gputwin serve): the input is a request (fuzz/http_input.hpp)
// answered by SlurmApi over the tests' hand-made run at t=150, once without and once with a JWT key (HS256 key
// "fuzz-jwt-key-of-thirty-two-bytes", so seeds can carry valid tokens). Every request gets an answer (the API
// answers errors in slurmrestd's own shapes); an exception, crash or hang is a bug.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/http_input.hpp"
#include "tests/ui/hand_made_database.hpp"
#include "ui/run_view_slurm_source.hpp"
#include "ui/slurm_api.hpp"

namespace {

std::unique_ptr<gputwin::RunView> view;
std::unique_ptr<gputwin::RunViewSlurmSource> source;
std::unique_ptr<gputwin::SlurmApi> open_api, jwt_api;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::filesystem::path run = gputwin::fuzz::scratch_dir() / "run";
  std::filesystem::create_directories(run);
  if (!gputwin::write_hand_made_run(run).empty()) throw std::runtime_error("fuzz: cannot write the hand-made run");
  view = std::make_unique<gputwin::RunView>(run);
  source = std::make_unique<gputwin::RunViewSlurmSource>(*view, 150);
  open_api = std::make_unique<gputwin::SlurmApi>(*source, gputwin::SlurmApiOptions{});
  jwt_api = std::make_unique<gputwin::SlurmApi>(
      *source, gputwin::SlurmApiOptions{.jwt_key = "fuzz-jwt-key-of-thirty-two-bytes", .max_accounting_jobs = 3});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const gputwin::HttpRequest request = gputwin::fuzz::request_from_text(gputwin::fuzz::as_text(data, size));
  (void)open_api->handle(request);
  (void)jwt_api->handle(request);
  return 0;
}
