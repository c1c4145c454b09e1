"""The model split-half reads adaptive designs closer to the truth than the counting
split-half for normal utilities; the truth lies between the two (benchmarks/RESULTS.md,
"Adaptive designs": for heavy-tailed utilities the model one reads 0.14-0.19 high, further
off than the counting one)."""

import functools

import numpy as np
import pytest
from scipy.stats import spearmanr

from bws.core.adaptive import DesignState, adaptive_batch
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.intervals import calibrated
from bws.core.judgments import Judgments
from bws.core.model_reliability import model_split_half
from bws.core.reliability import split_half

N = 500


def _judgments(tuples, best, worst, n):
    m = tuples.shape[0]
    annotators = np.random.default_rng(m).integers(0, 20, size=m)
    return Judgments(tuples, best, worst, np.arange(m), annotators, np.arange(m), n)


def adaptive_snapshots(seed: int, *, n: int = N, batches: int = 6, batch_tuples: int = N // 4):
    """A simulated adaptive study (normal utilities, MaxDiff answers): 2 balanced
    appearances per item, then ``batches`` batches of ``batch_tuples`` tuples, each designed
    from the current Plackett-Luce fit. The true utilities, and per checkpoint (before the
    first batch and after each) the judgments with their calibrated fit."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    tuples = balanced_tuples(n, 4, 2, seed=seed)
    best, worst = sample_maxdiff(tuples, truth, rng)
    state = DesignState.from_tuples(tuples, n)
    snapshots = []
    for step in range(batches + 1):
        judgments = _judgments(tuples, best, worst, n)
        scores, intervals = calibrated(judgments, "plackett_luce", adaptive=True)
        snapshots.append((judgments, scores, intervals))
        if step == batches:
            return truth, snapshots
        batch = adaptive_batch(
            scores.scores, intervals.std, state, batch_tuples=batch_tuples, max_appearances=16,
            seed=step,
        )  # fmt: skip
        more_best, more_worst = sample_maxdiff(batch, truth, rng)
        tuples = np.vstack([tuples, batch])
        best = np.concatenate([best, more_best])
        worst = np.concatenate([worst, more_worst])
        state = state.extended(batch)


@functools.cache
def _adaptive_study(seed: int):
    """Per checkpoint of ``adaptive_snapshots`` (appearances per item): the squared
    Spearman of the fit with the truth, the counting split-half and the model split-half
    (both Spearman-Brown)."""
    truth, snapshots = adaptive_snapshots(seed)
    return np.array(
        [
            (
                judgments.n_judgments * 4 / N,
                spearmanr(scores.scores, truth)[0] ** 2,
                split_half(judgments, trials=20, seed=1).spearman_brown,
                model_split_half(judgments, seed=1).spearman_brown,
            )
            for judgments, scores, _ in snapshots
        ]
    )


def test_the_model_split_half_tracks_the_truth_better_under_an_adaptive_design():
    rows = np.vstack([_adaptive_study(0), _adaptive_study(1)])
    spent, truth, counting, model = rows.T
    assert spent.max() >= 7.5
    model_error = np.abs(model - truth)
    counting_error = np.abs(counting - truth)
    # closer to the truth on average, and most of all once the design has adapted
    assert model_error.mean() < counting_error.mean(), (model_error, counting_error)
    late = spent >= 5
    assert model_error[late].mean() < 0.5 * counting_error[late].mean()
    assert model_error.max() < 0.15
    # from 4 appearances on, the truth lies between the counting and the model figures
    settled = spent >= 4
    assert (counting[settled] < truth[settled]).all() and (truth[settled] < model[settled]).all()
    # and it rises as the truth does, checkpoint after checkpoint
    for study in (_adaptive_study(0), _adaptive_study(1)):
        assert spearmanr(study[:, 3], study[:, 1])[0] > 0.9


def test_the_model_split_half_is_seeded_and_refuses_counting():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=60)
    tuples = balanced_tuples(60, 4, 6, seed=3)
    best, worst = sample_maxdiff(tuples, truth, rng)
    judgments = _judgments(tuples, best, worst, 60)
    one = model_split_half(judgments, trials=3, seed=4)
    again = model_split_half(judgments, trials=3, seed=4)
    np.testing.assert_array_equal(one.correlations, again.correlations)
    assert one.trials == 3 and 0 < one.mean < 1
    assert one.spearman_brown == pytest.approx(2 * one.mean / (1 + one.mean))
    with pytest.raises(ValueError):
        model_split_half(judgments, method="counting")
