"""The installed package: the command lines run from any directory in the venv."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The apps the project installs (pyproject's package list), importable from anywhere.
INSTALLED = ["projects", "bws", "agreement", "config"]


def run_outside(tmp_path, *args):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("module", ["bws", "agreement"])
def test_command_line_runs_outside_the_repository(tmp_path, module):
    done = run_outside(tmp_path, "-m", module, "--help")
    assert done.returncode == 0, done.stderr
    assert f"python -m {module}" in done.stdout


def test_every_app_is_installed(tmp_path):
    code = f"import importlib; [importlib.import_module(m) for m in {INSTALLED!r}]"
    done = run_outside(tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr


def test_every_app_of_the_settings_is_installed(tmp_path, settings):
    """A new app of the checkout is missing from pyproject's package list if this fails."""
    root = Path(__file__).resolve().parent.parent
    local = sorted(
        {
            app.split(".")[0]
            for app in settings.INSTALLED_APPS
            if (root / app.split(".")[0]).is_dir()
        }
    )
    code = f"import importlib; [importlib.import_module(m) for m in {local!r}]"
    done = run_outside(tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("chromium", "says"),
    [("/nonexistent/chromium", "Browser tests: SKIPPED, no Chromium"), (sys.executable, "run in")],
)
def test_make_test_says_first_whether_the_browser_tests_run(chromium, says):
    """`make test` runs browser-check before pytest: it names the Chromium the browser tests
    use, or says they are skipped and how to install it."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        ["make", "--no-print-directory", "browser-check", f"CHROMIUM={chromium}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert says in done.stdout
    if "SKIPPED" in says:
        assert "apt-get install chromium" in done.stdout
    dry = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", "test"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    commands = dry.stdout.splitlines()
    check = next(n for n, line in enumerate(commands) if "Browser tests" in line)
    assert check < next(n for n, line in enumerate(commands) if "pytest" in line)
