"""From a fresh clone to the first page: clone the repository into a temporary folder, run
`make demo` there on a free port, and time each step of its output, the moment the site
first answers and the stop on Ctrl-C (SIGINT to make's process group, as a terminal sends
it). The environment is the caller's without DATABASE_URL, REDIS_URL and SECRET_KEY, so the
demo runs as on a new machine: SQLite and the embedded worker (pip's own cache is used as
it is). Every wait is bounded: 10 minutes to the first page, 30 s for the stop.

    .venv/bin/python benchmarks/first_run.py [--repo PATH] [--keep] [--transcript FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_PAGE_BOUND = 600  # seconds
STOP_BOUND = 30
STEP = re.compile(r"^\[(\d)/4\] ")
READY = "Annolab is ready: open "
# Lines that would tell a user something went wrong.
BAD = re.compile(r"ERROR|Traceback|SIGKILL|make: \*\*\*")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=10)
    except urllib.error.HTTPError as error:
        return error.code < 500
    except OSError:
        return False
    return True


class Run:
    """`make demo` in its own session, each output line kept with its time."""

    def __init__(self, folder: Path, port: int):
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "VIRTUAL_ENV")
        }
        env["PORT"] = str(port)
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            ["make", "demo"],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))

    def first(self, pattern) -> float | None:
        for moment, line in self.lines:
            if pattern.search(line) if hasattr(pattern, "search") else pattern in line:
                return moment
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(ROOT), help="the repository to clone")
    parser.add_argument("--keep", action="store_true", help="keep the clone afterwards")
    parser.add_argument("--transcript", help="write make demo's output, timed, to this file")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="annolab-first-run-"))
    clone = folder / "annolab"
    started = time.monotonic()
    subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True, timeout=300)
    cloned = time.monotonic() - started
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    run = Run(clone, port)
    first_page = None
    try:
        while time.monotonic() - run.started < FIRST_PAGE_BOUND:
            if run.process.poll() is not None:
                break
            if answers(url):
                first_page = time.monotonic() - run.started
                break
            time.sleep(0.5)
        ready_line = None
        if first_page is not None:
            deadline = time.monotonic() + 60
            while run.first(READY) is None and time.monotonic() < deadline:
                time.sleep(0.2)
            ready_line = run.first(READY)
            time.sleep(5)  # the worker comes up beside the web server; stop them both
        stop = None
        if run.process.poll() is None:
            moment = time.monotonic()
            os.killpg(run.process.pid, signal.SIGINT)
            try:
                run.process.wait(timeout=STOP_BOUND)
                stop = time.monotonic() - moment
            except subprocess.TimeoutExpired:
                pass
    finally:
        if run.process.poll() is None:
            os.killpg(run.process.pid, signal.SIGKILL)
            run.process.wait()
        run.reader.join(timeout=5)

    steps = {}
    for moment, line in run.lines:
        match = STEP.match(line)
        if match:
            steps.setdefault(int(match.group(1)), moment)
    bad = [line for _, line in run.lines if BAD.search(line)]
    if args.transcript:
        Path(args.transcript).write_text(
            "".join(f"{moment:7.1f}  {line}\n" for moment, line in run.lines), encoding="utf-8"
        )
    print(f"clone: {cloned:.1f} s ({args.repo})")
    print("make demo, seconds from its start:")
    names = {
        1: "installing packages",
        2: "database and static files",
        3: "loading the demo lab",
        4: "starting the web server and the worker",
    }
    for number, name in names.items():
        if number in steps:
            print(f"  [{number}/4] {name}: at {steps[number]:.1f}")
    print(f"  first page answered: {_seconds(first_page)} (bound {FIRST_PAGE_BOUND} s)")
    print(f"  'Annolab is ready' printed: {_seconds(ready_line)}")
    print(f"stop on Ctrl-C: {_seconds(stop)} (make's exit status {run.process.returncode})")
    print(f"error lines in the output: {len(bad)}")
    for line in bad[:10]:
        print(f"  {line}")
    if args.keep:
        print(f"clone kept in {clone}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if first_page is not None and stop is not None and not bad else 1


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} s"


if __name__ == "__main__":
    sys.exit(main())
