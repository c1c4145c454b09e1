"""Chance-corrected agreement coefficients on a reliability matrix, and percent agreement.

The input of every function is an (annotators, units) float array: one row per annotator,
one column per unit, NaN where the annotator did not label the unit. Nominal values are
any distinct numbers (category codes); ordinal values are numbers whose order is the
scale's; interval values are the numbers themselves. Every coefficient uses only units
that can be compared (two or more values, or both annotators of a pair) and returns
``Coefficient(None, reason)`` when it is undefined rather than inventing 0 or 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class Coefficient:
    """A coefficient's value, or None and the reason it is undefined; units it rests on."""

    value: float | None
    reason: str | None = None
    n_units: int = 0


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of one annotator pair (row indices first, second) on their shared units."""

    first: int
    second: int
    kappa: float | None
    n_units: int
    reason: str | None = None


def as_matrix(data) -> np.ndarray:
    """A float (annotators, units) array with NaN for missing values."""
    matrix = np.asarray(data, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"reliability data must be (annotators, units), got shape {matrix.shape}")
    return matrix


def pairable_units(matrix: np.ndarray) -> np.ndarray:
    """Boolean mask of units with two or more values."""
    return (~np.isnan(matrix)).sum(axis=0) >= 2


def krippendorff_alpha(data, level: str = "nominal") -> Coefficient:
    """Krippendorff's alpha, 1 - observed / expected disagreement, on units with >= 2 values.

    Nominal and ordinal go through the coincidence counts of the values; interval uses the
    closed form with squared differences on centred values, which needs no values x values
    table. Data with one value throughout is undefined (None with the reason).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    matrix = as_matrix(data)
    keep = pairable_units(matrix)
    n_units = int(keep.sum())
    if n_units == 0:
        return Coefficient(None, "no unit has values from two or more annotators", 0)
    matrix = matrix[:, keep]
    present = ~np.isnan(matrix)
    unit_index = np.broadcast_to(np.arange(matrix.shape[1]), matrix.shape)[present]
    values = matrix[present]
    m_u = present.sum(axis=0).astype(float)  # values per unit
    n = float(values.size)

    if level == "interval":
        if values.max() == values.min():
            return Coefficient(
                None, "every value is the same: expected disagreement is zero", n_units
            )
        # Centred data, so an offset common to all values (1e8 + x) cannot cancel digits.
        values = values - values.mean()
        unit_mean = np.bincount(unit_index, values) / m_u
        deviation = values - unit_mean[unit_index]
        # Sum over ordered pairs i != j within a unit of (v_i - v_j)^2 = 2 m sum (v - mean)^2.
        within = 2.0 * m_u * np.bincount(unit_index, deviation * deviation) / (m_u - 1.0)
        between = 2.0 * n * float(np.sum(values * values))
        observed, expected = float(within.sum()), between / (n - 1.0)
        return _alpha(observed, expected, n_units)

    categories, codes = np.unique(values, return_inverse=True)
    n_values = len(categories)
    # n_uc: how often category c occurs in unit u, as sparse (unit, category, count) triples.
    keys, counts = np.unique(unit_index * n_values + codes, return_counts=True)
    unit_of, category_of = np.divmod(keys, n_values)
    counts = counts.astype(float)
    share = counts / (m_u[unit_of] - 1.0)
    n_c = np.bincount(category_of, counts, n_values)

    if level == "nominal":
        agreeing = float(np.sum(share * (counts - 1.0)))  # sum of the coincidence diagonal
        observed = n - agreeing
        expected = (n * n - float(np.sum(n_c * n_c))) / (n - 1.0)
        return _alpha(observed, expected, n_units)

    # Ordinal: full coincidence matrix over the (few) categories present.
    per_unit = np.zeros((matrix.shape[1], n_values))
    per_unit[unit_of, category_of] = counts
    weighted = per_unit / (m_u - 1.0)[:, None]
    coincidence = per_unit.T @ weighted
    coincidence[np.diag_indices(n_values)] -= weighted.sum(axis=0)
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    low = np.minimum.outer(np.arange(n_values), np.arange(n_values))
    high = np.maximum.outer(np.arange(n_values), np.arange(n_values))
    delta = (cumulative[high + 1] - cumulative[low] - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    observed = float(np.sum(coincidence * delta))
    expected = float(np.sum(np.outer(n_c, n_c) * delta)) / (n - 1.0)
    return _alpha(observed, expected, n_units)


def _alpha(observed: float, expected: float, n_units: int) -> Coefficient:
    if expected <= 0:
        return Coefficient(None, "every value is the same: expected disagreement is zero", n_units)
    return Coefficient(1.0 - observed / expected, None, n_units)


def cohen_kappa_pair(x: np.ndarray, y: np.ndarray) -> tuple[float | None, int, str | None]:
    """Cohen's kappa of two annotators' labels on the units both labelled: (kappa, n, reason)."""
    both = ~np.isnan(x) & ~np.isnan(y)
    n_units = int(both.sum())
    if n_units == 0:
        return None, 0, "no unit labelled by both"
    x, y = x[both], y[both]
    categories, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    code_x, code_y = codes[:n_units], codes[n_units:]
    observed = float(np.mean(code_x == code_y))
    p_x = np.bincount(code_x, minlength=len(categories)) / n_units
    p_y = np.bincount(code_y, minlength=len(categories)) / n_units
    expected = float(np.sum(p_x * p_y))
    if expected >= 1.0 - 1e-12:
        return None, n_units, "both used one and the same label throughout: chance agreement is 1"
    return (observed - expected) / (1.0 - expected), n_units, None


def cohen_kappa(data) -> tuple[Coefficient, list[PairKappa]]:
    """Mean Cohen's kappa over annotator pairs, each pair on the units both labelled.

    Pairs with no shared unit are left out of the table; pairs whose kappa is undefined
    are listed with the reason and left out of the mean.
    """
    matrix = as_matrix(data)
    present = ~np.isnan(matrix)
    pairs: list[PairKappa] = []
    for first, second in combinations(range(matrix.shape[0]), 2):
        if not np.any(present[first] & present[second]):
            continue
        kappa, n_units, reason = cohen_kappa_pair(matrix[first], matrix[second])
        pairs.append(PairKappa(first, second, kappa, n_units, reason))
    n_units = int(pairable_units(matrix).sum())
    if not pairs:
        return Coefficient(None, "no two annotators labelled a unit in common", 0), pairs
    defined = [pair.kappa for pair in pairs if pair.kappa is not None]
    if not defined:
        return (
            Coefficient(None, "undefined for every annotator pair: " + pairs[0].reason, n_units),
            pairs,
        )
    return Coefficient(float(np.mean(defined)), None, n_units), pairs


def fleiss_kappa(data) -> Coefficient:
    """Fleiss' kappa on units with two or more values; undefined when raters per unit vary."""
    matrix = as_matrix(data)
    keep = pairable_units(matrix)
    n_units = int(keep.sum())
    if n_units == 0:
        return Coefficient(None, "no unit has values from two or more annotators", 0)
    matrix = matrix[:, keep]
    raters = (~np.isnan(matrix)).sum(axis=0)
    if raters.min() != raters.max():
        return Coefficient(
            None,
            f"raters per unit vary ({raters.min()} to {raters.max()}): Fleiss' kappa needs "
            "the same number of raters on every unit",
            n_units,
        )
    counts = _category_counts(matrix)  # (units, categories)
    r = float(raters[0])
    agreement = (np.sum(counts * counts, axis=1) - r) / (r * (r - 1.0))
    shares = counts.sum(axis=0) / (n_units * r)
    expected = float(np.sum(shares * shares))
    if expected >= 1.0 - 1e-12:
        return Coefficient(None, "every value is the same category: chance agreement is 1", n_units)
    return Coefficient((float(agreement.mean()) - expected) / (1.0 - expected), None, n_units)


def percent_agreement(data) -> Coefficient:
    """Pooled percent agreement, 0..1: agreeing comparisons over all comparisons, one per
    unit and annotator pair that both labelled it."""
    matrix = as_matrix(data)
    keep = pairable_units(matrix)
    n_units = int(keep.sum())
    if n_units == 0:
        return Coefficient(None, "no unit has values from two or more annotators", 0)
    counts = _category_counts(matrix[:, keep])
    raters = counts.sum(axis=1)
    agreeing = float(np.sum(counts * (counts - 1.0)) / 2.0)
    comparisons = float(np.sum(raters * (raters - 1.0)) / 2.0)
    return Coefficient(agreeing / comparisons, None, n_units)


def disagreement_rate(data, judge: int, people) -> tuple[float | None, int, int]:
    """Share of comparisons where row ``judge`` labels a unit differently from a person.

    One comparison per unit and person who both labelled it. Returns (rate, shared units,
    comparisons); rate is None when the judge shares no unit with any person.
    """
    matrix = as_matrix(data)
    people = list(people)
    if not people:
        return None, 0, 0
    judge_values = matrix[judge]
    others = matrix[people]
    both = ~np.isnan(others) & ~np.isnan(judge_values)[None, :]
    comparisons = int(both.sum())
    if comparisons == 0:
        return None, 0, 0
    differ = int(np.sum(both & (others != judge_values[None, :])))
    return differ / comparisons, int(both.any(axis=0).sum()), comparisons


def _category_counts(matrix: np.ndarray) -> np.ndarray:
    """(units, categories) counts of each category's values per unit."""
    present = ~np.isnan(matrix)
    values = matrix[present]
    unit_index = np.broadcast_to(np.arange(matrix.shape[1]), matrix.shape)[present]
    _, codes = np.unique(values, return_inverse=True)
    n_values = int(codes.max()) + 1 if codes.size else 0
    flat = np.bincount(unit_index * n_values + codes, minlength=matrix.shape[1] * n_values)
    return flat.reshape(matrix.shape[1], n_values).astype(float)
