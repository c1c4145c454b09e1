"""API tokens (django-rest-knox): issued at login with a lifetime, stored only as a hash,
listed and revoked by their owner, and all revoked when the owner's password changes."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken


def live_tokens(*, user) -> QuerySet[AuthToken]:
    """The user's tokens that have not expired, newest first."""
    now = timezone.now()
    return AuthToken.objects.filter(Q(expiry__isnull=True) | Q(expiry__gt=now), user=user).order_by(
        "-created"
    )


@transaction.atomic
def issue_token(*, user) -> tuple[AuthToken, str]:
    """A new token for the user, valid for API_TOKEN_TTL_HOURS; returns the stored record
    and the key, which is shown this once and never stored. Expired tokens are dropped, and
    the oldest ones beyond API_TOKENS_PER_USER (a script that logs in on every run)."""
    AuthToken.objects.filter(user=user, expiry__lte=timezone.now()).delete()
    keep = max(settings.API_TOKENS_PER_USER - 1, 0)
    oldest = (
        AuthToken.objects.filter(user=user)
        .order_by("-created")
        .values_list("digest", flat=True)[keep:]
    )
    AuthToken.objects.filter(digest__in=list(oldest)).delete()
    return AuthToken.objects.create(user=user, expiry=timedelta(hours=settings.API_TOKEN_TTL_HOURS))


def revoke_token(*, user, token_key: str) -> int:
    """Revoke the user's token that starts with this key; returns how many went (0 or 1)."""
    deleted, _ = AuthToken.objects.filter(user=user, token_key=token_key).delete()
    return deleted


def revoke_all_tokens(*, user) -> int:
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted
