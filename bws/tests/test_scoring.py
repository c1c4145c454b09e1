"""Scoring facts: hand-worked counts and scores, choix as the Bradley-Terry oracle, the
MaxDiff likelihood against brute force, invariances, and recovery of known utilities."""

from collections import Counter

import choix
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import approx_fprime, minimize
from scipy.stats import spearmanr

from bws.core import scoring
from bws.core.choice_models import MaxDiffModel, PairwiseModel, sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.judgments import Judgments
from bws.core.newton import penalised_objective

A, B, C, D = range(4)


def hand_worked() -> Judgments:
    """Four items a, b, c, d and three judgments of triples."""
    return Judgments.from_indices(
        items=[[A, B, C], [A, B, D], [B, C, D]],
        best_items=[A, B, B],
        worst_items=[C, D, C],
        n_items=4,
    )


def simulated(n_items, per_tuple=1, appearances=8, size=4, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    truth -= truth.mean()
    tuples = balanced_tuples(n_items, size, appearances, seed=seed)
    items = np.repeat(tuples, per_tuple, axis=0)
    best, worst = sample_maxdiff(items, truth, rng)
    m = items.shape[0]
    judgments = Judgments(
        items=items,
        best=best,
        worst=worst,
        tuple_ids=np.repeat(np.arange(tuples.shape[0]), per_tuple),
        annotators=rng.integers(0, 5, size=m),
        order=rng.permutation(m),
        n_items=n_items,
    )
    return judgments, truth


def brute_force_log_likelihood(u, judgments):
    """The MaxDiff likelihood written out judgment by judgment, as the model states it."""
    total = 0.0
    for row, b, w in zip(judgments.items, judgments.best, judgments.worst, strict=True):
        p_best = np.exp(u[row[b]]) / sum(np.exp(u[i]) for i in row)
        rest = [i for k, i in enumerate(row) if k != b]
        p_worst = np.exp(-u[row[w]]) / sum(np.exp(-u[i]) for i in rest)
        total += np.log(p_best * p_worst)
    return total


# --------------------------------------------------------------------------- hand-worked


def test_hand_worked_counts_and_counting_scores():
    result = scoring.fit_counting(hand_worked())
    assert result.best_counts.tolist() == [1, 2, 0, 0]
    assert result.worst_counts.tolist() == [0, 0, 2, 1]
    assert result.appearances.tolist() == [2, 3, 2, 2]
    # (best - worst) / appearances: a 1/2, b 2/3, c -2/2, d -1/2
    np.testing.assert_allclose(result.scores, [0.5, 2 / 3, -1.0, -0.5])


def test_hand_worked_implied_pairs_are_the_2t_minus_3_of_each_judgment():
    pairs = PairwiseModel(hand_worked()).pairs()
    assert len(pairs) == 3 * (2 * 3 - 3)
    expected = [
        (A, B), (A, C), (B, C),  # a best, c worst in (a, b, c)
        (B, A), (B, D), (A, D),  # b best, d worst in (a, b, d)
        (B, C), (B, D), (D, C),  # b best, c worst in (b, c, d)
    ]  # fmt: skip
    assert Counter(map(tuple, pairs.tolist())) == Counter(expected)


def test_hand_worked_model_scores_rank_b_a_d_c_and_are_centred():
    judgments = hand_worked()
    for fit in (scoring.fit_bradley_terry, scoring.fit_plackett_luce):
        result = fit(judgments)
        assert result.scores.sum() == pytest.approx(0.0, abs=1e-12)
        assert np.argsort(-result.scores).tolist() == [B, A, D, C]
        assert result.best_counts.tolist() == [1, 2, 0, 0]
        assert result.appearances.tolist() == [2, 3, 2, 2]


def test_hand_worked_bradley_terry_is_choix_on_the_nine_pairs():
    pairs = [[A, B], [A, C], [B, C], [B, A], [B, D], [A, D], [B, C], [B, D], [D, C]]
    reference = choix.opt_pairwise(4, pairs, alpha=0.1, tol=1e-12)
    ours = scoring.fit_bradley_terry(hand_worked(), alpha=0.1, tolerance=1e-12).scores
    np.testing.assert_allclose(ours, reference - reference.mean(), atol=1e-6)


def test_hand_worked_plackett_luce_maximises_the_brute_force_likelihood():
    judgments = hand_worked()
    alpha = 0.1

    def objective(u):
        return -brute_force_log_likelihood(u, judgments) + alpha * np.sum(u**2)

    reference = minimize(objective, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    ours = scoring.fit_plackett_luce(judgments, alpha=alpha, tolerance=1e-12).scores
    np.testing.assert_allclose(ours, reference - reference.mean(), atol=1e-5)


# --------------------------------------------------------------------------- choix oracle


def choix_scores(judgments, alpha):
    pairs = PairwiseModel(judgments).pairs().tolist()
    reference = choix.opt_pairwise(judgments.n_items, pairs, alpha=alpha, tol=1e-10)
    return reference - reference.mean()


@pytest.mark.parametrize("alpha", [0.01, 0.5])
def test_bradley_terry_agrees_with_choix_on_the_same_pairs_and_penalty(alpha):
    judgments, _ = simulated(150, per_tuple=2, seed=3)
    ours = scoring.fit_bradley_terry(judgments, alpha=alpha, tolerance=1e-10).scores
    np.testing.assert_allclose(ours, choix_scores(judgments, alpha), atol=1e-4)


def test_bradley_terry_agrees_with_choix_on_2000_items():
    judgments, _ = simulated(2000, appearances=4, seed=4)
    ours = scoring.fit_bradley_terry(judgments, alpha=0.01, tolerance=1e-10).scores
    np.testing.assert_allclose(ours, choix_scores(judgments, 0.01), atol=1e-4)


def test_bradley_terry_agrees_with_choix_when_an_item_always_wins():
    # Item 0 is best every time: only the penalty keeps its utility finite.
    judgments = Judgments.from_indices(
        [[0, 1, 2, 3], [0, 2, 3, 4], [0, 1, 4, 3]], [0, 0, 0], [3, 4, 1], n_items=5
    )
    ours = scoring.fit_bradley_terry(judgments, alpha=0.01, tolerance=1e-12).scores
    np.testing.assert_allclose(ours, choix_scores(judgments, 0.01), atol=1e-4)
    assert np.isfinite(ours).all() and ours[0] == ours.max()


# --------------------------------------------------------------------------- MaxDiff model


def test_maxdiff_probabilities_over_all_best_worst_answers_sum_to_one():
    rng = np.random.default_rng(1)
    u = rng.normal(size=5)
    row = [0, 3, 1, 4]
    answers = [(b, w) for b in range(4) for w in range(4) if b != w]
    judgments = Judgments(
        items=[row] * len(answers),
        best=[b for b, _ in answers],
        worst=[w for _, w in answers],
        tuple_ids=np.zeros(len(answers)),
        annotators=np.zeros(len(answers)),
        order=np.arange(len(answers)),
        n_items=5,
    )
    model = MaxDiffModel(judgments)
    log_lik = model.row_log_likelihood(u)
    assert np.exp(log_lik).sum() == pytest.approx(1.0)
    assert log_lik.sum() == pytest.approx(brute_force_log_likelihood(u, judgments))


def test_maxdiff_likelihood_matches_brute_force_on_tiny_cases():
    for seed in range(5):
        judgments, _ = simulated(8, appearances=3, size=3 + seed % 3, seed=seed)
        u = np.random.default_rng(seed).normal(size=8)
        value, _ = MaxDiffModel(judgments).negative_log_likelihood(u)
        assert -value == pytest.approx(brute_force_log_likelihood(u, judgments), rel=1e-10)


@pytest.mark.parametrize("model_class", [MaxDiffModel, PairwiseModel])
def test_gradient_and_hessian_match_finite_differences(model_class):
    judgments, _ = simulated(12, appearances=4, seed=7)
    model = model_class(judgments)
    rng = np.random.default_rng(2)
    u = rng.normal(size=12)
    weights = rng.integers(0, 3, size=judgments.n_judgments).astype(float)

    def value(x):
        return penalised_objective(x, model, 0.05, weights)[0]

    def gradient(x):
        return penalised_objective(x, model, 0.05, weights)[1]

    np.testing.assert_allclose(gradient(u), approx_fprime(u, value, 1e-7), atol=1e-5)
    numeric = np.column_stack(
        [approx_fprime(u, lambda x, k=k: gradient(x)[k], 1e-7) for k in range(12)]
    )
    v = rng.normal(size=12)
    product = model.hessian_vector(model.curvature(u, weights), v) + 0.1 * v
    np.testing.assert_allclose(product, numeric @ v, atol=1e-5)
    unweighted = model.hessian(u).toarray()
    np.testing.assert_allclose(
        unweighted @ v, model.hessian_vector(model.curvature(u), v), atol=1e-12
    )
    columns = model.gradient_matrix(u)
    np.testing.assert_allclose(
        columns @ weights, model.negative_log_likelihood(u, weights)[1], atol=1e-12
    )


def test_plackett_luce_differs_from_bradley_terry():
    judgments, truth = simulated(200, seed=5)
    pl = scoring.fit_plackett_luce(judgments)
    bt = scoring.fit_bradley_terry(judgments)
    assert np.abs(pl.scores - bt.scores).max() > 0.05
    model = MaxDiffModel(judgments)
    pl_value = penalised_objective(pl.scores, model, 0.01)[0]
    bt_value = penalised_objective(bt.scores, model, 0.01)[0]
    assert pl_value < bt_value - 1.0


def test_sample_maxdiff_draws_best_and_worst_with_the_model_probabilities():
    u = np.array([1.0, 0.0, -0.5])
    tuples = np.tile([0, 1, 2], (40_000, 1))
    best, worst = sample_maxdiff(tuples, u, seed=0)
    p_best = np.exp(u) / np.exp(u).sum()
    np.testing.assert_allclose(np.bincount(best, minlength=3) / 40_000, p_best, atol=0.01)
    # P(worst = 2 | best = 0) = e^0.5 / (e^0 + e^0.5)
    given_best = worst[best == 0]
    assert np.mean(given_best == 2) == pytest.approx(np.exp(0.5) / (1 + np.exp(0.5)), abs=0.02)
    assert np.all(best != worst)


# --------------------------------------------------------------------------- invariances


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_items=st.integers(5, 30))
def test_relabelling_items_permutes_every_method_s_scores(seed, n_items):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(5, 60))
    items = np.array([rng.choice(n_items, 4, replace=False) for _ in range(m)])
    best = rng.integers(0, 4, size=m)
    worst = (best + rng.integers(1, 4, size=m)) % 4
    judgments = Judgments(items, best, worst, np.arange(m), np.zeros(m), np.arange(m), n_items)
    permutation = rng.permutation(n_items)
    relabelled = judgments.permute_items(permutation)
    for method in scoring.METHODS:
        before = (
            scoring.fit(method, judgments)
            if method == "counting"
            else scoring.fit(method, judgments, tolerance=1e-10)
        )
        after = (
            scoring.fit(method, relabelled)
            if method == "counting"
            else scoring.fit(method, relabelled, tolerance=1e-10)
        )
        np.testing.assert_allclose(after.scores[permutation], before.scores, atol=1e-6)
        np.testing.assert_array_equal(after.best_counts[permutation], before.best_counts)
        np.testing.assert_array_equal(after.appearances[permutation], before.appearances)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), copies=st.integers(2, 4))
def test_duplicating_every_judgment_leaves_counting_unchanged(seed, copies):
    judgments, _ = simulated(20, appearances=4, seed=seed)
    rows = np.tile(np.arange(judgments.n_judgments), copies)
    duplicated = judgments.subset(rows)
    np.testing.assert_allclose(
        scoring.fit_counting(duplicated).scores, scoring.fit_counting(judgments).scores
    )


def test_order_of_items_within_a_tuple_does_not_matter():
    judgments, _ = simulated(60, seed=8)
    rng = np.random.default_rng(0)
    shuffle = np.argsort(rng.random(judgments.items.shape), axis=1)
    inverse = np.argsort(shuffle, axis=1)
    rows = np.arange(judgments.n_judgments)
    shuffled = Judgments(
        items=np.take_along_axis(judgments.items, shuffle, axis=1),
        best=inverse[rows, judgments.best],
        worst=inverse[rows, judgments.worst],
        tuple_ids=judgments.tuple_ids,
        annotators=judgments.annotators,
        order=judgments.order,
        n_items=judgments.n_items,
    )
    for method in scoring.METHODS:
        np.testing.assert_allclose(
            scoring.fit(method, shuffled).scores, scoring.fit(method, judgments).scores, atol=1e-6
        )


def test_integer_weights_equal_repeated_judgments():
    judgments, _ = simulated(40, seed=9)
    weights = np.random.default_rng(1).integers(0, 3, size=judgments.n_judgments)
    repeated = judgments.subset(np.repeat(np.arange(judgments.n_judgments), weights))
    for method in scoring.METHODS:
        options = {} if method == "counting" else {"tolerance": 1e-10}
        weighted = scoring.fit(method, judgments, weights=weights.astype(float), **options)
        np.testing.assert_allclose(
            weighted.scores, scoring.fit(method, repeated, **options).scores, atol=1e-6
        )


# --------------------------------------------------------------------------- recovery


def test_every_method_recovers_known_utilities():
    judgments, truth = simulated(500, per_tuple=2, seed=11)
    for method in scoring.METHODS:
        rho = spearmanr(scoring.fit(method, judgments).scores, truth)[0]
        assert rho > 0.85, (method, rho)
    pl = scoring.fit_plackett_luce(judgments)
    assert pl.converged
    # Utilities come back on the scale they were drawn on (the MaxDiff model's own scale).
    slope = np.polyfit(truth, pl.scores, 1)[0]
    assert 0.8 < slope < 1.4


def test_items_never_shown_score_zero():
    judgments = Judgments.from_indices([[0, 1, 2]], [0], [2], n_items=5)
    for method in scoring.METHODS:
        result = scoring.fit(method, judgments)
        assert result.scores[3] == pytest.approx(0.0, abs=1e-9)
        assert result.appearances.tolist() == [1, 1, 1, 0, 0]


def test_unknown_method_and_nonpositive_penalty_are_refused():
    with pytest.raises(ValueError, match="unknown scoring method"):
        scoring.fit("elo", hand_worked())
    with pytest.raises(ValueError, match="alpha must be positive"):
        scoring.fit_plackett_luce(hand_worked(), alpha=0)


def test_a_curvature_taken_before_another_point_was_evaluated_is_refused():
    # The softmax rows live in the model's buffers; evaluating elsewhere overwrites them.
    judgments, _ = simulated(12, appearances=4, seed=7)
    model = MaxDiffModel(judgments)
    u, v = np.linspace(-1.0, 1.0, 12), np.ones(12)
    at_u = model.curvature(u)
    expected = model.hessian(u).toarray() @ v
    np.testing.assert_allclose(model.hessian_vector(at_u, v), expected, atol=1e-12)
    model.negative_log_likelihood(u)  # the same point: the rows stand
    np.testing.assert_allclose(model.hessian_vector(at_u, v), expected, atol=1e-12)
    model.negative_log_likelihood(-u)
    with pytest.raises(RuntimeError, match="stale curvature"):
        model.hessian_vector(at_u, v)
