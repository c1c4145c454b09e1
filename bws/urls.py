from django.urls import path

from . import views

urlpatterns = [
    path("projects/<slug:slug>/bws/", views.dashboard, name="bws-dashboard"),
    path("projects/<slug:slug>/bws/rescore/", views.rescore, name="bws-rescore"),
    path("projects/<slug:slug>/bws/download/", views.download, name="bws-download"),
]
