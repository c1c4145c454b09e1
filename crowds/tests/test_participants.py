"""Participant links: a crowd participant enters one project by a public link naming them,
accepts the consent text, reads the instructions, answers at most their quota of units and
gets the completion code; the same id resumes, and the session opens no other page."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.answers import submit_answers
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from crowds.models import Participant
from projects.configuration import ConfigError, load_config
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

User = get_user_model()

HEAD = """task_name: Crowd study
data_files: [d.jsonl]
instructions: "# How to judge\\n\\nSay **yes** when the text is polite."
annotation_schemes:
  - {annotation_type: radio, name: q, description: Is it polite, labels: [yes_, no_]}
"""
BLOCK = """participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: 3
  completion_code: "C1A2B3"
  completion_url: "https://panel.example.org/complete?cc=C1A2B3"
  consent: "I agree that my **answers** are stored."
"""


def write(tmp_path, block: str = BLOCK, units: int = 6):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Text {n}"}}\n' for n in range(units))
    )
    (tmp_path / "c.yaml").write_text(HEAD + block)
    return tmp_path / "c.yaml"


def make_project(tmp_path, block: str = BLOCK, slug: str = "crowd", units: int = 6):
    folder = tmp_path / slug
    folder.mkdir()
    return import_project(config_path=write(folder, block, units), slug=slug).project


def start_url(slug="crowd", **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("participant-start", args=[slug]) + (f"?{query}" if query else "")


def enter(client, slug="crowd", pid="abc123", **params):
    """Opens the link and follows the flow to the first unit (consent and instructions)."""
    response = client.get(start_url(slug, PROLIFIC_PID=pid, **params))
    assert response.status_code == 302
    response = client.get(response["Location"])
    assert response["Location"] == reverse("participant-consent", args=[slug])
    assert client.post(response["Location"], {"agree": "yes"}).status_code == 302
    response = client.get(reverse("participant-flow", args=[slug]))
    assert response["Location"] == reverse("project-instructions", args=[slug])
    assert client.get(response["Location"]).status_code == 200
    return client.get(reverse("participant-flow", args=[slug]))


def answer(client, response, label="yes_"):
    """Answers the unit a flow redirect leads to; returns where the answer leads next."""
    unit_url = response["Location"]
    assert "/annotate/" in unit_url, unit_url
    assert client.get(unit_url).status_code == 200
    response = client.post(unit_url, {"q": label})
    # the answer sends a participant straight to their next step, the next unit (reserved
    # by the answer's request) or the code: no hop through the flow or the queue page
    assert response.status_code == 302
    assert response["Location"] not in ("/projects/crowd/annotate/", "/p/crowd/")
    return response


@pytest.fixture
def project(db, tmp_path):
    return make_project(tmp_path)


# --------------------------------------------------------------------------- the config


def test_the_participants_block_is_read_with_its_defaults(tmp_path):
    config = load_config(write(tmp_path))
    block = config.participants
    assert block.open_link and block.units_per_participant == 3
    assert block.completion_code == "C1A2B3" and block.max_participants == 5000
    assert load_config(write(tmp_path, "")).participants is None


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("participants:\n  open_lnk: true\n", "did you mean 'open_link'"),
        ("participants:\n  id_param: 'bad name'\n", "must be a query parameter name"),
        ("participants:\n  completion_url: 'javascript:alert(1)'\n", "http:// or https://"),
        ("participants:\n  units_per_participant: 0\n", "positive integer"),
    ],
)
def test_a_wrong_participants_block_is_refused_by_name(tmp_path, block, message):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, block))
    assert any(message in str(issue) for issue in caught.value.issues), caught.value.issues


# --------------------------------------------------------------------------- the flow


def test_entry_consent_instructions_units_and_completion_code(project):
    client = Client()
    response = enter(client, STUDY_ID="s1", SESSION_ID="x9")
    for _ in range(3):
        response = answer(client, response)
        if response.status_code == 302 and "/done/" in response["Location"]:
            break
    assert response["Location"] == reverse("participant-done", args=["crowd"])
    done = client.get(response["Location"])
    assert done.status_code == 200
    page = done.content.decode()
    assert "C1A2B3" in page
    assert 'href="https://panel.example.org/complete?cc=C1A2B3"' in page
    assert done["Refresh"].endswith("url=https://panel.example.org/complete?cc=C1A2B3")
    participant = Participant.objects.get(project=project, external_id="abc123")
    assert participant.params == {"STUDY_ID": "s1", "SESSION_ID": "x9"}
    assert participant.consent_at and participant.instructions_seen_at and participant.completed_at
    membership = Membership.objects.get(project=project, user=participant.user)
    assert membership.role == Membership.Role.ANNOTATOR
    assert not participant.user.has_usable_password()
    assert "abc123" not in participant.user.username
    assert Annotation.objects.filter(annotator=participant.user).count() == 3


def test_consent_must_be_ticked(project):
    client = Client()
    client.get(start_url(PROLIFIC_PID="p1"))
    consent = reverse("participant-consent", args=["crowd"])
    page = client.get(consent)
    assert "<strong>answers</strong>" in page.content.decode()
    refused = client.post(consent, {})
    assert refused.status_code == 400
    assert "Tick the box" in refused.content.decode()
    assert Participant.objects.get(external_id="p1").consent_at is None
    # no unit before consent: the flow sends the participant back to the consent page
    assert client.get(reverse("participant-flow", args=["crowd"]))["Location"] == consent


def test_the_quota_holds_in_the_queue_and_on_submit(project):
    client = Client()
    response = enter(client)
    for _ in range(3):
        response = answer(client, response)
    user = Participant.objects.get(external_id="abc123").user
    assert Assignment.objects.filter(annotator=user).count() == 3
    # asking again gives no fourth unit, whichever page asks
    assert client.get(reverse("participant-flow", args=["crowd"]))["Location"].endswith("/done/")
    assert client.get(reverse("annotate", args=["crowd"])).status_code == 302
    assert Assignment.objects.filter(annotator=user).count() == 3
    assert Annotation.objects.filter(annotator=user).count() == 3


def test_a_second_visit_resumes_and_another_id_is_a_new_participant(project):
    first = Client()
    response = enter(first, pid="same-id", SESSION_ID="one")
    response = answer(first, response)
    unit_url = response["Location"]
    users = User.objects.count()
    again = Client()  # another browser, the same panel id
    resumed = again.get(start_url(PROLIFIC_PID="same-id", SESSION_ID="two"))
    assert User.objects.count() == users
    assert Participant.objects.filter(project=project).count() == 1
    # consent and instructions are remembered: straight back to the unit in hand
    assert again.get(resumed["Location"])["Location"] == unit_url
    assert Participant.objects.get(external_id="same-id").params == {"SESSION_ID": "two"}
    other = Client()
    other.get(start_url(PROLIFIC_PID="another-id"))
    assert Participant.objects.filter(project=project).count() == 2
    assert User.objects.count() == users + 1
    assert len({p.user_id for p in Participant.objects.all()}) == 2


def test_no_unit_left_before_the_quota_ends_with_no_more_work_not_the_code(db, tmp_path):
    make_project(tmp_path, units=2)
    client = Client()
    response = enter(client)
    for _ in range(2):
        response = answer(client, response)
    assert response["Location"].endswith("/done/")
    page = client.get(response["Location"]).content.decode()
    assert "No more work for you" in page and "You answered 2 of 3 units" in page
    assert "C1A2B3" not in page and "panel.example.org" not in page
    participant = Participant.objects.get()
    assert participant.outcome == Participant.Outcome.PARTIAL and participant.completed_at is None


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("", 400, "participant id is missing"),
        ("?PROLIFIC_PID=", 400, "participant id is missing"),
        ("?PROLIFIC_PID=a%20b", 400, "not valid"),
        ("?PROLIFIC_PID=" + "x" * 65, 400, "not valid"),
        ("?PROLIFIC_PID=<script>", 400, "not valid"),
        ("?PROLIFIC_PID=ok&NOTE=" + "y" * 201, 400, "too long"),
        ("?PROLIFIC_PID=ok&" + "&".join(f"k{n}=v" for n in range(21)), 400, "too many"),
    ],
)
def test_a_missing_or_malformed_id_gets_a_clear_page(project, query, status, words):
    response = Client().get(reverse("participant-start", args=["crowd"]) + query)
    assert response.status_code == status
    assert words in response.content.decode()
    assert not Participant.objects.exists()


def test_a_closed_link_or_unknown_project_is_a_clear_404(db, tmp_path):
    make_project(tmp_path, BLOCK.replace("open_link: true", "open_link: false"))
    make_project(tmp_path, "", slug="plain")
    for slug in ("crowd", "plain", "no-such"):
        response = Client().get(start_url(slug, PROLIFIC_PID="abc"))
        assert response.status_code == 404
        assert "link is closed" in response.content.decode()
    assert not Participant.objects.exists()


def test_max_participants_is_held(db, tmp_path):
    make_project(tmp_path, BLOCK + "  max_participants: 2\n")
    for pid in ("a1", "a2"):
        assert Client().get(start_url(PROLIFIC_PID=pid)).status_code == 302
    full = Client().get(start_url(PROLIFIC_PID="a3"))
    assert full.status_code == 403
    assert "(2)" in full.content.decode() and "full" in full.content.decode()
    # those already in may still come back
    assert Client().get(start_url(PROLIFIC_PID="a1")).status_code == 302
    assert Participant.objects.count() == 2


# --------------------------------------------------------------------------- the scope


def test_a_participant_opens_no_other_page(project, tmp_path):
    other = make_project(tmp_path, BLOCK, slug="other-study")
    client = Client()
    response = enter(client)
    flow = reverse("participant-flow", args=["crowd"])
    for url in (
        reverse("home"),
        reverse("project-detail", args=["crowd"]),
        reverse("project-detail", args=[other.slug]),
        reverse("annotate", args=[other.slug]),
        reverse("project-instructions", args=[other.slug]),
        reverse("participant-flow", args=[other.slug]),
        reverse("project-export", args=["crowd"]),
        reverse("password_change"),
        "/admin/",
    ):
        refused = client.get(url)
        assert refused.status_code == 302 and refused["Location"] == flow, url
    assert client.post(reverse("project-members", args=["crowd"]), {}).status_code == 404
    assert client.get("/api/v1/projects/").status_code == 404
    assert client.post("/api/v1/auth/token/revoke-all/").status_code == 404
    # their own unit page still opens
    assert client.get(response["Location"]).status_code == 200


def test_the_unit_page_shows_the_study_and_the_quota_not_the_site_menu(project):
    client = Client()
    response = enter(client)
    page = client.get(response["Location"]).content.decode()
    assert "My projects" not in page and 'href="/api/' not in page
    assert "0 / 3 answered by you" in page  # the quota, not the project's six units


def unit_heading(page: str) -> str:
    return re.search(r"(?:Item|Tuple|Unit) \d+ of \d+", page).group(0)


def test_a_participant_counts_their_quota_not_the_projects_units(db, tmp_path):
    make_project(tmp_path, units=40)
    client = Client()
    response = enter(client)
    seen = []
    for _ in range(3):
        page = client.get(response["Location"]).content.decode()
        seen.append((unit_heading(page), re.search(r"\d+ / \d+ answered by you[^<]*", page)[0]))
        response = answer(client, response)
    assert seen == [
        ("Unit 1 of 3", "0 / 3 answered by you (0%) · 3 left for you"),
        ("Unit 2 of 3", "1 / 3 answered by you (33%) · 2 left for you"),
        ("Unit 3 of 3", "2 / 3 answered by you (67%) · 1 left for you"),
    ]
    assert response["Location"].endswith("/done/")


def test_a_participant_is_told_of_fewer_units_left_than_their_quota(db, tmp_path):
    """With one answer a unit and four of the six units answered by a member, two are
    left for the participant: their count says so."""
    project = make_project(tmp_path, block="num_annotators_per_item: 1\n" + BLOCK)
    member = UserFactory()
    MembershipFactory(user=member, project=project)
    for _ in range(4):
        unit = next_unit(project=project, user=member)
        submit_answers(project=project, user=member, unit_id=unit.pk, answers={"q": "no_"})
    client = Client()
    page = client.get(enter(client)["Location"]).content.decode()
    assert unit_heading(page) == "Unit 1 of 2"
    assert "0 / 2 answered by you (0%) · 2 left for you" in page


def test_a_manager_sees_participants_with_their_state(project):
    Client().get(start_url(PROLIFIC_PID="just-came"))
    client = Client()
    response = enter(client, pid="worker-7", STUDY_ID="s1")
    answer(client, response)
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    boss = Client()
    boss.force_login(manager)
    page = boss.get(reverse("project-detail", args=["crowd"])).content.decode()
    assert "worker-7" in page and "Annotating: 1 of 3" in page
    assert "just-came" in page and "Not yet consented" in page
    assert "STUDY_ID=s1" in page
    assert "/p/crowd/start?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}" in page


def test_a_failed_training_stops_the_participant(project):
    client = Client()
    client.get(start_url(PROLIFIC_PID="abc123"))
    participant = Participant.objects.get(external_id="abc123")
    participant.training = Participant.Training.FAILED
    participant.save()
    stopped = client.get(reverse("participant-flow", args=["crowd"]), follow=True)
    assert stopped.status_code == 200
    assert "Thank you for your time" in stopped.content.decode()
    assert "C1A2B3" not in stopped.content.decode()
    assert Assignment.objects.filter(annotator=participant.user).count() == 0
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    boss = Client()
    boss.force_login(manager)
    page = boss.get(reverse("project-detail", args=["crowd"])).content.decode()
    assert "Screened out: failed the training" in page


def test_the_flow_sends_a_participant_to_training_until_it_is_passed(project, monkeypatch):
    """The hook the gold units' training plugs into (crowds/flow.py)."""
    from crowds import flow as participant_flow

    monkeypatch.setattr(
        participant_flow,
        "training_required",
        lambda p: p.training not in (Participant.Training.PASSED, Participant.Training.FAILED),
    )
    monkeypatch.setattr(participant_flow, "training_url", lambda p: "/projects/crowd/training/")
    client = Client()
    client.get(start_url(PROLIFIC_PID="trainee"))
    client.post(reverse("participant-consent", args=["crowd"]), {"agree": "yes"})
    client.get(reverse("project-instructions", args=["crowd"]))
    flow = reverse("participant-flow", args=["crowd"])
    assert client.get(flow)["Location"] == "/projects/crowd/training/"
    participant = Participant.objects.get(external_id="trainee")
    assert not Assignment.objects.filter(annotator=participant.user).exists()
    participant.training = Participant.Training.PASSED
    participant.save()
    assert "/annotate/" in client.get(flow)["Location"]


def test_a_participant_removed_by_a_manager_gets_no_more_units(project):
    client = Client()
    response = enter(client)
    answer(client, response)
    participant = Participant.objects.get(external_id="abc123")
    Membership.objects.filter(user=participant.user).delete()
    taken = Assignment.objects.filter(annotator=participant.user).count()
    refused = client.get(reverse("participant-flow", args=["crowd"]))
    assert refused.status_code == 403
    assert "no longer part of this study" in refused.content.decode()
    assert Client().get(start_url(PROLIFIC_PID="abc123")).status_code == 302  # resumes, then
    assert Assignment.objects.filter(annotator=participant.user).count() == taken


# --------------------------------------------------------------------------- with training

GOLD = """gold:
  file: gold.jsonl
  attention_rate: 0
  training:
    units: 2
    pass_threshold: 1.0
"""


def trained_project(tmp_path):
    folder = tmp_path / "crowd"
    folder.mkdir()
    write(folder, BLOCK + GOLD)
    (folder / "gold.jsonl").write_text(
        '{"instance": "u0", "answers": {"q": "yes_"}}\n'
        '{"instance": "u1", "answers": {"q": "no_"}}\n'
    )
    return import_project(config_path=folder / "c.yaml", slug="crowd").project


def train(client, labels):
    """Answers the training's units with these labels, from the flow's redirect on."""
    training = reverse("project-training", args=["crowd"])
    assert client.get(reverse("participant-flow", args=["crowd"]))["Location"] == training
    for label in labels:
        assert client.get(training).status_code == 200
        assert client.post(training, {"q": label}).status_code == 302


def start_and_consent(client, pid):
    client.get(start_url(PROLIFIC_PID=pid))
    client.post(reverse("participant-consent", args=["crowd"]), {"agree": "yes"})
    client.get(reverse("project-instructions", args=["crowd"]))


def test_training_passed_then_the_quota_of_ordinary_units(db, tmp_path):
    project = trained_project(tmp_path)
    client = Client()
    start_and_consent(client, "good")
    train(client, ["yes_", "no_"])
    participant = Participant.objects.get(external_id="good")
    assert participant.training == Participant.Training.PASSED
    response = client.get(reverse("participant-flow", args=["crowd"]))
    # the page counts toward the quota, the training not included
    assert "0 / 3 answered by you" in client.get(response["Location"]).content.decode()
    for _ in range(3):
        response = answer(client, response)
    assert response["Location"].endswith("/done/")
    done = Assignment.objects.filter(annotator=participant.user, status="completed")
    assert done.filter(unit__is_gold=False).count() == 3  # the quota, after the training
    assert done.filter(unit__is_gold=True).count() == 2
    assert project.units.filter(is_gold=False).count() == 4


def test_training_failed_stops_the_participant_and_the_manager_sees_it(db, tmp_path):
    project = trained_project(tmp_path)
    client = Client()
    start_and_consent(client, "careless")
    train(client, ["no_", "no_"])
    participant = Participant.objects.get(external_id="careless")
    assert participant.training == Participant.Training.FAILED
    for url in (reverse("participant-flow", args=["crowd"]), reverse("annotate", args=["crowd"])):
        stopped = client.get(url, follow=True)
        assert "Thank you for your time" in stopped.content.decode()
    assert not Assignment.objects.filter(annotator=participant.user, unit__is_gold=False).exists()
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    boss = Client()
    boss.force_login(manager)
    page = boss.get(reverse("project-detail", args=["crowd"])).content.decode()
    assert "Screened out: failed the training" in page


def test_a_logged_in_member_opening_the_link_stays_who_they_are(project):
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    client = Client()
    client.force_login(manager)
    refused = client.get(start_url(PROLIFIC_PID="boss-test"))
    assert refused.status_code == 409
    assert "private window" in refused.content.decode()
    assert not Participant.objects.exists()
    assert client.get(reverse("project-detail", args=["crowd"])).status_code == 200


def test_a_participant_session_may_open_another_study_link(project, tmp_path):
    make_project(tmp_path, BLOCK, slug="second")
    client = Client()
    client.get(start_url(PROLIFIC_PID="twice"))
    assert client.get(start_url("second", PROLIFIC_PID="twice")).status_code == 302
    assert Participant.objects.filter(external_id="twice").count() == 2
    # now scoped to the second study only
    first = client.get(reverse("participant-flow", args=["crowd"]))
    assert first["Location"] == reverse("participant-flow", args=["second"])
