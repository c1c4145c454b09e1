"""Which language a page speaks.

Annotator and participant pages (and the login pages they pass through) speak the
project's ``language:`` when the config sets one, else the browser's (Accept-Language,
chosen by Django's LocaleMiddleware among settings.LANGUAGES). Manager pages have an
English catalogue only, so they stay English rather than half translated.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import translation

from projects.models import Project

# Kept in the cache so that a page costs no extra statement; a saved project drops its entry.
CACHE_SECONDS = 300
NONE = "-"

# URL names of the pages annotators and crowd participants see.
PEOPLE_PAGES = frozenset(
    {
        "annotate",
        "annotate-unit",
        "project-instructions",
        "project-training",
        "project-training-unit",
        "participant-start",
        "participant-flow",
        "participant-consent",
        "participant-done",
        "participant-instructions",
        "javascript-catalog",
        "login",
        "logout",
        "password_reset",
        "password_reset_done",
        "password_reset_confirm",
        "password_reset_complete",
        "password_change",
        "password_change_done",
        "invite-accept",
    }
)


def _key(slug: str) -> str:
    return f"project-language:{slug}"


def project_language(slug: str) -> str | None:
    """The project's configured language code, or None (unknown project, none set)."""
    code = cache.get(_key(slug))
    if code is None:
        config = Project.objects.filter(slug=slug).values_list("config", flat=True).first()
        code = (config or {}).get("language") if isinstance(config, dict) else None
        code = code if code in dict(settings.LANGUAGES) else NONE
        cache.set(_key(slug), code, CACHE_SECONDS)
    return None if code == NONE else code


@receiver(post_save, sender=Project, dispatch_uid="project-language-cache")
def _forget(sender, instance: Project, **kwargs) -> None:
    cache.delete(_key(instance.slug))


class ProjectLanguage:
    """After LocaleMiddleware: the project's language on its people's pages, English on
    manager pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = getattr(request, "resolver_match", None)
        name = match.url_name if match else None
        # Their scripts' strings come from the catalogue (base.html loads it on these).
        request.people_page = name in PEOPLE_PAGES
        if name in PEOPLE_PAGES:
            slug = view_kwargs.get("slug")
            code = project_language(slug) if slug else None
            if code is None and name == "javascript-catalog":
                code = request.GET.get("lang")
                code = code if code in dict(settings.LANGUAGES) else None
        else:
            code = settings.LANGUAGE_CODE
        if code:
            translation.activate(code)
            request.LANGUAGE_CODE = code
        return None
