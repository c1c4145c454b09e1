"""With about 4 judgments per item the prior variance is corrected for its bias by
simulation (bws/core/prior_bias.py): the scores are as spread as the truth (calibration
slope of the truth on the estimates near 1, where it was 0.75-0.80), the intervals still
cover, and studies with more judgments per item are left as they were."""

import numpy as np
import pytest

from benchmarks.coverage import simulate, target
from bws.core import intervals, prior_bias
from bws.core.intervals import calibrated


def study(rep, appearances=4, utilities="normal", n_items=250):
    return simulate(n_items, appearances, 1, 0.0, 7919 * rep + 1, utilities)


def figures(method, reps, **kwargs):
    """Mean calibration slope, coverage and prior variance over ``reps`` studies."""
    slopes, cover, prior = [], [], []
    for rep in range(reps):
        judgments, truth, tuples, own = study(rep, **kwargs)
        goal = target(method, truth, tuples, own)
        scores, found = calibrated(judgments, method)
        slopes.append(np.polyfit(scores.scores, goal, 1)[0])
        cover.append(np.mean((found.low <= goal) & (goal <= found.high)))
        prior.append(found.prior_variance)
    return float(np.mean(slopes)), float(np.mean(cover)), float(np.mean(prior))


@pytest.mark.parametrize(
    "method, utilities",
    [("plackett_luce", "normal"), ("bradley_terry", "normal"), ("plackett_luce", "t3")],
)
def test_four_judgments_per_item_are_calibrated(method, utilities, monkeypatch):
    slope, cover, prior = figures(method, 12, utilities=utilities)
    # 30 studies per cell in benchmarks/coverage.py --deciles: 0.966-0.988, covering
    # 0.935-0.951; with 12 studies the slope's standard error is about 0.05
    assert 0.88 <= slope <= 1.12, slope
    assert 0.925 <= cover <= 0.975, cover
    assert 0.7 <= prior <= 1.45, prior  # the truth's variance is 1
    with monkeypatch.context() as patch:
        patch.setattr(prior_bias, "CORRECT_BELOW_JUDGMENTS", 0.0)
        before, _, inflated = figures(method, 12, utilities=utilities)
    assert before < 0.86 and inflated > 1.3 * prior, (before, inflated, prior)


def test_the_same_judgments_give_the_same_scores():
    judgments, *_ = study(3)
    first, a = calibrated(judgments, "plackett_luce")
    second, b = calibrated(judgments, "plackett_luce")
    assert np.array_equal(first.scores, second.scores) and np.array_equal(a.low, b.low)


def test_more_judgments_per_item_are_left_as_they_were(monkeypatch):
    calls = []
    real = prior_bias.corrected_prior

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(prior_bias, "corrected_prior", counted)
    judgments, *_ = study(1, appearances=8)
    assert prior_bias.judgments_per_item(judgments) == 8
    calibrated(judgments, "bradley_terry")
    assert calls == []
    judgments, *_ = study(1, appearances=4)
    calibrated(judgments, "bradley_terry")
    assert calls == [1]
    # small studies integrate the variance out instead (bws/core/hyperprior.py)
    judgments, *_ = study(1, appearances=4, n_items=20)
    calibrated(judgments, "bradley_terry")
    assert calls == [1]


def test_the_correction_counts_simulations_by_the_studys_size():
    judgments, *_ = study(2)
    seen = []

    def estimate(simulated):
        assert np.array_equal(simulated.items, judgments.items)  # the study's own tuples
        seen.append(simulated)
        return 2.0

    found = prior_bias.corrected_prior(judgments, 1.5, estimate)
    assert found.simulations == len(seen) == 4  # 250 items: four studies
    assert found.prior_variance == pytest.approx(1.5 * 1.5 / 2.0)
    assert intervals.MIN_PRIOR_VARIANCE < found.prior_variance


def test_simulations_that_estimate_only_the_floor_leave_the_estimate_as_it_was():
    judgments, *_ = study(2)
    floor = intervals.MIN_PRIOR_VARIANCE
    found = prior_bias.corrected_prior(judgments, 0.44, lambda simulated: floor, floor=floor)
    assert found.prior_variance == 0.44 and found.simulated == pytest.approx(floor)
    # just above the floor they still say how far the estimate reads low
    above = prior_bias.corrected_prior(judgments, 0.44, lambda simulated: 0.22, floor=floor)
    assert above.prior_variance == pytest.approx(0.88)


def test_an_adaptive_projects_runs_are_not_corrected(monkeypatch):
    """The platform's runs: corrected for a fixed design, not for an adaptive one (whose
    batches are chosen from the fit)."""
    from bws import services

    calls = []
    real = prior_bias.corrected_prior
    monkeypatch.setattr(
        prior_bias, "corrected_prior", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    judgments, *_ = study(4, n_items=60)
    ids = [f"i{n}" for n in range(60)]
    params = {"bootstrap": 1, "interval_method": "calibrated", "shrinkage": "empirical_bayes"}
    work = (judgments, "plackett_luce", params, ids, ids, judgments.n_judgments, "q")
    services.score_everything(*work, design="adaptive_batch")
    assert calls == []
    services.score_everything(*work)
    assert calls == [1]


def test_with_the_prior_corrected_the_extreme_items_are_covered_too():
    """Corrected, the estimates shrink as the truth asks and the extreme tenths lose their
    cover unless the outer ends move out; they move in every study so corrected (the gate
    of bws/core/tail_intervals.py applies to uncorrected priors only)."""
    extreme, plain_extreme, overall = [], [], []
    for rep in range(10):
        judgments, truth, tuples, own = study(rep)
        goal = target("plackett_luce", truth, tuples, own)
        _, moved = calibrated(judgments, "plackett_luce")
        _, plain = calibrated(judgments, "plackett_luce", tails=False)
        outer = np.abs(np.argsort(np.argsort(truth)) * 10 // truth.size - 4.5) == 4.5
        inside = (moved.low <= goal) & (goal <= moved.high)
        extreme.extend(inside[outer])
        plain_extreme.extend(((plain.low <= goal) & (goal <= plain.high))[outer])
        overall.append(inside.mean())
        assert np.all(moved.high - moved.low >= plain.high - plain.low - 1e-12)
    assert np.mean(plain_extreme) < 0.88  # 0.82-0.86 in 30 studies
    assert np.mean(extreme) >= 0.89, np.mean(extreme)  # 0.92-0.96 in 30 studies
    assert 0.93 <= np.mean(overall) <= 0.975


def _threshold_design(seed, n=1000, batches=32, t3=False, clickers=0):
    """One balanced appearance, then batches aimed at the truth's 80th percentile given as
    a score (about 5 appearances per item in all), each from the platform's fit of such a
    design; judgment j by annotator j % 20, the first ``clickers`` of them clicking at
    random. The judgments and the truth."""
    from bws.core.adaptive import DesignState  # noqa: I001 (only these tests design batches)
    from bws.core.choice_models import sample_maxdiff  # (the same)
    from bws.core.design import balanced_tuples  # (the same)
    from bws.core.judgments import Judgments  # (the same)
    from bws.core.targets import Target, target_batch  # (the same)

    rng = np.random.default_rng(seed)
    truth = rng.standard_t(3, size=n) / np.sqrt(3) if t3 else rng.normal(size=n)
    target = Target("threshold", score=float(np.quantile(truth, 0.8)))
    tuples = balanced_tuples(n, 4, 1, seed=seed)

    def sampled(rows, before):
        careful = (before + np.arange(rows.shape[0])) % 20 >= clickers
        return sample_maxdiff(rows, truth, rng, scale=careful.astype(float))

    best, worst = sampled(tuples, 0)
    state = DesignState.from_tuples(tuples, n)

    def judged():
        m = tuples.shape[0]
        return Judgments(tuples, best, worst, np.arange(m), np.arange(m) % 20, np.arange(m), n)

    for step in range(batches):
        scores, found = calibrated(
            judged(), "plackett_luce", adaptive=True, fixed_point=True, stretch=True
        )
        batch = target_batch(
            scores.scores, found.std, state, target, batch_tuples=n // 32, max_appearances=32,
            seed=step,
        )  # fmt: skip
        more_best, more_worst = sampled(batch, tuples.shape[0])
        tuples = np.vstack([tuples, batch])
        best, worst = np.concatenate([best, more_best]), np.concatenate([worst, more_worst])
        state = state.extended(batch)
    return judged(), truth


def test_after_batches_aimed_at_a_threshold_the_fixed_point_is_corrected_in_the_fits_order():
    """The Laplace fixed point reads about half the truth's variance after such batches.
    Simulations whose utilities keep the order of a posterior draw of the fit (the items
    seen once are the extreme ones, as in the real design) measure that bias; the
    platform's fit of such a design is the estimate corrected by them."""
    alone, corrected = [], []
    for t3 in (False, True):
        for seed in range(2):
            judgments, truth = _threshold_design(seed, t3=t3)
            variance = float(np.var(truth))
            shrinkage, scores, posterior = intervals.estimate_shrinkage(
                judgments, "plackett_luce", fixed_point=True
            )
            found = prior_bias.corrected_prior(
                judgments,
                shrinkage.prior_variance,
                lambda simulated: intervals._pooled_prior(
                    simulated, "plackett_luce", fixed_point=True
                ),
                order=scores.scores,
                spread=np.sqrt(posterior),
            )
            alone.append(np.log(shrinkage.prior_variance / variance))
            corrected.append(np.log(found.prior_variance / variance))
            _, fit = calibrated(
                judgments, "plackett_luce", adaptive=True, fixed_point=True, stretch=True
            )
            # stretched by how few judgments the items have (about 5 here: 1.125)
            stretch = intervals.fixed_point_stretch(prior_bias.judgments_per_item(judgments))
            assert 1.0 < stretch < 1.2
            assert fit.prior_variance == pytest.approx(stretch * found.prior_variance)
    assert max(alone) < np.log(0.75), np.exp(alone)  # every study's reads low
    assert np.mean(np.abs(corrected)) < 0.6 * np.mean(np.abs(alone)), np.exp(corrected)


def test_the_stretch_of_a_threshold_designs_prior_fades_as_judgments_come_in():
    stretch = intervals.fixed_point_stretch
    assert stretch(1.0) == stretch(2.0) == intervals.MAX_STRETCH
    assert stretch(2.0) > stretch(3.0) > stretch(4.0) > stretch(5.0) > 1.0
    assert stretch(intervals.STRETCH_UNTIL) == stretch(8.0) == 1.0


@pytest.mark.parametrize("clickers", [0, 4])
def test_early_in_a_threshold_design_the_corrected_prior_reads_low_and_the_stretch_helps(clickers):
    """About 2.5 judgments per item into a threshold's design, where the batches are still
    being aimed: the fixed point corrected by simulation reads well under the truth's
    variance (0.55-0.7 of it measured), and the stretched prior the platform fits with
    comes closer to it in every study."""
    calls = []
    real = prior_bias.corrected_prior

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    for seed in range(2):
        judgments, truth = _threshold_design(seed, batches=12, clickers=clickers)
        variance = float(np.var(truth))
        per_item = prior_bias.judgments_per_item(judgments)
        assert 2.0 < per_item < 3.0
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(prior_bias, "corrected_prior", spy)
            _, fit = calibrated(
                judgments, "plackett_luce", adaptive=True, fixed_point=True, stretch=True
            )
        corrected = calls[-1].prior_variance
        assert corrected < 0.8 * variance, (corrected, variance)
        assert fit.prior_variance == pytest.approx(
            intervals.fixed_point_stretch(per_item) * corrected
        )
        assert abs(np.log(fit.prior_variance / variance)) < abs(np.log(corrected / variance))


def test_with_random_clickers_a_threshold_designs_prior_is_corrected_as_they_answered():
    """4 of 20 annotators clicking at random: the joint fit finds them (sensitivity near 0)
    and its fixed point reads low too; the simulations that measure the bias let each
    judgment be as sensitive as its annotator was found to be, and Plackett-Luce's 95%
    intervals cover (measured 0.95-0.97 over 10 studies, 0.85-0.90 uncorrected)."""
    calls = []
    real = prior_bias.corrected_prior

    def spy(*args, **kwargs):
        calls.append(kwargs.get("scale"))
        return real(*args, **kwargs)

    judgments, truth = _threshold_design(0, clickers=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prior_bias, "corrected_prior", spy)
        _, found = calibrated(
            judgments, "plackett_luce", adaptive=True, fixed_point=True, stretch=True
        )
    scale = calls[-1]
    assert scale is not None and scale.shape == (judgments.n_judgments,)
    assert (
        np.median(scale[judgments.annotators < 4])
        < 0.2
        < 0.8
        < np.median(scale[judgments.annotators >= 4])
    )
    assert np.mean((found.low <= truth) & (truth <= found.high)) >= 0.93
