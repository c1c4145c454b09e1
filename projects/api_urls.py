from django.urls import path

from . import api

urlpatterns = [
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
]
