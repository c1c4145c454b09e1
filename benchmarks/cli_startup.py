"""Command-line startup: the wall time of ``python -m bws --help`` and its siblings.

    python benchmarks/cli_startup.py [--runs 9]

Runs each help request ``--runs`` times (3 to 50) in a fresh interpreter from the
repository root and prints the median, the fastest and the slowest wall time, beside a
bare ``python -c pass`` for the interpreter's own startup. Figures, not assertions
(tests/test_cli_light.py checks what a help request imports).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = (
    ("-c", "pass"),
    ("-m", "bws", "--help"),
    ("-m", "bws", "score", "--help"),
    ("-m", "bws", "generate-tuples", "--help"),
    ("-m", "agreement", "--help"),
)


def wall_times(args: tuple[str, ...], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, *args], cwd=REPO, check=True, stdout=subprocess.DEVNULL, timeout=60
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per command (3 to 50)")
    runs = min(max(parser.parse_args().runs, 3), 50)
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}, {runs} runs each"
    )
    print(f"{'command':<42} {'median':>8} {'min':>8} {'max':>8}")
    for args in COMMANDS:
        times = wall_times(args, runs)
        name = "python " + " ".join(args)
        print(
            f"{name:<42} {statistics.median(times):>7.3f}s {min(times):>7.3f}s {max(times):>7.3f}s"
        )


if __name__ == "__main__":
    main()
