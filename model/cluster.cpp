#include "model/cluster.hpp"

namespace gputwin {

int ClusterConfig::partition_index(const std::string& name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ClusterConfig::default_partition() const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].is_default) return static_cast<int>(i);
  }
  return partitions.empty() ? -1 : 0;
}

std::uint64_t ClusterConfig::total_gpus() const {
  std::uint64_t sum = 0;
  for (const auto& n : nodes) sum += n.gpus;
  return sum;
}

std::uint64_t ClusterConfig::total_cpus() const {
  std::uint64_t sum = 0;
  for (const auto& n : nodes) sum += n.cpus;
  return sum;
}

}  // namespace gputwin
