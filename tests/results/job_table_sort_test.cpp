// The Jobs table's sorts by a time-independent column (JobTable's prebuilt orders, the descending one derived from
// the ascending one): every page equals a plain stable sort of the rows, ties in job id order in both directions,
// on random tables where most keys tie (few names, users and partitions, small counts, unstarted jobs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "results/job_table.hpp"

namespace gputwin {
namespace {

struct Made {
  std::int64_t job_id, submit, start, end, time_limit, priority;
  std::string name, user, partition;
  std::int32_t nodes, gpus;
};

std::vector<Made> random_jobs(std::mt19937& rng, int count) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* names[] = {"train", "Train", "eval", "", "train-2", "a"};
  const char* users[] = {"bob", "alice", "Bob", "carol"};
  const char* partitions[] = {"gpu", "cpu", "debug"};
  std::vector<Made> jobs;
  std::int64_t id = 0;
  for (int n = 0; n < count; ++n) {
    Made m{};
    m.job_id = id += pick(1, 3);
    m.submit = pick(0, 20) * 10;
    m.start = pick(0, 3) == 0 ? -1 : m.submit + pick(0, 5) * 10;
    m.end = m.start >= 0 && pick(0, 3) != 0 ? m.start + pick(0, 8) * 10 : -1;
    m.time_limit = pick(1, 4) * 600;
    m.priority = pick(0, 3) * 1000;
    m.name = names[pick(0, 5)];
    m.user = users[pick(0, 3)];
    m.partition = partitions[pick(0, 2)];
    m.nodes = pick(1, 4);
    m.gpus = pick(0, 2) * 4;
    jobs.push_back(m);
  }
  return jobs;
}

/// Job ids in the order a plain stable sort by `sort` gives (ties in job id order), then reversed by key only.
std::vector<std::int64_t> plain_order(std::vector<Made> jobs, JobSort sort, bool descending) {
  const auto less = [&](const Made& a, const Made& b) {
    const auto start = [](const Made& m) { return m.start < 0 ? INT64_MAX : m.start; };
    switch (sort) {
      case JobSort::kName:
        return a.name < b.name;
      case JobSort::kUser:
        return a.user < b.user;
      case JobSort::kPartition:
        return a.partition < b.partition;
      case JobSort::kNodes:
        return a.nodes < b.nodes;
      case JobSort::kGpus:
        return a.gpus < b.gpus;
      case JobSort::kTimeLimit:
        return a.time_limit < b.time_limit;
      case JobSort::kPriority:
        return a.priority < b.priority;
      case JobSort::kSubmit:
        return a.submit < b.submit;
      case JobSort::kStart:
        return start(a) < start(b);
      default:
        return a.job_id < b.job_id;
    }
  };
  std::stable_sort(jobs.begin(), jobs.end(),
                   [&](const Made& a, const Made& b) { return descending ? less(b, a) : less(a, b); });
  std::vector<std::int64_t> ids;
  for (const Made& m : jobs) ids.push_back(m.job_id);
  return ids;
}

TEST(JobTableSort, EveryColumnInBothDirectionsEqualsAPlainStableSort) {
  std::mt19937 rng(20261128);
  std::size_t checked = 0;
  for (int table_no = 0; table_no < 20; ++table_no) {
    const std::vector<Made> made = random_jobs(rng, 1 + table_no * 37);
    JobTable table;
    for (const Made& m : made) {
      JobRecord r;
      r.job_id = m.job_id;
      r.submit_s = m.submit;
      r.start_s = m.start;
      r.end_s = m.end;
      r.time_limit_s = m.time_limit;
      r.priority = m.priority;
      r.name = m.name;
      r.user = m.user;
      r.account = "acct";
      r.partition = m.partition;
      r.qos = "normal";
      r.state = m.end >= 0 ? "COMPLETED" : m.start >= 0 ? "RUNNING" : "PENDING";
      r.nodes = m.nodes;
      r.gpus = m.gpus;
      table.add(r);
    }
    table.finish({});
    for (const JobSort sort : {JobSort::kName, JobSort::kUser, JobSort::kPartition, JobSort::kNodes, JobSort::kGpus,
                               JobSort::kTimeLimit, JobSort::kPriority, JobSort::kSubmit, JobSort::kStart}) {
      // Descending first on even tables, so it is derived from an ascending order built on demand, and ascending
      // first on odd ones, so it is derived from one already built.
      for (const bool first_descending : {table_no % 2 == 0}) {
        for (const bool descending : {first_descending, !first_descending}) {
          JobQuery q;
          q.at_s = 1'000'000;  // every job submitted
          q.sort = sort;
          q.descending = descending;
          q.limit = made.size();
          std::vector<std::int64_t> got;
          for (const JobRow& row : table.jobs(q).rows) got.push_back(row.job_id);
          ASSERT_EQ(got, plain_order(made, sort, descending))
              << "table " << table_no << ", sort " << static_cast<int>(sort) << (descending ? " descending" : "");
          // A page from the middle is the same slice.
          q.offset = made.size() / 3;
          q.limit = 7;
          std::vector<std::int64_t> page;
          for (const JobRow& row : table.jobs(q).rows) page.push_back(row.job_id);
          const auto from = std::min(got.size(), q.offset);
          const auto to = std::min(got.size(), q.offset + q.limit);
          EXPECT_EQ(page, std::vector<std::int64_t>(got.begin() + static_cast<std::ptrdiff_t>(from),
                                                    got.begin() + static_cast<std::ptrdiff_t>(to)));
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 20u * 9u * 2u);
}

}  // namespace
}  // namespace gputwin
