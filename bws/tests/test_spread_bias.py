"""From 12 judgments per item on, the model fits' scores are stretched about their mean by
the calibration slope measured in simulation (bws/core/spread_bias.py): an item scored one
unit above another is about one unit above it in truth, with heavy-tailed utilities too,
and the intervals still cover."""

import numpy as np
import pytest

from benchmarks.coverage import simulate
from bws.core import spread_bias
from bws.core.choice_models import sample_maxdiff
from bws.core.intervals import calibrated
from bws.core.judgments import Judgments
from bws.core.scoring import fit
from bws.tests.test_prior_bias import figures as prior_figures


def study(rep, appearances=24, utilities="t3", n_items=250):
    return simulate(n_items, appearances, 1, 0.0, 7919 * rep + 1, utilities)


def figures(method, reps):
    """Mean calibration slope (truth on estimate) and coverage over ``reps`` studies with
    heavy-tailed utilities at 24 appearances."""
    slope, cover, _ = prior_figures(method, reps, appearances=24, utilities="t3")
    return slope, cover


@pytest.mark.parametrize("method", ["plackett_luce", "bradley_terry"])
def test_heavy_tailed_utilities_at_24_appearances_are_calibrated(method, monkeypatch):
    slope, cover = figures(method, 8)
    # 20 studies a cell in benchmarks/coverage.py --deciles: 1.01 for both; 8 studies
    # carry a standard error of about 0.03
    assert 0.95 <= slope <= 1.06, slope
    assert 0.925 <= cover <= 0.975, cover
    with monkeypatch.context() as patch:
        patch.setattr(spread_bias, "CORRECT_FROM_JUDGMENTS", np.inf)
        before, _ = figures(method, 8)
    assert before > 1.07 and before - slope > 0.05, (before, slope)


def test_normal_utilities_are_left_about_as_they_were():
    judgments, truth, *_ = study(2, utilities="normal")
    scores, found = calibrated(judgments, "plackett_luce")
    assert 0.97 <= found.stretch <= 1.08, found.stretch


def test_the_intervals_move_with_their_scores_and_keep_their_width(monkeypatch):
    judgments, *_ = study(1)
    scores, found = calibrated(judgments, "plackett_luce")
    with monkeypatch.context() as patch:
        patch.setattr(spread_bias, "CORRECT_FROM_JUDGMENTS", np.inf)
        plain, unstretched = calibrated(judgments, "plackett_luce")
    assert unstretched.stretch == 1.0 and found.stretch > 1.02
    centre = plain.scores.mean()
    assert np.allclose(scores.scores - centre, found.stretch * (plain.scores - centre))
    assert np.allclose(found.high - found.low, unstretched.high - unstretched.low)
    assert np.allclose(found.low - unstretched.low, scores.scores - plain.scores)
    # the order of the items is the fit's
    assert np.array_equal(np.argsort(scores.scores), np.argsort(plain.scores))


def test_the_same_judgments_give_the_same_scores():
    judgments, *_ = study(1, appearances=16)
    first, a = calibrated(judgments, "bradley_terry")
    second, b = calibrated(judgments, "bradley_terry")
    assert a.stretch != 1.0
    assert np.array_equal(first.scores, second.scores) and np.array_equal(a.low, b.low)


def test_fewer_judgments_per_item_and_adaptive_designs_are_not_stretched(monkeypatch):
    calls = []
    real = spread_bias.stretch
    monkeypatch.setattr(spread_bias, "stretch", lambda *a, **k: calls.append(1) or real(*a, **k))
    judgments, *_ = study(1, appearances=8)
    assert calibrated(judgments, "plackett_luce")[1].stretch == 1.0
    assert calibrated(judgments, "plackett_luce", adaptive=True)[1].stretch == 1.0
    assert calls == []
    judgments, *_ = study(1, appearances=16)
    assert calibrated(judgments, "plackett_luce", adaptive=True)[1].stretch == 1.0
    assert calls == []
    assert calibrated(judgments, "plackett_luce")[1].stretch != 1.0
    assert calls == [1]


def test_bradley_terrys_design_values_are_what_its_fit_converges_to():
    """The values the simulation compares Bradley-Terry's fit with: fitted on many
    simulated judgments of the same tuples, the fit comes close to them."""
    judgments, truth, *_ = study(0, appearances=8, utilities="normal", n_items=40)
    values = spread_bias.design_values("bradley_terry", truth, judgments)
    rows = np.repeat(judgments.items, 1000, axis=0)
    best, worst = sample_maxdiff(rows, truth, 5)
    n = rows.shape[0]
    many = Judgments(rows, best, worst, np.arange(n), np.zeros(n, int), np.arange(n), 40)
    fitted = fit("bradley_terry", many, alpha=1e-6).scores
    assert np.abs((fitted - fitted.mean()) - values).max() < 0.08
    # Plackett-Luce's values are the utilities themselves
    pl = spread_bias.design_values("plackett_luce", truth, judgments)
    assert np.allclose(pl, truth - truth.mean())


def test_annotators_fitted_with_their_sensitivities_plackett_luce_only():
    """Where the annotators' test opens the joint fit, Plackett-Luce is stretched with the
    simulated choices following each annotator's sensitivity; Bradley-Terry's joint fit is
    left as it is (stretched, it covered 0.931-0.944 with random clickers)."""
    judgments, *_ = study(3, appearances=16)  # a study whose test opens (p 0.06-0.07)
    seen = []
    real = spread_bias.stretch

    def recorded(*args, **kwargs):
        seen.append(kwargs.get("scale"))
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spread_bias, "stretch", recorded)
        _, bt = calibrated(judgments, "bradley_terry")
        _, pl = calibrated(judgments, "plackett_luce")
    assert bt.reliability.joint and pl.reliability.joint
    assert bt.stretch == 1.0 and pl.stretch > 1.02
    (scale,) = seen
    assert np.allclose(scale, pl.reliability.sensitivity[judgments.annotators])
