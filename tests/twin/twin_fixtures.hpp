// Hand-made slurmrestd records for the twin's unit tests: nodes, a partition and jobs as a parser would give them.
#pragma once

#include <string>

#include "twin/rest/rest_types.hpp"

namespace gputwin::test {

/// An idle node with 64 CPUs, 500 GiB and 8 H100s.
inline RestNode gpu_node(const std::string& name, const std::string& state = "IDLE") {
  RestNode n;
  n.name = name;
  n.state = state;
  n.cpus = 64;
  n.memory_mb = 512000;
  n.gpus = 8;
  n.gpu_type = "h100";
  n.partitions = {"gpu"};
  return n;
}

/// The default partition "gpu" over `nodes`.
inline RestPartition gpu_partition(const std::string& nodes) {
  RestPartition p;
  p.name = "gpu";
  p.nodes = nodes;
  p.is_default = true;
  p.state = "UP";
  return p;
}

/// A pending job of `user` asking for one node with 8 GPUs for `limit_s`.
inline RestJob pending_job(std::uint64_t id, const std::string& user, std::int64_t submit, std::int64_t limit_s,
                           std::int64_t priority) {
  RestJob j;
  j.job_id = id;
  j.name = "train";
  j.user = user;
  j.account = "ml";
  j.partition = "gpu";
  j.state = "PENDING";
  j.reason = "Priority";
  j.submit_time = submit;
  j.time_limit_s = limit_s;
  j.priority = priority;
  j.node_count = 1;
  j.cpus = 8;
  j.gpus_per_node = 8;
  j.tres_req = "cpu=8,mem=0,node=1,billing=8,gres/gpu=8";
  return j;
}

/// `pending_job` running on `nodes` since `start`.
inline RestJob running_job(std::uint64_t id, const std::string& user, const std::string& nodes, std::int64_t start,
                           std::int64_t limit_s) {
  RestJob j = pending_job(id, user, start - 10, limit_s, 1000);
  j.state = "RUNNING";
  j.reason = "None";
  j.nodes = nodes;
  j.start_time = start;
  j.end_time = start + limit_s;
  j.gpus = 8;
  return j;
}

}  // namespace gputwin::test
