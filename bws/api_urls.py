from django.urls import path

from . import api, api_quality

urlpatterns = [
    path("projects/<slug:slug>/scores/", api.ScoresApi.as_view(), name="api-scores"),
    path(
        "projects/<slug:slug>/scores/runs/<int:run_id>/", api.RunApi.as_view(), name="api-score-run"
    ),
    path(
        "projects/<slug:slug>/scores/compare/", api.CompareApi.as_view(), name="api-scores-compare"
    ),
    path("projects/<slug:slug>/design/", api.DesignApi.as_view(), name="api-design"),
    path("projects/<slug:slug>/quality/", api_quality.QualityApi.as_view(), name="api-quality"),
    path(
        "projects/<slug:slug>/exclusions/",
        api_quality.ExclusionsApi.as_view(),
        name="api-exclusions",
    ),
]
