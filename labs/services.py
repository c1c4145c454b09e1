"""Labs and their people: who may create a lab, appoint its admins and add its members.

Staff create labs and appoint or remove lab admins; a lab's admins add and remove its
members (not admins). One rule for the web page, the API and the commands: each change goes
through a function here that checks it, writes it with projects.services, or raises
LabRefused with a message and a status, logged on "annolab.security", changing nothing.
"""

import logging
import re
from dataclasses import dataclass
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from projects import selectors, services
from projects.models import Lab, LabMembership

User = get_user_model()
security_log = logging.getLogger("annolab.security")
SLUG = re.compile(r"[-a-zA-Z0-9_]+")

# Who acts from manage.py (create_lab, lab_admins): the operator of the server, as staff.
OPERATOR = SimpleNamespace(is_staff=True, get_username=lambda: "manage.py")


class LabRefused(ValueError):
    """A change to a lab that is not allowed or cannot be made; ``status`` is 400 for a bad
    request, 403 when the person may not make it, 404 for a lab or account that is not there."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def refuse(actor, what: str, message: str, status: int) -> LabRefused:
    """The refusal to raise, logged when it is about who may do what."""
    if status in (403, 404):
        security_log.warning(
            "lab change refused: %s tried to %s: %s", actor.get_username(), what, message
        )
    return LabRefused(message, status)


def may_administer(actor, lab: Lab) -> bool:
    """Staff, or an admin of this lab."""
    return actor.is_staff or selectors.is_lab_admin(actor, lab.pk)


def visible_lab(actor, slug: str, *, changing: bool = False) -> Lab:
    """The lab with this slug if the actor belongs to it (staff: any lab); LabRefused (404)
    otherwise, logged when the actor meant to change it."""
    lab = selectors.visible_labs(actor).filter(slug=slug).first()
    if lab is None:
        what = f"change the people of the lab {slug[:100]!r}"
        if changing:
            raise refuse(actor, what, "No such lab.", 404)
        raise LabRefused("No such lab.", 404)
    return lab


def account(username: str):
    """The account with this exact username, or LabRefused (404)."""
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise LabRefused(f"No account is named {username.strip()[:150]}.", 404)
    return user


@transaction.atomic
def create_lab(*, actor, name: str, slug: str = "", admins=()) -> Lab:
    """A new lab with its first admins; staff only."""
    name, slug = name.strip(), (slug or "").strip()
    if not actor.is_staff:
        raise refuse(actor, f"create the lab {name[:200]!r}", "Only staff create labs.", 403)
    if not name or len(name) > 200:
        raise LabRefused("Give the lab a name (at most 200 characters).")
    slug = slug or slugify(name)[:100]
    if not SLUG.fullmatch(slug) or len(slug) > 100:
        raise LabRefused(f"slug {slug[:100]!r}: use letters, digits, '-' and '_' only.")
    if Lab.objects.filter(slug=slug).exists():
        raise LabRefused(f"A lab with the slug {slug} exists already.")
    try:
        with transaction.atomic():
            return services.create_lab(name=name, slug=slug, admins=admins)
    except IntegrityError:  # the same slug made at the same moment
        raise LabRefused(f"A lab with the slug {slug} exists already.") from None


@dataclass(frozen=True)
class LabChange:
    username: str
    lab: str
    is_admin: bool
    before: str  # "" (not in the lab), "member" or "admin"


def _standing(lab: Lab, user) -> str:
    found = LabMembership.objects.filter(lab=lab, user=user).values_list("is_admin", flat=True)
    return "" if not found else ("admin" if found[0] else "member")


@transaction.atomic
def add_person(*, actor, lab: Lab, user, is_admin: bool = False) -> LabChange:
    """Put an account in the lab as a member, or (staff only) as an admin. A lab's admins add
    members; only staff appoint admins or make an admin a plain member again."""
    before = _standing(lab, user)
    role = "admin" if is_admin else "member"
    what = f"make {user.get_username()} a lab {role} of {lab.slug}"
    if not may_administer(actor, lab):
        raise refuse(actor, what, f"Only the admins of {lab.name} or staff add its people.", 403)
    if not actor.is_staff and (is_admin or before == "admin"):
        raise refuse(actor, what, "Only staff appoint or remove lab admins.", 403)
    services.add_lab_member(lab=lab, user=user, is_admin=is_admin)
    return LabChange(user.get_username(), lab.slug, is_admin, before)


@transaction.atomic
def remove_person(*, actor, lab: Lab, user) -> LabChange:
    """Take an account out of the lab. A lab's admins remove members; only staff remove an
    admin. Its project memberships stay: those are the projects' managers' to change."""
    before = _standing(lab, user)
    what = f"remove {user.get_username()} from {lab.slug}"
    if not may_administer(actor, lab):
        raise refuse(actor, what, f"Only the admins of {lab.name} or staff remove its people.", 403)
    if not before:
        raise LabRefused(f"{user.get_username()} is not in {lab.name}.", 404)
    if before == "admin" and not actor.is_staff:
        raise refuse(actor, what, "Only staff remove a lab admin.", 403)
    services.remove_lab_member(lab=lab, user=user)
    return LabChange(user.get_username(), lab.slug, False, before)
