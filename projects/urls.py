from django.urls import path

from crowds import gold_views, instructions_views
from crowds import views as participant_views
from labs import invite_views
from labs import views as labs_views
from projects import media_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/new/", views.project_create, name="project-create"),
    path("projects/example-config.yaml", views.example_config, name="example-config"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/members/", views.project_members, name="project-members"),
    path(
        "projects/<slug:slug>/members/invite/",
        invite_views.project_invite,
        name="project-invite",
    ),
    path("projects/<slug:slug>/export/", views.project_export, name="project-export"),
    path(
        "projects/<slug:slug>/instructions/",
        instructions_views.project_instructions,
        name="project-instructions",
    ),
    path("projects/<slug:slug>/training/", gold_views.training, name="project-training"),
    path(
        "projects/<slug:slug>/training/reset/",
        gold_views.screening_reset,
        name="project-screening-reset",
    ),
    path("projects/<slug:slug>/annotate/", views.annotate, name="annotate"),
    path("projects/<slug:slug>/annotate/<int:unit_id>/", views.annotate_unit, name="annotate-unit"),
    path("projects/<slug:slug>/media/<path:path>", media_views.project_media, name="project-media"),
    path(
        "projects/<slug:slug>/points/<path:path>",
        media_views.project_points,
        name="project-points",
    ),
    path("labs/", labs_views.lab_list, name="lab-list"),
    path("labs/<slug:slug>/", labs_views.lab_detail, name="lab-detail"),
    # Participant links (crowds/participants.py): public entry, then the participant's flow.
    path("p/<slug:slug>/start", participant_views.participant_start, name="participant-start"),
    path("p/<slug:slug>/", participant_views.participant_flow, name="participant-flow"),
    path(
        "p/<slug:slug>/consent/",
        participant_views.participant_consent,
        name="participant-consent",
    ),
    path("p/<slug:slug>/done/", participant_views.participant_done, name="participant-done"),
    path(
        "projects/<slug:slug>/participants.csv",
        participant_views.participants_export,
        name="participants-export",
    ),
]
