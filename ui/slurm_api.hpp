// A slurmrestd-compatible read API, so that tools built for real clusters (Slurm-web, exporters, scripts, our own
// twin) can point at a simulated one: /slurm/vX/ ping, diag, jobs, job/{id}, nodes, node/{name}, partitions,
// partition/{name}, reservations and /slurmdb/vX/ jobs, job/{id}, qos, accounts, associations for X = v0.0.41 to
// v0.0.44, answered in the shapes of Slurm 25.11's slurmrestd (ui/slurm_shapes), with its not-found and
// authentication answers:
//
//   SlurmApi api(source, {.jwt_key = key});
//   HttpServer server({.listen = "127.0.0.1:6820"}, [&](const HttpRequest& r) { return api.handle(r); });
//
// With a JWT key, every request needs X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (HS256 over the key's raw bytes, as
// Slurm's AuthAltParameters=jwt_key, with an `exp` in the future and `sun` naming the user or root/slurm); without
// one, requests are not checked (as slurmrestd with rest_auth/local). Writes are refused when serving a run that
// has ended; a live run (SlurmApiOptions::writer) takes v0.0.44's node update (DRAIN, RESUME/UNDRAIN), job submit
// (POST job/submit: the simulated run time from the comment's `gputwin:run=SECONDS`), job update (POST job/{id}:
// hold, release, priority, time_limit) and job cancel (DELETE job/{id}).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/job.hpp"
#include "ui/http_server.hpp"
#include "ui/slurm_shapes.hpp"

namespace gputwin {

/// What the compatible API answers about: one cluster at one moment, as slurmctld and slurmdbd would see it.
class SlurmSource {
 public:
  virtual ~SlurmSource() = default;
  /// Cluster name, epoch and the simulated time of the answers (the version is set by the API).
  [[nodiscard]] virtual SlurmShapeContext context() const = 0;
  /// Jobs slurmctld still holds: pending, running, and ended within MinJobAge (300 s).
  [[nodiscard]] virtual std::vector<ServedJob> controller_jobs() const = 0;
  /// Job `job_id` if slurmctld still holds it.
  [[nodiscard]] virtual std::optional<ServedJob> controller_job(std::int64_t job_id) const = 0;
  /// Every node.
  [[nodiscard]] virtual std::vector<ServedNode> nodes() const = 0;
  /// Every partition.
  [[nodiscard]] virtual std::vector<PartitionRow> partitions() const = 0;
  /// Jobs slurmdbd knows that were submitted by `to_s` and not ended before `from_s` (simulated seconds), in job id
  /// order; at most `max_jobs` (more is an error the caller reports).
  [[nodiscard]] virtual std::vector<ServedJob> accounting_jobs(std::int64_t from_s, std::int64_t to_s,
                                                               std::size_t max_jobs) const = 0;
  /// Job `job_id` if it was submitted by now.
  [[nodiscard]] virtual std::optional<ServedJob> accounting_job(std::int64_t job_id) const = 0;
  /// QOS, accounts and associations of slurmdbd.
  [[nodiscard]] virtual std::vector<ServedQos> qos() const = 0;
  [[nodiscard]] virtual std::vector<ServedAccount> accounts() const = 0;
  [[nodiscard]] virtual std::vector<ServedAssociation> associations() const = 0;
  /// The counters of GET diag.
  [[nodiscard]] virtual SlurmDiagCounts diag() const = 0;
};

/// What POST job/submit did: the new job's id, or Slurm's error number and text.
struct SlurmSubmitResult {
  std::int64_t job_id = 0;  ///< The job's id (0 when refused).
  int error = 0;            ///< Slurm's error number (0: queued).
  std::string message;      ///< Its text.
};

/// The changes of POST job/{id} that gputwin takes (job_desc_msg's hold, priority, time_limit).
struct SlurmJobUpdate {
  std::optional<bool> hold;                  ///< true: hold (priority 0, JobHeldAdmin); false: release.
  std::optional<std::uint32_t> priority;     ///< A fixed priority (> 0).
  std::optional<std::int64_t> time_limit_s;  ///< A new time limit, seconds (> 0).
};

/// What a live run lets the compatible API change (v0.0.44 only): each call returns "" when done, else Slurm's
/// error number and text for the reply.
class SlurmWriter {
 public:
  virtual ~SlurmWriter() = default;
  /// POST node/{name} {"state": ["DRAIN"], "reason": R} (drain) or {"state": ["RESUME"]} / ["UNDRAIN"].
  virtual std::pair<int, std::string> update_node(const std::string& name, bool drain, const std::string& reason) = 0;
  /// DELETE job/{id}: cancels a pending or running job.
  virtual std::pair<int, std::string> cancel_job(std::int64_t job_id) = 0;
  /// POST job/submit: submits `spec` (its id and submit time are the writer's to give), held when `hold`
  /// (JobHeldAdmin: the writes carry an operator's token).
  virtual SlurmSubmitResult submit_job(const JobSpec& spec, bool hold) = 0;
  /// POST job/{id}: holds, releases, prioritises or sets the time limit of a pending job.
  virtual std::pair<int, std::string> update_job(std::int64_t job_id, const SlurmJobUpdate& update) = 0;
};

/// The compatible API's settings.
struct SlurmApiOptions {
  std::string jwt_key;                        ///< Raw bytes of the HS256 key; empty: requests are not checked.
  std::size_t max_accounting_jobs = 100'000;  ///< Largest slurmdb jobs answer (a wider query is refused).
  SlurmWriter* writer = nullptr;              ///< A live run's writes (node update, job cancel); null: read only.
  /// Without a JWT key, what a write's X-SLURM-USER-TOKEN must be (the live run's control token): writes always
  /// need a token, reads need one only with a JWT key.
  std::string write_token;
};

/// Answers slurmrestd's read endpoints from a SlurmSource. Thread-safe when the source is.
class SlurmApi {
 public:
  SlurmApi(const SlurmSource& source, SlurmApiOptions options);
  /// Answers one request.
  [[nodiscard]] HttpResponse handle(const HttpRequest& request) const;

 private:
  /// The user a request's JWT names; empty with the reason in `problem` when it does not pass.
  [[nodiscard]] std::optional<std::string> authenticate(const HttpRequest& request, std::string& problem) const;
  [[nodiscard]] HttpResponse slurmctld(const HttpRequest& request, SlurmShapeContext& context,
                                       const std::string& endpoint) const;
  [[nodiscard]] HttpResponse slurmdbd(const HttpRequest& request, SlurmShapeContext& context,
                                      const std::string& endpoint) const;
  /// A write of a live run (options_.writer set): POST node/{name}, DELETE job/{id} of v0.0.44.
  [[nodiscard]] std::optional<HttpResponse> write(const HttpRequest& request, const SlurmShapeContext& context,
                                                  const std::string& endpoint) const;

  const SlurmSource& source_;
  SlurmApiOptions options_;
};

}  // namespace gputwin
