"""API token authentication: knox's, without its sweep of the caller's other tokens.

knox reads every token of the user on each request to delete the expired ones: one more
query on every API call, the annotator's queue included. Here only the token presented is
checked (an expired one is refused and deleted, as knox does); the others are dropped when
the user is issued a new token (projects.tokens.issue_token) and never listed once expired.
"""

from django.utils import timezone
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from knox.signals import token_expired


class TokenAuthentication(KnoxTokenAuthentication):
    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False


class TokenScheme(KnoxTokenScheme):
    """The API schema names this authentication as it named knox's."""

    target_class = "projects.token_auth.TokenAuthentication"
