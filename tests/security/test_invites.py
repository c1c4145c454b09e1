"""Invite takeover: a project manager may add any account to their project (that is how labs
share annotators), but an invite link, which sets the account's password, is made only for
an account the inviter may manage, and a link stops working once the account's rights or
state change. Each attack below is refused with a message, logged, and changes nothing: the
victim's password stays unusable and unchanged, their memberships stay as they were and no
session becomes theirs."""

import logging
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from projects.invites import invite_path
from projects.models import LabMembership, Membership
from projects.services import add_lab_member, add_project_members
from projects.tests.factories import MembershipFactory, UserFactory

User = get_user_model()
NEW_PASSWORD = "a-long-new-password-42"


@pytest.fixture
def manager(world):
    """A project manager of the world's project who is neither lab admin nor staff."""
    user = UserFactory(username="pm", password="pw-for-tests-123")
    MembershipFactory(user=user, project=world.project, role=Membership.Role.MANAGER)
    return user


def unused_account(username, *, long_ago=True, **extra):
    """An account nobody has used: no usable password, never logged in; made days ago."""
    user = UserFactory(username=username, **extra)
    user.set_unusable_password()
    if long_ago:
        user.date_joined = timezone.now() - timedelta(days=30)
    user.save()
    return user


def state(user) -> dict:
    """What a takeover would change about an account."""
    user = User.objects.get(pk=user.pk)
    return {
        "password": user.password,
        "usable": user.has_usable_password(),
        "last_login": user.last_login,
        "staff": (user.is_staff, user.is_superuser),
        "labs": sorted(LabMembership.objects.filter(user=user).values_list("lab_id", "is_admin")),
        "projects": sorted(Membership.objects.filter(user=user).values_list("project_id", "role")),
    }


def logged_in_as(client, user) -> Client:
    client.force_login(user)
    return client


def add_members(client, slug, text):
    return client.post(reverse("project-members", args=[slug]), {"usernames": text})


def reinvite(client, slug, user):
    return client.post(reverse("project-invite", args=[slug]), {"reinvite": user.pk})


def shown_link(client, slug) -> str | None:
    html = client.get(reverse("project-detail", args=[slug])).content.decode()
    match = re.search(r'class="invite-link"[^>]*value="([^"]+)"', html)
    return match.group(1).replace("http://testserver", "") if match else None


def set_password(link) -> tuple[int, Client]:
    """Open the link as its holder would and set a password; the final status and client."""
    visitor = Client()
    page = visitor.get(link)
    if page.status_code != 302:
        return page.status_code, visitor
    done = visitor.post(
        page["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    return done.status_code, visitor


def assert_refused_and_untouched(response, victim, before, attacker_client, attacker):
    assert response.status_code == 403
    html = response.content.decode()
    assert "invite link" in html
    assert state(victim) == before
    assert not User.objects.get(pk=victim.pk).has_usable_password()
    assert shown_link(attacker_client, "bws-study") is None
    assert attacker_client.session["_auth_user_id"] == str(attacker.pk)
    login = Client().post(reverse("login"), {"username": victim.username, "password": ""})
    assert login.status_code == 200  # nobody can log in as the victim


def test_a_manager_cannot_take_over_an_unused_account_of_another_lab(
    world, manager, client, caplog
):
    victim = unused_account("victim")
    add_lab_member(lab=world.other_lab, user=victim)
    MembershipFactory(user=victim, project=world.other_project, role=Membership.Role.MANAGER)
    client = logged_in_as(client, manager)
    # adding an existing account is allowed: labs share annotators
    assert add_members(client, "bws-study", "victim").status_code == 302
    before = state(victim)
    assert (world.project.pk, "annotator") in before["projects"]
    page = client.get(reverse("project-detail", args=["bws-study"])).content.decode()
    assert f'name="reinvite" value="{victim.pk}"' not in page

    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        response = reinvite(client, "bws-study", victim)
    assert_refused_and_untouched(response, victim, before, client, manager)
    assert "belongs to a lab you do not administer" in response.content.decode()
    assert any(
        r.name == "annolab.security" and "pm" in r.getMessage() and "victim" in r.getMessage()
        for r in caplog.records
    )


def test_no_invite_link_for_a_superuser_made_with_createsuperuser_noinput(
    world, manager, client, caplog
):
    call_command("createsuperuser", "--noinput", username="boss", email="boss@example.org")
    boss = User.objects.get(username="boss")
    assert boss.is_superuser and not boss.has_usable_password() and boss.last_login is None
    client = logged_in_as(client, manager)
    assert add_members(client, "bws-study", "boss@example.org").status_code == 302
    before = state(boss)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        response = reinvite(client, "bws-study", boss)
    assert_refused_and_untouched(response, boss, before, client, manager)
    assert "is a staff account" in response.content.decode()
    assert any(r.name == "annolab.security" for r in caplog.records)
    # not even staff may send a staff account an invite link
    staff = logged_in_as(Client(), world.user("superuser"))
    response = reinvite(staff, "bws-study", boss)
    assert response.status_code == 403
    assert state(boss) == before
    # and a link made some other way does not open the set-password page for it
    status, _ = set_password(invite_path(boss))
    assert status == 400
    assert state(boss) == before


def test_an_account_found_by_its_e_mail_address_is_not_taken_over(world, manager, client):
    victim = unused_account("grace", email="grace@uni.example")
    add_lab_member(lab=world.other_lab, user=victim, is_admin=True)
    client = logged_in_as(client, manager)
    assert add_members(client, "bws-study", "GRACE@uni.example").status_code == 302
    assert Membership.objects.filter(project=world.project, user=victim).exists()
    before = state(victim)
    response = reinvite(client, "bws-study", victim)
    assert_refused_and_untouched(response, victim, before, client, manager)


def test_an_account_with_no_lab_made_before_it_joined_is_not_taken_over(world, manager, client):
    """An account nobody administers yet (made by staff, in no lab or project) is no
    project manager's to hand out."""
    victim = unused_account("orphan")
    client = logged_in_as(client, manager)
    assert add_members(client, "bws-study", "orphan").status_code == 302
    before = state(victim)
    response = reinvite(client, "bws-study", victim)
    assert_refused_and_untouched(response, victim, before, client, manager)
    assert "had an account before joining this project" in response.content.decode()


def test_the_api_adds_an_existing_account_but_makes_it_no_link(world, manager, client):
    victim = unused_account("victim")
    add_lab_member(lab=world.other_lab, user=victim)
    client = logged_in_as(client, manager)
    response = client.post(
        reverse("api-members", args=["bws-study"]),
        {"members": ["victim"], "role": "annotator", "create_missing": True},
        content_type="application/json",
    )
    assert response.status_code == 200
    (row,) = response.json()["results"]
    assert row["outcome"] == "added" and "link" not in row
    assert User.objects.get(pk=victim.pk).password == victim.password


def test_a_lab_admin_cannot_invite_an_account_in_another_labs_project(world, client):
    admin = world.user("lab_admin")
    victim = unused_account("shared")
    MembershipFactory(user=victim, project=world.other_project)
    MembershipFactory(user=victim, project=world.project)
    before = state(victim)
    response = reinvite(logged_in_as(client, admin), "bws-study", victim)
    assert_refused_and_untouched(response, victim, before, client, admin)
    assert "member of projects you do not manage" in response.content.decode()


def test_those_who_manage_the_account_may_still_send_a_link(world, manager, client):
    """The rule's allowed side: the lab admin of every lab and project of the account, staff,
    and a project's manager for an account their own invite made."""
    member = unused_account("newcomer")
    add_lab_member(lab=world.lab, user=member)
    MembershipFactory(user=member, project=world.project)
    for inviter in (world.user("lab_admin"), world.user("superuser")):
        who = logged_in_as(Client(), inviter)
        page = who.get(reverse("project-detail", args=["bws-study"])).content.decode()
        assert f'name="reinvite" value="{member.pk}"' in page
        assert reinvite(who, "bws-study", member).status_code == 302
    link = shown_link(who, "bws-study")
    assert set_password(link)[0] == 302
    assert User.objects.get(pk=member.pk).check_password(NEW_PASSWORD)

    own = logged_in_as(client, manager)
    made = own.post(
        reverse("project-invite", args=["bws-study"]),
        {"invite-username": "zoe", "invite-role": "annotator"},
    )
    assert made.status_code == 302
    zoe = User.objects.get(username="zoe")
    assert shown_link(own, "bws-study")
    assert reinvite(own, "bws-study", zoe).status_code == 302


@pytest.fixture
def zoe_link(world, client):
    """An invite link the lab admin made for a new account, zoe, in the world's project."""
    admin = logged_in_as(client, world.user("lab_admin"))
    made = admin.post(
        reverse("project-invite", args=["bws-study"]),
        {"invite-username": "zoe", "invite-role": "annotator"},
    )
    assert made.status_code == 302
    link = shown_link(admin, "bws-study")
    assert link and Client().get(link).status_code == 302  # it works until something changes
    return User.objects.get(username="zoe"), link


def unusable(user):
    user = User.objects.get(pk=user.pk)
    return not user.has_usable_password() and user.last_login is None


@pytest.mark.parametrize(
    "change",
    ["role", "lab", "lab_admin", "other_project", "staff", "removed", "login", "renewal"],
)
def test_a_link_stops_working_once_the_account_changes(world, zoe_link, change):
    zoe, link = zoe_link
    if change == "role":
        add_project_members(project=world.project, usernames=["zoe"], role="manager")
    elif change == "lab":
        add_lab_member(lab=world.other_lab, user=zoe)
    elif change == "lab_admin":
        add_lab_member(lab=world.lab, user=zoe, is_admin=True)
    elif change == "other_project":
        MembershipFactory(user=zoe, project=world.other_project)
    elif change == "staff":
        User.objects.filter(pk=zoe.pk).update(is_staff=True)
    elif change == "removed":
        Membership.objects.filter(user=zoe, project=world.project).delete()
    elif change == "login":
        Client().force_login(zoe)
    elif change == "renewal":
        admin = logged_in_as(Client(), world.user("lab_admin"))
        assert reinvite(admin, "bws-study", zoe).status_code == 302
        assert shown_link(admin, "bws-study") != link
    password = User.objects.get(pk=zoe.pk).password
    status, visitor = set_password(link)
    assert status == 400
    assert User.objects.get(pk=zoe.pk).password == password
    assert "_auth_user_id" not in visitor.session


def test_a_used_link_does_not_work_twice(world, zoe_link):
    zoe, link = zoe_link
    assert set_password(link)[0] == 302
    password = User.objects.get(pk=zoe.pk).password
    assert set_password(link)[0] == 400
    assert User.objects.get(pk=zoe.pk).password == password


@pytest.mark.parametrize("path", ["web", "api"])
def test_links_of_accounts_made_from_a_pasted_list_set_the_password(world, manager, client, path):
    """The link is made once the new account is a member, so the state it is bound to is the
    one the invited person finds."""
    client = logged_in_as(client, manager)
    if path == "web":
        done = client.post(
            reverse("project-members", args=["bws-study"]),
            {"usernames": "newbie", "role": "annotator", "create_missing": "on"},
        )
        assert done.status_code == 302
        link = shown_link(client, "bws-study")
    else:
        done = client.post(
            reverse("api-members", args=["bws-study"]),
            {"members": ["newbie"], "create_missing": True},
            content_type="application/json",
        )
        link = done.json()["results"][0]["invite_url"].removeprefix("http://testserver")
    assert set_password(link)[0] == 302
    assert User.objects.get(username="newbie").check_password(NEW_PASSWORD)
