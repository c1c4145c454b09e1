"""The translation catalogues: every string the annotator and participant pages (and their
scripts) can show has a translation in every language the site offers, with the same
placeholders, and the compiled catalogues the server reads are those of the sources.

The strings are extracted afresh from a copy of the sources (Django's makemessages, which
needs GNU gettext's xgettext), so a string marked for translation and not yet translated
fails here."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale"
DOMAINS = ("django", "djangojs")
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != "en"]
PLACEHOLDER = re.compile(r"%\(\w+\)s|%s|%d|\{\w*\}")
SKIPPED_DIRS = {".venv", ".git", "var", "staticfiles", "node_modules", "locale", "benchmarks"}


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> dict[str, set[str]]:
    """msgid -> the domain's strings marked in the sources, extracted into a copy."""
    assert shutil.which("xgettext"), (
        "GNU gettext is needed to check the catalogues (Debian: apt-get install gettext)"
    )
    copy = tmp_path_factory.mktemp("sources")
    for entry in ROOT.iterdir():
        if entry.name in SKIPPED_DIRS or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.copytree(entry, copy / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(entry, copy / entry.name)
    (copy / "locale").mkdir()
    found = {}
    for domain in DOMAINS:
        subprocess.run(
            [
                sys.executable,
                "manage.py",
                "makemessages",
                "-d",
                domain,
                "-l",
                "de",
                "--no-location",
                "--ignore=static/vendor",
                "--ignore=examples",
            ],
            cwd=copy,
            check=True,
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": "sqlite:///:memory:"},
        )
        po = polib.pofile(str(copy / "locale" / "de" / "LC_MESSAGES" / f"{domain}.po"))
        found[domain] = {entry.msgid for entry in po}
    return found


def _catalogue(language: str, domain: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / language / "LC_MESSAGES" / f"{domain}.po"))


def test_the_sources_mark_the_pages_strings(extracted):
    """The extraction sees the pages' strings (an empty set would make the checks below
    vacuous)."""
    assert "I have read the text above and agree to take part." in extracted["django"]
    assert "choose the best item" in extracted["django"]
    assert "Loading the point cloud…" in extracted["djangojs"]


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("domain", DOMAINS)
def test_every_string_is_translated(extracted, language, domain):
    catalogue = {entry.msgid: entry for entry in _catalogue(language, domain)}
    missing = sorted(extracted[domain] - set(catalogue))
    assert not missing, f"{language} {domain}.po lacks {len(missing)} strings: {missing[:5]}"
    problems = []
    for msgid in extracted[domain]:
        entry = catalogue[msgid]
        texts = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        if "fuzzy" in entry.flags or not texts or not all(text.strip() for text in texts):
            problems.append(f"untranslated: {msgid!r}")
            continue
        wanted = set(PLACEHOLDER.findall(msgid)) | set(PLACEHOLDER.findall(entry.msgid_plural))
        for text in texts:
            if entry.msgid_plural:
                # A plural form may leave the count out ("one unit"), never add a name.
                ok = set(PLACEHOLDER.findall(text)) <= wanted
            else:
                ok = set(PLACEHOLDER.findall(text)) == wanted
            if not ok:
                problems.append(f"placeholders differ: {msgid!r} -> {text!r}")
    assert not problems, f"{language} {domain}.po: " + "; ".join(problems[:5])


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("domain", DOMAINS)
def test_compiled_catalogues_match_their_sources(language, domain):
    """The .mo file the server reads holds exactly the .po file's translations."""
    mo_path = LOCALE / language / "LC_MESSAGES" / f"{domain}.mo"
    assert mo_path.is_file(), f"{mo_path} is missing: run `make messages`"
    mo = {
        (entry.msgid, entry.msgctxt): entry for entry in polib.mofile(str(mo_path)) if entry.msgid
    }
    po = [entry for entry in _catalogue(language, domain) if entry.translated()]
    assert len(mo) == len(po), f"{mo_path} is stale: run `make messages`"
    for entry in po:
        compiled = mo.get((entry.msgid, entry.msgctxt))
        assert compiled is not None, f"{mo_path} lacks {entry.msgid!r}: run `make messages`"
        if entry.msgid_plural:
            assert compiled.msgstr_plural == entry.msgstr_plural, entry.msgid
        else:
            assert compiled.msgstr == entry.msgstr, entry.msgid
