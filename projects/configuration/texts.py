"""Texts people read that a config may give per language: ``description: "..."`` or
``description: {en: "...", de: "..."}``, checked here. The normal form keeps either shape;
``projects.texts.pick`` says which string a page shows."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from projects.configuration.fields import problem
from projects.configuration.issues import nearest, type_name
from projects.configuration.vocabulary import LANGUAGE_CODES
from projects.texts import PerLanguage


def _per_language(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    if not isinstance(value, dict):
        raise problem(
            f"must be a text or a mapping of language codes to texts, got {type_name(value)}"
        )
    if not value:
        raise problem("must give the text in at least one language")
    for code, text in value.items():
        if code not in LANGUAGE_CODES:
            raise problem(
                f"{code!r} is not a language this platform shows "
                f"(use one of {', '.join(LANGUAGE_CODES)})",
                nearest(str(code), LANGUAGE_CODES),
            )
        if not isinstance(text, str):
            raise problem(f"the {code} text must be a text, got {type_name(text)}")
    return value


Localized = Annotated[PerLanguage, BeforeValidator(_per_language)]


def checked_text(value: Any) -> str | None:
    """Why ``value`` is not a text or a text per language, or None when it is."""
    try:
        _per_language(value)
    except PydanticCustomError as refusal:
        return refusal.context["reason"]
    if value is None or (isinstance(value, str) and not value.strip()):
        return "must not be empty"
    return None


def language_code(value: Any) -> Any:
    """A project's ``language:``: one of LANGUAGE_CODES."""
    if value is None:
        return value
    if not isinstance(value, str) or value not in LANGUAGE_CODES:
        shown = value if isinstance(value, str) else type_name(value)
        raise problem(
            f"{shown!r} is not a language this platform shows (use one of "
            f"{', '.join(LANGUAGE_CODES)})",
            nearest(str(value), LANGUAGE_CODES) if isinstance(value, str) else None,
        )
    return value


LanguageCode = Annotated[str | None, BeforeValidator(language_code)]


def sizes(text: PerLanguage) -> list[tuple[str, str]]:
    """(where, string) for each string of a text, to check each against a size limit."""
    if isinstance(text, str):
        return [("", text)]
    return [(code, value) for code, value in text.items()]
