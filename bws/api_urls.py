from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/scores/", api.ScoresApi.as_view(), name="api-scores"),
    path(
        "projects/<slug:slug>/scores/runs/<int:run_id>/", api.RunApi.as_view(), name="api-score-run"
    ),
]
