"""Training and gold that cannot be edited: a graded answer (a training unit's, an attention
check's) cannot be changed by the web page, the training page, the API or the import; a
failed person stays failed until a manager resets them (logged); the feedback names the
expected answer only for an answer that is final."""

import logging
import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.annotation_files import AnnotationImportError, import_records
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from crowds import gold
from crowds.models import Participant
from crowds.tests.test_gold import bws_project, gold_records, truthful
from projects.interchange import UnitRecord
from projects.models import Membership, Unit
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TRAINING = "gold:\n  file: gold.jsonl\n  attention_rate: 0.1\n  training:\n    units: 3\n"


def flipped(answer):
    return {"q": {"best": answer["q"]["worst"], "worst": answer["q"]["best"]}}


def member(project, username, role=Membership.Role.ANNOTATOR):
    user = UserFactory(username=username)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def stored(user) -> dict:
    return {(a.unit_id, a.scheme): a.value for a in Annotation.objects.filter(annotator=user)}


def fail_training(client, project, user):
    """Answer every training unit on the training page, every answer wrong."""
    client.force_login(user)
    for unit in gold.training_units(project):
        client.get(reverse("project-training", args=[project.slug]))
        answer = flipped(truthful(unit))
        posted = client.post(
            reverse("project-training", args=[project.slug]),
            {"q__best": answer["q"]["best"], "q__worst": answer["q"]["worst"]},
        )
        assert posted.status_code == 302
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED


@pytest.fixture
def failed(tmp_path, client):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    user = member(project, "trainee")
    fail_training(client, project, user)
    return project, user


def test_posting_the_shown_answer_as_an_edit_on_the_web_is_refused(failed, client, caplog):
    project, user = failed
    units = gold.training_units(project)
    # The feedback showed the expected answer of the first unit.
    feedback = client.get(
        reverse("project-training", args=[project.slug]), {"feedback": units[0].pk}
    ).content.decode()
    assert "Not quite." in feedback and "The best was" in feedback
    # The unit's own page shows the answer as final, with nothing to submit.
    shown = client.get(reverse("annotate-unit", args=[project.slug, units[0].pk]))
    assert "This answer is final" in shown.content.decode()
    assert 'id="submit-answer"' not in shown.content.decode()
    before = stored(user)
    expected = truthful(units[0])["q"]
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        response = client.post(
            reverse("annotate-unit", args=[project.slug, units[0].pk]),
            {"q__best": expected["best"], "q__worst": expected["worst"]},
        )
    assert response.status_code == 409
    assert "this answer is final" in response.content.decode()
    assert stored(user) == before
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED
    assert next_unit(project=project, user=user) is None
    assert any(
        "trainee" in r.getMessage() and "final answer" in r.getMessage() for r in caplog.records
    )
    # The training page itself offers no way back to an answered unit.
    again = client.post(
        reverse("project-training", args=[project.slug]),
        {"q__best": expected["best"], "q__worst": expected["worst"]},
    )
    assert again.status_code == 302
    assert stored(user) == before


def test_a_failed_annotator_editing_training_answers_over_the_api_is_refused(failed, caplog):
    project, user = failed
    api = api_as(user)
    before = stored(user)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        for unit in gold.training_units(project):
            response = api.post(
                f"/api/v1/projects/{project.slug}/annotations/",
                {"unit": unit.pk, "annotations": truthful(unit), "client_id": str(uuid.uuid4())},
                format="json",
            )
            assert response.status_code == 409, response.content
            assert "final" in response.json()["detail"]
    assert stored(user) == before
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED
    # No ordinary unit comes back.
    assert api.post(f"/api/v1/projects/{project.slug}/queue/next/").status_code == 204
    assert not Assignment.objects.filter(annotator=user, unit__is_gold=False).exists()
    assert sum("final answer" in r.getMessage() for r in caplog.records) == 3


def test_a_retried_submission_of_a_graded_answer_still_answers_as_a_retry(tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    user = member(project, "retrier")
    unit = gold.next_training_unit(project, user, timedelta(minutes=5))
    api = api_as(user)
    body = {"unit": unit.pk, "annotations": truthful(unit), "client_id": str(uuid.uuid4())}
    url = f"/api/v1/projects/{project.slug}/annotations/"
    assert api.post(url, body, format="json").status_code == 201
    assert api.post(url, body, format="json").status_code == 200  # the same answer, replayed
    changed = {**body, "annotations": flipped(truthful(unit))}
    assert api.post(url, changed, format="json").status_code == 409
    assert stored(user) == {(unit.pk, "q"): truthful(unit)["q"]}


def test_an_attention_check_answer_cannot_be_changed(tmp_path):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.5\n"
    project = bws_project(tmp_path, gold_lines=gold_records(10), block=block)
    user = member(project, "checked")
    while (unit := next_unit(project=project, user=user)) is not None and not unit.is_gold:
        api_as(user).post(
            f"/api/v1/projects/{project.slug}/annotations/",
            {"unit": unit.pk, "annotations": truthful(unit)},
            format="json",
        )
    assert unit is not None and unit.is_gold
    api = api_as(user)
    url = f"/api/v1/projects/{project.slug}/annotations/"
    wrong = flipped(truthful(unit))
    assert api.post(url, {"unit": unit.pk, "annotations": wrong}, format="json").status_code == 201
    before = stored(user)
    right = {"unit": unit.pk, "annotations": truthful(unit)}
    response = api.post(url, right, format="json")
    assert response.status_code == 409
    assert stored(user) == before
    assert gold.check_failures(project, user) == (1, 1)


def test_an_import_over_a_graded_answer_is_refused_by_line(failed):
    project, user = failed
    before = stored(user)
    unit = gold.training_units(project)[1]
    record = UnitRecord(
        id=unit.external_id,
        annotator=user.username,
        items=list(unit.item_ids),
        annotations=truthful(unit),
        file="fix.jsonl",
        line=4,
    )
    with pytest.raises(AnnotationImportError) as refused:
        import_records(project=project, records=[record])
    assert "fix.jsonl:4" in str(refused.value) and "final" in str(refused.value)
    assert stored(user) == before
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED


def test_no_feedback_for_a_training_unit_handed_out_but_not_answered(tmp_path, client):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    user = member(project, "peeker")
    client.force_login(user)
    page = client.get(reverse("project-training", args=[project.slug]))
    assert page.status_code == 200
    reserved = Assignment.objects.get(annotator=user)
    assert reserved.status == Assignment.Status.RESERVED
    peek = client.get(
        reverse("project-training", args=[project.slug]), {"feedback": reserved.unit_id}
    ).content.decode()
    assert "The best was" not in peek and "Not quite" not in peek
    assert 'id="annotate-form"' in peek  # the question again, not its feedback
    assert not Annotation.objects.filter(annotator=user).exists()


# --------------------------------------------------------------------------- reset


def test_a_manager_resets_a_failed_person_and_it_is_logged(failed, client, caplog):
    project, user = failed
    boss = member(project, "boss", Membership.Role.MANAGER)
    client.force_login(boss)
    quality = client.get(reverse("project-quality", args=[project.slug])).content.decode()
    assert "screened out" in quality and reverse("project-screening-reset", args=[project.slug])
    training = list(Assignment.objects.filter(annotator=user).values_list("unit_id", flat=True))
    with caplog.at_level(logging.WARNING, logger="annolab.audit"):
        response = client.post(
            reverse("project-screening-reset", args=[project.slug]), {"annotator": "trainee"}
        )
    assert response.status_code == 302
    assert not Annotation.objects.filter(annotator=user).exists()
    assert not Assignment.objects.filter(annotator=user).exists()
    assert all(u.load == 0 and u.completed == 0 for u in Unit.objects.filter(pk__in=training))
    assert gold.training_result(project, user).status == gold.TrainingStatus.NOT_STARTED
    assert any("boss" in r.getMessage() and "trainee" in r.getMessage() for r in caplog.records), (
        "who reset whom is logged"
    )


def test_a_reset_through_the_api_clears_a_participant_s_screen_out(failed):
    project, user = failed
    Participant.objects.create(
        project=project,
        user=user,
        external_id="p-1",
        training=Participant.Training.FAILED,
        outcome=Participant.Outcome.SCREENED_OUT,
        outcome_reason="failed the training",
    )
    boss = member(project, "boss", Membership.Role.MANAGER)
    response = api_as(boss).post(
        f"/api/v1/projects/{project.slug}/gold/reset/", {"annotator": "trainee"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["answers_deleted"] == 3
    participant = Participant.objects.get(user=user)
    assert participant.outcome == Participant.Outcome.NONE
    assert participant.training == Participant.Training.NONE
    assert participant.outcome_reason == ""


@pytest.mark.parametrize("who", ["annotator", "stranger"])
def test_only_managers_reset_and_a_refusal_changes_nothing(failed, client, who, caplog):
    project, user = failed
    someone = member(project, "other") if who == "annotator" else UserFactory(username="x")
    before = stored(user)
    client.force_login(someone)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        web = client.post(
            reverse("project-screening-reset", args=[project.slug]), {"annotator": "trainee"}
        )
    api = api_as(someone).post(
        f"/api/v1/projects/{project.slug}/gold/reset/", {"annotator": "trainee"}, format="json"
    )
    assert web.status_code == 404 and api.status_code == 404
    assert stored(user) == before
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED
    assert any("tried to reset" in r.getMessage() for r in caplog.records)


def test_a_person_who_did_not_fail_cannot_be_reset(tmp_path, client, caplog):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    passed = member(project, "good")
    for unit in gold.training_units(project):
        gold.next_training_unit(project, passed, timedelta(minutes=5))
        api_as(passed).post(
            f"/api/v1/projects/{project.slug}/annotations/",
            {"unit": unit.pk, "annotations": truthful(unit)},
            format="json",
        )
    assert gold.training_result(project, passed).status == gold.TrainingStatus.PASSED
    boss = member(project, "boss", Membership.Role.MANAGER)
    before = stored(passed)
    client.force_login(boss)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        response = client.post(
            reverse("project-screening-reset", args=[project.slug]), {"annotator": "good"}
        )
        nobody = client.post(
            reverse("project-screening-reset", args=[project.slug]), {"annotator": "ghost"}
        )
    assert response.status_code == 400 and "nothing to reset" in response.content.decode()
    assert nobody.status_code == 400 and "no such person" in nobody.content.decode()
    assert stored(passed) == before
    assert gold.training_result(project, passed).status == gold.TrainingStatus.PASSED
    assert sum("asked to reset" in r.getMessage() for r in caplog.records) == 2
