"""The members form and the upload page as a manager uses them: the role select starts at
Annotator, a pasted list adds whoever it names and says what became of every entry, and a
failed upload names the files chosen and offers an example configuration."""

import re
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from projects.models import Membership, Project
from projects.services import import_project
from projects.tests.factories import (
    LabFactory,
    LabMembershipFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
EXAMPLE = Path(settings.BASE_DIR) / "examples" / "mt_bws"


@pytest.fixture
def project():
    return import_project(config_path=EXAMPLE / "config.yaml", slug="mt").project


@pytest.fixture
def manager(client, project):
    user = UserFactory(username="boss")
    MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    client.force_login(user)
    return user


def role_of(project, username):
    membership = Membership.objects.filter(project=project, user__username=username).first()
    return membership.role if membership else None


def members_url():
    return reverse("project-members", args=["mt"])


def selected_role(html: str) -> str:
    """The value a browser submits for the role select nobody touched."""
    select = re.search(r'<select name="role"[^>]*>(.*?)</select>', html, re.S).group(1)
    options = re.findall(r'<option value="(\w+)"( selected)?>', select)
    chosen = [value for value, selected in options if selected]
    return chosen[0] if chosen else options[0][0]


def test_untouched_role_select_adds_an_annotator(client, project, manager):
    UserFactory(username="anna")
    page = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert selected_role(page) == "annotator"
    client.post(members_url(), {"usernames": "anna", "role": selected_role(page)})
    assert role_of(project, "anna") == "annotator"


def test_a_form_without_a_role_adds_an_annotator(client, project, manager):
    UserFactory(username="anna")
    client.post(members_url(), {"usernames": "anna"})
    assert role_of(project, "anna") == "annotator"


def test_known_accounts_are_added_though_others_are_unknown(client, project, manager):
    UserFactory(username="anna")
    response = client.post(members_url(), {"usernames": "anna, zoe", "role": "annotator"})
    assert response.status_code == 302
    assert role_of(project, "anna") == "annotator"
    assert role_of(project, "zoe") is None
    page = client.get(response.url).content.decode()
    assert "unknown account" in page and "no account has this username" in page
    assert "added as annotator" in page
    assert "1 added as annotator, 1 not added: see why" in page


def test_pasted_list_gets_a_result_per_entry(client, project, manager):
    UserFactory(username="anna")
    UserFactory(username="bob", email="Bob.Smith@example.org")
    UserFactory(username="carl")
    UserFactory(username="dora")
    MembershipFactory(user=UserFactory(username="eve"), project=project, role="annotator")
    MembershipFactory(user=UserFactory(username="finn"), project=project, role="manager")
    pasted = "anna\nbob.smith@EXAMPLE.org carl;dora\n\neve, finn\nzoe\nnobody@example.org\nx@@y\n"
    pasted += "bad/name\nanna"
    response = client.post(members_url(), {"usernames": pasted, "role": "annotator"})
    for name in ("anna", "bob", "carl", "dora", "eve", "finn"):
        assert role_of(project, name) == "annotator", name
    page = client.get(response.url).content.decode()
    rows = re.findall(
        r"<tr><td><code>(.*?)</code></td><td>(.*?)</td><td><strong>(.*?)</strong>"
        r"</td><td>(.*?)</td></tr>",
        page,
    )
    results = {(entry, account): (outcome, text) for entry, account, outcome, text in rows}
    assert len(rows) == 11
    assert results["bob.smith@EXAMPLE.org", "bob"] == ("added", "added as annotator")
    assert results["eve", "eve"] == ("already a member", "role unchanged (annotator)")
    assert results["finn", "finn"] == (
        "already a member",
        "role changed from manager to annotator",
    )
    assert results["zoe", "—"][0] == "unknown account"
    assert results["nobody@example.org", "—"] == (
        "unknown account",
        "not added: no account has this e-mail address",
    )
    assert results["x@@y", "—"][0] == "invalid entry"
    assert results["bad/name", "—"][0] == "invalid entry"
    assert [r[2] for r in rows].count("skipped") == 1  # anna named twice
    # The results are shown once, not on every later visit.
    assert "Result of your list" not in client.get(response.url).content.decode()


def test_manager_role_changes_when_asked(client, project, manager):
    MembershipFactory(user=UserFactory(username="eve"), project=project, role="annotator")
    response = client.post(members_url(), {"usernames": "eve", "role": "manager"})
    assert role_of(project, "eve") == "manager"
    assert "role changed from annotator to manager" in client.get(response.url).content.decode()


def test_shared_email_address_is_not_guessed(client, project, manager):
    UserFactory(username="ann1", email="lab@example.org")
    UserFactory(username="ann2", email="lab@example.org")
    response = client.post(members_url(), {"usernames": "lab@example.org"})
    assert role_of(project, "ann1") is None and role_of(project, "ann2") is None
    assert "2 accounts share this address" in client.get(response.url).content.decode()


def test_an_empty_list_is_refused(client, project, manager):
    response = client.post(members_url(), {"usernames": " , \n", "role": "annotator"})
    assert response.status_code == 400
    assert list(Membership.objects.filter(project=project)) == [
        Membership.objects.get(user=manager)
    ]


def test_results_of_one_project_are_not_shown_on_another(client, project, manager):
    other = import_project(config_path=EXAMPLE / "config.yaml", slug="mt2").project
    MembershipFactory(user=manager, project=other, role=Membership.Role.MANAGER)
    client.post(members_url(), {"usernames": "zoe"})
    page = client.get(reverse("project-detail", args=["mt2"])).content.decode()
    assert "Result of your list" not in page
    page = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert "Result of your list" in page and "unknown account" in page


@pytest.fixture
def lab_admin(client, tmp_path, settings):
    settings.PROJECT_FILES_ROOT = tmp_path / "uploads"
    lab = LabFactory()
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    return lab


def test_failed_upload_names_the_chosen_files_and_links_the_example(client, lab_admin):
    bad = (
        (EXAMPLE / "config.yaml")
        .read_text()
        .replace("tuple_size: 4\n  min", "tuple_sise: 4\n  min")
    )
    response = client.post(
        reverse("project-create"),
        {
            "lab": lab_admin.pk,
            "config_file": SimpleUploadedFile("config.yaml", bad.encode()),
            "data_files": [SimpleUploadedFile("items.jsonl", b'{"id": "a", "text": "x"}\n')],
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "You chose <strong>config.yaml</strong> and <strong>items.jsonl</strong>" in html
    assert "choose them again" in html
    errors = html[html.index('role="alert"') : html.index("</section>")]
    assert reverse("example-config") in errors
    assert not Project.objects.exists()


def test_form_error_also_names_the_chosen_file(client, lab_admin):
    response = client.post(
        reverse("project-create"),
        {"lab": lab_admin.pk, "config_file": SimpleUploadedFile("config.txt", b"x: 1\n")},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "You chose <strong>config.txt</strong>." in html and "choose it again" in html
    assert "must be a .yaml or .yml file" in html


def test_upload_page_links_the_example_config(client, lab_admin):
    html = client.get(reverse("project-create")).content.decode()
    assert reverse("example-config") in html
    assert "You chose" not in html


def test_example_config_downloads_and_builds_a_project(client, lab_admin):
    response = client.get(reverse("example-config"))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    assert "example-config.yaml" in response["Content-Disposition"]
    text = response.content.decode()
    assert yaml.safe_load(text) == yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    # What the page offers is a config the upload accepts.
    created = client.post(
        reverse("project-create"),
        {
            "lab": lab_admin.pk,
            "config_file": SimpleUploadedFile("example-config.yaml", response.content),
            "data_files": [
                SimpleUploadedFile(
                    "mt_systems.jsonl", (EXAMPLE / "data" / "mt_systems.jsonl").read_bytes()
                )
            ],
        },
    )
    assert created.status_code == 302
    assert Project.objects.get().items.count() == 200
