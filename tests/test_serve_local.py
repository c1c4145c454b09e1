"""`make demo`'s server (platform/serve-local.sh): it prints its address only once the site
answers, runs two web processes, and Ctrl-C stops the web server and the worker within a
few seconds, with no error line and exit status 0."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "platform" / "serve-local.sh"
READY = "Annolab is ready: open "
# The script waits 4 s for its children before killing them; the rest is a loaded machine.
STOP_BOUND = 10


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """serve-local.sh in a session of its own (as a terminal's foreground job), its output
    collected line by line with the time each line came."""

    def __init__(self, env):
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            ["bash", str(SCRIPT)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith(READY):
                self.ready.set()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def interrupt(self) -> float:
        """Ctrl-C: SIGINT to the foreground process group; seconds until the script ends."""
        moment = time.monotonic()
        os.killpg(self.process.pid, signal.SIGINT)
        self.process.wait(timeout=60)
        self.reader.join(timeout=10)
        return time.monotonic() - moment

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def environment(tmp_path):
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "SECRET_KEY": "serve-local-test-" + "k" * 40,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_DATA_DIR": str(tmp_path / "celery"),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "PROJECT_FILES_ROOT": str(tmp_path / "projects"),
        "PORT": str(free_port()),
        "SERVE_READY_NOTE": str(tmp_path / "note.txt"),
    }
    (tmp_path / "note.txt").write_text("Demo accounts: the note\n")
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrated.returncode == 0, migrated.stderr
    return env


def gone(pid: int) -> bool:
    """No such process, or one that has exited and waits to be reaped (a container's init
    may never reap the orphans it inherits)."""
    if not Path("/proc").is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def test_the_address_comes_once_the_site_answers_and_ctrl_c_stops_it_cleanly(environment):
    served = Served(environment)
    try:
        assert served.ready.wait(180), served.output
        url = f"http://127.0.0.1:{environment['PORT']}/"
        assert f"{READY}{url}" in served.output
        # The note comes right under the address.
        ready = next(n for n, line in enumerate(served.lines) if line.startswith(READY))
        deadline = time.monotonic() + 10
        while len(served.lines) <= ready + 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.lines[ready + 1] == "Demo accounts: the note", served.output
        # Printed after the site answered: it answers now, with the login page.
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200 and "/accounts/login/" in page.url
        # Let the worker come up too, so that Ctrl-C finds both running.
        deadline = time.monotonic() + 90
        while not any(line.endswith(" ready.") for line in served.lines):
            assert time.monotonic() < deadline, served.output
            time.sleep(0.5)
        pids = [
            int(line.split("[")[2].split("]")[0])
            for line in served.lines
            if "[INFO] Booting worker with pid" in line or "[INFO] Starting gunicorn" in line
        ]
        seconds = served.interrupt()
    finally:
        served.kill()
    output = served.output
    assert served.process.returncode == 0, output
    assert seconds < STOP_BOUND, output
    assert "Annolab: stopped." in output
    for bad in ("ERROR", "Traceback", "SIGKILL", "make: ***"):
        assert bad not in output, output
    # Two web processes (the laptop default), and none of them, nor the master, left over.
    assert sum("Booting worker with pid" in line for line in served.lines) == 2, output
    assert len(pids) == 3 and all(gone(pid) for pid in pids), (pids, output)
