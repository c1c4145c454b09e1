from django.urls import path

from . import api

urlpatterns = [
    path("auth/token/", api.TokenApi.as_view(), name="api-token"),
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/queue/next/", api.QueueNextApi.as_view(), name="api-queue-next"),
    path("projects/<slug:slug>/annotations/", api.AnnotationsApi.as_view(), name="api-annotations"),
]
