"""Tuple designs for Best-Worst Scaling: which items each tuple shows, in which positions.

Pure numpy. ``balanced_tuples`` builds a balanced incomplete design in time close to linear
in ``n_items * appearances``:

* every item appears ``appearances`` times, or once more when ``n_items * appearances`` is
  not a multiple of ``tuple_size`` (``appearances`` is a true minimum);
* no item appears twice in a tuple;
* no pair of items meets twice while the design has room for it (whenever
  ``n_items - 1 >= 3 * r_max * (tuple_size - 1)``, r_max the largest appearance count, and
  in practice well below); otherwise pair counts are kept as even as a local search can
  make them (up to 3,000 items: no pair more than floor(mean) + 2 times). Above 3,000
  items only unused pairs are sought, which is what large, sparse designs need; a large
  design dense in pairs keeps some repeats and says so in its notes;
* every item sits in every position ``floor(r_i / T)`` or ``ceil(r_i / T)`` times;
* the co-occurrence graph is random, hence well connected (no cyclic constructions).

Construction: rounds of ``tuple_size`` columns (one column per position). In each block of
T rounds the items are dealt at random into T classes; in round j an item of class c goes
to column ``(c + j) mod T``, in a random order within the column, so each item visits every
position once per block. Leftover rounds (``appearances mod T``, plus the few extra slots)
deal each item onto consecutive columns cyclically, which keeps every column the same
length. Row k of the stacked columns is tuple k. Repairs only swap two entries of the same
column, which changes neither how often an item appears nor where: the few repeated pairs
of a large design are fixed in vectorised rounds against sorted pair codes, small designs
go through a local search on a dense pair-count matrix.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from .design_repair import PairSearch, pair_arrays, repair_sparse

__all__ = [
    "COVERAGE_MAX_TUPLES",
    "DesignError",
    "DesignSummary",
    "TupleDesign",
    "balanced_design",
    "balanced_tuples",
    "design_memory",
    "design_summary",
    "pair_coverage_lower_bound",
    "random_tuples",
]

# Up to this many items the pair counts are held in a dense n x n matrix (36 MB of int32)
# and repaired by local search; above it, repeats are rare and fixed against sorted codes.
DENSE_MAX_ITEMS = 3000
# design_memory: bytes kept per tuple (its ids as a Python list, the row) on top of 16 per
# position, and a fixed allowance for the interpreter's working set.
KEPT_PER_TUPLE = 400
DESIGN_OVERHEAD = 16 * 1024 * 1024
# Pair coverage of n items needs about n^2 / (T (T - 1)) tuples: refuse absurd requests.
COVERAGE_MAX_TUPLES = 5_000

SeedLike = int | np.random.Generator | None


class DesignError(ValueError):
    """A design that cannot be built from the given numbers; the message says why."""


class TupleDesign(NamedTuple):
    """Tuples (an int64 array, one row per tuple, items in position order) and notes."""

    tuples: np.ndarray
    notes: list[str]


@dataclass(frozen=True)
class DesignSummary:
    """Counts that show how balanced a design is (see ``design_summary``)."""

    n_items: int
    tuple_size: int
    n_tuples: int
    appearances_min: int
    appearances_max: int
    duplicate_items: int
    pairs_total_possible: int
    pairs_covered: int
    repeated_pairs: int
    max_pair_count: int
    min_pair_count: int
    pair_count_spread: int
    expected_pair_count: float
    position_min: int
    position_max: int
    position_spread: int
    added_tuples: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The summary as short human-readable lines."""
        covered = self.pairs_covered / self.pairs_total_possible if self.pairs_total_possible else 1
        lines = [
            f"tuples: {self.n_tuples:,} of {self.tuple_size} items over {self.n_items:,} items",
            f"appearances per item: min {self.appearances_min}, max {self.appearances_max}",
            f"pairs covered: {self.pairs_covered:,} of {self.pairs_total_possible:,}"
            f" ({covered:.1%})",
            f"repeated pairs: {self.repeated_pairs:,} (pair count max {self.max_pair_count},"
            f" min {self.min_pair_count}, spread {self.pair_count_spread};"
            f" mean {self.expected_pair_count:.3f})",
            f"position balance: each item {self.position_min} to {self.position_max} times"
            f" per position (largest spread within an item: {self.position_spread})",
        ]
        if self.duplicate_items:
            lines.append(f"tuples with an item twice: {self.duplicate_items:,}")
        if self.added_tuples:
            lines.append(f"tuples added: {self.added_tuples:,}")
        lines.extend(f"note: {note}" for note in self.notes)
        return lines

    def format(self) -> str:
        """The summary as one text block."""
        return "\n".join(self.lines())

    def as_dict(self) -> dict:
        """The summary as plain data (JSON-ready)."""
        return asdict(self)


# --------------------------------------------------------------------------- checks


def _check(n_items, tuple_size, appearances) -> tuple[int, int, int]:
    try:
        n, size, r = (operator.index(v) for v in (n_items, tuple_size, appearances))
    except TypeError as exc:
        raise DesignError("n_items, tuple_size and appearances must be integers") from exc
    if size < 2:
        raise DesignError(f"tuple_size must be at least 2, got {size}")
    if n < size:
        raise DesignError(f"{n} items cannot fill tuples of {size} distinct items")
    if r < 1:
        raise DesignError(f"appearances must be at least 1, got {r}")
    return n, size, r


def design_memory(
    pools: int | Sequence[int],
    tuple_size: int,
    appearances: int,
    *,
    method: str = "balanced_incomplete",
    ensure_pair_coverage: bool = False,
) -> int:
    """Bytes that designing tuples for ``pools`` (one item count, or one per instance)
    needs at its peak, design summary and the caller's rows of ids included: an upper
    estimate from the numbers alone, made before anything is allocated.

    Per tuple: the sparse repair's and the summary's pair codes (about 7 x 8 bytes per
    pair of positions), the rows and a Python list of ids, kept for every pool; per pool
    while it is designed: n x n pair-count tables below DENSE_MAX_ITEMS items, the sparse
    repair's proposals above. benchmarks/limits.py compares it with measured peaks.
    """
    sizes = [pools] if isinstance(pools, int) else list(pools)
    size, r = max(1, int(tuple_size)), max(0, int(appearances))
    pairs = size * (size - 1) // 2
    kept = 0
    working = 0
    for n in (max(0, int(v)) for v in sizes):
        if n == size and len(sizes) > 1:  # an instance that is its own tuple
            kept += KEPT_PER_TUPLE + 16 * size
            continue
        tuples = -(-n * r // size)
        kept += tuples * (KEPT_PER_TUPLE + 16 * size)
        if method == "random":
            extra = tuples * n * 16 if n <= 4 * size else 0
        elif ensure_pair_coverage:
            extra = 64 * n * n + COVERAGE_MAX_TUPLES * 64 * pairs
        elif n <= DENSE_MAX_ITEMS:
            extra = 32 * n * n
        else:
            extra = (1 << 18) * 32 * size
        working = max(working, tuples * 64 * pairs + extra)
    return DESIGN_OVERHEAD + kept + working


def pair_coverage_lower_bound(n_items: int, tuple_size: int) -> int:
    """Fewest tuples of tuple_size that can hold every pair of n_items (Schönheim bound)."""
    n, size, _ = _check(n_items, tuple_size, 1)
    return -(-n * -(-(n - 1) // (size - 1)) // size)


# --------------------------------------------------------------------------- random


def random_tuples(
    n_items: int, tuple_size: int, appearances: int, seed: SeedLike = None
) -> np.ndarray:
    """ceil(n*r/T) tuples drawn independently and uniformly, no item twice in a tuple."""
    n, size, r = _check(n_items, tuple_size, appearances)
    rng = np.random.default_rng(seed)
    m = -(-n * r // size)
    if n <= 4 * size:
        # Few items: rejection would be slow, so take the first T of a random order.
        return np.argsort(rng.random((m, n)), axis=1)[:, :size].astype(np.int64)
    out = rng.integers(0, n, size=(m, size), dtype=np.int64)
    while True:
        ordered = np.sort(out, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if bad.size == 0:
            return out
        out[bad] = rng.integers(0, n, size=(bad.size, size), dtype=np.int64)


# --------------------------------------------------------------------------- balanced


def balanced_tuples(
    n_items: int,
    tuple_size: int,
    appearances: int,
    seed: SeedLike = None,
    ensure_pair_coverage: bool = False,
) -> np.ndarray:
    """Balanced incomplete tuples as an (n_tuples, T) int64 array of item indices 0..n-1.

    See ``balanced_design`` for the guarantees; this returns its tuples only.
    """
    return balanced_design(
        n_items, tuple_size, appearances, seed=seed, ensure_pair_coverage=ensure_pair_coverage
    ).tuples


def balanced_design(
    n_items: int,
    tuple_size: int,
    appearances: int,
    seed: SeedLike = None,
    ensure_pair_coverage: bool = False,
) -> TupleDesign:
    """Balanced incomplete tuples with notes, as ``TupleDesign(tuples, notes)``.

    ``tuples`` has ceil(n * r / T) rows (more only with ``ensure_pair_coverage``), each T
    distinct item indices in position order. Every item appears r or r + 1 times, sits in
    each position floor(r_i / T) or ceil(r_i / T) times, and pairs meet as evenly as the
    design allows (never twice when n - 1 >= 3 r_max (T - 1), r_max = r + 1 when n r / T
    is not whole, else r). With ``ensure_pair_coverage``
    every pair meets at least once; tuples are added when r is too small for that, and a
    note says how many. ``notes`` are human-readable sentences (empty when nothing is worth
    saying). The same inputs and integer seed give the same tuples.

    Raises DesignError for impossible inputs, and for pair coverage that would need more
    than COVERAGE_MAX_TUPLES tuples.
    """
    n, size, r = _check(n_items, tuple_size, appearances)
    if isinstance(seed, int | np.integer) and n * r <= MEMO_MAX_APPEARANCES:
        # Small designs are kept per process: a study of many groups of the same shape, or
        # one imported again, asks for the same seeds again.
        rows, notes = _remembered_design(n, size, r, int(seed), bool(ensure_pair_coverage))
        return TupleDesign(rows.copy(), list(notes))
    return _design(n, size, r, seed, ensure_pair_coverage)


# The designs _remembered_design keeps: up to this many item appearances each (tens of kB).
MEMO_MAX_APPEARANCES = 5_000


@functools.lru_cache(maxsize=512)
def _remembered_design(
    n: int, size: int, r: int, seed: int, coverage: bool
) -> tuple[np.ndarray, tuple[str, ...]]:
    rows, notes = _design(n, size, r, seed, coverage)
    rows.setflags(write=False)
    return rows, tuple(notes)


def _design(n: int, size: int, r: int, seed: SeedLike, ensure_pair_coverage: bool) -> TupleDesign:
    rng = np.random.default_rng(seed)
    requested = -(-n * r // size)
    notes: list[str] = []
    if ensure_pair_coverage:
        rows, notes = _covering_design(n, size, requested, rng)
    else:
        rows = _build_rows(n, size, requested, rng)
        if n <= DENSE_MAX_ITEMS:
            if not PairSearch(rows, n, rng, coverage=False).run():
                notes.append(
                    "pair counts were evened out as far as the design work limit allows"
                    f" ({len(rows):,} tuples of {n:,} items)"
                )
        elif not repair_sparse(rows, n, rng):
            left = design_summary(rows, n).repeated_pairs
            if left:
                notes.append(f"{left:,} pairs meet more than once (the design is dense)")
        partners = (r + (1 if requested * size > n * r else 0)) * (size - 1)
        if partners > n - 1:
            notes.append(
                f"each item meets up to {partners} partners but has only {n - 1} others:"
                " some pairs meet more than once, as evenly as the design allows"
            )
    return TupleDesign(rows, notes)


def _covering_design(
    n: int, size: int, requested: int, rng: np.random.Generator
) -> tuple[np.ndarray, list[str]]:
    bound = pair_coverage_lower_bound(n, size)
    if bound > COVERAGE_MAX_TUPLES or n > DENSE_MAX_ITEMS:
        raise DesignError(
            f"pair coverage of {n:,} items in tuples of {size} needs at least {bound:,} tuples"
            f" (every item in at least {-(-(n - 1) // (size - 1)):,});"
            f" ensure_pair_coverage is limited to {COVERAGE_MAX_TUPLES:,} tuples"
        )
    # Random designs cover all pairs only some way above the bound, further for large
    # tuples: when r is too small, start there. Attempts grow by 15%; past 1.5 times the
    # bound the last attempt's uncovered pairs get tuples of their own instead.
    m = requested if requested >= bound else math.ceil(bound * (1 + 0.05 * (size - 2)))
    limit = max(m, math.ceil(1.5 * bound))
    while True:
        rows = _build_rows(n, size, m, rng)
        search = PairSearch(rows, n, rng, coverage=True)
        search.walk, search.uphill = 0.01, 0.0
        search.run(patience=50 + m // 16)
        if search.uncovered() == 0 or m >= limit:
            break
        m = min(limit, m + max(1, (3 * m) // 20))
    notes = []
    if search.uncovered():
        patched = _patch_coverage(rows, search.counts, rng)
        appearances = np.bincount(patched.ravel(), minlength=n)
        notes.append(
            f"pair coverage needs at least {bound:,} tuples; a balanced design of {m:,}"
            f" left {search.uncovered():,} pairs apart, so {len(patched) - m:,} tuples were"
            f" added for them: appearances now range {appearances.min()} to"
            f" {appearances.max()}"
        )
        rows = patched
    if len(rows) > requested:
        notes.insert(
            0,
            f"pair coverage needs at least {bound:,} tuples; added {len(rows) - requested:,}"
            f" to the {requested:,} asked for ({len(rows):,} in all)",
        )
    return rows, notes


def _patch_coverage(rows: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """rows plus greedy tuples that hold every pair still apart (counts: pair counts)."""
    counts = counts.copy()
    n = counts.shape[0]
    size = rows.shape[1]
    appearances = np.bincount(rows.ravel(), minlength=n)
    positions = np.bincount((rows * size + np.arange(size)).ravel(), minlength=n * size)
    positions = positions.reshape(n, size)
    np.fill_diagonal(counts, 1)
    added = []
    while True:
        apart = np.argwhere(np.triu(counts == 0))
        if apart.size == 0:
            break
        u, v = apart[rng.integers(len(apart))]
        members = [int(u), int(v)]
        while len(members) < size:
            gain = (counts[members] == 0).sum(axis=0).astype(np.float64)
            gain[members] = -np.inf
            # Most new pairs first, then the item seen least, then chance.
            score = gain * 4 * n - appearances + rng.random(n)
            members.append(int(np.argmax(score)))
        members = np.array(members)
        # Seat each member where it has sat least (an assignment over T positions).
        order = _seat(positions[members], rng)
        row = np.empty(size, dtype=np.int64)
        row[order] = members
        for i in members:
            counts[i, members] += 1
        appearances[members] += 1
        positions[row, np.arange(size)] += 1
        added.append(row)
    return np.vstack([rows, np.array(added)])


def _seat(load: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Position for each of T items, a permutation minimising their summed past loads."""
    # Every entry positive (a sparse matrix has no zero edges); adding 1 to all of them
    # changes no permutation's order. (scipy.sparse.csgraph rather than scipy.optimize,
    # whose import costs the command line a quarter of a second.)
    cost = load + rng.random(load.shape) * 0.1 + 1.0
    rows, cols = min_weight_full_bipartite_matching(csr_matrix(cost))
    return cols[np.argsort(rows)]


def _build_rows(n: int, size: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """m rows of `size` items with equitable positions; rows may still repeat items."""
    base, extra = divmod(m * size, n)  # `extra` items appear base + 1 times
    blocks, rest = divmod(base, size)
    ctype = np.int8 if size < 128 else np.int32
    columns: list[list[np.ndarray]] = [[] for _ in range(size)]

    def deal(participants: np.ndarray, column: np.ndarray) -> None:
        # Stable sort of a random order by column: each column gets its items shuffled.
        shuffle = rng.permutation(participants.size)
        participants, column = participants[shuffle], column[shuffle]
        order = np.argsort(column, kind="stable")
        bounds = np.searchsorted(column[order], np.arange(size + 1))
        items = participants[order]
        for p in range(size):
            columns[p].append(items[bounds[p] : bounds[p + 1]])

    everyone = np.arange(n, dtype=np.int64)
    for _ in range(blocks):
        classes = np.empty(n, dtype=ctype)
        classes[rng.permutation(n)] = np.arange(n) % size
        for j in range(size):
            deal(everyone, (classes + j) % size)
    if rest or extra:
        order = rng.permutation(n)
        lengths = np.where(np.arange(n) < extra, rest + 1, rest)
        start = ((np.cumsum(lengths) - lengths) % size).astype(ctype)
        for j in range(rest + 1):
            taking = lengths > j
            if taking.any():
                deal(order[taking], (start[taking] + j) % size)
    rows = np.column_stack([np.concatenate(parts) for parts in columns])
    assert rows.shape == (m, size)
    return rows


# --------------------------------------------------------------------------- summary


def design_summary(
    tuples: np.ndarray,
    n_items: int,
    *,
    notes: list[str] | tuple[str, ...] = (),
    added_tuples: int = 0,
) -> DesignSummary:
    """Appearance, pair and position counts of a design (tuples as item indices 0..n-1)."""
    rows = np.asarray(tuples, dtype=np.int64)
    if rows.ndim != 2 or rows.shape[1] < 2:
        raise DesignError("tuples must be a 2-D array with at least 2 items per tuple")
    n = operator.index(n_items)
    m, size = rows.shape
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise DesignError(f"item indices must lie in 0..{n - 1}")
    appearances = np.bincount(rows.ravel(), minlength=n)
    positions = np.bincount((rows * size + np.arange(size)).ravel(), minlength=n * size)
    positions = positions.reshape(n, size)
    lo, hi = pair_arrays(rows)
    same = lo == hi
    codes = np.sort((lo * n + hi)[~same])
    total = n * (n - 1) // 2
    if codes.size:
        starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
        runs = np.diff(np.append(starts, codes.size))
        covered, repeated, top = starts.size, int((runs > 1).sum()), int(runs.max())
        low = int(runs.min()) if covered == total else 0
    else:
        covered = repeated = top = low = 0
    return DesignSummary(
        n_items=n,
        tuple_size=size,
        n_tuples=m,
        appearances_min=int(appearances.min()),
        appearances_max=int(appearances.max()),
        duplicate_items=int(same.any(axis=1).sum()),
        pairs_total_possible=total,
        pairs_covered=int(covered),
        repeated_pairs=repeated,
        max_pair_count=top,
        min_pair_count=low,
        pair_count_spread=top - low,
        expected_pair_count=codes.size / total if total else 0.0,
        position_min=int(positions.min()),
        position_max=int(positions.max()),
        position_spread=int((positions.max(axis=1) - positions.min(axis=1)).max()),
        added_tuples=int(added_tuples),
        notes=list(notes),
    )
