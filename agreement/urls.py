"""Manager pages of a project's agreement, included under projects/<slug>/admin/."""

from django.urls import path

from . import views

urlpatterns = [
    path("iaa", views.iaa_report, name="agreement-iaa"),
    path("api/agreement", views.categorical_agreement, name="agreement-categorical"),
]
