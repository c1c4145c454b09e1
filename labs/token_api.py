"""API tokens over the API: log in for a token, list your tokens, revoke one or all."""

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import update_last_login
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from knox.models import AuthToken
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, Throttled, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from labs import tokens
from labs.login_protection import lockout_message

# Longer passwords are refused before anything is hashed.
MAX_PASSWORD_LENGTH = 4096


class TokenInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(
        max_length=MAX_PASSWORD_LENGTH,
        style={"input_type": "password"},
        trim_whitespace=False,
    )


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")
    token_key = serializers.CharField(help_text="The token's first characters: its name.")
    expiry = serializers.DateTimeField()


class TokenListOutputSerializer(serializers.Serializer):
    token_key = serializers.CharField()
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(allow_null=True)
    current = serializers.SerializerMethodField(help_text="The token of this request.")

    def get_current(self, token) -> bool:
        return getattr(self.context["request"].auth, "digest", None) == token.digest


class TokenApi(APIView):
    """Exchange a username and password for an API token that expires (the reply says
    when). Failed attempts count towards the login lockout (429 while it lasts)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        tags=["Auth"],
        operation_id="token_create",
        summary="Log in: get an API token",
        request=TokenInputSerializer,
        responses={
            200: TokenOutputSerializer,
            400: OpenApiResponse(description="Wrong username or password."),
            429: OpenApiResponse(description="Locked out after too many failures."),
        },
    )
    def post(self, request):
        data = TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Axes records and refuses on the Django request, which its middleware reads.
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if getattr(request._request, "axes_locked_out", False):
            raise Throttled(wait=settings.LOGIN_COOLOFF_MINUTES * 60, detail=lockout_message())
        if user is None or not user.is_active:
            raise ValidationError(
                {"non_field_errors": ["Unable to log in with these credentials."]}
            )
        record, key = tokens.issue_token(user=user)
        update_last_login(None, user)
        return Response({"token": key, "token_key": record.token_key, "expiry": record.expiry})


@extend_schema_view(
    get=extend_schema(tags=["Auth"], operation_id="tokens_list", summary="List your tokens")
)
class TokenListApi(generics.ListAPIView):
    """Your API tokens that have not expired, newest first (never their keys)."""

    serializer_class = TokenListOutputSerializer
    # Names the model for the schema, which is generated without a user.
    queryset = AuthToken.objects.none()

    def get_queryset(self):
        return tokens.live_tokens(user=self.request.user)


class TokenRevokeApi(APIView):
    """Revoke one of your tokens, named by its `token_key`."""

    @extend_schema(
        tags=["Auth"],
        operation_id="token_revoke",
        summary="Revoke a token",
        request=None,
        responses={204: None, 404: OpenApiResponse()},
    )
    def delete(self, request, token_key):
        if not tokens.revoke_token(user=request.user, token_key=token_key):
            raise NotFound("You have no token with this key.")
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenRevokeAllApi(APIView):
    """Revoke every one of your tokens (the one of this request too)."""

    @extend_schema(
        tags=["Auth"],
        operation_id="tokens_revoke_all",
        summary="Revoke all your tokens",
        request=None,
        responses={
            200: inline_serializer("TokensRevoked", {"revoked": serializers.IntegerField()})
        },
    )
    def post(self, request):
        return Response({"revoked": tokens.revoke_all_tokens(user=request.user)})
