"""Labs in the open: staff create labs and appoint or remove lab admins; a lab's admins add
and remove its members, never admins; nobody else changes a lab's people. Each attempt
beyond one's role, on the web page and over the API, is refused with a message (403, or 404
for a lab one does not belong to), logged on "annolab.security", and changes no lab and no
lab membership."""

import logging

import pytest
from django.test import Client
from django.urls import reverse

from projects.models import Lab, LabMembership
from projects.tests.factories import UserFactory


def people() -> list:
    """Every lab and every lab membership, as a takeover of a lab would change them."""
    labs = sorted(Lab.objects.values_list("slug", "name"))
    members = sorted(LabMembership.objects.values_list("lab__slug", "user__username", "is_admin"))
    return [labs, members]


def as_user(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def lab_page(client, world, data, slug=None):
    return client.post(reverse("lab-detail", args=[slug or world.lab.slug]), data)


def api_members(client, slug, method="post", **kwargs):
    url = reverse("api-lab-members", args=[slug])
    if method == "delete":
        return client.delete(f"{url}?username={kwargs['username']}")
    return client.post(url, kwargs, content_type="application/json")


@pytest.fixture
def newcomer(world):
    return UserFactory(username="newcomer")


def refused(response, status, words, caplog=None):
    assert response.status_code == status, response.content[:300]
    body = response.content.decode()
    assert words in body, body[:500]
    if caplog is not None:
        assert any(r.name == "annolab.security" for r in caplog.records)


@pytest.mark.parametrize("role", ["no_lab", "annotator", "lab_member", "lab_admin", "other_admin"])
def test_only_staff_create_labs(world, role, caplog):
    before = people()
    client = as_user(world.user(role))
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        page = client.post(reverse("lab-list"), {"name": "My own lab", "admins": role})
        refused(page, 403, "Only staff create labs.", caplog)
        api = client.post(
            reverse("api-lab-list"),
            {"name": "My own lab", "admins": [world.user(role).username]},
            content_type="application/json",
        )
    refused(api, 403, "Only staff create labs.")
    assert people() == before


def test_a_lab_admin_cannot_appoint_a_lab_admin(world, newcomer, caplog):
    admin = as_user(world.user("lab_admin"))
    member = world.user("lab_member")
    before = people()
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        refused(
            lab_page(admin, world, {"username": "newcomer", "is_admin": "on"}),
            403,
            "Only staff appoint or remove lab admins.",
            caplog,
        )
        refused(
            lab_page(admin, world, {"make_admin": member.pk}),
            403,
            "Only staff appoint or remove lab admins.",
        )
        refused(
            api_members(admin, "lab-one", username="newcomer", role="admin"),
            403,
            "Only staff appoint or remove lab admins.",
        )
    assert people() == before


def test_a_lab_admin_cannot_remove_or_demote_another_admin(world):
    second = UserFactory(username="second")
    LabMembership.objects.create(lab=world.lab, user=second, is_admin=True)
    admin = as_user(world.user("lab_admin"))
    before = people()
    refused(lab_page(admin, world, {"remove": second.pk}), 403, "Only staff remove a lab admin.")
    refused(lab_page(admin, world, {"make_member": second.pk}), 403, "Only staff appoint")
    # adding an admin again as a plain member would demote them
    refused(lab_page(admin, world, {"username": "second"}), 403, "Only staff appoint")
    refused(api_members(admin, "lab-one", username="second"), 403, "Only staff appoint")
    refused(
        api_members(admin, "lab-one", method="delete", username="second"),
        403,
        "Only staff remove a lab admin.",
    )
    assert people() == before


def test_a_lab_member_changes_nobody(world, newcomer, caplog):
    member = as_user(world.user("lab_member"))
    before = people()
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        refused(lab_page(member, world, {"username": "newcomer"}), 403, "Only the admins", caplog)
    refused(lab_page(member, world, {"remove": world.user("lab_admin").pk}), 403, "Only the admins")
    refused(api_members(member, "lab-one", username="newcomer"), 403, "Only the admins")
    refused(
        api_members(member, "lab-one", method="delete", username="labadmin"),
        403,
        "Only the admins",
    )
    page = member.get(reverse("lab-detail", args=["lab-one"])).content.decode()
    assert "Add to lab" not in page and 'name="remove"' not in page
    assert people() == before


def test_another_labs_admin_cannot_reach_the_lab(world, newcomer, caplog):
    other = as_user(world.user("other_admin"))
    before = people()
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        assert lab_page(other, world, {"username": "newcomer"}).status_code == 404
    assert any("otheradmin" in r.getMessage() for r in caplog.records)
    assert lab_page(other, world, {"remove": world.user("lab_member").pk}).status_code == 404
    assert api_members(other, "lab-one", username="newcomer").status_code == 404
    assert api_members(other, "lab-one", method="delete", username="labmember").status_code == 404
    assert other.get(reverse("api-lab-members", args=["lab-one"])).status_code == 404
    listed = other.get(reverse("api-lab-list")).json()["results"]
    assert [lab["slug"] for lab in listed] == ["lab-two"]
    assert people() == before


def test_a_lab_admin_adds_and_removes_members_on_the_web_and_the_api(world, newcomer):
    admin = as_user(world.user("lab_admin"))
    page = admin.get(reverse("lab-detail", args=["lab-one"])).content.decode()
    assert "Add to lab" in page and 'name="is_admin"' not in page  # no admin box for them
    assert lab_page(admin, world, {"username": "newcomer"}).status_code == 302
    assert LabMembership.objects.get(lab=world.lab, user=newcomer).is_admin is False
    assert lab_page(admin, world, {"remove": newcomer.pk}).status_code == 302
    assert not LabMembership.objects.filter(lab=world.lab, user=newcomer).exists()
    added = api_members(admin, "lab-one", username="newcomer")
    assert added.status_code == 201 and added.json()["role"] == "member"
    removed = api_members(admin, "lab-one", method="delete", username="newcomer")
    assert removed.status_code == 204
    assert not LabMembership.objects.filter(lab=world.lab, user=newcomer).exists()


def test_staff_create_labs_and_appoint_and_remove_admins(world, newcomer):
    staff = as_user(world.user("superuser"))
    assert 'href="/labs/"' in staff.get(reverse("home")).content.decode()
    made = staff.post(reverse("lab-list"), {"name": "Vision lab", "admins": "newcomer"})
    assert made.status_code == 302
    lab = Lab.objects.get(slug="vision-lab")
    assert LabMembership.objects.get(lab=lab, user=newcomer).is_admin
    demoted = lab_page(staff, world, {"make_member": newcomer.pk}, slug="vision-lab")
    assert demoted.status_code == 302
    assert not LabMembership.objects.get(lab=lab, user=newcomer).is_admin
    made = staff.post(
        reverse("api-lab-list"),
        {"name": "Speech lab", "admins": ["newcomer"]},
        content_type="application/json",
    )
    assert made.status_code == 201 and made.json()["slug"] == "speech-lab"
    assert made.json()["n_admins"] == 1
    member = world.user("lab_member")
    assert api_members(staff, "lab-one", username="labmember", role="admin").status_code == 201
    assert LabMembership.objects.get(lab=world.lab, user=member).is_admin
    gone = api_members(staff, "lab-one", method="delete", username="labmember")
    assert gone.status_code == 204
    assert not LabMembership.objects.filter(lab=world.lab, user=member).exists()
    again = staff.post(reverse("lab-list"), {"name": "Vision lab"})
    refused(again, 400, "exists already")


def test_the_header_links_the_labs_page_for_staff_only(world):
    html = as_user(world.user("lab_admin")).get(reverse("home")).content.decode()
    assert 'href="/labs/"' not in html
