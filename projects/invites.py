"""Invites: a manager makes an account for someone and hands them a link to set its password.

The link carries Django's password-reset kind of token (django.contrib.auth.tokens), salted
apart from reset links and with a lifetime of its own (INVITE_TIMEOUT_DAYS). It is single
use because the token hashes the password and the last login: setting the password, logging
in or sending a new invite (a fresh unusable password) ends every earlier link.
"""

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

from .models import Membership, Project


def invite_lifetime() -> timedelta:
    return timedelta(days=settings.INVITE_TIMEOUT_DAYS)


class InviteTokenGenerator(PasswordResetTokenGenerator):
    """Password-reset tokens under another salt (a reset link is no invite and the other way
    round) that expire after INVITE_TIMEOUT_DAYS instead of PASSWORD_RESET_TIMEOUT."""

    key_salt = "annolab.projects.invites.InviteTokenGenerator"

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


@transaction.atomic
def renew_invite(*, project: Project, user) -> Invite:
    """A new invite link for a member who never logged in; earlier links stop working."""
    if not Membership.objects.filter(project=project, user=user).exists():
        raise InviteRefused("Only a member of this project can be sent an invite from here.")
    if not may_be_invited(user):
        raise InviteRefused(
            f"{user.username} has logged in or set a password already: "
            "they can ask for a password reset."
        )
    user.set_unusable_password()  # a new random marker: every earlier token stops matching
    user.save(update_fields=["password"])
    return Invite(user=user, path=invite_path(user))


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
def create_missing_accounts(entries) -> list[Invite]:
    """For each pasted entry that named no account, a new account with no usable password:
    a username entry becomes the username, an e-mail entry both username and address. The
    entry then names the account; an entry that clashes with an account (another case of
    the same name) is left as it was, with the reason."""
    User = get_user_model()
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
        entry.user, entry.outcome = user, "created"
        invites.append(Invite(user=user, path=invite_path(user), created=True))
    return invites
