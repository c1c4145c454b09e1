"""Scores read per group and per source.

When tuples are drawn within groups (tuple_generation.group_key: the outputs of one source
sentence), scores compare only inside a group: each group's level is not identified, so
items are ranked 1..n_g inside their group and never across groups. When items also name
their source (tuple_generation.system_key: the MT system or model that produced them), the
sources are compared through the groups: a two-way model

    score_i = a_group(i) + b_source(i) + e_i

fitted by least squares with group fixed effects, the source effects b centred to sum to
zero (so an effect reads "relative to the average source", on the item scores' scale), and
their covariance cluster-robust over groups (CR1, t with G - 1 degrees of freedom). When
every group holds each source once this is the mean over groups of the within-group
centred scores, with the spread over groups as its error: the interval is for the source's
effect over the population of groups the study samples (new sentences, not only these),
so the item noise within a group is part of it. Without groups every item is compared with
every other one, the model has one intercept and each item is its own cluster.

Pure numpy and scipy, like the rest of ``bws.core``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

LEVEL = 0.95
GROUP_CLUSTERS, ITEM_CLUSTERS = "group", "item"


def encode(values: Sequence[object]) -> tuple[np.ndarray, list[str]]:
    """Integer codes (-1 for no usable value) and the distinct values as strings, in order of
    first appearance, for the items' values of a data field."""
    codes = np.full(len(values), -1, dtype=np.int64)
    names: dict[str, int] = {}
    for index, value in enumerate(values):
        if value is None or value == "" or isinstance(value, dict | list | bool):
            continue
        codes[index] = names.setdefault(str(value), len(names))
    return codes, list(names)


def group_ranks(
    values: np.ndarray, shown: np.ndarray, groups: np.ndarray, tolerance: float = 0.0
) -> np.ndarray:
    """Rank of each item inside its group, 1 for the group's highest score (int64; 0 for an
    item never shown or without a group). Scores within ``tolerance`` of their neighbour
    share the rank of the first of them, as bws.core.scoring.score_ranks does globally."""
    values, groups = np.asarray(values, dtype=float), np.asarray(groups, dtype=np.int64)
    ranks = np.zeros(values.shape[0], dtype=np.int64)
    kept = np.flatnonzero(np.asarray(shown, dtype=bool) & (groups >= 0))
    if kept.size == 0:
        return ranks
    order = kept[np.lexsort((kept, -values[kept], groups[kept]))]
    g, v = groups[order], values[order]
    new_group = np.concatenate([[True], g[1:] != g[:-1]])
    starts = new_group | np.concatenate([[True], v[:-1] - v[1:] > tolerance])
    position = np.arange(order.size)
    group_start = np.maximum.accumulate(np.where(new_group, position, 0))
    tie_start = np.maximum.accumulate(np.where(starts, position, 0))
    ranks[order] = tie_start - group_start + 1
    return ranks


@dataclass(frozen=True, eq=False)
class SourceTable:
    """Source effects (centred, on the item scores' scale) with 95% intervals and rank sets,
    rows in the order of ``names``."""

    names: list[str]
    effect: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray  # 1 for the highest effect
    rank_low: np.ndarray  # 95% rank set: the source's rank lies in rank_low..rank_high
    rank_high: np.ndarray
    n_items: np.ndarray
    n_groups: np.ndarray
    n_clusters: int
    clustered_by: str  # "group" or "item"
    left_out: int  # items shown but without a source value
    level: float = LEVEL

    def order(self) -> np.ndarray:
        """Row indices best first."""
        return np.argsort(self.rank, kind="stable")

    def to_dict(self) -> dict:
        """The JSON form a run stores: rows best first, NaN as None."""

        def number(value) -> float | None:
            return float(value) if np.isfinite(value) else None

        return {
            "level": self.level,
            "clustered_by": self.clustered_by,
            "n_clusters": self.n_clusters,
            "left_out": self.left_out,
            "rows": [
                {
                    "source": self.names[k],
                    "effect": number(self.effect[k]),
                    "se": number(self.se[k]),
                    "ci_low": number(self.low[k]),
                    "ci_high": number(self.high[k]),
                    "rank": int(self.rank[k]),
                    "rank_low": int(self.rank_low[k]),
                    "rank_high": int(self.rank_high[k]),
                    "n_items": int(self.n_items[k]),
                    "n_groups": int(self.n_groups[k]),
                }
                for k in self.order()
            ],
        }


def source_effects(
    values: np.ndarray,
    shown: np.ndarray,
    sources: np.ndarray,
    names: Sequence[str],
    groups: np.ndarray | None = None,
    *,
    level: float = LEVEL,
) -> SourceTable | None:
    """Centred source effects of the two-way model score = group + source + noise, on the
    scores' scale, with cluster-robust intervals over groups (over items without groups).

    ``sources`` and ``groups`` are integer codes per item (-1: none; such items and items
    never shown are left out). None when fewer than two sources have scored items, or when
    the groups do not link the sources (no group holds two of them)."""
    values = np.asarray(values, dtype=float)
    sources = np.asarray(sources, dtype=np.int64)
    shown = np.asarray(shown, dtype=bool) & np.isfinite(values)
    grouped = groups is not None
    groups = np.zeros_like(sources) if groups is None else np.asarray(groups, dtype=np.int64)
    keep = shown & (sources >= 0) & (groups >= 0)
    left_out = int((shown & (sources < 0)).sum())
    present = np.unique(sources[keep])
    if present.size < 2:
        return None
    s = np.searchsorted(present, sources[keep])
    _, g = np.unique(groups[keep], return_inverse=True)
    y = values[keep]
    n, n_sources = y.size, present.size
    design = np.zeros((n, n_sources))
    design[np.arange(n), s] = 1.0
    sizes = np.bincount(g).astype(float)
    # Within groups: subtract each group's mean (the group effects' least-squares solution).
    y_within = y - (np.bincount(g, weights=y) / sizes)[g]
    means = np.zeros((sizes.size, n_sources))
    np.add.at(means, g, design)
    x_within = design - (means / sizes[:, None])[g]
    gram = x_within.T @ x_within
    # Linked sources leave only the common shift unidentified (rank S - 1): the
    # pseudo-inverse's solution is the one with effects summing to zero, and with P the
    # projector on that shift, pinv(gram) = inv(gram + P) - P.
    shift = np.full((n_sources, n_sources), 1.0 / n_sources)
    if np.linalg.matrix_rank(gram + shift) < n_sources:
        return None
    inverse = np.linalg.inv(gram + shift) - shift
    effect = inverse @ (x_within.T @ y_within)
    residual = y_within - x_within @ effect
    if grouped and sizes.size > 1:
        clusters, clustered_by = g, GROUP_CLUSTERS
    else:
        clusters, clustered_by = np.arange(n), ITEM_CLUSTERS
    contributions = np.zeros((int(clusters.max()) + 1, n_sources))
    np.add.at(contributions, clusters, x_within * residual[:, None])
    # Only clusters that hold information on the sources count (a group of one item, or of
    # one source, has none after its mean is taken out).
    informative = np.bincount(clusters, weights=np.abs(x_within).sum(axis=1)) > 1e-12
    n_clusters = int(informative.sum())
    effect = effect - effect.mean()
    per_items = np.bincount(s, minlength=n_sources)
    per_groups = np.array([np.unique(g[s == k]).size for k in range(n_sources)])
    if n_clusters < 2:
        nan = np.full(n_sources, np.nan)
        se, low, high, rank_low, rank_high = nan, nan, nan, None, None
    else:
        meat = contributions.T @ contributions * n_clusters / (n_clusters - 1)
        covariance = inverse @ meat @ inverse
        se = np.sqrt(np.clip(np.diag(covariance), 0, None))
        critical = special.stdtrit(n_clusters - 1, 0.5 + level / 2)
        low, high = effect - critical * se, effect + critical * se
        rank_low, rank_high = _rank_sets(effect, covariance, n_clusters - 1, level)
    rank = np.empty(n_sources, dtype=np.int64)
    rank[np.argsort(-effect, kind="stable")] = np.arange(1, n_sources + 1)
    if rank_low is None:
        rank_low, rank_high = np.ones(n_sources, np.int64), np.full(n_sources, n_sources)
    return SourceTable(
        names=[names[k] for k in present],
        effect=effect,
        se=se,
        low=low,
        high=high,
        rank=rank,
        rank_low=rank_low,
        rank_high=rank_high,
        n_items=per_items,
        n_groups=per_groups,
        n_clusters=n_clusters,
        clustered_by=clustered_by,
        left_out=left_out,
        level=level,
    )


def _rank_sets(
    effect: np.ndarray, covariance: np.ndarray, df: int, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each source's marginal rank set at ``level``: its S - 1 differences with the others
    tested together (Bonferroni), the rank running from 1 + the sources surely above it to
    S - the sources surely below it (Mogstad, Romano, Shaikh and Wilhelm's marginal sets)."""
    n = effect.size
    variance = np.diag(covariance)
    spread = variance[:, None] + variance[None, :] - 2 * covariance
    se = np.sqrt(np.clip(spread, 0, None))
    critical = special.stdtrit(df, 1 - (1 - level) / (2 * (n - 1)))
    difference = effect[None, :] - effect[:, None]  # [s, t]: t minus s
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, difference / se, 0.0)
    above = (z > critical).sum(axis=1)
    below = (z < -critical).sum(axis=1)
    return (1 + above).astype(np.int64), (n - below).astype(np.int64)
