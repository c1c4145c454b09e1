from django.urls import path

from . import api

urlpatterns = [
    path(
        "projects/<slug:slug>/participants/",
        api.ParticipantsApi.as_view(),
        name="api-participants",
    ),
    path(
        "projects/<slug:slug>/gold/reset/",
        api.ScreeningResetApi.as_view(),
        name="api-screening-reset",
    ),
]
