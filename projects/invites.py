"""Invites: a manager makes an account for someone and hands them a link to set its password.

The link carries Django's password-reset kind of token (django.contrib.auth.tokens), salted
apart from reset links and with a lifetime of its own (INVITE_TIMEOUT_DAYS). It is single
use because the token hashes the password and the last login: setting the password, logging
in or sending a new invite (a fresh unusable password) ends every earlier link. It also
hashes what the account may do (staff, active, its labs and projects with their roles), so a
link made for an account as it was stops working once its rights change.

A link is made only for an account the inviter may manage (may_manage_account): a new one the
invite makes, or an existing one whose every lab and project the inviter administers, never a
staff account. Otherwise a project manager could take over any unused account by adding it
to their project and sending it a link.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils.crypto import constant_time_compare
from django.utils.encoding import force_bytes
from django.utils.http import base36_to_int, urlsafe_base64_encode

from projects.models import LabMembership, Membership, Project
from projects.selectors import can_manage

security_log = logging.getLogger("annolab.security")

# An account counts as made by an invite into a project when it joined the project within
# this long of being created (invite_new_member and the members form do both at once).
MADE_WITH_MEMBERSHIP = timedelta(seconds=60)


def invite_lifetime() -> timedelta:
    return timedelta(days=settings.INVITE_TIMEOUT_DAYS)


class InviteTokenGenerator(PasswordResetTokenGenerator):
    """Password-reset tokens under another salt (a reset link is no invite and the other way
    round) that expire after INVITE_TIMEOUT_DAYS instead of PASSWORD_RESET_TIMEOUT."""

    key_salt = "annolab.projects.invites.InviteTokenGenerator"

    def _make_hash_value(self, user, timestamp):
        labs = sorted(LabMembership.objects.filter(user=user).values_list("lab_id", "is_admin"))
        projects = sorted(Membership.objects.filter(user=user).values_list("project_id", "role"))
        rights = f"{user.is_staff:d}{user.is_superuser:d}{user.is_active:d}"
        return f"{super()._make_hash_value(user, timestamp)}|{rights}|{labs}|{projects}"

    def check_token(self, user, token):
        if not (user and token) or token.count("-") != 1:
            return False
        ts_b36 = token.split("-")[0]
        try:
            ts = base36_to_int(ts_b36)
        except ValueError:
            return False
        if not any(
            constant_time_compare(self._make_token_with_timestamp(user, ts, secret), token)
            for secret in [self.secret, *self.secret_fallbacks]
        ):
            return False
        age = self._num_seconds(self._now()) - ts
        return 0 <= age <= invite_lifetime().total_seconds()


invite_token_generator = InviteTokenGenerator()


class InviteRefused(ValueError):
    """An invite that cannot be made; the message says why, for the manager."""


class InviteForbidden(InviteRefused):
    """An invite for an account the inviter may not manage (a 403, logged)."""


@dataclass
class Invite:
    user: object
    path: str  # the set-password page's path; the view makes it absolute
    role: str = ""
    created: bool = False


def invite_path(user) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("invite-accept", args=[uid, invite_token_generator.make_token(user)])


def may_be_invited(user) -> bool:
    """Only accounts nobody has used yet: no login, no password of their own."""
    return user.is_active and user.last_login is None and not user.has_usable_password()


@transaction.atomic
def invite_new_member(*, project: Project, username: str, email: str, role: str) -> Invite:
    """A new account with no usable password, made a member of the project with the role,
    and its invite link. Refuses a username (or e-mail address) some account already has."""
    User = get_user_model()
    if role not in Membership.Role.values:
        raise InviteRefused(f"Choose a role: {', '.join(Membership.Role.values)}.")
    if User.objects.filter(username__iexact=username).exists():
        raise InviteRefused(
            f"An account named {username} exists already: add it with the list above."
        )
    if email and User.objects.filter(email__iexact=email).exists():
        raise InviteRefused(
            f"An account with the address {email} exists already: add it by its username."
        )
    user = User(username=username, email=email)
    user.set_unusable_password()
    user.save()
    Membership.objects.create(user=user, project=project, role=role)
    return Invite(user=user, path=invite_path(user), role=role, created=True)


def invite_refusals(*, inviter, project: Project, users) -> dict[int, str]:
    """Per account (by pk): why the inviter may not send it an invite link from the project,
    or "" when they may. They may for an account that is no staff account and is active, if
    they are staff, or administer every lab the account belongs to and the lab of every
    project it is in; a project's manager may also for an account their invite made for
    this project that belongs to nothing else."""
    users = list(users)
    pks = [u.pk for u in users]
    labs, projects = defaultdict(set), defaultdict(list)
    for user_id, lab_id in LabMembership.objects.filter(user__in=pks).values_list(
        "user_id", "lab_id"
    ):
        labs[user_id].add(lab_id)
    for row in Membership.objects.filter(user__in=pks).values_list(
        "user_id", "project_id", "project__lab_id", "created_at"
    ):
        projects[row[0]].append(row[1:])
    administered = set(
        LabMembership.objects.filter(user=inviter, is_admin=True).values_list("lab_id", flat=True)
    )
    return {
        user.pk: _refusal(inviter, project, user, labs[user.pk], projects[user.pk], administered)
        for user in users
    }


def _refusal(inviter, project, user, labs, projects, administered) -> str:
    name = user.get_username()
    if user.is_staff or user.is_superuser:
        return (
            f"{name} is a staff account: invite links are never made for staff. "
            f"Its password is set with manage.py changepassword {name}."
        )
    if not user.is_active:
        return f"{name}'s account is deactivated: no invite link is made for it."
    if inviter.is_staff:
        return ""
    if labs - administered:
        return (
            f"{name} belongs to a lab you do not administer: only that lab's admins or "
            "staff can send this account an invite link."
        )
    outside = [row for row in projects if row[1] not in administered]
    if not outside:
        return ""
    if any(project_id != project.pk for project_id, _, _ in outside):
        return (
            f"{name} is a member of projects you do not manage: only the admins of all its "
            "labs, or staff, can send this account an invite link."
        )
    joined = outside[0][2]
    if labs or not (user.date_joined <= joined <= user.date_joined + MADE_WITH_MEMBERSHIP):
        return (
            f"{name} had an account before joining this project: only the admins of its "
            "labs, or staff, can send it an invite link."
        )
    return ""


@transaction.atomic
def renew_invite(*, project: Project, user, inviter) -> Invite:
    """A new invite link for a member who never logged in, if the inviter may manage the
    account (invite_refusals); earlier links stop working. A refusal changes nothing and is
    logged."""

    def refuse(error: InviteRefused):
        security_log.warning(
            "invite refused: %s asked for a new invite link for %s in project %s: %s",
            inviter.get_username(),
            user.get_username(),
            project.slug,
            error,
        )
        raise error

    if not can_manage(inviter, project):
        refuse(InviteForbidden("Only this project's managers can send its invite links."))
    if not Membership.objects.filter(project=project, user=user).exists():
        refuse(InviteRefused("Only a member of this project can be sent an invite from here."))
    # locked, so a login or a role change cannot slip in between the check and the link
    user = type(user).objects.select_for_update().get(pk=user.pk)
    if reason := invite_refusals(inviter=inviter, project=project, users=[user])[user.pk]:
        refuse(InviteForbidden(reason))
    if not may_be_invited(user):
        refuse(
            InviteRefused(
                f"{user.username} has logged in or set a password already: "
                "they can ask for a password reset."
            )
        )
    user.set_unusable_password()  # a new random marker: every earlier token stops matching
    user.save(update_fields=["password"])
    return Invite(user=user, path=invite_path(user))


def invitable_member_ids(*, inviter, project: Project, memberships) -> set[int]:
    """Members of a list the inviter may send a new invite link: they never logged in and
    the inviter may manage their account (invite_refusals)."""
    unused = [m.user for m in memberships if may_be_invited(m.user)]
    refusals = invite_refusals(inviter=inviter, project=project, users=unused)
    return {pk for pk, reason in refusals.items() if not reason}


def mail_invite(*, invite: Invite, link: str, project: Project, sender) -> bool:
    """E-mail the link to the invited person if they have an address; True when sent."""
    if not invite.user.email:
        return False
    days = invite_lifetime().days
    body = (
        f"{sender.get_username()} invited you to the annotation project "
        f"{project.name!r} on Annolab, with the username {invite.user.get_username()}.\n\n"
        f"Choose your password here (the link works once, for {days} days):\n{link}\n"
    )
    send_mail(
        subject=f"Your Annolab account for {project.name}",
        message=body,
        from_email=None,
        recipient_list=[invite.user.email],
    )
    return True


@transaction.atomic
def create_missing_accounts(entries, *, project: Project, role: str) -> list[Invite]:
    """For each pasted entry that named no account, a new account with no usable password,
    made a member of the project with the role: a username entry becomes the username, an
    e-mail entry both username and address. The entry then names the account; an entry that
    clashes with an account (another case of the same name) is left as it was, with the
    reason. The links are made once the memberships exist, since the token hashes them."""
    User = get_user_model()
    if role not in Membership.Role.values:
        raise InviteRefused(f"Choose a role: {', '.join(Membership.Role.values)}.")
    invites = []
    for entry in entries:
        shared = "accounts share" in entry.detail  # an address some accounts have already
        if entry.user is not None or entry.outcome != "unknown" or shared:
            continue
        if len(entry.text) > 150:
            entry.detail = "too long for a username (at most 150 characters)"
            continue
        email = entry.text if "@" in entry.text else ""
        clash = User.objects.filter(username__iexact=entry.text).first()
        if clash is not None:
            entry.detail = f"the account {clash.username} has this name in another case"
            continue
        user = User(username=entry.text, email=email)
        user.set_unusable_password()
        user.save()
        Membership.objects.create(user=user, project=project, role=role)
        entry.user, entry.outcome = user, "created"
        invites.append(Invite(user=user, path=invite_path(user), role=role, created=True))
    return invites
