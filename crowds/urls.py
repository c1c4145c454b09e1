from django.urls import path

from . import gold_views, views

urlpatterns = [
    path("projects/<slug:slug>/training/", gold_views.training, name="project-training"),
    path(
        "projects/<slug:slug>/training/reset/",
        gold_views.screening_reset,
        name="project-screening-reset",
    ),
    path("p/<slug:slug>/start", views.participant_start, name="participant-start"),
    path("p/<slug:slug>/", views.participant_flow, name="participant-flow"),
    path(
        "p/<slug:slug>/consent/",
        views.participant_consent,
        name="participant-consent",
    ),
    path("p/<slug:slug>/done/", views.participant_done, name="participant-done"),
    path(
        "projects/<slug:slug>/participants.csv",
        views.participants_export,
        name="participants-export",
    ),
]
