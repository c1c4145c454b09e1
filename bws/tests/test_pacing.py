"""run_paced: scoring work in a child process that gives way to other work on the machine."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bws import pacing

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="pacing forks a child")

SEEN: list[int] = []


def _burn(cpu_seconds: float) -> int:
    start = time.process_time()
    x = 0
    while time.process_time() - start < cpu_seconds:
        x += 1
    return os.getpid()


def _remember_and_add(a: int, b: int) -> int:
    SEEN.append(a)
    return a + b


def test_the_result_comes_back_from_a_child_process():
    SEEN.clear()
    assert pacing.run_paced(_remember_and_add, 2, b=3, busy=lambda: True) == 5
    assert SEEN == []  # the child's side effects stay in the child
    assert pacing.run_paced(_burn, 0.01, busy=lambda: False) != os.getpid()


def test_a_full_share_runs_in_this_process_without_forking():
    assert pacing.run_paced(_burn, 0.01, share=1.0) == os.getpid()


def _fail():
    raise ValueError("no judgments in column 7")


def test_an_exception_in_the_child_is_raised_with_its_message_and_traceback():
    with pytest.raises(pacing.PacedError) as caught:
        pacing.run_paced(_fail, busy=lambda: True)
    text = str(caught.value)
    assert "ValueError: no judgments in column 7" in text
    assert "_fail" in text  # the child's traceback comes along


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_child_killed_by_a_signal_is_an_error_not_a_result():
    with pytest.raises(pacing.PacedError, match="killed by signal 9"):
        pacing.run_paced(_die, busy=lambda: True)


def test_while_the_machine_is_busy_the_child_gets_at_most_its_share_of_a_core():
    stats = pacing.PaceStats()
    pacing.run_paced(_burn, 0.3, share=0.25, busy=lambda: True, stats=stats)
    assert stats.child_cpu >= 0.3
    # 1 ms on, 3 ms off: a quarter of a core, with room for timer slack (never above half)
    assert stats.cpu_share < 0.5, stats
    assert stats.wall > 0.3 / 0.5
    assert stats.slices > 100


def test_while_the_machine_is_quiet_the_child_runs_unpaced():
    stats = pacing.PaceStats()
    pacing.run_paced(_burn, 0.3, share=0.25, check_every=0.05, busy=lambda: False, stats=stats)
    # only the first check interval (assumed busy) is paced
    assert stats.paced_seconds < 0.1, stats
    assert stats.slices < 30


def test_the_switch_follows_the_machine_as_it_changes():
    calls = []

    def busy():
        calls.append(time.monotonic())
        return len(calls) % 2 == 0  # quiet, busy, quiet, ...

    stats = pacing.PaceStats()
    pacing.run_paced(_burn, 0.4, share=0.25, check_every=0.05, busy=busy, stats=stats)
    assert len(calls) >= 3
    assert 0 < stats.paced_seconds < stats.wall


def test_other_load_measures_cores_used_by_other_processes():
    load = pacing.OtherLoad(lambda: [])
    time.sleep(0.05)
    value = load()
    if not Path("/proc/stat").exists():
        assert value is None
    else:
        assert value is not None and 0.0 <= value <= os.cpu_count() + 0.5


def test_the_child_dies_with_its_parent(tmp_path):
    # A worker killed during a run must not leave its computation running.
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(
        f"""
        import os, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from bws import pacing

        def forever(path):
            with open(path, "w") as f:
                f.write(str(os.getpid()))
            while True:
                time.sleep(0.01)

        pacing.run_paced(forever, {str(pid_file)!r}, busy=lambda: True)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.05)
        child = int(pid_file.read_text())
        parent.kill()
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(child):
            assert time.monotonic() < deadline, "the child outlived its parent"
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _write_pid_and_wait(path: str) -> None:
    Path(path).write_text(str(os.getpid()))
    while True:
        time.sleep(0.01)


def test_an_error_in_the_parent_leaves_no_child_behind(tmp_path):
    # e.g. a task time limit raised while the parent paces the child
    pid_file = tmp_path / "child.pid"

    def busy():
        if pid_file.exists() and pid_file.read_text():
            raise TimeoutError("time limit")
        return True

    with pytest.raises(TimeoutError):
        pacing.run_paced(_write_pid_and_wait, str(pid_file), check_every=0.02, busy=busy)
    assert not _alive(int(pid_file.read_text()))
