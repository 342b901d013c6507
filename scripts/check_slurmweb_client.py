#!/usr/bin/env python3
"""Slurm-web's own slurmrestd client against gputwin's slurmrestd-compatible API.

Loads rackslab/Slurm-web's `slurmweb/slurmrestd/` package from a checkout (its code, unchanged), forces each API
version it supports in turn (0.0.44, 0.0.43, 0.0.42, 0.0.41; its adaptation chain brings older replies up to its
newest), authenticates with a JWT it mints from the key file as its agent does (jwt_mode auto), applies the field
filters of its agent.yml, and calls every method its agent and metrics collector use. Prints one line per call and
exits 1 if any raised.

    /usr/bin/python3 scripts/check_slurmweb_client.py SLURMWEB_CHECKOUT URL KEY_FILE [JOB_RUNNING JOB_PENDING NODE]

Needs Debian's python3-requests, python3-clustershell, python3-yaml and python3-redis. RFL (Rackslab's library,
not packaged for Debian) is replaced by the few lines Slurm-web uses of it: an HS256 token with iat, exp and sun,
as RFL's JWTBaseManager.generate() makes it.
"""
import base64
import hashlib
import hmac
import json
import sys
import time
import types
import urllib.parse
from pathlib import Path

import yaml


def install_rfl_shim():
    """rfl.authentication.jwt and rfl.authentication.errors as Slurm-web's slurmrestd/auth.py uses them."""

    class JWTDecodeError(Exception):
        pass

    class JWTPrivateKeyLoaderError(Exception):
        pass

    class JWTPrivateKeyFileLoader:
        def __init__(self, path):
            try:
                self.key = Path(path).read_bytes()
            except OSError as err:
                raise JWTPrivateKeyLoaderError(str(err)) from err

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    class JWTBaseManager:
        def __init__(self, algorithm, loader):
            assert algorithm == "HS256"
            self.key = loader.key

        def generate(self, duration, claimset):
            now = int(time.time())
            payload = {"iat": now, "exp": now + int(duration * 86400), **claimset}
            head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
            body = b64(json.dumps(payload).encode())
            sig = hmac.new(self.key, f"{head}.{body}".encode(), hashlib.sha256).digest()
            return f"{head}.{body}.{b64(sig)}"

    def jwt_validate_expiration(token):
        raise JWTDecodeError("static tokens are not used by this check")

    rfl = types.ModuleType("rfl")
    authentication = types.ModuleType("rfl.authentication")
    jwt = types.ModuleType("rfl.authentication.jwt")
    errors = types.ModuleType("rfl.authentication.errors")
    settings = types.ModuleType("rfl.settings")
    jwt.JWTBaseManager = JWTBaseManager
    jwt.JWTPrivateKeyFileLoader = JWTPrivateKeyFileLoader
    jwt.jwt_validate_expiration = jwt_validate_expiration
    errors.JWTDecodeError = JWTDecodeError
    errors.JWTPrivateKeyLoaderError = JWTPrivateKeyLoaderError
    settings.RuntimeSettings = object
    for name, module in {
        "rfl": rfl,
        "rfl.authentication": authentication,
        "rfl.authentication.jwt": jwt,
        "rfl.authentication.errors": errors,
        "rfl.settings": settings,
    }.items():
        sys.modules[name] = module


def main():
    if len(sys.argv) not in (4, 7):
        print(__doc__, file=sys.stderr)
        return 2
    checkout, url, key_file = sys.argv[1:4]
    install_rfl_shim()
    sys.path.insert(0, checkout)
    from slurmweb.slurmrestd import SlurmrestdFiltered
    from slurmweb.slurmrestd.auth import SlurmrestdAuthentifier
    from slurmweb.slurmrestd.errors import SlurmrestdNotFoundError

    defaults = yaml.safe_load(Path(checkout, "conf/vendor/agent.yml").read_text())["filters"]
    filters = types.SimpleNamespace(**{name: spec["default"] for name, spec in defaults.items()})
    failures = 0
    for version in ("0.0.44", "0.0.43", "0.0.42", "0.0.41"):
        auth = SlurmrestdAuthentifier("jwt", "auto", "slurm", Path(key_file), 3600, None)
        client = SlurmrestdFiltered(urllib.parse.urlparse(url), auth, [version], filters)
        cluster, release, api = client.discover()
        print(f"{version}: discovered cluster {cluster}, Slurm {release}, API {api}")
        jobs = client.jobs()
        nodes = client.nodes()
        running = sys.argv[4] if len(sys.argv) == 7 else next(j["job_id"] for j in jobs if "RUNNING" in j["job_state"])
        pending = sys.argv[5] if len(sys.argv) == 7 else next(j["job_id"] for j in jobs if "PENDING" in j["job_state"])
        node = sys.argv[6] if len(sys.argv) == 7 else nodes[0]["name"]
        calls = {
            "jobs": lambda: len(jobs),
            "nodes": lambda: len(nodes),
            f"job({running}) running": lambda: client.job(int(running))["state"],
            f"job({pending}) pending": lambda: client.job(int(pending))["state"],
            f"node({node})": lambda: client.node(node)["state"],
            "partitions": lambda: len(client.partitions()),
            "accounts": lambda: len(client.accounts()),
            "associations": lambda: len(client.associations()),
            "reservations": lambda: len(client.reservations()),
            "qos": lambda: len(client.qos()),
            "jobs_states": lambda: client.jobs_states()[0],
            "resources_states": lambda: client.resources_states()[0],
            f"jobs_by_node({node})": lambda: len(client.jobs_by_node(node)),
        }
        for name, call in calls.items():
            try:
                print(f"  ok   {name}: {call()}")
            except Exception as err:  # noqa: BLE001 - any error is a failure to report
                failures += 1
                print(f"  FAIL {name}: {type(err).__name__}: {err}")
        # An unknown job is a NotFound error to Slurm-web's agent (404), not a crash.
        try:
            client.job(999999999)
            failures += 1
            print("  FAIL job(999999999) found")
        except SlurmrestdNotFoundError:
            print("  ok   job(999999999): SlurmrestdNotFoundError")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
