"""Split-half reliability and convergence facts."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from bws.core import scoring
from bws.core.convergence import convergence
from bws.core.judgments import Judgments
from bws.core.reliability import (
    SPLIT_TUPLES,
    SPLIT_WITHIN_TUPLES,
    half_masks,
    spearman_brown,
    split_half,
)
from bws.tests.test_scoring import simulated


def test_spearman_brown_formula():
    assert spearman_brown(0.74) == pytest.approx(2 * 0.74 / 1.74)
    assert spearman_brown(1.0) == 1.0
    assert spearman_brown(0.0) == 0.0


def test_each_tuple_s_judgments_are_halved_and_an_odd_one_goes_to_a_random_half():
    judgments, _ = simulated(30, per_tuple=3, seed=1)
    split, masks = half_masks(judgments, trials=400, seed=0)
    assert split == SPLIT_WITHIN_TUPLES
    odd_first = []
    for first in masks:
        per_tuple = np.bincount(judgments.tuple_ids, weights=first.astype(int))
        assert set(per_tuple.astype(int).tolist()) <= {1, 2}
        odd_first.append(np.mean(per_tuple == 2))
    assert np.mean(odd_first) == pytest.approx(0.5, abs=0.03)


def test_even_tuples_split_exactly_in_half():
    judgments, _ = simulated(30, per_tuple=4, seed=2)
    _, masks = half_masks(judgments, trials=20, seed=0)
    for first in masks:
        np.testing.assert_array_equal(
            np.bincount(judgments.tuple_ids, weights=first.astype(int)), 2
        )


def test_split_half_correlations_match_an_independent_computation():
    judgments, _ = simulated(60, per_tuple=2, seed=3)
    result = split_half(judgments, trials=5, seed=7)
    _, masks = half_masks(judgments, trials=5, seed=7)
    for trial, first in enumerate(masks):
        a = scoring.fit_counting(judgments.subset(first))
        b = scoring.fit_counting(judgments.subset(~first))
        both = (a.appearances > 0) & (b.appearances > 0)
        expected = spearmanr(a.scores[both], b.scores[both])[0]
        assert result.correlations[trial] == pytest.approx(expected)
    assert result.mean == pytest.approx(np.mean(result.correlations))
    assert result.std == pytest.approx(np.std(result.correlations))
    assert result.spearman_brown == pytest.approx(spearman_brown(result.mean))


def test_one_judgment_per_tuple_splits_the_tuples_and_says_so():
    judgments, _ = simulated(100, per_tuple=1, seed=4)
    result = split_half(judgments, trials=10, seed=0)
    assert result.split == SPLIT_TUPLES and result.splits_tuples
    _, masks = half_masks(judgments, trials=3, seed=0)
    for first in masks:
        assert abs(int(first.sum()) - judgments.n_judgments / 2) <= 0.5


def test_reliability_grows_with_judgments_per_tuple_and_is_seeded():
    two, _ = simulated(300, per_tuple=2, seed=5)
    eight, _ = simulated(300, per_tuple=8, seed=5)
    low, high = split_half(two, seed=1), split_half(eight, seed=1)
    assert 0.3 < low.mean < high.mean < 1.0
    assert high.spearman_brown > high.mean
    assert low.trials == 100 and low.correlations.shape == (100,)
    assert low.std > 0
    again = split_half(two, seed=1)
    np.testing.assert_array_equal(again.correlations, low.correlations)


def test_agreeing_annotators_give_reliability_one_and_noise_gives_zero():
    rng = np.random.default_rng(0)
    n, m = 40, 400
    tuples = np.array([rng.choice(n, 4, replace=False) for _ in range(m // 4)])
    items = np.repeat(tuples, 4, axis=0)
    # Everyone agrees: best is the highest index, worst the lowest.
    best, worst = items.argmax(axis=1), items.argmin(axis=1)
    tuple_ids = np.repeat(np.arange(len(tuples)), 4)
    agreeing = Judgments(items, best, worst, tuple_ids, np.zeros(m), np.arange(m), n)
    assert split_half(agreeing, trials=20).mean == pytest.approx(1.0)
    best = rng.integers(0, 4, size=m)
    worst = (best + rng.integers(1, 4, size=m)) % 4
    noise = Judgments(items, best, worst, tuple_ids, np.zeros(m), np.arange(m), n)
    assert abs(split_half(noise, trials=50).mean) < 0.15


def test_convergence_on_time_ordered_prefixes():
    judgments, _ = simulated(200, per_tuple=2, seed=6)
    points = convergence(judgments, "counting")
    assert [p.fraction for p in points] == pytest.approx([0.1 * k for k in range(1, 11)])
    assert points[-1].judgments == judgments.n_judgments
    assert points[-1].spearman == pytest.approx(1.0)
    assert np.isnan(points[0].mean_abs_change)
    assert points[-1].spearman > points[1].spearman
    # Later judgments move the scores less than early ones.
    assert points[-1].mean_abs_change < points[1].mean_abs_change
    # The first 10% are the earliest judgments in time, wherever they sit in the arrays.
    earliest = judgments.subset(judgments.order < points[0].judgments)
    first = scoring.fit_counting(earliest)
    assert points[0].items == int((first.appearances > 0).sum())


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_convergence_for_model_methods(method):
    judgments, _ = simulated(100, per_tuple=2, seed=7)
    points = convergence(judgments, method, fractions=(0.25, 0.5, 1.0))
    assert [p.fraction for p in points] == [0.25, 0.5, 1.0]
    assert points[-1].spearman == pytest.approx(1.0)
    assert points[0].spearman < points[1].spearman < 1.0


def test_convergence_refuses_bad_fractions():
    judgments, _ = simulated(20, seed=8)
    with pytest.raises(ValueError, match="fractions"):
        convergence(judgments, fractions=(0.0, 1.0))
