"""Bootstrap facts: cluster resampling, seeded results, the one-step Newton resamples
against exact refits, and interval coverage of known utilities."""

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.linalg import spsolve

from bws.core import bootstrap, scoring
from bws.core.choice_models import model_for
from bws.tests.test_scoring import simulated


def test_tuple_resampling_keeps_the_judgments_of_a_tuple_together():
    judgments, _ = simulated(40, per_tuple=3, seed=1)
    weights = next(bootstrap.resample_weights(judgments, 50, unit="tuple", seed=0))
    assert weights.shape == (judgments.n_judgments, 50)
    for tuple_id in np.unique(judgments.tuple_ids):
        rows = weights[judgments.tuple_ids == tuple_id]
        assert (rows == rows[0]).all()
    # Each resample draws as many tuples as there are.
    np.testing.assert_array_equal(weights.sum(axis=0), judgments.n_judgments)


def test_annotator_and_judgment_resampling():
    judgments, _ = simulated(40, per_tuple=2, seed=2)
    by_annotator = next(bootstrap.resample_weights(judgments, 20, unit="annotator", seed=0))
    for annotator in np.unique(judgments.annotators):
        rows = by_annotator[judgments.annotators == annotator]
        assert (rows == rows[0]).all()
    by_judgment = next(bootstrap.resample_weights(judgments, 20, unit="judgment", seed=0))
    np.testing.assert_array_equal(by_judgment.sum(axis=0), judgments.n_judgments)
    assert not all(
        (by_judgment[judgments.tuple_ids == t] == by_judgment[judgments.tuple_ids == t][0]).all()
        for t in np.unique(judgments.tuple_ids)
    )
    with pytest.raises(ValueError, match="unknown resampling unit"):
        next(bootstrap.resample_weights(judgments, 5, unit="item"))


def test_chunked_resamples_are_the_same_draws_in_any_chunk_size_for_a_seed():
    judgments, _ = simulated(30, seed=3)
    a = np.hstack(list(bootstrap.resample_weights(judgments, 10, seed=4, chunk=10)))
    b = np.hstack(list(bootstrap.resample_weights(judgments, 10, seed=4, chunk=10)))
    np.testing.assert_array_equal(a, b)
    c = np.hstack(list(bootstrap.resample_weights(judgments, 10, seed=5, chunk=10)))
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("method", scoring.METHODS)
def test_intervals_are_seeded_and_hold_the_estimate(method):
    judgments, _ = simulated(80, per_tuple=2, seed=6)
    fitted = scoring.fit(method, judgments)
    first = bootstrap.bootstrap_intervals(judgments, method, scores=fitted, resamples=200, seed=1)
    again = bootstrap.bootstrap_intervals(judgments, method, scores=fitted, resamples=200, seed=1)
    other = bootstrap.bootstrap_intervals(judgments, method, scores=fitted, resamples=200, seed=2)
    np.testing.assert_array_equal(first.low, again.low)
    np.testing.assert_array_equal(first.high, again.high)
    assert not np.array_equal(first.low, other.low)
    assert (first.low <= first.high).all()
    inside = (first.low <= fitted.scores) & (fitted.scores <= first.high)
    assert inside.mean() > 0.95
    assert first.resamples == 200 and first.unit == "tuple" and first.level == 0.95


def test_counting_resamples_are_exact_weighted_counting():
    judgments, _ = simulated(30, seed=7)
    weights = next(bootstrap.resample_weights(judgments, 3, seed=0))
    samples = bootstrap._counting_samples(judgments, iter([weights]))
    for b in range(3):
        exact = scoring.fit_counting(judgments, weights=weights[:, b])
        shown = exact.appearances > 0
        np.testing.assert_allclose(samples[shown, b], exact.scores[shown])
        assert np.isnan(samples[~shown, b]).all()


@pytest.mark.parametrize("method", scoring.METHODS)
def test_intervals_equal_percentiles_of_judgment_weighted_resamples(method):
    # bootstrap_intervals sums judgments per tuple first; the result must not change.
    judgments, _ = simulated(50, per_tuple=3, seed=10)
    fitted = scoring.fit(method, judgments)
    result = bootstrap.bootstrap_intervals(
        judgments, method, scores=fitted, resamples=60, seed=4, solver_tolerance=1e-10
    )
    weights = bootstrap.resample_weights(judgments, 60, seed=4)
    if method == "counting":
        samples = bootstrap._counting_samples(judgments, weights)
    else:
        model = model_for(method, judgments)
        samples = bootstrap._newton_samples(model, fitted.scores, 0.01, weights, 1e-10)
    low, high = np.nanpercentile(samples, [2.5, 97.5], axis=1)
    np.testing.assert_allclose(result.low, low, atol=1e-5)
    np.testing.assert_allclose(result.high, high, atol=1e-5)


def test_batched_conjugate_gradient_solves_every_column():
    rng = np.random.default_rng(0)
    base = sparse.random(200, 200, density=0.03, random_state=1)
    matrix = (base @ base.T + sparse.identity(200) * 0.1).tocsr()
    rhs = rng.normal(size=(200, 7))
    solution = bootstrap.batched_conjugate_gradient(matrix, rhs, tolerance=1e-10)
    np.testing.assert_allclose(solution, spsolve(matrix.tocsc(), rhs), atol=1e-6)


def _newton_error(method, per_tuple):
    """Mean |one-step - exact refit| over mean |exact refit - full fit|, on 40 resamples."""
    judgments, _ = simulated(30, per_tuple=per_tuple, seed=8)
    fitted = scoring.fit(method, judgments, tolerance=1e-10)
    weights = next(bootstrap.resample_weights(judgments, 40, unit="judgment", seed=3))
    model = model_for(method, judgments)
    approximate = bootstrap._newton_samples(model, fitted.scores, 0.01, iter([weights]), 1e-10)
    exact = np.column_stack(
        [
            scoring.fit(method, judgments, weights=weights[:, b], tolerance=1e-10).scores
            for b in range(40)
        ]
    )
    return np.abs(approximate - exact).mean() / np.abs(exact - fitted.scores[:, None]).mean()


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_one_step_newton_resamples_approach_exact_refits_as_data_grow(method):
    # First-order right: the error shrinks against the resampling spread as data grow.
    few, many = _newton_error(method, 3), _newton_error(method, 30)
    assert many < 0.12
    assert many < 0.4 * few


def test_plackett_luce_intervals_cover_known_utilities():
    """On MaxDiff data with known utilities, 95% intervals cover 85% to 99% of the items."""
    judgments, truth = simulated(400, per_tuple=2, appearances=8, seed=0)
    fitted = scoring.fit_plackett_luce(judgments)
    intervals = bootstrap.bootstrap_intervals(
        judgments, "plackett_luce", scores=fitted, resamples=1000, seed=0
    )
    coverage = np.mean((intervals.low <= truth) & (truth <= intervals.high))
    assert 0.85 <= coverage <= 0.99, coverage


def test_bad_arguments_are_refused():
    judgments, _ = simulated(20, seed=9)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap.bootstrap_intervals(judgments, "counting", resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap.bootstrap_intervals(judgments, "counting", level=1.5)


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_default_solver_tolerance_moves_intervals_far_less_than_monte_carlo_error(method):
    # The default CG tolerance (1e-4) is chosen for speed; its intervals must stay within
    # 1% of the interval width of a tight solve, well under a percentile's sampling error.
    judgments, _ = simulated(300, per_tuple=2, seed=21)
    fitted = scoring.fit(method, judgments)
    loose = bootstrap.bootstrap_intervals(judgments, method, scores=fitted, resamples=200, seed=5)
    tight = bootstrap.bootstrap_intervals(
        judgments, method, scores=fitted, resamples=200, seed=5, solver_tolerance=1e-10
    )
    width = np.mean(tight.high - tight.low)
    assert np.max(np.abs(loose.low - tight.low)) < 0.01 * width
    assert np.max(np.abs(loose.high - tight.high)) < 0.01 * width
