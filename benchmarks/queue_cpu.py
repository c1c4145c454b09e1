"""CPU per next+submit pair of the REST queue, in one process, on PostgreSQL.

    python benchmarks/queue_cpu.py [--tuples 2000] [--pairs 600] [--db helper_sat] [--profile N]

The WSGI application is called directly (as gunicorn calls it: an environ in, the response
iterated and closed), one request at a time, for annotators taking turns: POST queue/next/,
then POST annotations/ with a best and a worst. The project is benchmarks/queue.py's (BWS,
T = 4, r = 8, cap 2, least_annotated), on a database of its own that is dropped and made
again (DEBUG off, Server-Timing off). What it prints, per pair, after an unmeasured warm-up:

  - web CPU ms: this process's CPU time (time.process_time) over the measured pairs: the
    middleware, DRF, the views, the ORM and the driver, the part gunicorn's workers spend;
  - PostgreSQL CPU ms: the CPU time of this connection's server process (/proc, by
    pg_backend_pid()), so other people's queries on the same server are not counted;
  - SQL statements per next and per submit (counted in a separate pass, since counting
    costs a little CPU itself).

No HTTP parsing and no sockets: gunicorn's own share is not in it, nor is a load
generator's. Bounded: --pairs requests pairs, an address-space limit of 2 GB, 127.0.0.1
only. --profile N prints cProfile's top N functions (cumulative) of the measured loop.
"""

# ruff: noqa: E402  (the environment is set before Django is imported)
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
ROOT = os.path.dirname(_HERE)
sys.path.insert(0, ROOT)

import argparse
import json
import random
import resource
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.cpu_accounting import proc_cpu
from benchmarks.queue_setup import drop_and_create, write_project, wsgi_environ


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuples", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--db", default="helper_sat")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--show-statements", action="store_true")
    return parser.parse_args()


class Caller:
    """Calls the WSGI application as a server would, with one annotator's token."""

    def __init__(self, app, key: str):
        self.app = app
        self.auth = f"Token {key}"

    def post(self, path: str, body: bytes = b"", content_type: str = "") -> tuple[int, bytes]:
        environ = wsgi_environ(
            "POST", path, body=body, HTTP_AUTHORIZATION=self.auth, HTTP_ACCEPT="application/json"
        )
        if content_type:
            environ["CONTENT_TYPE"] = content_type
        status = []
        response = self.app(environ, lambda s, headers, exc_info=None: status.append(s))
        try:
            content = b"".join(response)
        finally:
            response.close()
        return int(status[0].split()[0]), content


def pair(caller: Caller, slug: str, rng: random.Random) -> bool:
    code, body = caller.post(f"/api/v1/projects/{slug}/queue/next/")
    if code == 204:
        return False
    if code != 200:
        raise RuntimeError(f"next: {code} {body[:300]!r}")
    unit = json.loads(body)
    best, worst = rng.sample([item["id"] for item in unit["items"]], 2)
    answer = {
        "unit": unit["id"],
        "annotations": {"quality": {"best": best, "worst": worst}},
        "client_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }
    code, body = caller.post(
        f"/api/v1/projects/{slug}/annotations/", json.dumps(answer).encode(), "application/json"
    )
    if code != 201:
        raise RuntimeError(f"submit: {code} {body[:300]!r}")
    return True


def main() -> None:
    args = parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"{args.pg}/{args.db}",
        DEBUG="0",
        SECRET_KEY="benchmark-only-" + os.urandom(24).hex(),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SERVER_TIMING="0",
    )
    os.environ.pop("REDIS_URL", None)
    drop_and_create(f"{args.pg}/postgres", args.db)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)

    from django.contrib.auth import get_user_model

    from config.wsgi import application
    from labs.tokens import issue_token
    from projects.models import Membership
    from projects.services import import_project

    folder = Path(tempfile.mkdtemp(prefix="queue-cpu-"))
    project = import_project(config_path=write_project(folder, args.tuples), slug="cpu").project
    users = [
        get_user_model().objects.create_user(f"cpu{n}", password=None)
        for n in range(args.annotators)
    ]
    for user in users:
        Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    callers = [Caller(application, issue_token(user=user)[1]) for user in users]
    rng = random.Random(14)

    def run(n: int) -> int:
        done = 0
        for i in range(n):
            done += pair(callers[i % len(callers)], "cpu", rng)
        return done

    run(args.warmup)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
    pg0, cpu0, wall0 = proc_cpu(pid), time.process_time(), time.perf_counter()
    done = run(args.pairs)
    cpu, wall, pg = (
        time.process_time() - cpu0,
        time.perf_counter() - wall0,
        proc_cpu(pid) - pg0,
    )
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(
            args.profile
        )

    counts = {"next": 0, "submit": 0}
    kinds = []

    def count(execute, sql, params, many, context):
        counts[kinds[-1]] += 1
        if args.show_statements and len(kinds) <= 2:
            print(f"  {kinds[-1]}: {sql[:150]}")
        return execute(sql, params, many, context)

    caller = callers[0]
    with connection.execute_wrapper(count):
        for _ in range(20):
            kinds.append("next")
            code, body = caller.post("/api/v1/projects/cpu/queue/next/")
            unit = json.loads(body)
            kinds.append("submit")
            best, worst = rng.sample([item["id"] for item in unit["items"]], 2)
            caller.post(
                "/api/v1/projects/cpu/annotations/",
                json.dumps(
                    {
                        "unit": unit["id"],
                        "annotations": {"quality": {"best": best, "worst": worst}},
                        "client_id": str(uuid.uuid4()),
                    }
                ).encode(),
                "application/json",
            )
    load = os.getloadavg()[0]
    print(
        f"pairs {done} of {args.pairs} (tuples {args.tuples}, annotators {args.annotators}), "
        f"wall {wall:.1f} s, load average {load:.2f}"
    )
    print(
        f"CPU ms per pair: web {cpu / done * 1000:.2f}, PostgreSQL {pg / done * 1000:.2f}, "
        f"together {(cpu + pg) / done * 1000:.2f}"
    )
    print(
        f"SQL statements per next {counts['next'] / 20:.1f}, per submit {counts['submit'] / 20:.1f}"
    )


if __name__ == "__main__":
    main()
