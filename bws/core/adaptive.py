"""Adaptive and iterative tuple designs for Best-Worst Scaling: the next batch of tuples
designed from the current fit.

Pure numpy. A study starts from ``design.balanced_tuples`` (r0 appearances per item);
after each scoring run the platform asks for the next batch:

* ``adaptive_batch``: items are drawn with probability rising with how uncertain their
  rank is (``rank_uncertainty``: the expected number of items they would swap places
  with, from the fit's scores and posterior standard deviations), squared (an item's
  expected squared rank error) and divided by how often they have been seen (what one
  more appearance takes off it); the drawn items are laid out so that each tuple holds
  items close in a draw from the posterior (u + sd * z), i.e. items whose order is still
  in doubt. benchmarks/adaptive.py measures what this saves (RESULTS.md, "Adaptive
  designs").
* ``iterative_round``: iterative BWS as Potato's ``ibws_manager`` does it (after the
  "Baby Bear" paper): every item once per round, in tuples drawn inside score buckets
  (the items sorted by the current scores and cut into ``n_buckets`` equal buckets,
  doubling each round), at random within a bucket.

Both keep the guarantees a design needs, against the whole history (``DesignState``):

* no item appears more than ``max_appearances`` times in all, and at most once a batch;
* no pair of items meets twice, neither within the batch nor with any earlier tuple
  (a tuple that cannot be repaired by swaps is left out: the batch is smaller, never
  wrong);
* positions stay equitable: each item is seated only in a position where it has sat the
  fewest times so far, so an item whose position counts differ by at most 1 (what
  ``balanced_tuples`` gives) keeps them within 1;
* the same inputs and seed give the same batch.

Construction: a batch of k tuples is built by columns (one per position). The drawn items
are dealt into T columns of k, each into a position it has sat in least; each column is
sorted by the posterior draw and row j takes the j-th item of every column, so a row holds
items of about the same standing. Repeated pairs are repaired by swapping two entries of
one column between nearby rows (which moves no item to another position).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np
from scipy.special import ndtr

__all__ = [
    "DesignState",
    "adaptive_batch",
    "batch_by_value",
    "batch_problems",
    "iterative_round",
    "rank_uncertainty",
    "score_density",
    "topped_up",
]

# Rows a repeated pair's row may swap an entry with (each side, in score order).
REPAIR_REACH = 16
# rank_uncertainty sums over every neighbour up to EXACT_OFFSETS places away in score
# order, and beyond at about RANK_OFFSETS geometric offsets per side.
EXACT_OFFSETS = 32
RANK_OFFSETS = 48
# An item never scored (NaN sd) counts as this uncertain, on the log-odds scale.
UNSEEN_SD = 2.0
# topped_up's last resort searches tuples among at most this many of the least-served
# items at a time; below it the search is exhaustive (an empty answer is then a proof
# that no tuple of the items left keeps the rules).
FILL_POOL = 64
# Nodes the search of one tuple may visit when the pool is cut to FILL_POOL items (it
# then tries FILL_TRIES random pools before giving up).
FILL_BUDGET = 20_000
FILL_TRIES = 8


@dataclass(frozen=True, eq=False)
class DesignState:
    """What a design has already used: per item its appearances and position counts, and
    the sorted codes (lo * n_items + hi) of every pair that has met in a tuple."""

    n_items: int
    tuple_size: int
    appearances: np.ndarray  # (n,) int64
    positions: np.ndarray  # (n, T) int64: times item i sat in position p
    pair_codes: np.ndarray  # sorted unique int64 codes

    @classmethod
    def empty(cls, n_items: int, tuple_size: int) -> DesignState:
        return cls.from_tuples(np.empty((0, tuple_size), dtype=np.int64), n_items)

    @classmethod
    def from_tuples(cls, tuples: np.ndarray, n_items: int) -> DesignState:
        """The state after the tuples (an (m, T) array of item indices, in position order)."""
        tuples = np.asarray(tuples, dtype=np.int64)
        if tuples.ndim != 2 or tuples.shape[1] < 2:
            raise ValueError(f"tuples must be an (m, T) array with T >= 2, got {tuples.shape}")
        size = tuples.shape[1]
        if tuples.size and (tuples.min() < 0 or tuples.max() >= n_items):
            raise ValueError(f"item indices must lie in 0..{n_items - 1}")
        appearances = np.bincount(tuples.ravel(), minlength=n_items).astype(np.int64)
        positions = np.bincount(
            (tuples * size + np.arange(size)).ravel(), minlength=n_items * size
        ).reshape(n_items, size)
        return cls(n_items, size, appearances, positions, np.unique(pair_codes(tuples, n_items)))

    def extended(self, tuples: np.ndarray) -> DesignState:
        """The state after these further tuples."""
        tuples = np.asarray(tuples, dtype=np.int64).reshape(-1, self.tuple_size)
        size = self.tuple_size
        extra = np.bincount(
            (tuples * size + np.arange(size)).ravel(), minlength=self.n_items * size
        ).reshape(self.n_items, size)
        codes = np.union1d(self.pair_codes, pair_codes(tuples, self.n_items))
        return DesignState(
            self.n_items,
            size,
            self.appearances + extra.sum(axis=1),
            self.positions + extra,
            codes,
        )

    def seen(self, codes: np.ndarray) -> np.ndarray:
        """Whether each pair code has already met."""
        if self.pair_codes.size == 0:
            return np.zeros(np.shape(codes), dtype=bool)
        at = np.searchsorted(self.pair_codes, codes).clip(max=self.pair_codes.size - 1)
        return self.pair_codes[at] == codes


def pair_codes(tuples: np.ndarray, n_items: int) -> np.ndarray:
    """Codes lo * n_items + hi of every within-tuple pair, shape (m, T (T - 1) / 2)."""
    i, j = np.triu_indices(tuples.shape[1], 1)
    left, right = tuples[:, i], tuples[:, j]
    return np.minimum(left, right) * n_items + np.maximum(left, right)


def rank_uncertainty(scores: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per item, the expected number of other items it would swap places with under the
    fit's normal posterior: sum over j of P(order of i and j reversed), a count of items.

    Summed over neighbours in score order at geometric offsets (each standing for the
    offsets up to the next), so it costs O(n log n); exact up to 33 items, and for every
    neighbour up to 32 places away.
    """
    u, s = _clean(scores, sd)
    n = u.size
    if n < 2:
        return np.zeros(n)
    order = np.argsort(u, kind="stable")
    su, ss = u[order], s[order]
    near = np.arange(1, min(n, EXACT_OFFSETS + 1))
    far = np.geomspace(EXACT_OFFSETS, max(n - 1, EXACT_OFFSETS), RANK_OFFSETS).astype(np.int64)
    offsets = np.union1d(near, far[far < n])
    widths = np.diff(np.append(offsets, n))
    total = np.zeros(n)
    for d, w in zip(offsets, widths, strict=True):
        gap = su[d:] - su[:-d]
        spread = np.sqrt(ss[d:] ** 2 + ss[:-d] ** 2)
        p = w * ndtr(-gap / spread)
        total[:-d] += p
        total[d:] += p
    out = np.empty(n)
    out[order] = total
    return out


def score_density(scores: np.ndarray) -> np.ndarray:
    """Per item, the density of the scores around it (items per unit of score), from the
    spacing of the sqrt(n) neighbours on either side in score order."""
    u = np.asarray(scores, dtype=float)
    n = u.size
    if n < 3:
        return np.ones(n)
    h = max(2, int(np.sqrt(n)))
    order = np.argsort(u, kind="stable")
    su = u[order]
    rank = np.arange(n)
    hi, lo = np.minimum(rank + h, n - 1), np.maximum(rank - h, 0)
    spread = np.maximum(su[hi] - su[lo], 1e-9)
    out = np.empty(n)
    out[order] = (hi - lo) / spread
    return out


def adaptive_batch(
    scores: np.ndarray,
    sd: np.ndarray,
    state: DesignState,
    *,
    batch_tuples: int,
    max_appearances: int,
    seed: int,
    sharpness: float = 1.0,
    jitter: float = 1.0,
    allocation: str = "uncertainty",
) -> np.ndarray:
    """The next batch of at most ``batch_tuples`` tuples, (k, T) int64 item indices in
    position order, designed from the current fit (``scores`` on the log-odds scale and
    their posterior ``sd``, NaN for items never scored).

    Items are drawn without replacement with probability proportional to
    (rank_uncertainty ** 2 / (appearances + 1)) ** sharpness among those below
    ``max_appearances`` (``allocation="density"``: (score_density / (appearances + 1)) **
    sharpness, appearances in proportion to the density of the scores); each tuple holds
    items close in the draw u + jitter * sd * z (z standard normal; jitter 1 measured
    best, against 0.3 and 1000). The guarantees are those of the module docstring; fewer
    tuples come back when too few items are eligible or a repeated pair cannot be repaired
    (``topped_up`` fills a short batch). Deterministic from the inputs and seed.
    """
    u, s = _clean(scores, sd)
    _check_state(state, u)
    rng = np.random.default_rng(seed)
    eligible = state.appearances < max_appearances
    if allocation == "density":
        # Appearances in proportion to the density of the scores at each item (what
        # minimises the summed squared rank error when an item's variance falls as one
        # over its appearances): the items with the fewest appearances per unit density.
        value = score_density(u) / (state.appearances + 1.0)
    elif allocation == "uncertainty":
        value = rank_uncertainty(u, s) ** 2 / (state.appearances + 1.0)
    else:
        raise ValueError(f"unknown allocation {allocation!r}")
    return batch_by_value(value, u, s, state, eligible, batch_tuples, rng, sharpness, jitter)


def batch_by_value(value, u, s, state, eligible, batch_tuples, rng, sharpness=1.0, jitter=1.0):
    """The batch of items drawn without replacement with probability proportional to
    ``value ** sharpness`` among the ``eligible``, laid out by closeness in the posterior
    draw u + jitter * s * z (the construction of the module docstring)."""
    with np.errstate(divide="ignore"):
        keys = sharpness * np.log(np.maximum(value, 1e-300)) + rng.gumbel(size=u.size)
    keys[~eligible] = -np.inf
    candidates = np.argsort(-keys, kind="stable")[: int(eligible.sum())]
    draw = u + jitter * s * rng.standard_normal(u.size)
    return _batch(candidates, draw, state, batch_tuples, rng)


def iterative_round(
    scores: np.ndarray,
    state: DesignState,
    *,
    n_buckets: int,
    max_appearances: int,
    seed: int,
) -> np.ndarray:
    """One round of iterative BWS: every eligible item once, in tuples drawn at random
    inside ``n_buckets`` equal buckets of the items sorted by ``scores`` (Potato's bucketed
    rounds; it doubles the buckets each round). (k, T) int64 item indices in position
    order, with the guarantees of the module docstring.
    """
    u, _ = _clean(scores, np.zeros(np.shape(scores)))
    _check_state(state, u)
    if n_buckets < 1:
        raise ValueError("n_buckets must be at least 1")
    rng = np.random.default_rng(seed)
    n, size = u.size, state.tuple_size
    order = np.lexsort((rng.random(n), u))
    bucket = np.empty(n, dtype=np.int64)
    bucket[order] = np.arange(n) * min(n_buckets, max(1, n // size)) // n
    eligible = np.flatnonzero(state.appearances < max_appearances)
    parts = []
    for b in np.unique(bucket[eligible]):
        members = eligible[bucket[eligible] == b]
        candidates = members[rng.permutation(members.size)]
        parts.append(_batch(candidates, rng.random(n), state, members.size // size, rng))
    if not parts:
        return np.empty((0, size), dtype=np.int64)
    rows = np.vstack(parts)
    # Buckets were designed apart; pairs across them cannot meet, so only the history
    # (checked per bucket) and each bucket's own rows matter.
    return rows


def topped_up(
    rows: np.ndarray,
    scores: np.ndarray,
    sd: np.ndarray,
    state: DesignState,
    *,
    batch_tuples: int,
    max_appearances: int,
    seed: int,
) -> np.ndarray:
    """``rows`` (a batch designed against ``state``) with further tuples up to
    ``batch_tuples``, so that a batch comes back short only when the design rules leave no
    other choice. Two fallbacks, each from the items not yet in the batch and below
    ``max_appearances``:

    1. closeness relaxed: the items drawn as ``adaptive_batch`` draws them, but laid out
       at random rather than close in the fit (fewer repeated pairs to repair);
    2. balanced tuples of the under-served items: tuples built one by one from the items
       with the fewest appearances, by a search over items that have not met and a seating
       of each in one of its least-used positions. The search is exhaustive while at most
       FILL_POOL items are left, so an empty batch then proves that no tuple of them keeps
       the rules; with more it tries FILL_TRIES pools of FILL_POOL items.

    The guarantees of the module docstring hold for the whole batch (each item at most once
    in it). Deterministic from the inputs and seed."""
    size = state.tuple_size
    rows = np.asarray(rows, dtype=np.int64).reshape(-1, size)
    want = int(batch_tuples) - rows.shape[0]
    if want <= 0:
        return rows
    u, s = _clean(scores, sd)
    _check_state(state, u)
    rng = np.random.default_rng([int(seed), 0x70F])
    after = state.extended(rows)
    free = after.appearances < max_appearances
    free[rows.ravel()] = False
    # 1. the uncertainty draw, laid out at random
    value = rank_uncertainty(u, s) ** 2 / (after.appearances + 1.0)
    with np.errstate(divide="ignore"):
        keys = np.log(np.maximum(value, 1e-300)) + rng.gumbel(size=u.size)
    keys[~free] = -np.inf
    candidates = np.argsort(-keys, kind="stable")[: int(free.sum())]
    extra = _batch(candidates, rng.random(u.size), after, want, rng)
    if extra.shape[0]:
        rows = np.vstack([rows, extra])
        after = after.extended(extra)
        free[extra.ravel()] = False
    # 2. balanced tuples of the under-served items
    found = []
    while len(found) < want - extra.shape[0]:
        row = _find_tuple(np.flatnonzero(free), after, rng)
        if row is None:
            break
        found.append(row)
        after = after.extended(row[None, :])
        free[row] = False
    if found:
        rows = np.vstack([rows, np.array(found, dtype=np.int64)])
    return rows


def batch_problems(
    batch: np.ndarray, state: DesignState, *, max_appearances: int, exempt=None
) -> list[str]:
    """What a batch breaks, against the history in ``state``, as sentences (empty: none).
    ``exempt``: an item or items not held to ``max_appearances`` (a threshold's reference
    item, the items of chosen comparisons: ``targets.exempt_items``); every other rule holds
    for them too."""
    batch = np.asarray(batch, dtype=np.int64).reshape(-1, state.tuple_size)
    problems = []
    if batch.size == 0:
        return problems
    ordered = np.sort(batch, axis=1)
    if (ordered[:, 1:] == ordered[:, :-1]).any():
        problems.append("a tuple holds an item twice")
    after = state.extended(batch)
    over = np.flatnonzero(after.appearances > max_appearances)
    if exempt is not None:
        over = np.setdiff1d(over, np.asarray(exempt, dtype=np.int64).ravel())
    if over.size:
        problems.append(f"{over.size} items appear more than {max_appearances} times")
    codes = pair_codes(batch, state.n_items).ravel()
    if np.unique(codes).size < codes.size:
        problems.append("a pair meets twice within the batch")
    if state.seen(codes).any():
        problems.append("a pair meets again that met in an earlier tuple")
    before = state.positions.max(axis=1) - state.positions.min(axis=1)
    spread = after.positions.max(axis=1) - after.positions.min(axis=1)
    if (spread > np.maximum(before, 1)).any():
        problems.append("an item's position counts now differ by more than before (or 1)")
    return problems


# --------------------------------------------------------------------------- internals


def _clean(scores, sd) -> tuple[np.ndarray, np.ndarray]:
    u = np.asarray(scores, dtype=float).copy()
    s = np.asarray(sd, dtype=float).copy()
    if u.ndim != 1 or s.shape != u.shape:
        raise ValueError("scores and sd must be 1-d arrays of the same length")
    u[~np.isfinite(u)] = 0.0
    s[~np.isfinite(s)] = UNSEEN_SD
    return u, np.maximum(s, 1e-9)


def _check_state(state: DesignState, u: np.ndarray) -> None:
    if state.n_items != u.size:
        raise ValueError(f"the design has {state.n_items} items, the fit {u.size}")


def _batch(
    candidates: np.ndarray,
    draw: np.ndarray,
    state: DesignState,
    batch_tuples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    size = state.tuple_size
    k = min(int(batch_tuples), candidates.size // size)
    if k <= 0:
        return np.empty((0, size), dtype=np.int64)
    columns = _deal(candidates, state.positions, k, rng)
    k = min(len(c) for c in columns)
    if k == 0:
        return np.empty((0, size), dtype=np.int64)
    rows = np.column_stack([c[:k][np.argsort(draw[c[:k]], kind="stable")] for c in columns])
    # Rows in the order of their standing, so nearby rows are near in score.
    rows = rows[np.argsort(draw[rows].mean(axis=1), kind="stable")]
    return _repair_pairs(rows, state, rng)


def _deal(
    candidates: np.ndarray, positions: np.ndarray, k: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Up to k items per column, in candidate order, each in a position it has sat in
    least. When an item's least-used columns are full, an item already there moves to
    another of its own least-used columns with room; failing that, the item is passed
    over (it waits for a later batch)."""
    size = positions.shape[1]
    least = positions == positions.min(axis=1, keepdims=True)
    fill = np.zeros(size, dtype=np.int64)
    taken: list[list[int]] = [[] for _ in range(size)]
    tiebreak = rng.random((candidates.size, size))
    for index, item in enumerate(candidates):
        room = least[item] & (fill < k)
        if room.any():
            # The emptiest allowed column, at random among equals.
            column = int(np.argmin(np.where(room, fill + tiebreak[index], np.inf)))
        else:
            column = _make_room(int(item), least, fill, taken, k)
            if column < 0:
                continue
        taken[column].append(int(item))
        fill[column] += 1
        if (fill == k).all():
            break
    return [np.array(t, dtype=np.int64) for t in taken]


def _make_room(item: int, least: np.ndarray, fill: np.ndarray, taken, k: int) -> int:
    """Free a place for item in one of its least-used columns by a chain of moves, each
    item moved to another of its own least-used columns, ending in a column with room (a
    breadth-first search over the T columns); the freed column, or -1."""
    parent: dict[int, tuple[int, int] | None] = {int(c): None for c in np.flatnonzero(least[item])}
    queue = list(parent)
    while queue:
        a = queue.pop(0)
        for b in range(fill.size):
            if b in parent:
                continue
            mover = next((x for x in taken[a] if least[x, b]), None)
            if mover is None:
                continue
            parent[b] = (a, mover)
            if fill[b] < k:
                # Shift along the chain, from the column with room back to the start.
                fill[b] += 1
                while parent[b] is not None:
                    a, mover = parent[b]
                    taken[a].remove(mover)
                    taken[b].append(mover)
                    b = a
                fill[b] -= 1
                return b
            queue.append(b)
    return -1


def _repair_pairs(rows: np.ndarray, state: DesignState, rng: np.random.Generator) -> np.ndarray:
    """Rows without a pair met before or twice among them: entries of one column swapped
    between nearby rows; rows still bad afterwards are dropped."""
    m = rows.shape[0]
    book = _PairBook(rows.copy(), state)
    codes = pair_codes(book.rows, state.n_items)
    bad = state.seen(codes).any(axis=1)
    repeated = [code for code, c in book.counts.items() if c > 1]
    if repeated:
        bad |= np.isin(codes, np.array(repeated, dtype=np.int64)).any(axis=1)
    dropped = np.zeros(m, dtype=bool)
    reach = np.arange(1, REPAIR_REACH + 1)
    for a in np.flatnonzero(bad):
        if not book.bad(a):
            continue
        partners = np.concatenate([a + reach, a - reach])
        partners = partners[(partners >= 0) & (partners < m)]
        partners = partners[~dropped[partners]]
        if not any(book.try_swap(a, b, rng) for b in partners[rng.permutation(partners.size)]):
            dropped[a] = True
            book.count(a, -1)
    # Accepted swaps never create a repeat and drops only lower counts: the rest are clean.
    out = book.rows[~dropped]
    final = pair_codes(out, state.n_items)
    assert not state.seen(final).any() and np.unique(final).size == final.size
    return out


def _find_tuple(pool: np.ndarray, state: DesignState, rng: np.random.Generator):
    """One tuple of items from ``pool`` (in position order) whose pairs have not met, each
    seated in a position it has sat in least; the least-served items first. None when
    there is none (certain when the pool has at most FILL_POOL items)."""
    size = state.tuple_size
    if pool.size < size:
        return None
    # The least-served first, at random among equals.
    pool = pool[np.lexsort((rng.random(pool.size), state.appearances[pool]))]
    if pool.size <= FILL_POOL:
        return _search_tuple(pool, state, budget=None)
    for attempt in range(FILL_TRIES):
        if attempt == 0:
            part = pool[:FILL_POOL]
        else:
            part = np.sort(rng.choice(pool.size, FILL_POOL, replace=False))
            part = pool[part]
        row = _search_tuple(part, state, budget=FILL_BUDGET)
        if row is not None:
            return row
    return None


def _search_tuple(pool: np.ndarray, state: DesignState, budget: int | None):
    """Depth-first search for ``size`` items of ``pool`` that have not met pairwise and can
    be seated in distinct least-used positions; in pool order, so the first found uses
    the earliest items. None when none is found (within ``budget`` nodes)."""
    size, p = state.tuple_size, pool.size
    i, j = np.triu_indices(p, 1)
    lo, hi = np.minimum(pool[i], pool[j]), np.maximum(pool[i], pool[j])
    met = np.zeros((p, p), dtype=bool)
    met[i, j] = met[j, i] = state.seen(lo * state.n_items + hi)
    positions = state.positions[pool]
    least = positions == positions.min(axis=1, keepdims=True)
    seatings = [np.array(order) for order in _permutations(size)]
    nodes = 0

    def seat(chosen: list[int]):
        for order in seatings:
            if all(least[c, q] for c, q in zip(chosen, order, strict=True)):
                return order
        return None

    def extend(chosen: list[int], allowed: np.ndarray):
        nonlocal nodes
        nodes += 1
        if budget is not None and nodes > budget:
            return None
        if len(chosen) == size:
            order = seat(chosen)
            if order is None:
                return None
            row = np.empty(size, dtype=np.int64)
            row[order] = pool[chosen]
            return row
        start = chosen[-1] + 1 if chosen else 0
        for c in range(start, p - (size - len(chosen)) + 1):
            if not allowed[c]:
                continue
            # The positions the chosen items (and c) could take must be enough for them.
            if np.count_nonzero(least[chosen + [c]].any(axis=0)) < len(chosen) + 1:
                continue
            found = extend(chosen + [c], allowed & ~met[c])
            if found is not None or (budget is not None and nodes > budget):
                return found
        return None

    return extend([], np.ones(p, dtype=bool))


def _permutations(size: int) -> list[tuple[int, ...]]:
    return list(permutations(range(size)))


class _PairBook:
    """Rows of a batch and the counts of their pair codes, changed by column swaps."""

    def __init__(self, rows: np.ndarray, state: DesignState):
        self.rows, self.state, self.n = rows, state, state.n_items
        self.counts: dict[int, int] = {}
        for code in pair_codes(rows, self.n).ravel().tolist():
            self.counts[code] = self.counts.get(code, 0) + 1

    def codes(self, a: int) -> np.ndarray:
        return pair_codes(self.rows[a][None, :], self.n).ravel()

    def count(self, a: int, sign: int) -> None:
        for code in self.codes(a).tolist():
            self.counts[code] = self.counts.get(code, 0) + sign

    def bad(self, a: int) -> bool:
        c = self.codes(a)
        return bool(self.state.seen(c).any()) or any(self.counts.get(x, 0) > 1 for x in c.tolist())

    def swap(self, a: int, b: int, p: int) -> None:
        self.count(a, -1)
        self.count(b, -1)
        self.rows[[a, b], p] = self.rows[[b, a], p]
        self.count(a, 1)
        self.count(b, 1)

    def try_swap(self, a: int, b: int, rng: np.random.Generator) -> bool:
        """Swap one column of rows a and b if that leaves both clean; whether it did."""
        for p in rng.permutation(self.rows.shape[1]):
            x, y = self.rows[a, p], self.rows[b, p]
            if y in self.rows[a] or x in self.rows[b]:
                continue
            self.swap(a, b, p)
            if not self.bad(a) and not self.bad(b):
                return True
            self.swap(a, b, p)
        return False
