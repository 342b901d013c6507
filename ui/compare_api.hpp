// The dashboard's compare tab: two or more runs given together (`gputwin serve RUN1 RUN2 [RUN3 ...]`, policy
// experiments) side by side. The summary rows are `gputwin compare`'s (results/run_comparison); the wait-time CDFs
// and the queue and utilisation series come from each run's RunView, for overlays.
//
//   GET /api/compare                     the runs, summary rows, mean wait per account and per partition
//   GET /api/compare/waits?points=       each run's wait-time CDF (jobs started by its end) and quantiles
//   GET /api/compare/series?points=      each run's pending, running and GPU allocation series over the whole run
#pragma once

#include <memory>
#include <vector>

#include "results/run_comparison.hpp"
#include "ui/http_server.hpp"
#include "ui/live_run.hpp"

namespace gputwin {

/// Answers the compare tab's requests over runs read once.
class CompareApi {
 public:
  /// `runs`: the folders' snapshots in the order given (at least two). Reads their summaries; throws InputError
  /// naming the file at fault.
  explicit CompareApi(std::vector<std::shared_ptr<const RunSnapshot>> runs);
  /// Answers GET /api/compare[/...]; throws HttpError for a bad request.
  [[nodiscard]] HttpResponse handle(const HttpRequest& request) const;
  /// The runs, in order.
  [[nodiscard]] const std::vector<std::shared_ptr<const RunSnapshot>>& runs() const { return runs_; }

 private:
  std::vector<std::shared_ptr<const RunSnapshot>> runs_;
  RunComparison comparison_;
};

/// The name a run goes by on the pages: its folder's last component.
std::string run_name(const std::filesystem::path& dir);

}  // namespace gputwin
