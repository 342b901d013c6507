#include "scheduler/node_bitmap.hpp"

#include <bit>

// x86-64's baseline has no POPCNT instruction, so std::popcount becomes a libgcc call per word, and will-run counts
// bitmaps of thousands of nodes millions of times. Every x86-64 CPU since about 2008 has POPCNT: these functions
// are built twice and the loader picks the version for the CPU it runs on.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
#define GPUTWIN_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define GPUTWIN_POPCNT_CLONES
#endif

namespace gputwin {

GPUTWIN_POPCNT_CLONES std::size_t count_words(const std::uint64_t* a, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += static_cast<std::size_t>(std::popcount(a[i]));
  return c;
}

GPUTWIN_POPCNT_CLONES std::size_t count_and_words(const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += static_cast<std::size_t>(std::popcount(a[i] & b[i]));
  return c;
}

GPUTWIN_POPCNT_CLONES bool at_least_words(const std::uint64_t* a, std::size_t n, std::size_t k) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    c += static_cast<std::size_t>(std::popcount(a[i]));
    if (c >= k) return true;
  }
  return c >= k;
}

GPUTWIN_POPCNT_CLONES std::size_t assign_and_count_words(std::uint64_t* out, const std::uint64_t* a,
                                                         const std::uint64_t* b, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = a[i] & b[i];
    c += static_cast<std::size_t>(std::popcount(out[i]));
  }
  return c;
}

}  // namespace gputwin
