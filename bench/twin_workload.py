#!/usr/bin/env python3
"""Submits a GPU workload to a real Slurm through slurmrestd (v0.0.38 shapes), for scoring the twin's forecasts.

Jobs come from a few job classes per user (a training job, an evaluation, a preprocessing step), each with its
own typical run time (+-10%), and time limits 2-4x the run time (3.4x on average), rounded up to whole minutes
as users set them. Arrivals are spread over --span seconds so the queue builds and drains. Deterministic for a
given --seed. Each job is a `sleep`, so the cluster's real scheduler decides everything else.

  set -a; . /tmp/slurm-twin/env; set +a
  python3 bench/twin_workload.py --jobs 60 --span 600 --seed 1
"""
import argparse
import json
import os
import random
import sys
import time
import urllib.request

# (name, typical run seconds, GPUs per node, nodes) per class.
CLASSES = {
    "root": [("train-llm", 200, 8, 2), ("eval", 60, 2, 1), ("prep", 100, 4, 1)],
    "nobody": [("finetune", 150, 8, 1), ("sweep", 80, 1, 1), ("infer", 40, 2, 1)],
}
RATIOS = [2.0, 2.5, 3.0, 3.5, 4.0]  # mean 3.0; rounding limits up to whole minutes lifts it to about 3.4


def submit(url, api, user, token, job, script, job_dir):
    body = {
        "job": {
            "name": job["name"],
            "nodes": str(job["nodes"]),
            "gres": "gpu:h100:%d" % job["gpus"],
            "tasks": job["nodes"],
            "cpus_per_task": 1,
            "time_limit": job["limit_min"],
            "environment": {"PATH": "/bin:/usr/bin"},
            "current_working_directory": job_dir,
            "standard_output": "/dev/null",
            "comment": "twin-workload",
        },
        "script": script,
    }
    req = urllib.request.Request(
        "%s/slurm/%s/job/submit" % (url, api), data=json.dumps(body).encode(), method="POST",
        headers={"X-SLURM-USER-NAME": user, "X-SLURM-USER-TOKEN": token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        reply = json.load(r)
    if reply.get("job_id") is None:
        raise SystemExit("submit refused: %s" % reply.get("errors"))
    return reply["job_id"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=60)
    p.add_argument("--span", type=float, default=600, help="seconds over which jobs arrive")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dry", action="store_true", help="print the workload, submit nothing")
    a = p.parse_args()
    rng = random.Random(a.seed)
    url = os.environ.get("SLURMRESTD_URL", "http://127.0.0.1:16820")
    api = "v0.0.38"
    tokens = {"root": os.environ.get("SLURM_JWT", ""), "nobody": os.environ.get("SLURM_TWIN_USER_JWT", "")}
    users = [u for u in CLASSES if tokens[u] or a.dry]
    job_dir = os.environ.get("SLURM_TWIN_JOB_DIR", "/tmp")
    arrivals = sorted(rng.uniform(0, a.span) for _ in range(a.jobs))
    jobs = []
    for t in arrivals:
        user = rng.choice(users)
        name, typical, gpus, nodes = rng.choice(CLASSES[user])
        run = max(20, round(typical * rng.uniform(0.9, 1.1)))
        limit_min = max(1, -(-round(run * rng.choice(RATIOS)) // 60))
        jobs.append({"at": t, "user": user, "name": name, "run": run, "gpus": gpus, "nodes": nodes,
                     "limit_min": limit_min})
    ratio = sum(j["limit_min"] * 60 / j["run"] for j in jobs) / len(jobs)
    print("%d jobs over %.0f s, limit/run %.2f on average" % (len(jobs), a.span, ratio), file=sys.stderr)
    if a.dry:
        json.dump(jobs, sys.stdout, indent=1)
        return
    start = time.time()
    for j in jobs:
        wait = start + j["at"] - time.time()
        if wait > 0:
            time.sleep(wait)
        job_id = submit(url, api, j["user"], tokens[j["user"]], j, "#!/bin/sh\nsleep %d\n" % j["run"], job_dir)
        print("%.0f submitted %s %s as %s: %d s, limit %d min" % (time.time() - start, job_id, j["name"], j["user"],
                                                                 j["run"], j["limit_min"]), flush=True)


if __name__ == "__main__":
    main()
