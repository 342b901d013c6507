#!/usr/bin/env python3
"""`gputwin twin` against a real Slurm 22.05 through slurmrestd (and against a local garbage-serving fake).

    live_twin_test.py /path/to/gputwin [unittest options, e.g. -v or LiveTwin.test_a_mirror_fields]

Needs the environment of a running cluster (../shared/slurmrestd/local-slurm.sh start; `set -a; . ENVFILE`):
SLURMRESTD_URL, SLURMRESTD_API, SLURM_JWT (root), SLURM_TWIN_USER_JWT (user nobody), SLURM_TWIN_JOB_DIR and
SLURM_CONF, and Slurm's clients (scontrol, squeue, sinfo, sacct, scancel) on PATH. Exits 77 (skipped, ctest's
SKIP_RETURN_CODE) when SLURMRESTD_URL or SLURM_JWT is unset.

The cluster may be shared: every job this test submits is named with a unique prefix (lt<pid>-) and its id is kept;
only those jobs are changed and cancelled (tearDown, and at exit). Other users' jobs are only read (the mirror test
compares them too, where squeue shows the same before and after the twin's poll). The node the health tests mark
with an XID is always left with an empty comment and resumed (finally). The quota test, which cancels every running
and pending job of its user, runs only when no job of that user that this test did not submit is listed at all.

Tests (each documents what the twin actually does where that is not what one might expect):
  a  mirror: jobs and nodes tables against squeue / sacct / sinfo, field by field
  b  forecasts over a 90 s run with a short workload; twin-score rows for gputwin and slurmctld (skipped when no
     job that was pending at a poll started within the run: a cluster kept full by other work)
  c  health controller: XID in a node's comment, dry-run then --act then --act again (idempotent); a node drained
     with reason "XID 79" by an admin (what the controller does with it); GPU reset flow (XID 95) which resumes
  d  priority controller (scenario /operations): set_priority, hold, release on pending jobs, dry-run then --act
  e  quota controller: a running job of a user over a tiny quota is cancelled with --act
  f  bad token: named endpoint, token not echoed; --token-file mode 0644 refused, 0600 accepted
  g  a fake slurmrestd serving a valid /openapi/v3, one good poll, then HTML, truncated JSON, 500, dropped
     connections and slow replies: no crash, no hang, errors named and recorded in the polls table; the fake
     killed in the middle of a run (later polls fail, named, recorded), and a twin started against it dead
"""
import http.server
import json
import os
import re
import socketserver
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(REPO), "shared")
EXAMPLES = os.path.join(SHARED, "slurmrestd", "examples", "v0.0.38")
OPENAPI = os.path.join(SHARED, "slurmrestd", "openapi-22.05.json")
PREFIX = "lt%d-" % os.getpid()

GPUTWIN = None  # argv[1]
URL = os.environ.get("SLURMRESTD_URL", "")
API = os.environ.get("SLURMRESTD_API", URL.rstrip("/") + "/slurm/v0.0.38")
ROOT_JWT = os.environ.get("SLURM_JWT", "")
USER = os.environ.get("SLURM_TWIN_USER", "nobody")
USER_JWT = os.environ.get("SLURM_TWIN_USER_JWT", "")
JOB_DIR = os.environ.get("SLURM_TWIN_JOB_DIR", "/tmp")
SLURM_CONF = os.environ.get("SLURM_CONF", "")

SUBMITTED = []  # job ids this process submitted and has not cancelled yet (cancelled at the end whatever happens)
EVER_SUBMITTED = set()  # every job id this process submitted


# ---- Slurm through its REST API and its clients -------------------------------------------------------------------


def rest(method, path, body=None, user="root", token=None, timeout=20):
    """(HTTP status, parsed JSON reply or raw text) of a slurmrestd call on API + path."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(API + path, data=data, method=method)
    req.add_header("X-SLURM-USER-NAME", user)
    req.add_header("X-SLURM-USER-TOKEN", token if token is not None else ROOT_JWT)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            status, text = reply.status, reply.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode(errors="replace")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def submit(name, gres="gpu:h100:1", nodes=1, minutes=5, sleep=300, as_user=False, **extra):
    """Submits a batch job named PREFIX + name through POST job/submit; returns its id (kept for the cleanup)."""
    job = {
        "name": PREFIX + name,
        "nodes": str(nodes),
        "gres": gres,
        "time_limit": minutes,
        "environment": {"PATH": "/bin:/usr/bin"},
        "current_working_directory": JOB_DIR,
        "standard_output": "/dev/null",
    }
    job.update(extra)
    body = {"job": job, "script": "#!/bin/sh\nsleep %s\n" % sleep}
    if as_user:
        status, reply = rest("POST", "/job/submit", body, user=USER, token=USER_JWT)
    else:
        status, reply = rest("POST", "/job/submit", body)
    job_id = reply.get("job_id") if isinstance(reply, dict) else None
    if not job_id:
        raise AssertionError("submit %s: HTTP %s: %s" % (name, status, str(reply)[:600]))
    SUBMITTED.append(int(job_id))
    EVER_SUBMITTED.add(int(job_id))
    return int(job_id)


def run(args, timeout=60, env=None, check=False):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, check=check)


def cancel(ids):
    ids = [str(i) for i in ids]
    if ids:
        run(["scancel"] + ids, timeout=30)


SQUEUE_FIELDS = ["id", "state", "user", "partition", "nodes", "tres_per_node", "limit", "node_list", "reason",
                 "submit", "start", "priority", "cpus", "name"]


def squeue(ids):
    """{job id: {field: value}} of squeue -t all for `ids` (jobs ended longer ago than MinJobAge are absent)."""
    if not ids:
        return {}
    out = run(["squeue", "-h", "-t", "all", "-j", ",".join(map(str, ids)), "-o",
               "%i|%T|%u|%P|%D|%b|%l|%N|%r|%V|%S|%Q|%C|%j"]).stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == len(SQUEUE_FIELDS):
            row = dict(zip(SQUEUE_FIELDS, parts))
            rows[int(row["id"])] = row
    return rows


def squeue_all():
    """Every job slurmctld lists (any state): [(id, user, state, name, submit)]."""
    out = run(["squeue", "-h", "-t", "all", "-o", "%i|%u|%T|%j|%V"]).stdout
    return [tuple(line.split("|")) for line in out.splitlines() if line.count("|") == 4]


def sacct(ids):
    out = run(["sacct", "-n", "-P", "-X", "-j", ",".join(map(str, ids)), "-o", "JobID,State,Elapsed"]).stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].isdigit():
            rows[int(parts[0])] = {"state": parts[1].split()[0], "elapsed": duration_s(parts[2])}
    return rows


def sinfo_nodes():
    """{node: {cpus, memory, gres, state}} of sinfo -N (a node in two partitions is listed twice: kept once)."""
    out = run(["sinfo", "-N", "-h", "-o", "%N|%c|%m|%G|%T|%E"]).stdout
    nodes = {}
    for line in out.splitlines():
        name, cpus, mem, gres, state, reason = line.split("|", 5)
        nodes[name] = {"cpus": int(cpus), "memory": int(mem), "gres": gres, "state": state, "reason": reason}
    return nodes


def node_state_and_reason(node):
    out = run(["sinfo", "-h", "-n", node, "-o", "%T|%E"]).stdout.splitlines()
    state, reason = out[0].split("|", 1)
    return state, reason


def scontrol(*args):
    return run(["scontrol"] + list(args), timeout=30)


def duration_s(text):
    """Seconds of a Slurm duration ("5:00", "1:02:03", "2-00:00:00"); None for UNLIMITED and the like."""
    text = text.strip()
    if not text or not text[0].isdigit():
        return None
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
    parts = [int(p) for p in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts
    return ((days * 24 + h) * 60 + m) * 60 + s


def local_time(text):
    """Unix time of squeue's local "2026-11-24T12:06:08", None for N/A and the like."""
    try:
        return int(time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def gres_gpus(text):
    """(GPU count, type) of "gres:gpu:h100:2" / "gpu:h100:8(S:0-1)" / "gpu:2"; (0, "") without GPUs."""
    for item in text.split(","):
        item = re.sub(r"\(.*\)$", "", item.strip())
        parts = item.split(":")
        if parts and parts[0] == "gres":
            parts = parts[1:]
        if not parts or parts[0] != "gpu":
            continue
        if len(parts) == 3:
            return int(parts[2]), parts[1]
        if len(parts) == 2 and parts[1].isdigit():
            return int(parts[1]), ""
    return 0, ""


# sinfo's state names (lower case, with a suffix such as * ~ # ! % $ @ ^ -) as the twin's node_events names them.
# PLANNED (22.05: idle, but backfill plans a pending job on it) is idle to the twin.
SINFO_STATES = {"idle": "IDLE", "planned": "IDLE", "mixed": "MIXED", "allocated": "ALLOCATED", "drained": "DRAINED",
                "draining": "DRAINING", "down": "DOWN", "fail": "FAIL", "failing": "FAILING",
                "powered_down": "POWERED_DOWN", "powering_up": "POWERING_UP", "powering_down": "POWERING_DOWN",
                "reboot_issued": "REBOOTING", "rebooting": "REBOOTING"}


def sinfo_state(text):
    return SINFO_STATES.get(text.rstrip("*~#!%$@^-").lower(), text.upper())


# ---- The twin ----------------------------------------------------------------------------------------------------


def twin(out, *args, timeout=60, env=None, url=None):
    """Runs `gputwin twin --slurmrestd URL --out OUT ARGS`; returns the CompletedProcess."""
    cmd = [GPUTWIN, "twin", "--slurmrestd", url or URL, "--out", out] + list(args)
    try:
        return run(cmd, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("gputwin twin did not finish within %s s: %s" % (timeout, " ".join(cmd))) from e


def query(out, sql, params=()):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(out, "results.sqlite"), uri=True)
    try:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(sql, params)]
    finally:
        db.close()


def query_if_written(out, sql, params=()):
    """query(), or no rows while a running twin has not written its folder yet."""
    try:
        return query(out, sql, params)
    except sqlite3.Error:
        return []


def epoch_of(out):
    return int(query(out, "SELECT value FROM twin_info WHERE key = 'epoch_unix'")[0]["value"])


def actions(out, **where):
    rows = query(out, "SELECT * FROM actions ORDER BY rowid")
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


def twin_node_state(out, node, first=False):
    """The state the twin last (or first) recorded for `node`: its view at a poll, before that poll's actions."""
    # A row covers nodes node_index .. node_index + node_count - 1 (results schema 2).
    rows = query(out, "SELECT e.state FROM node_events e JOIN nodes n ON n.node_index >= e.node_index "
                      "AND n.node_index < e.node_index + e.node_count WHERE n.name = ? ORDER BY e.time, e.rowid",
                 (node,))
    return (rows[0] if first else rows[-1])["state"] if rows else None


def reboot_refused():
    """True when slurmctld has no RebootProgram, so `scontrol reboot` fails (local-slurm.sh's cluster)."""
    return re.search(r"^RebootProgram\s*=\s*\(null\)", run(["scontrol", "show", "config"]).stdout, re.M) is not None


def scenario_file(directory, **extra):
    """A minimal scenario (4 x 8 H100 like the test cluster, one synthetic job) with `extra` top-level keys."""
    s = {
        "name": "twin-live-test",
        "seed": 1,
        "cluster": {
            "nodes": [{"prefix": "gpu", "count": 4, "cpus": 64, "memory_gb": 500, "gpus": 8, "gpu_type": "h100"}],
            "partitions": [{"name": "gpu", "nodes": "ALL", "default": True}],
        },
        "workload": {"synthetic": {"profile": "acme-seren", "jobs": 1, "load": 0.5}},
        "scheduler": {"policy": "slurm"},
    }
    s.update(extra)
    path = os.path.join(directory, "scenario.json")
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
    check = run([GPUTWIN, "validate", path])
    if check.returncode != 0:
        raise AssertionError("the test's scenario does not validate: " + check.stdout + check.stderr)
    return path


def wait_for(predicate, timeout, step=1.0):
    """Polls `predicate` until it returns something true or `timeout` s pass; returns its last value."""
    end = time.time() + timeout
    while True:
        value = predicate()
        if value or time.time() >= end:
            return value
        time.sleep(step)


# ---- Tests --------------------------------------------------------------------------------------------------------


class LiveTwin(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.mine = []  # this test's jobs
        self.tmp = tempfile.TemporaryDirectory(prefix="twin-live-")
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        cancel(self.mine)
        SUBMITTED[:] = [j for j in SUBMITTED if j not in self.mine]
        self.tmp.cleanup()

    def submit(self, *args, **kwargs):
        job_id = submit(*args, **kwargs)
        self.mine.append(job_id)
        return job_id

    def assertTwinOk(self, r, what="gputwin twin"):
        self.assertEqual(r.returncode, 0, "%s exited %s:\n%s" % (what, r.returncode, r.stderr))

    # a. The mirror, field by field --------------------------------------------------------------------------------

    def test_a_mirror_fields(self):
        quick = self.submit("quick", gres="gpu:h100:1", minutes=2, sleep=1)
        one = self.submit("one-gpu", gres="gpu:h100:1", minutes=5)
        two = self.submit("two-gpus", gres="gpu:h100:2", minutes=10)
        multi = self.submit("two-nodes", gres="gpu:h100:1", nodes=2, minutes=7)
        debug = self.submit("debug", gres="gpu:h100:1", minutes=3, partition="debug")
        held = self.submit("held", gres="gpu:h100:4", minutes=4, hold=True)
        later = self.submit("later", gres="gpu:h100:1", minutes=6, begin_time="now+1hour")
        by_user = self.submit("nobody", gres="gpu:h100:1", minutes=8, as_user=True)
        gone = self.submit("cancelled", gres="gpu:h100:1", minutes=2, begin_time="now+1hour")
        status, reply = rest("DELETE", "/job/%d" % gone)
        self.assertEqual(status, 200, reply)
        ids = [quick, one, two, multi, debug, held, later, by_user, gone]

        # Until the quick job has ended and some of the others run, if the cluster has room: it may be busy with
        # other work, and then the test's jobs are compared as pending (and running ones of other users are
        # compared too, below).
        def ended():
            q = squeue([quick])
            return quick not in q or q[quick]["state"] not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING")
        if not wait_for(ended, 30):
            print("\n  mirror: the cluster is busy: the 1 s job did not run within 30 s", file=sys.stderr)
        wait_for(lambda: any(r["state"] == "RUNNING" for r in squeue(ids).values()), 5)
        time.sleep(2)  # pending reasons are set by the scheduler's next pass

        listed = lambda: sorted(int(j[0]) for j in squeue_all() if j[0].isdigit())
        before_q, before_n = squeue(listed()), sinfo_nodes()
        r = twin(self.out, "--once", "--slurm-conf", SLURM_CONF)
        after_q, after_n = squeue(listed()), sinfo_nodes()
        self.assertTwinOk(r)
        epoch = epoch_of(self.out)
        rows = {row["job_id"]: row for row in query(self.out, "SELECT * FROM jobs")}
        accounted = sacct(ids)

        def compare_job(row, q):
            """Mismatches of one jobs row against one squeue row (empty: equal)."""
            bad = []
            per_node, _ = gres_gpus(q["tres_per_node"])
            expect = {
                "state": q["state"],
                "user": q["user"],
                "partition": q["partition"],
                "nodes": int(q["nodes"]),
                # A pending job's %C is what it asked for; the twin gives each of its nodes at least one CPU.
                "cpus": max(int(q["cpus"]), int(q["nodes"])) if q["state"] == "PENDING" else int(q["cpus"]),
                "gpus": per_node * int(q["nodes"]),
                "time_limit": duration_s(q["limit"]),
                "submit_time": local_time(q["submit"]) - epoch,
            }
            if q["state"] == "PENDING":
                expect["reason"] = q["reason"]
                if " " in q["reason"]:
                    # squeue's %r is slurmctld's free-text state_description when it set one ("Nodes required for
                    # job are DOWN, DRAINED or reserved for jobs in higher priority partitions"); the twin keeps the
                    # reason code (state_reason, "Resources"): the one slurmrestd gives with that description.
                    status, reply = rest("GET", "/job/%d" % int(q["id"]))
                    record = reply["jobs"][0] if status == 200 and isinstance(reply, dict) and reply.get("jobs") else {}
                    if record.get("state_description") == q["reason"]:
                        expect["reason"] = record.get("state_reason")
                expect["start_time"] = None
                expect["node_list"] = None
            elif not q["node_list"]:
                # Ended without running (cancelled while pending): squeue's start is the end; the twin's is NULL.
                expect["start_time"] = None
                expect["node_list"] = None
            elif local_time(q["start"]) is not None:
                expect["node_list"] = q["node_list"]
                expect["start_time"] = local_time(q["start"]) - epoch
            for key, value in expect.items():
                if row[key] != value:
                    bad.append("%s: twin %r, squeue %r" % (key, row[key], value))
            return bad

        problems = []
        compared = {"mine": 0, "others": 0}
        for job_id in sorted(set(before_q) | set(after_q)):
            row = rows.get(job_id)
            if row is None:
                if job_id in ids or (job_id in before_q and job_id in after_q):
                    problems.append("job %d: not in the twin's jobs table" % job_id)
                continue
            tries = [compare_job(row, snap[job_id]) for snap in (before_q, after_q) if job_id in snap]
            compared["mine" if job_id in ids else "others"] += 1
            if all(tries):
                problems += ["job %d%s: %s" % (job_id, "" if job_id in ids else " (not ours)", b) for b in tries[0]]
        for job_id in ids:
            row = rows.get(job_id)
            if row is None:
                problems.append("job %d: not in the twin's jobs table" % job_id)
                continue
            if row["name"] != PREFIX + squeue([job_id]).get(job_id, {}).get("name", row["name"])[len(PREFIX):]:
                problems.append("job %d: name %r" % (job_id, row["name"]))
            if row["state"] in ("PENDING", "RUNNING"):
                continue
            acct = accounted.get(job_id)
            if acct is None:
                problems.append("job %d: ended (%s) but not in sacct" % (job_id, row["state"]))
                continue
            if acct["state"] != row["state"]:
                problems.append("job %d: state twin %r, sacct %r" % (job_id, row["state"], acct["state"]))
            if row["start_time"] is None:  # never ran (cancelled while pending): no run time
                if row["run_time"] not in (None, 0) or acct["elapsed"] != 0:
                    problems.append("job %d: run_time twin %r, sacct Elapsed %r" %
                                    (job_id, row["run_time"], acct["elapsed"]))
            elif row["run_time"] != acct["elapsed"] or row["end_time"] - row["start_time"] != acct["elapsed"]:
                problems.append("job %d: run_time twin %r (end - start %r), sacct Elapsed %r s" %
                                (job_id, row["run_time"], row["end_time"] - row["start_time"], acct["elapsed"]))
        self.assertEqual(rows[gone]["state"], "CANCELLED", "%r" % rows[gone])
        self.assertEqual(rows[held]["state"], "PENDING")
        self.assertEqual(rows[held]["reason"], "JobHeldUser")
        self.assertEqual(rows[later]["reason"], "BeginTime")
        self.assertEqual(rows[by_user]["user"], USER)
        print("\n  mirror: compared %(mine)d jobs of ours and %(others)d of other users" % compared, file=sys.stderr)
        # Nodes: names, CPUs, memory, GPUs and their type; the state the twin recorded last, against sinfo.
        nodes = {n["name"]: n for n in query(self.out, "SELECT * FROM nodes")}
        last = {}
        for e in query(self.out, "SELECT * FROM node_events ORDER BY time, rowid"):
            for node in range(e["node_index"], e["node_index"] + e["node_count"]):
                last[node] = e["state"]
        self.assertEqual(sorted(nodes), sorted(before_n), "node names")
        for name, info in before_n.items():
            node = nodes[name]
            gpus, gpu_type = gres_gpus(info["gres"])
            expect = {"cpus": info["cpus"], "memory_mb": info["memory"], "gpus": gpus, "gpu_type": gpu_type}
            for key, value in expect.items():
                if node[key] != value:
                    problems.append("node %s: %s twin %r, sinfo %r" % (name, key, node[key], value))
            states = {sinfo_state(before_n[name]["state"]), sinfo_state(after_n.get(name, info)["state"])}
            if last.get(node["node_index"]) not in states:
                problems.append("node %s: state twin %r, sinfo %s" % (name, last.get(node["node_index"]), states))
        self.assertEqual(problems, [], "\n".join(problems))

    # b. Forecasts and their score ---------------------------------------------------------------------------------

    def test_b_forecast_and_score(self):
        proc = subprocess.Popen([GPUTWIN, "twin", "--slurmrestd", URL, "--out", self.out, "--interval", "2",
                                 "--duration", "90", "--slurm-conf", SLURM_CONF],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(4)  # submitted after the first poll, so the twin sees them pending
            # 12 x 4 GPUs on 32: at least 4 wait for the first to end, so a poll sees them pending.
            ids = [self.submit("fill-%d" % i, gres="gpu:h100:4", minutes=2 + i % 2, sleep=20 + 3 * i)
                   for i in range(12)]
            _, err = proc.communicate(timeout=150)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        epoch = epoch_of(self.out)
        polls = query(self.out, "SELECT * FROM polls")
        self.assertGreaterEqual(len(polls), 20, "polls over 90 s at 2 s")
        self.assertEqual([p for p in polls if p["error"]], [], "poll errors")
        jobs = {j["job_id"]: j for j in query(self.out, "SELECT * FROM jobs")}
        forecasts = query(self.out, "SELECT * FROM forecasts")
        ours = {f["job_id"] for f in forecasts if f["job_id"] in ids}
        self.assertTrue(ours, "no forecasts for the test's jobs %s" % ids)
        # Every forecast carries the start its job had (NULL until it starts), made before that start; some job
        # (ours, or another user's on a busy cluster) started during the run.
        for f in forecasts:
            actual = jobs[f["job_id"]]["start_time"]
            self.assertEqual(f["actual_start"], actual, "forecast %r vs job start %r" % (f, actual))
            if actual is not None:
                self.assertLessEqual(f["made_at"], actual, "a forecast made after the start: %r" % f)
        started = sorted({f["job_id"] for f in forecasts if f["actual_start"] is not None})
        if not started:
            running = [j for j in jobs.values() if j["state"] == "RUNNING"]
            self.skipTest("no job that was pending at a poll started within the 90 s (the cluster is full: %d jobs "
                          "running, e.g. %s): nothing to score" % (len(running), [
                              (j["job_id"], j["name"], j["time_limit"]) for j in running[:3]]))
        print("\n  forecasts: %d rows, %d of our jobs forecast, %d forecast jobs started (%d ours)" % (
            len(forecasts), len(ours), len(started), len(set(started) & set(ids))), file=sys.stderr)
        # squeue agrees with the starts the twin recorded
        q = squeue(started)
        for j in started:
            if j in q and q[j]["start"] not in ("N/A", ""):
                self.assertEqual(local_time(q[j]["start"]) - epoch, jobs[j]["start_time"], "job %d start" % j)
        score = run([GPUTWIN, "twin-score", self.out])
        self.assertEqual(score.returncode, 0, score.stderr)
        cells = {}
        for line in score.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "all":
                cells[parts[1]] = int(parts[2])
        print("\n  twin-score:\n    " + score.stdout.replace("\n", "\n    "), file=sys.stderr)
        self.assertGreater(cells.get("gputwin", 0), 0, score.stdout)
        self.assertGreater(cells.get("slurmctld", 0), 0, score.stdout)

    def test_b_cancelled_pending_job_never_started(self):
        # A pending job cancelled between two polls: slurmctld gives it a start time (= its end), but it never ran:
        # no start in the jobs table, and its forecasts have no actual start (twin-score would score a cancellation).
        held = self.submit("cancel-held", minutes=3, hold=True)
        later = self.submit("cancel-later", minutes=3, begin_time="now+1hour")
        proc = subprocess.Popen([GPUTWIN, "twin", "--slurmrestd", URL, "--out", self.out, "--interval", "1",
                                 "--duration", "60", "--slurm-conf", SLURM_CONF],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # Cancel once a poll has recorded both pending (a fixed 2 s sleep lost that race on a loaded CI
            # machine), then stop the twin (SIGTERM) once a poll has recorded both cancelled.
            def seen(state):
                return len(query_if_written(self.out, "SELECT DISTINCT job_id FROM job_states WHERE job_id IN (?, ?) "
                                            "AND state = ?", (held, later, state))) == 2
            deadline = time.time() + 40
            while not seen("PENDING") and time.time() < deadline and proc.poll() is None:
                time.sleep(0.2)
            for job in (held, later):
                status, reply = rest("DELETE", "/job/%d" % job)
                self.assertEqual(status, 200, reply)
            while not seen("CANCELLED") and time.time() < deadline and proc.poll() is None:
                time.sleep(0.2)
            proc.terminate()
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        jobs = {j["job_id"]: j for j in query(self.out, "SELECT * FROM jobs WHERE job_id IN (?, ?)", (held, later))}
        states = query(self.out, "SELECT job_id, state FROM job_states WHERE job_id IN (?, ?) ORDER BY rowid",
                       (held, later))
        self.assertEqual(sorted({(s["job_id"], s["state"]) for s in states}),
                         sorted({(held, "PENDING"), (held, "CANCELLED"), (later, "PENDING"), (later, "CANCELLED")}),
                         "the twin did not see both jobs pending and then cancelled: %r" % states)
        for job in (held, later):
            self.assertEqual((jobs[job]["state"], jobs[job]["start_time"]), ("CANCELLED", None))
        forecasts = query(self.out, "SELECT * FROM forecasts WHERE job_id IN (?, ?)", (held, later))
        self.assertTrue(forecasts, "no forecasts of the pending jobs")
        started = [f for f in forecasts if f["actual_start"] is not None]
        self.assertEqual(started, [], "forecasts of jobs cancelled while pending carry an actual start")

    # c. Health controller -----------------------------------------------------------------------------------------

    def pick_node(self):
        """An idle node if there is one, else the one with the fewest GPUs allocated; (name, idle)."""
        nodes = sinfo_nodes()
        usable = {n: i for n, i in nodes.items() if sinfo_state(i["state"]) in ("IDLE", "MIXED", "ALLOCATED")}
        self.assertTrue(usable, "no node in service: %s" % nodes)
        idle = sorted(n for n, i in usable.items() if sinfo_state(i["state"]) == "IDLE")
        if idle:
            return idle[-1], True
        used = {}
        out = run(["sinfo", "-N", "-h", "-O", "NodeList:20,GresUsed:60"]).stdout
        for line in out.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0] in usable:
                m = re.search(r"gpu:[^:]*:?(\d+)", parts[1])
                used[parts[0]] = int(m.group(1)) if m else 0
        name = min(sorted(usable), key=lambda n: used.get(n, 0))
        print("\n  health: no idle node; using %s (%s GPUs in use by other jobs)" % (name, used.get(name)),
              file=sys.stderr)
        return name, False

    def restore_node(self, node):
        scontrol("update", "nodename=" + node, "comment=")
        if "REBOOT" in scontrol("show", "node", node).stdout:
            scontrol("cancel_reboot", node)  # a reboot the twin asked for and slurmctld accepted
        state, _ = node_state_and_reason(node)
        if sinfo_state(state) not in ("IDLE", "MIXED", "ALLOCATED"):
            r = scontrol("update", "nodename=" + node, "state=resume")
            if r.returncode != 0:
                print("\n  cleanup: resume %s: %s" % (node, r.stdout + r.stderr), file=sys.stderr)

    def health_run(self, out, *extra):
        r = twin(out, "--once", "--controllers", "health", "--slurm-conf", SLURM_CONF, "--max-nodes-out-pct", "50",
                 *extra)
        self.assertTwinOk(r)
        return r

    def test_c_health_xid_in_comment(self):
        node, _ = self.pick_node()
        try:
            r = scontrol("update", "nodename=" + node, "comment=XID 79 GPU 3")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            # Dry-run: the drain is recorded, not done.
            dry = os.path.join(self.tmp.name, "dry")
            self.health_run(dry)
            drains = actions(dry, controller="health", action="drain", target=node)
            self.assertEqual([d["outcome"] for d in drains], ["dry-run"],
                             "health actions for %s with comment 'XID 79 GPU 3': %r" % (node, actions(dry)))
            self.assertIn("79", drains[0]["reason"])
            self.assertNotIn(sinfo_state(node_state_and_reason(node)[0]), ("DRAINED", "DRAINING"))
            # Acting: a new process reports the XID again (once per process); the node is drained.
            scontrol("update", "nodename=" + node, "comment=")
            scontrol("update", "nodename=" + node, "comment=XID 79 GPU 3")
            act = os.path.join(self.tmp.name, "act")
            self.health_run(act, "--act")
            done = actions(act, controller="health", action="drain", target=node)
            self.assertEqual([d["outcome"] for d in done], ["done"], "%r" % actions(act))
            self.assertIn("nodename=" + node, done[0]["call"])
            state, reason = node_state_and_reason(node)
            self.assertIn(sinfo_state(state), ("DRAINED", "DRAINING"), "%s after the drain: %s" % (node, state))
            self.assertIn("xid 79", reason.lower())
            # An idle node's recovery starts at once: XID 79 needs a reboot (scontrol reboot ASAP nextstate=RESUME),
            # which this cluster refuses (no RebootProgram); a busy node's starts when its jobs end (a later poll).
            seen = twin_node_state(act, node)
            reboots = actions(act, action="reboot", target=node)
            print("\n  health --act on %s (%s at the poll): %s" % (
                node, seen, [(a["action"], a["outcome"]) for a in actions(act)]), file=sys.stderr)
            if seen == "IDLE":
                self.assertEqual([a["outcome"] for a in actions(dry, action="reboot", target=node)], ["dry-run"])
                self.assertEqual(len(reboots), 1, "%r" % actions(act))
                if reboot_refused():
                    self.assertTrue(reboots[0]["outcome"].startswith("failed: "), "%r" % reboots[0])
                    self.assertIn("RebootProgram", reboots[0]["outcome"])
            else:
                self.assertEqual(reboots, [], "a reboot of a node running jobs: %r" % reboots)
            # Again: the node is out already, so no second drain call.
            again = os.path.join(self.tmp.name, "again")
            self.health_run(again, "--act")
            self.assertEqual([a for a in actions(again, action="drain", target=node) if a["outcome"] == "done"], [],
                             "a second drain of %s: %r" % (node, actions(again)))
        finally:
            self.restore_node(node)

    def test_c_health_admin_drained_xid(self):
        # An admin (or a health check) drained a node with reason "XID 79": the twin does not drain it again; when
        # it has no jobs, the health controller starts its recovery: a reboot (scontrol reboot ASAP nextstate=
        # RESUME, which resumes it when it is back), never a direct resume.
        node, _ = self.pick_node()
        try:
            r = scontrol("update", "nodename=" + node, "state=drain", "reason=XID 79")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = self.out
            self.health_run(out, "--act")
            rows = actions(out, target=node)
            seen = twin_node_state(out, node)
            print("\n  admin-drained %s (%s at the poll), health --act: %s" % (
                node, seen, [(a["action"], a["outcome"], a["call"]) for a in rows]), file=sys.stderr)
            self.assertIn(seen, ("DRAINED", "DRAINING"))
            self.assertEqual([a for a in rows if a["action"] in ("drain", "resume")], [], "%r" % rows)
            reboots = [a for a in rows if a["action"] == "reboot"]
            if seen == "DRAINED":  # no jobs: the recovery (a reboot) starts now
                self.assertEqual(len(reboots), 1, "%r" % rows)
                if reboot_refused():
                    self.assertTrue(reboots[0]["outcome"].startswith("failed: "), "%r" % reboots[0])
                    self.assertIn("RebootProgram", reboots[0]["outcome"])
            else:
                self.assertEqual(reboots, [], "%r" % rows)
            state, _ = node_state_and_reason(node)
            self.assertIn(sinfo_state(state), ("DRAINED", "DRAINING"), "%s: %s" % (node, state))
        finally:
            self.restore_node(node)

    def test_c_health_gpu_reset_resumes(self):
        # XID 95 (uncontained error) needs a GPU reset: drain, reset (the node agent's job, logged), and at the next
        # poll the node is resumed. Only on an idle node: a busy one waits for its jobs.
        node, idle = self.pick_node()
        if not idle:
            self.skipTest("no idle node: the GPU reset and resume start only once a node's jobs have ended")
        try:
            scontrol("update", "nodename=" + node, "comment=XID 95 GPU 1")
            # Three polls whatever their pace (a loaded machine fitted only two into a 3-second --duration).
            r = twin(self.out, "--interval", "1", "--polls", "3", "--controllers", "health", "--act",
                     "--slurm-conf", SLURM_CONF, "--max-nodes-out-pct", "50", "--no-forecast")
            self.assertTwinOk(r)
            steps = [(a["action"], a["outcome"]) for a in actions(self.out, target=node)]
            seen = twin_node_state(self.out, node, first=True)
            print("\n  XID 95 on %s (%s at the first poll): %s" % (node, seen, steps), file=sys.stderr)
            if seen != "IDLE":
                self.skipTest("a job started on %s before the twin's first poll" % node)
            self.assertEqual(steps[:3], [("drain", "done"), ("reset_gpus", "done"), ("resume", "done")], "%r" % steps)
            self.assertNotIn(sinfo_state(node_state_and_reason(node)[0]), ("DRAINED", "DRAINING"))
        finally:
            self.restore_node(node)

    # d. Priority controller: the scenario's job operations --------------------------------------------------------

    def test_d_priority_hold_release(self):
        bump = self.submit("bump", minutes=3, begin_time="now+1hour")
        hold = self.submit("hold", minutes=3, begin_time="now+1hour")
        release = self.submit("release", minutes=3, begin_time="now+1hour", hold=True)
        time.sleep(1)
        path = scenario_file(self.tmp.name, operations=[
            {"time": 0, "action": "set_priority", "jobs": [bump], "priority": 4242},
            {"time": 0, "action": "hold", "jobs": [hold]},
            {"time": 0, "action": "release", "jobs": [release]},
        ])
        before = squeue([bump, hold, release])
        self.assertEqual(before[release]["reason"], "JobHeldUser")
        # Dry-run: recorded, nothing changes.
        dry = os.path.join(self.tmp.name, "dry")
        self.assertTwinOk(twin(dry, "--once", "--controllers", "priority", "--scenario", path, "--no-forecast"))
        got = {(a["action"], a["target"]): a["outcome"] for a in actions(dry, controller="priority")}
        self.assertEqual(got, {("set_priority", str(bump)): "dry-run", ("hold", str(hold)): "dry-run",
                               ("release", str(release)): "dry-run"})
        mid = squeue([bump, hold, release])
        self.assertEqual(mid[bump]["priority"], before[bump]["priority"])
        self.assertNotIn("JobHeld", mid[hold]["reason"])
        self.assertEqual(mid[release]["reason"], "JobHeldUser")
        # Acting, in one poll: the operations' time 0 is already past at the first poll.
        r = twin(self.out, "--once", "--controllers", "priority", "--scenario", path, "--no-forecast", "--act")
        self.assertTwinOk(r)
        rows = {(a["action"], a["target"]): a for a in actions(self.out, controller="priority")}
        self.assertEqual({k: v["outcome"] for k, v in rows.items()},
                         {("set_priority", str(bump)): "done", ("hold", str(hold)): "done",
                          ("release", str(release)): "done"})
        self.assertEqual(rows[("set_priority", str(bump))]["call"],
                         'POST /slurm/v0.0.38/job/%d {"priority":4242}' % bump)
        after = squeue([bump, hold, release])
        self.assertEqual(after[bump]["priority"], "4242")
        self.assertEqual(after[hold]["reason"], "JobHeldAdmin")
        self.assertNotIn("JobHeld", after[release]["reason"])
        # Again: nothing left to do (the priority is set, the job held, the other released).
        again = os.path.join(self.tmp.name, "again")
        self.assertTwinOk(twin(again, "--once", "--controllers", "priority", "--scenario", path, "--no-forecast",
                               "--act"))
        self.assertEqual(actions(again), [])

    # e. Quota controller ------------------------------------------------------------------------------------------

    def others_of(self, user):
        """Jobs of `user` slurmctld lists (any state: ended ones for MinJobAge) that this process did not submit;
        ended ones of an earlier run of this test (named lt<pid>-) aside, but not live ones of a concurrent run."""
        live = ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING")
        return [j for j in squeue_all() if j[1] == user and int(j[0].split("_")[0]) not in EVER_SUBMITTED
                and (not re.match(r"lt\d+-", j[3]) or j[2] in live)]

    def test_e_quota_cancel(self):
        # block_and_kill cancels every running and pending job of the user: only when no other job of that user is
        # listed (in any state, so a workload that submitted as that user in the last MinJobAge is noticed).
        others = self.others_of(USER)
        if others:
            self.skipTest("user %s has %d jobs this test did not submit (e.g. %s): a quota would cancel them" %
                          (USER, len(others), others[0]))
        job = self.submit("over-quota", minutes=5, as_user=True)
        # Running if the cluster has room (else pending: block_and_kill cancels the user's pending jobs too).
        running = wait_for(lambda: squeue([job]).get(job, {}).get("state") == "RUNNING", 15)
        print("\n  quota: job %d is %s" % (job, "running" if running else "pending (the cluster is full)"),
              file=sys.stderr)
        path = scenario_file(self.tmp.name, cost={
            "prices": [{"usd_per_gpu_hour": 1000}],
            "quotas": [{"user": USER, "limit_usd": 0.0001, "action": "block_and_kill"}],
        })
        dry = os.path.join(self.tmp.name, "dry")
        self.assertTwinOk(twin(dry, "--once", "--controllers", "quota", "--scenario", path, "--no-forecast"))
        cancels = actions(dry, controller="quota", action="cancel")
        self.assertEqual([(a["target"], a["outcome"]) for a in cancels], [(str(job), "dry-run")], "%r" % cancels)
        self.assertIn(squeue([job])[job]["state"], ("RUNNING", "PENDING"))
        if self.others_of(USER):
            self.skipTest("another job of %s appeared meanwhile" % USER)
        r = twin(self.out, "--once", "--controllers", "quota", "--scenario", path, "--no-forecast", "--act")
        self.assertTwinOk(r)
        cancels = actions(self.out, controller="quota", action="cancel")
        self.assertEqual([(a["target"], a["outcome"]) for a in cancels], [(str(job), "done")], "%r" % cancels)
        self.assertEqual(cancels[0]["call"], "DELETE /slurm/v0.0.38/job/%d" % job)
        self.assertTrue(wait_for(lambda: sacct([job]).get(job, {}).get("state") == "CANCELLED", 15),
                        "job %d: %s" % (job, sacct([job])))

    # f. Bad token, token file ---------------------------------------------------------------------------------------

    def test_f_bad_token_and_token_file(self):
        bad = "garbage-token-%d-XYZZY" % os.getpid()
        env = dict(os.environ, SLURM_JWT=bad)
        env.pop("SLURMRESTD_USER", None)
        r = twin(self.out, "--once", "--user", "root", env=env)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"/slurm/v0\.0\.38/|/openapi")
        self.assertNotIn(bad, r.stderr + r.stdout)
        self.assertNotIn("XYZZY", r.stderr + r.stdout)
        print("\n  bad token: exit %d: %s" % (r.returncode, r.stderr.strip().splitlines()[-1]), file=sys.stderr)
        # No user given and none in a garbage token: refused before any request (exit 2).
        r = twin(self.out, "--once", env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        # --token-file: 0644 refused (exit 2), 0600 used.
        token_file = os.path.join(self.tmp.name, "token")
        with open(token_file, "w") as f:
            f.write("SLURM_JWT=%s\n" % ROOT_JWT)
        env = dict(os.environ)
        env.pop("SLURM_JWT", None)
        os.chmod(token_file, 0o644)
        r = twin(self.out, "--once", "--token-file", token_file, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("chmod 600", r.stderr)
        self.assertNotIn(ROOT_JWT, r.stderr)
        os.chmod(token_file, 0o600)
        r = twin(self.out, "--once", "--token-file", token_file, env=env)
        self.assertTwinOk(r, "gputwin twin --token-file (0600)")
        self.assertEqual(query(self.out, "SELECT count(*) AS n FROM polls WHERE error IS NULL")[0]["n"], 1)

    # g. A slurmrestd that answers garbage -----------------------------------------------------------------------------

    def test_g_garbage_replies(self):
        server = FakeSlurmrestd()
        try:
            env = dict(os.environ, SLURM_JWT="fake-token-for-the-local-fake")
            started = time.time()
            # Six polls, one good and then one of each failure, whatever their pace (a loaded machine fitted only
            # five into an 8-second --duration).
            r = twin(self.out, "--interval", "0.5", "--polls", "6", "--timeout", "1", "--user", "root",
                     "--no-forecast", env=env, url=server.url, timeout=60)
            elapsed = time.time() - started
        finally:
            server.stop()
        print("\n  garbage: exit %d after %.1f s, requests %s" % (r.returncode, elapsed, server.served),
              file=sys.stderr)
        # Not killed by a signal, and six polls end in bounded time (the slowest, 3 tries x 1 s + 1.5 s backoff);
        # with --polls (not --once) the exit status is 0 even when polls failed.
        self.assertGreaterEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(elapsed, 30, "the twin ran %.1f s for six polls" % elapsed)
        failures = [line for line in r.stderr.splitlines() if "poll failed" in line]
        self.assertGreaterEqual(len(failures), 4, r.stderr)
        for line in failures:
            self.assertRegex(line, r"GET /slurm/v0\.0\.38/\w+", line)
        text = "\n".join(failures)
        for kind, pattern in [("HTML", r"(?i)html"), ("truncated JSON", r"(?i)json"), ("HTTP 500", r"HTTP 500"),
                              ("dropped connection", r"connection closed|connection dropped|Empty reply"),
                              ("slow reply", r"timed out")]:
            self.assertRegex(text, pattern, "no failure of kind %s in:\n%s" % (kind, text))
        # The results are written from the first good poll on; every later poll is recorded with its error.
        polls = query(self.out, "SELECT * FROM polls ORDER BY rowid")
        self.assertIsNone(polls[0]["error"], polls[0])
        errors = [p["error"] for p in polls if p["error"]]
        self.assertEqual(len(errors), len(failures), "polls table: %r" % polls)
        for e in errors:
            self.assertRegex(e, r"GET /slurm/v0\.0\.38/\w+")
        self.assertEqual(query(self.out, "SELECT value FROM twin_info WHERE key = 'polls'")[0]["value"], "1")

    def test_g_killed_slurmrestd(self):
        # slurmrestd goes away in the middle of a run: the polls after it fail (connection refused, named), the twin
        # keeps polling (until stopped) and keeps the results of the polls before; a twin started against a dead
        # slurmrestd stops at once with exit 1, naming the spec endpoint it tried.
        server = FakeSlurmrestd(cycle=["valid"])
        env = dict(os.environ, SLURM_JWT="fake-token-for-the-local-fake")
        proc = subprocess.Popen([GPUTWIN, "twin", "--slurmrestd", server.url, "--out", self.out, "--interval", "0.5",
                                 "--duration", "120", "--timeout", "1", "--user", "root", "--no-forecast"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            # Stop slurmrestd once two polls were served whole (4 requests each), then the twin (SIGTERM) once a poll
            # has failed: waits on what happened rather than on fixed sleeps, which a loaded machine outran.
            deadline = time.time() + 60
            while server.served.get("valid", 0) < 8 and time.time() < deadline and proc.poll() is None:
                time.sleep(0.05)
            server.stop()

            def failed_polls():
                return len(query_if_written(self.out, "SELECT 1 FROM polls WHERE error IS NOT NULL"))
            while failed_polls() < 1 and time.time() < deadline and proc.poll() is None:
                time.sleep(0.2)
            proc.terminate()
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        polls = query(self.out, "SELECT * FROM polls ORDER BY rowid")
        good = [p for p in polls if not p["error"]]
        bad = [p for p in polls if p["error"]]
        self.assertGreaterEqual(len(good), 2, "%r" % polls)
        self.assertGreaterEqual(len(bad), 1, "%r\n%s" % (polls, err))
        self.assertEqual(polls[:len(good)], good, "a good poll after a failed one: %r" % polls)
        for p in bad:
            self.assertRegex(p["error"], r"GET /slurm/v0\.0\.38/\w+: cannot connect")
        r = twin(os.path.join(self.tmp.name, "dead"), "--once", "--timeout", "1", "--user", "root", env=env,
                 url=server.url, timeout=30)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, r"cannot reach slurmrestd: GET /openapi/v3: cannot connect")
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "dead")))


class FakeSlurmrestd:
    """A local HTTP server: /openapi/v3 is 22.05's spec; the first diag, nodes, partitions and jobs are the recorded
    v0.0.38 replies; after them every /slurm/ request gets the next reply of a cycle of bad ones. Retried failures
    (500, dropped connection, timeout: the client tries a GET 3 times) are served 3 times in a row, so each poll
    fails in one way."""

    CYCLE = ["html"] + ["slow"] * 3 + ["truncated"] + ["500"] * 3 + ["drop"] * 3

    def __init__(self, slow_s=2.5, cycle=None):
        self.slow_s = slow_s
        self.cycle = cycle or self.CYCLE
        self.lock = threading.Lock()
        self.good = {"diag", "nodes", "partitions", "jobs"}
        self.step = 0
        self.served = {}
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # a connection per request: a dropped one is not retried by curl itself

            def log_message(self, *args):
                pass

            def reply(self, status, body, content_type="application/json", length=None):
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split("?")[0]
                if path == "/openapi/v3":
                    with open(OPENAPI, "rb") as f:
                        return self.reply(200, f.read())
                if not path.startswith("/slurm/v0.0.38/"):
                    return self.reply(404, "<html><body>404 Not Found</body></html>", "text/html")
                name = path.rsplit("/", 1)[1]
                with fake.lock:
                    if name in fake.good:
                        fake.good.discard(name)
                        mode = "valid"
                    else:
                        mode = fake.cycle[fake.step % len(fake.cycle)]
                        fake.step += 1
                    fake.served[mode] = fake.served.get(mode, 0) + 1
                example = os.path.join(EXAMPLES, name + ".json")
                try:
                    if mode == "valid":
                        with open(example, "rb") as f:
                            return self.reply(200, f.read())
                    if mode == "html":
                        return self.reply(200, "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>",
                                          "text/html")
                    if mode == "truncated":
                        with open(example, "rb") as f:
                            return self.reply(200, f.read()[:100])
                    if mode == "500":
                        return self.reply(500, "Internal Server Error", "text/plain")
                    if mode == "drop":
                        self.close_connection = True
                        return None
                    if mode == "slow":
                        time.sleep(fake.slow_s)
                        with open(example, "rb") as f:
                            return self.reply(200, f.read())
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                return None

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def main():
    global GPUTWIN
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print("usage: live_twin_test.py GPUTWIN [unittest options]", file=sys.stderr)
        return 2
    GPUTWIN = os.path.abspath(sys.argv[1])
    if not URL or not ROOT_JWT:
        print("live_twin_test: SLURMRESTD_URL or SLURM_JWT unset: skipped (start a cluster with "
              "../shared/slurmrestd/local-slurm.sh start and source its env file)", file=sys.stderr)
        return SKIP
    if not os.access(GPUTWIN, os.X_OK):
        print("live_twin_test: %s is not an executable" % GPUTWIN, file=sys.stderr)
        return 2
    started = time.time()
    try:
        program = unittest.main(argv=[sys.argv[0]] + sys.argv[2:], exit=False, verbosity=2)
    finally:
        cancel(SUBMITTED)
    print("live_twin_test: %.0f s" % (time.time() - started), file=sys.stderr)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
