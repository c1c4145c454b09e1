"""'Previous answer' on the unit page goes to the answer given just before this one, in the
order the annotator answered, and is absent on the first answer."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from annotation.instructions import mark_seen
from annotation.models import Assignment
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLES = Path(settings.BASE_DIR) / "examples"


def previous_link(html, slug):
    found = re.search(rf'href="/projects/{slug}/annotate/(\d+)/">← Previous answer', html)
    return int(found.group(1)) if found else None


def answer_next(client, slug="mt"):
    html = client.get(reverse("annotate", args=[slug])).content.decode()
    action = re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)
    ids = re.findall(r'name="fluency__best" value="([^"]+)"', html)
    client.post(
        action,
        {
            "fluency__best": ids[0],
            "fluency__worst": ids[1],
            "adequacy__best": ids[0],
            "adequacy__worst": ids[1],
        },
    )
    return int(action.rstrip("/").split("/")[-1])


@pytest.fixture
def mt(client):
    project = import_project(
        config_path=EXAMPLES / "mt_two_dims" / "config.yaml", slug="mt"
    ).project
    user = UserFactory(username="anna")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    session = client.session  # the instructions shown before a first unit: read
    mark_seen(session, project)
    session.save()
    return project


def page(client, unit_id):
    response = client.get(reverse("annotate-unit", args=["mt", unit_id]))
    assert response.status_code == 200
    return response.content.decode()


def test_previous_walks_back_through_answers_given_on_the_site(client, mt):
    answered = [answer_next(client) for _ in range(3)]
    assert previous_link(page(client, answered[0]), "mt") is None
    assert previous_link(page(client, answered[1]), "mt") == answered[0]
    assert previous_link(page(client, answered[2]), "mt") == answered[1]
    new_work = client.get(reverse("annotate", args=["mt"])).content.decode()
    assert previous_link(new_work, "mt") == answered[2]


def test_answers_stored_at_one_time_go_back_in_the_order_they_were_stored(client, mt):
    """An import stores a file's answers with one time when the file gives none."""
    answered = [answer_next(client) for _ in range(3)]
    Assignment.objects.update(completed_at=timezone.now())
    assert previous_link(page(client, answered[0]), "mt") is None
    assert previous_link(page(client, answered[1]), "mt") == answered[0]
    assert previous_link(page(client, answered[2]), "mt") == answered[1]
