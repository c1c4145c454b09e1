"""The stored agreement report: computed by the service, the worker's task, the command and
the demo, with its history kept."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agreement import services
from agreement.core.report import AgreementInputError
from agreement.models import AgreementReport
from agreement.selectors import categorical_figures, is_current, latest_report
from agreement.tasks import compute_agreement_task
from annotation.models import Annotation
from projects.models import Project, Unit
from projects.services import import_project, mark_model_judge
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CONFIG = """annotation_task_name: Agreement test
data_files: [d.jsonl]
num_annotators_per_item: 2
annotation_schemes:
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car, truck]}
  - {annotation_type: temporal_grounding, name: events, description: When,
     labels: [stop, go]}
  - {annotation_type: process_reward, name: steps, description: Each step,
     labels: [good, bad]}
"""
TOPICS = {
    "amy": ["sport", "sport", "politics", "politics"],
    "bob": ["sport", "politics", "politics", "politics"],
}


def box(x, label="car"):
    return {"label": label, "center": [x, 0, 0], "size": [4, 2, 1.5], "yaw": 0.0}


@pytest.fixture
def project(tmp_path):
    return build_project(tmp_path)


def build_project(tmp_path):
    """Four documents answered by amy and bob on five schemes, and a judge on the trace."""
    rows = [
        {
            "id": f"doc{n}",
            "text": f"Document {n}",
            "media_url": "/v.mp4",
            "steps": [{"action": "a"}, {"action": "b"}, {"action": "c"}],
        }
        for n in range(4)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "c.yaml", slug="agree").project
    judge = UserFactory(username="judge")
    mark_model_judge(user=judge)
    people = {name: UserFactory(username=name) for name in TOPICS}
    for unit in Unit.objects.filter(project=project).order_by("position"):
        n = unit.position
        for name, user in people.items():
            answer(project, unit, user, "topic", TOPICS[name][n])
            answer(project, unit, user, "quality", 3 + (name == "bob") * (n % 2))
            answer(project, unit, user, "boxes", [box(0), box(10)] if name == "amy" else [box(0)])
            answer(project, unit, user, "events", [{"start": 0, "end": 2, "label": "stop"}])
            answer(project, unit, user, "steps", {"0": "good", "1": "bad", "2": "good"})
        answer(project, unit, judge, "steps", {"0": "bad", "1": "bad", "2": "good"})
    return project


def answer(project, unit, user, scheme, value):
    Annotation.objects.create(
        project=project, unit=unit, annotator=user, scheme=scheme, value=value
    )


def test_compute_report_stores_every_scheme_with_the_judge(project):
    stored = services.compute_report(project=project)
    assert stored.status == AgreementReport.Status.OK
    assert stored.n_annotations == 4 * (2 * 5 + 1)
    assert stored.report["model_annotators"] == ["judge"]
    schemes = stored.report["schemes"]
    assert schemes["topic"]["percent_agreement"] == pytest.approx(3 / 4)
    # Both draw the box at 0; amy also one at 10: one matched pair over two objects.
    assert schemes["boxes"]["mean_agreement"] == pytest.approx(0.5)
    assert schemes["events"]["mean_agreement"] == pytest.approx(1.0)
    judge = schemes["steps"]["judge_disagreement"]["judge"]
    assert judge["rate"] == pytest.approx(1 / 3)  # step 0 of every trace, against both people
    assert latest_report(project) == stored


def test_keys_per_scheme_type(project):
    schemes = services.compute_report(project=project).report["schemes"]
    categorical = {
        "alpha_nominal",
        "fleiss_kappa",
        "cohen_kappa",
        "percent_agreement",
        "n_units",
        "n_annotators",
    }
    assert categorical <= set(schemes["topic"])
    assert categorical | {"alpha_ordinal"} <= set(schemes["quality"])
    structured = {"mean_agreement", "mean_object_count_diff", "n_items", "n_pairs", "n_annotators"}
    assert structured <= set(schemes["boxes"]) and structured <= set(schemes["events"])
    assert {
        "alpha_nominal",
        "cohen_kappa",
        "percent_agreement",
        "n_units",
        "n_annotators",
        "judge_disagreement",
    } <= set(schemes["steps"])


def test_history_is_kept_and_the_latest_good_report_is_served(project):
    first = services.compute_report(project=project)
    second = services.compute_report(project=project)
    assert AgreementReport.objects.filter(project=project).count() == 2
    assert latest_report(project) == second != first


def test_a_failure_is_stored_with_its_error_and_raised(project):
    good = services.compute_report(project=project)
    Annotation.objects.filter(scheme="boxes").update(value="not boxes")
    with pytest.raises(AgreementInputError):
        services.compute_report(project=project)
    failed = AgreementReport.objects.get(status=AgreementReport.Status.FAILED)
    assert "boxes" in failed.error
    assert latest_report(project) == good


def test_categorical_figures_leave_structured_schemes_out_with_a_pointer(project):
    figures = categorical_figures(services.compute_report(project=project), see="/iaa")
    assert set(figures["schemes"]) == {"topic", "quality"}
    assert set(figures["structured_schemes"]) == {"boxes", "events", "steps"}
    assert figures["structured_schemes"]["boxes"] == {"type": "spatial_annotation", "see": "/iaa"}
    assert figures["see"] == "/iaa"


def test_the_task_stores_a_report_once_until_answers_change(project):
    report_id = compute_agreement_task(project.pk)
    stored = AgreementReport.objects.get(pk=report_id)
    assert stored.report["schemes"]["topic"]["n_units"] == 4
    assert compute_agreement_task(project.pk) == report_id  # nothing changed: idempotent
    Annotation.objects.filter(scheme="topic").first().save()
    assert not is_current(stored)
    assert compute_agreement_task(project.pk) != report_id
    assert AgreementReport.objects.filter(project=project).count() == 2


def test_the_task_retries_with_backoff_and_ignores_deleted_projects(project):
    assert compute_agreement_task.max_retries == 3
    assert compute_agreement_task.autoretry_for == (Exception,)
    assert compute_agreement_task.retry_backoff
    assert compute_agreement_task(10**9) is None


def test_management_command_prints_text_and_json(project):
    out = StringIO()
    call_command("agreement", "agree", stdout=out)
    text = out.getvalue()
    assert text.startswith("Agreement report") and "topic (radio)" in text
    assert "judge judge: disagrees on 0.3333" in text
    out = StringIO()
    call_command("agreement", "agree", "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["schemes"]["boxes"]["n_items"] == 4
    assert AgreementReport.objects.filter(project=project).count() == 2
    with pytest.raises(CommandError, match="no project"):
        call_command("agreement", "nope")


def test_demo_project_has_figures_for_every_scheme_type():
    call_command("load_demo", stdout=StringIO())
    project = Project.objects.get(slug="agreement-demo")
    report = latest_report(project).report
    types = {s["type"]: s for s in report["schemes"].values()}
    assert set(types) == {
        "spatial_annotation",
        "temporal_grounding",
        "tiered_annotation",
        "process_reward",
        "radio",
        "likert",
    }
    for kind in ("spatial_annotation", "temporal_grounding", "tiered_annotation"):
        assert 0 < types[kind]["mean_agreement"] < 1 and types[kind]["n_annotators"] == 3
    for kind in ("process_reward", "radio", "likert"):
        assert 0 < types[kind]["alpha_nominal"] < 1
    assert types["likert"]["alpha_ordinal"] > types["likert"]["alpha_nominal"]
    judge = types["process_reward"]["judge_disagreement"]["judge-gpt"]
    assert judge["n_steps"] > 0 and judge["rate"] > 1 - types["process_reward"]["percent_agreement"]
    assert report["model_annotators"] == ["judge-gpt"]
    call_command("load_demo", stdout=StringIO())  # again: nothing added
    assert AgreementReport.objects.filter(project=project).count() == 1


def test_demo_files_are_what_make_demo_writes(tmp_path, monkeypatch):
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "examples" / "agreement_demo" / "make_demo.py"
    spec = importlib.util.spec_from_file_location("make_demo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    for name in ("annotations.jsonl", "data/items.jsonl"):
        assert (tmp_path / name).read_text() == (path.parent / name).read_text()
