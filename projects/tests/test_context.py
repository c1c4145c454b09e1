"""What an annotator sees around a tuple: the source its items share once above it, each
item's own source beside it, instance_display fields as labelled context, and no internal
tuple or item id anywhere on the pages they read."""

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.instructions import mark_seen
from projects.configuration import ConfigError, load_config
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLES = Path(settings.BASE_DIR) / "examples"
MT_DEMO = EXAMPLES / "mt_two_dims" / "config.yaml"


def annotator_page(client, project, username="anna"):
    user = UserFactory(username=username)
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    session = client.session  # the instructions shown before a first unit: read
    mark_seen(session, project)
    session.save()
    response = client.get(reverse("annotate", args=[project.slug]))
    assert response.status_code == 200
    return response


def shown_unit(response) -> Unit:
    return Unit.objects.get(pk=response.context["unit"].pk)


def visible_text(page: str) -> str:
    """The page's text as read: tags, and the values of attributes, removed."""
    page = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", page, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", page))


def write_project(tmp_path, config: str, rows: list[dict], name="d.jsonl"):
    (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(config)
    return tmp_path / "c.yaml"


# --------------------------------------------------------------------------- the MT demo


def test_mt_demo_shows_the_source_sentence_once_above_the_adequacy_tuple(client):
    project = import_project(config_path=MT_DEMO, slug="mt").project
    response = annotator_page(client, project)
    page = response.content.decode()
    unit = shown_unit(response)
    data = {i.item_id: i.data for i in project.items.filter(item_id__in=unit.item_ids)}
    (sentence,) = {d["source"] for d in data.values()}  # one sentence's outputs
    block = response.context["blocks"][0]
    assert block["shared_source"] == {"label": "Source", "value": sentence}
    assert visible_text(page).count(sentence) == 1
    assert 'class="item-source"' not in page  # not repeated beside each item
    # the source sits in the best-worst block, after the meaning-preservation question
    question = page.index("by meaning preservation")
    assert question < page.index(html_lib.escape(sentence)) < page.index('class="bws-table"')


def test_mt_demo_config_builds_tuples_within_one_sentence():
    config = load_config(MT_DEMO)
    assert config.bws.group_key == "sentence_id"
    adequacy = config.scheme("adequacy").options
    assert adequacy["show_source"] is True and adequacy["source_key"] == "source"
    assert config.scheme("fluency").options["show_source"] is False


# --------------------------------------------------------------------------- sources

SOURCES = """task_name: Sources
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    description: Best and worst
    tuple_size: 4
    show_source: true
    SOURCE_KEY
    tuple_generation: {tuples_per_item: 4, seed: 3}
"""


def items(n=8, **fields):
    return [
        {"id": f"i{k}", "text": f"Output {k}", **{key: f(k) for key, f in fields.items()}}
        for k in range(n)
    ]


def test_items_with_different_sources_show_each_beside_its_item(client, tmp_path):
    rows = items(model=lambda k: f"MODEL-{k}", system=lambda k: "ignored")
    config = write_project(tmp_path, SOURCES.replace("SOURCE_KEY", "source_key: model"), rows)
    project = import_project(config_path=config, slug="s").project
    response = annotator_page(client, project)
    page = response.content.decode()
    payload = response.context["payload"]
    assert payload["source_label"] == "Model"
    for item in payload["items"]:
        k = item["id"][1:]
        assert item["source"] == f"MODEL-{k}"
        assert f'<span class="item-source">MODEL-{k}</span>' in page
    assert "ignored" not in page  # the key given, not the default system field
    assert "shared_source" not in response.context["blocks"][0]


def test_default_source_is_the_system_field_else_source(client, tmp_path):
    rows = items(source=lambda k: f"SRC-{k % 2}")
    rows[0]["system"] = "SYS-ZERO"
    config = write_project(tmp_path, SOURCES.replace("SOURCE_KEY", ""), rows)
    project = import_project(config_path=config, slug="d").project
    response = annotator_page(client, project)
    expected = {"i0": "SYS-ZERO", **{f"i{k}": f"SRC-{k % 2}" for k in range(1, 8)}}
    for item in response.context["payload"]["items"]:
        assert item["source"] == expected[item["id"]]


GUIDE_DATA = """task_name: Guide data
data_files: [d.jsonl]
item_properties: {id_key: id, text_key: source}
instance_display:
  fields:
    - {key: source, type: text, display_options: {label: Source Sentence}}
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: fluency
    description: Best and worst by fluency
    items_key: translations
    tuple_size: 4
    show_source: true
    SOURCE_KEY
    tuple_generation: {tuples_per_item: 2, seed: 1}
"""


def guide_rows():
    # The guides' data: each translation's id names the system that produced it.
    return [
        {
            "id": "sent_001",
            "source": "The cat sat on the mat.",
            "translations": [
                {"id": f"sys_{c}", "text": f"Le chat {c}.", "engine": f"ENGINE-{c}"}
                for c in "abcde"
            ],
        }
    ]


def test_guides_data_shows_the_system_each_item_came_from(client, tmp_path):
    config = write_project(tmp_path, GUIDE_DATA.replace("SOURCE_KEY", ""), guide_rows())
    project = import_project(config_path=config, slug="g").project
    response = annotator_page(client, project)
    page = response.content.decode()
    shown = response.context["payload"]["items"]
    assert {item["source"] for item in shown} <= {f"sys_{c}" for c in "abcde"}
    for item in shown:
        assert item["source"] == item["id"]
        assert f'<span class="item-source">{item["id"]}</span>' in page
    # the instance's source sentence is the context, labelled as instance_display says
    assert [(f["label"], f["value"]) for f in response.context["payload"]["context"]] == [
        ("Source Sentence", "The cat sat on the mat.")
    ]
    assert visible_text(page).count("The cat sat on the mat.") == 1


def test_source_key_reads_a_field_of_the_listed_items(client, tmp_path):
    config = write_project(
        tmp_path, GUIDE_DATA.replace("SOURCE_KEY", "source_key: engine"), guide_rows()
    )
    project = import_project(config_path=config, slug="e").project
    response = annotator_page(client, project)
    for item in response.context["payload"]["items"]:
        assert item["source"] == f"ENGINE-{item['id'][-1]}"


def test_source_key_is_refused_in_a_dialect_a_bws_scheme(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: A\ndata_files: [d.jsonl]\nannotation_schemes:\n"
        "  - {annotation_type: bws, name: q, source_key: system}\n"
    )
    with pytest.raises(ConfigError, match=r"source_key: is a best_worst_scaling \(dialect B\)"):
        load_config(tmp_path / "c.yaml", check_files=False)


# --------------------------------------------------------------------------- context

CONTEXT = """task_name: Context
data_files: [d.jsonl]
instance_display:
  fields:
    - {key: prompt, label: The prompt}
    - {key: topic, label: Topic}
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    description: Best and worst answer
    tuple_size: 4
    tuple_generation: {tuples_per_item: 4, seed: 5, group_key: prompt}
"""


def test_instance_display_fields_the_tuple_shares_are_its_context(client, tmp_path):
    rows = items(prompt=lambda k: f"Prompt {k // 4}", topic=lambda k: f"Topic {k}")
    project = import_project(config_path=write_project(tmp_path, CONTEXT, rows), slug="c").project
    response = annotator_page(client, project)
    page = response.content.decode()
    context = response.context["payload"]["context"]
    (prompt,) = {f"Prompt {int(i[1:]) // 4}" for i in shown_unit(response).item_ids}
    assert context == [{"key": "prompt", "label": "The prompt", "value": prompt}]
    assert '<div class="context-label">The prompt</div>' in page
    assert "Topic" not in visible_text(page)  # differs between the items: not context


# --------------------------------------------------------------------------- internal ids


def test_annotators_never_read_internal_tuple_or_item_ids(client):
    project = import_project(config_path=MT_DEMO, slug="mt").project
    response = annotator_page(client, project)
    unit = shown_unit(response)
    text = visible_text(response.content.decode())
    assert unit.external_id not in response.content.decode()
    assert f"{unit.label} of 400" in text
    assert not re.search(r"tuple_\d|mt_\d{4}|sentence_id|fr_\d{3}|de_\d{3}", text)
    # the annotator's project page and the done page say labels too
    page = client.get(reverse("project-detail", args=[project.slug])).content.decode()
    assert not re.search(r"tuple_\d|mt_\d{4}", visible_text(page))
    ids = list(unit.item_ids)
    answers = {
        "fluency__best": ids[0],
        "fluency__worst": ids[1],
        "adequacy__best": ids[0],
        "adequacy__worst": ids[1],
    }
    url = reverse("annotate-unit", args=[project.slug, unit.pk])
    assert client.post(url, answers).status_code == 302
    project.config = {**project.config, "max_annotations_per_user": 1}
    project.save()
    done = client.get(reverse("annotate", args=[project.slug])).content.decode()
    assert "No more work for you here" in done
    assert unit.label in visible_text(done)
    assert not re.search(r"tuple_\d|mt_\d{4}", visible_text(done))
