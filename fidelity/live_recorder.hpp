// Records how a real Slurm schedules a workload, in the format of ../shared/slurm-recordings (what
// record_real_slurm.py writes), through the twin's slurmrestd client: submits the (time-scaled) workload at its
// offsets, waits for the queue to drain, and writes workload.json, slurm.conf, assoc.txt, sacct.txt and
// result.json. With `local_slurm`, each replica runs on a freshly started local test cluster
// (../shared/slurmrestd/local-slurm.sh clean + start, then stop), so every replica starts from the same state (job
// ids from 1, no fair-share usage); on another cluster the replicas follow each other and inherit its usage.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "fidelity/recording.hpp"

namespace gputwin {

/// One job of a workload.json (record_real_slurm.py's fields).
struct WorkloadJob {
  std::uint32_t idx = 0;                 ///< Index.
  double submit_offset_s = 0;            ///< Seconds after the start of the recording.
  std::uint32_t nodes = 1;               ///< Nodes.
  std::uint32_t gpus_per_node = 0;       ///< GPUs per node.
  std::uint32_t cpus_per_gpu = 8;        ///< CPUs per GPU.
  std::int64_t runtime_s = 0;            ///< The job's sleep.
  std::int64_t time_limit_min = 1;       ///< --time, minutes.
  std::string user, account, partition;  ///< Who and where.
};

/// Reads a workload.json; throws RecordingError naming the file and JSON pointer.
std::vector<WorkloadJob> read_workload(const std::filesystem::path& path);

/// `jobs` with offsets and run times multiplied by `scale`, limits ceil(limit * scale) minutes (at least 1).
std::vector<WorkloadJob> scale_workload(std::vector<WorkloadJob> jobs, double scale);

/// What to record on.
struct RecordingOptions {
  std::string url;                 ///< slurmrestd URL (ignored with local_slurm).
  bool local_slurm = false;        ///< Start (and stop) the local test cluster for each replica.
  std::string local_slurm_script;  ///< local-slurm.sh; empty: ../shared/slurmrestd/local-slurm.sh near the cwd.
  std::string local_state;         ///< Its state folder.
  std::string local_port_base;     ///< Its SLURM_TWIN_PORT_BASE.
  std::string workload;            ///< workload.json.
  std::uint32_t replicas = 1;      ///< How many recordings.
  double time_scale = 1.0;         ///< Offsets and run times multiplied by this.
  std::string slurm_conf;          ///< slurm.conf to store with a remote cluster's recordings.
  std::string token;               ///< JWT; empty: $SLURM_JWT (the local cluster's own with local_slurm).
  std::string user = "root";       ///< X-SLURM-USER-NAME of reads.
  std::filesystem::path out;       ///< Recordings go to out/replica-K.
};

/// Records `options.replicas` replicas; returns their folders. Progress goes to `log`. Throws RecordingError (bad
/// workload), SlurmrestdError (the cluster), std::runtime_error (local-slurm.sh failed).
std::vector<std::filesystem::path> record_replicas(const RecordingOptions& options, std::ostream& log);

}  // namespace gputwin
