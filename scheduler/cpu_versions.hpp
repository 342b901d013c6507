// Attributes for hot loops built in more than one instruction-set version, the loader (target_clones) picking the
// one for the CPU it runs on, and for the loop bodies inlined into each version (compiled for that version).
#pragma once

// x86-64's baseline has no POPCNT instruction, so std::popcount becomes a libgcc call per word, and will-run counts
// bitmaps of thousands of nodes millions of times. Every x86-64 CPU since about 2008 has POPCNT.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__) && !defined(GPUTWIN_NO_CPU_CLONES)
#define GPUTWIN_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define GPUTWIN_POPCNT_CLONES
#endif

// Vectorised loops over nodes: built for AVX2 (which has POPCNT) too where the baseline lacks it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__AVX2__) && !defined(GPUTWIN_NO_CPU_CLONES)
#define GPUTWIN_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GPUTWIN_AVX2_CLONES
#endif

// GPUTWIN_NO_CPU_CLONES (the ThreadSanitizer build) leaves the clones out: one version, for the baseline.

// A loop body written once and inlined into each version of its callers.
#if defined(__GNUC__)
#define GPUTWIN_INLINE inline __attribute__((always_inline))
#else
#define GPUTWIN_INLINE inline
#endif
