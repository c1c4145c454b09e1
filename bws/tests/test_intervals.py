"""Calibrated intervals and empirical-Bayes shrinkage: a small seeded coverage simulation
(the full table is benchmarks/coverage.py), intervals never of zero width, the prior
estimated from the data, and the large-study approximation against the exact values."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from bws.core import intervals as calibration
from bws.core import scoring
from bws.core.choice_models import model_for
from bws.core.intervals import (
    calibrated,
    counting_intervals,
    dependence,
    estimate_shrinkage,
    model_intervals,
    posterior_variance,
)
from bws.core.judgments import Judgments

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from coverage import simulate, target  # noqa: E402


@pytest.mark.parametrize("method", scoring.METHODS)
def test_95_percent_intervals_cover_about_95_percent(method):
    """Ten seeded studies of 250 items at 8 appearances, one judgment per tuple: 2,500
    intervals, of which 93-97% hold the value they estimate give or take the simulation's
    error (the bounds leave about two standard errors)."""
    inside = []
    for rep in range(10):
        judgments, truth, tuples, _ = simulate(250, 8, 1, 0.0, 101 + rep)
        goal = target(method, truth, tuples)
        _, found = calibrated(judgments, method)
        inside.append((found.low <= goal) & (goal <= found.high))
    coverage = float(np.mean(inside))
    assert 0.91 <= coverage <= 0.985, coverage


def test_the_old_percentile_bootstrap_covers_too_rarely_at_four_appearances():
    """What the calibration fixes: at 4 appearances per item the cluster bootstrap's
    percentile intervals hold the true utility far less often than 95%."""
    from bws.core.bootstrap import bootstrap_intervals

    inside = []
    for rep in range(3):
        judgments, truth, tuples, _ = simulate(150, 4, 1, 0.0, 201 + rep)
        plain = scoring.fit("plackett_luce", judgments)
        boot = bootstrap_intervals(judgments, "plackett_luce", scores=plain, resamples=200)
        inside.append((boot.low <= truth) & (truth <= boot.high))
        _, found = calibrated(judgments, "plackett_luce")
        assert np.mean((found.low <= truth) & (truth <= found.high)) > np.mean(inside[-1])
    assert np.mean(inside) < 0.9


def test_shrinkage_estimates_the_spread_and_beats_the_fixed_penalty():
    """The prior variance is estimated from the data (truth: sd 1), and the shrunk fit is
    closer to the truth than the nearly unpenalised one, ranking no worse."""
    errors = {"shrunk": [], "fixed": []}
    for rep in range(3):
        judgments, truth, _, _ = simulate(200, 8, 1, 0.0, 301 + rep)
        shrinkage, shrunk, _ = estimate_shrinkage(judgments, "plackett_luce")
        assert 0.6 < shrinkage.prior_variance < 1.6
        assert shrinkage.alpha == pytest.approx(1 / (2 * shrinkage.prior_variance))
        fixed = scoring.fit("plackett_luce", judgments, alpha=0.01)
        errors["shrunk"].append(np.sqrt(np.mean((shrunk.scores - truth) ** 2)))
        errors["fixed"].append(np.sqrt(np.mean((fixed.scores - truth) ** 2)))
        # Shrinkage toward one prior mean hardly reorders items: ranking no worse.
        rho_shrunk = spearmanr(shrunk.scores, truth)[0]
        assert rho_shrunk >= spearmanr(fixed.scores, truth)[0] - 0.01
    assert np.mean(errors["shrunk"]) < 0.9 * np.mean(errors["fixed"])


def test_the_fixed_point_alone_is_the_prior_a_threshold_design_asks_for():
    """The default prior variance is the mean of the Laplace fixed point and the moments;
    ``fixed_point`` takes the fixed point alone, and its fit is shrunk to match."""
    judgments, _, _, _ = simulate(200, 4, 1, 0.0, 311)
    mean, spread, _ = estimate_shrinkage(judgments, "plackett_luce")
    alone, shrunk, _ = estimate_shrinkage(judgments, "plackett_luce", fixed_point=True)
    assert mean.prior_variance == pytest.approx((mean.marginal + mean.moments) / 2)
    assert alone.prior_variance == pytest.approx(alone.marginal)
    assert alone.marginal == pytest.approx(mean.marginal)
    assert alone.prior_variance < mean.prior_variance  # the fixed point reads low here
    assert np.var(shrunk.scores) < np.var(spread.scores)


def test_bradley_terry_counts_its_dependent_pairs_once_per_judgment():
    judgments, _, _, _ = simulate(150, 8, 1, 0.0, 7)
    assert dependence(judgments, "plackett_luce") == 1.0
    # Five pairs per judgment of four, counted as independent, overstate the information.
    assert 1.15 < dependence(judgments, "bradley_terry") < 2.5


def test_the_large_study_approximation_is_within_three_percent(monkeypatch):
    judgments, _, _, _ = simulate(400, 8, 1, 0.0, 11)
    for method in ("plackett_luce", "bradley_terry"):
        model = model_for(method, judgments)
        u = scoring.fit(method, judgments, alpha=0.5).scores
        exact = posterior_variance(model, u, 0.5)
        monkeypatch.setattr(calibration, "EXACT_DIAGONAL_ITEMS", 0)
        approximate = posterior_variance(model, u, 0.5)
        monkeypatch.undo()
        assert np.all(np.abs(approximate / exact - 1) < 0.03)


def test_the_large_study_approximation_is_the_second_order_expansion(monkeypatch):
    # diag(D^-1 + D^-1 A D^-1 A D^-1) for H = D - A, from the dense Hessian; each tuple is
    # judged twice, so a pair's entries from two judgments are summed before squaring.
    from bws.tests.test_defects_scoring import simulated as repeated

    judgments = repeated(60, per_tuple=2, appearances=5, size=4, seed=4)
    monkeypatch.setattr(calibration, "EXACT_DIAGONAL_ITEMS", 0)
    for method in ("plackett_luce", "bradley_terry"):
        model = model_for(method, judgments)
        u = np.random.default_rng(5).normal(size=60)
        hessian = model.hessian(u).toarray() + 0.6 * np.eye(60)
        inverse = np.diag(1.0 / np.diag(hessian))
        off = hessian - np.diag(np.diag(hessian))
        expected = np.diag(inverse + inverse @ off @ inverse @ off @ inverse)
        np.testing.assert_allclose(posterior_variance(model, u, 0.3), expected, rtol=1e-12)


def _agreeing_judgments() -> Judgments:
    """Eight items in eight tuples of four, each tuple judged the same way: item 0 best
    whenever shown, and every other item's tuples agree among themselves."""
    rng = np.random.default_rng(3)
    items = np.array(
        [np.concatenate([[0], rng.choice(np.arange(1, 8), 3, replace=False)]) for _ in range(8)]
    )
    best = np.zeros(8, dtype=np.int64)
    worst = np.full(8, 3, dtype=np.int64)
    m = items.shape[0]
    return Judgments(items, best, worst, np.arange(m), np.zeros(m, np.int64), np.arange(m), 8)


def test_no_interval_has_zero_width():
    judgments = _agreeing_judgments()
    counted = counting_intervals(judgments)
    shown = np.isfinite(counted.low)
    assert np.all(counted.high[shown] - counted.low[shown] > 0.05)
    assert counted.low[0] < 1.0 and counted.high[0] == 1.0  # always best: +1, yet not certain
    for method in ("bradley_terry", "plackett_luce"):
        _, found = model_intervals(judgments, method)
        assert np.all(found.high - found.low > 0.05)


def test_counting_intervals_keep_their_width_when_most_items_were_seen_once():
    """After a balanced start of one appearance and a batch on a few items, the items seen
    twice mostly had the same contribution both times (their measured variance 0): the
    pooled variance must not be 0, or every item seen once would get an interval of zero
    width that holds nothing."""
    n = 40
    once = np.arange(n).reshape(-1, 4)  # every item once
    items = np.vstack([once, once[:3]])  # 12 items seen again, in the same order
    m = items.shape[0]
    best = np.zeros(m, dtype=np.int64)  # the first best and the last worst both times
    worst = np.full(m, 3, dtype=np.int64)
    judgments = Judgments(items, best, worst, np.arange(m), np.zeros(m, np.int64), np.arange(m), n)
    found = counting_intervals(judgments)
    values = scoring.fit("counting", judgments).scores
    measured = calibration._contribution_variance(judgments, values)[0]
    assert np.nanmedian(measured) == 0  # the case: the median of the measured is 0
    width = found.high - found.low
    assert np.all(width > 0.5), width  # one appearance says little: wide, never a point


def test_counting_intervals_stay_on_the_counting_scale():
    judgments, _, _, _ = simulate(60, 4, 1, 0.0, 5)
    found = counting_intervals(judgments)
    assert np.all(found.low >= -1.0) and np.all(found.high <= 1.0)
    with pytest.raises(ValueError, match="level"):
        counting_intervals(judgments, level=1.5)


def test_annotators_who_differ_are_measured_and_their_flattening_undone():
    """Twenty annotators whose own utilities are the true ones plus noise of sd 0.5: the
    spread is found from their repeated judgments of the same items, the pooled fit is
    scaled back up (the pooled choices follow utilities about 8% flatter), and the
    intervals hold the true utilities about 95% of the time (0.88 without this)."""
    from bws.core.intervals import annotator_spread

    inside, variances, scales = [], [], []
    for rep in range(5):
        judgments, truth, _, _ = simulate(250, 16, 3, 0.5, 301 + rep)
        scores, found = calibrated(judgments, "plackett_luce")
        inside.append((found.low <= truth) & (truth <= found.high))
        variances.append(found.annotator_variance)
        scales.append(found.scale)
        plain = estimate_shrinkage(judgments, "plackett_luce")[1]
        # scaled up, then stretched about the mean as 48 judgments per item are
        # (bws/core/spread_bias.py)
        scaled = plain.scores * found.scale
        centre = scaled.mean()
        expected = centre + found.stretch * (scaled - centre)
        np.testing.assert_allclose(scores.scores, expected, atol=1e-4)
        spread = annotator_spread(judgments, plain.scores, found.alpha)
        assert spread.repeated > 1000 and np.all(spread.extra >= 0)
    assert 0.12 < np.mean(variances) < 0.4  # 0.25 simulated
    assert 1.03 < np.mean(scales) < 1.15  # sqrt(1 + 0.25 / (pi^2 / 6)) = 1.07
    assert 0.925 <= np.mean(inside) <= 0.975, np.mean(inside)


def test_annotators_who_agree_or_a_single_annotator_leave_the_fit_alone():
    variances = []
    for rep in range(4):
        judgments, _, _, _ = simulate(250, 16, 3, 0.0, 401 + rep)
        variances.append(calibrated(judgments, "plackett_luce")[1].annotator_variance)
    assert np.mean(variances) < 0.05
    judgments, _, _, _ = simulate(200, 8, 1, 0.0, 5)
    alone = Judgments(
        judgments.items,
        judgments.best,
        judgments.worst,
        judgments.tuple_ids,
        np.zeros(judgments.n_judgments, dtype=np.int64),
        judgments.order,
        judgments.n_items,
    )
    scores, found = calibrated(alone, "plackett_luce")
    assert found.annotator_variance == 0.0 and found.scale == 1.0
    plain = estimate_shrinkage(alone, "plackett_luce")[1]
    np.testing.assert_array_equal(scores.scores, plain.scores)


def test_bradley_terry_dependence_is_not_understated_by_few_judgments():
    """At 4 appearances per item the residuals understate how dependent Bradley-Terry's
    pairs are; the dependence the MaxDiff model expects takes over and the intervals
    cover (0.923 with the measured ratio alone)."""
    from bws.core.intervals import _expected_information_ratio, _information_ratio

    inside = []
    for rep in range(6):
        judgments, truth, tuples, _ = simulate(250, 4, 1, 0.0, 501 + rep)
        pairwise = scoring.fit("bradley_terry", judgments, alpha=0.01).scores
        sequential = scoring.fit("plackett_luce", judgments, alpha=0.01).scores
        measured = _information_ratio(judgments, "bradley_terry", pairwise) / _information_ratio(
            judgments, "plackett_luce", sequential
        )
        expected = _expected_information_ratio(judgments, pairwise, sequential)
        assert expected > measured + 0.1
        assert dependence(judgments, "bradley_terry") == pytest.approx(expected)
        goal = target("bradley_terry", truth, tuples)
        _, found = calibrated(judgments, "bradley_terry")
        inside.append((found.low <= goal) & (goal <= found.high))
    assert np.mean(inside) >= 0.935, np.mean(inside)


def test_bradley_terry_prior_leaves_out_the_variance_of_the_unidentified_mean(monkeypatch):
    """The method-of-moments prior variance, var(u) - mean(v) from the weak fit, takes
    var(u) about the items' mean, which only the weak penalty pins down; the posterior
    variance of that mean (temper / (2 WEAK_ALPHA n) in every v_i) must not be subtracted.
    With it subtracted the estimate depended on the weak penalty and came out about a
    third too small (0.81 against 0.98), shrinking the tails too hard."""
    for seed in (601, 602):
        judgments, truth, tuples, _ = simulate(250, 16, 3, 0.0, seed)
        spread = float(np.var(target("bradley_terry", truth, tuples)))
        temper = dependence(judgments, "bradley_terry")
        moments = []
        for weak_alpha in (0.01, 0.002):
            monkeypatch.setattr(calibration, "WEAK_ALPHA", weak_alpha)
            shrinkage = estimate_shrinkage(judgments, "bradley_terry", temper=temper)[0]
            moments.append(shrinkage.moments)
        monkeypatch.undo()
        assert moments[1] == pytest.approx(moments[0], rel=0.02), moments
        assert 0.9 < moments[0] / spread < 1.3, (moments[0], spread)


@pytest.mark.parametrize("method", ["plackett_luce", "bradley_terry"])
def test_a_prior_given_instead_of_estimated_changes_only_the_prior(method):
    judgments, _, _, _ = simulate(120, 6, 1, 0.0, 7)
    scores, estimated = model_intervals(judgments, method)
    same_scores, same = model_intervals(judgments, method, prior_variance=estimated.prior_variance)
    assert np.allclose(same_scores.scores, scores.scores, atol=1e-5)
    assert np.allclose(same.low, estimated.low, atol=1e-5)
    assert np.allclose(same.high, estimated.high, atol=1e-5)
    _, narrow = model_intervals(judgments, method, prior_variance=0.1)
    _, wide = model_intervals(judgments, method, prior_variance=10.0)
    assert narrow.prior_variance == 0.1 and wide.prior_variance == 10.0
    width = {k: np.mean(i.high - i.low) for k, i in (("narrow", narrow), ("wide", wide))}
    assert width["narrow"] < np.mean(estimated.high - estimated.low) < width["wide"]
