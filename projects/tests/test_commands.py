"""import_project and add_members as a lab runs them from a shell."""

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from projects.models import Membership, Project
from projects.tests.factories import LabFactory, UserFactory

pytestmark = pytest.mark.django_db
CONFIG = str(Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml")


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_project_prints_the_slug():
    LabFactory(slug="nlp")
    UserFactory(username="maria")
    out, err = run("import_project", CONFIG, "--slug", "mt", "--lab", "nlp", "--owner", "maria")
    assert out.strip() == "mt"
    assert "200 items" in err
    project = Project.objects.get(slug="mt")
    assert project.lab.slug == "nlp"
    assert Membership.objects.get(project=project, user__username="maria").role == "manager"


def test_import_project_without_lab_uses_default_lab():
    out, _ = run("import_project", CONFIG)
    assert Project.objects.get(slug=out.strip()).lab.is_default


def test_import_project_unknown_lab_is_an_error():
    with pytest.raises(CommandError, match="no lab"):
        run("import_project", CONFIG, "--lab", "nope")
    assert not Project.objects.exists()


def test_import_project_bad_config_names_the_file(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("annotation_task_name: x\nannotation_shemes: []\n")
    with pytest.raises(CommandError) as err:
        run("import_project", str(bad))
    assert "broken.yaml" in str(err.value)
    assert not Project.objects.exists()


def test_add_members_create_with_password():
    run("import_project", CONFIG, "--slug", "mt")
    out, _ = run(
        "add_members",
        "mt",
        "--role",
        "annotator",
        "--create",
        "--password",
        "pw-123456",
        "ann",
        "bob",
    )
    assert "ann: annotator in mt (account created)" in out
    members = Membership.objects.filter(project__slug="mt", role="annotator")
    assert sorted(m.user.username for m in members) == ["ann", "bob"]
    assert members[0].user.check_password("pw-123456")


def test_add_members_unknown_user_without_create():
    run("import_project", CONFIG, "--slug", "mt")
    with pytest.raises(CommandError, match="unknown user"):
        run("add_members", "mt", "--role", "manager", "nobody")


def test_add_members_changes_role():
    run("import_project", CONFIG, "--slug", "mt")
    UserFactory(username="carl")
    run("add_members", "mt", "--role", "annotator", "carl")
    run("add_members", "mt", "--role", "manager", "carl")
    assert Membership.objects.get(project__slug="mt", user__username="carl").role == "manager"


def test_add_members_marks_model_judges():
    from annotation.selectors import model_judges
    from projects.services import mark_model_judge

    run("import_project", CONFIG, "--slug", "mt")
    run("add_members", "mt", "--role", "annotator", "--create", "--model", "gpt-judge", "judge1")
    profile = Membership.objects.get(user__username="judge1").user.annotator_profile
    assert profile.is_model and profile.model_name == "gpt-judge"
    assert model_judges(Project.objects.get(slug="mt")) == set()  # no answers yet
    mark_model_judge(user=profile.user, is_model=False)
    profile.refresh_from_db()
    assert not profile.is_model


def test_load_demo_builds_scored_projects_and_is_safe_to_rerun():
    from bws.models import ScoreRun

    out, _ = run("load_demo")
    assert "anna / annolab-anna" in out and "450 simulated judgments scored" in out
    runs = ScoreRun.objects.filter(project__slug="mt-ranking", status="ok")
    assert sorted(runs.values_list("scheme", flat=True)) == ["adequacy", "fluency"]
    assert all(r.n_judgments == 450 and r.reliability for r in runs)
    top = runs.get(scheme="fluency").item_scores.order_by("rank").first()
    assert top.item_id.startswith("mt_")
    run("load_demo")
    assert Project.objects.filter(slug__in=["mt-ranking", "agreement-demo"]).count() == 2
    assert ScoreRun.objects.count() == 2
