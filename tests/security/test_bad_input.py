"""Bad input on the answer and form side gets a 400 with a message and stores nothing: numbers
out of range or in other scripts' digits, NULs and lone surrogates, JSON nested deep, answers
past the size limits (each named with its setting and value), malformed member forms."""

import json
import re
import time
import uuid

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation
from projects.models import LabMembership, Membership
from projects.services import import_project
from projects.tests.factories import (
    LabFactory,
    LabMembershipFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

CONFIG = """annotation_task_name: Bad input
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - {annotation_type: text, name: note, description: Note}
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car, truck]}
  - {annotation_type: temporal_grounding, name: speech, description: Speech, labels: [talk]}
  - {annotation_type: process_reward, name: steps, description: Each step, labels: [good, bad]}
"""

BOX = {"label": "car", "center": [1, 2, 3], "size": [4, 2, 1.5], "yaw": 0.1}


@pytest.fixture
def project(tmp_path):
    rows = [
        {
            "id": f"doc{n}",
            "text": f"Document {n}",
            "media_url": "/static/none.mp4",
            "steps": [{"action": f"step {k}"} for k in range(3)],
        }
        for n in range(3)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "c.yaml", slug="bad").project
    project.allow_all_users = False
    project.save()
    return project


@pytest.fixture
def annotator(project):
    user = UserFactory(username="anna")
    MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return user


@pytest.fixture
def api(annotator):
    client = APIClient()
    client.force_authenticate(annotator)
    return client


@pytest.fixture
def unit_id(api, project):
    response = api.post("/api/v1/projects/bad/queue/next/")
    assert response.status_code == 200
    return response.json()["id"]


URL = "/api/v1/projects/bad/annotations/"


def post_text(api, text: str):
    """POST a JSON body exactly as written (escapes such as \\ud800 stay as sent)."""
    return api.generic("POST", URL, text.encode(), content_type="application/json")


def refused(response, *fragments):
    """A 400 whose body is readable JSON holding every fragment; nothing was stored."""
    assert response.status_code == 400, response.content[:500]
    text = response.content.decode("utf-8")
    json.loads(text)
    for fragment in fragments:
        assert fragment in text, text[:500]
    assert not Annotation.objects.exists()
    return text


# --- the REST API ---------------------------------------------------------------------------


@pytest.mark.parametrize("ms", [2**31, 2**31 + 5, 10**20, -1])
def test_time_taken_out_of_range(api, unit_id, ms):
    body = {"unit": unit_id, "annotations": {"topic": "sport"}, "time_taken_ms": ms}
    text = refused(api.post(URL, body, format="json"), "time_taken_ms")
    assert "2147483647" in text or "0" in text


def test_time_taken_at_the_top_of_the_range_is_kept(api, unit_id):
    body = {"unit": unit_id, "annotations": {"topic": "sport"}, "time_taken_ms": 2**31 - 1}
    assert api.post(URL, body, format="json").status_code == 201


@pytest.mark.parametrize("number", ["1" + "0" * 400, "1e400", "-1e400", "NaN", "Infinity"])
def test_box_values_beyond_a_float(api, unit_id, number):
    box = json.dumps({**BOX, "center": ["X", 0, 0]}).replace('"X"', number)
    refused(post_text(api, f'{{"unit": {unit_id}, "annotations": {{"boxes": [{box}]}}}}'))


@pytest.mark.parametrize(
    "answers, where",
    [
        (r'{"note": "before\u0000after"}', "NUL"),
        (r'{"no\u0000te": "text"}', "NUL"),
        (r'{"boxes": [{"label": "car\u0000", "center": [0,0,0], "size": [1,1,1]}]}', "NUL"),
        (r'{"note": "lone \ud800 surrogate"}', "surrogate"),
        (r'{"\ud800": "x"}', "surrogate"),
        (r'{"topic": "\udfff"}', "surrogate"),
    ],
)
def test_nul_and_lone_surrogates_anywhere(api, unit_id, answers, where):
    refused(post_text(api, f'{{"unit": {unit_id}, "annotations": {answers}}}'), where)


def test_nul_and_surrogates_in_other_fields(api, unit_id):
    for field in (r'"client_id": "\u0000"', r'"client_id": "\ud800"', r'"extra": "\u0000"'):
        body = f'{{"unit": {unit_id}, "annotations": {{"topic": "sport"}}, {field}}}'
        refused(post_text(api, body))


def test_a_pair_of_surrogates_is_one_character_and_kept(api, unit_id):
    body = f'{{"unit": {unit_id}, "annotations": {{"note": "smile \\ud83d\\ude00"}}}}'
    assert post_text(api, body).status_code == 201
    assert Annotation.objects.get().value == "smile \U0001f600"


def test_json_nested_100k_deep_is_refused_quickly(api, unit_id):
    deep = "[" * 100_000 + "]" * 100_000
    started = time.monotonic()
    response = post_text(api, f'{{"unit": {unit_id}, "annotations": {{"note": {deep}}}}}')
    assert time.monotonic() - started < 5
    refused(response, "nested deeper than 32 levels", "REQUEST_MAX_JSON_DEPTH = 32")


def test_an_unterminated_string_of_escaped_quotes_is_refused_quickly(api, unit_id):
    body = '{"annotations": {"note": "' + '\\"' * 500_000
    started = time.monotonic()
    refused(post_text(api, body), "JSON parse error")
    assert time.monotonic() - started < 5


def test_brackets_inside_strings_are_not_nesting(api, unit_id):
    note = "[{" * 1000 + '\\"' + "]}" * 10
    assert (
        post_text(api, f'{{"unit": {unit_id}, "annotations": {{"note": "{note}"}}}}').status_code
        == 201
    )


def test_the_unit_id_must_fit_a_database_key(api, unit_id):
    refused(api.post(URL, {"unit": 10**30, "annotations": {"topic": "sport"}}, format="json"))


# --- answer size limits, each named with its setting and value ------------------------------


def test_text_longer_than_the_limit(api, unit_id):
    body = {"unit": unit_id, "annotations": {"note": "x" * 10_001}}
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_TEXT_LENGTH = 10000", "note")


def test_text_at_the_limit_is_kept(api, unit_id):
    body = {"unit": unit_id, "annotations": {"note": "x" * 10_000}}
    assert api.post(URL, body, format="json").status_code == 201


def test_more_boxes_than_the_limit(api, unit_id):
    body = {"unit": unit_id, "annotations": {"boxes": [BOX] * 1001}}
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_OBJECTS = 1000", "1001 boxes")


def test_boxes_at_the_limit_are_kept(api, unit_id):
    body = {"unit": unit_id, "annotations": {"boxes": [BOX] * 1000}}
    assert api.post(URL, body, format="json").status_code == 201
    assert len(Annotation.objects.get().value) == 1000


def test_more_segments_and_trace_steps_than_the_limit(api, unit_id, settings):
    settings.ANSWER_MAX_OBJECTS = 2
    segments = [{"start": n, "end": n + 1, "label": "talk"} for n in range(3)]
    body = {"unit": unit_id, "annotations": {"speech": segments}}
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_OBJECTS = 2", "3 segments")
    body = {"unit": unit_id, "annotations": {"steps": {"0": "good", "1": "bad", "2": "good"}}}
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_OBJECTS = 2", "3 trace steps")


def test_an_answer_nested_past_the_depth_limit(api, unit_id):
    value = "x"
    for _ in range(21):
        value = [value]
    body = {"unit": unit_id, "annotations": {"note": value}}
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_DEPTH = 20")


def test_a_request_body_nested_past_its_limit(api, unit_id):
    deep = "[" * 40 + "]" * 40
    body = f'{{"unit": {unit_id}, "annotations": {{"topic": "sport"}}, "x": {deep}}}'
    refused(post_text(api, body), "REQUEST_MAX_JSON_DEPTH = 32")


def test_answers_past_the_byte_limit(api, unit_id, settings):
    settings.ANSWER_MAX_BYTES = 500
    body = {"unit": unit_id, "annotations": {"note": "é" * 300}}  # 600 bytes of UTF-8
    refused(api.post(URL, body, format="json"), "ANSWER_MAX_BYTES = 500")


def test_a_body_past_the_request_byte_limit(api, unit_id, settings):
    settings.REQUEST_MAX_JSON_BYTES = 1000
    body = {"unit": unit_id, "annotations": {"note": "x" * 2000}}
    refused(api.post(URL, body, format="json"), "REQUEST_MAX_JSON_BYTES = 1000")


# --- the web form ---------------------------------------------------------------------------


@pytest.fixture
def form(client, annotator, project):
    """The annotation page's form action, for a unit reserved by loading the page."""
    client.force_login(annotator)
    html = client.get(reverse("annotate", args=["bad"])).content.decode()
    return re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)


def page_refused(response, *fragments):
    assert response.status_code == 400
    html = response.content.decode()
    assert 'role="alert"' in html
    for fragment in fragments:
        assert fragment in html, fragment
    assert not Annotation.objects.exists()


BOX_ROW = {
    "boxes__cx": "1",
    "boxes__cy": "2",
    "boxes__cz": "3",
    "boxes__l": "4",
    "boxes__w": "2",
    "boxes__h": "1",
    "boxes__label": "car",
}


@pytest.mark.parametrize("digits", ["١٢", "１２", "²", "٣"])
def test_web_digits_of_other_scripts(client, form, digits):
    page_refused(client.post(form, {"quality": digits}), "whole number from 1 to 5")
    page_refused(client.post(form, {**BOX_ROW, "boxes__cx": digits}), "not a number")
    fields = {"speech__start": digits, "speech__end": "9", "speech__label": "talk"}
    page_refused(client.post(form, fields), "not a number")
    page_refused(client.post(form, {"topic": "sport", "time_taken_ms": digits}), "time_taken_ms")


@pytest.mark.parametrize("ms", ["2147483648", "99999999999999999999", "-5", "1.5"])
def test_web_time_taken_out_of_range(client, form, ms):
    page_refused(client.post(form, {"topic": "sport", "time_taken_ms": ms}), "2147483647")


@pytest.mark.parametrize("number", ["1e400", "-1e400", "inf", "nan", "1_000"])
def test_web_box_values_beyond_a_float(client, form, number):
    page_refused(client.post(form, {**BOX_ROW, "boxes__l": number}), "<strong>boxes</strong>")


def test_web_nul_in_a_text_answer(client, form):
    page_refused(client.post(form, {"note": "before\x00after"}), "NUL")


def test_web_text_past_the_limit(client, form):
    page_refused(client.post(form, {"note": "x" * 10_001}), "ANSWER_MAX_TEXT_LENGTH = 10000")


def test_web_bad_client_id(client, form):
    page_refused(client.post(form, {"topic": "sport", "client_id": "not-a-uuid"}), "UUID")


def test_web_good_values_are_still_kept(client, form):
    response = client.post(
        form,
        {**BOX_ROW, "quality": "4", "time_taken_ms": "2147483647", "client_id": uuid.uuid4()},
    )
    assert response.status_code == 302
    assert dict(Annotation.objects.values_list("scheme", "value"))["quality"] == 4


# --- the members forms ----------------------------------------------------------------------


@pytest.mark.parametrize("remove", ["abc", "", "١٢", "99999999999999999999999", "-1", "1e3"])
def test_project_members_remove_needs_an_account(client, project, remove):
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    client.force_login(manager)
    before = Membership.objects.count()
    response = client.post(reverse("project-members", args=["bad"]), {"remove": remove})
    assert response.status_code == 400
    assert "Nobody to remove" in response.content.decode()
    assert Membership.objects.count() == before


@pytest.mark.parametrize("remove", ["abc", "", "١٢", "99999999999999999999999", "-1", "1e3"])
def test_lab_remove_needs_an_account(client, remove):
    lab = LabFactory(slug="nlp")
    admin = UserFactory(username="labboss")
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    LabMembershipFactory(lab=lab, user=UserFactory(username="member"))
    client.force_login(admin)
    response = client.post(reverse("lab-detail", args=["nlp"]), {"remove": remove})
    assert response.status_code == 400
    assert "Nobody to remove" in response.content.decode()
    assert LabMembership.objects.filter(lab=lab).count() == 2


def test_lab_form_with_an_unknown_username_is_a_400(client):
    lab = LabFactory(slug="nlp")
    admin = UserFactory(username="labboss")
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    response = client.post(reverse("lab-detail", args=["nlp"]), {"username": "nobody\x00"})
    assert response.status_code == 400
    assert 'class="field-error"' in response.content.decode()
    assert LabMembership.objects.filter(lab=lab).count() == 1


def test_project_members_form_with_bad_values_is_a_400(client, project):
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    client.force_login(manager)
    before = Membership.objects.count()
    url = reverse("project-members", args=["bad"])
    response = client.post(url, {"usernames": "nobody\x00", "role": "annotator"})
    assert response.status_code == 400
    assert 'class="messages"' in response.content.decode()
    assert Membership.objects.count() == before


def test_nul_in_a_query_parameter(api, unit_id):
    assert api.get(URL, {"scheme": "a\x00b"}).status_code == 400
    assert api.get(URL, {"mine": "\x00"}).status_code == 200  # not a yes: ignored


def test_web_unit_id_beyond_a_database_key(client, form):
    url = reverse("annotate-unit", args=["bad", 10**30])
    assert client.get(url).status_code == 404
    assert client.post(url, {"topic": "sport"}).status_code == 404
    assert not Annotation.objects.exists()
