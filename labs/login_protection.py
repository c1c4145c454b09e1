"""Login protection: who the client is, how many failed logins an account and an address
may have, what a locked-out client sees, and how often a password-reset e-mail is sent.

django-axes does the counting and the refusing on every path that logs someone in (web,
admin, API token), with its counters in the database; this module holds the settings it
calls back into. Password reset is not a login, so its throttle is here.
"""

import ipaddress
from datetime import timedelta

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db import transaction
from django.db.models import Q, Sum
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from labs.models import PasswordResetRequest


def client_address(request) -> str | None:
    """The client's IP address: the connection's (REMOTE_ADDR), or with TRUSTED_PROXY_COUNT
    = n > 0, the n-th address from the right of X-Forwarded-For, the one the outermost
    trusted proxy saw (the leftmost if the header holds fewer). None if it is no address."""
    address = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    if count > 0:
        header = request.META.get("HTTP_X_FORWARDED_FOR", "")
        forwarded = [part.strip() for part in header.split(",") if part.strip()]
        if forwarded:
            address = forwarded[-count] if len(forwarded) >= count else forwarded[0]
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def account_failure_limit(request=None, credentials=None) -> int:
    return settings.LOGIN_FAILURE_LIMIT


def cool_off(request=None) -> timedelta:
    return timedelta(minutes=settings.LOGIN_COOLOFF_MINUTES)


def lockout_message() -> str:
    return (
        "Too many failed log-in attempts for this account or from this address. "
        f"Try again in {settings.LOGIN_COOLOFF_MINUTES} minutes."
    )


class LoginFailureHandler(AxesDatabaseHandler):
    """Axes' database handler with a limit of its own for each lockout parameter: an
    account's failures (from any address) count against LOGIN_FAILURE_LIMIT, an address's
    failures (over any accounts) against the higher LOGIN_ADDRESS_FAILURE_LIMIT, so a
    forgetful user does not lock out the others behind the same address."""

    def get_failures(self, request, credentials=None) -> int:
        username = get_client_username(request, credentials)
        address = request.axes_ip_address
        by_account = Q(username=username)
        by_address = Q(ip_address=address)
        counts = AccessAttempt.objects.filter(
            by_account | by_address, attempt_time__gte=get_cool_off_threshold(request)
        ).aggregate(
            account=Sum("failures_since_start", filter=by_account),
            address=Sum("failures_since_start", filter=by_address),
        )
        # Axes compares one number with one limit (the account's): put the address's count
        # on that scale, so it reaches the account limit exactly when it reaches its own.
        headroom = settings.LOGIN_ADDRESS_FAILURE_LIMIT - settings.LOGIN_FAILURE_LIMIT
        return max(counts["account"] or 0, (counts["address"] or 0) - headroom)


def lockout_response(request, original_response=None, credentials=None) -> HttpResponse:
    """What a locked-out client gets, with status 429: the login form it posted (web or
    admin) with the lockout as its error, or the view's own 429 (the token API)."""
    if original_response is not None and original_response.status_code == 429:
        return original_response
    context = getattr(original_response, "context_data", None) or {}
    form = context.get("form")
    if form is None:
        response = HttpResponse(
            lockout_message(), status=429, content_type="text/plain; charset=utf-8"
        )
    else:
        form.errors.clear()
        form.add_error(None, lockout_message())
        response = TemplateResponse(
            request, original_response.template_name, context, status=429
        ).render()
    response["Retry-After"] = str(settings.LOGIN_COOLOFF_MINUTES * 60)
    return response


@transaction.atomic
def allow_password_reset(*, address: str | None, email: str) -> bool:
    """Record a request for a password-reset e-mail, unless this address or this e-mail
    address already had their share within the window; say whether to send it. Requests
    count whether or not an account has the address, so the answer reveals none."""
    now = timezone.now()
    since = now - timedelta(minutes=settings.PASSWORD_RESET_WINDOW_MINUTES)
    PasswordResetRequest.objects.filter(requested_at__lt=since).delete()
    digest = salted_hmac("password-reset-throttle", email.strip().lower()).hexdigest()
    recent = PasswordResetRequest.objects.filter(requested_at__gte=since)
    if (
        recent.filter(address=address).count() >= settings.PASSWORD_RESET_ADDRESS_LIMIT
        or recent.filter(email_digest=digest).count() >= settings.PASSWORD_RESET_EMAIL_LIMIT
    ):
        return False
    PasswordResetRequest.objects.create(address=address, email_digest=digest, requested_at=now)
    return True


def password_reset_refusal() -> str:
    return (
        "Too many password-reset requests from this address or for this e-mail address. "
        f"Try again in {settings.PASSWORD_RESET_WINDOW_MINUTES} minutes."
    )
