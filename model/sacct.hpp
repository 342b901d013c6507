// Job history from Slurm's accounting as jobs to replay: `sacct -P` (--parsable2) text, `sacct --json`, and the
// slurmdb jobs JSON of slurmrestd (/slurmdb/v0.0.38 ... v0.0.44/jobs). Times become seconds since an epoch, the
// earliest submit time of the jobs kept, which is returned so the caller can map results back to wall-clock time.
//
//   sacct -a -P -S 2025-03-01 -E 2025-04-01 > history.txt --format=JobID,JobIDRaw,JobName,User,Account,Partition,
//         QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,NNodes,NCPUS,ReqTRES,AllocTRES,NodeList
//   SacctImport h = read_sacct("history.txt", SacctFormat::kParsable, {});
//   // Job j was submitted at Unix time h.epoch_unix_s + j.submit_s; h.skipped says what was left out and why.
//
// What a record becomes (shared by the three formats):
// - Job ids: JobID "123" is job 123; "123_4" is task 4 of array 123 (the job id is JobIDRaw when that column is
//   there, else a fresh id above every id in the file); "123_[5-9%2]" is the array's pending remainder and becomes
//   one pending job per task, throttle 2 (the %N of any record of an array applies to all its tasks). Steps
//   ("123.batch", "123.0", "123.extern") are not jobs and are counted in `steps`. Heterogeneous job components after
//   the first ("123+1") are skipped.
// - Shape: what was allocated (AllocTRES) if the job started, else what was requested (ReqTRES), else the
//   NNodes/NCPUS/ReqMem columns. GPU jobs ask for their node count with GPUs per node = ceil(GPUs / nodes); CPU jobs
//   ask for CPUs and leave nodes to the selector unless they asked for more than one node. Memory is per node.
//   slurmdb JSON without a gres/gpu TRES (sites that do not account GPUs) falls back to the GPUs of `submit_line`
//   (--gpus, --gpus-per-node, --gres=gpu:N, --gpus-per-task, --gpus-per-socket), counted in `gpus_from_submit_line`.
// - Run time: Elapsed (else End - Start) of jobs that ended; a TIMEOUT job runs at least one second past its limit
//   so that a replay times it out too. Jobs still RUNNING (or SUSPENDED) when the history was taken run for their
//   time limit (else for the time they had run), jobs still PENDING (or REQUEUED) run for their time limit and are
//   skipped when they have none; both are kept by default (options).
// - Outcome: the final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY; BOOT_FAIL
//   counts as NODE_FAIL, DEADLINE as CANCELLED, SPECIAL_EXIT as FAILED). Jobs cancelled before they started are
//   skipped by default, as are jobs that ended in another state without starting.
// - Eligible time later than the submit time becomes `begin_s` (--begin, holds and dependencies cannot be told
//   apart in accounting; off with `eligible_as_begin`).
// - Times without a zone (sacct's "2026-11-22T02:05:58") are read as UTC; only differences matter for a replay, but
//   a history spanning a daylight-saving change is off by that hour across it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/job.hpp"

namespace gputwin {

/// Formats of job history.
enum class SacctFormat : std::uint8_t {
  kParsable,     ///< `sacct -P` / `--parsable2` (or -p) text with its header line ("sacct").
  kJson,         ///< `sacct --json` ("sacct-json").
  kSlurmdbJson,  ///< slurmrestd GET /slurmdb/v0.0.XX/jobs ("slurmdb-json").
};

/// The format's name in scenarios and on the command line ("sacct", "sacct-json", "slurmdb-json").
std::string_view sacct_format_name(SacctFormat format);
/// Parses a format name; false if unknown.
bool parse_sacct_format(std::string_view name, SacctFormat& out);

/// What to keep and how to read records that did not run to completion.
struct SacctImportOptions {
  bool keep_pending = true;                  ///< Keep jobs still pending when the history was taken.
  bool keep_running = true;                  ///< Keep jobs still running when the history was taken.
  bool keep_cancelled_before_start = false;  ///< Keep jobs cancelled while pending (run time 0, CANCELLED).
  bool eligible_as_begin = true;             ///< An eligible time after submit becomes begin_s.
  bool gpus_from_submit_line = true;         ///< JSON without gres/gpu TRES: read GPUs from submit_line.
  std::int64_t epoch_unix_s = -1;            ///< Fixed epoch (Unix seconds); -1 = the earliest submit kept.
};

/// Jobs read from a history, and what was left out.
struct SacctImport {
  std::vector<JobSpec> jobs;                     ///< Jobs in file order (array remainders expanded in place).
  std::int64_t epoch_unix_s = 0;                 ///< Unix time of submit_s == 0.
  std::uint64_t records = 0;                     ///< Job records read (steps not included).
  std::uint64_t steps = 0;                       ///< Step records ("123.batch") passed over.
  std::map<std::string, std::uint64_t> skipped;  ///< Records left out, by reason.
  std::uint64_t gpus_from_submit_line = 0;       ///< Jobs whose GPUs came from submit_line.
  std::uint64_t synthesized_ids = 0;             ///< Array tasks given a fresh job id (no JobIDRaw).
  std::string source_version;                    ///< JSON: the data parser / plugin version ("v0.0.42"); "" for text.

  /// Total of `skipped`.
  [[nodiscard]] std::uint64_t skipped_total() const;
};

/// Reads a history file; throws TraceError naming the file and line (text) or JSON pointer (JSON).
SacctImport read_sacct(const std::filesystem::path& path, SacctFormat format, const SacctImportOptions& options);

/// Parses `sacct -P` text; `file_name` names it in errors, e.g. "sacct.txt: line 7: Submit: 'yesterday' is not a
/// time (YYYY-MM-DDTHH:MM:SS, Unix seconds, Unknown or None)".
SacctImport parse_sacct_text(std::istream& in, const std::string& file_name, const SacctImportOptions& options);

/// Parses sacct --json / slurmdb jobs JSON (v0.0.38 to v0.0.44 shapes); errors name the JSON pointer.
SacctImport parse_sacct_json(const std::string& text, const std::string& file_name, const SacctImportOptions& options);

/// Parses "YYYY-MM-DDTHH:MM:SS" (read as UTC) or Unix seconds into Unix seconds; false if neither.
bool parse_sacct_time(std::string_view text, std::int64_t& unix_s);

}  // namespace gputwin
