"""The information bound of benchmarks/adaptive_bound.py rests on the exact Fisher
information of one MaxDiff judgment: checked here against the judgments the simulations
draw, and its largest value against tuples of every spread; and the bound for designs
that know only the judgments so far, against the two designs it lies between."""

import numpy as np
import pytest

from benchmarks import adaptive_bound
from benchmarks.adaptive_bound import (
    fit_limited_appearances,
    information_matrix,
    most_information,
    random_tuple_information,
    sorted_rounds,
    standing_information,
    true_utilities,
    tuple_information,
)
from bws.core.choice_models import sample_maxdiff


def _score(utilities, best, worst):
    """The gradient of the log-likelihood of each (best, worst) judgment of one tuple."""
    size = utilities.size
    choice = np.exp(utilities) / np.exp(utilities).sum()
    score = np.eye(size)[best] - choice
    for b in range(size):
        rest = -utilities.copy()
        rest[b] = -np.inf
        against = np.exp(rest - rest.max())
        against /= against.sum()
        chosen = best == b
        score[chosen] -= np.eye(size)[worst[chosen]] - against
    return score


@pytest.mark.parametrize(
    "utilities", [[0.5, -0.3, 1.2, -1.0], [0.0, 0.0, 0.0, 0.0], [3, 0, -2, 0.1]]
)
def test_information_is_the_covariance_of_the_simulated_judgments_score(utilities):
    utilities = np.array(utilities, dtype=float)
    tuples = np.tile(np.arange(4), (200_000, 1))
    best, worst = sample_maxdiff(tuples, utilities, seed=3)
    empirical = np.cov(_score(utilities, best, worst).T)
    exact = tuple_information(utilities, np.arange(4)[None])[0]
    assert np.abs(empirical - exact).max() < 0.006
    # A common shift of the utilities changes no choice: the information has no row sum.
    assert np.allclose(exact.sum(axis=1), 0.0)


def test_equal_items_give_three_sixteenths_plus_one_sixth_and_nothing_gives_noticeably_more():
    equal = tuple_information(np.zeros(4), np.arange(4)[None])[0]
    assert np.allclose(np.diag(equal), 3 / 16 + 1 / 6)
    most = most_information()
    assert 3 / 16 + 1 / 6 <= most < 3 / 16 + 1 / 6 + 1e-3
    rng = np.random.default_rng(5)
    for spread in (0.05, 0.5, 2.0):
        utilities = rng.normal(0, spread, size=400_000)
        per_item = np.diagonal(
            tuple_information(utilities, np.arange(utilities.size).reshape(-1, 4)), axis1=1, axis2=2
        )
        assert per_item.max() <= most + 1e-9


def test_the_design_information_adds_the_tuples_blocks():
    utilities = np.array([0.3, -0.2, 1.0, -1.1, 0.4, 0.0])
    tuples = np.array([[0, 1, 2, 3], [2, 3, 4, 5], [0, 5, 1, 4]])
    matrix = information_matrix(utilities, tuples)
    blocks = tuple_information(utilities, tuples)
    expected = np.zeros((6, 6))
    for rows, block in zip(tuples, blocks, strict=True):
        expected[np.ix_(rows, rows)] += block
    assert np.allclose(matrix, expected)
    assert np.allclose(matrix, matrix.T)


def test_sorted_rounds_show_every_item_once_per_round_in_tuples_of_near_neighbours():
    rng = np.random.default_rng(2)
    utilities = rng.normal(size=400)
    tuples = sorted_rounds(utilities, 0, 3, 3.0, rng)
    assert tuples.shape == (300, 4)
    assert (np.bincount(tuples.ravel(), minlength=400) == 3).all()
    rank = np.argsort(np.argsort(utilities))
    assert np.median(np.ptp(rank[tuples], axis=1)) < 20


def test_tuples_of_neighbours_in_the_estimates_give_more_the_better_the_estimates():
    rng = np.random.default_rng(8)
    population = rng.normal(size=40_000)
    _, random = standing_information(population, None, rng)
    mean = [random.mean()]
    for noise in (10.0, 0.7, 0.3, 0.05):
        centres, worth = standing_information(population, noise, rng)
        mean.append(worth.mean())
    # random tuples: the mean of part 1; estimates of no use give no more than that
    assert random.mean() == pytest.approx(random_tuple_information(population, rng), abs=0.005)
    assert mean[1] == pytest.approx(random.mean(), abs=0.005)
    assert all(later > earlier for earlier, later in zip(mean[1:], mean[2:], strict=False))
    # neighbours in near-exact estimates: nearly equal items, about the most a judgment gives
    assert most_information() - 0.01 < worth[len(worth) // 2] <= most_information()
    # in random tuples an item at the extremes learns less than one in the middle
    assert random[0] < random[len(random) // 2] and random[-1] < random[len(random) // 2]
    assert centres[0] < -2 and centres[-1] > 2


def test_a_design_knowing_only_the_judgments_lies_between_the_balanced_and_the_ideal(
    monkeypatch,
):
    utilities = true_utilities(1000, "normal", np.random.default_rng(3))
    need, balanced, at_final = fit_limited_appearances(
        utilities, "normal", 2, np.random.default_rng(4), draws=10
    )
    assert 8 * 0.285 / most_information() < need < 8  # the ideal needs 6.45 appearances
    assert at_final > balanced * 1.05
    # the machinery: a design whose tuples are worth no more than random ones needs the
    # balanced design's 8 appearances, one whose tuples all give the most needs the ideal's
    real = standing_information

    def random_only(population, noise_sd, rng, bins=40):
        return real(population, None, rng, bins)

    monkeypatch.setattr(adaptive_bound, "standing_information", random_only)
    alike, _, _ = fit_limited_appearances(
        utilities, "normal", 2, np.random.default_rng(4), draws=10
    )
    assert alike == pytest.approx(8.0, abs=0.25)

    def the_most(population, noise_sd, rng, bins=40):
        centres, worth = real(population, None, rng, bins)
        return centres, worth if noise_sd is None else np.full_like(worth, most_information())

    monkeypatch.setattr(adaptive_bound, "standing_information", the_most)
    ideal, _, _ = fit_limited_appearances(
        utilities, "normal", 2, np.random.default_rng(4), draws=10
    )
    assert ideal == pytest.approx(2 + 6 * 0.285 / most_information(), abs=0.3) and ideal < need
