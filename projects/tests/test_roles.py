"""Who sees which project, and who may manage it."""

import pytest
from django.db import IntegrityError

from projects import selectors
from projects.models import Membership
from projects.tests.factories import (
    LabFactory,
    LabMembershipFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def slugs(user):
    return set(selectors.visible_projects(user).values_list("slug", flat=True))


def test_annotator_sees_only_own_and_open_projects():
    lab = LabFactory()
    mine = ProjectFactory(lab=lab, slug="mine")
    ProjectFactory(lab=lab, slug="theirs")
    ProjectFactory(lab=lab, slug="open", allow_all_users=True)
    user = UserFactory()
    MembershipFactory(user=user, project=mine)
    assert slugs(user) == {"mine", "open"}
    assert selectors.project_role(user, mine) == "annotator"
    assert not selectors.can_manage(user, mine)


def test_staff_see_everything():
    ProjectFactory(slug="a")
    ProjectFactory(slug="b")
    staff = UserFactory(is_staff=True)
    assert slugs(staff) == {"a", "b"}


def test_lab_admin_sees_and_manages_own_lab_only():
    lab, other = LabFactory(), LabFactory()
    p1 = ProjectFactory(lab=lab, slug="in-lab")
    p2 = ProjectFactory(lab=other, slug="other-lab")
    admin = UserFactory()
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    assert slugs(admin) == {"in-lab"}
    assert selectors.can_manage(admin, p1)
    assert not selectors.can_manage(admin, p2)
    assert list(selectors.labs_for_project_creation(admin)) == [lab]


def test_plain_lab_member_does_not_see_lab_projects():
    lab = LabFactory()
    ProjectFactory(lab=lab, slug="closed")
    member = UserFactory()
    LabMembershipFactory(lab=lab, user=member, is_admin=False)
    assert slugs(member) == set()
    assert not selectors.labs_for_project_creation(member).exists()


def test_person_in_several_labs():
    a, b = LabFactory(), LabFactory()
    user = UserFactory()
    LabMembershipFactory(lab=a, user=user, is_admin=True)
    LabMembershipFactory(lab=b, user=user, is_admin=False)
    assert set(selectors.visible_labs(user)) == {a, b}
    assert list(selectors.labs_for_project_creation(user)) == [a]


def test_manager_membership_manages():
    project = ProjectFactory()
    user = UserFactory()
    MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    assert selectors.can_manage(user, project)


def test_membership_unique_per_user_and_project():
    m = MembershipFactory()
    with pytest.raises(IntegrityError):
        Membership.objects.create(user=m.user, project=m.project, role="manager")


def test_anonymous_sees_nothing():
    from django.contrib.auth.models import AnonymousUser

    ProjectFactory(allow_all_users=True)
    assert slugs(AnonymousUser()) == set()
