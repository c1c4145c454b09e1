from django.urls import path

from . import api, members_api

urlpatterns = [
    path("projects/", api.ProjectListCreateApi.as_view(), name="api-project-list"),
    path("projects/<slug:slug>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<slug:slug>/members/", members_api.MembersApi.as_view(), name="api-members"),
    path("projects/<slug:slug>/items/", api.ItemsApi.as_view(), name="api-items"),
    path("projects/<slug:slug>/tuples/", api.TuplesApi.as_view(), name="api-tuples"),
]
