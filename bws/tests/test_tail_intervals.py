"""The model fits' outer interval ends moved out by the prior's pull
(bws/core/tail_intervals.py): only the outer end moves, the extreme items are covered
more often, nothing moves where the prior dominates, counting is left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from bws.core import tail_intervals
from bws.core.intervals import calibrated
from bws.core.tail_intervals import tail_weight

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from coverage import simulate, target  # noqa: E402


@pytest.mark.parametrize("method", ["plackett_luce", "bradley_terry"])
def test_only_the_outer_end_moves_and_by_more_the_further_out(method):
    judgments, *_ = simulate(250, 16, 1, 0.0, 11)
    scores, moved = calibrated(judgments, method)
    plain_scores, plain = calibrated(judgments, method, tails=False)
    u = scores.scores
    np.testing.assert_allclose(u, plain_scores.scores)
    np.testing.assert_allclose(moved.std, plain.std)
    up, down = u > 0, u < 0
    np.testing.assert_allclose(moved.low[up], plain.low[up])
    np.testing.assert_allclose(moved.high[down], plain.high[down])
    out = np.where(up, moved.high - plain.high, plain.low - moved.low)
    assert np.all(out[up | down] > 0)
    # the shift is the shrinkage (1 - k) / k times |u|: larger the further out
    far, near = np.abs(u) > np.quantile(np.abs(u), 0.9), np.abs(u) < np.quantile(np.abs(u), 0.1)
    assert out[far].min() > out[near].max()


def test_the_most_extreme_tenths_in_truth_are_covered_more_often():
    """Six studies of 250 items at 16 appearances (normal utilities): the lowest and the
    highest tenth by true utility covered 0.88 by the plain posterior intervals
    (benchmarks/RESULTS.md, "Interval coverage") and above 0.9 with the outer ends moved
    out; all items within the band still."""
    plain, moved, overall = [], [], []
    for rep in range(6):
        judgments, truth, tuples, _ = simulate(250, 16, 1, 0.0, 301 + rep)
        goal = target("plackett_luce", truth, tuples)
        outer = np.abs(np.argsort(np.argsort(truth)) - 124.5) > 100  # 25 a side
        for found, into in (
            (calibrated(judgments, "plackett_luce", tails=False)[1], plain),
            (calibrated(judgments, "plackett_luce")[1], moved),
        ):
            inside = (found.low <= goal) & (goal <= found.high)
            into.append(inside[outer])
        overall.append(inside)
    assert np.mean(moved) >= np.mean(plain) + 0.03, (np.mean(plain), np.mean(moved))
    assert np.mean(moved) >= 0.9
    assert 0.93 <= np.mean(overall) <= 0.975


def test_nothing_moves_where_the_prior_dominates():
    assert tail_weight(np.full(50, 0.6)) == 0.0
    assert tail_weight(np.full(50, 0.675)) == pytest.approx(0.5)
    assert tail_weight(np.full(50, 0.8)) == 1.0
    assert tail_weight(np.array([])) == 0.0


def test_counting_intervals_are_left_alone():
    judgments, *_ = simulate(100, 8, 1, 0.0, 5)
    _, moved = calibrated(judgments, "counting")
    _, plain = calibrated(judgments, "counting", tails=False)
    np.testing.assert_array_equal(moved.low, plain.low)
    np.testing.assert_array_equal(moved.high, plain.high)


def test_plackett_luces_corrected_intervals_bring_their_inner_end_in(monkeypatch):
    """At 4 appearances (the prior corrected by simulation) Plackett-Luce's inner ends come
    in by INNER_SHARE of the outer ends' shift, never past the estimate, which takes the
    coverage of all items from above the band (0.969-0.973) into it; Bradley-Terry's stay."""
    judgments, *_ = simulate(250, 4, 1, 0.0, 11)
    scores, trimmed = calibrated(judgments, "plackett_luce")
    _, plain = calibrated(judgments, "plackett_luce", tails=False)
    u = scores.scores
    up, down = u > 0, u < 0
    outer = np.where(up, trimmed.high - plain.high, plain.low - trimmed.low)
    inner = np.where(up, trimmed.low - plain.low, plain.high - trimmed.high)
    share = tail_intervals.INNER_SHARE["plackett_luce"]
    expected = np.where(up, np.minimum(plain.low + share * outer, u) - plain.low, 0.0)
    expected = np.where(down, plain.high - np.maximum(plain.high - share * outer, u), expected)
    np.testing.assert_allclose(inner, expected, atol=1e-12)
    assert np.all(inner[up | down] > 0) and np.all(trimmed.low <= u) and np.all(u <= trimmed.high)
    _, bt = calibrated(judgments, "bradley_terry")
    bt_scores, bt_plain = calibrated(judgments, "bradley_terry", tails=False)
    positive = bt_scores.scores > 0
    np.testing.assert_allclose(bt.low[positive], bt_plain.low[positive])

    def coverage():
        inside = []
        for rep in range(20):
            study, truth, tuples, _ = simulate(250, 4, 1, 0.0, 7919 * rep + 1)
            found = calibrated(study, "plackett_luce")[1]
            inside.append((found.low <= truth) & (truth <= found.high))
        return float(np.mean(inside))

    now = coverage()
    monkeypatch.setitem(tail_intervals.INNER_SHARE, "plackett_luce", 0.0)
    before = coverage()
    assert 0.93 <= now <= 0.97 and before > 0.97 and before - now > 0.005, (before, now)


def test_from_six_judgments_per_item_every_outer_end_moves():
    """A heavy-tailed study at 8 appearances whose median shrinkage is below the gate
    (MIN_KEEP, meant for the too-large prior of about 4 uncorrected judgments per item):
    its outer ends move all the same; an adaptive design's stay gated."""
    judgments, *_ = simulate(250, 8, 1, 0.0, 7919 * 2 + 1, "t3")
    scores, moved = calibrated(judgments, "plackett_luce")
    _, plain = calibrated(judgments, "plackett_luce", tails=False)
    keep = 1.0 - plain.std**2 / (plain.prior_variance * plain.scale**2)
    assert tail_weight(np.clip(keep, 0.05, 1.0)) == 0.0  # the gate alone would move nothing
    up = scores.scores > 0
    assert np.all(moved.high[up] > plain.high[up])
    _, adaptive = calibrated(judgments, "plackett_luce", adaptive=True)
    _, adaptive_plain = calibrated(judgments, "plackett_luce", adaptive=True, tails=False)
    np.testing.assert_allclose(adaptive.high, adaptive_plain.high)
