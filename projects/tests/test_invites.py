"""Invites from the members list: a manager makes an account and gets a link that sets its
password once, within its lifetime; nobody else may invite, and a pasted list can create
the accounts it names with one result per line."""

import re
from datetime import datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from projects.invites import invite_token_generator
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import (
    LabMembershipFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
User = get_user_model()
PASSWORD = "a-long-new-password-42"


@pytest.fixture
def project():
    config = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"
    project = import_project(config_path=config, slug="p1").project
    project.name = "Reviews"
    project.save(update_fields=["name"])
    return project


@pytest.fixture
def manager(client, project):
    user = UserFactory(username="boss")
    MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    client.force_login(user)
    return user


def invite(client, username, email="", role="annotator", slug="p1"):
    data = {"invite-username": username, "invite-email": email, "invite-role": role}
    return client.post(reverse("project-invite", args=[slug]), data)


def shown_link(client, slug="p1") -> str:
    """The invite link the project page shows (once) after an invite."""
    html = client.get(reverse("project-detail", args=[slug])).content.decode()
    match = re.search(r'class="invite-link"[^>]*value="([^"]+)"', html)
    assert match, "no invite link on the page"
    return match.group(1).replace("http://testserver", "")


def set_password(link, password=PASSWORD):
    """Open the link as the invited person would and set a password on the page it leads to."""
    visitor = Client()
    page = visitor.get(link)
    if page.status_code != 302:
        return page
    form_url = page["Location"]
    return visitor.post(form_url, {"new_password1": password, "new_password2": password})


def test_manager_creates_an_account_and_its_link_sets_the_password_once(client, manager, project):
    response = invite(client, "zoe", role="annotator")
    assert response.status_code == 302
    zoe = User.objects.get(username="zoe")
    assert not zoe.has_usable_password()
    assert Membership.objects.get(user=zoe, project=project).role == "annotator"

    link = shown_link(client)
    assert link.startswith("/accounts/invite/")
    # shown once: the next visit of the page no longer holds it
    again = client.get(reverse("project-detail", args=["p1"])).content.decode()
    assert link not in again

    done = set_password(link)
    assert done.status_code == 302 and done["Location"] == reverse("login")
    zoe.refresh_from_db()
    assert zoe.check_password(PASSWORD)
    logged_in = Client().post(reverse("login"), {"username": "zoe", "password": PASSWORD})
    assert logged_in.status_code == 302 and logged_in["Location"] == reverse("home")

    # used: the same link is refused
    reused = Client().get(link)
    assert reused.status_code == 400
    assert "does not work" in reused.content.decode()


def test_logging_in_after_setting_the_password_shows_the_message(client, manager):
    invite(client, "zoe")
    link = shown_link(client)
    visitor = Client()
    form_url = visitor.get(link)["Location"]
    response = visitor.post(
        form_url, {"new_password1": PASSWORD, "new_password2": PASSWORD}, follow=True
    )
    assert "Your password is set. Log in as zoe." in response.content.decode()


def test_the_link_expires(client, manager, settings):
    settings.INVITE_TIMEOUT_DAYS = 7
    invite(client, "zoe")
    link = shown_link(client)
    later = datetime.now() + timedelta(days=7, hours=1)
    with mock.patch.object(invite_token_generator, "_now", return_value=later):
        assert Client().get(link).status_code == 400
    earlier = datetime.now() + timedelta(days=6)
    with mock.patch.object(invite_token_generator, "_now", return_value=earlier):
        assert Client().get(link).status_code == 302


def test_the_link_is_refused_once_the_password_changed_another_way(client, manager):
    invite(client, "zoe")
    link = shown_link(client)
    zoe = User.objects.get(username="zoe")
    zoe.set_password("set-by-an-admin-99")
    zoe.save()
    assert Client().get(link).status_code == 400


def test_a_password_reset_link_is_no_invite(client, manager):
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    invite(client, "zoe")
    zoe = User.objects.get(username="zoe")
    uid = urlsafe_base64_encode(force_bytes(zoe.pk))
    forged = reverse("invite-accept", args=[uid, default_token_generator.make_token(zoe)])
    assert Client().get(forged).status_code == 400


def test_the_set_password_page_enforces_the_password_validators(client, manager):
    invite(client, "zoe")
    link = shown_link(client)
    response = set_password(link, password="zoe")
    assert response.status_code == 200
    assert "too short" in response.content.decode()
    assert not User.objects.get(username="zoe").has_usable_password()


def test_the_invite_is_e_mailed_when_an_address_is_given(client, manager):
    invite(client, "zoe", email="zoe@example.org")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["zoe@example.org"]
    link = shown_link(client)
    assert "http://testserver" + link in message.body
    assert "Reviews" in message.subject


def test_a_mail_server_that_is_down_loses_no_link(client, manager):
    from smtplib import SMTPConnectError

    with mock.patch("projects.invites.send_mail", side_effect=SMTPConnectError(421, "down")):
        response = invite(client, "zoe", email="zoe@example.org")
    assert response.status_code == 302
    html = client.get(reverse("project-detail", args=["p1"])).content.decode()
    assert "the e-mail could not be sent: copy the link below" in html
    assert 'aria-label="Invite link for zoe"' in html and ">not sent<" in html


def test_duplicates_are_refused_with_a_message(client, manager, project):
    UserFactory(username="anna", email="anna@example.org")
    response = invite(client, "Anna")
    assert response.status_code == 400
    assert "An account named Anna exists already" in response.content.decode()
    response = invite(client, "anna2", email="ANNA@example.org")
    assert response.status_code == 400
    assert "exists already" in response.content.decode()
    assert not User.objects.filter(username="anna2").exists()
    # what was typed is still in the form
    assert 'value="anna2"' in response.content.decode()


def test_a_bad_username_is_refused(client, manager):
    response = invite(client, "no spaces please")
    assert response.status_code == 400
    assert not User.objects.filter(username="no spaces please").exists()


@pytest.mark.parametrize("role", ["annotator", "outsider", "lab_member"])
def test_only_managers_invite(client, project, role):
    user = UserFactory(username="someone")
    if role == "annotator":
        MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    elif role == "lab_member":
        LabMembershipFactory(user=user, lab=project.lab)
    client.force_login(user)
    assert invite(client, "zoe").status_code == 404
    assert not User.objects.filter(username="zoe").exists()


def test_a_manager_cannot_invite_into_another_project(client, manager):
    ProjectFactory(slug="theirs")
    assert invite(client, "zoe", slug="theirs").status_code == 404
    assert not User.objects.filter(username="zoe").exists()


def test_lab_admins_invite(client, project):
    admin = UserFactory(username="labadmin")
    LabMembershipFactory(user=admin, lab=project.lab, is_admin=True)
    client.force_login(admin)
    assert invite(client, "zoe", role="manager").status_code == 302
    assert Membership.objects.get(user__username="zoe").role == "manager"


def test_a_new_link_for_a_member_who_never_logged_in_ends_the_old_one(client, manager, project):
    invite(client, "zoe")
    old = shown_link(client)
    zoe = User.objects.get(username="zoe")
    page = client.get(reverse("project-detail", args=["p1"])).content.decode()
    assert "Send a new invite link" in page
    response = client.post(reverse("project-invite", args=["p1"]), {"reinvite": zoe.pk})
    assert response.status_code == 302
    new = shown_link(client)
    assert new != old
    assert Client().get(old).status_code == 400
    assert set_password(new).status_code == 302


def test_no_new_link_for_someone_who_logged_in(client, manager, project):
    anna = UserFactory(username="anna")
    MembershipFactory(user=anna, project=project)
    login = Client().post(reverse("login"), {"username": "anna", "password": "pw-for-tests-123"})
    assert login.status_code == 302
    page = client.get(reverse("project-detail", args=["p1"])).content.decode()
    assert "Send a new invite link" not in page
    response = client.post(reverse("project-invite", args=["p1"]), {"reinvite": anna.pk})
    assert response.status_code == 400
    assert "password reset" in response.content.decode()


def test_no_new_link_for_someone_outside_the_project(client, manager):
    stranger = UserFactory(username="stranger")
    stranger.set_unusable_password()
    stranger.save()
    response = client.post(reverse("project-invite", args=["p1"]), {"reinvite": stranger.pk})
    assert response.status_code == 400


def test_a_pasted_list_creates_missing_accounts_with_a_result_per_line(client, manager, project):
    UserFactory(username="anna")
    response = client.post(
        reverse("project-members", args=["p1"]),
        {"usernames": "anna, zoe\nnew@example.org bad/name", "create_missing": "on"},
        follow=True,
    )
    html = response.content.decode()
    row = r"<tr><td><code>([^<]+)</code></td><td>[^<]*</td><td><strong>([^<]+)"
    rows = dict(re.findall(row, html))
    assert rows == {
        "anna": "added",
        "zoe": "account created",
        "new@example.org": "account created",
        "bad/name": "invalid entry",
    }
    created = User.objects.get(username="new@example.org")
    assert created.email == "new@example.org" and not created.has_usable_password()
    assert Membership.objects.filter(project=project, user__username="zoe").exists()
    links = re.findall(r'aria-label="Invite link for ([^"]+)"', html)
    assert sorted(links) == ["new@example.org", "zoe"]
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["new@example.org"]


def test_without_the_option_unknown_names_are_not_created(client, manager):
    client.post(reverse("project-members", args=["p1"]), {"usernames": "zoe"})
    assert not User.objects.filter(username="zoe").exists()
