"""nginx in front of a benchmark's gunicorn, configured by the shipped files
(platform/nginx/annolab-server.conf) with only the addresses and paths of the run: its own
port on 127.0.0.1, its own temporary folders, no system service touched."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER_CONF = ROOT / "platform" / "nginx" / "annolab-server.conf"
# The deployment's paths in the shipped file, and what a run puts in their place.
STATIC_ROOT = "/srv/annolab/static/"
FILES_ROOT = "/srv/annolab/media/projects/"


def nginx_binary() -> str | None:
    return shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def render(folder: Path, port: int, upstream: str, static_root: Path, files_root: Path) -> Path:
    """A whole nginx.conf in ``folder``: the shipped server body, listening on
    127.0.0.1:``port``, passing to ``upstream`` (host:port), everything it writes in
    ``folder``. Its path."""
    text = SERVER_CONF.read_text()
    for old, new in ((STATIC_ROOT, static_root), (FILES_ROOT, files_root)):
        if old not in text:
            raise RuntimeError(f"{SERVER_CONF.name} no longer names {old}")
        text = text.replace(old, f"{Path(new).resolve()}/")
    server = folder / "annolab-server.conf"
    server.write_text(text)
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # Started as root, nginx's workers would run as nobody, who cannot read the run's
    # temporary folders: they run as the benchmark's user.
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = folder / "nginx.conf"
    main.write_text(
        f"""{user}worker_processes 2;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{
    worker_connections 4096;
}}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    access_log off;
{temp}
    upstream annolab_web {{
        server {upstream} fail_timeout=0;
    }}
    server {{
        listen 127.0.0.1:{port};
        include {server};
    }}
}}
"""
    )
    return main


class Proxy:
    """nginx in the foreground of its own process group, stopped on exit."""

    def __init__(
        self, port: int, upstream: str, static_root: Path, files_root: Path, preexec_fn=None
    ):
        """``preexec_fn``: run in nginx's process before it starts (a memory limit)."""
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx)")
        self.folder = Path(tempfile.mkdtemp(prefix="bench-nginx-"))
        self.conf = render(self.folder, port, upstream, static_root, files_root)
        self.port = port
        command = [binary, "-c", str(self.conf), "-p", str(self.folder), "-e", "stderr"]
        subprocess.run([*command, "-t", "-q"], check=True, capture_output=True)
        self.proc = subprocess.Popen(
            [*command, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "stderr.log", "wb"),  # noqa: SIM115 - closed with the run
            start_new_session=True,
            preexec_fn=preexec_fn,
        )

    def wait_ready(self, timeout: float = 20, path: str = "/static/annolab/favicon.svg") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited:\n{self.tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                conn.close()
                if response.status != 200:
                    raise RuntimeError(f"nginx: static file answered {response.status}")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"nginx did not answer within {timeout} s:\n{self.tail()}")

    def pids(self) -> list[int]:
        """The nginx master and its workers."""
        found = [self.proc.pid]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def tail(self) -> str:
        log = self.folder / "stderr.log"
        return log.read_text(errors="replace")[-3000:] if log.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
