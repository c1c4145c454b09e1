"""A design's notices repeated per group or instance read as one line per message, with the
groups named on demand: on the manager's page and from what is stored at import."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from projects.notices import group_notices, shorten
from projects.services import import_project
from projects.tests.factories import UserFactory

MESSAGE = "each item meets up to 24 partners but has only 4 others"


def test_repeated_notices_become_one_group_in_the_order_first_seen():
    notices = ["No annotation_task_name: named after the file"]
    notices += [f"group fr_{n:03d}: {MESSAGE}" for n in range(1, 41)]
    notices += ["instance 7: too few items", "group fr_041: too few items"]
    groups = group_notices(notices)
    assert [g.summary for g in groups] == [
        "No annotation_task_name: named after the file",
        f"40 groups: {MESSAGE}",
        "instance 7: too few items",
        "group fr_041: too few items",
    ]
    assert groups[1].names[:2] == ["fr_001", "fr_002"] and groups[1].hidden == 0


def test_shortened_notices_keep_their_count():
    notices = [f"instance {n}: {MESSAGE}" for n in range(1000)] + ["seed 9"]
    stored = shorten(notices, keep=50)
    assert len(stored) == 52
    (first, plain) = group_notices(stored)
    assert first.summary == f"1000 instances: {MESSAGE}"
    assert len(first.names) == 50 and first.hidden == 950
    assert plain.summary == "seed 9"


def test_shorten_bounds_many_distinct_messages():
    stored = shorten([f"instance {n}: message {n}" for n in range(500)], limit=200)
    assert len(stored) == 201 and stored[-1] == "... and 300 more design notes"


@pytest.mark.django_db
def test_mt_demo_page_shows_one_warning_for_its_40_groups(client):
    config = Path(settings.BASE_DIR) / "examples" / "mt_two_dims" / "config.yaml"
    project = import_project(config_path=config, slug="mt").project
    # the stored notices count all 40 groups (none reduced to "... and 20 more")
    assert group_notices(project.notices)[-1].count == 40
    client.force_login(UserFactory(is_staff=True))
    html = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert html.count('class="notice"') == 1
    assert "<summary>40 groups: each item meets up to" in html
    details = html[html.index("<details") : html.index("</details>")]
    assert "fr_001, fr_002" in details and "de_030" in details
