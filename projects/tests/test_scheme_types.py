"""Scheme types as classes: the registry knows every type a configuration stores, each type
reads its form fields and checks its answers, and a type added as one module (with its
template) is validated, parsed, drawn and measured without editing any other file."""

import re
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.http import QueryDict
from django.urls import reverse

from agreement.core.report import build_report
from agreement.services import compute_report
from annotation import schemes as annotation_schemes
from annotation.answer_forms import answers_from_post
from annotation.models import Annotation
from projects import interchange, schemes
from projects.configuration import load_config
from projects.configuration.scheme_options import SchemeEntry
from projects.schemes import known_types, scheme_type
from projects.schemes.base import _REGISTRY, SchemeType, UnitContext
from projects.services import ProjectImportError, import_project
from projects.tests.factories import MembershipFactory, UserFactory
from projects.validation import AnswerError, validate_answers

EXAMPLES = Path(settings.BASE_DIR) / "examples"
TRACE_TYPES = (
    "process_reward",
    "trajectory_eval",
    "tool_call_review",
    "failure_attribution",
    "gui_trajectory",
)
EVERY_OTHER_TYPE = """annotation_task_name: Every type
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: topic, labels: [sport, politics]}
  - {annotation_type: multiselect, name: tags, labels: [funny, sad]}
  - {annotation_type: likert, name: quality, size: 5}
  - {annotation_type: text, name: note}
  - {annotation_type: spatial_annotation, name: boxes, labels: [car]}
  - {annotation_type: temporal_grounding, name: events, labels: [goal]}
  - {annotation_type: tiered_annotation, name: speech, labels: [talk], tiers: [A, B]}
""" + "".join(f"  - {{annotation_type: {t}, name: {t}, labels: [ok, bad]}}\n" for t in TRACE_TYPES)


def test_the_registry_serves_every_type_a_configuration_stores(tmp_path):
    (tmp_path / "c.yaml").write_text(EVERY_OTHER_TYPE)
    others = load_config(tmp_path / "c.yaml", check_files=False)
    bws = load_config(EXAMPLES / "mt_two_dims" / "config.yaml", check_files=False)
    stored = {s.type for s in others.schemes} | {s.type for s in bws.schemes}
    assert stored == set(known_types())
    assert len(stored) == 13
    # The five trace types share one class; every class has its template and measure.
    assert {scheme_type(t) for t in TRACE_TYPES} == {scheme_type("process_reward")}
    for name in stored:
        kind = scheme_type(name)
        assert (Path(settings.BASE_DIR) / "templates" / kind.template).is_file(), name
        assert issubclass(kind.Options, SchemeEntry), name
    measures = {name: scheme_type(name).measure for name in stored}
    assert measures["radio"] == "nominal" and measures["likert"] == "ordinal"
    assert measures["multiselect"] == "label_set" and measures["text"] is None
    assert measures["tiered_annotation"] == "tiered_segments" and measures["bws"] == "bws"


def test_an_unknown_type_is_a_key_error_naming_the_known_ones():
    with pytest.raises(KeyError, match=r"unknown scheme type 'rating'; known types: .*radio"):
        scheme_type("rating")
    with pytest.raises(KeyError, match="unknown scheme type"):
        validate_answers([{"name": "q", "type": "rating"}], {"q": 1}, UnitContext())


def test_two_classes_cannot_serve_one_type():
    with pytest.raises(TypeError, match="'radio' is served by both"):
        type("OtherRadio", (SchemeType,), {"types": ("radio",)})
    assert scheme_type("radio").__name__ == "Radio"


LABELS = [{"name": "ok"}, {"name": "bad"}]
# type -> (options, form fields, cleaned answer); the unit has items a..d and 3 steps.
ROUND_TRIPS = {
    "bws": ({}, {"s__best": "b", "s__worst": "d"}, {"best": "b", "worst": "d"}),
    "radio": ({"labels": LABELS}, {"s": "bad"}, "bad"),
    "multiselect": ({"labels": LABELS}, {"s": ["ok", "bad"]}, ["ok", "bad"]),
    "likert": ({"size": 7}, {"s": "6"}, 6),
    "text": ({}, {"s": "fine"}, "fine"),
    "spatial_annotation": (
        {"labels": [{"name": "car"}]},
        {
            **dict(zip(("s__cx", "s__cy", "s__cz"), ("1", "2", "3"), strict=True)),
            **dict(zip(("s__l", "s__w", "s__h"), ("4", "2", "1.5"), strict=True)),
            "s__yaw": "",
            "s__label": "car",
        },
        [{"label": "car", "center": [1.0, 2.0, 3.0], "size": [4.0, 2.0, 1.5], "yaw": 0.0}],
    ),
    "temporal_grounding": (
        {"labels": LABELS},
        {"s__start": ["0.5", ""], "s__end": ["2", ""], "s__label": ["ok", ""]},
        [{"start": 0.5, "end": 2.0, "label": "ok"}],
    ),
    "tiered_annotation": (
        {"labels": LABELS, "tiers": ["A", "B"]},
        {"s__start": "1", "s__end": "3", "s__label": "bad", "s__tier": "B"},
        [{"start": 1.0, "end": 3.0, "label": "bad", "tier": "B"}],
    ),
    **{
        name: (
            {"labels": LABELS, "steps_key": "turns"},
            {"s__step__0": "ok", "s__step__2": "bad", "s__step__1": ""},
            {"0": "ok", "2": "bad"},
        )
        for name in TRACE_TYPES
    },
}
UNIT = UnitContext(items=["a", "b", "c", "d"], data={"turns": [{}, {}, {}]})


def form(fields: dict) -> QueryDict:
    post = QueryDict(mutable=True)
    for key, value in fields.items():
        post.setlist(key, value if isinstance(value, list) else [value])
    return post


@pytest.mark.parametrize("type_name", sorted(ROUND_TRIPS))
def test_each_type_reads_its_form_and_checks_the_answer(type_name):
    options, fields, cleaned = ROUND_TRIPS[type_name]
    scheme = {"name": "s", "type": type_name, "options": options}
    answers = answers_from_post([scheme], form(fields))
    assert validate_answers([scheme], answers, UNIT) == {"s": cleaned}
    # The REST API's JSON value goes through the same check.
    assert validate_answers([scheme], {"s": cleaned}, UNIT) == {"s": cleaned}


@pytest.mark.parametrize(
    "type_name, value, message",
    [
        ("bws", {"best": "a", "worst": "a"}, "best and worst must be different items"),
        ("radio", "maybe", "choose one of: ok, bad"),
        ("likert", 9, "give a whole number from 1 to 7"),
        ("process_reward", {"5": "ok"}, "step '5' is not a step of this trace (0 to 2)"),
        (
            "tiered_annotation",
            [{"start": 1, "end": 2, "label": "ok", "tier": "C"}],
            "Segment 1: the tier 'C' is not one of A, B",
        ),
    ],
)
def test_each_type_refuses_a_bad_answer_with_its_message(type_name, value, message):
    scheme = {"name": "s", "type": type_name, "options": ROUND_TRIPS[type_name][0]}
    with pytest.raises(AnswerError) as caught:
        validate_answers([scheme], {"s": value}, UNIT)
    assert message in caught.value.errors["s"]


def test_a_type_with_split_table_columns_keeps_them_when_named():
    records = [
        interchange.UnitRecord(id="t1", annotations={"q": {"best": "a", "worst": "b"}}),
        interchange.UnitRecord(id="t2", annotations={"q": None, "note": "x"}),
    ]
    # Read without the schemes, a None among the values leaves the answer in one column.
    assert interchange.table_columns(records)[-2:] == ["q", "note"]
    named = interchange.table_columns(records, {"q": "bws", "note": "text"})
    assert named[-3:] == ["q.best", "q.worst", "note"]
    assert interchange.flatten(records[0], named)["q.best"] == "a"


# --------------------------------------------------------------------------- a new type

NEW_TYPE = """
from projects.configuration.fields import between
from projects.configuration.scheme_options import SchemeEntry
from projects.schemes.base import WHOLE, SchemeType


class StarsOptions(SchemeEntry):
    stars: between(2, 10) = 5

    def options(self):
        return {{**super().options(), "stars": self.stars}}


class Stars(SchemeType):
    types = ("{name}",)
    template = "test_schemes/stars.html"
    measure = "ordinal"
    Options = StarsOptions

    @classmethod
    def validate(cls, value, options, unit, limits):
        top = options["stars"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise ValueError(f"give from 1 to {{top}} stars")
        return value

    @classmethod
    def from_post(cls, name, options, post):
        text = post.get(name, "")
        return int(text) if WHOLE.fullmatch(text) else (text or None)
"""
STARS_TEMPLATE = (
    '<div class="stars">{% for n in "12345" %}'
    '<input type="radio" name="{{ view.field }}" value="{{ n }}">{% endfor %}</div>'
)


@pytest.fixture
def new_type(tmp_path, settings):
    """A scheme type defined in a module dropped into annotation's package of types (and its
    template), found by the registry's own discovery; both taken away afterwards."""
    name = f"stars_{uuid.uuid4().hex[:8]}"
    module = Path(annotation_schemes.__file__).parent / f"{name}.py"
    module.write_text(NEW_TYPE.format(name=name))
    (tmp_path / "test_schemes").mkdir()
    (tmp_path / "test_schemes" / "stars.html").write_text(STARS_TEMPLATE)
    engine = dict(settings.TEMPLATES[0], DIRS=[*settings.TEMPLATES[0]["DIRS"], tmp_path])
    settings.TEMPLATES = [engine, *settings.TEMPLATES[1:]]
    try:
        schemes.discover()
        yield name
    finally:
        module.unlink()
        _REGISTRY.pop(name, None)
        sys.modules.pop(f"{annotation_schemes.__name__}.{name}", None)


def test_a_new_type_module_is_found_checked_and_read(new_type):
    assert new_type in known_types()
    scheme = {"name": "rating", "type": new_type, "options": {"stars": 3}}
    answers = answers_from_post([scheme], form({"rating": "2"}))
    assert validate_answers([scheme], answers, UnitContext()) == {"rating": 2}
    with pytest.raises(AnswerError) as caught:
        validate_answers([scheme], {"rating": 4}, UnitContext())
    assert caught.value.errors == {"rating": "give from 1 to 3 stars"}


@pytest.mark.django_db
def test_a_new_type_is_drawn_stored_and_measured_on_the_platform(client, new_type, tmp_path):
    (tmp_path / "d.jsonl").write_text('{"id": "doc1", "text": "One"}\n')
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: Stars\ndata_files: [d.jsonl]\n"
        f"annotation_schemes:\n  - {{annotation_type: {new_type}, name: rating, stars: 1}}\n"
    )
    # The configuration reads the type's options with its own model ...
    with pytest.raises(
        ProjectImportError, match=r"annotation_schemes\[0\]\.stars: must be between 2"
    ):
        import_project(config_path=tmp_path / "c.yaml", slug="stars")
    (tmp_path / "c.yaml").write_text(
        (tmp_path / "c.yaml").read_text().replace("stars: 1", "stars: 5, stras: 4")
    )
    with pytest.raises(ProjectImportError, match=r"\.stras: unknown key; did you mean 'stars'"):
        import_project(config_path=tmp_path / "c.yaml", slug="stars")
    (tmp_path / "c.yaml").write_text((tmp_path / "c.yaml").read_text().replace(", stras: 4", ""))
    project = import_project(config_path=tmp_path / "c.yaml", slug="stars").project
    assert project.schemes == [
        {
            "name": "rating",
            "type": new_type,
            "description": "",
            "options": {"required": False, "stars": 5},
        }
    ]
    user = UserFactory(username="rater")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    html = client.get(reverse("annotate", args=["stars"])).content.decode()
    assert '<div class="stars">' in html and 'name="rating" value="5"' in html
    action = re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)
    refused = client.post(action, {"rating": "9"})
    assert refused.status_code == 400 and "give from 1 to 5 stars" in refused.content.decode()
    assert client.post(action, {"rating": "4"}).status_code == 302
    assert Annotation.objects.get(project=project).value == 4
    # Agreement computes the measure the type names (ordinal alpha) for its answers.
    figures = compute_report(project=project).report["schemes"]["rating"]
    assert figures["type"] == new_type and "alpha_ordinal" in figures


def test_the_agreement_core_follows_the_measure_not_the_type():
    records = [
        {"id": "u1", "annotator": "a", "annotations": {"r": 1}},
        {"id": "u1", "annotator": "b", "annotations": {"r": 2}},
    ]
    ordinal = {"name": "r", "type": "anything", "options": {}, "measure": "ordinal"}
    unmeasured = {"name": "r", "type": "likert", "options": {}, "measure": None}
    assert "alpha_ordinal" in build_report(records, [ordinal])["schemes"]["r"]
    assert "alpha_ordinal" not in build_report(records, [unmeasured])["schemes"]["r"]
