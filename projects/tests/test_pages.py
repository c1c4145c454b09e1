"""Pages as people use them: home with progress, manager page, upload, auth pages."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from annotation.answers import submit_answers
from annotation.models import Assignment
from annotation.queue import next_unit
from projects.models import Membership, Project, Unit
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
def project_upload_dir(tmp_path, settings):
    settings.PROJECT_FILES_ROOT = tmp_path / "uploads"
    return settings.PROJECT_FILES_ROOT


def test_pages_need_login(client, project):
    response = client.get(reverse("home"))
    assert response.status_code == 302 and reverse("login") in response.url


def answer_next(project, user):
    unit = next_unit(project=project, user=user)
    items = unit.bws_tuple.item_ids
    submit_answers(
        project=project,
        user=user,
        unit_id=unit.pk,
        answers={"overall_quality": {"best": items[0], "worst": items[1]}},
    )
    return unit


def test_home_shows_projects_with_progress(client, project):
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    answer_next(project, user)
    client.force_login(user)
    html = client.get(reverse("home")).content.decode()
    assert project.name in html
    assert 'role="progressbar"' in html
    # An annotator's home shows what they did, labelled as theirs ...
    assert "1 / 400 answered by you" in html
    # ... a manager's the project's figure, labelled as the project's.
    manager = UserFactory()
    MembershipFactory(user=manager, project=project, role="manager")
    other = UserFactory()
    MembershipFactory(user=other, project=project)
    answer_next(project, other)
    client.force_login(manager)
    html = client.get(reverse("home")).content.decode()
    assert "2 / 400 answers given / needed" in html


def progress_lines(html: str) -> dict[str, str]:
    """The progress lines a page shows, by what they count (project, person)."""
    found = re.findall(r'<span class="progress-text" data-progress="(\w+)">([^<]*)</span>', html)
    return {kind: " ".join(text.split()) for kind, text in found}


def test_the_pages_read_one_progress_for_one_project_state(client, project):
    """Home, the annotator's project page and the dashboard count the same answers: each
    unit needs num_annotators_per_item answers; a person's share is what they answered and
    the units still open to them."""
    project.config = {**project.config, "num_annotators_per_item": 2}
    project.save()
    first, second, third = (UserFactory(username=f"a{n}") for n in range(3))
    for user in (first, second, third):
        MembershipFactory(user=user, project=project)
    unit = answer_next(project, first)
    # the second annotator answers the same unit (now full) and one more
    Assignment.objects.create(
        unit=unit,
        annotator=second,
        project=project,
        status=Assignment.Status.RESERVED,
        leased_until=timezone.now() + timedelta(minutes=5),
    )
    Unit.objects.filter(pk=unit.pk).update(load=F("load") + 1)
    items = unit.bws_tuple.item_ids
    answer = {"overall_quality": {"best": items[0], "worst": items[1]}}
    submit_answers(project=project, user=second, unit_id=unit.pk, answers=answer)
    answer_next(project, second)
    manager = UserFactory()
    MembershipFactory(user=manager, project=project, role="manager")
    project_line = "3 / 800 answers given / needed (0%)"
    client.force_login(manager)
    home = progress_lines(client.get(reverse("home")).content.decode())
    dashboard_html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    dashboard = progress_lines(dashboard_html)
    assert home == dashboard == {"project": project_line}
    assert "Each of the 400 units needs 2 answers (800 in all); 1 of them" in dashboard_html
    # The third annotator answered nothing; one unit is full, so 399 are left for them.
    client.force_login(third)
    mine = "0 / 399 answered by you (0%) · 399 left for you"
    home = progress_lines(client.get(reverse("home")).content.decode())
    page = progress_lines(client.get(reverse("project-detail", args=["mt"])).content.decode())
    assert home == page == {"project": project_line, "person": mine}
    # The first answered the full unit: theirs, and 399 still open to them.
    client.force_login(first)
    page = progress_lines(client.get(reverse("project-detail", args=["mt"])).content.decode())
    assert page["person"] == "1 / 400 answered by you (0%) · 399 left for you"
    # The annotate page counts the person's share the same way.
    client.get(reverse("project-instructions", args=["mt"]))  # read first
    html = client.get(reverse("annotate", args=["mt"])).content.decode()
    assert "Tuple 2 of 400" in html
    assert progress_lines(html) == {"person": page["person"]}


def test_progress_counts_each_unit_up_to_its_cap(project):
    from projects.selectors import project_progress

    project.config = {**project.config, "num_annotators_per_item": 2}
    project.save()
    for n in range(3):
        answer_next(project, UserFactory(username=f"a{n}"))
    progress = project_progress([project])[project.pk]
    assert (progress.done, progress.total) == (3, 800)
    assert (progress.units, progress.per_unit, progress.units_full) == (400, 2, 0)


def test_manager_page_shows_config_items_tuples_members(client, project):
    manager = UserFactory(username="mgr")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    MembershipFactory(user=UserFactory(username="ann"), project=project)
    client.force_login(manager)
    html = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert "Configuration" in html and "overall_quality" in html
    assert "tuple_000001" in html
    # the design's summary (the example compares outputs of one sentence at a time)
    assert "pairs covered within groups: 400 of 400" in html
    assert "ann" in html and "annotator" in html
    first_item = project.items.order_by("index").first()
    assert first_item.item_id in html


def test_manager_page_shows_default_notice(client, tmp_path):
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"id": "i{n}", "text": "t{n}"}}\n' for n in range(12))
    )
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: No design block\ndata_files: [items.jsonl]\n"
        "annotation_schemes:\n  - {annotation_type: bws, name: q, description: d}\n"
    )
    project = import_project(config_path=tmp_path / "c.yaml").project
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    html = client.get(reverse("project-detail", args=[project.slug])).content.decode()
    assert 'class="notice"' in html
    assert project.notices and project.notices[0].split(":")[0] in html


def test_annotator_gets_the_annotator_page_not_the_manager_page(client, project):
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    html = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert "tuple_000001" not in html
    assert "What you will be asked" in html


def test_other_projects_are_404(client, project):
    project.allow_all_users = False
    project.save()
    client.force_login(UserFactory())
    assert client.get(reverse("project-detail", args=["mt"])).status_code == 404


def test_manager_adds_and_removes_members(client, project):
    manager = UserFactory()
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    newcomer = UserFactory(username="newcomer")
    client.force_login(manager)
    url = reverse("project-members", args=["mt"])
    client.post(url, {"usernames": "newcomer", "role": "annotator"})
    assert Membership.objects.get(project=project, user=newcomer).role == "annotator"
    client.post(url, {"remove": newcomer.pk})
    assert not Membership.objects.filter(project=project, user=newcomer).exists()


def test_annotator_cannot_add_members(client, project):
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    url = reverse("project-members", args=["mt"])
    assert client.post(url, {"usernames": user.username, "role": "manager"}).status_code == 404
    assert Membership.objects.get(project=project, user=user).role == "annotator"


def upload(name, path=None, content=None):
    data = content if content is not None else Path(path).read_bytes()
    return SimpleUploadedFile(name, data)


def test_lab_admin_creates_project_by_upload(client, project_upload_dir):
    lab = LabFactory()
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    response = client.post(
        reverse("project-create"),
        {
            "lab": lab.pk,
            "config_file": upload("config.yaml", EXAMPLE / "config.yaml"),
            "data_files": [upload("mt_systems.jsonl", EXAMPLE / "data" / "mt_systems.jsonl")],
        },
    )
    assert response.status_code == 302
    project = Project.objects.get()
    assert response.url == reverse("project-detail", args=[project.slug])
    assert project.lab == lab
    assert project.items.count() == 200
    assert Membership.objects.get(project=project, user=admin).role == "manager"


def test_upload_with_bad_config_shows_errors_and_keeps_nothing(client, project_upload_dir):
    lab = LabFactory()
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    bad = (
        (EXAMPLE / "config.yaml")
        .read_text()
        .replace("tuple_size: 4\n  min", "tuple_sise: 4\n  min")
    )
    response = client.post(
        reverse("project-create"),
        {
            "lab": lab.pk,
            "config_file": upload("config.yaml", content=bad.encode()),
            "data_files": [upload("mt_systems.jsonl", EXAMPLE / "data" / "mt_systems.jsonl")],
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "could not be created" in html
    assert "tuple_sise" in html and "tuple_size" in html
    assert not Project.objects.exists()
    assert not any(project_upload_dir.iterdir())


def test_plain_user_cannot_open_project_creation(client):
    client.force_login(UserFactory())
    assert client.get(reverse("project-create")).status_code == 404


def test_lab_admin_manages_lab_people(client):
    lab = LabFactory(slug="nlp")
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    person = UserFactory(username="person")
    client.force_login(admin)
    client.post(reverse("lab-detail", args=["nlp"]), {"username": "person"})
    assert not lab.memberships.get(user=person).is_admin
    client.post(reverse("lab-detail", args=["nlp"]), {"remove": person.pk})
    assert not lab.memberships.filter(user=person).exists()
    # appointing a lab admin is for staff (tests/security/test_labs.py)
    appoint = {"username": "person", "is_admin": "on"}
    assert client.post(reverse("lab-detail", args=["nlp"]), appoint).status_code == 403
    client.force_login(UserFactory(username="staff", is_staff=True))
    client.post(reverse("lab-detail", args=["nlp"]), appoint)
    assert lab.memberships.get(user=person).is_admin


@pytest.mark.parametrize(
    "name", ["login", "password_reset", "password_reset_done", "password_reset_complete"]
)
def test_auth_pages_render_for_visitors(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    assert b"Annolab" in response.content


def test_login_and_password_change(client):
    UserFactory(username="zoe")
    response = client.post(reverse("login"), {"username": "zoe", "password": "pw-for-tests-123"})
    assert response.status_code == 302
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "pw-for-tests-123",
            "new_password1": "another-Secret-42",
            "new_password2": "another-Secret-42",
        },
    )
    assert response.status_code == 302
    client.post(reverse("logout"))
    response = client.post(reverse("login"), {"username": "zoe", "password": "another-Secret-42"})
    assert response.status_code == 302


def test_password_reset_sends_a_link(client, mailoutbox):
    UserFactory(username="yan", email="yan@example.org")
    client.post(reverse("password_reset"), {"email": "yan@example.org"})
    assert len(mailoutbox) == 1
    assert "/accounts/reset/" in mailoutbox[0].body


def test_every_model_is_in_django_admin(admin_client):
    from django.apps import apps
    from django.contrib import admin

    for app in ("projects", "bws"):
        for model in apps.get_app_config(app).get_models():
            assert admin.site.is_registered(model), model
    assert admin_client.get("/admin/projects/project/").status_code == 200


def test_manager_downloads_answers_annotators_cannot(client, project):
    manager = UserFactory(username="mgr")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    annotator = UserFactory(username="ann")
    MembershipFactory(user=annotator, project=project)
    answer_next(project, annotator)
    client.force_login(manager)
    page = client.get(reverse("project-detail", args=["mt"])).content.decode()
    assert "Agreement report" in page and "?format=jsonl" in page
    body = client.get(reverse("project-export", args=["mt"]), {"format": "jsonl"})
    assert body["Content-Disposition"].endswith('annotations.jsonl"')
    assert b'"annotator": "ann"' in body.content
    client.force_login(annotator)
    assert client.get(reverse("project-export", args=["mt"])).status_code == 404


def test_login_is_throttled_after_repeated_failures(client, settings):
    from axes.utils import reset

    UserFactory(username="vic")
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        response = client.post(reverse("login"), {"username": "vic", "password": "wrong"})
        assert response.status_code == 200
    response = client.post(reverse("login"), {"username": "vic", "password": "wrong"})
    assert response.status_code == 429
    response = client.post(reverse("login"), {"username": "vic", "password": "pw-for-tests-123"})
    assert response.status_code == 429
    assert b"Too many failed log-in attempts" in response.content
    reset(username="vic")
    response = client.post(reverse("login"), {"username": "vic", "password": "pw-for-tests-123"})
    assert response.status_code == 302


def test_not_found_page_is_the_sites_own(client):
    client.force_login(UserFactory())
    response = client.get("/projects/nothing-here/")
    assert response.status_code == 404
    assert b"Back to your projects" in response.content
