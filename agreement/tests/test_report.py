"""The agreement report: keys per scheme type, figures from the core, notes for nulls."""

import json

import krippendorff
import numpy as np
import pytest

from agreement.core.report import AgreementInputError, build_report, format_text


def labels(*names):
    return [{"name": name, "key_value": None} for name in names]


SCHEMES = [
    {"name": "sentiment", "type": "radio", "options": {"labels": labels("pos", "neg", "neu")}},
    {"name": "fluency", "type": "likert", "options": {"size": 5}},
    {"name": "topics", "type": "multiselect", "options": {"labels": labels("a", "b")}},
    {"name": "cars", "type": "spatial_annotation", "options": {"labels": labels("car")}},
    {"name": "events", "type": "temporal_grounding", "options": {"labels": labels("x")}},
    {
        "name": "turns",
        "type": "tiered_annotation",
        "options": {"labels": labels("x"), "tiers": ["s1", "s2"]},
    },
    {"name": "steps", "type": "process_reward", "options": {"labels": labels("ok", "bad")}},
    {"name": "quality", "type": "bws", "options": {}},
    {"name": "comment", "type": "text", "options": {}},
]

CATEGORICAL_KEYS = {
    "type", "alpha_nominal", "fleiss_kappa", "cohen_kappa", "cohen_kappa_pairs",
    "percent_agreement", "n_units", "n_annotators", "notes",
}  # fmt: skip
STRUCTURED_KEYS = {
    "type", "mean_agreement", "mean_object_count_diff", "n_items", "n_pairs", "n_annotators",
    "notes",
}  # fmt: skip
TRACE_KEYS = {
    "type", "alpha_nominal", "cohen_kappa", "cohen_kappa_pairs", "percent_agreement",
    "n_units", "n_annotators", "judge_disagreement", "notes",
}  # fmt: skip
BWS_KEYS = {"type", "best_alpha", "worst_alpha", "split_half", "n_units", "n_annotators", "notes"}


def box(x, label="car"):
    return {"label": label, "center": [x, 0, 0], "size": [4, 2, 1.5], "yaw": 0.0}


def record(unit, annotator, **annotations):
    return {"id": unit, "annotator": annotator, "annotations": annotations}


RECORDS = [
    record(
        "i1", "alice", sentiment="pos", fluency=4, topics=["a", "b"], cars=[box(0)],
        events=[{"start": 1, "end": 1, "label": "x"}],
        turns=[{"start": 0, "end": 2, "label": "x", "tier": "s1"}],
        steps={"0": "ok", "1": "ok", "2": "bad"}, comment="fine",
    ),
    record(
        "i1", "bob", sentiment="pos", fluency=5, topics=["b", "a"], cars=[box(0), box(20)],
        events=[{"start": 1, "end": 1, "label": "x"}],
        turns=[{"start": 0, "end": 2, "label": "x", "tier": "s2"}],
        steps={"0": "ok", "1": "bad", "2": "bad"},
    ),
    record("i1", "judge", sentiment="neg", steps={"0": "ok", "1": "bad", "2": "ok"}),
    record("i2", "alice", sentiment="neg", fluency=2, topics=["a"], steps={"0": "bad"}),
    record("i2", "bob", sentiment="neg", fluency=1, topics=["b"], steps={"0": "bad"}),
    record("i3", "alice", sentiment="neu", fluency=3, steps={"0": "ok"}),
]  # fmt: skip

BWS_RECORDS = [
    {
        "id": f"t{t}",
        "items": ["s1", "s2", "s3", "s4"],
        "annotator": who,
        "annotations": {"quality": {"best": best, "worst": worst}},
    }
    for t, who, best, worst in [
        (1, "alice", "s1", "s4"),
        (1, "bob", "s1", "s3"),
        (2, "alice", "s2", "s3"),
        (2, "bob", "s2", "s3"),
        (3, "alice", "s4", "s1"),
        (3, "bob", "s3", "s1"),
    ]
]


@pytest.fixture(scope="module")
def report():
    return build_report(RECORDS + BWS_RECORDS, SCHEMES, model_annotators={"judge"})


def test_keys_per_scheme_type(report):
    schemes = report["schemes"]
    assert set(schemes["sentiment"]) == CATEGORICAL_KEYS
    assert set(schemes["fluency"]) == CATEGORICAL_KEYS | {"alpha_ordinal"}
    assert set(schemes["topics"]) == CATEGORICAL_KEYS
    for name in ("cars", "events", "turns"):
        assert set(schemes[name]) == STRUCTURED_KEYS
    assert set(schemes["steps"]) == TRACE_KEYS
    assert set(schemes["quality"]) == BWS_KEYS
    assert report["model_annotators"] == ["judge"]
    json.dumps(report)  # JSON-ready


def test_every_null_figure_has_a_note(report):
    for name, scheme in report["schemes"].items():
        for key, value in scheme.items():
            if value is None:
                assert any(note.startswith(key) for note in scheme["notes"]), (name, key)


def test_radio_figures(report):
    sentiment = report["schemes"]["sentiment"]
    # i1: pos, pos, neg; i2: neg, neg; i3 has one answer and is no unit.
    assert sentiment["n_units"] == 2 and sentiment["n_annotators"] == 3
    assert sentiment["percent_agreement"] == pytest.approx((1 + 1) / (3 + 1))
    assert sentiment["fleiss_kappa"] is None
    data = [[0, 1, 2], [0, 1, np.nan], [1, np.nan, np.nan]]  # alice, bob, judge
    want = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert sentiment["alpha_nominal"] == pytest.approx(want)
    pairs = {tuple(p["annotators"]): p for p in sentiment["cohen_kappa_pairs"]}
    assert pairs[("alice", "bob")]["n_units"] == 2
    assert pairs[("alice", "judge")]["n_units"] == 1


def test_likert_is_ordinal_on_scale_points(report):
    fluency = report["schemes"]["fluency"]
    data = [[4, 2, 3], [5, 1, np.nan]]
    want = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    assert fluency["alpha_ordinal"] == pytest.approx(want)
    assert fluency["n_units"] == 2


def test_multiselect_compares_sets(report):
    topics = report["schemes"]["topics"]
    # i1: {a, b} both (order does not matter); i2: {a} vs {b}.
    assert topics["percent_agreement"] == pytest.approx(0.5)
    assert any("set of labels" in note for note in topics["notes"])


def test_structured_schemes(report):
    cars = report["schemes"]["cars"]
    assert cars["mean_agreement"] == pytest.approx(0.5)
    assert cars["mean_object_count_diff"] == 1
    assert (cars["n_items"], cars["n_pairs"], cars["n_annotators"]) == (1, 1, 2)
    assert report["schemes"]["events"]["mean_agreement"] == 1.0  # the same instant
    assert report["schemes"]["turns"]["mean_agreement"] == 0.0  # other tier


def test_traces_count_each_step_as_a_unit(report):
    steps = report["schemes"]["steps"]
    # i1 steps 0..2 by three annotators, i2 step 0 by two; i3 step 0 by one: 4 units.
    assert steps["n_units"] == 4 and steps["n_annotators"] == 3
    data = [["ok", "ok", "bad", "bad"], ["ok", "bad", "bad", "bad"], ["ok", "bad", "ok", None]]
    codes = [[{"ok": 0, "bad": 1}.get(v, np.nan) for v in row] for row in data]
    want = krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal")
    assert steps["alpha_nominal"] == pytest.approx(want)
    # Judge vs alice: differs on steps 1, 2; vs bob: differs on step 2. 3 of 6.
    judge = steps["judge_disagreement"]["judge"]
    assert judge == {"rate": 0.5, "n_steps": 3, "n_comparisons": 6}


def test_traces_without_a_judge_say_so():
    report = build_report(RECORDS, SCHEMES[6:7])
    steps = report["schemes"]["steps"]
    assert steps["judge_disagreement"] is None
    assert any("no model annotator" in note for note in steps["notes"])


def test_bws_alpha_on_the_chosen_item(report):
    quality = report["schemes"]["quality"]
    # best: t1 s1/s1, t2 s2/s2, t3 s4/s3; worst: t1 s4/s3, t2 s3/s3, t3 s1/s1.
    best = [[0, 1, 3], [0, 1, 2]]
    worst = [[3, 2, 0], [2, 2, 0]]
    for key, data in (("best_alpha", best), ("worst_alpha", worst)):
        want = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert quality[key] == pytest.approx(want)
    assert quality["n_units"] == 3 and quality["n_annotators"] == 2
    assert quality["split_half"] is None or set(quality["split_half"]) >= {"mean", "trials"}


def test_text_scheme_is_not_compared(report):
    assert report["schemes"]["comment"]["notes"]


def test_repeated_answers_keep_the_last_one():
    records = [
        record("i1", "alice", sentiment="neg"),
        record("i1", "bob", sentiment="pos"),
        record("i1", "alice", sentiment="pos"),
    ]
    sentiment = build_report(records, SCHEMES[:1])["schemes"]["sentiment"]
    assert sentiment["percent_agreement"] == 1.0
    assert any("repeated" in note for note in sentiment["notes"])


def test_unreadable_values_name_scheme_unit_and_annotator():
    with pytest.raises(AgreementInputError, match="'cars'.*'i1'.*'alice'"):
        build_report([record("i1", "alice", cars=[{"center": [0, 0, 0]}])], SCHEMES[3:4])
    with pytest.raises(AgreementInputError, match="unit 'i1', annotator 'alice'"):
        build_report([record("i1", "alice", steps="ok")], SCHEMES[6:7])


def test_text_rendering(report):
    text = format_text(report)
    assert "sentiment (radio)" in text
    assert "judge judge: disagrees on 0.5000 of 6 comparisons (3 steps)" in text
    assert "undefined" in text
