"""Rank confidence intervals, top-k sets and pairwise comparisons (bws.core.ranks)."""

import numpy as np
import pytest

from bws.core import ranks
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.intervals import calibrated
from bws.core.judgments import Judgments
from bws.core.rank_covariance import difference_sd, score_covariance
from bws.core.scoring import METHODS


def true_ranks(values):
    order = np.argsort(-values, kind="stable")
    rank = np.empty(values.size, dtype=np.int64)
    rank[order] = np.arange(1, values.size + 1)
    return rank


def study(n_items, appearances, seed, truth=None):
    rng = np.random.default_rng(seed)
    if truth is None:
        truth = rng.normal(size=n_items)
    tuples = balanced_tuples(n_items, 4, appearances, seed=seed)
    best, worst = sample_maxdiff(tuples, truth, rng)
    m = tuples.shape[0]
    zeros = np.zeros(m, dtype=np.int64)
    return Judgments(tuples, best, worst, np.arange(m), zeros, np.arange(m), n_items), truth


def test_items_far_apart_have_exact_ranks():
    found = ranks.rank_intervals(np.array([0.0, 10.0, 20.0]), np.eye(3), draws=200)
    for low, high in ((found.low, found.high), (found.simultaneous_low, found.simultaneous_high)):
        assert low.tolist() == [3, 2, 1]
        assert high.tolist() == [3, 2, 1]


def test_items_alike_may_take_every_rank():
    found = ranks.rank_intervals(np.zeros(5), np.eye(5), draws=200)
    assert found.low.tolist() == [1] * 5 and found.high.tolist() == [5] * 5
    assert found.top_k(2).confident.size == 0
    assert found.top_k(2).possible.size == 5


def test_two_groups_are_told_apart_but_not_within():
    estimates = np.array([0.0, 0.1, 8.0, 8.1])
    found = ranks.rank_intervals(estimates, np.eye(4) * 0.25, draws=500)
    assert found.simultaneous_low.tolist() == [3, 3, 1, 1]
    assert found.simultaneous_high.tolist() == [4, 4, 2, 2]
    top = found.top_k(2)
    assert sorted(top.confident.tolist()) == [2, 3]
    assert sorted(top.possible.tolist()) == [2, 3]


def test_holm_matches_a_hand_computation():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max
    adjusted = ranks.holm(np.array([0.01, 0.04, 0.03, 0.005]))
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert ranks.holm(np.array([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def test_pairwise_answers_with_holm_adjusted_p_values():
    estimates = np.array([0.0, 5.0, 0.1])
    sd = np.full((3, 3), np.sqrt(2.0))
    answers = {(p.first, p.second): p for p in ranks.pairwise(estimates, sd, [0, 1, 2])}
    assert set(answers) == {(0, 1), (0, 2), (1, 2)}
    assert answers[(0, 1)].verdict == "second"
    assert answers[(1, 2)].verdict == "first"
    assert answers[(0, 2)].verdict == "unsure"
    p = np.array([answers[key].p_value for key in ((0, 1), (0, 2), (1, 2))])
    assert p[1] == pytest.approx(2 * 0.5 * (1 - 0.0564), abs=1e-3)  # z = 0.1 / sqrt(2)
    held = np.array([answers[key].p_holm for key in ((0, 1), (0, 2), (1, 2))])
    assert held == pytest.approx(ranks.holm(p))


def normal_means(seed, n=15, noise=0.3):
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(size=n))
    sd = noise * rng.uniform(0.5, 1.5, size=n)
    return theta, theta + rng.normal(size=n) * sd, np.diag(sd**2)


def test_simultaneous_intervals_cover_every_true_rank_in_95_percent_of_studies():
    covered = marginal = confident = possible = 0.0
    widths = []
    studies, n, k = 200, 15, 3
    for seed in range(studies):
        theta, estimates, covariance = normal_means(seed, n, noise=0.1)
        found = ranks.rank_intervals(estimates, covariance, draws=400, seed=seed)
        rank = true_ranks(theta)
        covered += np.all((found.simultaneous_low <= rank) & (rank <= found.simultaneous_high))
        marginal += np.mean((found.low <= rank) & (rank <= found.high))
        top = found.top_k(k)
        confident += np.all(rank[top.confident] <= k)
        possible += np.all(np.isin(np.flatnonzero(rank <= k), top.possible))
        widths.append(np.mean(found.simultaneous_high - found.simultaneous_low + 1))
    assert covered / studies >= 0.93
    assert marginal / studies >= 0.93
    assert confident / studies >= 0.93 and possible / studies >= 0.93
    assert np.mean(widths) < 0.5 * n  # informative: not every interval spans all ranks


def test_marginal_intervals_lie_inside_simultaneous_ones():
    _, estimates, covariance = normal_means(3, 30)
    found = ranks.rank_intervals(estimates, covariance, draws=500)
    assert np.all(found.simultaneous_low <= found.low)
    assert np.all(found.high <= found.simultaneous_high)
    point = true_ranks(estimates)
    assert np.all((found.low <= point) & (point <= found.high))


def test_bonferroni_intervals_contain_the_bootstrap_ones():
    _, estimates, covariance = normal_means(5, 40)
    exact = ranks.rank_intervals(estimates, covariance, draws=2000)
    bound = ranks.bonferroni_rank_intervals(estimates, np.diag(covariance), np.arange(40))
    # marginal families are small, where the two critical values differ by less than
    # the draws' noise: one rank either way
    assert np.all(bound.low <= exact.low + 1) and np.all(bound.high >= exact.high - 1)
    assert np.all(bound.simultaneous_low <= exact.simultaneous_low)
    assert np.all(bound.simultaneous_high >= exact.simultaneous_high)
    # and it is not the trivial answer
    assert np.mean(bound.simultaneous_high - bound.simultaneous_low) < 35


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_model_covariances_are_those_of_centred_utilities(method):
    """The utilities' common shift is not identified and the variances leave it out: so
    do the covariances, each row of the whole covariance summing to about zero (its
    off-diagonals near -var/(n - 1), which large studies leave out, 0.5% of a difference's
    variance at 400 items)."""
    judgments, _ = study(30, 8, 2)
    scores, intervals = calibrated(judgments, method)
    covariance = score_covariance(judgments, scores, intervals, np.arange(30))
    assert np.diag(covariance) == pytest.approx(intervals.std**2)
    rows = np.abs(covariance.sum(axis=1)) / np.diag(covariance)
    assert rows.max() < 0.5  # the stated variances carry terms the Hessian lacks
    off = covariance[~np.eye(30, dtype=bool)]
    assert off.mean() < 0


def test_counting_covariance_matches_repeated_studies():
    """The counting scores of one design judged again and again covary as stated."""
    n, seed = 12, 4
    truth = np.linspace(-1, 1, n)
    judgments, _ = study(n, 8, seed, truth)
    rng = np.random.default_rng(0)
    samples, stated = [], []
    for _ in range(400):
        best, worst = sample_maxdiff(judgments.items, truth, rng)
        again = Judgments(
            judgments.items,
            best,
            worst,
            judgments.tuple_ids,
            judgments.annotators,
            judgments.order,
            n,
        )
        scores, intervals = calibrated(again, "counting")
        samples.append(scores.scores)
        stated.append(score_covariance(again, scores, intervals, np.arange(n)))
    empirical = np.cov(np.array(samples).T)
    mean = np.mean(stated, axis=0)
    off = ~np.eye(n, dtype=bool)
    assert mean[off].min() < 0  # items judged together are negatively correlated
    assert np.abs(mean[off] - empirical[off]).max() < 0.012
    sd_stated = difference_sd(np.diag(mean), np.diag(mean), mean)[off]
    sd_empirical = difference_sd(np.diag(empirical), np.diag(empirical), empirical)[off]
    assert np.median(sd_stated / sd_empirical) == pytest.approx(1.0, abs=0.1)


def test_bws_studies_simultaneous_intervals_cover_the_true_ranks():
    covered = total = 0
    for method in METHODS:
        for seed in range(8):
            judgments, truth = study(40, 8, seed + 11)
            scores, intervals = calibrated(judgments, method)
            found = ranks.score_rank_intervals(judgments, scores, intervals, draws=400)
            rank = true_ranks(truth)
            covered += np.all((found.simultaneous_low <= rank) & (rank <= found.simultaneous_high))
            total += 1
            assert found.procedure == "bootstrap" and found.ranked.all()
    assert covered >= total - 1


def test_a_large_study_ranks_its_top_items_conservatively(monkeypatch):
    judgments, truth = study(60, 8, 9)
    scores, intervals = calibrated(judgments, "counting")
    exact = ranks.score_rank_intervals(judgments, scores, intervals, draws=1000)
    monkeypatch.setattr(ranks, "DENSE_ITEMS", 10)
    monkeypatch.setattr(ranks, "PAIR_BUDGET", 60 * 12)
    large = ranks.score_rank_intervals(judgments, scores, intervals)
    assert large.procedure == "bonferroni"
    top = np.argsort(-scores.scores, kind="stable")[:12]
    assert sorted(np.flatnonzero(large.ranked).tolist()) == sorted(top.tolist())
    rows = large.ranked
    assert np.all(large.low[rows] <= exact.low[rows])
    assert np.all(large.high[rows] >= exact.high[rows])
    assert np.all(large.low[~rows] == 0)
    assert not large.top_k(3).complete
    asked = ranks.score_rank_intervals(judgments, scores, intervals, items=np.array([5, 7]))
    assert np.flatnonzero(asked.ranked).tolist() == [5, 7]


def test_items_never_shown_get_no_interval():
    judgments, _ = study(20, 8, 1)
    judgments = Judgments(
        judgments.items,
        judgments.best,
        judgments.worst,
        judgments.tuple_ids,
        judgments.annotators,
        judgments.order,
        22,
    )
    scores, intervals = calibrated(judgments, "plackett_luce")
    found = ranks.score_rank_intervals(judgments, scores, intervals, draws=200)
    assert found.low[20:].tolist() == [0, 0] and not found.ranked[20:].any()
    assert found.high[:20].max() <= 20 and found.n_ranked_among == 20


def test_levels_outside_zero_and_one_are_refused():
    with pytest.raises(ValueError):
        ranks.rank_intervals(np.zeros(3), np.eye(3), level=1.0)
    with pytest.raises(ValueError):
        ranks.top_k_sets(np.ones(3), np.ones(3), 0, np.ones(3, dtype=bool))


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_small_studies_rank_intervals_hold_the_true_ranks(method):
    """At 8 items the common shift of the utilities weighs most: with the covariance
    centred as the variances are, the intervals hold (they covered 0.79 before)."""
    held = total = 0
    for seed in range(25):
        rng = np.random.default_rng(seed)
        truth = rng.normal(size=8)
        tuples = balanced_tuples(8, 4, 8, seed=seed)
        best, worst = sample_maxdiff(tuples, truth, rng)
        ids = np.arange(len(tuples))
        judgments = Judgments(tuples, best, worst, ids, np.zeros_like(ids), ids, 8)
        scores, intervals = calibrated(judgments, method)
        found = ranks.score_rank_intervals(judgments, scores, intervals, draws=400)
        true_rank = 1 + np.argsort(np.argsort(-truth))
        held += int(np.sum((found.low <= true_rank) & (true_rank <= found.high)))
        total += 8
    assert held / total >= 0.95
