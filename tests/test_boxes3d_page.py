"""The 3D box form on the annotation page: with a stored point cloud the page carries the
viewer (its points URL, the module, the shortcuts) above the table of numbers; without one
it is the table alone, as before. What the viewer does is tested in Debian's chromium
(tests/test_browser_boxes3d.py)."""

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CONFIG = """annotation_task_name: Lidar boxes
data_files: [data.jsonl]
annotation_schemes:
  - {annotation_type: spatial_annotation, name: objects, description: Road users,
     labels: [car, truck]}
"""


def annotate_page(client, tmp_path, row, files=()):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        points = np.array([[1, 2, -1.7, 0.5], [3, 4, -1.6, 0.2]], dtype="<f4")
        (tmp_path / name).write_bytes(points.tobytes())
    (tmp_path / "data.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "config.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "config.yaml", slug="lidar").project
    user = UserFactory(username="lina")
    Membership.objects.create(user=user, project=project, role="annotator")
    client.force_login(user)
    response = client.get(reverse("annotate", args=["lidar"]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_stored_cloud_brings_the_viewer_above_the_table(client, tmp_path):
    row = {"id": "s1", "text": "Scene 1", "pointcloud": "clouds/s1.bin"}
    html = annotate_page(client, tmp_path, row, files=["clouds/s1.bin"])
    viewer = re.search(r'<div class="boxes3d" data-for="objects" data-points-url="([^"]+)"', html)
    assert viewer, "no viewer on the page"
    points = client.get(viewer.group(1))
    assert points.status_code == 200 and len(b"".join(points.streaming_content)) == 2 * 16
    assert "annolab/boxes3d.js" in html and 'type="module"' in html
    assert "annolab/boxes3d.css" in html
    assert "<kbd>1</kbd> car, <kbd>2</kbd> truck" in html  # the label keys, in the legend
    assert html.index('class="boxes3d"') < html.index('name="objects__cx"')  # above the table
    assert " style=" not in html.split('class="boxes3d"', 1)[1].split("</fieldset>", 1)[0]


def test_without_a_cloud_the_table_is_the_form(client, tmp_path):
    html = annotate_page(client, tmp_path, {"id": "s1", "text": "Scene 1"})
    assert 'class="boxes3d"' not in html and "boxes3d.js" not in html
    assert 'name="objects__cx"' in html and "Add box" in html
