"""What the scores of a set of judgments cannot tell: checks run beside every fit.

Three things make scores or intervals look surer than they are, silently:

* a comparison graph in several pieces (items are linked when they share a tuple): every
  method centres each piece on its own, so scores from different pieces share no scale;
* separated items, chosen best (or worst) every time they were shown: the data put no
  bound on their strength (counting pins them at +1 or -1, a model fit holds them finite
  only by its penalty);
* intervals from too little resampling material: an item seen in few clusters (tuples,
  judgments or annotators, whatever the bootstrap resamples) gets an interval that covers
  far less often than its stated level, and one of zero width when every resample agrees.

``diagnose`` finds all three from the judgment arrays (and the intervals, when there are
any) and says so in short sentences. ``Diagnostics.to_dict`` is the JSON form a platform
run stores; ``StoredDiagnostics`` reads it back for one item at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from bws.core.bootstrap import UNITS, cluster_labels
from bws.core.coverage_limits import DESIGN_COVERAGE as DESIGN_COVERAGE
from bws.core.coverage_limits import DESIGN_WORDS as DESIGN_WORDS
from bws.core.coverage_limits import small_study_items, small_study_message, small_study_reason
from bws.core.judgments import Judgments
from bws.core.scores import Scores
from bws.core.scoring import METHOD_NAMES

# An item's interval is marked approximate below these counts. Measured by
# `python benchmarks/coverage.py --thresholds --items 120 --reps 30` (benchmarks/RESULTS.md,
# "Where the bootstrap's intervals are approximate": tuples of 4, MaxDiff answers, counting
# scores, 95% percentile intervals resampling tuples): the share of items whose interval
# covers the expected score is 0.67 at 3 tuples per item, 0.79 at 4, 0.85 at 5, 0.87 at 6,
# 0.90 at 8 and 0.93 at 12; zero-width intervals fall from 21% (3) and 11% (4) to 3% (6)
# and 1.5% (8). Below 6 the stated 95% is far off and zero widths are common.
MIN_APPEARANCES = 6
# The same measurement counts clusters: judgments of one cluster move together in every
# resample, so an item seen 12 times in 3 tuples has 3 independent observations. A
# bootstrap over fewer than 6 clusters in all (e.g. 3 annotators) has every interval
# approximate: 3 clusters allow only 10 distinct resamples.
MIN_CLUSTERS = 6
# Intervals narrower than this, relative to the score scale (largest |end|, at least 1),
# have zero width: no spread at all (in a bootstrap, every resample gave the same score).
ZERO_WIDTH = 1e-9
# Why an item's interval is approximate (bits of Diagnostics.interval_flags).
FEW_APPEARANCES = 1
FEW_CLUSTERS = 2
ZERO_SPREAD = 4
SEPARATED = 8
NO_INTERVAL = 16
DESIGN = 32
SMALL_STUDY = 64
FLAG_NAMES = {
    FEW_APPEARANCES: "few_appearances",
    FEW_CLUSTERS: "few_clusters",
    ZERO_SPREAD: "zero_width",
    SEPARATED: "separated",
    NO_INTERVAL: "no_interval",
    DESIGN: "design",
    SMALL_STUDY: "small_study",
}
UNIT_NOUNS = {"tuple": "tuples", "judgment": "judgments", "annotator": "annotators"}
APPROXIMATE_MARK = "\u2248"  # ≈


@dataclass(eq=False)
class Diagnostics:
    """The checks of one set of judgments (and its intervals).

    component: (n_items,) group number per item, 0 for the largest group of linked items,
        -1 for items never shown. component_sizes: items per group, largest first.
    always_best, always_worst: items chosen best (worst) in every judgment showing them.
    never_best, never_worst: the one-sided items, never chosen best (worst) but not
        separated: informative only, their scores have finite bounds.
    clusters: (n_items,) distinct resampling clusters showing each item.
    interval_flags: (n_items,) bit set of why the item's interval is approximate (0: it
        is not; all 0 when no intervals were given).
    messages: one short sentence per problem, for people.
    """

    n_items: int
    appearances: np.ndarray
    component: np.ndarray
    component_sizes: list[int]
    always_best: np.ndarray
    always_worst: np.ndarray
    never_best: np.ndarray
    never_worst: np.ndarray
    unit: str
    n_clusters: int
    clusters: np.ndarray
    interval_flags: np.ndarray
    has_intervals: bool
    interval_kind: str = "bootstrap"
    design: str | None = None
    design_method: str | None = None  # the method whose intervals missed under ``design``
    small_study_method: str | None = None  # the method whose intervals miss at this size
    min_appearances: int = MIN_APPEARANCES
    min_clusters: int = MIN_CLUSTERS
    messages: list[str] = field(default_factory=list)

    @property
    def resampled(self) -> bool:
        """Whether the intervals are a cluster bootstrap's (the thresholds apply)."""
        return self.interval_kind == "bootstrap" and self.unit in UNITS

    @property
    def n_shown(self) -> int:
        return int((self.appearances > 0).sum())

    @property
    def never_shown(self) -> np.ndarray:
        return np.flatnonzero(self.appearances == 0)

    @property
    def n_components(self) -> int:
        return len(self.component_sizes)

    @property
    def connected(self) -> bool:
        return self.n_components <= 1

    @property
    def components(self) -> list[np.ndarray]:
        """Item indices of each group (in index order), largest group first."""
        if not self.component_sizes:
            return []
        shown = np.flatnonzero(self.component >= 0)
        ordered = shown[np.argsort(self.component[shown], kind="stable")]
        return np.split(ordered, np.cumsum(self.component_sizes)[:-1])

    @property
    def separated(self) -> np.ndarray:
        return np.union1d(self.always_best, self.always_worst)

    @property
    def approximate(self) -> np.ndarray:
        """(n_items,) bool: the item's interval is approximate."""
        return self.interval_flags != 0

    @property
    def n_approximate(self) -> int:
        return int(self.approximate.sum())

    @property
    def zero_width(self) -> np.ndarray:
        return np.flatnonzero(self.interval_flags & ZERO_SPREAD)

    def note(self, item: int) -> str | None:
        """Why item's interval is approximate, in words, or None when it is not."""
        return interval_note(
            int(self.interval_flags[item]),
            appearances=int(self.appearances[item]),
            clusters=int(self.clusters[item]),
            unit=self.unit,
            min_appearances=self.min_appearances,
            min_clusters=self.min_clusters,
            always_best=bool(np.isin(item, self.always_best)),
            design=self.design,
            design_method=self.design_method,
            small_study_method=self.small_study_method,
            n_shown=self.n_shown,
        )

    def to_dict(self) -> dict:
        """The JSON form a platform run stores (item indices, counts and sentences)."""
        flagged = {
            name: np.flatnonzero(self.interval_flags & bit).tolist()
            for bit, name in FLAG_NAMES.items()
        }
        return {
            "messages": list(self.messages),
            "n_items": self.n_items,
            "n_shown": self.n_shown,
            "component_sizes": list(self.component_sizes),
            # Items outside the largest group, per group (group 2 first); the rest are in 1.
            "other_groups": [c.tolist() for c in self.components[1:]],
            "never_shown": self.never_shown.tolist(),
            "always_best": self.always_best.tolist(),
            "always_worst": self.always_worst.tolist(),
            "n_never_best": int(self.never_best.size),
            "n_never_worst": int(self.never_worst.size),
            "unit": self.unit,
            "n_clusters": self.n_clusters,
            "min_appearances": self.min_appearances,
            "min_clusters": self.min_clusters,
            "has_intervals": self.has_intervals,
            "interval_kind": self.interval_kind,
            "design": self.design,
            "design_method": self.design_method,
            "small_study_method": self.small_study_method,
            "n_approximate": self.n_approximate,
            "approximate": {name: items for name, items in flagged.items() if items},
            # Distinct clusters of the items with too few, for their notes.
            "clusters": {
                str(i): int(self.clusters[i]) for i in flagged["few_clusters"][:MAX_NOTED_CLUSTERS]
            },
        }


# Items whose cluster count the stored form keeps (their notes name it); beyond this the
# note says "fewer than" the threshold without the count.
MAX_NOTED_CLUSTERS = 10_000


def diagnose(
    judgments: Judgments,
    *,
    scores: Scores | None = None,
    method: str | None = None,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
    unit: str = "tuple",
    interval_kind: str = "bootstrap",
    min_appearances: int = MIN_APPEARANCES,
    min_clusters: int = MIN_CLUSTERS,
    design: str | None = None,
) -> Diagnostics:
    """Check judgments (with their scores' method and intervals when given).

    ``design``: the adaptive strategy that chose the tuples after a balanced start, if any
    ("adaptive" or "iterative"); every interval of a method whose coverage missed the band
    under it is approximate (DESIGN_COVERAGE). So is every calibrated interval (any
    ``interval_kind`` but "bootstrap") of a study with fewer shown items than its method
    was measured to need (bws.core.coverage_limits.SMALL_STUDY_ITEMS).

    ``method`` (or ``scores.method``) words the note on separated items.
    ``low`` and ``high`` are the interval ends per item index (NaN or None where an item
    has none); ``unit`` is what the bootstrap resampled ('tuple', 'judgment', 'annotator').
    The thresholds on appearances and clusters were measured on percentile bootstrap
    intervals: they apply when ``interval_kind`` is "bootstrap" and ``unit`` a resampling
    unit. Intervals of any kind are approximate at zero width, when missing, and for
    separated items. (Clusters are then counted by tuple, for information.)
    """
    n = judgments.n_items
    items = judgments.items
    appearances = np.bincount(items.ravel(), minlength=n)
    best = np.bincount(judgments.best_items, minlength=n)
    worst = np.bincount(judgments.worst_items, minlength=n)
    shown = appearances > 0
    component, sizes = _components(items, n, shown)
    resampled = interval_kind == "bootstrap" and unit in UNITS
    labels = cluster_labels(judgments, unit if unit in UNITS else "tuple")
    n_clusters = int(labels.max()) + 1 if labels.size else 0
    clusters = _clusters_per_item(items, labels, n, n_clusters)
    always_best = np.flatnonzero(shown & (best == appearances))
    always_worst = np.flatnonzero(shown & (worst == appearances))
    never_best = np.flatnonzero(shown & (best == 0) & (worst < appearances))
    never_worst = np.flatnonzero(shown & (worst == 0) & (best < appearances))
    has_intervals = low is not None and high is not None
    method = scores.method if scores is not None else method
    missed = has_intervals and (design, method) in DESIGN_COVERAGE
    small = has_intervals and interval_kind != "bootstrap"
    small = small and int(shown.sum()) < small_study_items(method)
    flags = np.zeros(n, dtype=np.int64)
    if has_intervals:
        flags = _interval_flags(
            np.asarray(low, dtype=float),
            np.asarray(high, dtype=float),
            shown=shown,
            appearances=appearances,
            clusters=clusters,
            separated=np.union1d(always_best, always_worst),
            min_appearances=min_appearances if resampled else 0,
            min_clusters=min_clusters if resampled else 0,
        )
        if missed:
            flags[shown] |= DESIGN
        if small:
            flags[shown] |= SMALL_STUDY
    result = Diagnostics(
        n_items=n,
        appearances=appearances,
        component=component,
        component_sizes=sizes,
        always_best=always_best,
        always_worst=always_worst,
        never_best=never_best,
        never_worst=never_worst,
        unit=unit,
        n_clusters=n_clusters,
        clusters=clusters,
        interval_flags=flags,
        has_intervals=has_intervals,
        interval_kind=interval_kind,
        design=design,
        design_method=method if missed else None,
        small_study_method=method if small else None,
        min_appearances=min_appearances,
        min_clusters=min_clusters,
    )
    result.messages = _messages(result, method)
    return result


def diagnose_report(
    judgments: Judgments, scores: Scores, intervals=None, *, design: str | None = None
) -> Diagnostics:
    """``diagnose`` with a fit's Scores and its Intervals (or None): bootstrap intervals,
    or others that name their ``kind``."""
    if intervals is None:
        return diagnose(judgments, scores=scores, design=design)
    return diagnose(
        judgments,
        scores=scores,
        low=intervals.low,
        high=intervals.high,
        unit=intervals.unit,
        interval_kind=getattr(intervals, "kind", "bootstrap"),
        design=design,
    )


def _components(items: np.ndarray, n: int, shown: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Group number per item (0 the largest group, -1 never shown) and the group sizes."""
    if items.shape[0] == 0:
        return np.full(n, -1, dtype=np.int64), []
    # A path through each tuple links all its items; no need for every pair.
    rows, columns = items[:, :-1].ravel(), items[:, 1:].ravel()
    graph = sparse.csr_matrix((np.ones(rows.size), (rows, columns)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    labels = labels[shown]
    found, first, counts = np.unique(labels, return_index=True, return_counts=True)
    # Largest group first; equal sizes in order of their first item.
    order = np.lexsort((first, -counts))
    renumber = np.empty(found.size, dtype=np.int64)
    renumber[order] = np.arange(found.size)
    component = np.full(n, -1, dtype=np.int64)
    component[shown] = renumber[np.searchsorted(found, labels)]
    return component, counts[order].tolist()


def _clusters_per_item(items: np.ndarray, labels: np.ndarray, n: int, n_clusters: int):
    """How many distinct clusters show each item."""
    if items.shape[0] == 0:
        return np.zeros(n, dtype=np.int64)
    size = items.shape[1]
    pairs = np.unique(items.ravel() * max(n_clusters, 1) + np.repeat(labels, size))
    return np.bincount(pairs // max(n_clusters, 1), minlength=n)


def _interval_flags(
    low, high, *, shown, appearances, clusters, separated, min_appearances, min_clusters
):
    flags = np.zeros(shown.size, dtype=np.int64)
    finite = np.isfinite(low) & np.isfinite(high)
    flags[shown & ~finite] |= NO_INTERVAL
    scale = max(1.0, float(np.abs(np.concatenate([low[finite], high[finite]])).max(initial=0)))
    width = np.where(finite, high - low, np.inf)
    flags[shown & (width <= ZERO_WIDTH * scale)] |= ZERO_SPREAD
    flags[shown & (appearances < min_appearances)] |= FEW_APPEARANCES
    flags[shown & (clusters < min_clusters)] |= FEW_CLUSTERS
    flags[separated] |= SEPARATED
    return flags


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def _listing(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _messages(d: Diagnostics, method: str | None) -> list[str]:
    messages = []
    if d.n_components > 1:
        sizes = d.component_sizes
        if len(sizes) > 2 and sizes[0] == sizes[-1]:
            shape = f"{sizes[0]:,} items each"
        elif len(sizes) <= 4:
            shape = _listing([f"{s:,}" for s in sizes]) + " items"
        else:
            shape = f"largest {sizes[0]:,} items, smallest {sizes[-1]:,}"
        messages.append(
            f"{len(sizes):,} separate groups of items ({shape}): no tuple links one group to "
            "another, so scores (and ranks) are comparable only within a group."
        )
    missing = d.never_shown.size
    if missing:
        messages.append(
            f"{_count(missing, 'item was', 'items were')} never shown: no score or rank."
        )
    messages += _separation_messages(d, method)
    if d.has_intervals and d.small_study_method is not None:
        messages.append(small_study_message(d.n_shown, d.small_study_method))
    if d.has_intervals and (d.interval_flags & ~SMALL_STUDY).any():
        messages.append(_interval_message(d))
    return messages


def _separation_messages(d: Diagnostics, method: str | None) -> list[str]:
    parts = []
    if d.always_best.size:
        parts.append(f"{_count(d.always_best.size, 'item was', 'items were')} chosen best")
    if d.always_worst.size:
        parts.append(f"{_count(d.always_worst.size, 'item was', 'items were')} chosen worst")
    if not parts:
        return []
    one = d.always_best.size + d.always_worst.size == 1
    score, them = ("its score", "it") if one else ("their scores", "them")
    if method == "counting":
        why = (
            f"{score} sit{'s' if one else ''} at the end of the scale (+1 or -1), whatever "
            f"{'its' if one else 'their'} true distance from the rest"
        )
    elif method is None:
        why = f"the data put no bound on {score}"
    else:
        why = f"the data put no bound on {score} (the fit holds {them} finite only by its penalty)"
    shown = "it was" if one else "they were"
    return [f"{_listing(parts)} every time {shown} shown: {why}."]


def _interval_message(d: Diagnostics) -> str:
    """The reasons other than a small study (whose message stands on its own)."""
    noun = UNIT_NOUNS.get(d.unit, d.unit + "s")
    flags = d.interval_flags & ~SMALL_STUDY
    if d.design_method is not None:
        name = METHOD_NAMES[d.design_method]
        return (
            f"The tuples after the balanced start were {DESIGN_WORDS[d.design]}: in "
            f"simulations of such designs, {name} calibrated intervals called 95% covered "
            f"{DESIGN_COVERAGE[d.design, d.design_method]} of the time, missing the 0.93-0.97 "
            f"band, so every interval is approximate ({APPROXIMATE_MARK})."
        )
    if d.resampled and d.n_clusters < d.min_clusters:
        return (
            f"The bootstrap resampled {noun}, and there {'is' if d.n_clusters == 1 else 'are'} "
            f"only {d.n_clusters}: it needs at least {d.min_clusters} to show the spread, so "
            f"every interval is approximate ({APPROXIMATE_MARK})."
        )
    parts = []
    few_seen = (flags & FEW_APPEARANCES) != 0
    few_clusters = ((flags & FEW_CLUSTERS) != 0) & ~few_seen
    for count, words in (
        (int(few_seen.sum()), f"seen fewer than {d.min_appearances} times"),
        (int(few_clusters.sum()), f"in fewer than {d.min_clusters} distinct {noun}"),
        (int(((flags & ZERO_SPREAD) != 0).sum()), "of zero width"),
        (int(((flags & SEPARATED) != 0).sum()), "separated (always best or always worst)"),
        (int(((flags & NO_INTERVAL) != 0).sum()), "with no interval"),
    ):
        if count:
            parts.append(f"{count:,} {words}")
    zero = " A zero-width interval is not certainty." if (flags & ZERO_SPREAD).any() else ""
    marked = _count(int((flags != 0).sum()), "item")
    return (
        f"Intervals of {marked} (of {d.n_shown:,}) are approximate "
        f"({APPROXIMATE_MARK}): {_listing(parts)}.{zero}"
    )


def interval_note(
    flags: int,
    *,
    appearances: int | None,
    clusters: int | None,
    unit: str,
    min_appearances: int = MIN_APPEARANCES,
    min_clusters: int = MIN_CLUSTERS,
    always_best: bool | None = None,
    design: str | None = None,
    design_method: str | None = None,
    small_study_method: str | None = None,
    n_shown: int | None = None,
) -> str | None:
    """Why an interval with these flags is approximate, in one line; None for flags 0.
    ``design`` and ``design_method``: the strategy and method of a DESIGN flag;
    ``small_study_method`` and ``n_shown`` those of a SMALL_STUDY flag."""
    if not flags:
        return None
    reasons = []
    if flags & DESIGN and (design, design_method) in DESIGN_COVERAGE:
        reasons.append(
            f"the tuples were {DESIGN_WORDS[design]}, where {METHOD_NAMES[design_method]} "
            f"calibrated 95% intervals covered {DESIGN_COVERAGE[design, design_method]} of "
            "the time in simulations"
        )
    if flags & SMALL_STUDY:
        reasons.append(small_study_reason(n_shown, small_study_method))
    if flags & NO_INTERVAL:
        reasons.append("no interval could be computed")
    if flags & ZERO_SPREAD:
        reasons.append("zero width, which is not certainty")
    if flags & SEPARATED:
        side = {True: "best", False: "worst", None: "best (or worst)"}[always_best]
        reasons.append(f"chosen {side} every time it was shown")
    if flags & FEW_APPEARANCES:
        seen = "" if appearances is None else f" (seen {appearances})"
        reasons.append(f"seen fewer than {min_appearances} times{seen}")
    elif flags & FEW_CLUSTERS:
        noun = UNIT_NOUNS.get(unit, unit + "s")
        count = f"only {clusters}" if clusters is not None else f"fewer than {min_clusters}"
        reasons.append(
            f"in {count} distinct {noun if clusters != 1 else unit} (the bootstrap resamples "
            f"{noun}; at least {min_clusters} are needed)"
        )
    return "Approximate interval: " + "; ".join(reasons) + "."


class StoredDiagnostics:
    """Per-item lookups on the JSON form (``Diagnostics.to_dict``) of a stored run."""

    def __init__(self, stored: dict | None):
        self.stored = stored or {}
        approximate = self.stored.get("approximate") or {}
        self._flags: dict[int, int] = {}
        for bit, name in FLAG_NAMES.items():
            for item in approximate.get(name) or []:
                self._flags[int(item)] = self._flags.get(int(item), 0) | bit
        self._group: dict[int, int] = {}
        for number, group in enumerate(self.stored.get("other_groups") or [], start=2):
            for item in group:
                self._group[int(item)] = number
        self._best = {int(i) for i in self.stored.get("always_best") or []}
        self._worst = {int(i) for i in self.stored.get("always_worst") or []}
        self._clusters = {int(k): v for k, v in (self.stored.get("clusters") or {}).items()}

    @property
    def messages(self) -> list[str]:
        return list(self.stored.get("messages") or [])

    def summary(self) -> dict:
        """The stored form without its per-item lists: sentences, group sizes and counts
        ({} for a run stored before diagnostics)."""
        s = self.stored
        if not s:
            return {}
        return {
            "messages": self.messages,
            "group_sizes": list(s.get("component_sizes") or []),
            "n_never_shown": len(s.get("never_shown") or []),
            "n_always_best": len(s.get("always_best") or []),
            "n_always_worst": len(s.get("always_worst") or []),
            "n_never_best": s.get("n_never_best", 0),
            "n_never_worst": s.get("n_never_worst", 0),
            "n_approximate": s.get("n_approximate", 0),
            "interval_kind": s.get("interval_kind", "bootstrap"),
            "design": s.get("design"),
            "resample_unit": s.get("unit"),
            "n_clusters": s.get("n_clusters"),
            "min_appearances": s.get("min_appearances"),
            "min_clusters": s.get("min_clusters"),
        }

    def separated(self, item: int) -> str | None:
        """'best' or 'worst' for an item chosen so every time it was shown, else None."""
        if item in self._best:
            return "best"
        if item in self._worst:
            return "worst"
        return None

    @property
    def n_groups(self) -> int:
        return len(self.stored.get("component_sizes") or [])

    def flags(self, item: int) -> int:
        return self._flags.get(item, 0)

    def approximate(self, item: int) -> bool:
        return item in self._flags

    def zero_width(self, item: int) -> bool:
        return bool(self.flags(item) & (ZERO_SPREAD | NO_INTERVAL))

    def group(self, item: int) -> int | None:
        """Group number (1 the largest) of a shown item when there are several groups."""
        if self.n_groups <= 1:
            return None
        return self._group.get(item, 1)

    def note(self, item: int, appearances: int | None = None) -> str | None:
        flags = self.flags(item)
        return interval_note(
            flags,
            appearances=appearances,
            clusters=self._clusters.get(item),
            unit=self.stored.get("unit", "tuple"),
            min_appearances=self.stored.get("min_appearances", MIN_APPEARANCES),
            min_clusters=self.stored.get("min_clusters", MIN_CLUSTERS),
            always_best=(item in self._best) if flags & SEPARATED else None,
            design=self.stored.get("design"),
            design_method=self.stored.get("design_method"),
            small_study_method=self.stored.get("small_study_method"),
            n_shown=self.stored.get("n_shown"),
        )
