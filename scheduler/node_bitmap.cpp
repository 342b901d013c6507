#include "scheduler/node_bitmap.hpp"

#include <bit>

#include "scheduler/cpu_versions.hpp"

namespace gputwin {
namespace {

// The loops, written once: inlined into each version below, they are compiled for that version's instructions.
GPUTWIN_INLINE std::size_t count_loop(const std::uint64_t* a, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += static_cast<std::size_t>(std::popcount(a[i]));
  return c;
}

GPUTWIN_INLINE std::size_t count_and_loop(const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += static_cast<std::size_t>(std::popcount(a[i] & b[i]));
  return c;
}

GPUTWIN_INLINE void and_loop(std::uint64_t* __restrict a, const std::uint64_t* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] &= b[i];
}

GPUTWIN_INLINE void assign_and_loop(std::uint64_t* __restrict out, const std::uint64_t* __restrict a,
                                    const std::uint64_t* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] & b[i];
}

GPUTWIN_INLINE void and_both_loop(std::uint64_t* __restrict a, const std::uint64_t* __restrict b,
                                  const std::uint64_t* __restrict c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] &= b[i] & c[i];
}

GPUTWIN_INLINE std::size_t assign_and_count_loop(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b,
                                                 std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = a[i] & b[i];
    c += static_cast<std::size_t>(std::popcount(out[i]));
  }
  return c;
}

// Ice Lake and later count 8 words per instruction (AVX-512 VPOPCNTDQ): the loops are built for it too and chosen at
// run time (valgrind's CPU has no AVX-512, so it runs the portable ones). The ANDs go with the counts: a CPU with
// VPOPCNTDQ has AVX-512F, and one test decides both.
#if defined(__x86_64__) && defined(__GNUC__)
#define GPUTWIN_WIDE_POPCOUNT 1
#define GPUTWIN_WIDE_TARGET __attribute__((target("avx512vpopcntdq,avx512f,avx512vl")))

bool wide_popcount() {
  static const bool wide = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vpopcntdq") != 0;
  }();
  return wide;
}

GPUTWIN_WIDE_TARGET std::size_t count_words_wide(const std::uint64_t* a, std::size_t n) {
  return count_loop(a, n);
}

GPUTWIN_WIDE_TARGET std::size_t count_and_words_wide(const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
  return count_and_loop(a, b, n);
}

GPUTWIN_WIDE_TARGET std::size_t assign_and_count_words_wide(std::uint64_t* out, const std::uint64_t* a,
                                                            const std::uint64_t* b, std::size_t n) {
  return assign_and_count_loop(out, a, b, n);
}

GPUTWIN_WIDE_TARGET void and_words_wide(std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
  and_loop(a, b, n);
}

GPUTWIN_WIDE_TARGET void assign_and_words_wide(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b,
                                               std::size_t n) {
  assign_and_loop(out, a, b, n);
}

GPUTWIN_WIDE_TARGET void and_both_words_wide(std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c,
                                             std::size_t n) {
  and_both_loop(a, b, c, n);
}
#endif

GPUTWIN_POPCNT_CLONES std::size_t count_words_portable(const std::uint64_t* a, std::size_t n) {
  return count_loop(a, n);
}

GPUTWIN_POPCNT_CLONES std::size_t count_and_words_portable(const std::uint64_t* a, const std::uint64_t* b,
                                                           std::size_t n) {
  return count_and_loop(a, b, n);
}

GPUTWIN_POPCNT_CLONES std::size_t assign_and_count_words_portable(std::uint64_t* out, const std::uint64_t* a,
                                                                  const std::uint64_t* b, std::size_t n) {
  return assign_and_count_loop(out, a, b, n);
}

GPUTWIN_AVX2_CLONES void and_words_portable(std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
  and_loop(a, b, n);
}

GPUTWIN_AVX2_CLONES void assign_and_words_portable(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b,
                                                   std::size_t n) {
  assign_and_loop(out, a, b, n);
}

GPUTWIN_AVX2_CLONES void and_both_words_portable(std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c,
                                                 std::size_t n) {
  and_both_loop(a, b, c, n);
}

}  // namespace

std::size_t count_words(const std::uint64_t* a, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return count_words_wide(a, n);
#endif
  return count_words_portable(a, n);
}

std::size_t count_and_words(const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return count_and_words_wide(a, b, n);
#endif
  return count_and_words_portable(a, b, n);
}

GPUTWIN_POPCNT_CLONES bool at_least_words(const std::uint64_t* a, std::size_t n, std::size_t k) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    c += static_cast<std::size_t>(std::popcount(a[i]));
    if (c >= k) return true;
  }
  return c >= k;
}

std::size_t assign_and_count_words(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return assign_and_count_words_wide(out, a, b, n);
#endif
  return assign_and_count_words_portable(out, a, b, n);
}

void and_words(std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return and_words_wide(a, b, n);
#endif
  and_words_portable(a, b, n);
}

void assign_and_words(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return assign_and_words_wide(out, a, b, n);
#endif
  assign_and_words_portable(out, a, b, n);
}

void and_both_words(std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c, std::size_t n) {
#ifdef GPUTWIN_WIDE_POPCOUNT
  if (wide_popcount()) return and_both_words_wide(a, b, c, n);
#endif
  and_both_words_portable(a, b, c, n);
}

}  // namespace gputwin
