"""Item scores and per-scheme figures for 3D boxes and time segments."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.core.iou import box3d_iou
from agreement.core.structured import (
    ObjectError,
    item_score,
    parse_boxes,
    parse_segments,
    structured_agreement,
)


def box(x, y=0.0, z=0.0, size=(4.0, 2.0, 1.5), yaw=0.0, label="car"):
    return {"label": label, "center": [x, y, z], "size": list(size), "yaw": yaw}


def seg(start, end, label="speech", tier=None):
    out = {"start": start, "end": end, "label": label}
    if tier is not None:
        out["tier"] = tier
    return out


def boxes_score(a, b):
    return structured_agreement(parse_boxes({"item": {"a": a, "b": b}}), kind="boxes")[
        "mean_agreement"
    ]


def segments_score(a, b, tiered=False):
    objects = parse_segments({"item": {"a": a, "b": b}}, tiered=tiered)
    return structured_agreement(objects, kind="segments")["mean_agreement"]


def test_both_annotators_empty_agree():
    assert boxes_score([], []) == 1.0
    assert segments_score([], []) == 1.0
    assert item_score(np.zeros((0, 0)), [], [], 0.5) == 1.0


def test_one_empty_against_objects_is_zero():
    assert boxes_score([box(0)], []) == 0.0


def test_identical_instants_agree():
    assert segments_score([seg(3.0, 3.0)], [seg(3.0, 3.0)]) == 1.0


def test_a_matched_pair_with_different_labels_adds_half_its_iou():
    shifted = box(0.1, 0.1, 0.1, size=(1, 1, 1), label="truck")
    iou = 729 / 1271
    assert boxes_score([box(0, size=(1, 1, 1))], [shifted]) == pytest.approx(iou / 2)
    assert segments_score([seg(0, 2, "a")], [seg(0, 2, "b")]) == pytest.approx(0.5)


def test_unmatched_objects_count_in_the_denominator():
    # One perfect pair plus one box only annotator a drew: (1 + 0) / 2.
    assert boxes_score([box(0), box(20)], [box(0)]) == pytest.approx(0.5)
    # Pair counted once: 2 matched pairs and 1 unmatched: (1 + 1) / 3.
    assert boxes_score([box(0), box(10), box(20)], [box(0), box(10)]) == pytest.approx(2 / 3)


def test_thresholds_are_025_for_boxes_and_05_for_segments():
    # Box IoU about 0.33 is matched at 0.25.
    near = box(2.0)  # 4 m box shifted 2 m: overlap 2/4 of the footprint, IoU 1/3
    assert box3d_iou(box(0)["center"] + [4, 2, 1.5, 0], [2, 0, 0, 4, 2, 1.5, 0]) == 1 / 3
    assert boxes_score([box(0)], [near]) == pytest.approx((1 / 3) / 1)
    # Box IoU 0.2 is not matched: two unmatched boxes score 0.
    far = box(4 * (1 - 1 / 3) * 1.0)  # overlap 4/3 of 4: IoU (1/3)/(2-1/3) = 0.2
    assert boxes_score([box(0)], [far]) == 0.0
    # Segments: IoU exactly 0.5 matches, 1/3 does not.
    assert segments_score([seg(0, 2)], [seg(0, 1)]) == pytest.approx(0.5)
    assert segments_score([seg(0, 2)], [seg(1, 3)]) == 0.0


def test_optimal_matching_pairs_segments_that_greedy_strands():
    # IoU a0-b0 0.9, a0-b1 9/11, a1-b0 2/3, a1-b1 5/11 (under 0.5). Greedy takes a0-b0 and
    # strands a1 and b1: score 0.9 / 3. The optimal matching pairs both.
    a = [seg(0, 10), seg(0, 6)]
    b = [seg(0, 9), seg(1, 11)]
    assert segments_score(a, b) == pytest.approx((9 / 11 + 2 / 3) / 2)


def test_tiers_match_only_within_a_tier():
    a = [seg(0, 2, tier="speaker 1")]
    b = [seg(0, 2, tier="speaker 2")]
    assert segments_score(a, b, tiered=True) == 0.0
    assert segments_score(a, [seg(0, 2, tier="speaker 1")], tiered=True) == 1.0


def test_per_scheme_figures():
    units = {
        "scan1": {"a": [box(0)], "b": [box(0), box(10)], "c": []},
        "scan2": {"a": [box(0)], "b": [box(0)]},
        "scan3": {"a": [box(0)]},  # one annotator: left out
    }
    report = structured_agreement(parse_boxes(units), kind="boxes")
    # scan1 pairs: a-b 1/2, a-c 0, b-c 0; scan2: a-b 1.
    assert report["mean_agreement"] == pytest.approx((0.5 + 0 + 0 + 1) / 4)
    assert report["mean_object_count_diff"] == pytest.approx((1 + 1 + 2 + 0) / 4)
    assert report["n_items"] == 2
    assert report["n_pairs"] == 4
    assert report["n_annotators"] == 3
    assert any("not chance-corrected" in note for note in report["notes"])


def test_no_item_with_two_annotators_is_undefined_with_a_note():
    report = structured_agreement(parse_boxes({"scan": {"a": [box(0)]}}), kind="boxes")
    assert report["mean_agreement"] is None
    assert any("undefined" in note for note in report["notes"])


def test_malformed_objects_are_named():
    with pytest.raises(ObjectError, match="annotator 'a', box 0"):
        parse_boxes({"scan": {"a": [{"label": "car", "center": [0, 0], "size": [1, 1, 1]}]}})
    with pytest.raises(ObjectError, match="end 1 is before start 2"):
        parse_segments({"clip": {"a": [seg(2, 1)]}})


scene_box = st.tuples(
    st.floats(-10, 10), st.floats(-10, 10), st.floats(-1, 1),
    st.floats(0.5, 5), st.floats(0.5, 3), st.floats(0.5, 2),
    st.floats(-math.pi, math.pi), st.sampled_from(["car", "truck"]),
)  # fmt: skip


def _as_dicts(rows):
    return [box(x, y, z, (length, w, h), yaw, label) for x, y, z, length, w, h, yaw, label in rows]


def _moved(rows, dx, dy, turn):
    c, s = math.cos(turn), math.sin(turn)
    return [
        (c * x - s * y + dx, s * x + c * y + dy, z, length, w, h, yaw + turn, label)
        for x, y, z, length, w, h, yaw, label in rows
    ]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(scene_box, max_size=5),
    st.lists(scene_box, max_size=5),
    st.floats(-50, 50),
    st.floats(-50, 50),
    st.floats(-math.pi, math.pi),
)
def test_moving_or_rotating_both_annotators_boxes_together_changes_nothing(a, b, dx, dy, turn):
    before = boxes_score(_as_dicts(a), _as_dicts(b))
    after = boxes_score(_as_dicts(_moved(a, dx, dy, turn)), _as_dicts(_moved(b, dx, dy, turn)))
    assert after == pytest.approx(before, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(st.lists(scene_box, max_size=5), st.lists(scene_box, max_size=5))
def test_swapping_annotators_changes_nothing(a, b):
    forward = boxes_score(_as_dicts(a), _as_dicts(b))
    assert 0.0 <= forward <= 1.0
    assert boxes_score(_as_dicts(b), _as_dicts(a)) == pytest.approx(forward, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8), st.sampled_from("xy")), max_size=6),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8), st.sampled_from("xy")), max_size=6),
)
def test_swapping_annotators_of_segments_changes_nothing(a, b):
    sa = [seg(s, s + n, label) for s, n, label in a]
    sb = [seg(s, s + n, label) for s, n, label in b]
    assert segments_score(sa, sb) == pytest.approx(segments_score(sb, sa), abs=1e-12)


def test_equal_iou_prefers_the_pair_with_the_same_label():
    # a's segment overlaps b's two identical segments equally; the same label wins either way.
    a = [seg(0, 1, "x")]
    b = [seg(0, 1, "y"), seg(0, 1, "x")]
    assert segments_score(a, b) == pytest.approx(1 / 2)
    assert segments_score(b, a) == pytest.approx(1 / 2)


def test_fast_and_checked_readers_agree():
    from agreement.core import structured

    units = {
        "scan": {"a": [box(0, yaw=0.3), box(5, label="truck")], "b": None, "c": [box(1)]},
        "scan2": {"a": []},
    }
    fast, checked = structured.parse_boxes(units), structured._checked_boxes(units)
    np.testing.assert_array_equal(fast.geometry, checked.geometry)
    np.testing.assert_array_equal(fast.labels, checked.labels)
    assert fast.sets == checked.sets
    clips = {"clip": {"a": [seg(0, 1, tier="s1"), seg(2, 2, tier="s2")], "b": []}}
    fast = structured.parse_segments(clips, tiered=True)
    checked = structured._checked_segments(clips, True)
    np.testing.assert_array_equal(fast.geometry, checked.geometry)
    np.testing.assert_array_equal(fast.tiers, checked.tiers)
    assert fast.sets == checked.sets


def test_numbers_given_as_strings_are_refused():
    bad = box(0)
    bad["center"] = ["0", 0, 0]
    with pytest.raises(ObjectError, match="needs center"):
        parse_boxes({"scan": {"a": [bad]}})
