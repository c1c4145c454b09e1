"""API token authentication: knox's, with the token and its user read in one hand-written
statement, and without knox's sweep of the caller's other tokens.

knox reads every token of the user on each request to delete the expired ones: one more
query on every API call, the annotator's queue included. Here only the token presented is
checked (an expired one is refused and deleted, as knox does); the others are dropped when
the user is issued a new token (labs.tokens.issue_token) and never listed once expired.
The token is looked up on every request (nothing is kept between requests), so a revoked
or deleted token is refused at once.
"""

import binascii
from functools import cache
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework.exceptions import AuthenticationFailed

from projects import hot_sql


class TokenAuthentication(KnoxTokenAuthentication):
    def authenticate_credentials(self, token: bytes):
        """The user and token that this token string is, or AuthenticationFailed: the
        candidates share the string's key prefix; the one whose digest matches counts,
        unless it has expired (then it is deleted) or its user is inactive."""
        refused = _("Invalid token.")
        token = token.decode("utf-8")
        for auth_token in _tokens(token[: CONSTANTS.TOKEN_KEY_LENGTH]):
            if self._cleanup_token(auth_token):
                continue
            try:
                digest = hash_token(token)
            except (TypeError, binascii.Error):
                raise AuthenticationFailed(refused) from None
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                return self.validate_user(auth_token)
        raise AuthenticationFailed(refused)

    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False


@cache
def _tokens_sql(vendor: str) -> str:
    q = hot_sql.quote
    Token, User = get_token_model(), get_user_model()
    return (
        f"SELECT {hot_sql.columns(Token, 't')}, {hot_sql.columns(User, 'u')} "
        f"FROM {q(Token._meta.db_table)} t INNER JOIN {q(User._meta.db_table)} u "
        f"ON u.{q(User._meta.pk.column)} = t.{q('user_id')} WHERE t.{q('token_key')} = %s"
    )


def _tokens(key: str) -> list:
    """The tokens with this key prefix, each with its user (knox's select_related)."""
    Token, User = get_token_model(), get_user_model()
    with connection.cursor() as cursor:
        cursor.execute(_tokens_sql(connection.vendor), [key])
        rows = cursor.fetchall()
    n = hot_sql.width(Token)
    found = []
    for row in rows:
        auth_token = hot_sql.load(Token, row[:n])
        auth_token.user = hot_sql.load(User, row[n:])
        found.append(auth_token)
    return found


class TokenScheme(KnoxTokenScheme):
    """The API schema names this authentication as it named knox's."""

    target_class = "labs.token_auth.TokenAuthentication"
