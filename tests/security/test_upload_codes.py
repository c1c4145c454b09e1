"""Upload checks for the participants block: the panel addresses (completion_url and the
partial and screen-out urls) and every code refuse control characters and anything a browser
or a proxy would refuse in a header, naming the key; a refused upload makes no project. An
address must be absolute http(s); a code printable and bounded. A good block still loads."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from crowds.models import Participant
from projects.models import Project
from projects.tests.factories import LabFactory, LabMembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

HEAD = """task_name: Panel study
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Yes or no, labels: [yes_, no_]}
participants:
  open_link: true
  units_per_participant: 1
"""
GOOD = "https://panel.example.org/submissions/complete?cc=C1A2B3"


def block(**keys) -> str:
    """The participants block with these keys (nested ones as JSON mappings)."""
    return HEAD + "".join(f"  {key}: {json.dumps(value)}\n" for key, value in keys.items())


@pytest.fixture
def admin(client):
    lab = LabFactory()
    user = UserFactory()
    LabMembershipFactory(lab=lab, user=user, is_admin=True)
    client.force_login(user)
    client.lab = lab
    return client


def upload(client, text: str):
    rows = "".join(json.dumps({"id": f"u{n}", "text": f"t{n}"}) + "\n" for n in range(3))
    return client.post(
        reverse("project-create"),
        {
            "lab": client.lab.pk,
            "config_file": SimpleUploadedFile("config.yaml", text.encode()),
            "data_files": [SimpleUploadedFile("d.jsonl", rows.encode())],
        },
    )


ATTACKS = [
    # the reported case: ESC in the completion URL made every done page a 500
    (
        {"completion_url": GOOD + "\x1b"},
        "participants.completion_url: contains a control character (U+001B)",
    ),
    ({"completion_url": GOOD + "\r\nSet-Cookie: a=b"}, "completion_url: contains a control"),
    ({"completion_url": GOOD + "\x7f"}, "completion_url: contains a control character (U+007F)"),
    ({"completion_url": GOOD + "\u0085"}, "completion_url: contains a control character (U+0085)"),
    ({"completion_url": GOOD + "\u2028x"}, "completion_url: contains a space or other blank"),
    ({"completion_url": "https://panel.example.org/é"}, "completion_url: contains a character"),
    ({"completion_url": "https://panel.example.org/a b"}, "completion_url: contains a space"),
    ({"completion_url": "javascript:alert(1)"}, "completion_url: must be an absolute http"),
    ({"completion_url": "//panel.example.org/x"}, "completion_url: must be an absolute http"),
    ({"completion_url": "/done"}, "completion_url: must be an absolute http"),
    ({"completion_url": "https://" + "a" * 2001}, "completion_url: must be at most 2000"),
    ({"completion_code": "C1\x1b[31m"}, "participants.completion_code: contains a control"),
    ({"completion_code": "C1\nC2"}, "completion_code: contains a control character (U+000A)"),
    ({"completion_code": "C1\u200bC2"}, "completion_code: contains a character outside"),
    ({"completion_code": "X" * 201}, "completion_code: must be at most 200"),
    ({"completion_code": " C1"}, "completion_code: must not start or end with a space"),
    ({"partial": {"code": "P\x01"}}, "participants.partial.code: contains a control"),
    ({"partial": {"url": GOOD + "\x1b"}}, "participants.partial.url: contains a control"),
    ({"partial": {"url": "data:text/html,x"}}, "participants.partial.url: must be an absolute"),
    ({"partial": {"message": "a\x1bb"}}, "participants.partial.message: contains a control"),
    ({"screen_out": {"code": "S\x08"}}, "participants.screen_out.code: contains a control"),
    ({"screen_out": {"url": GOOD + "\t"}}, "participants.screen_out.url: contains a control"),
    ({"screen_out": {"colour": "red"}}, "participants.screen_out.colour: unknown key"),
    ({"lease_minutes": 100000}, "participants.lease_minutes: must be at most 120"),
    ({"lease_minutes": 0}, "participants.lease_minutes: must be a positive integer"),
]


@pytest.mark.parametrize(("keys", "message"), ATTACKS)
def test_a_bad_panel_address_or_code_is_refused_at_upload_by_name(admin, keys, message):
    response = upload(admin, block(**keys))
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page.replace("&#x27;", "'"), page[-3000:]
    assert not Project.objects.exists()


def test_good_addresses_and_codes_load_and_the_done_page_sends_the_participant_back(admin):
    text = block(
        completion_code="C1A2B3",
        completion_url=GOOD,
        partial={"code": "PART-1", "url": GOOD + "&partial=1", "message": "No more units."},
        screen_out={"code": "SCREEN 2", "url": "http://panel.example.org/back"},
    )
    response = upload(admin, text)
    assert response.status_code == 302, response.content.decode()[-2000:]
    project = Project.objects.get()
    block_ = project.settings.participants
    assert block_.partial.code == "PART-1" and block_.screen_out.code == "SCREEN 2"
    assert block_.lease_minutes == 10
    participant = Client()
    start = reverse("participant-start", args=[project.slug]) + "?PROLIFIC_PID=p1"
    assert participant.get(start).status_code == 302
    flow = participant.get(reverse("participant-flow", args=[project.slug]))
    unit = flow["Location"]
    participant.post(unit, {"q": "yes_"})
    done = participant.get(reverse("participant-done", args=[project.slug]))
    assert done.status_code == 200
    assert done["Refresh"] == f"10; url={GOOD}"
    assert Participant.objects.get().outcome == Participant.Outcome.COMPLETED
