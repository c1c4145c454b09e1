"""Convergence judged from the gradient at the solution, ranks tied at the fit's precision,
Spearman-Brown only where defined."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bws.core import scoring
from bws.core.choice_models import model_for, sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.judgments import Judgments
from bws.core.newton import CONVERGENCE_FACTOR, _HessianProduct, penalised_objective
from bws.core.reliability import spearman_brown, spearman_brown_reason, split_half
from bws.core.scores import Scores
from bws.filemode import ScoreReport, format_stats, score_table


def simulated(n_items, per_tuple, appearances, size, seed):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    truth -= truth.mean()
    tuples = balanced_tuples(n_items, size, appearances, seed=seed)
    items = np.repeat(tuples, per_tuple, axis=0)
    best, worst = sample_maxdiff(items, truth, rng)
    m = items.shape[0]
    return Judgments(
        items=items,
        best=best,
        worst=worst,
        tuple_ids=np.repeat(np.arange(tuples.shape[0]), per_tuple),
        annotators=rng.integers(0, 5, size=m),
        order=rng.permutation(m),
        n_items=n_items,
    )


def optimum(method, judgments, start, alpha=scoring.DEFAULT_ALPHA):
    """The penalised optimum to rounding: scipy's Newton-CG restarted at ``start`` with
    xtol 1e-14."""
    model = model_for(method, judgments)
    product = _HessianProduct(model, alpha, None)
    result = minimize(
        penalised_objective,
        start,
        args=(model, alpha, None),
        jac=True,
        hessp=product,
        method="Newton-CG",
        options={"xtol": 1e-14, "maxiter": 200},
    )
    return result.x - result.x.mean()


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_a_fit_at_the_optimum_is_converged_whatever_scipy_says(method):
    # scipy's Newton-CG ends this fit with "precision loss" (success False) although the
    # utilities are at the optimum: the fit used to say it did not converge.
    judgments = simulated(33, per_tuple=2, appearances=2, size=3, seed=84)
    fitted = scoring.fit(method, judgments)
    assert fitted.converged
    assert fitted.step <= CONVERGENCE_FACTOR * scoring.DEFAULT_TOLERANCE
    error = np.abs(fitted.scores - optimum(method, judgments, fitted.scores)).max()
    assert error <= 1e-6


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_an_unfinished_fit_is_not_converged(method):
    judgments = simulated(60, per_tuple=1, appearances=6, size=4, seed=3)
    fitted = scoring.fit(method, judgments, max_iter=1)
    assert not fitted.converged
    truth = optimum(method, judgments, np.zeros(60))
    assert np.abs(fitted.scores - truth).max() > 1e-2
    assert fitted.step > 1e-2


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
@pytest.mark.parametrize("alpha", [scoring.DEFAULT_ALPHA, 0.5])
def test_every_item_of_a_large_fit_is_within_the_tolerance(method, alpha):
    # scipy's xtol bounded the mean change: one of 2,000 items used to stop 4e-5 away.
    judgments = simulated(2000, per_tuple=2, appearances=10, size=4, seed=0)
    fitted = scoring.fit(method, judgments, alpha=alpha)
    assert fitted.converged
    assert fitted.step <= scoring.DEFAULT_TOLERANCE
    error = np.abs(fitted.scores - optimum(method, judgments, fitted.scores, alpha)).max()
    assert error <= CONVERGENCE_FACTOR * scoring.DEFAULT_TOLERANCE


def mirrored(seed=30, n_items=13):
    """Judgments symmetric in items 0 and 1 (each judgment also with the two swapped),
    rows and positions shuffled: the two items' optimal utilities are equal."""
    rng = np.random.default_rng(seed)
    base = simulated(n_items, per_tuple=1, appearances=int(rng.integers(2, 8)), size=4, seed=seed)
    items = base.items
    swapped = np.where(items == 0, 1, np.where(items == 1, 0, items))
    rows = np.arange(len(items))
    every = np.vstack([items, swapped])
    best = np.concatenate([items[rows, base.best], swapped[rows, base.best]])
    worst = np.concatenate([items[rows, base.worst], swapped[rows, base.worst]])
    order = rng.permutation(len(every))
    every, best, worst = every[order], best[order], worst[order]
    every = np.array([rng.permutation(row) for row in every])
    return Judgments.from_indices(
        items=every.tolist(), best_items=best.tolist(), worst_items=worst.tolist(), n_items=n_items
    )


def ranks_of(method, judgments, **options):
    fitted = scoring.fit(method, judgments, **options)
    report = ScoreReport(method, fitted, None, judgments)
    ids = [f"i{k}" for k in range(judgments.n_items)]
    rows = score_table(ids, ids, report)
    return fitted, {row.item_id: row.rank for row in rows}


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
def test_items_with_equal_optima_share_a_rank(method):
    judgments = mirrored()
    start = np.linspace(-1.0, 1.0, judgments.n_items)  # not symmetric in items 0 and 1
    fitted, ranks = ranks_of(method, judgments, initial=start)
    assert 1e-12 < abs(fitted.scores[0] - fitted.scores[1]) < 1e-5  # noise of the fit
    assert ranks["i0"] == ranks["i1"]
    # Distinct scores keep distinct ranks, counted as in sports (1, 1, 3, ...).
    order = np.argsort(-fitted.scores, kind="stable")
    expected = np.empty(judgments.n_items, dtype=int)
    for place, item in enumerate(order):
        previous = order[place - 1] if place else None
        tied = previous is not None and {int(item), int(previous)} == {0, 1}
        expected[item] = expected[previous] if tied else place + 1
    assert [ranks[f"i{k}"] for k in range(judgments.n_items)] == expected.tolist()


def test_mirrored_items_tie_with_the_default_start():
    _, ranks = ranks_of("bradley_terry", mirrored())
    assert ranks["i0"] == ranks["i1"]


def test_the_tie_tolerance_is_relative_to_the_score_scale():
    judgments = mirrored()
    fitted = scoring.fit("bradley_terry", judgments)
    assert scoring.tie_tolerance(fitted) == pytest.approx(
        CONVERGENCE_FACTOR * scoring.DEFAULT_TOLERANCE * max(1.0, np.abs(fitted.scores).max())
    )
    counting = scoring.fit("counting", judgments)
    assert scoring.tie_tolerance(counting) == scoring.COUNTING_TIE_TOLERANCE
    # Counting scores 1/3 and 0.3333333 are different ratios and keep different ranks.
    close = Scores(
        "counting",
        np.array([1 / 3, 0.3333333, 1 / 3 + 1e-16]),
        np.zeros(3),
        np.zeros(3),
        np.ones(3),
    )
    assert scoring.score_ranks(close).tolist() == [1, 3, 1]


@pytest.mark.parametrize("r", [-0.9, -0.01, -1.0, float("nan")])
def test_spearman_brown_is_undefined_for_negative_or_missing_correlations(r):
    # spearman_brown(-0.9) was -18.
    assert spearman_brown(r) is None
    assert spearman_brown_reason(r).startswith("undefined")


def test_spearman_brown_is_defined_from_zero_to_one():
    assert spearman_brown(0.0) == 0.0
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert spearman_brown(1.0) == 1.0
    assert spearman_brown_reason(0.5) is None


def noise_judgments():
    """Random best and worst: split halves correlate around zero; this seed below it."""
    rng = np.random.default_rng(1)
    n, m = 40, 400
    tuples = np.array([rng.choice(n, 4, replace=False) for _ in range(m // 4)])
    items = np.repeat(tuples, 4, axis=0)
    best = rng.integers(0, 4, size=m)
    worst = (best + rng.integers(1, 4, size=m)) % 4
    tuple_ids = np.repeat(np.arange(len(tuples)), 4)
    return Judgments(items, best, worst, tuple_ids, np.zeros(m), np.arange(m), n)


def test_a_negative_split_half_has_no_spearman_brown_and_the_stats_say_so():
    judgments = noise_judgments()
    reliability = split_half(judgments, trials=50)
    assert reliability.mean < 0
    assert reliability.spearman_brown is None
    assert "negatively" in reliability.spearman_brown_reason
    report = ScoreReport("counting", scoring.fit("counting", judgments), None, judgments)
    ids = [f"i{k}" for k in range(judgments.n_items)]
    text = format_stats(
        "quality",
        n_items=judgments.n_items,
        planned_tuples=judgments.n_tuples,
        report=report,
        reliability=reliability,
        item_ids=ids,
    )
    assert "Spearman-Brown undefined" in text
