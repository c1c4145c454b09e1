from django.urls import path

from . import media_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/new/", views.project_create, name="project-create"),
    path("projects/example-config.yaml", views.example_config, name="example-config"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/members/", views.project_members, name="project-members"),
    path(
        "projects/<slug:slug>/members/invite/",
        views.project_invite,
        name="project-invite",
    ),
    path("projects/<slug:slug>/media/<path:path>", media_views.project_media, name="project-media"),
    path(
        "projects/<slug:slug>/points/<path:path>",
        media_views.project_points,
        name="project-points",
    ),
]
