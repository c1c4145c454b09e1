from django.urls import path

from . import quality_views, views

urlpatterns = [
    path("projects/<slug:slug>/bws/", views.dashboard, name="bws-dashboard"),
    path("projects/<slug:slug>/bws/rescore/", views.rescore, name="bws-rescore"),
    path("projects/<slug:slug>/bws/download/", views.download, name="bws-download"),
    path("projects/<slug:slug>/quality/", quality_views.quality_page, name="project-quality"),
    path(
        "projects/<slug:slug>/quality/exclude/",
        quality_views.quality_exclude,
        name="project-quality-exclude",
    ),
]
