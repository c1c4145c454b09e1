"""Schemathesis against the API's own OpenAPI schema (/api/schema/, drf-spectacular):
generated requests, valid and invalid, to every operation, as an annotator and as a
manager (the lab's admin) of a real project: none may get a 5xx.

The requests go through the site's WSGI handler in this process, against the transactional
test database (the handler commits and closes connections as it does in production) that
holds the two-lab world of conftest.py. Examples are bounded and derandomised, so a run is
repeatable and short.

Besides schemathesis' not_a_server_error, the responses must match the schema's media
types, bodies and headers. Two of its checks are left out: most operations' schemas
document only their success statuses, not DRF's 400 and 404 (status_code_conformance), and
schema-valid requests are refused by rules a schema cannot state, such as a wrong password
(positive_data_acceptance).

schemathesis' pytest integration (`schemathesis.pytest.from_fixture`) does not run under
pytest 9.2 (it sets `Function._nodeid`, which pytest no longer has), so each operation's
Hypothesis test is built here from `operation.as_strategy()`, the library's Python API.
"""

import traceback
from collections import Counter

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import got_request_exception
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
)
from schemathesis.errors import FailureGroup

from .conftest import api_token, build_world

# Requests come from this address, so the fuzzed token endpoint's failed logins lock out
# this address, not the one the test logs in from to renew its token.
FUZZ_ADDRESS = "192.0.2.10"
MAX_EXAMPLES = 25  # per operation and caller
ANSWER_EXAMPLES = 100  # for submitting answers, where most of the input is
CHECKS = [
    not_a_server_error,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]

# Values for answers: any JSON, and per scheme type values that are valid or near misses
# (the texts and numbers a database cannot store, unknown labels, wrong shapes).
TEXT = st.text() | st.sampled_from(["\x00", "a\x00b", "\ud800", "x" * 20_000])
# (Infinity and NaN are left out: the request's JSON encoder refuses them.)
NUMBER = (
    st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([10**400, 2**63, -(2**63) - 1, 1e308])
)
JSON = st.recursive(
    st.none() | st.booleans() | NUMBER | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def labelled(labels):
    return st.sampled_from(labels) | TEXT


def triple():
    return st.lists(NUMBER, min_size=3, max_size=3) | JSON


ANSWERS = {
    "note": TEXT,
    "fluency": st.integers(0, 6) | st.sampled_from(["3", "\u0663", " 4 "]) | NUMBER,
    "tags": st.lists(labelled(["a", "b", "c"]), max_size=4),
    "boxes": st.lists(
        st.fixed_dictionaries(
            {"label": labelled(["car", "truck"]), "center": triple(), "size": triple()},
            optional={"yaw": NUMBER | JSON},
        ),
        max_size=3,
    ),
    "events": st.lists(
        st.fixed_dictionaries({"start": NUMBER, "end": NUMBER, "label": labelled(["stop", "go"])}),
        max_size=3,
    ),
    "steps": st.dictionaries(labelled(["0", "1", "2"]), labelled(["good", "bad"]), max_size=3),
}


class Caller:
    """The fuzzing user: a token from the token endpoint (renewed whenever a fuzzed
    request may have revoked it) and a unit they may answer."""

    def __init__(self, world, role):
        from annotation.queue import next_unit

        self.world = world
        self.user = world.user(role)
        self.renew()
        # The annotator edits earlier answers; the manager answers units leased now.
        if role == "annotator":
            self.unit, self.survey_unit = world.unit, world.survey_unit
        else:
            self.unit = next_unit(project=world.project, user=self.user)
            self.survey_unit = next_unit(project=world.survey, user=self.user)
        self.item_ids = list(self.unit.bws_tuple.item_ids)

    def renew(self):
        reply = api_token(self.user.username)
        self.token, self.token_key = reply["token"], reply.get("token_key", "")

    @property
    def headers(self):
        return {"Authorization": f"Token {self.token}"}


@pytest.fixture
def server_errors():
    """Tracebacks of exceptions that reached Django's handler (a 500), newest last."""
    seen = []

    def record(sender, request=None, **kwargs):
        seen.append(f"{request.method} {request.get_full_path()}\n{traceback.format_exc()}")

    got_request_exception.connect(record)
    yield seen
    got_request_exception.disconnect(record)


@pytest.fixture(params=["annotator", "lab_admin"])
def caller(request, transactional_db, tmp_path, fast_passwords, monkeypatch):
    from bws import scheduling as bws_scheduling

    monkeypatch.setattr(bws_scheduling, "send_task", lambda *a, **k: True)
    return Caller(build_world(tmp_path), request.param)


def aim(case, caller, data):
    """Half the generated requests name the world's BWS scheme, and half the answers go to
    one of the caller's own units (of the BWS project or the survey) with values for its
    schemes, so they reach validation and storage instead of stopping at an unknown scheme
    or unit."""
    aimed = st.sampled_from([True, False])
    if "scheme" in {p.name for p in case.operation.query} and data.draw(aimed):
        case.query = {**(case.query or {}), "scheme": "quality"}
    if isinstance(case.body, dict) and "scheme" in case.body and data.draw(aimed):
        case.body["scheme"] = "quality"
    if not (case.method == "POST" and case.path.endswith("/annotations/")):
        return
    if not isinstance(case.body, dict) or not data.draw(aimed):
        return
    if data.draw(st.sampled_from(["survey", "bws"])) == "survey":  # typed answers
        project, unit = caller.world.survey, caller.survey_unit
        names = data.draw(st.lists(st.sampled_from(list(ANSWERS)), min_size=1, unique=True))
        answers = {name: data.draw(ANSWERS[name] | JSON) for name in names}
    else:  # the BWS project's best and worst
        project, unit = caller.world.project, caller.unit
        items = st.sampled_from(caller.item_ids)
        best_worst = st.fixed_dictionaries({"best": items, "worst": items})
        answers = {"quality": data.draw(best_worst | JSON)}
    case.path_parameters["slug"] = project.slug
    # The generated client_id and time_taken_ms stay; other generated keys go.
    kept = {k: v for k, v in case.body.items() if k in ("client_id", "time_taken_ms")}
    case.body = {**kept, "unit": unit.pk, "annotations": answers}
    case.media_type = "application/json"  # a form encoding would flatten the answers


def operation_test(operation, caller, server_errors, statuses):
    """A Hypothesis test sending the operation's generated requests, valid and (where the
    operation has a query or a body to break) invalid, as the caller; it fails on a 5xx."""
    world = caller.world
    # The path names the world's project and score run, so requests reach the code
    # behind the permission checks instead of stopping at a 404.
    fixed = {"slug": world.project.slug, "run_id": world.run.pk}
    names = {p.name for p in operation.path_parameters}
    path = {k: v for k, v in fixed.items() if k in names}
    strategy = operation.as_strategy(GenerationMode.POSITIVE, path_parameters=path)
    if operation.query or operation.body:
        strategy |= operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=path)

    submits = operation.method.upper() == "POST" and operation.path.endswith("/annotations/")

    @settings(
        max_examples=ANSWER_EXAMPLES if submits else MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, data=st.data())
    def test(case, data):
        if "token_key" in case.path_parameters:
            case.path_parameters["token_key"] = caller.token_key
        aim(case, caller, data)
        before = len(server_errors)
        response = case.call(headers=caller.headers, environ_base={"REMOTE_ADDR": FUZZ_ADDRESS})
        statuses[f"{case.method} {case.path} {response.status_code}"] += 1
        if "/auth/tokens/" in case.path and case.method in ("POST", "DELETE"):
            if response.status_code < 300:
                caller.renew()
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as exc:  # the reproduction, and a 5xx's traceback
            raise AssertionError("\n".join([str(exc), *server_errors[before:]])) from None

    return test


def test_no_request_gets_a_server_error(caller, server_errors):
    schema = schemathesis.openapi.from_wsgi(
        reverse("api-schema"), WSGIHandler(), headers=caller.headers
    )
    failures = []
    statuses = Counter()
    n_operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        n_operations += 1
        try:
            operation_test(operation, caller, server_errors, statuses)()
        except AssertionError as exc:
            failures.append(f"{operation.label}:\n{exc}")
    print(f"requests as {caller.user.username}:", dict(sorted(statuses.items())))
    assert n_operations >= 10, "the schema lists the API's operations"
    assert not failures, f"as {caller.user.username}:\n\n" + "\n\n".join(failures)
