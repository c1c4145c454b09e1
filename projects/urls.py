from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/new/", views.project_create, name="project-create"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/members/", views.project_members, name="project-members"),
    path("labs/<slug:slug>/", views.lab_detail, name="lab-detail"),
]
