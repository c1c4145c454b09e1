from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from projects.auth_views import ThrottledPasswordResetView

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/password_reset/",
        ThrottledPasswordResetView.as_view(),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("projects.api_urls")),
    path("api/v1/", include("agreement.api_urls")),
    path("api/v1/", include("bws.api_urls")),
    path("projects/<slug:slug>/admin/", include("agreement.urls")),
    path("", include("bws.urls")),
    path("", include("projects.urls")),
]
