#include "model/errors.hpp"

namespace gputwin {
namespace {

std::string compose(const std::string& file, const std::string& location, const std::string& problem) {
  std::string out = file;
  if (!location.empty()) out += ": " + location;
  out += ": " + problem;
  return out;
}

}  // namespace

InputError::InputError(std::string file, std::string location, std::string problem)
    : std::runtime_error(compose(file, location, problem)),
      file_(std::move(file)),
      location_(std::move(location)),
      problem_(std::move(problem)) {}

}  // namespace gputwin
