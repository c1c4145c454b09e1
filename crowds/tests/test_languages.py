"""Pages in the participant's language: the project's `language:`, else the browser's;
texts given per language in the config shown in that language with a fallback; refusals
in that language; manager pages stay English; Arabic pages are right to left."""

import re

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from crowds.tests.test_participants import BLOCK, HEAD, make_project, start_url
from projects.configuration import ConfigError, parse_config
from projects.tests.factories import MembershipFactory, UserFactory
from projects.texts import pick

PER_LANGUAGE = """participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: 2
  completion_code: "C1A2B3"
  consent:
    en: "I agree that my answers are stored."
    de: "Ich bin einverstanden, dass meine Antworten gespeichert werden."
"""


def _consent_page(client, slug="crowd", **headers):
    client.get(start_url(slug, PROLIFIC_PID="p1"), **headers)
    return client.get(reverse("participant-consent", args=[slug]), **headers)


def test_the_browser_language_chooses_the_page_language(db, tmp_path):
    make_project(tmp_path)
    page = _consent_page(Client(), HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")
    html = page.content.decode()
    assert '<html lang="de" dir="ltr">' in html
    assert "Bevor Sie beginnen" in html and "Weiter" in html
    assert "Before you start" not in html
    assert page["Content-Language"] == "de"


def test_a_language_the_site_lacks_falls_back_to_english(db, tmp_path):
    make_project(tmp_path)
    html = _consent_page(Client(), HTTP_ACCEPT_LANGUAGE="ja,zh;q=0.8").content.decode()
    assert '<html lang="en" dir="ltr">' in html and "Before you start" in html


def test_the_projects_language_wins_over_the_browsers(db, tmp_path):
    make_project(tmp_path, block="language: it\n" + BLOCK)
    html = _consent_page(Client(), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="it"' in html
    assert "Bevor Sie beginnen" not in html


def test_texts_per_language_show_in_the_pages_language_and_fall_back(db, tmp_path):
    make_project(tmp_path, block=PER_LANGUAGE)
    german = _consent_page(Client(), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Ich bin einverstanden" in german and "I agree that" not in german
    # French is not given: the default (English) text, in French chrome
    french = _consent_page(Client(), HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "I agree that my answers are stored." in french
    assert '<html lang="fr"' in french


def test_a_refusal_reads_in_the_browsers_language_and_changes_nothing(db, tmp_path):
    make_project(tmp_path)
    response = Client().get(start_url(), HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 400
    assert "Ihre Teilnehmer-ID fehlt" in response.content.decode()


def test_a_refused_consent_reads_in_the_pages_language(db, tmp_path):
    make_project(tmp_path)
    client = Client()
    client.get(start_url(PROLIFIC_PID="p1"), HTTP_ACCEPT_LANGUAGE="de")
    refused = client.post(
        reverse("participant-consent", args=["crowd"]), {}, HTTP_ACCEPT_LANGUAGE="de"
    )
    assert refused.status_code == 400
    assert "Setzen Sie das Häkchen" in refused.content.decode()


def test_arabic_pages_are_right_to_left(db, tmp_path):
    make_project(tmp_path, block="language: ar\n" + BLOCK)
    html = _consent_page(Client()).content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    assert "قبل أن تبدأ" in html


def test_a_validation_message_on_the_unit_page_is_translated(db, tmp_path):
    project = make_project(tmp_path, block="language: de\n" + BLOCK)
    user = UserFactory()
    MembershipFactory(project=project, user=user)
    client = Client()
    client.force_login(user)
    client.get(reverse("project-instructions", args=[project.slug]))  # read once
    page = client.get(reverse("annotate", args=[project.slug]), follow=True).content.decode()
    unit_url = re.search(r'<form method="post" action="([^"]+)" id="annotate-form"', page)[1]
    page = client.post(unit_url, {"q": "nonsense"})
    assert page.status_code == 400
    html = page.content.decode()
    assert "wählen Sie eines von: yes_, no_" in html
    assert "Absenden" in html


def test_manager_pages_stay_english(db, tmp_path):
    project = make_project(tmp_path, block="language: de\n" + BLOCK)
    manager = UserFactory()
    MembershipFactory(project=project, user=manager, role="manager")
    client = Client()
    client.force_login(manager)
    html = client.get(
        reverse("project-detail", args=[project.slug]), HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()
    assert '<html lang="en"' in html and "My projects" in html


def test_the_script_catalogue_follows_the_page(db):
    german = Client().get(reverse("javascript-catalog") + "?lang=de").content.decode()
    assert "Punktwolke wird geladen" in german
    unknown = Client().get(reverse("javascript-catalog") + "?lang=xx").content.decode()
    assert "Punktwolke" not in unknown


# --------------------------------------------------------------------------- the config


def _config(tmp_path, extra: str = "", scheme: str = "description: x, labels: [a, b]"):
    (tmp_path / "d.jsonl").write_text('{"id": "u0", "text": "T"}\n')
    text = HEAD.replace("description: Is it polite, labels: [yes_, no_]", scheme) + extra
    return parse_config(yaml.safe_load(text), base_dir=tmp_path)


def test_a_text_may_be_given_per_language(tmp_path):
    config = _config(
        tmp_path, scheme="description: {en: Is it polite, de: Ist es höflich}, labels: [a, b]"
    )
    assert config.schemes[0].description == {"en": "Is it polite", "de": "Ist es höflich"}
    assert pick(config.schemes[0].description, "de") == "Ist es höflich"
    assert pick(config.schemes[0].description, "de-AT") == "Ist es höflich"
    assert pick(config.schemes[0].description, "pt") == "Is it polite"
    assert pick({"de": "Nur Deutsch"}, "fr") == "Nur Deutsch"
    assert pick({"de": "Deutsch", "it": "Italiano"}, "fr", default="it") == "Italiano"


@pytest.mark.parametrize(
    ("extra", "scheme", "words"),
    [
        (
            "language: jp\n",
            "description: x, labels: [a]",
            "'jp' is not a language this platform shows",
        ),
        ("", "description: {en: x, klingon: y}, labels: [a]", "'klingon' is not a language"),
        ("", "description: {}, labels: [a]", "at least one language"),
        ("", "description: {en: [x]}, labels: [a]", "the en text must be a text"),
    ],
)
def test_a_wrong_language_or_text_is_refused_by_name(tmp_path, extra, scheme, words):
    with pytest.raises(ConfigError) as refused:
        _config(tmp_path, extra, scheme)
    assert words in str(refused.value)


LABELLED = """task_name: Crowd study
language: de
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: radio
    name: q
    description: {en: Is it polite, de: Ist es höflich}
    labels:
      - {name: yes_, text: {en: "Yes", de: "Ja"}}
      - {name: no_, text: {en: "No", de: "Nein"}}
"""


def test_a_label_shows_its_text_in_the_pages_language_and_stores_its_name(db, tmp_path):
    from annotation.models import Annotation
    from projects.services import import_project

    (tmp_path / "d.jsonl").write_text('{"id": "u0", "text": "Danke!"}\n')
    (tmp_path / "c.yaml").write_text(LABELLED)
    project = import_project(config_path=tmp_path / "c.yaml", slug="labelled").project
    user = UserFactory()
    MembershipFactory(project=project, user=user)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("annotate", args=[project.slug]), follow=True).content.decode()
    assert 'value="yes_"' in page and "> Ja</label>" in page and "> Nein</label>" in page
    assert "Ist es höflich" in page
    action = re.search(r'<form method="post" action="([^"]+)" id="annotate-form"', page)[1]
    assert client.post(action, {"q": "yes_"}).status_code == 302
    assert Annotation.objects.get(annotator=user).value == "yes_"


def test_a_label_text_must_be_a_text(tmp_path):
    with pytest.raises(ConfigError) as refused:
        _config(
            tmp_path,
            scheme="description: x, labels: [{name: a, text: {xx: y}}, b]",
        )
    assert "labels[0].text" in str(refused.value) and "'xx' is not a language" in str(refused.value)


def test_the_account_pages_read_in_the_browsers_language(db):
    """Logging out, resetting or changing a password and a spent invite link: the pages an
    annotator passes through, in the browser's language."""
    client = Client()
    german = {"HTTP_ACCEPT_LANGUAGE": "de"}
    page = client.get(reverse("password_reset"), **german).content.decode()
    assert "Setzen Sie Ihr Passwort zurück" in page and "Link zum Zurücksetzen senden" in page
    page = client.get(reverse("password_reset_done"), **german).content.decode()
    assert "Prüfen Sie Ihre E-Mails" in page
    spent = reverse("invite-accept", args=["MQ", "set-password"])
    page = client.get(spent, **german).content.decode()
    assert "Dieser Einladungslink funktioniert nicht" in page
    user = UserFactory()
    client.force_login(user)
    page = client.get(reverse("password_change"), HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Changez votre mot de passe" in page and 'lang="fr"' in page
    page = client.get(reverse("password_reset"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Reset your password" in page
