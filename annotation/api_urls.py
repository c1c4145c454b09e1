from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/export/", api.ExportApi.as_view(), name="api-export"),
    path("projects/<slug:slug>/queue/next/", api.QueueNextApi.as_view(), name="api-queue-next"),
    path("projects/<slug:slug>/annotations/", api.AnnotationsApi.as_view(), name="api-annotations"),
]
