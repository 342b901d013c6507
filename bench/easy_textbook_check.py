#!/usr/bin/env python3
"""Independent check of gputwin's `easy-textbook` policy: textbook EASY backfilling written from the paper.

Simulates EASY (Mu'alem and Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001) on N single-unit processors, replaying an SWF
trace, and prints every job's start time; with --gputwin it also runs gputwin's `easy-textbook` on the same trace
and cluster (N nodes of 1 CPU, SWF processors as CPUs) and compares the two start for start.

The rule, as in the paper (and CQSim, SchedGym, AccaSim):
  - queue in submit order (ties: job id); at a scheduling point, start jobs from the front while they fit;
  - the first job that does not fit (the head) gets the shadow time: walking running jobs by expected end
    (start + requested time), the earliest time enough processors are free for it; "extra" = free at the shadow
    time - what the head needs;
  - every later job starts now if it fits in the processors free now and either ends (now + requested time)
    by the shadow time, or needs no more than the extra processors (extra then shrinks by its size).

What both sides model (it must be the same thing for the comparison to mean anything):
  - processors: SWF field 8 (requested), else field 5 (allocated); jobs asking for more than N never run
    (gputwin rejects them at submit);
  - run time: field 4; requested time: field 9, or the run time when unknown (gputwin's `estimate: exact`);
    a job runs min(run time, requested time) (killed at its limit); times rounded to whole seconds;
  - records that cannot run are skipped (unknown submit time or run time, no processors, cancelled before
    starting), as gputwin's SWF import does;
  - scheduling points: once per instant, after every submit and end at that time ("instant", gputwin's default),
    or after every event ("event": ends at one time in the order the jobs started, then submits in trace order).

Usage:
  easy_textbook_check.py TRACE.swf --procs N                 # prints "job_id start_time" per job
  easy_textbook_check.py TRACE.swf --procs N --gputwin BIN   # compares with gputwin, exit 1 on any mismatch
Options: --limit-jobs K (first K records only), --scheduling-point instant|event, --keep DIR (gputwin's output),
--policy P (compare with another gputwin policy: a control that must show mismatches), --skip-missing.
"""

import argparse
import heapq
import json
import math
import os
import subprocess
import sys
import tempfile
import time


class Job:
    __slots__ = ("id", "submit", "procs", "run", "limit", "start", "order")

    def __init__(self, job_id, submit, procs, run, limit, order):
        self.id = job_id
        self.submit = submit
        self.procs = procs
        self.run = run
        self.limit = limit
        self.start = -1
        self.order = order


def round_s(x):
    """llround for the non-negative times of a trace (half away from zero)."""
    return int(math.floor(x + 0.5))


def read_swf(path, limit_records=0):
    """Raw records (lists of 18 numbers as strings) and the text of the first `limit_records` records."""
    records, lines = [], []
    with open(path) as f:
        for line in f:
            text = line.strip()
            if not text or text.startswith(";"):
                lines.append(line)
                continue
            if limit_records and len(records) >= limit_records:
                continue
            records.append(text.split()[:18])
            lines.append(line)
    return records, "".join(lines)


def jobs_of(records, procs_total):
    """Jobs that can run on `procs_total` processors, in trace order; and how many records were left out."""
    jobs, skipped = [], 0
    for fields in records:
        number = int(float(fields[0]))
        submit, run = float(fields[1]), float(fields[3])
        allocated, requested_procs = int(float(fields[4])), int(float(fields[7]))
        requested_time, status = float(fields[8]), int(float(fields[10]))
        procs = requested_procs if requested_procs > 0 else allocated
        if number < 0 or submit < 0 or (status == 5 and run <= 0) or run < 0 or procs <= 0 or procs > procs_total:
            skipped += 1
            continue
        run_s = round_s(run)
        limit_s = round_s(requested_time) if requested_time > 0 else run_s
        jobs.append(Job(number, round_s(submit), procs, run_s, limit_s, len(jobs)))
    return jobs, skipped


def simulate(jobs, procs_total, scheduling_point="instant"):
    """Textbook EASY on `procs_total` processors; sets every job's start. Returns the passes run and the longest
    queue a pass saw."""
    arrivals = sorted(jobs, key=lambda j: j.submit)  # stable: trace order within a second
    free = procs_total
    queue = []  # waiting jobs, in (submit, id) order
    running = {}  # job -> expected end (start + requested time)
    ends = []  # heap of (actual end, start sequence, job order)
    by_order = {j.order: j for j in jobs}
    sequence = 0
    stats = {"passes": 0, "max_queue": 0}

    def start(job, now):
        nonlocal free, sequence
        job.start = now
        free -= job.procs
        running[job] = now + job.limit
        heapq.heappush(ends, (now + min(job.run, job.limit), sequence, job.order))
        sequence += 1

    def schedule(now):
        nonlocal queue
        stats["passes"] += 1
        stats["max_queue"] = max(stats["max_queue"], len(queue))
        # Start jobs from the front while they fit.
        k = 0
        while k < len(queue) and queue[k].procs <= free:
            start(queue[k], now)
            k += 1
        queue = queue[k:]
        if not queue:
            return
        head = queue[0]
        # Shadow time and extra processors: add back running jobs by expected end, all jobs of one end together.
        ends_sorted = sorted(running.items(), key=lambda kv: kv[1])
        avail, i, shadow, extra = free, 0, None, 0
        while i < len(ends_sorted):
            t = ends_sorted[i][1]
            while i < len(ends_sorted) and ends_sorted[i][1] == t:
                avail += ends_sorted[i][0].procs
                i += 1
            if avail >= head.procs:
                shadow, extra = max(t, now), avail - head.procs
                break
        assert shadow is not None, "the head fits once every running job has ended"
        # Backfill behind the head.
        kept = [head]
        for job in queue[1:]:
            if free > 0 and job.procs <= free:
                if now + job.limit <= shadow:
                    start(job, now)
                    continue
                if job.procs <= extra:
                    extra -= job.procs
                    start(job, now)
                    continue
            kept.append(job)
        queue = kept

    def submit(job):
        # Arrivals come in time order; within one second keep (submit, id) order.
        queue.append(job)
        k = len(queue) - 1
        while k > 0 and (queue[k - 1].submit, queue[k - 1].id) > (job.submit, job.id):
            queue[k - 1], queue[k] = queue[k], queue[k - 1]
            k -= 1

    def end(order):
        nonlocal free
        job = by_order[order]
        free += job.procs
        del running[job]

    nxt = 0
    while nxt < len(arrivals) or ends:
        t = arrivals[nxt].submit if nxt < len(arrivals) else None
        if ends and (t is None or ends[0][0] < t):
            t = ends[0][0]
        # One instant: ends (in start order), then submits; with "event" a pass after each of them.
        while True:
            if ends and ends[0][0] == t:
                end(heapq.heappop(ends)[2])
            elif nxt < len(arrivals) and arrivals[nxt].submit == t:
                submit(arrivals[nxt])
                nxt += 1
            else:
                break
            if scheduling_point == "event":
                schedule(t)
        schedule(t)
    return stats


def run_gputwin(binary, trace, procs_total, scheduling_point, out_dir, policy):
    """Runs gputwin's `policy` on `trace` with `procs_total` single-CPU nodes; returns {job id: start}."""
    scenario = {
        "name": "easy-textbook-check",
        "description": "bench/easy_textbook_check.py: textbook EASY on single-CPU nodes, checked start for start",
        "cluster": {
            "nodes": [{"prefix": "n", "count": procs_total, "cpus": 1, "memory_gb": 4, "gpus": 0, "digits": 5}],
            "partitions": [{"name": "batch", "nodes": "ALL", "default": True}],
        },
        "workload": {"trace": {"path": os.path.abspath(trace), "format": "swf"}},
        "scheduler": {"policy": policy, "scheduling_point": scheduling_point},
    }
    path = os.path.join(out_dir, "scenario.json")
    with open(path, "w") as f:
        json.dump(scenario, f, indent=1)
    results = os.path.join(out_dir, "results")
    t0 = time.monotonic()
    subprocess.run([binary, "run", path, "--out", results, "--quiet"], check=True)
    wall = time.monotonic() - t0
    starts = {}
    with open(os.path.join(results, "jobs.csv")) as f:
        header = f.readline().rstrip("\n").split(",")
        col_id, col_start = header.index("job_id"), header.index("start_time")
        for line in f:
            cells = line.rstrip("\n").split(",")
            starts[int(cells[col_id])] = int(cells[col_start]) if cells[col_start] not in ("", "-1") else -1
    return starts, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", help="SWF trace")
    ap.add_argument("--procs", type=int, required=True, help="number of single-unit processors (nodes)")
    ap.add_argument("--limit-jobs", type=int, default=0, help="use only the first K records")
    ap.add_argument("--scheduling-point", choices=["instant", "event"], default="instant")
    ap.add_argument("--gputwin", help="gputwin binary: run easy-textbook too and compare start for start")
    ap.add_argument("--policy", default="easy-textbook",
                    help="gputwin policy to compare with (a control: anything but easy-textbook should differ)")
    ap.add_argument("--keep", help="folder for gputwin's scenario and results (default: a temporary one)")
    ap.add_argument("--max-report", type=int, default=10, help="mismatches to print")
    ap.add_argument("--skip-missing", action="store_true", help="exit 77 (ctest's skip) if the trace is absent")
    args = ap.parse_args()
    if args.skip_missing and not os.path.exists(args.trace):
        print(f"easy_textbook_check: {args.trace} not found: skipped")
        return 77

    records, text = read_swf(args.trace, args.limit_jobs)
    jobs, skipped = jobs_of(records, args.procs)
    ids = [j.id for j in jobs]
    if len(set(ids)) != len(ids):
        sys.exit("easy_textbook_check: job numbers are not unique in " + args.trace)
    t0 = time.monotonic()
    stats = simulate(jobs, args.procs, args.scheduling_point)
    py_wall = time.monotonic() - t0

    if not args.gputwin:
        for j in jobs:
            print(j.id, j.start)
        return 0

    out_dir = args.keep or tempfile.mkdtemp(prefix="easy-textbook-check-")
    os.makedirs(out_dir, exist_ok=True)
    trace = args.trace
    if args.limit_jobs:
        trace = os.path.join(out_dir, "slice.swf")
        with open(trace, "w") as f:
            f.write(text)
    theirs, gt_wall = run_gputwin(args.gputwin, trace, args.procs, args.scheduling_point, out_dir, args.policy)

    mismatches = []
    for j in jobs:
        other = theirs.get(j.id)
        if other != j.start:
            mismatches.append((j.id, j.submit, j.procs, j.start, other))
    extra_ids = set(theirs) - set(ids)
    waits = [j.start - j.submit for j in jobs]
    print(f"trace      {args.trace}" + (f" (first {args.limit_jobs} records)" if args.limit_jobs else ""))
    print(f"machine    {args.procs} single-unit processors, scheduling point {args.scheduling_point}")
    print(f"jobs       {len(jobs)} compared ({skipped} records cannot run and are skipped by both)")
    print(f"python     {stats['passes']} passes in {py_wall:.2f} s, longest queue {stats['max_queue']} jobs; "
          f"mean wait {sum(waits) / max(len(waits), 1):.1f} s")
    print(f"gputwin    {args.policy}: {len(theirs)} jobs in {gt_wall:.2f} s (whole command)")
    print(f"mismatches {len(mismatches) + len(extra_ids)}")
    for m in mismatches[: args.max_report]:
        print(f"  job {m[0]} (submit {m[1]}, {m[2]} procs): python starts it at {m[3]}, gputwin at {m[4]}")
    for job_id in sorted(extra_ids)[: args.max_report]:
        print(f"  job {job_id}: only in gputwin's jobs.csv")
    return 1 if mismatches or extra_ids else 0


if __name__ == "__main__":
    sys.exit(main())
