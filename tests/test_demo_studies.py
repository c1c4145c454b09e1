"""The demo's studies can be answered as they stand: the crowd study's link leads through
consent and instructions to a training tuple that shows its English sentence, and the MT
example compares outputs of one sentence at a time with that sentence above them."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from crowds.tests.test_participants import enter
from demo.management.commands import load_demo
from projects.models import Item, Project, Unit
from projects.selectors import unit_payload
from projects.services import import_project
from projects.tests.factories import UserFactory

EXAMPLES = Path(settings.BASE_DIR) / "examples"
pytestmark = pytest.mark.django_db


@pytest.fixture
def crowd_only(monkeypatch):
    """load_demo without its slow parts (the simulated raters, the agreement demo)."""
    monkeypatch.setattr(load_demo, "simulate_bws_answers", lambda project: 0)
    monkeypatch.setattr(load_demo.Command, "load_agreement_demo", lambda self, lab, owner: None)


def test_load_demo_prints_the_crowd_studys_link_and_the_link_opens_the_study(crowd_only, tmp_path):
    out, summary = StringIO(), tmp_path / "summary.txt"
    call_command(
        "load_demo", "--site", "http://127.0.0.1:8123", "--summary-file", summary, stdout=out
    )
    link = "http://127.0.0.1:8123/p/mt-crowd/start?PROLIFIC_PID=demo-participant-1"
    assert link in out.getvalue().splitlines()[-1]
    # The summary make demo prints again once the site answers: accounts and the link.
    assert "admin / annolab-admin" in summary.read_text()
    assert summary.read_text().splitlines()[-1].strip() == link
    project = Project.objects.get(slug="mt-crowd")
    config = project.settings
    assert config.participants.open_link and config.participants.consent
    assert config.participants.units_per_participant == 8
    assert config.gold.training_units == 2 and config.gold.attention_rate == 0.25
    gold = project.units.filter(is_gold=True)
    assert gold.count() == 6 and all(unit.kind == Unit.Kind.TUPLE for unit in gold)
    # Run again: nothing added, the link printed again.
    again = StringIO()
    call_command("load_demo", "--site", "http://127.0.0.1:8123", stdout=again)
    assert link in again.getvalue() and Project.objects.filter(slug="mt-crowd").count() == 1

    client = Client()
    response = enter(client, slug="mt-crowd", pid="demo-participant-1")
    assert response["Location"].endswith("/projects/mt-crowd/training/")
    page = client.get(response["Location"]).content.decode()
    assert "Training 1 of 2" in page
    assert "English source" in page and "The cat sat on the mat." in page


def test_the_crowd_studys_gold_tuples_have_an_undisputed_answer():
    """Best is the output without errors, worst the one with four; each tuple's outputs
    translate one sentence."""
    items = {
        record["id"]: record
        for record in map(json.loads, (EXAMPLES / "crowd_demo/data/outputs.jsonl").open())
    }
    for line in (EXAMPLES / "crowd_demo/gold.jsonl").open():
        record = json.loads(line)
        shown = [items[i] for i in record["items"]]
        assert len({item["sentence_id"] for item in shown}) == 1
        assert items[record["best"]]["system"] == "sys_a"
        assert items[record["worst"]]["system"] == "sys_e"
        assert items[record["best"]]["text"] != items[record["worst"]]["text"]


def test_each_mt_tuple_compares_one_sentence_and_shows_it():
    project = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="mt").project
    sentence = dict(Item.objects.filter(project=project).values_list("item_id", "data__source"))
    units = list(project.units.filter(kind=Unit.Kind.TUPLE))
    assert len(units) == 400
    for unit in units:
        assert len({sentence[i] for i in unit.item_ids}) == 1, unit.item_ids
    shown = unit_payload(project, units[0], UserFactory())
    (context,) = shown["context"]
    assert context["label"] == "Source sentence (English)"
    assert context["value"] == sentence[units[0].item_ids[0]]
