"""Heavy scoring work that gives way to annotators on a shared machine.

A scoring run at 10,000 items keeps a core busy for several seconds. On a small machine
that also serves annotators, that slowed their submits 3-4x (benchmarks/RESULTS.md,
"Background scoring"), even with the worker at the lowest CPU priority (SCHED_IDLE): a
core that is never idle is not where the kernel puts the web's next request in time.

``run_paced`` runs a pure function in a forked child and, while other processes on the
machine use the CPU, lets it run in short slices (1 ms by default) with the CPU left idle
in between, so that the child uses at most ``share`` of a core. The gaps are what keep
requests fast: a web process that wakes finds an idle core. When the rest of the machine
is quiet (or the worker has a host of its own) the child runs at full speed.

The child only computes: it must not touch the database or the broker (it shares the
parent's sockets). Its result comes back pickled through a temporary file.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PR_SET_PDEATHSIG = 1
FIRST_CHECK = 0.2  # seconds before the first look at the machine (paced until then)


class PacedError(RuntimeError):
    """The paced child failed: its exception, or how it died."""


@dataclass
class PaceStats:
    """What happened to one paced call, for logs and benchmarks."""

    wall: float = 0.0
    child_cpu: float = 0.0
    paced_seconds: float = 0.0  # wall time spent in paced mode
    slices: int = 0

    @property
    def cpu_share(self) -> float:
        return self.child_cpu / self.wall if self.wall > 0 else 0.0


def _machine_busy_seconds() -> float | None:
    """CPU seconds every core has spent busy since boot (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal ...
    values = [int(v) for v in fields[1:9]]
    busy = values[0] + values[1] + values[2] + values[5] + values[6]
    return busy / CLOCK_TICKS


def _process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc/<pid>/stat), 0.0 if unreadable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    after = stat.rsplit(")", 1)[1].split()
    return (int(after[11]) + int(after[12])) / CLOCK_TICKS


class OtherLoad:
    """Cores that processes other than ours used since the previous call."""

    def __init__(self, own_pids: Callable[[], list[int]]):
        self.own_pids = own_pids
        self.last = self._read()

    def _read(self):
        busy = _machine_busy_seconds()
        own = sum(_process_cpu_seconds(p) for p in self.own_pids())
        own += time.process_time()  # this process, exactly
        return time.monotonic(), busy, own

    def __call__(self) -> float | None:
        now = self._read()
        (t0, busy0, own0), (t1, busy1, own1) = self.last, now
        self.last = now
        if busy0 is None or busy1 is None or t1 <= t0:
            return None
        return max(0.0, ((busy1 - busy0) - (own1 - own0)) / (t1 - t0))


def _lowest_priority() -> None:
    """SCHED_IDLE where the OS has it (a waking request preempts the child at once),
    else the highest nice value."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.nice(19)
        except OSError:
            pass


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def run_paced(
    function: Callable,
    *args,
    share: float = 0.1,
    slice_seconds: float = 0.001,
    busy_threshold: float = 0.1,
    check_every: float = 0.5,
    busy: Callable[[], bool] | None = None,
    lowest_priority: bool = True,
    stats: PaceStats | None = None,
    **kwargs,
):
    """``function(*args, **kwargs)`` in a forked child; returns its result.

    While ``busy()`` says other work wants the CPU (by default: processes other than
    this one and the child used more than ``busy_threshold`` cores over the last
    ``check_every`` seconds), the child is run ``slice_seconds`` at a time and stopped in
    between, for at most ``share`` of a core. ``share >= 1``, or a platform without
    ``fork``, runs it in this process, unpaced. Exceptions in the child come back as
    ``PacedError`` carrying its traceback text.
    """
    stats = stats if stats is not None else PaceStats()
    start = time.monotonic()
    if share >= 1 or not hasattr(os, "fork"):
        result = function(*args, **kwargs)
        stats.wall = time.monotonic() - start
        return result
    share = max(share, 0.01)
    off_seconds = slice_seconds * (1.0 - share) / share
    handle, result_path = tempfile.mkstemp(prefix="annolab-paced-", suffix=".pickle")
    os.close(handle)
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: compute, write the outcome, leave without cleanup handlers
        code = 0
        try:
            _die_with_parent()
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(71)
            # The parent's handlers (a Celery worker's warm shutdown) are not ours: a
            # stop request simply ends the computation; the parent decides what follows.
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1):
                signal.signal(number, signal.SIG_DFL)
            if lowest_priority:
                _lowest_priority()
            try:
                outcome = ("ok", function(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - carried to the parent
                outcome = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
            with open(result_path, "wb") as f:
                pickle.dump(outcome, f, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            code = 70
        finally:
            os._exit(code)

    load = OtherLoad(lambda: [pid]) if busy is None else None
    is_busy = busy if busy is not None else (lambda: (load() or 0.0) > busy_threshold)
    paced = True  # until the first look at the machine: assume annotators are working
    next_check = time.monotonic() + min(check_every, FIRST_CHECK)
    status = None
    try:
        while True:
            done, code, usage = os.wait4(pid, os.WNOHANG)
            if done:  # without WUNTRACED only an exit or a killing signal is reported
                status = code
                stats.child_cpu = usage.ru_utime + usage.ru_stime
                break
            now = time.monotonic()
            if now >= next_check:
                paced = bool(is_busy())
                next_check = now + check_every
            if paced:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(off_seconds)
                os.kill(pid, signal.SIGCONT)
                time.sleep(slice_seconds)
                stats.slices += 1
                stats.paced_seconds += off_seconds + slice_seconds
            else:
                time.sleep(min(0.02, check_every))
    finally:  # also on an exception here (a task time limit): no child is left behind
        if status is None:
            _kill(pid)
            Path(result_path).unlink(missing_ok=True)
        stats.wall = time.monotonic() - start
    try:
        with open(result_path, "rb") as f:
            outcome = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        outcome = None
    finally:
        Path(result_path).unlink(missing_ok=True)
    if os.WIFSIGNALED(status):
        raise PacedError(f"the scoring process was killed by signal {os.WTERMSIG(status)}")
    if outcome is None:
        raise PacedError(f"the scoring process exited ({os.WEXITSTATUS(status)}) without a result")
    if outcome[0] == "error":
        raise PacedError(f"{outcome[1]}\n\nIn the scoring process:\n{outcome[2]}")
    return outcome[1]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        return
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
