from django.urls import path

from . import instructions_views, views

urlpatterns = [
    path("projects/<slug:slug>/export/", views.project_export, name="project-export"),
    path(
        "projects/<slug:slug>/instructions/",
        instructions_views.project_instructions,
        name="project-instructions",
    ),
    path("projects/<slug:slug>/annotate/", views.annotate, name="annotate"),
    path("projects/<slug:slug>/annotate/<int:unit_id>/", views.annotate_unit, name="annotate-unit"),
]
