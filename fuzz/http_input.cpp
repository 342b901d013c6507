#include "fuzz/http_input.hpp"

#include <cctype>
#include <string>

namespace gputwin::fuzz {

namespace {

std::string_view next_line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

HttpRequest request_from_text(std::string_view text) {
  HttpRequest request;
  const std::string_view start = next_line(text);
  const std::size_t space = start.find(' ');
  request.method = std::string(start.substr(0, space));
  const std::string_view target = space == std::string_view::npos ? std::string_view("/") : start.substr(space + 1);
  const std::size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = parse_query(target.substr(question + 1));
  while (!text.empty()) {
    const std::string_view line = next_line(text);
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    request.headers[name] = std::string(value);
  }
  request.body = std::string(text);
  return request;
}

}  // namespace gputwin::fuzz
