"""What people read: trace steps numbered from 1 (the stored keys stay "0", "1", ...) and a
scheme's tiers as a plain list, never as Python writes a list."""

import json
import re

import pytest
from django.urls import reverse

from annotation.models import Annotation
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

CONFIG = """
annotation_task_name: "Assistant steps and cabin speech"
task_dir: "."
data_files: ["data/items.jsonl"]
item_properties: {id_key: id, text_key: text}
annotation_schemes:
  - annotation_type: process_reward
    name: steps
    description: "Judge each step"
    labels: [correct, incorrect]
  - annotation_type: tiered_annotation
    name: cabin
    description: "Who speaks when"
    labels: [speech]
    tiers: [driver, passenger]
    media_key: media_url
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "data").mkdir()
    item = {
        "id": "clip_1",
        "text": "A drive",
        "media_url": "https://example.org/clip.wav",
        "steps": [{"action": "brake"}, {"action": "signal"}, {"action": "turn"}],
    }
    (tmp_path / "data" / "items.jsonl").write_text(json.dumps(item) + "\n")
    (tmp_path / "config.yaml").write_text(CONFIG)
    return import_project(config_path=tmp_path / "config.yaml", slug="steps").project


def test_trace_steps_read_from_one_and_store_from_zero(client, project):
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    html = client.get(reverse("annotate", args=["steps"])).content.decode()
    steps = re.search(r'<ol class="trace-steps"[^>]*>', html).group(0)
    assert "start=" not in steps  # the list counts 1, 2, 3
    labels = re.findall(r'role="radiogroup" aria-label="(Step \d+)"', html)
    assert labels == ["Step 1", "Step 2", "Step 3"]
    assert 'name="steps__step__0"' in html and 'name="steps__step__3"' not in html
    action = re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)
    client.post(action, {"steps__step__0": "correct", "steps__step__2": "incorrect"})
    assert Annotation.objects.get(scheme="steps").value == {"0": "correct", "2": "incorrect"}


def test_tiers_read_as_a_list_of_names(client, project):
    client.force_login(UserFactory(is_staff=True))
    html = client.get(reverse("project-detail", args=["steps"])).content.decode()
    assert "driver, passenger" in html
    assert "[&#x27;driver&#x27;" not in html and "['driver'" not in html
