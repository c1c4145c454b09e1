from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.decorators.cache import cache_control
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView
from rest_framework.permissions import IsAuthenticated

from labs.auth_views import LogoutWithMessageView, ThrottledPasswordResetView
from projects.views import InviteAcceptView

# A lost database connection is a 503 with Retry-After, not a 500 (config/errors.py).
handler500 = "config.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/password_reset/",
        ThrottledPasswordResetView.as_view(),
        name="password_reset",
    ),
    path("accounts/logout/", LogoutWithMessageView.as_view(), name="logout"),
    # Browsers ask for /favicon.ico whatever the page links to.
    path(
        "favicon.ico",
        RedirectView.as_view(url=lazy(static, str)("annolab/favicon.svg"), permanent=True),
        name="favicon",
    ),
    # An invite's set-password page (projects/views.py).
    path(
        "accounts/invite/<uidb64>/<token>/",
        InviteAcceptView.as_view(),
        name="invite-accept",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    # The scripts' strings in the page's language (?lang=, projects/language.py): a file a
    # script tag loads, since the Content-Security-Policy allows no inline script.
    path(
        "jsi18n/",
        cache_control(max_age=3600, public=True)(JavaScriptCatalog.as_view()),
        name="javascript-catalog",
    ),
    # The schema and its docs page are for people who are logged in.
    path(
        "api/schema/",
        SpectacularAPIView.as_view(permission_classes=[IsAuthenticated]),
        name="api-schema",
    ),
    # Redoc injects its styles and starts its search worker from a blob: URL at run time;
    # this page alone allows both. Its Redocly logo (on cdn.redoc.ly) stays blocked.
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE], "worker-src": [SELF, "blob:"]})(
            login_required(SpectacularRedocView.as_view(url_name="api-schema"))
        ),
        name="api-docs",
    ),
    path("api/v1/", include("labs.api_urls")),
    path("api/v1/", include("projects.api_urls")),
    path("api/v1/", include("annotation.api_urls")),
    path("api/v1/", include("crowds.api_urls")),
    path("api/v1/", include("agreement.api_urls")),
    path("api/v1/", include("bws.api_urls")),
    path("projects/<slug:slug>/admin/", include("agreement.urls")),
    path("", include("bws.urls")),
    path("", include("projects.urls")),
    path("", include("annotation.urls")),
    path("", include("labs.urls")),
    path("", include("crowds.urls")),
]
