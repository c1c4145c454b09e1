"""The manager's project page counts what the project is made of: instances for a project of
whole records, items (and tuples) for a best-worst project, and lists those records."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
EXAMPLES = Path(settings.BASE_DIR) / "examples"


def manager_page(client, project) -> str:
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=project, role=Membership.Role.MANAGER)
    client.force_login(user)
    return client.get(reverse("project-detail", args=[project.slug])).content.decode()


def stats(html: str) -> dict[str, str]:
    pairs = re.findall(r'<span class="num">([\d,]+)</span><span>(\w+)</span>', html)
    return {label: number for number, label in pairs}


CLIPS_CONFIG = """
annotation_task_name: Clips
task_dir: "."
data_files: [data.jsonl]
item_properties: {id_key: id, text_key: text}
annotation_schemes:
  - annotation_type: radio
    name: scene
    description: Where is the clip?
    labels: [urban, highway, rural]
"""


def test_a_project_of_records_counts_and_lists_its_instances(client, tmp_path):
    rows = [
        f'{{"id": "clip_{n:02d}", "text": "Dashcam clip {n}", "media_url": "/v{n}.mp4"}}'
        for n in range(1, 21)
    ]
    (tmp_path / "data.jsonl").write_text("\n".join(rows) + "\n")
    (tmp_path / "config.yaml").write_text(CLIPS_CONFIG)
    project = import_project(config_path=tmp_path / "config.yaml", slug="clips").project
    html = manager_page(client, project)
    counted = stats(html)
    assert counted["instances"] == "20"
    assert "items" not in counted and "tuples" not in counted
    assert "<h2>Instances</h2>" in html and "<h2>Items</h2>" not in html
    assert "clip_01" in html and "Dashcam clip 1<" in html


def test_a_best_worst_project_counts_items_and_tuples(client):
    project = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="mt").project
    html = manager_page(client, project)
    counted = stats(html)
    assert int(counted["items"].replace(",", "")) == project.items.count() > 0
    assert "tuples" in counted and "instances" not in counted
    assert "<h2>Items</h2>" in html and "<h2>Instances</h2>" not in html


def test_the_upload_message_counts_instances_for_a_project_of_records(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from projects.services import add_lab_member
    from projects.tests.factories import LabFactory

    lab = LabFactory()
    admin = UserFactory(username="labadmin")
    add_lab_member(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    rows = [f'{{"id": "c{n}", "text": "Clip {n}"}}' for n in range(3)]
    response = client.post(
        reverse("project-create"),
        {
            "lab": lab.pk,
            "config_file": SimpleUploadedFile("config.yaml", CLIPS_CONFIG.encode()),
            "data_files": [SimpleUploadedFile("data.jsonl", "\n".join(rows).encode())],
        },
        follow=True,
    )
    html = response.content.decode()
    assert "Created Clips: 3 instances." in html
    assert "0 items" not in html
