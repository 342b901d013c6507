#!/usr/bin/env bash
# Writes a 10,000-job SWF trace for the replay benchmark: the real HPC2N subset (3,170 jobs, 120 nodes x
# 2 CPUs) from ../shared/traces, tiled end to end (job ids renumbered, submit times shifted by the span of the
# trace) until 10,000 records. Usage: bench/make_swf_10k.sh OUT.swf
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)/shared/traces/hpc2n-subset.swf"
out="${1:?usage: make_swf_10k.sh OUT.swf}"
awk -v want=10000 '
  /^;/ { if (!copied) header = header $0 "\n"; next }
  NF >= 18 { n++; line[n] = $0; sub_t[n] = $2; if ($2 > span) span = $2 }
  END {
    printf "%s", header
    printf "; Note: tiled to %d jobs by gputwin bench/make_swf_10k.sh\n", want
    id = 0
    for (copy = 0; id < want; copy++) {
      for (i = 1; i <= n && id < want; i++) {
        split(line[i], f, " ")
        id++
        f[1] = id
        f[2] = f[2] + copy * (span + 1)
        s = f[1]
        for (k = 2; k <= 18; k++) s = s " " f[k]
        print s
      }
    }
  }' "$src" > "$out"
