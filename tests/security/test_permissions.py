"""Who gets what from every URL: the resolver's patterns x eight roles, one table.

Every URL pattern the resolver knows needs a row (or, under /admin/, the admin rule): a new
URL without one fails `test_every_url_has_a_row` with its name. The rules the table
encodes: a project someone may not see is a 404, never a 403 (nothing says it exists);
manager pages are for the project's managers, its lab's admins and staff; anonymous visitors
of a page are sent to the login page (302) and get 401 from the API; the admin site is for
staff only.
"""

import fnmatch
import json
import re
from urllib.parse import urlencode

import numpy as np
import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from .conftest import ROLES

# Columns, in the order of ROLES: anonymous, a user in no lab, an annotator of the project,
# an annotator of a project in the other lab, a member of the project's lab who is not in
# the project, the other lab's admin, the project's lab admin, a superuser.
# A row is "[METHOD] name": GET unless a method is given; POST rows send an empty body,
# "POST+answer" rows the annotator's own valid answer to their unit (BODIES).
# "open:" rows: the same URL for the world's open project (allow_all_users) in lab 1,
# which every user may annotate and only its managers manage.
# The token in api-token-revoke is the annotator's.
# "admin:*" is the rule for every admin page not listed by name before it. Admin pages of
# one object show the model's first row in the world; axes keeps no failure log here (pk 0:
# the admin redirects to its list).
MATRIX = """
# url name                             anon  nolab  annot  o-ann member  o-adm  admin  super
home                                    302    200    200    200    200    200    200    200
project-create                          302    404    404    404    404    200    200    200
POST project-create                     302    404    404    404    404    400    400    400
example-config                          302    200    200    200    200    200    200    200
project-detail                          302    404    200    404    404    404    200    200
project-members                         302    405    405    405    405    405    405    405
POST project-members                    302    404    404    404    404    404    400    400
project-invite                          302    405    405    405    405    405    405    405
POST project-invite                     302    404    404    404    404    404    400    400
project-export                          302    404    404    404    404    404    200    200
annotate                                302    404    200    404    404    404    200    200
project-instructions                    302    404    200    404    404    404    200    200
annotate-unit                           302    404    200    404    404    404    404    404
POST annotate-unit                      302    404    400    404    404    404    404    404
POST+answer_form annotate-unit          302    404    302    404    404    404    404    404
# a point cloud stored in the project's media folder (STORED_MEDIA, by the world fixture)
project-media                           302    404    200    404    404    404    200    200
project-points                          302    404    200    404    404    404    200    200
lab-list                                302    200    200    200    200    200    200    200
# only staff create labs: a plain 403 with the reason (labs/services.py)
POST lab-list                           302    403    403    403    403    403    403    400
lab-detail                              302    404    404    404    200    404    200    200
# a lab's members see it but may not change its people: 403 with the reason
POST lab-detail                         302    404    404    404    403    404    400    400
# participant links: the world's project opens none (no participants block), and the flow's
# pages are for a participant session of the project only (crowds/tests/test_participants.py)
participant-start                       404    404    404    404    404    404    404    404
participant-flow                        404    404    404    404    404    404    404    404
participant-consent                     404    404    404    404    404    404    404    404
POST participant-consent                404    404    404    404    404    404    404    404
participant-done                        404    404    404    404    404    404    404    404
# the participants with their outcomes, as CSV: the project's managers only
participants-export                     302    404    404    404    404    404    200    200
bws-dashboard                           302    404    404    404    404    404    200    200
bws-rescore                             302    405    405    405    405    405    405    405
POST bws-rescore                        302    404    404    404    404    404    302    302
bws-download                            302    404    404    404    404    404    200    200
# gold units: the world's project has no training (its members are sent on to annotate)
project-training                        302    404    302    404    404    404    302    302
project-quality                         302    404    404    404    404    404    200    200
project-quality-exclude                 302    405    405    405    405    405    405    405
POST project-quality-exclude            302    404    404    404    404    404    400    400
# a reset names a screened-out person; an empty form names nobody: 400 with the reason
project-screening-reset                 302    405    405    405    405    405    405    405
POST project-screening-reset            302    404    404    404    404    404    400    400
agreement-iaa                           302    404    404    404    404    404    200    200
POST agreement-iaa                      302    404    404    404    404    404    302    302
agreement-categorical                   302    404    404    404    404    404    200    200
login                                   200    200    200    200    200    200    200    200
logout                                  405    405    405    405    405    405    405    405
password_change                         302    200    200    200    200    200    200    200
password_change_done                    302    200    200    200    200    200    200    200
password_reset                          200    200    200    200    200    200    200    200
password_reset_done                     200    200    200    200    200    200    200    200
password_reset_confirm                  200    200    200    200    200    200    200    200
password_reset_complete                 200    200    200    200    200    200    200    200
# a made-up invite link: refused, whoever opens it
invite-accept                           400    400    400    400    400    400    400    400
favicon                                 301    301    301    301    301    301    301    301
javascript-catalog                      200    200    200    200    200    200    200    200
api-schema                              401    200    200    200    200    200    200    200
api-docs                                302    200    200    200    200    200    200    200
api-token                               405    405    405    405    405    405    405    405
POST api-token                          400    400    400    400    400    400    400    400
api-token-list                          401    200    200    200    200    200    200    200
api-token-revoke                        401    405    405    405    405    405    405    405
DELETE api-token-revoke                 401    404    204    404    404    404    404    404
api-token-revoke-all                    401    405    405    405    405    405    405    405
POST api-token-revoke-all               401    200    200    200    200    200    200    200
api-lab-list                            401    200    200    200    200    200    200    200
POST api-lab-list                       401    403    403    403    403    403    403    400
api-lab-members                         401    404    404    404    200    404    200    200
POST api-lab-members                    401    404    404    404    403    404    400    400
DELETE api-lab-members                  401    404    404    404    403    404    400    400
api-project-list                        401    200    200    200    200    200    200    200
# create: lab admins and staff; the matrix's JSON body is not the multipart upload (415)
POST api-project-list                   401    403    403    403    403    415    415    415
api-project-detail                      401    404    200    404    404    404    200    200
api-queue-next                          401    405    405    405    405    405    405    405
POST api-queue-next                     401    404    204    404    404    404    200    200
api-annotations                         401    404    200    404    404    404    200    200
POST api-annotations                    401    404    400    404    404    404    400    400
POST+answer api-annotations             401    404    201    404    404    404    409    409
api-agreement                           401    404    404    404    404    404    200    200
api-scores                              401    404    404    404    404    404    200    200
POST api-scores                         401    404    404    404    404    404    400    400
api-score-run                           401    404    404    404    404    404    200    200
api-scores-compare                      401    404    404    404    404    404    400    400
# the world's project has a balanced design: its managers are told so with a 404 too
api-design                              401    404    404    404    404    404    404    404
api-members                             401    404    404    404    404    404    200    200
POST api-members                        401    404    404    404    404    404    400    400
DELETE api-members                      401    404    404    404    404    404    400    400
api-items                               401    404    404    404    404    404    200    200
api-tuples                              401    404    404    404    404    404    200    200
api-export                              401    404    404    404    404    404    200    200
api-quality                             401    404    404    404    404    404    200    200
api-exclusions                          401    404    404    404    404    404    200    200
POST api-exclusions                     401    404    404    404    404    404    400    400
api-screening-reset                     401    405    405    405    405    405    405    405
POST api-screening-reset                401    404    404    404    404    404    400    400
api-participants                        401    404    404    404    404    404    200    200
# the open project: a radio scheme, so api-scores answers its managers 400 (no BWS scheme)
open:project-detail                     302    200    200    200    200    200    200    200
POST open:project-members               302    404    404    404    404    404    400    400
POST open:project-invite                302    404    404    404    404    404    400    400
open:project-export                     302    404    404    404    404    404    200    200
open:annotate                           302    200    200    200    200    200    200    200
open:project-instructions               302    200    200    200    200    200    200    200
open:agreement-iaa                      302    404    404    404    404    404    200    200
open:project-training                   302    302    302    302    302    302    302    302
open:project-quality                    302    404    404    404    404    404    200    200
open:api-project-detail                 401    200    200    200    200    200    200    200
POST open:api-queue-next                401    200    200    200    200    200    200    200
open:api-annotations                    401    200    200    200    200    200    200    200
open:api-agreement                      401    404    404    404    404    404    200    200
open:api-scores                         401    404    404    404    404    404    400    400
open:api-members                        401    404    404    404    404    404    200    200
POST open:api-members                   401    404    404    404    404    404    400    400
open:api-items                          401    404    404    404    404    404    200    200
open:api-export                         401    404    404    404    404    404    200    200
open:api-quality                        401    404    404    404    404    404    200    200
open:api-participants                   401    404    404    404    404    404    200    200
admin:login                             200    200    200    200    200    200    200    302
admin:logout                            302    302    302    302    302    302    302    405
admin:autocomplete                      302    302    302    302    302    302    302    403
admin:view_on_site                      302    302    302    302    302    302    302    404
admin/(?P<url>.*)$                      302    302    302    302    302    302    302    404
admin/*/<path:object_id>/               302    302    302    302    302    302    302    302
admin:axes_*_add                        302    302    302    302    302    302    302    403
admin:axes_accessfailurelog_change      302    302    302    302    302    302    302    302
admin:axes_accessfailurelog_history     302    302    302    302    302    302    302    302
admin:axes_accessfailurelog_delete      302    302    302    302    302    302    302    302
# the world has no participant (pk 0: the admin redirects to its list)
admin:crowds_participant_change       302    302    302    302    302    302    302    302
admin:crowds_participant_history      302    302    302    302    302    302    302    302
admin:crowds_participant_delete       302    302    302    302    302    302    302    302
admin:*                                 302    302    302    302    302    302    302    200
"""

METHODS = ("GET", "POST", "DELETE")
STORED_MEDIA = "scans/scene.bin"  # stored in the project's media folder by `world` below


@pytest.fixture
def world(world):
    """The security world, with a point cloud stored for its project (as an import stores
    the files its instances name), so the media URLs have something to refuse or serve,
    and a tuple batch record."""
    from projects.media import MEDIA_FOLDER, prepare_points
    from projects.services import project_folder

    target = project_folder(world.project) / MEDIA_FOLDER / STORED_MEDIA
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(np.arange(8, dtype="<f4").tobytes())
    prepare_points(project_folder(world.project))  # its points, decoded as an import does
    # a batch record, as an adaptive design keeps (so its admin pages have a row to show)
    from bws.models import TupleBatch

    TupleBatch.objects.create(
        project=world.project, number=0, strategy="balanced", seed=0, n_tuples=1
    )
    return world


def answer(world) -> dict:
    """The annotator's own answer to their unit: valid, so only permission can refuse it."""
    ids = sorted(world.unit.bws_tuple.item_ids)
    return {"unit": world.unit.pk, "annotations": {"quality": {"best": ids[0], "worst": ids[-1]}}}


def answer_form(world) -> dict:
    ids = sorted(world.unit.bws_tuple.item_ids)
    return {"quality__best": ids[0], "quality__worst": ids[-1]}


# Bodies for rows "POST+name" (the API's as JSON, the pages' as a form).
BODIES = {"answer": answer, "answer_form": answer_form}


def parse_matrix(text: str) -> list[tuple[str, str, tuple[int, ...]]]:
    rows = []
    for line in text.strip().splitlines():
        if line.startswith("#"):
            continue
        words = line.split()
        method = words.pop(0) if words[0].split("+")[0] in METHODS else "GET"
        name, statuses = words[0], tuple(int(w) for w in words[1:])
        assert len(statuses) == len(ROLES), f"{line!r}: one status per role"
        rows.append((method, name, statuses))
    return rows


ROWS = parse_matrix(MATRIX)


def url_patterns(patterns=None, prefix="", namespace=""):
    """(key, route) for every pattern the resolver knows, included resolvers walked; the key
    is the pattern's name (namespaced) or, for an unnamed pattern, its full route."""
    if patterns is None:
        patterns = get_resolver().url_patterns
    for pattern in patterns:
        route = prefix + str(pattern.pattern).removeprefix("^" if prefix else "")
        if isinstance(pattern, URLResolver):
            inner = namespace + (f"{pattern.namespace}:" if pattern.namespace else "")
            yield from url_patterns(pattern.url_patterns, route, inner)
        elif isinstance(pattern, URLPattern):
            yield (f"{namespace}{pattern.name}" if pattern.name else route), route


def expected_row(method: str, key: str):
    """The first row for this method whose name matches the key (exactly, or as a pattern)."""
    for row_method, name, statuses in ROWS:
        if row_method == method and (name == key or fnmatch.fnmatchcase(key, name)):
            return name, statuses
    return None


def test_every_url_has_a_row():
    keys = {key: route for key, route in url_patterns()}
    missing = [f"{key} ({route})" for key, route in keys.items() if not expected_row("GET", key)]
    assert not missing, "URLs without a row in MATRIX: " + ", ".join(missing)
    stale = [
        f"{method} {name}"
        for method, name, _ in ROWS
        if "*" not in name and name.removeprefix("open:") not in keys
    ]
    assert not stale, "rows in MATRIX for URLs that no longer exist: " + ", ".join(stale)


def admin_model(route: str):
    match = re.match(r"admin/(\w+)/(\w+)/", route)
    if not match:
        return None
    try:
        return apps.get_model(*match.groups())
    except LookupError:
        return None


def fill(route: str, world) -> str:
    """A concrete URL for the route, its parameters taken from the world."""
    model = admin_model(route)
    values = {
        "slug": world.lab.slug if "labs/" in route else world.project.slug,
        "unit_id": world.unit.pk,
        "run_id": world.run.pk,
        "uidb64": "MQ",
        "token": "not-a-token",
        "url": "no-such-page/",
        "app_label": "projects",
        "content_type_id": ContentType.objects.get_for_model(world.project).pk,
        "object_id": world.project.pk,
        "id": world.user("annotator").pk,
        "token_key": world.token_key,
        "path": STORED_MEDIA,
    }
    if model is not None and ("object_id>" in route or "<id>" in route):
        # The model's first row; pk 0 (no such row) for a model the world has none of.
        row = model._default_manager.order_by("pk").first()
        values["object_id"] = values["id"] = row.pk if row else 0
    url = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(values[m.group(1)]), route)
    url = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), url)
    return "/" + url.replace("^", "").replace("$", "")


def targets(world):
    """(method, key, url, expected status per role) for every pattern and every row."""
    seen = set()
    for key, route in url_patterns():
        url = fill(route, world)
        if url in seen:  # a pattern shadowed by an earlier one with the same URL
            continue
        seen.add(url)
        match = resolve(url.split("?")[0])
        assert match.route == route or match.url_name == key.split(":")[-1], (key, url)
        row = expected_row("GET", key)
        if row is not None:
            yield "GET", key, url, row[1]
        for method, name, statuses in ROWS:
            if method != "GET" and name == key:
                yield method, key, url, statuses
            if name == f"open:{key}":
                open_url = url.replace(f"/{world.project.slug}/", f"/{world.open_project.slug}/")
                yield method, name, open_url, statuses


@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world, role):
    client = Client()
    user = world.user(role)
    if user is not None:
        client.force_login(user)
    column = ROLES.index(role)
    sees_project = expected_row("GET", "project-detail")[1][column] == 200
    wrong = []
    for method, key, url, statuses in targets(world):
        # Every request sees the same world: what one changes (a lease, a revoked token)
        # is rolled back before the next.
        with transaction.atomic():
            verb, _, body_name = method.partition("+")
            body = BODIES[body_name](world) if body_name else {}
            if verb == "GET":
                response = client.get(url)
            elif key.startswith("api-"):
                response = client.generic(verb, url, json.dumps(body), "application/json")
            else:
                form = urlencode(body)
                response = client.generic(verb, url, form, "application/x-www-form-urlencoded")
            transaction.set_rollback(True)
        expected = statuses[column]
        if response.status_code != expected:
            hint = " (the world has no row of this model)" if "/0/" in url else ""
            wrong.append(
                f"{method} {url} ({key}): expected {expected}, got {response.status_code}{hint}"
            )
        elif role == "anonymous" and expected == 302 and "/admin/" not in url:
            location = response["Location"]
            if "/accounts/login/" not in location:
                wrong.append(f"{method} {url} ({key}): redirects to {location}, not the login")
        elif response.status_code < 300 and hasattr(response, "content"):
            body = response.content.decode(errors="replace")
            if not sees_project and (world.project.name in body or world.project.slug in body):
                wrong.append(f"{method} {url} ({key}): names a project this role may not see")
            if role not in ("annotator", "superuser") and world.token_key in body:
                wrong.append(f"{method} {url} ({key}): shows the annotator's API token")
    assert not wrong, f"as {role}:\n" + "\n".join(wrong)
