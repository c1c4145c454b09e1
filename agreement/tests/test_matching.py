"""One-to-one matching: the most pairs at or above the threshold, then the highest total IoU."""

from itertools import permutations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from agreement.core.matching import match_objects


def _greedy(iou, threshold):
    """Highest IoU first, each object once: the usual shortcut, for comparison."""
    taken_rows, taken_cols, pairs = set(), set(), []
    for flat in np.argsort(-iou, axis=None):
        i, j = np.unravel_index(flat, iou.shape)
        if iou[i, j] >= threshold and i not in taken_rows and j not in taken_cols:
            pairs.append((i, j))
            taken_rows.add(i)
            taken_cols.add(j)
    return pairs


def test_optimal_matching_finds_more_pairs_than_greedy():
    iou = np.array([[0.9, 0.8], [0.8, 0.1]])
    assert len(_greedy(iou, 0.5)) == 1  # greedy takes 0.9 and strands both 0.8s
    rows, cols = match_objects(iou, 0.5)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 1), (1, 0)]
    assert iou[rows, cols].sum() == 1.6


def test_among_equal_counts_the_highest_total_wins():
    iou = np.array([[0.6, 0.7], [0.9, 0.6]])
    rows, cols = match_objects(iou, 0.5)
    assert iou[rows, cols].sum() == 0.7 + 0.9


def test_pairs_under_the_threshold_are_never_matched():
    iou = np.array([[0.49, 0.2], [0.1, 0.3]])
    rows, cols = match_objects(iou, 0.5)
    assert len(rows) == 0 and len(cols) == 0


def test_a_pair_exactly_at_the_threshold_is_matched():
    rows, _ = match_objects(np.array([[0.25]]), 0.25)
    assert rows.tolist() == [0]


def test_forbidden_pairs_stay_apart():
    iou = np.array([[0.9, 0.6], [0.6, 0.0]])
    allowed = np.array([[False, True], [True, True]])
    rows, cols = match_objects(iou, 0.5, allowed)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 1), (1, 0)]


def test_empty_matrices():
    for shape in [(0, 0), (0, 3), (2, 0)]:
        rows, cols = match_objects(np.zeros(shape), 0.5)
        assert rows.size == 0 and cols.size == 0


def _brute_force(iou, threshold):
    n, m = iou.shape
    best = (0, 0.0)
    if n <= m:
        for perm in permutations(range(m), n):
            values = [iou[i, perm[i]] for i in range(n) if iou[i, perm[i]] >= threshold]
            best = max(best, (len(values), sum(values)))
    else:
        for perm in permutations(range(n), m):
            values = [iou[perm[j], j] for j in range(m) if iou[perm[j], j] >= threshold]
            best = max(best, (len(values), sum(values)))
    return best


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.integers(1, 5).flatmap(
            lambda m: arrays(float, (n, m), elements=st.sampled_from([0.0, 0.2, 0.5, 0.6, 0.9]))
        )
    ),
)
def test_count_then_total_equals_brute_force(iou):
    rows, cols = match_objects(iou, 0.5)
    assert len(set(rows.tolist())) == len(rows) and len(set(cols.tolist())) == len(cols)
    assert np.all(iou[rows, cols] >= 0.5)
    count, total = _brute_force(iou, 0.5)
    assert len(rows) == count
    assert abs(iou[rows, cols].sum() - total) < 1e-9


def test_equal_assignments_prefer_the_marked_pairs():
    iou = np.array([[1.0, 1.0]])
    rows, cols = match_objects(iou, 0.5, prefer=np.array([[False, True]]))
    assert cols.tolist() == [1]
    rows, cols = match_objects(iou, 0.5, prefer=np.array([[True, False]]))
    assert cols.tolist() == [0]
