from django.urls import path

from . import api, token_api

urlpatterns = [
    path("auth/token/", token_api.TokenApi.as_view(), name="api-token"),
    path("auth/tokens/", token_api.TokenListApi.as_view(), name="api-token-list"),
    path(
        "auth/tokens/revoke-all/",
        token_api.TokenRevokeAllApi.as_view(),
        name="api-token-revoke-all",
    ),
    path(
        "auth/tokens/<slug:token_key>/",
        token_api.TokenRevokeApi.as_view(),
        name="api-token-revoke",
    ),
    path("labs/", api.LabsApi.as_view(), name="api-lab-list"),
    path("labs/<slug:slug>/members/", api.LabMembersApi.as_view(), name="api-lab-members"),
]
