// Standard Workload Format 2.2 traces (Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/
// swf.html): reading and writing them losslessly, and turning their records into jobs to replay.
//
//   SwfTrace trace = read_swf("hpc2n.swf");
//   SwfImportResult imported = swf_to_jobs(trace, {.cpus_per_node = 2}, "hpc2n.swf");
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "model/job.hpp"

namespace gputwin {

/// One SWF record (one job): the 18 standard fields, -1 meaning unknown, plus any extension fields.
struct SwfRecord {
  std::int64_t job_number = -1;            ///< Field 1: job number (the log's job id).
  double submit_time_s = -1;               ///< Field 2: submit time, seconds since the log's start.
  double wait_time_s = -1;                 ///< Field 3: wait time between submit and start, seconds.
  double run_time_s = -1;                  ///< Field 4: run time (wall clock), seconds.
  std::int64_t allocated_processors = -1;  ///< Field 5: number of allocated processors.
  double average_cpu_time_s = -1;          ///< Field 6: average CPU time used per processor, seconds.
  double used_memory_kb = -1;              ///< Field 7: average used memory per processor, KB.
  std::int64_t requested_processors = -1;  ///< Field 8: requested number of processors.
  double requested_time_s = -1;            ///< Field 9: requested time (the user's runtime estimate), seconds.
  double requested_memory_kb = -1;         ///< Field 10: requested memory per processor, KB.
  std::int64_t status = -1;                ///< Field 11: 1 completed, 0 failed, 5 cancelled (2-4: checkpoint parts).
  std::int64_t user_id = -1;               ///< Field 12: user id (1..number of users).
  std::int64_t group_id = -1;              ///< Field 13: group id.
  std::int64_t executable_id = -1;         ///< Field 14: executable (application) number.
  std::int64_t queue_id = -1;              ///< Field 15: queue number.
  std::int64_t partition_id = -1;          ///< Field 16: partition number.
  std::int64_t preceding_job = -1;         ///< Field 17: job number this job depends on (-1: none).
  double think_time_s = -1;                ///< Field 18: think time from the preceding job's end, seconds.
  std::string extra;       ///< Fields after the 18th (extended SWF such as MetaCentrum's), raw, trimmed; "" if none.
  std::uint64_t line = 0;  ///< 1-based line the record was read from (0 if not read from a file).

  /// Field-by-field equality of the 18 fields and `extra`; `line` is where the record came from, not part of it.
  friend bool operator==(const SwfRecord& a, const SwfRecord& b);
};

/// A whole SWF file: its comment lines and its records, in file order.
struct SwfTrace {
  std::vector<std::string> header_comments;  ///< Comment lines without the leading ';' (those between records too).
  std::vector<SwfRecord> records;            ///< Records in file order.

  /// Equal comments and equal records (see SwfRecord's equality).
  friend bool operator==(const SwfTrace&, const SwfTrace&) = default;
};

/// Reads an SWF file; throws TraceError on a file that cannot be opened or a malformed line (see parse_swf).
SwfTrace read_swf(const std::filesystem::path& path);

/// Parses SWF text; `file_name` names the source in errors. Lines starting with ';' (after optional whitespace) are
/// comments, kept in order; blank lines are skipped. A record needs at least 18 whitespace-separated numeric fields
/// (the rest go to `extra`); integer fields must be integers of -1 or more. Throws TraceError with the line number,
/// e.g. "expected 18 fields, found 17" or "field 5 (allocated processors): 'abc' is not a number".
SwfTrace parse_swf(std::istream& in, const std::string& file_name);

/// Writes `trace` as SWF: every comment as ';' + text (so comments read between records come first), then one line per
/// record (integers as integers, times and memory in the shortest form that reads back to the same double, then
/// `extra`). parse_swf(write_swf(t)) == t.
void write_swf(std::ostream& out, const SwfTrace& trace);

/// How SWF "processors" become a resource request.
enum class SwfProcessorMapping : std::uint8_t {
  kCpus,   ///< Processors are CPUs: cpus = processors, nodes left to the selector.
  kGpus,   ///< Processors are GPUs, packed onto as few nodes as possible; CPUs per GPU, at least one per node.
  kNodes,  ///< Processors are whole nodes: nodes = processors, exclusive.
};

/// What a record's time limit is when its requested time (field 9) is unknown (-1 or 0).
enum class SwfEstimateRule : std::uint8_t {
  kExact,      ///< The job's run time: perfect estimates.
  kRequested,  ///< What was requested, i.e. nothing: kNoTimeLimit, so the partition's DefaultTime/MaxTime apply.
};

/// Options for turning SWF records into jobs; node sizes come from the cluster the trace is replayed on.
struct SwfImportOptions {
  SwfProcessorMapping processors = SwfProcessorMapping::kCpus;  ///< What an SWF processor is.
  SwfEstimateRule estimates = SwfEstimateRule::kExact;          ///< Time limit when the requested time is unknown.
  std::uint32_t gpus_per_node = 8;  ///< GPUs per node, used by kGpus to pack GPUs onto nodes.
  std::uint32_t cpus_per_node = 1;  ///< CPUs per node: kNodes requests all of them, kGpus derives CPUs per GPU.
  std::uint32_t cpus_per_gpu = 0;   ///< CPUs per GPU under kGpus; 0 means cpus_per_node / gpus_per_node.
  std::string partition;            ///< Partition of every job; empty means the default partition.
  bool skip_invalid = true;         ///< Skip records that cannot run instead of throwing TraceError (see swf_to_jobs).
};

/// Jobs built from a trace, and how many records were left out.
struct SwfImportResult {
  std::vector<JobSpec> jobs;  ///< One job per usable record, in trace order.
  std::uint64_t skipped = 0;  ///< Records skipped as unable to run.
};

/// Turns SWF records into jobs: id = job number, submit_s and run_time_s are the trace's (rounded to seconds, the
/// trace's zero is the scenario epoch), processors are the requested ones (allocated if unknown), time_limit_s is the
/// requested time if known (else per `options.estimates`), user "u<id>", account "g<group>" ("unknown" when -1),
/// name "job<id>", outcome from the status (0 FAILED, 5 CANCELLED, else COMPLETED). A record cannot run if its job
/// number or submit time is unknown, its processor count is not positive, its run time is negative or unknown, or it
/// was cancelled before starting (status 5, run time <= 0): such records are counted in `skipped`, or with
/// skip_invalid false throw TraceError(file_name, record.line, ...). Throws std::invalid_argument on zero node sizes.
SwfImportResult swf_to_jobs(const SwfTrace& trace, const SwfImportOptions& options, const std::string& file_name);

}  // namespace gputwin
