"""create_lab and lab_admins as the operator runs them from a shell: the first lab and its
admins without the Django shell or the admin site."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from projects.models import Lab, LabMembership
from projects.tests.factories import LabFactory, UserFactory

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def roles(lab) -> dict:
    return dict(LabMembership.objects.filter(lab=lab).values_list("user__username", "is_admin"))


def test_create_lab_prints_the_slug_and_appoints_its_admins():
    UserFactory(username="ada")
    UserFactory(username="grace")
    out, err = run("create_lab", "NLP Lab", "--admin", "ada", "--member", "grace")
    assert out.strip() == "nlp-lab"
    assert "ada: lab admin of nlp-lab" in err
    lab = Lab.objects.get(slug="nlp-lab")
    assert lab.name == "NLP Lab"
    assert roles(lab) == {"ada": True, "grace": False}


def test_create_lab_takes_a_slug():
    out, _ = run("create_lab", "Vision", "--slug", "cv")
    assert out.strip() == "cv" and Lab.objects.get(slug="cv").name == "Vision"


@pytest.mark.parametrize(
    "args, message",
    [
        (["Vision", "--admin", "nobody"], "No account is named nobody."),
        (["Vision", "--slug", "cv lab"], "use letters, digits"),
        (["Taken", "--slug", "taken"], "exists already"),
        (["  "], "Give the lab a name"),
    ],
)
def test_create_lab_refuses_with_the_reason_and_makes_nothing(args, message):
    LabFactory(slug="taken")
    with pytest.raises(CommandError, match=message):
        run("create_lab", *args)
    assert list(Lab.objects.values_list("slug", flat=True)) == ["taken"]


def test_lab_admins_adds_lists_and_removes():
    lab = LabFactory(slug="nlp")
    for name in ("ada", "grace", "alan"):
        UserFactory(username=name)
    LabMembership.objects.create(lab=lab, user=UserFactory(username="alan"), is_admin=False)
    out, _ = run("lab_admins", "add", "nlp", "ada", "grace")
    assert out.splitlines() == ["ada: lab admin of nlp", "grace: lab admin of nlp"]
    assert run("lab_admins", "list", "nlp")[0].split() == ["ada", "grace"]
    out, _ = run("lab_admins", "remove", "nlp", "grace")
    assert "grace: member (no longer lab admin) of nlp" in out
    assert roles(lab) == {"ada": True, "grace": False, "alan": False}
    assert run("lab_admins", "list", "nlp")[0].split() == ["ada"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["add", "nope", "ada"], "no lab with the slug 'nope'"),
        (["add", "nlp", "nobody"], "No account is named nobody."),
        (["add", "nlp"], "name the accounts to add"),
        (["remove", "nlp", "alan"], "not a lab admin of nlp: alan"),
        (["list", "nlp", "ada"], "list takes no usernames"),
    ],
)
def test_lab_admins_refuses_with_the_reason_and_changes_nothing(args, message):
    lab = LabFactory(slug="nlp")
    UserFactory(username="ada")
    LabMembership.objects.create(lab=lab, user=UserFactory(username="alan"))
    before = roles(lab)
    with pytest.raises(CommandError, match=message):
        run("lab_admins", *args)
    assert roles(lab) == before
