from django.urls import path

from . import views

urlpatterns = [
    path("labs/", views.lab_list, name="lab-list"),
    path("labs/<slug:slug>/", views.lab_detail, name="lab-detail"),
]
