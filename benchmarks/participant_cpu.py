"""CPU per participant unit (the unit page, the answer, the way to the next unit's page), in
one process, on PostgreSQL.

    python benchmarks/participant_cpu.py [--tuples 2000] [--units 600] [--db helper_launch]
                                         [--profile N] [--show-statements]

The launch of benchmarks/queue.py --mode launch without its sockets and threads: the
project is the same (BWS, T = 4, cap 2, a participants block with consent, instructions and
a quota of --quota units), and each participant is a browser with its own cookie jar,
entering by the link, ticking the consent box, reading the instructions, then for each unit
GETting the unit page, POSTing a best and a worst with the page's CSRF token and client id,
and following the redirects to the next unit's page (or the completion page). The WSGI
application is called directly, as gunicorn calls it (DEBUG off, Server-Timing off), one
request at a time, the participants taking turns. After an unmeasured warm-up it prints:

  - requests per unit, and the share of each kind (unit page, answer, redirect hops);
  - web CPU ms per unit: this process's CPU time (time.process_time), the part gunicorn's
    workers spend (no HTTP parsing);
  - PostgreSQL CPU ms per unit: the CPU time of this connection's server process (/proc);
  - SQL statements per unit and per request kind (counted in a separate pass).

Bounded: --units units measured, an address-space limit of 2 GB, 127.0.0.1 only.
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
import http.cookies
import random
import resource
import tempfile
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.cpu_accounting import proc_cpu
from benchmarks.queue_launch import (
    CSRF_INPUT,
    LAUNCH_SLUG,
    SAVED,
    answer_form,
    write_launch_project,
)
from benchmarks.queue_setup import drop_and_create, wsgi_environ

CPU_BY_KIND: dict[str, float] = defaultdict(float)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuples", type=int, default=2000)
    parser.add_argument("--units", type=int, default=600, help="units measured")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--quota", type=int, default=20, help="units_per_participant")
    parser.add_argument("--participants", type=int, default=40, help="at once, taking turns")
    parser.add_argument("--db", default="helper_launch")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N functions")
    parser.add_argument("--callees", default="", help="with --profile: what these functions call")
    parser.add_argument("--show-statements", action="store_true")
    return parser.parse_args()


class Browser:
    """One participant's browser: a cookie jar, and the WSGI application called as a server
    would call it."""

    def __init__(self, app):
        self.app = app
        self.cookies: dict[str, str] = {}

    def request(self, method: str, url: str, form: dict | None = None):
        parts = urllib.parse.urlsplit(url)
        body = urllib.parse.urlencode(form).encode() if form is not None else b""
        environ = wsgi_environ(method, parts.path, parts.query, body, HTTP_ACCEPT="text/html")
        if form is not None:
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
        if self.cookies:
            environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        seen = {}

        def start_response(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers

        response = self.app(environ, start_response)
        try:
            content = b"".join(response)
        finally:
            response.close()
        location = None
        for name, value in seen["headers"]:
            if name.lower() == "set-cookie":
                for key, morsel in http.cookies.SimpleCookie(value).items():
                    if morsel.get("max-age") == "0" or morsel.value == "":
                        self.cookies.pop(key, None)
                    else:
                        self.cookies[key] = morsel.value
            elif name.lower() == "location":
                location = value
        return int(seen["status"].split()[0]), location, content.decode()


class Participant:
    """Where one participant is: the page in front of them."""

    def __init__(self, app, slug: str, pid: str, rng: random.Random, kinds: Counter):
        self.browser = Browser(app)
        self.slug, self.pid, self.rng, self.kinds = slug, pid, rng, kinds
        self.path, self.page = "", ""
        self.saved = 0
        self.units = 0

    def go(self, method, url, form=None, kind="hop", expect=(200, 302)):
        start = time.process_time()
        status, location, page = self.browser.request(method, url, form)
        CPU_BY_KIND[kind] += time.process_time() - start
        self.kinds[kind] += 1
        if status not in expect:
            raise RuntimeError(f"{self.pid} {method} {url}: {status} {page[:300]!r}")
        return status, location, page

    def follow(self, location, kind="hop"):
        for _ in range(6):
            path = urllib.parse.urlsplit(location).path
            status, location, page = self.go("GET", path, kind=kind)
            if status == 200:
                self.path, self.page = path, page
                return
        raise RuntimeError(f"too many redirects to {location}")

    def enter(self):
        slug = self.slug
        _, location, _ = self.go("GET", f"/p/{slug}/start?PROLIFIC_PID={self.pid}", kind="entry")
        self.follow(location, "entry")  # the consent page
        token = CSRF_INPUT.search(self.page).group(1)
        _, location, _ = self.go(
            "POST", self.path, {"csrfmiddlewaretoken": token, "agree": "yes"}, kind="entry"
        )
        self.follow(location, "entry")  # the instructions
        if "/instructions/" in self.path:
            self.follow(f"/p/{slug}/", "entry")
        # The unit page the first time: then each unit is the answer, the way to the next
        # unit's page and that page.
        if "/annotate/" not in self.path:
            raise RuntimeError(f"{self.pid}: no unit page after the entry but {self.path}")

    @property
    def working(self) -> bool:
        return "/annotate/" in self.path

    def unit(self):
        """Answers the unit in front of them and goes on to the next page."""
        action, form = answer_form(self.page, self.path, self.rng)
        form["time_taken_ms"] = str(self.rng.randint(2000, 5000))
        _, location, _ = self.go("POST", action, form, kind="answer", expect=(302,))
        for _ in range(6):
            path = urllib.parse.urlsplit(location).path
            kind = "unit page" if "/annotate/" in path or path.endswith("/done/") else "hop"
            status, location, page = self.go("GET", path, kind=kind)
            if status == 200:
                self.path, self.page = path, page
                break
        else:
            raise RuntimeError(f"too many redirects to {location}")
        if not SAVED.search(self.page):
            raise RuntimeError(f"{self.pid}: no 'Saved.' after an answer, on {self.path}")
        self.units += 1


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
        # One connection for the whole run, so its server process's CPU is all counted.
        DB_CONN_MAX_AGE="3600",
        # every simulated participant enters from 127.0.0.1: the entry rate limit is off
        PARTICIPANT_ENTRY_RATE="0/1m",
    )
    os.environ.pop("REDIS_URL", None)
    drop_and_create(f"{args.pg}/postgres", args.db)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from config.wsgi import application
    from projects.services import import_project

    folder = Path(tempfile.mkdtemp(prefix="participant-cpu-"))
    config = write_launch_project(folder, args.tuples, args.quota)
    slug = LAUNCH_SLUG
    import_project(config_path=config, slug=slug)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    rng = random.Random(14)
    kinds: Counter = Counter()
    made = 0

    def newcomer() -> Participant:
        nonlocal made
        made += 1
        person = Participant(application, slug, f"cpu{made:05d}", random.Random(made), kinds)
        person.enter()
        return person

    # Everyone enters before the measuring (entries are not units): those taking turns,
    # and those who replace them when they finish their quota.
    needed = -(-(args.warmup + args.units) // args.quota) + args.participants + 1
    waiting = [newcomer() for _ in range(needed)]
    crowd = [waiting.pop() for _ in range(args.participants)]

    def run(n: int) -> int:
        """n units, the crowd taking turns; one who finished is replaced by a newcomer."""
        done = 0
        while done < n:
            i = rng.randrange(len(crowd))
            person = crowd[i]
            person.unit()
            done += 1
            if not person.working:
                if "/done/" not in person.path:
                    raise RuntimeError(f"{person.pid} ended on {person.path}")
                crowd[i] = waiting.pop()
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
    kinds.clear()
    CPU_BY_KIND.clear()
    pg0, cpu0, wall0 = proc_cpu(pid), time.process_time(), time.perf_counter()
    done = run(args.units)
    cpu, wall, pg = (
        time.process_time() - cpu0,
        time.perf_counter() - wall0,
        proc_cpu(pid) - pg0,
    )
    if profiler is not None:
        import pstats

        profiler.disable()
        stats = pstats.Stats(profiler).sort_stats("cumulative")
        stats.print_stats(args.profile)
        if args.callees:
            stats.print_callees(args.callees)
    measured = dict(kinds)
    cpu_by_kind = dict(CPU_BY_KIND)

    # Statements per request kind, in a pass of its own (counting costs CPU itself).
    statements: dict[str, int] = defaultdict(int)
    requests: Counter = Counter()
    current = {"kind": ""}
    original_go = Participant.go

    def counted_go(self, method, url, form=None, kind="hop", expect=(200, 302)):
        current["kind"] = kind
        requests[kind] += 1
        return original_go(self, method, url, form, kind, expect)

    def count(execute, sql, params, many, context):
        statements[current["kind"]] += 1
        if args.show_statements and requests[current["kind"]] <= 1:
            print(f"  {current['kind']}: {sql[:160]}")
        return execute(sql, params, many, context)

    Participant.go = counted_go
    with connection.execute_wrapper(count):
        person = waiting.pop()
        requests.clear()
        statements.clear()
        units = 0
        while person.working and units < 10:
            person.unit()
            units += 1
    Participant.go = original_go

    load = os.getloadavg()[0]
    per_unit = sum(measured.get(k, 0) for k in ("unit page", "answer", "hop")) / done
    print(
        f"units {done} (tuples {args.tuples}, quota {args.quota}, {args.participants} "
        f"participants taking turns), wall {wall:.1f} s, load average {load:.2f}"
    )
    print(
        f"requests per unit {per_unit:.2f}: "
        + ", ".join(f"{k} {v / done:.2f}" for k, v in sorted(measured.items()))
    )
    print(
        f"CPU ms per unit: web {cpu / done * 1000:.2f}, PostgreSQL {pg / done * 1000:.2f}, "
        f"together {(cpu + pg) / done * 1000:.2f}"
    )
    print(
        "web CPU ms per unit by request kind: "
        + ", ".join(f"{k} {v / done * 1000:.2f}" for k, v in sorted(cpu_by_kind.items()))
    )
    print(
        f"SQL statements per unit {sum(statements.values()) / units:.1f} ("
        + ", ".join(
            f"{k} {statements[k] / requests[k]:.1f} x {requests[k] / units:.2f}"
            for k in sorted(requests)
        )
        + ")"
    )


if __name__ == "__main__":
    main()
