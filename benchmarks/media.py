"""Media at no cost per request: a 45 MB ASCII point cloud served to bursts of twelve
parallel requests (one a second) while another lab's annotator loads pages.

    python benchmarks/media.py [--cloud-mb 45] [--parallel 12] [--seconds 30] [--proxy both]

One bench database (dropped and made again), two labs: lab A's project names a stored ASCII
PCD cloud of --cloud-mb MB, lab B's is the queue benchmark's BWS project. gunicorn runs as
platform/gunicorn.conf.py configures it (4 workers x 2 threads), alone ("bare": Django
sends the decoded points itself) and behind nginx configured by platform/nginx
("proxy": Django checks access and answers X-Accel-Redirect, nginx sends the file).
For each: lab B's annotate page, one request at a time, idle and then while --parallel
clients of lab A fetch the cloud's points together, a burst every --interval seconds;
the page's median under load over its idle median; and the web CPU (gunicorn, and nginx
behind the proxy) per points request, from a run of points requests alone. Also printed
once: what decoding the cloud costs, which every request paid before clouds were decoded
at import. Figures only.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, where benchmarks/queue.py
# would shadow the standard library's queue module: drop it, add the repository instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402

from benchmarks import queue_setup  # noqa: E402
from benchmarks.cpu_accounting import proc_cpu  # noqa: E402
from benchmarks.proxy import Proxy  # noqa: E402
from benchmarks.queue_setup import (  # noqa: E402
    PASSWORD,
    Server,
    base_env,
    manage,
    recreate_database,
    write_project,
)
from projects.pointclouds import read_points  # noqa: E402

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CLOUD_CONFIG = """annotation_task_name: "Lidar scenes"
task_dir: "."
data_files: [data.jsonl]
annotation_schemes:
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car]}
user_config:
  allow_all_users: false
"""


def write_cloud_project(folder: Path, megabytes: float) -> Path:
    """An ASCII PCD of about ``megabytes`` MB (x y z intensity, 30 bytes a line)."""
    folder.mkdir(parents=True)
    n = int(megabytes * 1024 * 1024 / 30)
    rng = np.random.default_rng(5)
    table = np.column_stack(
        [rng.uniform(-60, 60, n), rng.uniform(-60, 60, n), rng.uniform(-2, 4, n), rng.random(n)]
    )
    header = (
        "# .PCD v0.7\nVERSION 0.7\nFIELDS x y z intensity\nSIZE 4 4 4 4\nTYPE F F F F\n"
        f"COUNT 1 1 1 1\nWIDTH {n}\nHEIGHT 1\nPOINTS {n}\nDATA ascii\n"
    )
    with open(folder / "scan.pcd", "w") as out:
        out.write(header)
        np.savetxt(out, table, fmt="%.4f %.4f %.4f %.3f")
    row = '{"id": "scene0", "text": "Scene", "pointcloud": "scan.pcd"}\n'
    (folder / "data.jsonl").write_text(row)
    (folder / "config.yaml").write_text(CLOUD_CONFIG)
    return folder / "config.yaml"


class Session:
    """A browser's session: logged in through the login form, one keep-alive connection."""

    def __init__(self, port: int, username: str):
        self.port, self.cookies = port, {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.resets = 0
        page = self.get("/accounts/login/")[1].decode()
        form = {"username": username, "password": PASSWORD}
        form["csrfmiddlewaretoken"] = CSRF.search(page).group(1)
        status, _ = self.request("POST", "/accounts/login/", urllib.parse.urlencode(form))
        if status != 302:
            raise RuntimeError(f"login {username}: {status}")

    def request(self, method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Referer"] = f"http://127.0.0.1:{self.port}/accounts/login/"
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.resets += 1
                if attempt:
                    raise
        if response.will_close:
            self.conn.close()
        self.location = response.getheader("Location")
        for header in response.headers.get_all("Set-Cookie") or []:
            name, value = header.split(";", 1)[0].split("=", 1)
            self.cookies[name] = value
        return response.status, data

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request("GET", path)


def page_times(session: Session, path: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        status, _ = session.get(path)
        times.append((time.perf_counter() - t0) * 1000)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
    return times


def fetch_bursts(session, path, ticks, done: list, size: int) -> None:
    """One request at each tick (a monotonic time): with one such thread per session, the
    sessions ask together, a burst of parallel requests per tick."""
    for tick in ticks:
        time.sleep(max(0.0, tick - time.monotonic()))
        t0 = time.perf_counter()
        status, data = session.get(path)
        if status != 200 or len(data) != size:
            done.append(f"GET {path}: {status}, {len(data)} bytes")
            return
        done.append((time.perf_counter() - t0) * 1000)


def measure(args, env: dict, proxied: bool) -> dict:
    server = Server(args, env)
    proxy = None
    try:
        server.wait_ready()
        port = args.port
        if proxied:
            proxy = Proxy(args.proxy_port, f"127.0.0.1:{args.port}", args.static, args.files)
            proxy.wait_ready()
            port = args.proxy_port
        page = "/projects/lab-b-study/annotate/"
        points = "/projects/lab-a-lidar/points/scan.pcd"
        reader = Session(port, "bee")
        status, _ = reader.get(page)
        if status == 302:  # the annotate page sends to the unit handed out
            page = reader.location
        page_times(reader, page, 20)  # warm-up
        idle = page_times(reader, page, args.pages)
        fetchers = [Session(port, "ann") for _ in range(args.parallel)]
        status, body = fetchers[0].get(points)
        if status != 200:
            raise RuntimeError(f"GET {points}: {status}")
        size = len(body)
        # Web CPU per points request: points requests alone, one client after another.
        pids = server.pids() + (proxy.pids() if proxy else [])
        before = sum(proc_cpu(p) for p in pids)
        for _ in range(args.cpu_requests):
            fetchers[0].get(points)
        web_ms = (sum(proc_cpu(p) for p in pids) - before) / args.cpu_requests * 1000
        gunicorn_ms = None
        if proxy:
            gun = server.pids()
            before_g = sum(proc_cpu(p) for p in gun)
            for _ in range(args.cpu_requests):
                fetchers[0].get(points)
            gunicorn_ms = (sum(proc_cpu(p) for p in gun) - before_g) / args.cpu_requests * 1000
        done: list = []
        start = time.monotonic() + 1.0
        ticks = [start + i * args.interval for i in range(int(args.seconds / args.interval))]
        threads = [
            threading.Thread(target=fetch_bursts, args=(f, points, ticks, done, size), daemon=True)
            for f in fetchers
        ]
        load_before = os.getloadavg()[0]
        for thread in threads:
            thread.start()
        time.sleep(max(0.0, start - time.monotonic()))
        busy = []
        while any(thread.is_alive() for thread in threads):
            busy += page_times(reader, page, 1)
        for thread in threads:
            thread.join(timeout=60)
        errors = [d for d in done if isinstance(d, str)]
        fetched = [d for d in done if not isinstance(d, str)]
        return {
            "mode": "proxy" if proxied else "bare",
            "points_bytes": size,
            "idle_median": statistics.median(idle),
            "busy_median": statistics.median(busy),
            "ratio": statistics.median(busy) / statistics.median(idle),
            "pages_busy": len(busy),
            "points_served": len(fetched),
            "points_p50_p95": [np.percentile(fetched, q) for q in (50, 95)] if fetched else [],
            "errors": errors,
            "resets": reader.resets + sum(f.resets for f in fetchers),
            "web_cpu_ms": web_ms,
            "gunicorn_cpu_ms": gunicorn_ms,
            "load": [load_before, os.getloadavg()[0]],
        }
    finally:
        if proxy is not None:
            proxy.stop()
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cloud-mb", type=float, default=45.0)
    parser.add_argument("--parallel", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=30.0, help="pages timed under load")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between two bursts of requests"
    )
    parser.add_argument("--pages", type=int, default=100, help="pages timed idle")
    parser.add_argument("--cpu-requests", type=int, default=100)
    parser.add_argument("--proxy", choices=["bare", "proxy", "both"], default="both")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--proxy-port", type=int, default=8772)
    parser.add_argument("--db", default="media_bench")
    parser.add_argument("--admin-db", default="postgres")
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", default="5432")
    parser.add_argument("--pg-user", default="postgres")
    args = parser.parse_args()
    limit = 3 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    work = Path(tempfile.mkdtemp(prefix="media-bench-"))
    try:
        args.static, args.files = work / "static", work / "files"
        env = base_env(args) | {
            "STATIC_ROOT": str(args.static),
            "PROJECT_FILES_ROOT": str(args.files),
        }
        recreate_database(args)
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput")
        config = write_cloud_project(work / "cloud", args.cloud_mb)
        mb = (work / "cloud" / "scan.pcd").stat().st_size / 1024**2
        t0, c0 = time.perf_counter(), time.process_time()
        n_points = len(read_points(work / "cloud" / "scan.pcd", max_points=300_000))
        decode = (time.perf_counter() - t0, time.process_time() - c0)
        for name, slug in (("Lab A", "lab-a"), ("Lab B", "lab-b")):
            manage(env, "create_lab", name, "--slug", slug)
        t0 = time.perf_counter()
        manage(env, "import_project", str(config), "--slug", "lab-a-lidar", "--lab", "lab-a")
        import_s = time.perf_counter() - t0
        manage(env, "import_project", str(write_project(work / "bws", 1000)), "--slug",
               "lab-b-study", "--lab", "lab-b")  # fmt: skip
        for slug, user in (("lab-a-lidar", "ann"), ("lab-b-study", "bee")):
            manage(env, "add_members", slug, "--role", "annotator", "--create", "--password",
                   PASSWORD, user)  # fmt: skip
        print(
            f"cloud: {mb:.1f} MB ASCII PCD, {n_points:,} points kept; decoding it once: "
            f"{decode[0]:.2f} s wall, {decode[1]:.2f} s CPU (what each request cost before); "
            f"import of its project {import_s:.1f} s",
            flush=True,
        )
        rows = []
        modes = {"bare": [False], "proxy": [True], "both": [False, True]}[args.proxy]
        for proxied in modes:
            run_env = env | (
                {"PROJECT_FILES_ACCEL_REDIRECT": "/_project_files/"} if proxied else {}
            )
            rows.append(measure(args, run_env, proxied))
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if queue_setup.CODE != queue_setup.ROOT:
            shutil.rmtree(queue_setup.CODE, ignore_errors=True)
    print(
        f"\n# {args.parallel} parallel points requests for a {args.cloud_mb:g} MB cloud; "
        f"gunicorn {args.workers} x {args.threads}; {os.cpu_count()} cores"
    )
    print(
        "| server | page median idle / under load (ms) | ratio | points served (p50 / p95 ms) "
        "| errors, resets | web CPU ms per points request (gunicorn alone) "
        "| load average before, after |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        p50, p95 = r["points_p50_p95"] or [float("nan")] * 2
        alone = f" ({r['gunicorn_cpu_ms']:.2f})" if r["gunicorn_cpu_ms"] is not None else ""
        print(
            f"| {r['mode']} | {r['idle_median']:.1f} / {r['busy_median']:.1f} | "
            f"{r['ratio']:.2f} | {r['points_served']} ({p50:.0f} / {p95:.0f}) | "
            f"{len(r['errors'])}, {r['resets']} | "
            f"{r['web_cpu_ms']:.2f}{alone} | {r['load'][0]:.2f}, {r['load'][1]:.2f} |"
        )
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
