"""Paths in an uploaded project: a lab admin reads no other lab's files and writes nowhere
but the project's own folder, whatever the config says, and no refusal tells them a server
path or whether a file exists there. The operator's import_project still reads any path."""

import json
import site
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import services as bws_services
from projects.models import Item, Project
from projects.paths import PathRefused, write_inside
from projects.services import (
    ProjectImportError,
    create_project_from_upload,
    import_project,
    project_folder,
)
from projects.tests.factories import LabFactory, LabMembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

ITEMS = [{"id": f"it{n}", "text": f"Sentence {n}"} for n in range(8)]
SECRET = "SECRET-OF-THE-OTHER-LAB"
SITE_PACKAGES = Path(site.getsitepackages()[0]) if hasattr(site, "getsitepackages") else None


def config(*, task_dir=".", data_file="items.jsonl", output_file="scores.tsv", extra=""):
    return (
        "annotation_task_name: Paths\n"
        f"task_dir: {json.dumps(task_dir)}\n"
        f"data_files: [{json.dumps(data_file)}]\n"
        f"output_annotation_dir: annotation_output/\n{extra}"
        "annotation_schemes:\n"
        "  - {annotation_type: bws, name: quality, description: Best and worst}\n"
        "bws_config:\n"
        "  tuple_size: 4\n"
        "  min_item_appearances: 2\n"
        f"  scoring: {{method: counting, output_file: {json.dumps(output_file)}}}\n"
    )


def jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


@pytest.fixture
def roots(tmp_path, settings):
    """The projects' folders, and another lab's folder with a file worth stealing."""
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    other = tmp_path / "otherlab"
    other.mkdir()
    (other / "items.jsonl").write_bytes(jsonl([{"id": f"s{n}", "text": SECRET} for n in range(8)]))
    return settings.PROJECT_FILES_ROOT, other


@pytest.fixture
def admin_client(client):
    lab = LabFactory()
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    client.lab = lab
    return client


def upload(client, text: str, data_name="items.jsonl"):
    return client.post(
        reverse("project-create"),
        {
            "lab": client.lab.pk,
            "config_file": SimpleUploadedFile("config.yaml", text.encode()),
            "data_files": [SimpleUploadedFile(data_name, jsonl(ITEMS))],
        },
    )


def service_upload(text: str, lab):
    return create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", text.encode()),
        data_files=[SimpleUploadedFile("items.jsonl", jsonl(ITEMS))],
        lab=lab,
        owner=None,
    )


def leaks(message: str, *paths) -> list[str]:
    return [str(p) for p in paths if str(p) in message]


def attacks(other: Path) -> list[tuple[str, str]]:
    """(config key named in the refusal, config text) for every way out of the folder."""
    cases = [
        ("task_dir", config(task_dir=str(other))),
        ("task_dir", config(task_dir="../otherlab")),
        ("data_files[0]", config(data_file=str(other / "items.jsonl"))),
        ("data_files[0]", config(data_file="../otherlab/items.jsonl")),
        ("data_files[0]", config(data_file="../../../../../../../../etc/passwd.json")),
        ("bws_config.scoring.output_file", config(output_file="/tmp/annolab-scores.tsv")),
        ("bws_config.scoring.output_file", config(output_file="../../escape.tsv")),
        ("output_annotation_dir", config().replace("annotation_output/", "/tmp/annotations/")),
    ]
    if SITE_PACKAGES is not None:
        cases.append(
            ("bws_config.scoring.output_file", config(output_file=str(SITE_PACKAGES / "x.pth")))
        )
    return cases


def test_web_upload_refuses_every_path_that_leads_outside(admin_client, roots, tmp_path):
    projects_root, other = roots
    for key, text in attacks(other):
        response = upload(admin_client, text)
        html = response.content.decode()
        assert response.status_code == 400, (key, html)
        assert f"{key}: must be a relative path inside the project&#x27;s folder" in html, key
        assert not leaks(html, projects_root, tmp_path, other, sys.prefix), key
        assert SECRET not in html
    assert Project.objects.count() == 0 and Item.objects.count() == 0
    assert not any(projects_root.iterdir()), "a refused upload leaves no folder behind"
    assert not Path("/tmp/annolab-scores.tsv").exists()


def test_service_refuses_the_same_paths_without_a_server_path_in_the_message(roots, tmp_path):
    projects_root, other = roots
    lab = LabFactory()
    for key, text in attacks(other):
        with pytest.raises(ProjectImportError) as refused:
            service_upload(text, lab)
        message = str(refused.value)
        assert f"config.yaml: {key}: must be a relative path inside" in message
        assert not leaks(message, projects_root, tmp_path, other, sys.prefix)
    assert Project.objects.count() == 0


def test_the_refusal_is_the_same_whether_the_target_exists_or_not(roots, tmp_path):
    _, other = roots
    lab = LabFactory()
    messages = []
    for target in (other / "items.jsonl", other / "missing.jsonl", "/etc/passwd.json"):
        with pytest.raises(ProjectImportError) as refused:
            service_upload(config(data_file=str(target)), lab)
        messages.append(str(refused.value))
    assert len(set(messages)) == 1, messages
    with pytest.raises(ProjectImportError) as missing_dir:
        service_upload(config(task_dir=str(tmp_path / "no-such-dir")), lab)
    with pytest.raises(ProjectImportError) as existing_dir:
        service_upload(config(task_dir=str(other)), lab)
    assert str(missing_dir.value) == str(existing_dir.value)


def test_a_link_inside_the_folder_that_leads_outside_is_refused(roots, tmp_path):
    _, other = roots
    study = tmp_path / "study"
    (study / "data").mkdir(parents=True)
    (study / "data" / "items.jsonl").symlink_to(other / "items.jsonl")
    (study / "config.yaml").write_text(config(data_file="data/items.jsonl"))
    with pytest.raises(ProjectImportError) as refused:
        import_project(config_path=study / "config.yaml")  # untrusted by default
    assert "data_files[0]: must be a relative path inside" in str(refused.value)
    assert not leaks(str(refused.value), tmp_path)
    (study / "linked").symlink_to(other, target_is_directory=True)
    (study / "config.yaml").write_text(config(task_dir="linked"))
    with pytest.raises(ProjectImportError, match="task_dir: must be a relative path inside"):
        import_project(config_path=study / "config.yaml")
    assert Project.objects.count() == 0


def test_the_operator_import_reads_paths_the_operator_names(roots, tmp_path):
    _, other = roots
    study = tmp_path / "operator"
    study.mkdir()
    (study / "config.yaml").write_text(config(task_dir=str(other)))
    call_command("import_project", str(study / "config.yaml"), "--slug", "operator")
    project = Project.objects.get(slug="operator")
    assert project.items.count() == 8 and project.items.first().text == SECRET
    # ... but what the worker writes still goes to the project's own folder.
    assert project.storage_folder and project_folder(project).parent == roots[0]


def test_the_operator_import_still_refuses_writes_outside(roots, tmp_path):
    study = tmp_path / "operator"
    study.mkdir()
    (study / "items.jsonl").write_bytes(jsonl(ITEMS))
    (study / "config.yaml").write_text(config(output_file=str(tmp_path / "out.tsv")))
    with pytest.raises(Exception, match="output_file: must be a relative path inside"):
        call_command("import_project", str(study / "config.yaml"))
    assert Project.objects.count() == 0


def annotate_all(project):
    user = UserFactory()
    while (unit := next_unit(project=project, user=user)) is not None:
        ids = sorted(unit.bws_tuple.item_ids)
        submit_answers(
            project=project,
            user=user,
            unit_id=unit.pk,
            answers={"quality": {"best": ids[0], "worst": ids[-1]}},
        )


def score(project):
    run = bws_services.request_run(project=project, scheme="quality", bootstrap=0)
    return bws_services.execute_run(run.pk)


def test_the_worker_writes_output_file_inside_the_projects_folder(roots):
    projects_root, _ = roots
    project = service_upload(config(output_file="results/scores.tsv"), LabFactory()).project
    annotate_all(project)
    assert score(project).status == "ok"
    written = projects_root / project.storage_folder / "results" / "scores.tsv"
    assert written.read_text().startswith("item_id\ttext\tscore")
    assert not [p for p in written.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "tampered",
    ["/tmp/annolab-tampered.tsv", "../../annolab-tampered.tsv", "SITE_PACKAGES"],
)
def test_a_tampered_stored_config_writes_nothing_outside(roots, tmp_path, tampered):
    projects_root, _ = roots
    project = service_upload(config(), LabFactory()).project
    annotate_all(project)
    if tampered == "SITE_PACKAGES":
        if SITE_PACKAGES is None:
            pytest.skip("no site-packages")
        tampered = str(SITE_PACKAGES / "annolab-tampered.pth")
    for scheme in project.config["schemes"]:
        scheme["options"]["scoring"]["output_file"] = tampered
    project.save()
    before = {p for p in tmp_path.rglob("*")}
    run = score(project)
    assert run.status == "ok"  # the scores are kept; only the file is not written
    assert not Path(tampered).exists() or not Path(tampered).is_absolute()
    assert not (projects_root.parent / "annolab-tampered.tsv").exists()
    assert {p for p in tmp_path.rglob("*")} - before <= {
        p for p in (projects_root / project.storage_folder).rglob("*")
    }


def test_the_project_folder_name_cannot_be_turned_into_a_path(roots):
    project = service_upload(config(), LabFactory()).project
    Project.objects.filter(pk=project.pk).update(storage_folder="../../etc")
    project.refresh_from_db()
    with pytest.raises(PathRefused):
        project_folder(project)


def test_write_inside_refuses_links_on_the_way_and_writes_atomically(tmp_path):
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    (root / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused, match="^output_file: "):
        write_inside(root, "out/scores.tsv", lambda stream: stream.write("x"))
    (root / "scores.tsv").symlink_to(outside / "victim.tsv")
    with pytest.raises(PathRefused):
        write_inside(root, "scores.tsv", lambda stream: stream.write("x"))
    assert not any(outside.iterdir())
    (root / "scores.tsv").unlink()

    def fails(stream):
        stream.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_inside(root, "deep/scores.tsv", fails)
    assert list((root / "deep").iterdir()) == []  # no partial file, no temporary left
    path = write_inside(root, "deep/scores.tsv", lambda stream: stream.write("whole"))
    assert path.read_text() == "whole"
