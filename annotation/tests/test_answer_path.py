"""One write path for answers: the operator's import stores through annotation.answers like
the web and the API, is announced so scoring and agreement see the answers as new, and
keeps each unit's cap and everyone's live leases, all or nothing."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from agreement.services import compute_report
from annotation.annotation_files import AnnotationImportError, import_records
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from bws.models import ScoringState
from projects import events
from projects.interchange import UnitRecord
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
CONFIG = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"
PEOPLE = ["anna", "ben", "carla"]


@pytest.fixture
def project():
    project = import_project(config_path=CONFIG, slug="mt").project
    project.config = {**project.config, "num_annotators_per_item": 3}
    project.save(update_fields=["config"])
    return project


def records(project, n_units, people=PEOPLE, first_line=1):
    """One answer per person on each of the first n_units, dated a year ago."""
    rows = []
    units = Unit.objects.filter(project=project).order_by("position")[:n_units]
    for unit in units:
        for who in people:
            rows.append(
                UnitRecord(
                    id=unit.external_id,
                    annotator=who,
                    items=list(unit.item_ids),
                    annotations={
                        "overall_quality": {"best": unit.item_ids[0], "worst": unit.item_ids[1]}
                    },
                    timestamp="2025-01-01T10:00:00Z",
                    file="answers.jsonl",
                    line=first_line + len(rows),
                )
            )
    return rows


def test_an_import_is_announced_and_seen_as_new_by_scoring_and_agreement(
    project, client, django_capture_on_commit_callbacks
):
    heard = []

    def listen(sender, **kwargs):
        heard.append(kwargs)

    events.answers_changed.connect(listen)
    report = compute_report(project=project)  # the figures before the import
    try:
        with django_capture_on_commit_callbacks(execute=True):
            summary = import_records(project=project, records=records(project, 63))
    finally:
        events.answers_changed.disconnect(listen)
    assert summary.annotations == 189
    assert heard == [
        {
            "signal": events.answers_changed,
            "project_id": project.pk,
            "schemes": ["overall_quality"],
            "count": 189,
            "source": "import",
        }
    ]
    # bws's receiver marked the project for rescoring
    state = ScoringState.objects.get(project=project)
    assert state.dirty and state.last_answer_at > report.computed_at
    # the answers count as stored now; the file's time is kept beside
    answer = Annotation.objects.filter(project=project).first()
    assert answer.updated_at > report.computed_at
    assert answer.answered_at.year == 2025
    manager = UserFactory(username="boss", is_staff=True)
    client.force_login(manager)
    page = client.get(f"/projects/{project.slug}/admin/iaa")
    assert page.status_code == 200
    assert page.context["answers_since"] == 189


def test_an_import_over_a_units_cap_is_refused_and_stores_nothing(project):
    import_records(project=project, records=records(project, 2))
    extra = records(project, 1, people=["dora"], first_line=12)
    with pytest.raises(AnnotationImportError) as err:
        import_records(project=project, records=records(project, 1, people=["eve"]) + extra)
    assert (
        "answers.jsonl:12: unit tuple_000001 already has its 3 annotators "
        "(num_annotators_per_item)" in str(err.value)
    )
    assert Annotation.objects.filter(project=project).count() == 6
    assert not Annotation.objects.filter(annotator__username__in=["dora", "eve"]).exists()
    assert Unit.objects.get(project=project, external_id="tuple_000001").completed == 3


def test_an_import_that_meets_a_live_lease_is_refused_with_a_message(project):
    anna = UserFactory(username="anna")
    unit = next_unit(project=project, user=anna)
    rows = records(project, 200, people=["anna"])
    line = next(r.line for r in rows if r.id == unit.external_id)
    with pytest.raises(AnnotationImportError) as err:
        import_records(project=project, records=rows)
    assert f"answers.jsonl:{line}: anna holds a live lease on unit {unit.external_id}" in str(
        err.value
    )
    assert "wait for it to expire or release it" in str(err.value)
    assert not Annotation.objects.filter(project=project).exists()
    # once the lease has run out, the import completes it
    Assignment.objects.filter(unit=unit, annotator=anna).update(
        leased_until=timezone.now() - timedelta(minutes=1)
    )
    import_records(project=project, records=rows)
    assignment = Assignment.objects.get(unit=unit, annotator=anna)
    assert assignment.status == Assignment.Status.COMPLETED
    assert Annotation.objects.filter(project=project, annotator=anna).count() == 200
