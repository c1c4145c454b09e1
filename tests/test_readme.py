"""Every command the README shows runs as written.

The ```bash blocks of README.md are read, their commands run in a scratch copy of the
examples with a database, project folder and secret key of their own, the way `make demo`
leaves a checkout (migrated, demo lab loaded, var/secret_key written). A command that
fails fails the test. Commands that start a server or need one are listed in SKIPPED with
the reason.
"""

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# Prefixes of commands that are not run here, and why.
SKIPPED = {
    "make demo": "starts a server that runs until stopped",
    "make test": "runs the whole suite, this test included",
    "DATABASE_URL=postgres": "runs the whole suite against PostgreSQL and Redis services",
    "TOKEN=$(curl": "talks to a running server on localhost:8000",
    "curl ": "talks to a running server on localhost:8000",
}


def bash_blocks(text: str) -> list[list[str]]:
    """The README's ```bash blocks, each as its commands (continuation lines joined)."""
    blocks = []
    for body in re.findall(r"^```bash\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        commands, current = [], ""
        for line in body.splitlines():
            if line.endswith("\\"):
                current += line[:-1] + " "
                continue
            command = re.sub(r"\s+#.*$", "", current + line).strip()
            current = ""
            if command and not command.startswith("#"):
                commands.append(command)
        blocks.append(commands)
    return blocks


def skip_reason(command: str) -> str | None:
    for prefix, reason in SKIPPED.items():
        if command.startswith(prefix):
            return reason
    return None


def test_the_readme_has_commands_to_run():
    commands = [c for block in bash_blocks(README.read_text()) for c in block]
    run = [c for c in commands if skip_reason(c) is None]
    assert len(run) >= 6, run
    assert any("python -m bws score --config examples/mt_tuples" in c for c in run)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A scratch checkout after `make demo`'s setup: the venv (linked), manage.py, a copy of
    the examples, var/secret_key, and a migrated database with the demo lab."""
    root = tmp_path_factory.mktemp("readme")
    (root / ".venv").symlink_to(ROOT / ".venv")
    shutil.copy(ROOT / "manage.py", root / "manage.py")
    shutil.copytree(
        ROOT / "examples",
        root / "examples",
        ignore=shutil.ignore_patterns("__pycache__", "quality_scores.csv", "bws_scores.tsv"),
    )
    (root / "var").mkdir()
    (root / "var" / "secret_key").write_text(secrets.token_urlsafe(50) + "\n")
    env = {
        "PATH": f"{root / '.venv' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
        "MEDIA_ROOT": str(root / "var" / "media"),
        "PROJECT_FILES_ROOT": str(root / "var" / "projects"),
    }
    key = (root / "var" / "secret_key").read_text().strip()
    for setup in (["migrate", "--noinput"], ["load_demo"]):
        done = subprocess.run(
            [sys.executable, "manage.py", *setup],
            cwd=root,
            env={**env, "SECRET_KEY": key},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return root, env


@pytest.mark.parametrize("number", range(len(bash_blocks(README.read_text()))))
def test_readme_block_runs(checkout, number):
    root, env = checkout
    commands = bash_blocks(README.read_text())[number]
    runnable = [c for c in commands if skip_reason(c) is None]
    if not runnable:
        pytest.skip("; ".join(sorted({skip_reason(c) for c in commands})))
    # One shell per block, so an `export` reaches the commands after it.
    script = "set -euo pipefail\n" + "\n".join(runnable) + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
