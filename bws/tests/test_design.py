"""Guarantees of the tuple designs, checked on generated designs."""

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bws.core import design
from bws.core.design import (
    COVERAGE_MAX_TUPLES,
    DesignError,
    TupleDesign,
    balanced_design,
    balanced_tuples,
    design_summary,
    pair_coverage_lower_bound,
    random_tuples,
)

SLOW = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pair_counts(tuples: np.ndarray, n: int) -> np.ndarray:
    """Dense n x n co-occurrence counts, computed independently of the design module."""
    counts = np.zeros((n, n), dtype=np.int64)
    size = tuples.shape[1]
    for i in range(size):
        for j in range(size):
            if i != j:
                np.add.at(counts, (tuples[:, i], tuples[:, j]), 1)
    return counts


def position_counts(tuples: np.ndarray, n: int) -> np.ndarray:
    size = tuples.shape[1]
    counts = np.zeros((n, size), dtype=np.int64)
    for p in range(size):
        counts[:, p] = np.bincount(tuples[:, p], minlength=n)
    return counts


def assert_basic_guarantees(tuples: np.ndarray, n: int, size: int, r: int) -> None:
    """Tuple count, exact appearances, distinct items per tuple, equitable positions."""
    assert tuples.dtype == np.int64
    assert tuples.shape == (math.ceil(n * r / size), size)
    assert tuples.min() >= 0 and tuples.max() < n
    appearances = np.bincount(tuples.ravel(), minlength=n)
    assert appearances.min() == r
    assert appearances.max() - appearances.min() <= 1
    assert (np.sort(tuples, axis=1)[:, 1:] != np.sort(tuples, axis=1)[:, :-1]).all()
    positions = position_counts(tuples, n)
    assert (positions >= (appearances // size)[:, None]).all()
    assert (positions <= -(-appearances // size)[:, None]).all()


# sampled_from spreads draws evenly over the range; integers() favours small values.
@settings(SLOW, max_examples=300)
@given(
    size=st.sampled_from(range(2, 9)),
    r=st.sampled_from(range(1, 13)),
    n_extra=st.sampled_from(range(0, 293)),
    seed=st.integers(0, 2**32 - 1),
)
def test_balanced_design_guarantees(size, r, n_extra, seed):
    n = size + n_extra
    tuples = balanced_tuples(n, size, r, seed=seed)
    assert_basic_guarantees(tuples, n, size, r)
    counts = pair_counts(tuples, n)[np.triu_indices(n, 1)]
    r_max = np.bincount(tuples.ravel(), minlength=n).max()
    if n - 1 >= 3 * r_max * (size - 1):
        assert counts.max() <= 1
    else:
        # As even as the design allows: at most one over the best possible q, q + 1.
        expected = counts.sum() / counts.size
        assert counts.max() <= math.floor(expected) + 2


@settings(SLOW, max_examples=40)
@given(
    size=st.sampled_from(range(2, 9)),
    r=st.sampled_from(range(1, 13)),
    slack=st.integers(0, 60),
    seed=st.integers(),
)
def test_no_repeated_pair_when_there_is_room(size, r, slack, seed):
    # r + 1 because a few items appear once more when n * r / T is not whole.
    n = 3 * (r + 1) * (size - 1) + 1 + slack
    tuples = balanced_tuples(n, size, r, seed=seed % 2**32)
    assert_basic_guarantees(tuples, n, size, r)
    summary = design_summary(tuples, n)
    assert summary.repeated_pairs == 0
    assert summary.max_pair_count == 1


@pytest.mark.parametrize(
    ("n", "size", "r"),
    [
        (4, 4, 12),
        (5, 4, 3),
        (7, 3, 5),
        (10, 4, 3),
        (9, 2, 12),
        (1001, 4, 7),
        (3001, 8, 12),
        (4001, 4, 30),
        (100_003, 5, 7),
    ],
)
def test_edges_where_n_and_r_are_not_multiples_of_t(n, size, r):
    tuples = balanced_tuples(n, size, r, seed=1)
    assert_basic_guarantees(tuples, n, size, r)
    summary = design_summary(tuples, n)
    assert summary.duplicate_items == 0
    assert summary.position_spread <= 1
    if n - 1 >= 3 * summary.appearances_max * (size - 1):
        assert summary.repeated_pairs == 0


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_large_designs_repeat_no_pair_and_fill_positions_exactly(n):
    tuples = balanced_tuples(n, 4, 8, seed=7)
    summary = design_summary(tuples, n)
    assert summary.n_tuples == n * 8 // 4
    assert (summary.appearances_min, summary.appearances_max) == (8, 8)
    assert summary.duplicate_items == 0
    assert summary.repeated_pairs == 0
    assert summary.pairs_covered == n * 8 * 3 // 2
    # r = 8 = 2 T: every item exactly twice in every position.
    assert (summary.position_min, summary.position_max) == (2, 2)


@settings(SLOW, max_examples=20)
@given(
    size=st.integers(2, 6),
    r=st.integers(1, 4),
    n_extra=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_pair_coverage_covers_every_pair(size, r, n_extra, seed):
    n = size + n_extra
    tuples, notes = balanced_design(n, size, r, seed=seed, ensure_pair_coverage=True)
    counts = pair_counts(tuples, n)
    assert counts[np.triu_indices(n, 1)].min() >= 1
    assert (np.sort(tuples, axis=1)[:, 1:] != np.sort(tuples, axis=1)[:, :-1]).all()
    asked = math.ceil(n * r / size)
    assert len(tuples) >= max(asked, pair_coverage_lower_bound(n, size))
    appearances = np.bincount(tuples.ravel(), minlength=n)
    assert appearances.min() >= r
    if len(tuples) > asked:
        assert any(f"added {len(tuples) - asked:,}" in note for note in notes)
    if not any("appearances now range" in note for note in notes):
        assert appearances.max() - appearances.min() <= 1
        positions = position_counts(tuples, n)
        assert (positions.max(axis=1) - positions.min(axis=1)).max() <= 1


def test_pair_coverage_when_r_is_already_enough_adds_nothing():
    tuples, notes = balanced_design(10, 4, 12, seed=3, ensure_pair_coverage=True)
    assert len(tuples) == 30
    assert notes == [] or not any("added" in note for note in notes)
    assert design_summary(tuples, 10).pairs_covered == 45


def test_pair_coverage_of_a_huge_pool_is_refused_with_the_tuples_it_needs():
    with pytest.raises(DesignError, match=r"needs at least 833,325,000 tuples"):
        balanced_design(100_000, 4, 5, seed=1, ensure_pair_coverage=True)
    assert pair_coverage_lower_bound(100_000, 4) > COVERAGE_MAX_TUPLES


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 4, 2), "3 items cannot fill tuples of 4"),
        ((10, 1, 2), "tuple_size must be at least 2"),
        ((10, 4, 0), "appearances must be at least 1"),
        ((10.5, 4, 2), "must be integers"),
    ],
)
def test_impossible_inputs_raise_design_error(args, message):
    with pytest.raises(DesignError, match=message):
        balanced_tuples(*args, seed=1)
    with pytest.raises(ValueError, match=message):
        random_tuples(*args, seed=1)


def test_cooccurrence_graph_is_well_connected():
    n = 500
    tuples = balanced_tuples(n, 4, 8, seed=11)
    adjacency = pair_counts(tuples, n).astype(float)
    laplacian = np.diag(adjacency.sum(axis=1)) - adjacency
    eigenvalues = np.sort(scipy.linalg.eigvalsh(laplacian))
    # A cyclic design of the same size scores about 0.04; random graphs about 13.
    assert eigenvalues[0] == pytest.approx(0, abs=1e-8)
    assert eigenvalues[1] > 5


def test_same_seed_same_design_other_seed_other_design():
    first = balanced_tuples(200, 4, 6, seed=5)
    again = balanced_tuples(200, 4, 6, seed=5)
    other = balanced_tuples(200, 4, 6, seed=6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    big = balanced_tuples(20_000, 5, 3, seed=5)
    np.testing.assert_array_equal(big, balanced_tuples(20_000, 5, 3, seed=5))
    np.testing.assert_array_equal(random_tuples(50, 4, 3, seed=9), random_tuples(50, 4, 3, seed=9))


def test_balanced_design_returns_tuples_and_notes():
    design = balanced_design(6, 4, 5, seed=2)
    assert isinstance(design, TupleDesign)
    tuples, notes = design
    np.testing.assert_array_equal(tuples, balanced_tuples(6, 4, 5, seed=2))
    assert any("only 5 others" in note for note in notes)
    assert balanced_design(1000, 4, 5, seed=2).notes == []


@settings(SLOW, max_examples=30)
@given(
    size=st.integers(2, 8),
    r=st.integers(1, 12),
    n_extra=st.integers(0, 3000),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_tuples_are_independent_and_distinct_within(size, r, n_extra, seed):
    n = size + n_extra
    tuples = random_tuples(n, size, r, seed=seed)
    assert tuples.dtype == np.int64
    assert tuples.shape == (math.ceil(n * r / size), size)
    assert tuples.min() >= 0 and tuples.max() < n
    assert (np.sort(tuples, axis=1)[:, 1:] != np.sort(tuples, axis=1)[:, :-1]).all()


def test_summary_on_a_hand_worked_design():
    tuples = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 1]])
    summary = design_summary(tuples, 5, notes=["hello"], added_tuples=1)
    assert summary.n_tuples == 3
    assert (summary.appearances_min, summary.appearances_max) == (0, 3)  # item 4 unused
    assert summary.pairs_total_possible == 10
    # Pairs: 01, 12 and 13 twice; 02, 03 and 23 once: six distinct, three repeated.
    assert summary.pairs_covered == 6
    assert summary.repeated_pairs == 3
    assert summary.max_pair_count == 2
    assert summary.min_pair_count == 0
    assert summary.pair_count_spread == 2
    assert summary.expected_pair_count == pytest.approx(9 / 10)
    # Item 1 sits in positions 1, 0, 2: once each; item 0 twice in 0..1 and never in 2.
    assert (summary.position_min, summary.position_max) == (0, 1)
    assert summary.position_spread == 1
    assert summary.duplicate_items == 0
    text = summary.format()
    assert "repeated pairs: 3" in text and "note: hello" in text and "tuples added: 1" in text
    assert summary.as_dict()["pairs_covered"] == 6


def test_summary_counts_tuples_with_an_item_twice():
    summary = design_summary(np.array([[0, 0, 1], [1, 2, 3]]), 4)
    assert summary.duplicate_items == 1
    with pytest.raises(DesignError):
        design_summary(np.array([[0, 5]]), 4)


def test_a_remembered_design_is_the_design_and_cannot_be_changed_through_a_copy():
    """Small designs are kept per process (a study of many same-shaped groups asks again):
    what comes back is what the search gives, and changing it changes no later answer."""
    first = design.balanced_design(6, 4, 5, seed=7)
    fresh = design._design(6, 4, 5, 7, False)
    assert np.array_equal(first.tuples, fresh.tuples) and first.notes == fresh.notes
    first.tuples[:] = 0
    first.notes.append("changed")
    again = design.balanced_design(6, 4, 5, seed=7)
    assert np.array_equal(again.tuples, fresh.tuples) and again.notes == fresh.notes
    assert again.tuples.flags.writeable
