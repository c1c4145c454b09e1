"""A small two-lab world for the security tests: who is who, and a project with something
behind every URL (items, tuples, units, answers, a score run, an agreement report)."""

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROLES = (
    "anonymous",
    "no_lab",
    "annotator",
    "other_annotator",
    "lab_member",
    "other_admin",
    "lab_admin",
    "superuser",
)

PASSWORD = "pw-for-tests-123"

BWS_CONFIG = """annotation_task_name: Security world
data_files: [items.jsonl]
item_properties: {id_key: id, text_key: text}
bws_config:
  tuple_size: 4
  min_item_appearances: 4
  seed: 7
  scoring: {method: counting}
annotation_schemes:
  - annotation_type: bws
    name: quality
    description: Best and worst
    tuple_size: 4
"""

RADIO_CONFIG = """annotation_task_name: Other lab's study
data_files: [docs.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
"""

# Every kind of answer an annotator can type, on instance units: the fuzz test's target.
SURVEY_CONFIG = """annotation_task_name: Lab one survey
data_files: [survey.jsonl]
annotation_schemes:
  - {annotation_type: text, name: note, description: Note}
  - {annotation_type: likert, name: fluency, description: Fluency, size: 5}
  - {annotation_type: multiselect, name: tags, description: Tags, labels: [a, b, c]}
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car, truck]}
  - {annotation_type: temporal_grounding, name: events, description: When, labels: [stop, go]}
  - {annotation_type: process_reward, name: steps, description: Each step, labels: [good, bad]}
"""

OPEN_CONFIG = """annotation_task_name: Open study
data_files: [docs.jsonl]
user_config: {allow_all_users: true}
annotation_schemes:
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
"""


@dataclass
class World:
    """Two labs; `project` (BWS, lab 1) is the one every role is judged against; the
    `other_project` in lab 2 gives the other lab's annotator and admin something of their own."""

    lab: object
    other_lab: object
    project: object
    other_project: object
    users: dict = field(default_factory=dict)  # role -> user (no entry for anonymous)
    unit: object = None  # a unit the annotator answered
    run: object = None  # a good score run of the project
    report: object = None  # a stored agreement report of the project
    survey: object = None  # a second project of lab 1 with every kind of typed answer
    open_project: object = None  # a project of lab 1 open to every user (allow_all_users)
    survey_unit: object = None  # a unit of it the annotator answered
    token: str = ""  # the annotator's API token, from the token endpoint
    token_key: str = ""  # its public name

    def user(self, role):
        return self.users.get(role)


def build_world(tmp_path) -> World:
    from django.contrib.auth.models import Group
    from django.test import Client
    from django.urls import reverse

    from agreement import services as agreement_services
    from annotation.answers import submit_answers
    from annotation.models import Assignment
    from annotation.queue import next_unit
    from bws import services as bws_services
    from projects.models import Membership
    from projects.services import (
        create_lab,
        import_project,
        mark_model_judge,
        remove_project_member,
    )
    from projects.tests.factories import MembershipFactory, UserFactory

    def person(username, **extra):
        return UserFactory(username=username, password=PASSWORD, **extra)

    users = {
        "no_lab": person("nolab"),
        "annotator": person("annotator"),
        "other_annotator": person("otherannotator"),
        "lab_member": person("labmember"),
        "other_admin": person("otheradmin"),
        "lab_admin": person("labadmin"),
        "superuser": person("root", is_staff=True, is_superuser=True),
    }
    lab = create_lab(
        name="Lab One", slug="lab-one", admins=[users["lab_admin"]], members=[users["lab_member"]]
    )
    other_lab = create_lab(
        name="Lab Two",
        slug="lab-two",
        admins=[users["other_admin"]],
        members=[users["other_annotator"]],
    )

    folder = tmp_path / "world"
    folder.mkdir()
    items = [{"id": f"it{n}", "text": f"Sentence number {n}"} for n in range(8)]
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "config.yaml").write_text(BWS_CONFIG)
    project = import_project(config_path=folder / "config.yaml", lab=lab, slug="bws-study").project
    docs = [{"id": f"doc{n}", "text": f"Document {n}"} for n in range(3)]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "other.yaml").write_text(RADIO_CONFIG)
    other_project = import_project(
        config_path=folder / "other.yaml", lab=other_lab, slug="other-study"
    ).project
    (folder / "open.yaml").write_text(OPEN_CONFIG)
    open_project = import_project(config_path=folder / "open.yaml", lab=lab, slug="open-study")
    assert open_project.project.allow_all_users
    MembershipFactory(user=users["annotator"], project=project, role=Membership.Role.ANNOTATOR)
    rows = [
        {"id": f"s{n}", "text": f"Trace {n}", "media_url": "/v.mp4", "steps": [{"a": 1}, {"a": 2}]}
        for n in range(3)
    ]
    (folder / "survey.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "survey.yaml").write_text(SURVEY_CONFIG)
    survey = import_project(config_path=folder / "survey.yaml", lab=lab, slug="survey").project
    MembershipFactory(user=users["annotator"], project=survey, role=Membership.Role.ANNOTATOR)
    survey_unit = next_unit(project=survey, user=users["annotator"])
    submit_answers(
        project=survey,
        user=users["annotator"],
        unit_id=survey_unit.pk,
        answers={"note": "fine", "fluency": 4, "steps": {"0": "good", "1": "bad"}},
    )
    MembershipFactory(
        user=users["other_annotator"], project=other_project, role=Membership.Role.ANNOTATOR
    )

    # Answers from the annotator and two helpers, so scores and agreement exist.
    helpers = [person("helper1"), person("helper2")]
    for user in helpers:
        MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    answered = None
    for n, user in enumerate([users["annotator"], *helpers]):
        while (unit := next_unit(project=project, user=user)) is not None:
            ids = unit.bws_tuple.item_ids
            ranked = sorted(ids)
            submit_answers(
                project=project,
                user=user,
                unit_id=unit.pk,
                answers={"quality": {"best": ranked[0], "worst": ranked[-1]}},
                # unit keys are random and long: a name-based UUID per person and unit
                client_id=uuid.uuid5(uuid.NAMESPACE_OID, f"{n}-{unit.pk}"),
            )
            if user == users["annotator"] and answered is None:
                answered = unit
    assert Assignment.objects.filter(unit=answered, annotator=users["annotator"]).exists()

    run = bws_services.request_run(project=project, scheme="quality", bootstrap=20)
    run = bws_services.execute_run(run.pk)
    assert run.status == "ok", run.error
    report = agreement_services.compute_report(project=project)
    judge = person("judge")
    mark_model_judge(user=judge, model_name="a model")
    # someone the other lab's admin removed from their project (a Removal on record)
    remove_project_member(project=other_project, user=judge, removed_by=users["other_admin"])
    Group.objects.create(name="reviewers")
    token = api_token("annotator")
    failed = api_login("nobody", "wrong password")  # leaves a record of a failed login
    assert failed.status_code == 400, failed.content
    web = Client().post(reverse("login"), {"username": "annotator", "password": PASSWORD})
    assert web.status_code == 302, "the annotator logs in on the web"
    reset = Client().post(reverse("password_reset"), {"email": users["annotator"].email})
    assert reset.status_code == 302, "the annotator asks for a password reset"
    return World(
        lab=lab,
        other_lab=other_lab,
        project=project,
        other_project=other_project,
        users=users,
        unit=answered,
        run=run,
        report=report,
        survey=survey,
        open_project=open_project.project,
        survey_unit=survey_unit,
        token=token["token"],
        token_key=token.get("token_key", ""),
    )


def api_login(username: str, password: str):
    """POST to the token endpoint, as an API client logs in."""
    from django.test import Client
    from django.urls import reverse

    return Client().post(
        reverse("api-token"),
        {"username": username, "password": password},
        content_type="application/json",
    )


def api_token(username: str, password: str = PASSWORD) -> dict:
    """A new API token for the user: the token endpoint's JSON reply."""
    response = api_login(username, password)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def fast_passwords(settings):
    """A cheap password hasher, so creating and logging in test users costs no CPU."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(db, tmp_path, fast_passwords, monkeypatch):
    """The two-lab world (see World), built with no task sent to a broker."""
    from bws import scheduling as bws_scheduling

    monkeypatch.setattr(bws_scheduling, "send_task", lambda *a, **k: True)
    return build_world(tmp_path)


SECURITY_TEST_TIMEOUT = 120  # seconds; each attack is refused quickly or the test fails


def pytest_collection_modifyitems(items):
    """Every security test is bounded in time (pytest-timeout); the tests that could
    allocate much run their attack in a child process under an address-space limit."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SECURITY_TEST_TIMEOUT))
