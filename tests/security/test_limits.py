"""Limits on everything a lab admin controls in a config or an upload: each refusal is a
400 that names the setting and its value, comes before anything is allocated, and stores
nothing. Anything that could allocate runs in a subprocess under an address-space limit."""

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotation.queue import next_unit
from bws import services as bws_services
from bws import tasks as bws_tasks
from bws.core.design import design_memory
from projects.configuration import ConfigError, parse_yaml
from projects.limits import SETTING_NAMES, Limits
from projects.models import Item, Project
from projects.services import ProjectImportError, create_project_from_upload
from projects.tests.factories import LabFactory, LabMembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
ROOT = Path(django_settings.BASE_DIR)
GIB = 1024**3


def config(*, appearances=2, scoring="{method: counting}", extra="", schemes=""):
    return (
        "annotation_task_name: Limits\n"
        "data_files: [items.jsonl]\n"
        f"{extra}"
        "annotation_schemes:\n"
        "  - {annotation_type: bws, name: quality, description: Best and worst}\n"
        f"{schemes}"
        "bws_config:\n"
        "  tuple_size: 4\n"
        f"  min_item_appearances: {appearances}\n"
        f"  scoring: {scoring}\n"
    )


def items(n=8) -> bytes:
    return "".join(
        json.dumps({"id": f"it{i}", "text": f"Item {i}"}) + "\n" for i in range(n)
    ).encode()


@pytest.fixture
def uploads(tmp_path, settings):
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    return settings.PROJECT_FILES_ROOT


@pytest.fixture
def admin_client(client):
    lab = LabFactory()
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    client.lab = lab
    return client


def post(client, text: str, data: bytes | None = None, *, extra_files=()):
    files = [SimpleUploadedFile("items.jsonl", items() if data is None else data)]
    files += list(extra_files)
    return client.post(
        reverse("project-create"),
        {
            "lab": client.lab.pk,
            "config_file": SimpleUploadedFile("config.yaml", text.encode()),
            "data_files": files,
        },
    )


def refuse(text: str, *, data: bytes | None = None) -> str:
    with pytest.raises(ProjectImportError) as refused:
        create_project_from_upload(
            config_file=SimpleUploadedFile("config.yaml", text.encode()),
            data_files=[SimpleUploadedFile("items.jsonl", items() if data is None else data)],
            lab=LabFactory(),
            owner=None,
        )
    assert Project.objects.count() == 0 and Item.objects.count() == 0
    return str(refused.value)


LIKERT = "  - {annotation_type: likert, name: fluency, description: Fluency, size: 1000}\n"
CASES = [
    (
        "bootstrap",
        config(scoring="{method: counting, bootstrap_iterations: 100000}"),
        "bws_config.scoring.bootstrap_iterations: 100000 is above the limit of 5000 "
        "(SCORING_MAX_BOOTSTRAP_ITERATIONS)",
    ),
    (
        "appearances",
        config(appearances=101),
        "bws_config.min_item_appearances: 101 is above the limit of 100 (DESIGN_MAX_APPEARANCES)",
    ),
    (
        "likert",
        config(schemes=LIKERT),
        "annotation_schemes[1].size: 1000 is above the limit of 101 (LIKERT_MAX_SIZE)",
    ),
    (
        "lease",
        config(extra="assignment_lease_minutes: 100000000000000000000\n"),
        "assignment_lease_minutes: 100000000000000000000 is above the limit of 10080 "
        "(QUEUE_MAX_LEASE_MINUTES)",
    ),
    (
        "per-user cap",
        config(extra="max_annotations_per_user: 100000000000000000000\n"),
        "max_annotations_per_user: must be at most 2147483647",
    ),
    ("tuple size", config().replace("tuple_size: 4", "tuple_size: 9"), "must be between 3 and 8"),
]


@pytest.mark.parametrize("name,text,message", CASES, ids=[c[0] for c in CASES])
def test_each_config_limit_is_refused_with_its_name(uploads, admin_client, name, text, message):
    assert message in refuse(text)
    response = post(admin_client, text)
    assert response.status_code == 400
    assert message.replace("'", "&#x27;") in response.content.decode()
    assert Project.objects.count() == 0
    assert not any(uploads.iterdir())


def test_limits_follow_the_settings(uploads, settings):
    settings.PROJECT_MAX_ITEMS = 10
    message = refuse(config(), data=items(11))
    assert "a project holds at most 10 (PROJECT_MAX_ITEMS)" in message
    settings.CONFIG_MAX_BYTES = 100
    assert "larger than the limit of 100 bytes (CONFIG_MAX_BYTES)" in refuse(config())
    settings.CONFIG_MAX_BYTES = 256 * 1024
    settings.SCORING_MAX_BOOTSTRAP_ITERATIONS = 50
    message = refuse(config(scoring="{method: counting, bootstrap_iterations: 51}"))
    assert "51 is above the limit of 50 (SCORING_MAX_BOOTSTRAP_ITERATIONS)" in message


def test_design_memory_budget_is_checked_before_the_design(uploads, settings):
    settings.DESIGN_MAX_MEMORY_MB = 64
    started = time.perf_counter()
    message = refuse(config(appearances=8), data=items(3000))
    assert time.perf_counter() - started < 5
    assert "above the limit of 64 MB (DESIGN_MAX_MEMORY_MB)" in message
    assert "3000 items in tuples of 4" in message


def test_a_huge_design_is_refused_in_well_under_a_second(uploads, admin_client):
    for appearances in (50000, 100000):
        started = time.perf_counter()
        response = post(admin_client, config(appearances=appearances))
        assert time.perf_counter() - started < 1
        assert response.status_code == 400
        assert f"{appearances} is above the limit of 100 (DESIGN_MAX_APPEARANCES)" in (
            response.content.decode()
        )
    assert Project.objects.count() == 0


def run_limited(code: str, limit_bytes: int = 2 * GIB, timeout: float = 60):
    """Run Python code in a child whose address space is capped: a design that allocated
    gigabytes would fail there with MemoryError, not take the test machine down."""

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    env = {**os.environ, "DEBUG": "1", "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap,
        env=env,
        cwd=ROOT,
    )


def test_huge_designs_are_refused_fast_under_a_memory_cap(tmp_path):
    for appearances in (50000, 100000):
        folder = tmp_path / str(appearances)
        folder.mkdir()
        (folder / "config.yaml").write_text(config(appearances=appearances))
        (folder / "items.jsonl").write_bytes(items())
        done = run_limited(
            f"""
            import resource, time
            from projects.configuration import ConfigError, load_config
            started = time.perf_counter()
            try:
                load_config({str(folder / "config.yaml")!r}, trusted=False)
            except ConfigError as exc:
                print("refused", round(time.perf_counter() - started, 3), exc)
            print("peak_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            """
        )
        assert done.returncode == 0, done.stderr
        assert "refused" in done.stdout and "DESIGN_MAX_APPEARANCES" in done.stdout
        seconds = float(done.stdout.split("refused ", 1)[1].split()[0])
        assert seconds < 1
        peak_kb = int(done.stdout.split("peak_kb ")[1])
        assert peak_kb < 512 * 1024


def test_the_operator_command_refuses_the_same_under_a_memory_cap(tmp_path):
    (tmp_path / "config.yaml").write_text(config(appearances=100000))
    (tmp_path / "items.jsonl").write_bytes(items())
    path = str(tmp_path / "config.yaml")
    done = run_limited(
        f"""
        from django.core.management import execute_from_command_line
        execute_from_command_line(["manage.py", "import_project", {path!r}])
        """
    )
    assert done.returncode != 0
    assert "100000 is above the limit of 100 (DESIGN_MAX_APPEARANCES)" in done.stderr
    assert "MemoryError" not in done.stderr


def test_the_design_memory_estimate_grows_with_the_design():
    small = design_memory(100, 4, 8)
    assert small < 64 * 1024**2
    assert design_memory(100_000, 4, 100) > 1024**3  # refused under the default budget
    assert design_memory([10] * 1000, 4, 8) < design_memory(10_000, 4, 8) * 2


ALIAS_BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_an_alias_bomb_is_refused_in_under_a_second(uploads, admin_client):
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"CONFIG_MAX_YAML_NODES"):
        parse_yaml(ALIAS_BOMB)
    assert time.perf_counter() - started < 1
    bomb_config = config() + ALIAS_BOMB.replace("a: &a", "agreement_metrics: {x: &a").replace(
        "lol]\n", "lol]}\n", 1
    )
    started = time.perf_counter()
    response = post(admin_client, bomb_config)
    assert time.perf_counter() - started < 1
    assert response.status_code == 400
    assert "(CONFIG_MAX_YAML_NODES)" in response.content.decode()
    assert Project.objects.count() == 0


def test_self_referring_and_deeply_nested_yaml_are_refused():
    with pytest.raises(ConfigError, match="refers to the value that holds it"):
        parse_yaml("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse_yaml("[" * 50_000)


def test_upload_size_limits(uploads, admin_client, settings):
    settings.UPLOAD_MAX_FILE_MB = 1
    big = b"x" * (1024 * 1024 + 1)
    response = post(admin_client, config(), data=big)
    assert response.status_code == 400
    assert "larger than the limit of 1 MB (UPLOAD_MAX_FILE_MB)" in response.content.decode()
    settings.UPLOAD_MAX_FILE_MB = 50
    settings.UPLOAD_MAX_TOTAL_MB = 1
    half = SimpleUploadedFile("more.jsonl", b"x" * (700 * 1024))
    response = post(admin_client, config(), data=b"y" * (700 * 1024), extra_files=[half])
    assert response.status_code == 400
    assert "larger than the limit of 1 MB (UPLOAD_MAX_TOTAL_MB)" in response.content.decode()
    assert Project.objects.count() == 0
    assert not uploads.exists() or not any(uploads.iterdir())


def test_form_data_beyond_djangos_limit_is_a_400(admin_client, settings):
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE <= 10 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = admin_client.post(reverse("project-create"), {"lab": "1", "junk": "z" * 4096})
    assert response.status_code == 400


def test_celery_tasks_have_soft_and_hard_time_limits():
    from config.celery import app

    soft, hard = app.conf.task_soft_time_limit, app.conf.task_time_limit
    assert soft == django_settings.CELERY_TASK_SOFT_TIME_LIMIT and soft > 0
    assert hard == django_settings.CELERY_TASK_TIME_LIMIT and hard > soft


def test_a_run_stopped_by_the_soft_time_limit_is_failed_with_a_message(uploads, monkeypatch):
    project = create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", config().encode()),
        data_files=[SimpleUploadedFile("items.jsonl", items())],
        lab=LabFactory(),
        owner=None,
    ).project
    assert next_unit(project=project, user=UserFactory()) is not None
    run = bws_services.request_run(project=project, scheme="quality", bootstrap=0)

    def too_long(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(bws_services, "_compute", too_long)
    assert bws_tasks.score_run_task(run.pk) == "failed"  # returned, not raised: no retry
    run.refresh_from_db()
    assert run.status == "failed"
    assert "(CELERY_TASK_SOFT_TIME_LIMIT)" in run.error


def test_a_rescore_asking_for_too_many_resamples_is_refused(uploads):
    project = create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", config().encode()),
        data_files=[SimpleUploadedFile("items.jsonl", items())],
        lab=LabFactory(),
        owner=None,
    ).project
    with pytest.raises(ValueError, match=r"above the limit of 5000 \(SCORING_MAX_BOOTSTRAP"):
        bws_services.request_run(project=project, scheme="quality", bootstrap=100_000)


def test_the_pure_defaults_are_the_settings_defaults():
    defaults = Limits()
    for name, setting in SETTING_NAMES.items():
        if setting in os.environ:
            continue
        assert getattr(defaults, name) == getattr(django_settings, setting), setting


def test_the_api_refuses_a_rescore_over_the_bootstrap_limit_with_a_400(uploads, client):
    manager = UserFactory()
    project = create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", config().encode()),
        data_files=[SimpleUploadedFile("items.jsonl", items())],
        lab=LabFactory(),
        owner=manager,
    ).project
    client.force_login(manager)
    response = client.post(
        reverse("api-scores", args=[project.slug]),
        {"scheme": "quality", "bootstrap": 50_000},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "(SCORING_MAX_BOOTSTRAP_ITERATIONS)" in response.content.decode()
    assert not project.score_runs.exists()


def test_bootstrap_memory_is_bounded_by_items_times_resamples(uploads, settings):
    settings.SCORING_MAX_MEMORY_MB = 256
    message = refuse(config(scoring="{method: counting, bootstrap_iterations: 1000}"))
    assert "bws_config.scoring.bootstrap_iterations: 1000 resamples of 8 items" in message
    assert "above the limit of 256 MB (SCORING_MAX_MEMORY_MB)" in message
    settings.SCORING_MAX_MEMORY_MB = 4096
    # The default allows the default 1000 resamples at the item limit, and not 5000.
    assert bws_services.resamples_refusal(100_000, 1000) is None
    assert "SCORING_MAX_MEMORY_MB" in bws_services.resamples_refusal(100_000, 5000)


def test_tuples_per_project_are_bounded(uploads, settings):
    settings.PROJECT_MAX_TUPLES = 10
    message = refuse(config(appearances=8))
    assert "make 16 tuples, above the limit of 10 (PROJECT_MAX_TUPLES)" in message


def test_an_oversized_file_is_dropped_while_the_request_is_read(rf, settings):
    settings.UPLOAD_MAX_FILE_MB = 1
    request = rf.post(
        "/projects/new/",
        {
            "small": SimpleUploadedFile("small.jsonl", b"{}\n"),
            "big": SimpleUploadedFile("big.jsonl", b"x" * (2 * 1024 * 1024)),
        },
    )
    files = request.FILES  # parsed here, through settings.FILE_UPLOAD_HANDLERS
    assert "small" in files and "big" not in files
    assert request.upload_refusals == [
        "big.jsonl: the file is larger than the limit of 1 MB (UPLOAD_MAX_FILE_MB)"
    ]


UNSTORABLE_UPLOADS = [
    ("surrogate in a scheme name", config().replace("name: quality", 'name: "q\\ud800"'), None),
    ("NUL in a description", config().replace("Best and worst", '"a\\0b"'), None),
    (
        "data line nested 100k deep",
        None,
        b'{"id": "x", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    ),
    ("NUL in a data record", None, items(7) + b'{"id": "it7", "text": "a\\u0000b"}\n'),
    ("lone surrogate in a data id", None, items(7) + b'{"id": "it\\udc00", "text": "x"}\n'),
]


@pytest.mark.parametrize(
    "name,text,data", UNSTORABLE_UPLOADS, ids=[case[0] for case in UNSTORABLE_UPLOADS]
)
def test_values_that_cannot_be_stored_are_refused_at_upload(
    uploads, admin_client, name, text, data
):
    text = text or config()
    message = refuse(text, data=data)
    assert "surrogate" in message or "NUL" in message or "nested too deeply" in message
    response = post(admin_client, text, data)
    assert response.status_code == 400
    assert Project.objects.count() == 0


def test_a_stored_lease_beyond_the_limit_is_held_to_it(uploads, settings):
    create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", config().encode()),
        data_files=[SimpleUploadedFile("items.jsonl", items())],
        lab=LabFactory(),
        owner=None,
    )
    project = Project.objects.get()
    # a config stored before the limit existed
    project.config["lease_minutes"] = 10**20
    project.save(update_fields=["config"])
    unit = next_unit(project=project, user=UserFactory())
    assert unit is not None
    lease = unit.assignments.get().leased_until - timezone.now()
    assert lease <= timedelta(minutes=settings.QUEUE_MAX_LEASE_MINUTES)
