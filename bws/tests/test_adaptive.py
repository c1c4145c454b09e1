"""Guarantees of adaptive and iterative BWS batches, checked on generated designs."""

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from scipy.stats import spearmanr

from bws.core.adaptive import (
    DesignState,
    adaptive_batch,
    batch_problems,
    iterative_round,
    rank_uncertainty,
    score_density,
    topped_up,
)
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.intervals import calibrated
from bws.core.judgments import Judgments

SLOW = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])


def check_history(history: np.ndarray, batches: list[np.ndarray], n: int, max_app: int):
    """The design facts a study relies on, computed without the adaptive module."""
    everything = np.vstack([history, *batches]) if batches else history
    # no item twice in a tuple
    ordered = np.sort(everything, axis=1)
    assert not (ordered[:, 1:] == ordered[:, :-1]).any()
    # appearance bound, and at most one appearance per batch
    assert np.bincount(everything.ravel(), minlength=n).max() <= max(
        max_app, np.bincount(history.ravel(), minlength=n).max()
    )
    for batch in batches:
        assert np.bincount(batch.ravel(), minlength=n).max() <= 1
    # no pair of items meets twice, anywhere in the history
    pairs = {}
    for row in everything.tolist():
        for a in range(len(row)):
            for b in range(a + 1, len(row)):
                key = (min(row[a], row[b]), max(row[a], row[b]))
                pairs[key] = pairs.get(key, 0) + 1
    assert max(pairs.values()) == 1
    # positions equitable: each item's counts per position differ by at most 1
    size = everything.shape[1]
    seats = np.zeros((n, size), dtype=np.int64)
    for p in range(size):
        np.add.at(seats[:, p], everything[:, p], 1)
    assert (seats.max(axis=1) - seats.min(axis=1)).max() <= 1


def grow(n, size, r0, max_app, batches, batch_tuples, seed, scores=None, top_up=False):
    """A balanced start and a run of adaptive batches on fixed scores (topped up as the
    platform tops them up, when asked)."""
    rng = np.random.default_rng(seed)
    history = balanced_tuples(n, size, r0, seed=seed)
    u = rng.normal(size=n) if scores is None else scores
    sd = rng.uniform(0.2, 1.0, size=n)
    state = DesignState.from_tuples(history, n)
    out = []
    for step in range(batches):
        batch = adaptive_batch(
            u, sd, state, batch_tuples=batch_tuples, max_appearances=max_app, seed=step
        )
        if top_up:
            batch = topped_up(
                batch, u, sd, state, batch_tuples=batch_tuples, max_appearances=max_app,
                seed=step,
            )  # fmt: skip
        assert batch_problems(batch, state, max_appearances=max_app) == []
        assert batch.dtype == np.int64 and batch.shape[1] == size
        assert batch.shape[0] <= batch_tuples
        out.append(batch)
        state = state.extended(batch)
    return history, out, state


def test_adaptive_batches_hold_bounds_pairs_and_positions():
    history, batches, state = grow(400, 4, 4, 10, 10, 40, seed=3)
    check_history(history, batches, 400, 10)
    # the batches are full while there is room
    assert all(b.shape[0] >= 38 for b in batches)
    assert state.appearances.max() <= 10


@SLOW
@given(
    n=st.integers(5, 80),
    size=st.integers(2, 5),
    r0=st.integers(1, 4),
    extra=st.integers(0, 6),
    batch_tuples=st.integers(1, 30),
    seed=st.integers(0, 10_000),
)
def test_adaptive_batches_hold_the_guarantees_on_any_study(n, size, r0, extra, batch_tuples, seed):
    if n < size:
        return
    history, batches, _ = grow(n, size, r0, r0 + extra, 6, batch_tuples, seed)
    # a small balanced start may itself repeat pairs; the batches add none
    if len({tuple(sorted(p)) for p in _pairs(history)}) == len(_pairs(history)):
        check_history(history, batches, n, r0 + extra)


@SLOW
@given(
    n=st.integers(5, 60),
    size=st.integers(2, 5),
    r0=st.integers(1, 3),
    extra=st.integers(1, 8),
    batch_tuples=st.integers(1, 20),
    seed=st.integers(0, 10_000),
)
def test_topped_up_batches_hold_the_guarantees_on_any_study(n, size, r0, extra, batch_tuples, seed):
    if n < size:
        return
    history, batches, _ = grow(n, size, r0, r0 + extra, 6, batch_tuples, seed, top_up=True)
    if len({tuple(sorted(p)) for p in _pairs(history)}) == len(_pairs(history)):
        check_history(history, batches, n, r0 + extra)


def _pairs(tuples):
    return [(a, b) for row in tuples.tolist() for i, a in enumerate(row) for b in row[i + 1 :]]


def test_few_items_give_fewer_tuples_and_never_break_a_rule():
    n, size = 6, 4
    history, batches, state = grow(n, size, 1, 50, 8, 10, seed=1)
    sizes = [b.shape[0] for b in batches]
    # 6 items have 15 pairs; each tuple of 4 uses 6: at most two tuples in all
    assert sum(sizes) + history.shape[0] <= 2
    assert sizes[-1] == 0


def _fits_somewhere(tuples: np.ndarray, n: int, max_app: int, exclude=frozenset()) -> bool:
    """Brute force: whether any further tuple (of items not in ``exclude``) keeps the rules
    after ``tuples``."""
    import itertools

    size = tuples.shape[1]
    appearances = np.bincount(tuples.ravel(), minlength=n)
    seats = np.zeros((n, size), dtype=np.int64)
    for p in range(size):
        np.add.at(seats[:, p], tuples[:, p], 1)
    met = {tuple(sorted(q)) for row in tuples.tolist() for q in itertools.combinations(row, 2)}
    under = [i for i in range(n) if appearances[i] < max_app and i not in exclude]
    for items in itertools.combinations(under, size):
        if any(q in met for q in itertools.combinations(items, 2)):
            continue
        for order in itertools.permutations(range(size)):
            if all(seats[i, q] == seats[i].min() for i, q in zip(items, order, strict=True)):
                return True
    return False


@pytest.mark.parametrize("n, r0, max_app, want", [(40, 4, 8, 12), (30, 2, 9, 5), (13, 1, 12, 3)])
def test_topped_up_batches_are_full_until_no_tuple_fits(n, r0, max_app, want):
    """Topped up, a batch is short only when the items left cannot fill it (each once a
    batch), and empty only when no tuple of them keeps the rules, checked by brute force."""
    rng = np.random.default_rng(n)
    history = balanced_tuples(n, 4, r0, seed=n)
    u, sd = rng.normal(size=n), rng.uniform(0.2, 1.0, size=n)
    state, batches = DesignState.from_tuples(history, n), []
    for step in range(100):
        core = adaptive_batch(u, sd, state, batch_tuples=want, max_appearances=max_app, seed=step)
        batch = topped_up(
            core, u, sd, state, batch_tuples=want, max_appearances=max_app, seed=step
        )  # fmt: skip
        assert batch_problems(batch, state, max_appearances=max_app) == []
        assert batch.shape[0] >= core.shape[0] and np.array_equal(batch[: core.shape[0]], core)
        if batch.shape[0] == 0:
            break
        if batch.shape[0] < want:  # short: no tuple of the items not in it fits
            after = np.vstack([history, *batches, batch])
            assert not _fits_somewhere(after, n, max_app, exclude=set(batch.ravel().tolist()))
        batches.append(batch)
        state = state.extended(batch)
    else:
        raise AssertionError("the design did not end")
    check_history(history, batches, n, max_app)
    assert not _fits_somewhere(np.vstack([history, *batches]), n, max_app)
    np.testing.assert_array_equal(
        topped_up(np.empty((0, 4), np.int64), u, sd, DesignState.from_tuples(history, n),
                  batch_tuples=want, max_appearances=max_app, seed=5),
        topped_up(np.empty((0, 4), np.int64), u, sd, DesignState.from_tuples(history, n),
                  batch_tuples=want, max_appearances=max_app, seed=5),
    )  # fmt: skip


def test_items_at_their_maximum_are_not_drawn():
    n = 100
    history = balanced_tuples(n, 4, 6, seed=0)
    state = DesignState.from_tuples(history, n)
    u, sd = np.zeros(n), np.ones(n)
    empty = adaptive_batch(u, sd, state, batch_tuples=10, max_appearances=6, seed=0)
    assert empty.shape == (0, 4)
    # only items below the bound, here the 12 with 6 appearances, may be drawn
    capped = np.where(np.arange(n) < 12, 6, 7)
    some = adaptive_batch(
        u,
        sd,
        DesignState(n, 4, capped, state.positions, state.pair_codes),
        batch_tuples=10,
        max_appearances=7,
        seed=0,
    )
    assert some.shape[0] <= 3 and np.isin(some, np.arange(12)).all()


def test_a_batch_is_reproducible_from_the_seed_and_the_stored_fit():
    n = 300
    rng = np.random.default_rng(5)
    u, sd = rng.normal(size=n), rng.uniform(0.3, 0.9, size=n)
    history = balanced_tuples(n, 4, 4, seed=2)
    first = DesignState.from_tuples(history[:200], n).extended(history[200:])
    again = DesignState.from_tuples(history, n)
    one = adaptive_batch(u, sd, first, batch_tuples=30, max_appearances=8, seed=11)
    two = adaptive_batch(u.copy(), sd.copy(), again, batch_tuples=30, max_appearances=8, seed=11)
    np.testing.assert_array_equal(one, two)
    other = adaptive_batch(u, sd, again, batch_tuples=30, max_appearances=8, seed=12)
    assert not np.array_equal(one, other)
    # scores stored with less precision (a database round trip) give the same batch
    stored = adaptive_batch(
        np.round(u, 12), np.round(sd, 12), again, batch_tuples=30, max_appearances=8, seed=11
    )
    np.testing.assert_array_equal(one, stored)


def test_draws_favour_items_whose_rank_is_uncertain():
    n = 400
    history = balanced_tuples(n, 4, 4, seed=0)
    state = DesignState.from_tuples(history, n)
    # items 0..199 are crowded together, items 200..399 spread far apart
    u = np.concatenate([np.linspace(-0.1, 0.1, 200), np.linspace(2.0, 200.0, 200)])
    sd = np.full(n, 0.5)
    batch = adaptive_batch(u, sd, state, batch_tuples=40, max_appearances=10, seed=0)
    crowded = np.isin(batch, np.arange(200)).mean()
    assert crowded > 0.9
    # and each tuple holds items of similar standing
    spread = np.ptp(u[batch], axis=1)
    assert np.median(spread) < np.median(np.ptp(u[history[:40]], axis=1))


def test_density_allocation_favours_items_where_scores_are_dense():
    n = 400
    history = balanced_tuples(n, 4, 4, seed=0)
    state = DesignState.from_tuples(history, n)
    u = np.concatenate([np.linspace(-0.1, 0.1, 200), np.linspace(2.0, 200.0, 200)])
    density = score_density(u)
    # away from where the two runs meet (the neighbourhoods reach across it)
    assert density[:180].min() > 10 * density[220:].max()
    batch = adaptive_batch(
        u, np.full(n, 0.5), state, batch_tuples=40, max_appearances=10, seed=0,
        allocation="density",
    )  # fmt: skip
    assert batch_problems(batch, state, max_appearances=10) == []
    assert np.isin(batch, np.arange(200)).mean() > 0.9
    with pytest.raises(ValueError):
        adaptive_batch(
            u, np.ones(n), state, batch_tuples=4, max_appearances=10, seed=0, allocation="x"
        )


def test_rank_uncertainty_is_the_expected_number_of_swaps():
    rng = np.random.default_rng(0)
    for n in (2, 7, 33):
        u, sd = rng.normal(size=n), rng.uniform(0.1, 1.0, size=n)
        gap = np.abs(u[:, None] - u[None, :])
        p = ndtr(-gap / np.sqrt(sd[:, None] ** 2 + sd[None, :] ** 2))
        np.fill_diagonal(p, 0.0)
        np.testing.assert_allclose(rank_uncertainty(u, sd), p.sum(axis=1), rtol=1e-12)
    # beyond, an approximation within a quarter
    u, sd = rng.normal(size=2000), rng.uniform(0.1, 1.0, size=2000)
    gap = np.abs(u[:, None] - u[None, :])
    p = ndtr(-gap / np.sqrt(sd[:, None] ** 2 + sd[None, :] ** 2))
    np.fill_diagonal(p, 0.0)
    np.testing.assert_allclose(rank_uncertainty(u, sd), p.sum(axis=1), rtol=0.25)


def test_iterative_rounds_hold_the_guarantees_and_stay_in_buckets():
    n = 240
    history = balanced_tuples(n, 4, 2, seed=4)
    state = DesignState.from_tuples(history, n)
    u = np.random.default_rng(1).normal(size=n)
    rounds = []
    for k, buckets in enumerate((2, 4, 8, 16)):
        batch = iterative_round(u, state, n_buckets=buckets, max_appearances=8, seed=k)
        assert batch_problems(batch, state, max_appearances=8) == []
        # most items once a round while buckets are large (in small ones, pairs not yet
        # met and free positions run out, and fewer tuples come back)
        if buckets <= 8:
            assert batch.shape[0] >= 0.75 * n / 4
        rank = np.argsort(np.argsort(u))
        bucket = rank * buckets // n
        assert (bucket[batch] == bucket[batch[:, :1]]).all()
        rounds.append(batch)
        state = state.extended(batch)
    check_history(history, rounds, n, 8)
    again = iterative_round(u, state, n_buckets=32, max_appearances=8, seed=9)
    np.testing.assert_array_equal(
        again, iterative_round(u, state, n_buckets=32, max_appearances=8, seed=9)
    )


def test_inputs_that_do_not_match_are_refused():
    state = DesignState.empty(10, 4)
    with pytest.raises(ValueError):
        adaptive_batch(np.zeros(9), np.ones(9), state, batch_tuples=2, max_appearances=4, seed=0)
    with pytest.raises(ValueError):
        DesignState.from_tuples(np.array([[0, 1, 10, 2]]), 10)
    with pytest.raises(ValueError):
        iterative_round(np.zeros(10), state, n_buckets=0, max_appearances=4, seed=0)


def _judge(truth, tuples, rng, before=None):
    """Judgments of tuples from the MaxDiff model, after those already drawn."""
    best, worst = sample_maxdiff(tuples, truth, rng)
    if before is not None:
        tuples = np.vstack([before.items, tuples])
        best = np.concatenate([before.best, best])
        worst = np.concatenate([before.worst, worst])
    m = tuples.shape[0]
    return Judgments(tuples, best, worst, np.arange(m), np.zeros(m), np.arange(m), truth.size)


@functools.cache
def _small_studies():
    """Three seeded studies of 300 items (normal utilities): the same 2 appearances
    balanced and their judgments, then 4 more per item either balanced or in adaptive
    batches of n / 8 tuples. Per study: (gain in Spearman of adaptive over balanced,
    coverage of the adaptive fit's 95% intervals)."""
    n, out = 300, []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        truth = rng.normal(size=n)
        start = _judge(truth, balanced_tuples(n, 4, 2, seed=seed + 100), rng)
        more = balanced_tuples(n, 4, 4, seed=seed)
        plain = calibrated(_judge(truth, more, rng, start), "plackett_luce", adaptive=True)[
            0
        ].scores
        judgments = start
        state = DesignState.from_tuples(judgments.items, n)
        budget = start.n_judgments + more.shape[0]
        while judgments.n_judgments < budget:
            scores, intervals = calibrated(judgments, "plackett_luce", adaptive=True)
            want = min(n // 8, budget - judgments.n_judgments)
            batch = adaptive_batch(
                scores.scores, intervals.std, state, batch_tuples=want, max_appearances=16,
                seed=seed,
            )  # fmt: skip
            if batch.shape[0] == 0:
                break
            judgments = _judge(truth, batch, rng, judgments)
            state = state.extended(batch)
        # a last small batch may come back short (its pairs have met): never more
        assert budget - 5 <= judgments.n_judgments <= budget
        scores, intervals = calibrated(judgments, "plackett_luce", adaptive=True)
        centred = truth - truth.mean()
        cover = np.mean((intervals.low <= centred) & (centred <= intervals.high))
        gain = spearmanr(scores.scores, truth)[0] - spearmanr(plain, truth)[0]
        out.append((gain, cover))
    return out


def test_adaptive_intervals_still_cover():
    covers = [cover for _, cover in _small_studies()]
    assert min(covers) >= 0.9, covers


@pytest.mark.xfail(
    reason="measured: at 300 items adaptive batches do not yet beat the balanced design"
    " (benchmarks/RESULTS.md, Adaptive designs)",
    strict=True,  # deterministic seeds: a pass means the goal is met, so make it a test
)
def test_adaptive_beats_balanced_at_equal_judgments():
    gains = [gain for gain, _ in _small_studies()]
    assert sum(g > 0 for g in gains) >= 2 and np.mean(gains) > 0.0, gains
