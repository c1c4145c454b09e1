"""The project's instructions for annotators: Markdown written in the config
(``instructions``) or in a file beside it (``instructions_file``), read once with the
config and stored in its normal form."""

from __future__ import annotations

from pathlib import Path

from projects.configuration.issues import Issues
from projects.configuration.texts import sizes
from projects.paths import PathRefused, confine
from projects.texts import PerLanguage

# Instructions are a page of text; a larger file is more likely a wrong path.
MAX_INSTRUCTIONS_BYTES = 64 * 1024


def read_instructions(
    text: PerLanguage | None,
    file_name: str | None,
    base: Path,
    *,
    check_files: bool,
    issues: Issues,
) -> PerLanguage:
    """The instructions' Markdown text ("" when the config gives none). The file must lie
    inside the config's folder, be UTF-8 and at most MAX_INSTRUCTIONS_BYTES."""
    if text is not None and file_name is not None:
        issues.add(
            "instructions_file", "give the instructions either inline (instructions) or in a file"
        )
        return ""
    if file_name is None:
        return _checked(text or "", "instructions", issues)
    try:
        path = confine("instructions_file", file_name, base)
    except PathRefused as exc:
        issues.add("instructions_file", exc.reason)
        return ""
    if not path.is_file():
        if check_files:
            issues.add("instructions_file", f"file not found: {file_name!r}")
        return ""
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_INSTRUCTIONS_BYTES + 1)
    except OSError as exc:
        issues.add("instructions_file", f"cannot read {file_name!r}: {exc.strerror or 'error'}")
        return ""
    if len(raw) > MAX_INSTRUCTIONS_BYTES:
        issues.add("instructions_file", _too_large(repr(file_name)))
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        issues.add("instructions_file", f"{file_name!r} is not valid UTF-8 text")
        return ""


def _checked(text: PerLanguage, key: str, issues: Issues) -> PerLanguage:
    for code, part in sizes(text):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_INSTRUCTIONS_BYTES:
            issues.add(key, _too_large(f"the {code} text" if code else "the text"))
            return ""
    return text


def _too_large(what: str) -> str:
    return (
        f"{what} is larger than the limit of {MAX_INSTRUCTIONS_BYTES // 1024} KB for instructions"
    )
