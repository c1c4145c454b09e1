"""The configuration a manager reads is in words: yes, no, a dash for unset, lists joined by
commas; never Python's True, False, None or brackets."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from projects.services import import_project
from projects.templatetags.config_words import config_word
from projects.tests.factories import UserFactory


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (True, "yes"),
        (False, "no"),
        (None, "—"),
        ("", "—"),
        (0, "0"),
        (4, "4"),
        ("calibrated", "calibrated"),
        (["driver", "passenger"], "driver, passenger"),
        ([True, None], "yes, —"),
        ([], "—"),
        (
            {"method": "bradley_terry", "auto_compute": True, "output_file": None},
            "method bradley_terry, auto_compute yes, output_file —",
        ),
    ],
)
def test_config_word(value, words):
    assert config_word(value) == words


@pytest.mark.django_db
def test_manager_page_shows_the_schemes_options_in_words(client):
    config = Path(settings.BASE_DIR) / "examples" / "mt_two_dims" / "config.yaml"
    import_project(config_path=config, slug="mt")
    client.force_login(UserFactory(is_staff=True))
    html = client.get(reverse("project-detail", args=["mt"])).content.decode()
    options = html[html.index("<h2>Configuration</h2>") : html.index("<h2>Answers</h2>")]
    text = re.sub(r"<[^>]+>", " ", options)
    assert not re.search(r"\b(True|False|None)\b|\['", text), text
    assert re.search(r"sequential_key_binding: \s*yes", text)
    assert re.search(r"randomize_order: \s*no", text)
    assert "auto_compute yes" in text and "output_file —" in text
