#include "model/errors.hpp"

namespace gputwin {
namespace {

/// Longest piece of an error message kept whole: a problem quotes the value at fault, which may be a 10 MB string
/// from a hostile input; the middle of a longer piece is cut.
constexpr std::size_t kMaxPieceChars = 400;

std::string bounded(const std::string& text) {
  if (text.size() <= kMaxPieceChars) return text;
  const std::size_t keep = kMaxPieceChars / 2;
  return text.substr(0, keep) + "[... " + std::to_string(text.size() - 2 * keep) + " bytes cut ...]" +
         text.substr(text.size() - keep);
}

std::string compose(const std::string& file, const std::string& location, const std::string& problem) {
  std::string out = bounded(file);
  if (!location.empty()) out += ": " + bounded(location);
  out += ": " + bounded(problem);
  return out;
}

}  // namespace

InputError::InputError(std::string file, std::string location, std::string problem)
    : std::runtime_error(compose(file, location, problem)),
      file_(std::move(file)),
      location_(std::move(location)),
      problem_(std::move(problem)) {}

}  // namespace gputwin
