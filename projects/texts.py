"""Texts people read that a config may give per language (one string, or one per language
code) and the one string a page shows; the messages of checks that run both in Django (a
page, the API) and on the command line. Imports nothing of Django at load time."""

from __future__ import annotations

# A text: one string, or one string per language code.
PerLanguage = str | dict[str, str]


def pick(text: PerLanguage | None, language: str | None, default: str | None = None) -> str:
    """The string to show: ``language``'s (a regional code falls back to its base, "pt-br"
    to "pt"), else ``default``'s (the project's language), else English, else the first."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    for code in (language, (language or "").split("-")[0], default, "en"):
        if code and text.get(code):
            return text[code]
    return next(iter(text.values()), "")


def gettext(message: str) -> str:
    """``message`` in the active language where Django runs (a page, the API), as written
    where it does not (the command line): answer checks run in both."""
    from django.conf import settings  # at call time: the command line never loads Django

    if not settings.configured:
        return message
    from django.utils.translation import gettext as translate  # likewise

    return translate(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The singular or plural ``message`` for ``count``, as gettext above."""
    from django.conf import settings  # at call time, as gettext's

    if not settings.configured:
        return singular if count == 1 else plural
    from django.utils.translation import ngettext as translate  # likewise

    return translate(singular, plural, count)


def gettext_noop(message: str) -> str:
    """Marks a message for the catalogues where it is written; translated where it is used."""
    return message
