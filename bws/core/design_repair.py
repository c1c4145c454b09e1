"""Repairs of a tuple design: swaps within columns that make pair counts even.

Every repair swaps two entries of the same column, so it changes neither how often an item
appears nor in which positions (the guarantees ``bws.core.design`` builds in). Small
designs go through a local search on a dense pair-count matrix (``PairSearch``); the few
repeated pairs of a large design are fixed in vectorised rounds against sorted pair codes
(``repair_sparse``). Pure numpy.
"""

from __future__ import annotations

import numpy as np

# A cold pair's candidate moves are listed in full up to this many (appearances of one
# item times the other's), sampled above it.
JOIN_SAMPLE_ABOVE = 1 << 16
# The dense local search stops after about this many row entries scanned (some seconds),
# and never before SEARCH_MIN_STEPS steps.
SEARCH_WORK = 150_000_000
SEARCH_MIN_STEPS = 2_000
BREAK_CANDIDATES = 2048  # rows tried as partners when a pair meets too often

_INVALID = np.iinfo(np.int64).max


def row_duplicates(rows: np.ndarray) -> np.ndarray:
    ordered = np.sort(rows, axis=1)
    return (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)


def fix_duplicates(rows: np.ndarray, rng: np.random.Generator) -> None:
    """Make every row hold distinct items, swapping only within columns (a Kempe chain).

    For a row a holding x twice, pick a row b without x and without duplicates, swap
    column p (one place of x) between a and b; if the item that came into a already sat
    elsewhere in a, continue at that column. The chain touches only rows a and b, visits no
    column twice and ends with both rows duplicate-free.
    """
    bad = row_duplicates(rows)
    size = rows.shape[1]
    for a in np.flatnonzero(bad):
        for _ in range(size):
            row = rows[a]
            same = row[:, None] == row[None, :]
            np.fill_diagonal(same, False)
            dup_cols = np.flatnonzero(same.any(axis=1))
            if dup_cols.size == 0:
                break
            p = int(dup_cols[0])
            x = row[p]
            free = ~(rows == x).any(axis=1)
            candidates = np.flatnonzero(free & ~bad)
            if candidates.size == 0:
                candidates = np.flatnonzero(free)
            b = int(candidates[rng.integers(candidates.size)])
            for _ in range(size):
                rows[a, p], rows[b, p] = rows[b, p], rows[a, p]
                again = np.flatnonzero(rows[a] == rows[a, p])
                again = again[again != p]
                if again.size == 0:
                    break
                p = int(again[0])
        bad[a] = False


# --------------------------------------------------------------------------- dense search


class PairSearch:
    """Local search on a dense pair-count matrix: swaps within columns make counts even.

    Cost is the sum of squared pair counts (plus a penalty per uncovered pair when pair
    coverage is asked for). With P pair slots over K pairs, q = P // K, the optimum has
    every count q or q + 1: a pair is hot at q + 2 or more, cold at q - 1 or less. Each
    step takes a hot pair and moves one of its items out of a tuple they share, or a cold
    pair and moves one item into a tuple of the other, choosing the swap that lowers the
    cost most among all candidates (random walk now and then).
    """

    def __init__(self, rows: np.ndarray, n: int, rng: np.random.Generator, coverage: bool):
        fix_duplicates(rows, rng)
        self.rows, self.n, self.rng, self.coverage = rows, n, rng, coverage
        self.walk, self.uphill = 0.03, 0.2
        m, size = rows.shape
        self.cols = np.arange(size)
        self.rest = [np.delete(self.cols, p) for p in range(size)]
        self.member = np.zeros(n, dtype=bool)
        lo, hi = pair_arrays(rows)
        flat = np.bincount((lo * n + hi).ravel(), minlength=n * n).reshape(n, n)
        self.counts = (flat + flat.T).astype(np.int32)
        slots = m * size * (size - 1) // 2
        self.q = slots // (n * (n - 1) // 2)
        cost = self._tables()
        iu, ju = np.triu_indices(n, 1)
        c = self.counts[iu, ju]
        self.cost = int(cost[c].sum())
        codes = iu * n + ju
        self.hot = _Pool(codes[c >= self.q + 2])
        self.hotter = _Pool(codes[c >= self.q + 3])
        self.cold = _Pool(codes[c <= self.q - 1])

    def _tables(self) -> np.ndarray:
        top = int(self.counts.max()) + 4
        c = np.arange(top + 1, dtype=np.int64)
        if self.coverage:
            # Coverage first: an uncovered pair outweighs any unevenness a swap can add.
            cost = c**2
            cost[0] += 50 * self.rows.shape[1] ** 2
        else:
            # Squares make counts even; the extra terms make a count one over the optimum
            # weigh more, and two over weigh more than any swap can add elsewhere.
            over = np.maximum(c - self.q - 1, 0)
            cost = c**2 + 10 * over**2 + 1000 * np.maximum(over - 1, 0) ** 2
        self.inc = np.zeros(top + 1, dtype=np.int64)
        self.inc[:-1] = cost[1:] - cost[:-1]
        self.dec = np.zeros(top + 1, dtype=np.int64)
        self.dec[1:] = cost[:-1] - cost[1:]
        return cost

    def uncovered(self) -> int:
        """Pairs of items that share no tuple."""
        return int((np.count_nonzero(self.counts == 0) - self.n) // 2)

    def run(self, patience: int | None = None) -> bool:
        """Search until counts are optimal or the cost stops falling for `patience` steps;
        return False when it stopped at the work limit (SEARCH_WORK) instead."""
        m, size = self.rows.shape
        if patience is None:
            patience = 300 + m
        # Each step scans the rows a few times: bound the steps so that a dense design
        # with many tuples costs seconds, not minutes (a deterministic count, not a clock).
        per_step = size * (m + min(m, BREAK_CANDIDATES))
        steps = min(100 * patience, max(SEARCH_MIN_STEPS, SEARCH_WORK // per_step))
        rng = self.rng
        cost = self.cost
        best, since_best = cost, 0
        finished = False
        for _ in range(steps):
            if not len(self.hot) and not len(self.cold):
                finished = True
                break
            if cost < best:
                best, since_best = cost, 0
            else:
                since_best += 1
                if since_best > patience:
                    finished = True
                    break
            if len(self.cold) and (not len(self.hot) or rng.random() < 0.5):
                a, b, p = self._join_candidates(self.cold.choice(rng))
                delta = self._deltas(a, b, p)
            else:
                pool = self.hotter if len(self.hotter) and rng.random() < 0.8 else self.hot
                a, b, p, delta = self._break_moves(pool.choice(rng))
            valid = np.flatnonzero(delta < _INVALID)
            if valid.size == 0:
                continue
            if rng.random() < self.walk:
                k = valid[rng.integers(valid.size)]
            else:
                noisy = delta[valid] + rng.random(valid.size) * 0.5
                k = valid[np.argmin(noisy)]
                if delta[k] > 0 and rng.random() > self.uphill:
                    continue
            self._swap(int(a[k]), int(b[k]), int(p[k]))
            cost += int(delta[k])
        # A last random step may have left a count two over the optimum: mend those.
        for _ in range(20 * len(self.hotter)):
            if not len(self.hotter):
                break
            a, b, p, delta = self._break_moves(self.hotter.choice(rng))
            k = int(np.argmin(delta))
            if delta[k] < 0:
                self._swap(int(a[k]), int(b[k]), int(p[k]))
                cost += int(delta[k])
        self.cost = cost
        return finished or steps == 100 * patience

    def _break_moves(self, code: int):
        """Swaps that move u or v out of a tuple they share, with their cost changes."""
        u, v = divmod(code, self.n)
        rows, rng = self.rows, self.rng
        shared = np.flatnonzero((rows == u).any(axis=1) & (rows == v).any(axis=1))
        a = int(shared[rng.integers(shared.size)])
        m = rows.shape[0]
        b = (
            np.arange(m)
            if m <= BREAK_CANDIDATES
            else rng.choice(m, BREAK_CANDIDATES, replace=False)
        )
        pu = int(np.flatnonzero(rows[a] == u)[0])
        pv = int(np.flatnonzero(rows[a] == v)[0])
        delta = np.concatenate([self._deltas_from(a, pu, b), self._deltas_from(a, pv, b)])
        k = b.size
        return np.full(2 * k, a), np.concatenate([b, b]), np.repeat([pu, pv], k), delta

    def _deltas_from(self, a: int, p: int, b: np.ndarray) -> np.ndarray:
        """Cost change of swapping column p of row a with each row b (_INVALID if invalid)."""
        rows, counts, inc, dec = self.rows, self.counts, self.inc, self.dec
        rest = self.rest[p]
        rest_a = rows[a, rest]
        x = rows[a, p]
        y = rows[b, p]
        rest_b = rows[b[:, None], rest[None, :]]
        member = self.member
        member[rest_a] = True
        try:
            valid = (y != x) & ~member[y] & ~(rest_b == x).any(axis=1)
            common = member[rest_b]
        finally:
            member[rest_a] = False
        ys = y[:, None]
        gain_a = inc[counts[ys, rest_a]] + dec[counts[x, rest_a]]
        cx, cy = counts[x, rest_b], counts[ys, rest_b]
        gain_b = inc[cx] + dec[cy]
        # An item in both rows keeps its pairs with x and y: take back both sides' terms.
        back = (inc[cy] + dec[cx] + gain_b) * common
        delta = gain_a.sum(axis=1) + gain_b.sum(axis=1) - back.sum(axis=1)
        delta[~valid] = _INVALID
        return delta

    def _join_candidates(self, code: int):
        u, v = divmod(code, self.n)
        parts = []
        for x, y in ((u, v), (v, u)):
            # Move y into a row a holding x, taking y from a row b where it sits in column p.
            ra, pa = np.nonzero(self.rows == x)
            rb, pb = np.nonzero(self.rows == y)
            if ra.size * rb.size > JOIN_SAMPLE_ABOVE:
                # Items that appear very often: sample pairs of rows instead of listing
                # all ra x rb of them (memory and time grow with appearances squared).
                i, j = np.divmod(self.rng.integers(0, ra.size * rb.size, 2 * 128), rb.size)
                a, xa, b, p = ra[i], pa[i], rb[j], pb[j]
            else:
                a = np.repeat(ra, rb.size)
                xa = np.repeat(pa, rb.size)
                b = np.tile(rb, ra.size)
                p = np.tile(pb, ra.size)
            keep = xa != p
            parts.append((a[keep], b[keep], p[keep]))
        a, b, p = (np.concatenate(z) for z in zip(*parts, strict=True))
        if a.size > 128:
            pick = self.rng.choice(a.size, 128, replace=False)
            a, b, p = a[pick], b[pick], p[pick]
        return a, b, p

    def _deltas(self, a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Cost change of swapping column p of rows a and b, per candidate (general form)."""
        rows, counts = self.rows, self.counts
        ra, rb = rows[a], rows[b]
        x, y = rows[a, p], rows[b, p]
        other = self.cols[None, :] != p[:, None]
        valid = (
            (x != y)
            & ~((ra == y[:, None]) & other).any(axis=1)
            & ~((rb == x[:, None]) & other).any(axis=1)
        )
        # Items in both rows keep their pairs with x and y: leave them out.
        a_in_b = ((ra[:, :, None] == rb[:, None, :]) & other[:, None, :]).any(axis=2)
        b_in_a = ((rb[:, :, None] == ra[:, None, :]) & other[:, None, :]).any(axis=2)
        xs, ys = x[:, None], y[:, None]
        gain_a = self.inc[counts[ys, ra]] + self.dec[counts[xs, ra]]
        gain_b = self.inc[counts[xs, rb]] + self.dec[counts[ys, rb]]
        delta = (gain_a * (other & ~a_in_b)).sum(axis=1)
        delta += (gain_b * (other & ~b_in_a)).sum(axis=1)
        delta[~valid] = _INVALID
        return delta

    def _swap(self, a: int, b: int, p: int) -> None:
        rows, counts, n, q = self.rows, self.counts, self.n, self.q
        x, y = int(rows[a, p]), int(rows[b, p])
        rest_a = rows[a, self.rest[p]]
        rest_b = rows[b, self.rest[p]]
        for gone, came, partners in ((x, y, rest_a), (y, x, rest_b)):
            counts[gone, partners] -= 1
            counts[partners, gone] -= 1
            counts[came, partners] += 1
            counts[partners, came] += 1
        rows[a, p], rows[b, p] = y, x
        if max(counts[x].max(), counts[y].max()) >= len(self.inc) - 2:
            self._tables()
        for w in set(rest_a.tolist()) | set(rest_b.tolist()):
            for item in (x, y):
                if w == item:
                    continue
                code = min(item, w) * n + max(item, w)
                c = counts[item, w]
                self.hot.set(code, c >= q + 2)
                self.hotter.set(code, c >= q + 3)
                self.cold.set(code, c <= q - 1)


class _Pool:
    """A set of ints with O(1) add, remove and uniform random choice."""

    def __init__(self, values: np.ndarray):
        self.items = [int(v) for v in values]
        self.where = {v: i for i, v in enumerate(self.items)}

    def __len__(self) -> int:
        return len(self.items)

    def choice(self, rng: np.random.Generator) -> int:
        return self.items[int(rng.integers(len(self.items)))]

    def set(self, value: int, present: bool) -> None:
        if present and value not in self.where:
            self.where[value] = len(self.items)
            self.items.append(value)
        elif not present and value in self.where:
            i = self.where.pop(value)
            last = self.items.pop()
            if i < len(self.items):
                self.items[i] = last
                self.where[last] = i


# --------------------------------------------------------------------------- sparse repair


def pair_arrays(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smaller and larger item of every within-row pair, shape (n_rows, T (T - 1) / 2)."""
    i, j = np.triu_indices(rows.shape[1], 1)
    left, right = rows[:, i], rows[:, j]
    return np.minimum(left, right), np.maximum(left, right)


class _SparseCounts:
    """Pair counts of a large design: sorted codes (lo * n + hi) plus sorted changes."""

    def __init__(self, codes: np.ndarray):
        self.base = np.sort(codes)
        self.added = np.empty(0, dtype=np.int64)
        self.removed = np.empty(0, dtype=np.int64)

    def repeated(self) -> np.ndarray:
        s = self.base
        return np.unique(s[1:][s[1:] == s[:-1]])

    def count(self, codes: np.ndarray) -> np.ndarray:
        out = _occurrences(self.base, codes)
        if self.added.size:
            out += _occurrences(self.added, codes) - _occurrences(self.removed, codes)
        return out

    def change(self, removed: np.ndarray, added: np.ndarray) -> None:
        self.added = np.sort(np.concatenate([self.added, added.ravel()]))
        self.removed = np.sort(np.concatenate([self.removed, removed.ravel()]))


def _occurrences(sorted_codes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """How often each of codes occurs in sorted_codes."""
    flat = codes.ravel()
    # Sorted needles walk the haystack in order: far fewer cache misses.
    order = np.argsort(flat)
    needles = flat[order]
    found = np.searchsorted(sorted_codes, needles, "right")
    found -= np.searchsorted(sorted_codes, needles, "left")
    out = np.empty_like(found)
    out[order] = found
    return out.reshape(codes.shape)


def _codes(u: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(u, v) * n + np.maximum(u, v)


def repair_sparse(rows: np.ndarray, n: int, rng: np.random.Generator) -> bool:
    """Remove repeated items and pairs from a large design by swaps within columns.

    Works in rounds over all offending tuples at once: each proposes swaps of one
    offending entry with the same column of random other tuples, keeps a first swap whose
    new pairs are all unused, and applies a set of such swaps that share no tuple and no
    new pair, so no round creates a repeat. Returns whether the design ended clean; one
    too dense for unused pairs keeps some repeated pairs (never an item twice in a tuple).
    """
    m, size = rows.shape
    iu, ju = np.triu_indices(size, 1)
    rest = np.array([np.delete(np.arange(size), p) for p in range(size)])
    codes = _pair_codes(rows, n)
    counts = _SparseCounts(codes)
    repeated = counts.repeated()
    twice = np.zeros(m, dtype=bool)
    for i, j in zip(iu, ju, strict=True):
        twice |= rows[:, i] == rows[:, j]
    bad = [np.flatnonzero(twice)]
    if repeated.size:
        # Hash filter first: exact look-ups only for the few codes that pass it.
        buckets = 1 << 22
        table = np.zeros(buckets, dtype=bool)
        table[repeated & (buckets - 1)] = True
        maybe = np.flatnonzero(table[codes & (buckets - 1)])
        bad.append(maybe[np.isin(codes[maybe], repeated)] % m)
    del codes
    bad = np.unique(np.concatenate(bad))
    tries, stale = 8, 0
    while bad.size and stale < 3:
        # Which entries of the offending tuples sit in a repeated pair or twice.
        sub = rows[bad]
        pair_codes = _codes(sub[:, iu], sub[:, ju], n)
        offending = (sub[:, iu] == sub[:, ju]) | (counts.count(pair_codes) > 1)
        keep = offending.any(axis=1)
        bad, sub, offending = bad[keep], sub[keep], offending[keep]
        if not bad.size:
            break
        # One offending entry per tuple, chosen at random; at most 2^18 proposals a round.
        work = np.arange(bad.size)
        if bad.size * tries > 1 << 18:
            work = np.sort(rng.choice(bad.size, max(1, (1 << 18) // tries), replace=False))
        hit_row, hit_pair = np.nonzero(offending[work])
        spots = np.zeros((work.size, size), dtype=bool)
        spots[hit_row, iu[hit_pair]] = True
        spots[hit_row, ju[hit_pair]] = True
        p = np.argmax(spots * rng.random(spots.shape), axis=1)
        a = np.repeat(bad[work], tries)
        p = np.repeat(p, tries)
        b = rng.integers(0, m, size=a.size)
        x, y = rows[a, p], rows[b, p]
        rest_a = rows[a[:, None], rest[p]]
        rest_b = rows[b[:, None], rest[p]]
        is_bad = np.zeros(m, dtype=bool)
        is_bad[bad] = True
        ok = (
            (x != y)
            & ~is_bad[b]
            & ~(rest_a == y[:, None]).any(axis=1)
            & ~(rest_b == x[:, None]).any(axis=1)
        )
        new = np.concatenate([_codes(y[:, None], rest_a, n), _codes(x[:, None], rest_b, n)], 1)
        ok[ok] &= (counts.count(new[ok]) == 0).all(axis=1)
        chosen = np.flatnonzero(ok)
        # A first valid proposal per offending tuple, then distinct partner tuples.
        chosen = chosen[np.unique(a[chosen], return_index=True)[1]]
        chosen = chosen[np.unique(b[chosen], return_index=True)[1]]
        # No two swaps may add the same pair. (One swap may: a tuple with an item twice
        # pairs the incoming item with it twice, until that item moves too.)
        flat = new[chosen].ravel()
        owner = np.repeat(np.arange(chosen.size), new.shape[1])
        order = np.lexsort((owner, flat))
        flat, owner = flat[order], owner[order]
        same = (flat[1:] == flat[:-1]) & (owner[1:] != owner[:-1])
        clash = np.zeros(chosen.size, dtype=bool)
        clash[owner[1:][same]] = True
        clash[owner[:-1][same]] = True
        chosen = chosen[~clash]
        if chosen.size * 100 <= work.size:
            # Little progress: look further afield, and stop if that does not help.
            stale += 1
            tries = min(4 * tries, 256)
        else:
            stale = 0
        ca, cb, cp = a[chosen], b[chosen], p[chosen]
        old = np.concatenate(
            [
                _codes(x[chosen, None], rest_a[chosen], n),
                _codes(y[chosen, None], rest_b[chosen], n),
            ],
            axis=1,
        )
        counts.change(old, new[chosen])
        rows[ca, cp], rows[cb, cp] = y[chosen], x[chosen]
    if bad.size and row_duplicates(rows).any():
        fix_duplicates(rows, rng)
    return not bad.size


def _pair_codes(rows: np.ndarray, n: int) -> np.ndarray:
    """Code lo * n + hi of every within-row pair, flat, pair k of row a at k * m + a."""
    m, size = rows.shape
    columns = [np.ascontiguousarray(rows[:, c]) for c in range(size)]
    pairs = list(zip(*np.triu_indices(size, 1), strict=True))
    codes = np.empty(len(pairs) * m, dtype=np.int64)
    for k, (i, j) in enumerate(pairs):
        out = codes[k * m : (k + 1) * m]
        np.minimum(columns[i], columns[j], out=out)
        out *= n
        out += np.maximum(columns[i], columns[j])
    return codes
