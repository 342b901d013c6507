#!/usr/bin/env python3
"""Writes a heavily loaded SWF trace: a real trace tiled end to end to --jobs records (job numbers renumbered,
each copy shifted by the trace's span), with every submit time divided by --compress, so arrivals outpace the
machine and the queue grows thousands of jobs deep (the overloaded replays of issue 16).

  bench/make_loaded_swf.py ../shared/traces/hpc2n-subset.swf /tmp/gputwin-bench/loaded-10k.swf --jobs 10000 --compress 4

Run times, requested times and processor counts are the trace's; only job numbers and submit times change.
"""

import argparse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", help="SWF trace to tile")
    ap.add_argument("out", help="SWF file to write")
    ap.add_argument("--jobs", type=int, default=10000, help="records to write (default 10000)")
    ap.add_argument("--compress", type=float, default=4.0, help="divide submit times by this (default 4)")
    args = ap.parse_args()

    header, records = [], []
    with open(args.source) as f:
        for line in f:
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                header.append(text)
            else:
                records.append(text.split()[:18])
    span = max(float(r[1]) for r in records) + 1
    with open(args.out, "w") as out:
        for h in header:
            out.write(h + "\n")
        out.write(f"; Note: tiled to {args.jobs} records, submit times divided by {args.compress:g} "
                  f"(gputwin bench/make_loaded_swf.py)\n")
        for k in range(args.jobs):
            copy, r = divmod(k, len(records))
            fields = list(records[r])
            fields[0] = str(k + 1)
            fields[1] = str(int((float(fields[1]) + copy * span) / args.compress))
            out.write(" ".join(fields) + "\n")


if __name__ == "__main__":
    main()
