// StreamGate: the RunGate of a batch run whose results are written as it goes: between instants it hands what has
// settled to a ResultsStream (results/results_stream.hpp), which writes it on a thread of its own. It never holds
// the run nor acts on the world, so the run is the same with or without it.
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>

#include "results/results_stream.hpp"
#include "sim/run_gate.hpp"
#include "sim/runner.hpp"
#include "sim/sim_world.hpp"

namespace gputwin {

/// Streams a run's settled results into `out_dir` (RunOptions::gate); pass stream() to write_results after the run.
class StreamGate final : public RunGate {
 public:
  /// Results go into `out_dir`, handed over `batch_jobs` settled jobs at a time (0: as many as suit the run).
  explicit StreamGate(std::filesystem::path out_dir, std::size_t batch_jobs = 0)
      : out_dir_(std::move(out_dir)), batch_jobs_(batch_jobs) {}
  /// Opens the stream's files (a job settles EpilogTime after its end, when its resources are released).
  void on_run_start(const RunOutcome& outcome) override {
    // The stream has the recorder keep job ends from here on.
    stream_.emplace(out_dir_, *outcome.state, *outcome.recorder,
                    from_seconds(std::max<std::int64_t>(outcome.scenario->scheduler.slurm.epilog_s, 0)), batch_jobs_);
  }
  /// Hands over what settled in the instant just done; never holds the run.
  bool before_instant(SimWorld& world, SimTime) override {
    stream_->take_settled(world.now());
    return false;
  }
  /// The stream, once the run has started (null before).
  [[nodiscard]] ResultsStream* stream() { return stream_ ? &*stream_ : nullptr; }

 private:
  std::filesystem::path out_dir_;
  std::size_t batch_jobs_;
  std::optional<ResultsStream> stream_;
};

}  // namespace gputwin
