// Limits on what gputwin reads: inputs must be regular files (symbolic links followed) no larger than a bound per
// kind, so that /dev/zero, /dev/urandom, a FIFO or a folder given as a scenario, trace or configuration is refused
// at once with a clear error instead of being read for ever.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gputwin {

/// Largest scenario file (JSON, jobs inline included): 1 GiB.
inline constexpr std::uintmax_t kMaxScenarioBytes = std::uintmax_t{1} << 30;
/// Largest configuration file (slurm.conf and its Include targets, gres.conf, topology.conf/yaml, sacctmgr dumps,
/// QOS lists): 64 MiB.
inline constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{64} << 20;
/// Largest workload trace or accounting history (SWF, sacct text or JSON, slurmdb JSON): 16 GiB.
inline constexpr std::uintmax_t kMaxTraceBytes = std::uintmax_t{16} << 30;

/// Why `path` cannot be read as an input of `kind` ("scenario", "configuration", "trace") bounded by `max_bytes`:
/// it does not exist or cannot be inspected, is not a regular file (a device, FIFO, socket or folder), or is larger
/// than the bound. Empty when it can be read.
std::optional<std::string> input_file_problem(const std::filesystem::path& path, std::string_view kind,
                                              std::uintmax_t max_bytes);

}  // namespace gputwin
