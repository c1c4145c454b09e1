from django.urls import path

from annotation import api
from crowds import api as api_participants
from labs import api as api_labs
from labs import token_api
from projects import api_manage

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
    path("labs/", api_labs.LabsApi.as_view(), name="api-lab-list"),
    path("labs/<slug:slug>/members/", api_labs.LabMembersApi.as_view(), name="api-lab-members"),
    path("projects/", api_manage.ProjectListCreateApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/members/", api_manage.MembersApi.as_view(), name="api-members"),
    path("projects/<slug:slug>/items/", api_manage.ItemsApi.as_view(), name="api-items"),
    path("projects/<slug:slug>/tuples/", api_manage.TuplesApi.as_view(), name="api-tuples"),
    path("projects/<slug:slug>/export/", api_manage.ExportApi.as_view(), name="api-export"),
    path(
        "projects/<slug:slug>/participants/",
        api_participants.ParticipantsApi.as_view(),
        name="api-participants",
    ),
    path("projects/<slug:slug>/queue/next/", api.QueueNextApi.as_view(), name="api-queue-next"),
    path(
        "projects/<slug:slug>/gold/reset/",
        api.ScreeningResetApi.as_view(),
        name="api-screening-reset",
    ),
    path("projects/<slug:slug>/annotations/", api.AnnotationsApi.as_view(), name="api-annotations"),
]
