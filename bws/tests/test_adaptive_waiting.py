"""An adaptive design's queue can run empty before its next batch is designed (a busy
worker, a crowd faster than the fit). Annotators, crowd participants and programs are then
asked to wait a moment and come back, never told that the work is over (a participant's
session would end with a partial outcome and no completion code); once the batch is
stored they go on. When the design is finished, or a person is at their cap, the work is
over as before."""

import numpy as np
import pytest
from django.urls import reverse

from annotation.queue import next_unit
from bws import adaptive, tasks
from bws.models import TupleBatch
from bws.tests.test_adaptive_platform import CONFIG as STUDY
from bws.tests.test_adaptive_platform import (
    answer,
    no_pending_design,  # noqa: F401 (an autouse fixture: no design request left marked)
    run_now,
)
from crowds.models import Participant
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

N_ITEMS = 40
PEOPLE = """\
max_annotations_per_user: {cap}
participants:
  open_link: true
  id_param: PID
  units_per_participant: 20
  completion_code: "DONE42"
"""
BLOCK = """\
      adaptive:
        initial_appearances: 1
        batch_tuples: 4
        max_appearances: {bound}
        ready_margin: 2
        target: top_k
        k: 0.1"""
# the platform tests' study, with a cap per member, a participant link and Plackett-Luce
CONFIG = (
    STUDY.replace("num_annotators_per_item: 1\n", "num_annotators_per_item: 1\n" + PEOPLE)
    .replace("{adaptive}", BLOCK)
    .replace("method: counting", "method: plackett_luce")
)


@pytest.fixture
def busy_worker(monkeypatch):
    """Design requests are queued but no worker takes them yet."""
    sent = []
    monkeypatch.setattr(adaptive, "send_task", lambda name, *args, **kw: sent.append(name) or 1)
    return sent


def study(tmp_path, settings, *, cap=10, bound=8):
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    folder = tmp_path / "study"
    folder.mkdir()
    truth = np.random.default_rng(3).normal(size=N_ITEMS)
    (folder / "items.jsonl").write_text(
        "".join(f'{{"id": "i{i:02d}", "text": "item {i}"}}\n' for i in range(N_ITEMS))
    )
    (folder / "config.yaml").write_text(CONFIG.format(cap=cap, bound=bound))
    project = import_project(config_path=folder / "config.yaml", slug="waiting").project
    project.truth = dict(zip([f"i{i:02d}" for i in range(N_ITEMS)], truth, strict=True))
    return project


def annotator(project, name):
    user = UserFactory(username=name)
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return user


def answer_all(project, users, rng) -> int:
    """The members take units in turn until the queue has none for any of them."""
    given, idle = 0, 0
    while idle < len(users):
        user = users[given % len(users)]
        unit = next_unit(project=project, user=user)
        if unit is None:
            idle += 1
            users = users[1:] + users[:1]
            continue
        answer(project, user, unit, rng)
        given, idle = given + 1, 0
    return given


def test_an_empty_queue_before_the_next_batch_asks_everyone_to_wait(
    client, tmp_path, settings, busy_worker
):
    project = study(tmp_path, settings)
    first, second = annotator(project, "first"), annotator(project, "second")
    rng = np.random.default_rng(1)
    # the balanced start (10 tuples): the first member reaches their cap of 10 answers
    assert answer_all(project, [first], rng) == 10
    assert adaptive.open_tuples(project) == 0 and busy_worker  # the batch is asked for
    assert TupleBatch.objects.filter(project=project).count() == 1  # not designed yet

    # a member below their cap waits: the page says so and comes back by itself
    client.force_login(second)
    page = client.get(reverse("annotate", args=[project.slug]))
    assert page.status_code == 200
    assert "One moment" in page.content.decode()
    assert page["Refresh"] == f"3; url={reverse('annotate', args=[project.slug])}"
    # a program is told to ask again, with a status that is not "no more work"
    api = client.post(f"/api/v1/projects/{project.slug}/queue/next/")
    assert api.status_code == 202 and api["Retry-After"] == "3"
    assert "being chosen from the answers so far" in api.json()["detail"]
    # the member at their cap is done, as before
    client.force_login(first)
    assert (
        "No more work for you here"
        in client.get(reverse("annotate", args=[project.slug])).content.decode()
    )
    assert client.post(f"/api/v1/projects/{project.slug}/queue/next/").status_code == 204

    # a crowd participant entering now waits too, and their session does not end
    crowd = client.__class__()
    start = crowd.get(reverse("participant-start", args=[project.slug]) + "?PID=p1")
    assert start.status_code == 302
    flow = crowd.get(reverse("participant-flow", args=[project.slug]))
    assert flow.status_code == 200 and "One moment" in flow.content.decode()
    assert flow["Refresh"].endswith(reverse("participant-flow", args=[project.slug]))
    participant = Participant.objects.get(project=project, external_id="p1")
    assert participant.outcome == ""
    # in the participant's language
    german = crowd.get(reverse("participant-flow", args=[project.slug]), HTTP_ACCEPT_LANGUAGE="de")
    assert "Einen Moment" in german.content.decode()

    # the worker designs the batch: everyone goes on
    tasks.design_batch_task.run(project.pk)
    assert TupleBatch.objects.filter(project=project, number__gt=0).exists()
    client.force_login(second)
    page = client.get(reverse("annotate", args=[project.slug]))
    assert "One moment" not in page.content.decode()
    went_on = crowd.get(reverse("participant-flow", args=[project.slug]))
    assert went_on.status_code == 302 and "/annotate/" in went_on["Location"]


def test_a_finished_design_is_the_end_of_the_work(client, tmp_path, settings, monkeypatch):
    """Every item at its bound: no batch can come, and an empty queue means done."""
    monkeypatch.setattr(adaptive, "send_task", run_now)
    project = study(tmp_path, settings, cap=1000, bound=2)
    user = annotator(project, "only")
    answer_all(project, [user], np.random.default_rng(2))
    assert adaptive.design_finished(project)
    client.force_login(user)
    page = client.get(reverse("annotate", args=[project.slug]))
    assert "No more work for you here" in page.content.decode()
    assert "Refresh" not in page
    assert client.post(f"/api/v1/projects/{project.slug}/queue/next/").status_code == 204
