"""SQL statements per next+submit pair, through the API and through a participant's pages:
the queue's throughput is bounded by them, so a change that adds a query to the hot path
fails here (SHOW_STATEMENTS=1 and -s print the statements).

Counts are as the test client sees them on SQLite, inside the test's transaction (so each
atomic block shows as a SAVEPOINT and its RELEASE). Every check stays: access to the
project, the live lease, the caps, the quota, the client id."""

import os
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Assignment
from crowds.models import Participant
from labs.tokens import issue_token
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_reclaim_in_passing(monkeypatch):
    """Expired leases are also reclaimed in 5% of requests, at random (one more statement
    then): off here, so the counts are those of every other request."""
    monkeypatch.setattr("annotation.queue.RECLAIM_IN_PASSING", 0.0)


CONFIG = """annotation_task_name: Statements
task_dir: "."
data_files: [d.jsonl]
item_properties: {id_key: id, text_key: text}
instructions: "Choose the best and the worst."
bws_config: {tuple_size: 4, min_item_appearances: 2, seed: 1}
annotation_schemes:
  - {annotation_type: bws, name: quality, description: Best and worst, tuple_size: 4}
num_annotators_per_item: 2
"""
PARTICIPANTS = """participants:
  open_link: true
  units_per_participant: 5
  completion_code: "C0DE"
"""
# Before the cuts of issue 14: API next 12, submit 13; a participant's unit page 19, answer
# 21, and two redirects (the queue page, then the flow) of 18 together.
# API: 10, 11 until access (project, membership, lab admin) became one statement and an
# answer claimed its client id by an insert instead of reading earlier submissions first.
API_NEXT, API_SUBMIT = 9, 9
# Participant: unit page 16, answer 18, flow 12 until the middleware read the membership
# with the participant (the page's access), the page read the unit with its assignment and
# the answer in hand once, and the answer took the next unit itself (no flow request); then
# 8 and 21, until the page read the unit count, the answered count and the latest answer
# in one statement.
PAGE, ANSWER = 6, 20


def make_project(tmp_path, block=""):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "i{n}", "text": "Text {n}"}}\n' for n in range(40))
    )
    (tmp_path / "c.yaml").write_text(CONFIG + block)
    return import_project(config_path=tmp_path / "c.yaml", slug="st").project


def counted(label, captured) -> int:
    if os.environ.get("SHOW_STATEMENTS"):
        print(f"\n== {label}: {len(captured)} statements")
        for query in captured.captured_queries:
            print("  ", query["sql"][:200])
    return len(captured)


def test_an_api_next_and_submit_pair_stays_within_its_statements(tmp_path):
    project = make_project(tmp_path)
    user = UserFactory()
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    _, key = issue_token(user=user)
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    for n in range(3):
        with CaptureQueriesContext(connection) as asked:
            response = client.post("/api/v1/projects/st/queue/next/")
        assert response.status_code == 200
        unit = response.json()
        body = {
            "unit": unit["id"],
            "annotations": {
                "quality": {"best": unit["items"][0]["id"], "worst": unit["items"][1]["id"]}
            },
            "client_id": f"00000000-0000-4000-8000-00000000000{n}",
        }
        with CaptureQueriesContext(connection) as sent:
            response = client.post(
                "/api/v1/projects/st/annotations/", body, content_type="application/json"
            )
        assert response.status_code == 201, response.content
        stored = Annotation.objects.get(unit_id=unit["id"], annotator=user)
        assert response.json()[0]["id"] == stored.pk  # the answer returned is the one stored
        assert counted(f"API next {n}", asked) <= API_NEXT
        assert counted(f"API submit {n}", sent) <= API_SUBMIT
    assert Annotation.objects.filter(annotator=user).count() == 3


def test_a_participants_unit_page_and_answer_stay_within_their_statements(tmp_path):
    make_project(tmp_path, PARTICIPANTS)
    client = Client()
    response = client.get("/p/st/start?PROLIFIC_PID=abc")
    response = client.get(response["Location"])
    assert client.get(response["Location"]).status_code == 200  # the instructions
    location = client.get("/p/st/")["Location"]
    for n in range(3):
        with CaptureQueriesContext(connection) as shown:
            response = client.get(location)
        assert response.status_code == 200
        html = response.content.decode()
        ids = re.findall(r'name="quality__best" value="([^"]+)"', html)
        client_id = re.search(r'name="client_id" value="([^"]+)"', html).group(1)
        form = {"quality__best": ids[0], "quality__worst": ids[1], "client_id": client_id}
        with CaptureQueriesContext(connection) as sent:
            response = client.post(location, form)
        # straight to the next unit's page, reserved by the answer's request
        assert "/annotate/" in response["Location"] and response["Location"] != location
        location = response["Location"]
        assert counted(f"unit page {n}", shown) <= PAGE
        assert counted(f"answer and next {n}", sent) <= ANSWER
    participant = Participant.objects.get(external_id="abc")
    assert Annotation.objects.filter(annotator=participant.user).count() == 3
    assert Assignment.objects.filter(annotator=participant.user).count() == 4  # 3 + one in hand
