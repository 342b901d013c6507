#!/usr/bin/env python3
"""Seed corpora and dictionaries of the fuzz targets (fuzz/), made from the repository's examples and tests and small
slices of ../shared (traces, recorded slurmrestd replies, the real Slurm recording). Nothing here is committed: it
is rebuilt into the build folder at every scripts/fuzz.sh run, except fuzz/seeds/ (hand-written HTTP requests and
inputs that once crashed a target), copied in as they are.

usage: make_seeds.py OUT_DIR SOURCE_DIR SHARED_DIR GPUTWIN_BINARY
"""
import base64
import hashlib
import hmac
import json
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

out, src, shared, gputwin = (pathlib.Path(a) for a in sys.argv[1:5])
MAX_SEED_BYTES = 16 * 1024  # larger JSON is trimmed to its first records; larger text to its first lines


def target_dir(target):
    d = out / "seeds" / target
    d.mkdir(parents=True, exist_ok=True)
    return d


def add(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    (target_dir(target) / name).write_bytes(data)


def add_file(target, path, name=None, lines=None):
    path = pathlib.Path(path)
    if not path.is_file():
        return  # ../shared is optional beside a bare clone
    data = path.read_bytes()
    if lines is not None:
        data = b"".join(data.splitlines(keepends=True)[:lines])
    add(target, name or path.name, data)


def trim_json(value, keep=2):
    """The same JSON with every array cut to its first `keep` elements and objects to 40 members."""
    if isinstance(value, list):
        return [trim_json(v, keep) for v in value[:keep]]
    if isinstance(value, dict):
        return {k: trim_json(v, keep) for k, v in list(value.items())[:40]}
    return value


def add_json(target, path, name=None):
    path = pathlib.Path(path)
    if not path.is_file():
        return
    data = path.read_bytes()
    if len(data) > MAX_SEED_BYTES:
        try:
            data = json.dumps(trim_json(json.loads(data)), indent=1).encode()
        except ValueError:
            data = data[:MAX_SEED_BYTES]
    add(target, name or path.name, data)


def tokens_dict(target, tokens):
    tokens = sorted({t for t in tokens if 0 < len(t) <= 40})
    with open(out / "dict" / f"{target}.dict", "w") as f:
        for t in tokens:
            f.write('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"\n')


def seed_texts(target):
    return [p.read_bytes().decode("utf-8", "replace") for p in target_dir(target).iterdir()]


shutil.rmtree(out / "seeds", ignore_errors=True)
(out / "dict").mkdir(parents=True, exist_ok=True)
acme = src / "tests/model/data/acme"
local = src / "tests/model/data/local-slurm"
recorded = shared / "slurmrestd/recorded"

# Scenarios, some with --set overrides after them.
for p in sorted((src / "scenarios").glob("*.json")) + sorted((src / "tests/golden").glob("*.json")):
    add_file("fuzz_scenario", p)
add_file("fuzz_scenario", acme / "acme.expected.json")
for name, over in [("quickstart.json", ["/scheduler/policy=easy", "/cluster/nodes/0/gpus=4"]),
                   ("fairshare_views.json", ["/scheduler/priority/PriorityWeightFairshare=20000", "/nope/x=1"])]:
    base = (src / "scenarios" / name) if (src / "scenarios" / name).is_file() else (src / "tests/golden" / name)
    add("fuzz_scenario", "set-" + name, base.read_text() + "".join("\n--set " + o for o in over))

# SWF traces: the golden one, and the first records of the archive's traces (MetaCentrum's has extra fields).
add_file("fuzz_swf", src / "tests/golden/four_nodes.swf")
add_file("fuzz_swf", shared / "traces/hpc2n-subset.swf", lines=120)
add_file("fuzz_swf", shared / "traces/metacentrum-wagap-2013.swf", lines=80)

# Job history as text and as JSON (sacct --json, slurmdb jobs of every recorded version).
for p in [acme / "sacct.txt", shared / "slurm-recordings/dev-1/sacct.txt", *sorted(local.glob("sacct*.txt"))]:
    add_file("fuzz_sacct_text", p, name=p.parent.name + "-" + p.name, lines=60)
add_json("fuzz_sacct_json", local / "sacct.json")
add_json("fuzz_sacct_json", local / "slurmdb-jobs.json")
for p in sorted(recorded.glob("*/*/slurmdb-job*.json")):
    add_json("fuzz_sacct_json", p, name=p.parts[-3] + "-" + p.parts[-2] + "-" + p.name)

# Slurm configuration files.
for p in [acme / "slurm.conf", acme / "nodes.conf", acme / "bad.conf", local / "slurm.conf",
          shared / "slurm-recordings/dev-1/slurm.conf"]:
    add_file("fuzz_slurm_conf", p, name=p.parent.name + "-" + p.name)
add("fuzz_slurm_conf", "include.conf", "ClusterName=fuzz\nInclude nodes.conf\nPartitionName=p Nodes=ALL Default=YES\n")
for p in [acme / "gres.conf", local / "gres.conf"]:
    add_file("fuzz_gres_conf", p, name=p.parent.name + "-" + p.name)
for p in [acme / "assoc.cfg", acme / "qos.txt", local / "sacctmgr-dump.cfg", local / "qos.txt",
          shared / "slurm-recordings/dev-1/assoc.txt"]:
    add_file("fuzz_sacctmgr", p, name=p.parent.name + "-" + p.name)
for p in [acme / "topology.conf", acme / "topology.expected.conf"]:
    add_file("fuzz_topology_conf", p)
add("fuzz_topology_conf", "blocks.conf", "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,4\n")
for p in [acme / "topology.yaml", src / "tests/model/data/topology/slurm-example.yaml"]:
    add_file("fuzz_topology_yaml", p)

# slurmrestd replies of every recorded version, trimmed.
for p in sorted(recorded.glob("*/*/*.json")):
    add_json("fuzz_rest_reply", p, name=p.parts[-3] + "-" + p.parts[-2] + "-" + p.name)
openapi = recorded / "25.11/openapi-v3.json"
if openapi.is_file():
    spec = json.loads(openapi.read_bytes())
    paths = {k: {m: {} for m in v} for k, v in spec.get("paths", {}).items() if "/v0.0.4" in k}
    add("fuzz_rest_reply", "openapi-v3-paths.json", json.dumps({"openapi": spec.get("openapi"), "paths": paths}))

# Fidelity recordings' result.json: the repository's (tests/fidelity/recordings) and ../shared's dev-1.
for p in sorted((src / "tests/fidelity/recordings").glob("*/replica-1/result.json")) + \
        sorted((shared / "slurm-recordings").glob("*/result.json")):
    add("fuzz_recording", p.parts[-3] + "-" + p.parts[-2] + ".json", p.read_bytes())

# Results folders: small runs written by this build's gputwin, as database files (small pages, vacuumed) and as SQL.
hand_made = re.search(r'R"sql\((.*?)\)sql"', (src / "tests/ui/hand_made_database.hpp").read_text(), re.S).group(1)
# The stamp write_results puts on a results database (results/results_db.hpp); readers refuse one without it.
results_db_hpp = (src / "results/results_db.hpp").read_text()
stamp = "PRAGMA application_id = {}; PRAGMA user_version = {};".format(
    int(re.search(r"kResultsApplicationId = (0x[0-9a-fA-F]+|[0-9]+);", results_db_hpp).group(1), 0),
    int(re.search(r"kResultsSchemaVersion = ([0-9]+);", results_db_hpp).group(1)))
add("fuzz_results_sql", "hand_made.sql", hand_made)
with tempfile.TemporaryDirectory() as tmp:
    runs = {"hand_made": None, "four_nodes_slurm": src / "tests/golden/four_nodes_slurm.json",
            "four_nodes_conservative": src / "tests/golden/four_nodes_conservative.json"}
    for name, scenario in runs.items():
        folder = pathlib.Path(tmp) / name
        if scenario is None:
            folder.mkdir()
            sqlite3.connect(folder / "results.sqlite").executescript(stamp + hand_made).close()
        else:
            subprocess.run([str(gputwin), "run", str(scenario), "--quiet", "--out", str(folder)], check=True,
                           stdout=subprocess.DEVNULL)
        db = sqlite3.connect(folder / "results.sqlite")
        if scenario is not None:
            add("fuzz_results_sql", name + ".sql", "\n".join(db.iterdump()))
        db.executescript("PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;")
        db.close()
        add("fuzz_results_db", name + ".sqlite", (folder / "results.sqlite").read_bytes())


# HTTP requests (fuzz/http_input.hpp): dashboard, and slurmrestd-compatible API with and without tokens.
def jwt(user, key=b"fuzz-jwt-key-of-thirty-two-bytes", exp=4102444800):
    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"exp": exp, "iat": 1700000000, "sun": user}).encode())
    sig = b64(hmac.new(key, (head + "." + body).encode(), hashlib.sha256).digest())
    return head + "." + body + "." + sig


requests = {
    "fuzz_dashboard_http": [
        "GET /api/info", "GET /api/overview?t=150", "GET /api/jobs?t=150&filter=pending&sort=priority&order=desc",
        "GET /api/jobs?search=train&user=alice&offset=1&limit=2", "GET /api/jobs/2?t=120", "GET /api/nodes?filter=xid",
        "GET /api/nodes?gpu=false&t=130", "GET /api/nodes/n1/gpus?from=0&to=300&points=5",
        "GET /api/series/cluster?from=0&to=500&points=3", "GET /api/events?t=500&limit=3&kind=node&format=text",
        "GET /api/waits?t=500&points=4", "GET /api/costs?scope=idle&from=0&to=200&points=2",
        "GET /api/gantt?from=0&to=500&node_from=0&node_to=2&width=100&height=40",
        "GET /metrics?t=150&labels=snake", "GET /", "GET /assets/app.js", "GET /../secret.txt",
        "GET /assets/%2e%2e/%2e%2e/secret.txt", "POST /api/jobs\nContent-Type: application/json\n\n{}",
        "HEAD /api/info\nAccept: */*\n\n"],
    "fuzz_slurmrestd_http": [
        "GET /slurm/v0.0.44/jobs", "GET /slurm/v0.0.41/job/4", "GET /slurm/v0.0.42/nodes", "GET /slurm/v0.0.43/node/n2",
        "GET /slurm/v0.0.44/partitions", "GET /slurm/v0.0.44/partition/gpu", "GET /slurm/v0.0.44/ping",
        "GET /slurm/v0.0.44/diag", "GET /slurm/v0.0.44/reservations",
        "GET /slurmdb/v0.0.44/jobs?start_time=0&end_time=1767226000", "GET /slurmdb/v0.0.42/job/2",
        "GET /slurmdb/v0.0.44/qos", "GET /slurmdb/v0.0.43/accounts", "GET /slurmdb/v0.0.41/associations",
        "POST /slurm/v0.0.44/job/submit\nContent-Type: application/json\n\n{\"job\":{}}",
        "GET /slurm/v0.0.44/jobs\nX-SLURM-USER-NAME: alice\nX-SLURM-USER-TOKEN: " + jwt("alice") + "\n\n",
        "GET /slurmdb/v0.0.44/jobs\nX-SLURM-USER-NAME: bob\nX-SLURM-USER-TOKEN: " + jwt("root") + "\n\n",
        "GET /slurm/v0.0.44/nodes\nX-SLURM-USER-NAME: alice\nX-SLURM-USER-TOKEN: " + jwt("alice", b"another key") +
        "\n\n", "GET /slurm/v0.0.44/ping\nX-SLURM-USER-TOKEN: " + jwt("alice", exp=1) + "\n\n"],
}
for target, lines in requests.items():
    for i, text in enumerate(lines):
        add(target, f"request-{i:02}.txt", text)

# Inputs that once crashed a target (and hand-written extras), committed under fuzz/seeds/<target>/.
for d in sorted((src / "fuzz/seeds").glob("*")):
    if d.is_dir():
        for p in d.iterdir():
            add_file(d.name, p)

# Dictionaries: the tokens of each target's seeds (JSON strings and keys, Key= names, paths and parameters).
for target in [d.name for d in (out / "seeds").iterdir()]:
    texts = seed_texts(target)
    tokens = set()
    for t in texts:
        tokens.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_./-]*)"', t))
        tokens.update(m + "=" for m in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", t))
        tokens.update(re.findall(r"/[a-z_]+", t))
        tokens.update(re.findall(r"\b[A-Z_]{3,}\b", t))
    tokens_dict(target, tokens)
print(f"make_seeds: {sum(1 for _ in (out / 'seeds').rglob('*') if _.is_file())} seeds for "
      f"{len(list((out / 'seeds').iterdir()))} targets in {out}")
