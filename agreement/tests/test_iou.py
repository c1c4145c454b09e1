"""3D IoU of yaw-rotated boxes and temporal IoU: hand-worked values, a second clipper,
and invariances (moving or rotating both boxes together, swapping them)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.core.iou import (
    bev_corners,
    box3d_iou,
    box3d_iou_matrix,
    box3d_iou_pairs,
    temporal_iou,
    temporal_iou_matrix,
)

UNIT = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]


def test_unit_cube_shifted_a_tenth_on_every_axis_has_iou_729_over_1271():
    # Overlap 0.9^3 = 0.729; union 2 - 0.729 = 1.271.
    assert box3d_iou(UNIT, [0.1, 0.1, 0.1, 1, 1, 1, 0]) == pytest.approx(729 / 1271, abs=1e-12)


def test_cube_against_itself_yawed_45_degrees_has_iou_one_over_root_two():
    # The overlap is a regular octagon of area 2(sqrt2 - 1); IoU = that / (2 - that).
    assert box3d_iou(UNIT, [0, 0, 0, 1, 1, 1, math.pi / 4]) == pytest.approx(1 / math.sqrt(2))


def test_long_box_against_itself_turned_90_degrees_has_iou_one_third():
    # 4 x 2 footprint against 2 x 4: overlap 2 x 2 = 4, union 8 + 8 - 4 = 12 (height cancels).
    box = [0, 0, 0, 4, 2, 2, 0]
    assert box3d_iou(box, [0, 0, 0, 4, 2, 2, math.pi / 2]) == pytest.approx(1 / 3)


def test_identical_and_disjoint_boxes():
    box = [3, -2, 1, 4, 2, 1.5, 0.7]
    assert box3d_iou(box, box) == pytest.approx(1.0)
    assert box3d_iou(box, [30, -2, 1, 4, 2, 1.5, 0.7]) == 0.0
    # Footprints overlap but heights do not.
    assert box3d_iou(box, [3, -2, 5, 4, 2, 1.5, 0.7]) == 0.0


def test_interchange_dicts_are_read():
    a = {"label": "car", "center": [0, 0, 0], "size": [1, 1, 1], "yaw": 0}
    b = {"label": "car", "center": [0.1, 0.1, 0.1], "size": [1, 1, 1], "yaw": 0}
    assert box3d_iou(a, b) == pytest.approx(729 / 1271)


def _clip(subject, clip):
    """Sutherland-Hodgman: a second, scalar polygon clipper to check the batched one."""
    output = list(subject)
    for i in range(len(clip)):
        a, b = clip[i], clip[(i + 1) % len(clip)]
        inputs, output = output, []

        def inside(p, a=a, b=b):
            return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0

        def cross_point(p, q, a=a, b=b):
            x1, y1, x2, y2 = *p, *q
            x3, y3, x4, y4 = *a, *b
            den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
            t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / den
            return (x1 + t * (x2 - x1), y1 + t * (y2 - y1))

        for j in range(len(inputs)):
            p, q = inputs[j - 1], inputs[j]
            if inside(q):
                if not inside(p):
                    output.append(cross_point(p, q))
                output.append(q)
            elif inside(p):
                output.append(cross_point(p, q))
        if not output:
            return []
    return output


def _reference_iou(a, b):
    ca, cb = bev_corners(np.array([a]))[0], bev_corners(np.array([b]))[0]
    polygon = _clip([tuple(p) for p in ca], [tuple(p) for p in cb])
    area = 0.0
    for i in range(len(polygon)):
        x1, y1 = polygon[i - 1]
        x2, y2 = polygon[i]
        area += x1 * y2 - x2 * y1
    area = abs(area) / 2
    top = min(a[2] + a[5] / 2, b[2] + b[5] / 2)
    bottom = max(a[2] - a[5] / 2, b[2] - b[5] / 2)
    inter = area * max(0.0, top - bottom)
    return inter / (a[3] * a[4] * a[5] + b[3] * b[4] * b[5] - inter)


def _random_boxes(rng, n):
    return np.column_stack(
        [
            rng.normal(0, 1.5, (n, 3)),
            rng.uniform(0.3, 4, (n, 3)),
            rng.uniform(-math.pi, math.pi, n),
        ]
    )


def test_batched_clipping_agrees_with_sutherland_hodgman():
    rng = np.random.default_rng(7)
    a, b = _random_boxes(rng, 400), _random_boxes(rng, 400)
    got = box3d_iou_pairs(a, b)
    want = np.array([_reference_iou(x, y) for x, y in zip(a, b, strict=True)])
    assert np.count_nonzero(want) > 100
    np.testing.assert_allclose(got, want, atol=1e-9)


def test_matrix_equals_pairwise_values():
    rng = np.random.default_rng(3)
    a, b = _random_boxes(rng, 5), _random_boxes(rng, 7)
    matrix = box3d_iou_matrix(a, b)
    assert matrix.shape == (5, 7)
    for i in range(5):
        for j in range(7):
            assert matrix[i, j] == pytest.approx(box3d_iou(a[i], b[j]), abs=1e-12)


coordinate = st.floats(-20, 20, allow_nan=False)
extent = st.floats(0.2, 6, allow_nan=False)
angle = st.floats(-math.pi, math.pi, allow_nan=False)
box = st.tuples(coordinate, coordinate, coordinate, extent, extent, extent, angle)
near_box = st.tuples(
    st.floats(-2, 2), st.floats(-2, 2), st.floats(-1, 1), extent, extent, extent, angle
)


@settings(max_examples=200, deadline=None)
@given(near_box, near_box)
def test_iou_is_symmetric_and_between_zero_and_one(a, b):
    forward, backward = box3d_iou(a, b), box3d_iou(b, a)
    assert 0.0 <= forward <= 1.0
    assert forward == pytest.approx(backward, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(near_box, near_box, coordinate, coordinate, coordinate, angle)
def test_moving_and_rotating_both_boxes_keeps_iou(a, b, dx, dy, dz, turn):
    def moved(box):
        x, y, z, length, width, height, yaw = box
        c, s = math.cos(turn), math.sin(turn)
        return (c * x - s * y + dx, s * x + c * y + dy, z + dz, length, width, height, yaw + turn)

    assert box3d_iou(moved(a), moved(b)) == pytest.approx(box3d_iou(a, b), abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(box)
def test_a_box_against_itself_is_one(a):
    assert box3d_iou(a, a) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(near_box, st.integers(0, 3))
def test_quarter_turns_of_a_square_footprint_change_nothing(a, quarter):
    x, y, z, length, _, height, yaw = a
    square = (x, y, z, length, length, height, yaw)
    turned = (x, y, z, length, length, height, yaw + quarter * math.pi / 2)
    assert box3d_iou(square, turned) == pytest.approx(1.0, abs=1e-9)


# --------------------------------------------------------------------------- segments


def test_identical_instants_agree_fully():
    assert temporal_iou((2.5, 2.5), (2.5, 2.5)) == 1.0


def test_different_instants_and_an_instant_inside_a_segment_do_not_agree():
    assert temporal_iou((2.5, 2.5), (3.0, 3.0)) == 0.0
    assert temporal_iou((2.5, 2.5), (2.0, 3.0)) == 0.0


def test_temporal_iou_is_overlap_over_union():
    assert temporal_iou((0, 2), (1, 3)) == pytest.approx(1 / 3)
    assert temporal_iou((0, 2), (0, 1)) == pytest.approx(0.5)
    assert temporal_iou((0, 1), (2, 3)) == 0.0


# Starts on a quarter-second grid, lengths zero or at least 10 ms: shifts stay exact enough.
segment = st.tuples(
    st.integers(0, 400).map(lambda q: q / 4), st.one_of(st.just(0.0), st.floats(0.01, 20))
).map(lambda s: (s[0], s[0] + s[1]))


@given(segment, segment, st.integers(-50, 50))
def test_temporal_iou_symmetric_bounded_and_shift_invariant(a, b, shift):
    value = temporal_iou(a, b)
    assert 0.0 <= value <= 1.0
    assert value == temporal_iou(b, a)
    shifted = temporal_iou((a[0] + shift, a[1] + shift), (b[0] + shift, b[1] + shift))
    assert shifted == pytest.approx(value, abs=1e-6)


def test_temporal_matrix_matches_scalar_values():
    a = np.array([[0, 2], [1, 1], [5, 9]], float)
    b = np.array([[1, 3], [1, 1]], float)
    matrix = temporal_iou_matrix(a, b)
    for i in range(3):
        for j in range(2):
            assert matrix[i, j] == temporal_iou(a[i], b[j])
