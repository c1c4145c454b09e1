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
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/queue/next/", api.QueueNextApi.as_view(), name="api-queue-next"),
    path("projects/<slug:slug>/annotations/", api.AnnotationsApi.as_view(), name="api-annotations"),
]
