"""Krippendorff's interval alpha on constant and offset data (the krippendorff package as
the reference), and booleans refused as numbers in box and segment parsing."""

import krippendorff
import numpy as np
import pytest

from agreement.core.coefficients import krippendorff_alpha
from agreement.core.iou import box_array
from agreement.core.structured import ObjectError, parse_boxes, parse_segments


def reference_alpha(data):
    return krippendorff.alpha(reliability_data=data, level_of_measurement="interval")


@pytest.mark.parametrize(
    ("value", "shape"),
    # Were 1.0, -2.8e15, -1.1e16 and 1.0: rounding noise of 2 m S2 - 2 S1^2 over zero.
    [(0.1, (2, 3)), (3.3, (3, 5)), (0.7, (3, 5)), (1e8 + 0.1, (2, 10)), (0.3, (3, 6))],
)
def test_interval_alpha_of_constant_data_is_undefined(value, shape):
    data = np.full(shape, value)
    result = krippendorff_alpha(data, "interval")
    assert result.value is None
    assert "same" in result.reason
    assert result.n_units == shape[1]
    data[0, 1] = np.nan
    assert krippendorff_alpha(data, "interval").value is None


def offset_data():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=15)
    data = truth + rng.normal(scale=0.3, size=(4, 15))
    data[1, 4] = data[3, 9] = np.nan
    return data


@pytest.mark.parametrize("offset", [0.0, 1e4, 1e8, -1e8])
def test_interval_alpha_does_not_change_when_every_value_is_shifted(offset):
    # Adding 1e8 to every value changed 0.911 to 1.0.
    data = offset_data()
    expected = reference_alpha(data)
    assert krippendorff_alpha(data + offset, "interval").value == pytest.approx(expected, abs=1e-7)


def test_interval_alpha_matches_the_reference_on_small_spreads_far_from_zero():
    data = 1e8 + np.array([[0.1, 0.2, 0.3, 0.5], [0.1, 0.25, 0.3, 0.4], [0.15, 0.2, np.nan, 0.5]])
    centred = data - 1e8
    assert krippendorff_alpha(data, "interval").value == pytest.approx(
        reference_alpha(centred), abs=1e-6
    )


def box(**changes):
    value = {"label": "car", "center": [0.0, 0.0, 0.0], "size": [4.0, 2.0, 1.5], "yaw": 0.0}
    value.update(changes)
    return value


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"yaw": True}, "yaw"),
        ({"yaw": False}, "yaw"),
        ({"center": [0.0, True, 0.0]}, r"center\[1\]"),
        ({"size": [4.0, 2.0, False]}, r"size\[2\]"),
    ],
)
def test_booleans_are_not_box_numbers(changes, field):
    # "yaw": true was read as 1 radian.
    with pytest.raises(ObjectError, match=rf"box 1: {field} must be a number, got (true|false)"):
        parse_boxes({"scan": {"a": [box(), box(**changes)], "b": [box()]}})


@pytest.mark.parametrize("field", ["start", "end"])
def test_booleans_are_not_segment_numbers(field):
    segment = {"start": 0.0, "end": 2.0, "label": "speech", field: True}
    with pytest.raises(ObjectError, match=rf"segment 0: {field} must be a number, got true"):
        parse_segments({"clip": {"a": [segment]}})
    with pytest.raises(ObjectError, match=rf"{field} must be a number"):
        parse_segments({"clip": {"a": [segment]}}, tiered=True)


def test_box_rows_refuse_booleans_and_still_take_numbers():
    with pytest.raises(ValueError, match="yaw must be a number"):
        box_array([box(yaw=True)])
    with pytest.raises(ValueError, match="x must be a number"):
        box_array([[True, 0, 0, 1, 1, 1, 0]])
    assert box_array([box(yaw=None)]).tolist() == [[0.0, 0.0, 0.0, 4.0, 2.0, 1.5, 0.0]]
    assert parse_boxes({"scan": {"a": [box(yaw=None), box(yaw=1)]}}).geometry[:, 6].tolist() == [
        0.0,
        1.0,
    ]
