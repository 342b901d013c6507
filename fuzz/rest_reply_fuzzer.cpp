// slurmrestd replies as the twin reads them: the input is given to every endpoint's parser (the parsers read by
// shape, so one reply exercises each version's forms), and what parses as nodes, partitions and jobs is mirrored
// over two polls, each job turned into a job spec. A reply the twin cannot use must end in RestReplyError (or
// InputError for a value the model refuses).
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "model/errors.hpp"
#include "twin/mirror.hpp"
#include "twin/rest/rest_parse.hpp"

namespace {

template <typename Parse>
void attempt(Parse parse) {
  try {
    parse();
  } catch (const gputwin::RestReplyError&) {
  } catch (const gputwin::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = gputwin::fuzz::as_text(data, size);
  const std::string endpoint = "GET /fuzz";
  gputwin::RestMessages messages;
  gputwin::Snapshot snapshot{.time = 1'767'225'600};
  attempt([&] { (void)gputwin::parse_messages(body, endpoint); });
  attempt([&] { (void)gputwin::parse_ping(body, endpoint); });
  attempt([&] { snapshot.time = gputwin::parse_diag(body, endpoint).server_time; });
  attempt([&] { snapshot.nodes = gputwin::parse_nodes(body, endpoint, &messages); });
  attempt([&] { snapshot.jobs = gputwin::parse_jobs(body, endpoint, &messages); });
  attempt([&] { (void)gputwin::parse_jobs(body, endpoint); });
  attempt([&] { snapshot.partitions = gputwin::parse_partitions(body, endpoint); });
  attempt([&] { (void)gputwin::parse_associations(body, endpoint); });
  attempt([&] { (void)gputwin::parse_qos(body, endpoint); });
  attempt([&] { (void)gputwin::parse_submit(body, endpoint); });
  bool node_update = false;
  attempt([&] { (void)gputwin::parse_openapi_versions(body, endpoint, &node_update); });
  if (snapshot.nodes.empty() && snapshot.jobs.empty() && snapshot.partitions.empty()) return 0;
  attempt([&] {
    gputwin::Mirror mirror;
    gputwin::Snapshot later = snapshot;
    later.time += 60;
    (void)mirror.apply(std::move(snapshot));
    (void)mirror.apply(std::move(later));
    for (const gputwin::MirrorJob& job : mirror.jobs()) (void)mirror.job_spec(job.record, mirror.epoch());
  });
  return 0;
}
