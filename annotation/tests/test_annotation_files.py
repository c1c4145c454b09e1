"""Export and import in the interchange format: round trips, all-or-nothing, file:line."""

import json
import random
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.answers import submit_answers
from annotation.models import Annotation
from annotation.queue import next_unit
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
CONFIG = Path(settings.BASE_DIR) / "examples" / "mt_two_dims" / "config.yaml"


def annotate(project, n_users=3, per_user=10, seed=0):
    rng = random.Random(seed)
    for n in range(n_users):
        user = UserFactory(username=f"ann{n}")
        for _ in range(per_user):
            unit = next_unit(project=project, user=user)
            if unit is None:
                break
            items = list(unit.bws_tuple.item_ids)
            answers = {}
            for scheme in ("fluency", "adequacy"):
                best, worst = rng.sample(items, 2)
                answers[scheme] = {"best": best, "worst": worst}
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_export_import_export_is_identical(tmp_path, fmt):
    source = import_project(config_path=CONFIG, slug="src").project
    annotate(source)
    first = tmp_path / f"first.{fmt}"
    run("export_annotations", "src", "--output", str(first), "--format", fmt)
    import_project(config_path=CONFIG, slug="copy")
    out = run("import_annotations", "copy", str(first))
    assert "imported 60 answers from 30 records" in out
    assert "created inactive accounts" not in out  # the annotators exist on this site
    second = tmp_path / f"second.{fmt}"
    run("export_annotations", "copy", "--output", str(second), "--format", fmt)
    assert first.read_text() == second.read_text()
    copy_units = Unit.objects.filter(project__slug="copy")
    assert sum(u.completed for u in copy_units) == 30


def test_export_lines_follow_the_interchange_format(tmp_path):
    project = import_project(config_path=CONFIG, slug="src").project
    annotate(project, n_users=1, per_user=2)
    out = tmp_path / "a.jsonl"
    run("export_annotations", "src", "--output", str(out))
    record = json.loads(out.read_text().splitlines()[0])
    assert list(record) == ["id", "items", "annotations", "annotator", "timestamp"]
    unit = Unit.objects.get(project=project, external_id=record["id"])
    assert record["items"] == unit.bws_tuple.item_ids
    assert set(record["annotations"]) == {"fluency", "adequacy"}
    assert record["timestamp"].endswith("Z")


def test_import_creates_missing_annotators_inactive(tmp_path):
    project = import_project(config_path=CONFIG, slug="p").project
    unit = Unit.objects.filter(project=project).select_related("bws_tuple").first()
    items = unit.bws_tuple.item_ids
    line = {
        "id": unit.external_id,
        "items": items,
        "annotations": {"fluency": {"best": items[0], "worst": items[1]}},
        "annotator": "newcomer",
        "timestamp": "2026-03-01T14:22:00Z",
    }
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert "created inactive accounts: newcomer" in run("import_annotations", "p", str(path))
    user = get_user_model().objects.get(username="newcomer")
    assert not user.is_active and not user.has_usable_password()
    answer = Annotation.objects.get()
    assert answer.created_at.isoformat().startswith("2026-03-01T14:22:00")


def test_import_is_all_or_nothing_with_file_and_line(tmp_path):
    project = import_project(config_path=CONFIG, slug="p").project
    unit = Unit.objects.filter(project=project).select_related("bws_tuple").first()
    items = unit.bws_tuple.item_ids
    good = {
        "id": unit.external_id,
        "annotations": {"fluency": {"best": items[0], "worst": items[1]}},
        "annotator": "a",
    }
    unknown = {**good, "id": "tuple_999999", "annotator": "b"}
    bad_value = {
        **good,
        "annotator": "c",
        "annotations": {"fluency": {"best": items[0], "worst": items[0]}},
    }
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, unknown, bad_value)) + "\n")
    with pytest.raises(CommandError) as err:
        run("import_annotations", "p", str(path))
    message = str(err.value)
    assert "in.jsonl:2: no unit 'tuple_999999'" in message
    assert "in.jsonl:3:" in message and "must be different" in message
    assert not Annotation.objects.exists()
    assert not get_user_model().objects.filter(username="a").exists()


def test_import_refuses_a_broken_line(tmp_path):
    import_project(config_path=CONFIG, slug="p")
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "tuple_000001", "annotations": {}}\n{"id": \n')
    with pytest.raises(CommandError, match="in.jsonl:2"):
        run("import_annotations", "p", str(path))
    assert not Annotation.objects.exists()
