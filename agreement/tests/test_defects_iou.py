"""3D IoU against an exact reference: boxes far from the origin, tiny boxes, a small shift
of a small box, zero-volume boxes and yaw taken modulo a half turn."""

import math
from fractions import Fraction

import pytest

from agreement.core.iou import box3d_iou, box3d_iou_matrix, same_boxes


def exact_footprint(box, origin):
    """The box's bird's-eye corners as exact fractions about ``origin`` (counter-clockwise).

    The cosine and sine are the floats the code sees; everything after is exact.
    """
    x, y, _, length, width, _, yaw = (Fraction(v) for v in box)
    c, s = Fraction(math.cos(box[6])), Fraction(math.sin(box[6]))
    ox, oy = origin
    corners = []
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        lx, ly = sx * length / 2, sy * width / 2
        corners.append((x - ox + c * lx - s * ly, y - oy + s * lx + c * ly))
    return corners


def clip(subject, clipper):
    """Sutherland-Hodgman: the part of convex polygon ``subject`` inside convex CCW ``clipper``."""
    output = subject
    for i, start in enumerate(clipper):
        end = clipper[(i + 1) % len(clipper)]

        def side(p, start=start, end=end):
            return (end[0] - start[0]) * (p[1] - start[1]) - (end[1] - start[1]) * (p[0] - start[0])

        points, output = output, []
        for k, current in enumerate(points):
            previous = points[k - 1]
            inside_now, inside_before = side(current) >= 0, side(previous) >= 0
            if inside_now != inside_before:
                t = side(previous) / (side(previous) - side(current))
                output.append(
                    (
                        previous[0] + t * (current[0] - previous[0]),
                        previous[1] + t * (current[1] - previous[1]),
                    )
                )
            if inside_now:
                output.append(current)
        if not output:
            return []
    return output


def area(polygon):
    return (
        abs(
            sum(
                polygon[k - 1][0] * polygon[k][1] - polygon[k][0] * polygon[k - 1][1]
                for k in range(len(polygon))
            )
        )
        / 2
    )


def exact_iou(a, b):
    origin = (Fraction(a[0]), Fraction(a[1]))
    footprint = area(clip(exact_footprint(a, origin), exact_footprint(b, origin)))
    za, zb = (Fraction(a[2]), Fraction(a[5])), (Fraction(b[2]), Fraction(b[5]))
    top = min(za[0] + za[1] / 2, zb[0] + zb[1] / 2)
    bottom = max(za[0] - za[1] / 2, zb[0] - zb[1] / 2)
    inter = footprint * max(top - bottom, 0)
    volume = [Fraction(v[3]) * Fraction(v[4]) * Fraction(v[5]) for v in (a, b)]
    return float(inter / (volume[0] + volume[1] - inter))


def test_the_exact_reference_knows_hand_worked_boxes():
    unit = (0, 0, 0, 1, 1, 1, 0)
    assert exact_iou(unit, (0.1, 0.1, 0.1, 1, 1, 1, 0)) == pytest.approx(729 / 1271, abs=1e-12)
    assert exact_iou(unit, (0, 0, 0, 1, 1, 1, math.pi / 4)) == pytest.approx(1 / math.sqrt(2))


def test_tiny_boxes_are_measured_at_their_own_size():
    # 20 micrometre boxes, the second shifted and turned: was 1.0, the truth is about 0.2.
    a = (0.0, 0.0, 0.0, 2e-5, 2e-5, 2e-5, 0.0)
    b = (1.2e-5, 0.4e-5, 0.0, 2e-5, 2e-5, 2e-5, 0.3)
    truth = exact_iou(a, b)
    assert 0.1 < truth < 0.4
    assert box3d_iou(a, b) == pytest.approx(truth, abs=1e-9)


def test_identical_boxes_far_from_the_origin_agree_fully():
    # Was 0.998 at (5e6, 5e6).
    box = (5e6, 5e6, 10.0, 4.0, 1.8, 1.5, 0.7)
    assert box3d_iou(box, box) == pytest.approx(1.0, abs=1e-12)


def test_a_small_box_shifted_a_little_far_from_the_origin():
    # A 24 cm box shifted 1.3 cm, 5,000 km from the origin: see the report below.
    a = (5e6, 5e6, 0.0, 0.24, 0.24, 0.24, 0.0)
    b = (5e6 + 0.013, 5e6, 0.0, 0.24, 0.24, 0.24, 0.0)
    truth = exact_iou(a, b)
    assert truth == pytest.approx((0.24 - 0.013) / (0.24 + 0.013), abs=1e-8)
    assert box3d_iou(a, b) == pytest.approx(truth, abs=1e-9)
    turned = (5e6 + 0.013, 5e6 - 0.02, 0.01, 0.24, 0.2, 0.24, 0.4)
    assert box3d_iou(a, turned) == pytest.approx(exact_iou(a, turned), abs=1e-9)


@pytest.mark.parametrize("scale", [1e-6, 1e-3, 1.0, 1e3])
@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
def test_iou_matches_the_exact_reference_at_every_scale_and_place(scale, offset):
    a = (offset, -offset, 0.0, 4 * scale, 2 * scale, 1.5 * scale, 0.2)
    others = [
        (
            offset + 0.7 * scale,
            -offset + 0.3 * scale,
            0.2 * scale,
            3 * scale,
            2 * scale,
            scale,
            1.1,
        ),
        (offset + 1.9 * scale, -offset, 0.0, 4 * scale, 2 * scale, 1.5 * scale, 0.2),
        (offset, -offset + 0.5 * scale, 0.0, 1 * scale, 6 * scale, 2 * scale, -0.9),
    ]
    for b in others:
        assert box3d_iou(a, b) == pytest.approx(exact_iou(a, b), abs=1e-9)


def test_yaw_is_taken_modulo_a_half_turn():
    box = (3.0, -2.0, 0.5, 4.0, 2.0, 1.5, 0.3)
    for turn in (math.pi, 2 * math.pi, -math.pi, 10 * math.pi):
        assert box3d_iou(box, (*box[:6], box[6] + turn)) == pytest.approx(1.0, abs=1e-12)


def test_identical_zero_volume_boxes_agree_and_different_ones_do_not():
    flat = (5.0, 5.0, 1.0, 4.0, 2.0, 0.0, 0.0)
    # yaw 0 and 2 pi, or pi: the same flat box (was 0).
    assert box3d_iou(flat, (*flat[:6], 2 * math.pi)) == 1.0
    assert box3d_iou(flat, (*flat[:6], math.pi)) == 1.0
    assert box3d_iou(flat, (*flat[:6], 0.5)) == 0.0
    assert box3d_iou(flat, (5.0, 5.0, 1.0, 4.0, 2.0, 1e-3, 0.0)) == 0.0
    point = (1e6, 1e6, 2.0, 0.0, 0.0, 0.0, 1.0)
    assert box3d_iou(point, (*point[:6], 7.0)) == 1.0
    assert box3d_iou(point, (1e6, 1e6, 2.5, 0.0, 0.0, 0.0, 1.0)) == 0.0
    # A flat square turned a quarter is the same square.
    square = (0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.1)
    assert same_boxes([square], [(*square[:6], 0.1 + math.pi / 2)]).tolist() == [True]


def test_matrix_uses_the_same_local_frames():
    a = [(5e6, 5e6, 0.0, 0.24, 0.24, 0.24, 0.0), (5e6, 5e6, 1.0, 4.0, 2.0, 0.0, 0.0)]
    b = [(5e6 + 0.013, 5e6, 0.0, 0.24, 0.24, 0.24, 0.0), (5e6, 5e6, 1.0, 4.0, 2.0, 0.0, math.pi)]
    matrix = box3d_iou_matrix(a, b)
    assert matrix[0, 0] == pytest.approx(exact_iou(a[0], b[0]), abs=1e-9)
    assert matrix[1, 1] == 1.0
    assert matrix[0, 1] == matrix[1, 0] == 0.0
