// Fuzz input as an HTTP request, for the web fuzzers: a request line "METHOD TARGET" (TARGET = path?query), header
// lines "Name: value" up to an empty line, then the body. The query goes through the server's own parse_query;
// header names are lower-cased as the server does. Seeds stay readable and a dictionary of paths and parameter
// names works on them.
#pragma once

#include <string_view>

#include "ui/http_server.hpp"

namespace gputwin::fuzz {

/// The request `text` describes (any bytes give some request).
HttpRequest request_from_text(std::string_view text);

/// Answers `request` with `handler` as HttpServer does, which turns HttpError into its status; any other exception
/// escapes (a 500 with a library's message is a bug) and so does std::bad_alloc.
template <typename Handler>
void answer(const Handler& handler, const HttpRequest& request) {
  try {
    (void)handler(request);
  } catch (const HttpError&) {
  }
}

}  // namespace gputwin::fuzz
