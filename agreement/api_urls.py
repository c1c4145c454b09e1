from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:slug>/agreement/", api.AgreementApi.as_view(), name="api-agreement"),
]
