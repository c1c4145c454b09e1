"""Annotator quality from best-worst judgments: how often each annotator agrees with the
consensus of the others, and a flag for answers that look like random clicking.

Agreement with the consensus: for each of an annotator's judgments, whether the item they
chose as best has a higher counting score ((best - worst) / appearances) than the item
they chose as worst, the scores computed from everyone else's judgments (leave one
annotator out, so no one agrees with themselves). A tie counts one half. Someone who
clicks at random picks best and worst as two random distinct items of the tuple, so they
agree half the time whatever the scores; an attentive annotator agrees far more often.

The random-clicking flag: an annotator with at least ``min_judgments`` judgments whose
agreement is not significantly above one half (one-sided binomial test, alpha 0.01) and
is likelier under a random clicker (one half) than under the study's typical annotator
(the median agreement). benchmarks/quality.py measures the flag's
precision and recall on simulated studies.

No Django here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

ALPHA = 0.01
MIN_JUDGMENTS = 10
# Where the typical agreement is held: below 0.6 a random clicker cannot be told apart.
TYPICAL_RANGE = (0.6, 0.95)


@dataclass(frozen=True)
class ConsensusAgreement:
    """Per annotator (by index): judgments counted and the share agreeing with the rest."""

    judgments: np.ndarray  # int, per annotator
    agreeing: np.ndarray  # float (ties count 0.5), per annotator

    @property
    def share(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(
                self.judgments > 0, self.agreeing / np.maximum(self.judgments, 1), np.nan
            )


def consensus_agreement(
    items: np.ndarray,
    best: np.ndarray,
    worst: np.ndarray,
    annotators: np.ndarray,
    n_items: int,
    n_annotators: int | None = None,
    *,
    counted: np.ndarray | None = None,
) -> ConsensusAgreement:
    """Each annotator's agreement with the leave-one-out consensus.

    ``items`` is the (m, T) array of item indices of each judgment's tuple, ``best`` and
    ``worst`` the column positions chosen, ``annotators`` each judgment's annotator index
    (0..n_annotators-1). ``counted`` (a boolean per judgment; all by default) says which
    judgments make the consensus: an annotator left out is still measured against it.
    """
    items = np.asarray(items, dtype=np.int64)
    m = items.shape[0]
    annotators = np.asarray(annotators, dtype=np.int64)
    n_annotators = int(n_annotators if n_annotators is not None else annotators.max(initial=-1) + 1)
    if m == 0:
        zeros = np.zeros(n_annotators)
        return ConsensusAgreement(zeros.astype(np.int64), zeros)
    rows = np.arange(m)
    best_item = items[rows, np.asarray(best, dtype=np.int64)]
    worst_item = items[rows, np.asarray(worst, dtype=np.int64)]
    counted = np.ones(m, dtype=bool) if counted is None else np.asarray(counted, dtype=bool)
    weight = counted.astype(float)
    # Per annotator and item: times chosen best, worst, and shown (counted judgments only).
    shape = (n_annotators, n_items)
    b = np.zeros(shape)
    w = np.zeros(shape)
    a = np.zeros(shape)
    np.add.at(b, (annotators, best_item), weight)
    np.add.at(w, (annotators, worst_item), weight)
    np.add.at(
        a, (np.repeat(annotators, items.shape[1]), items.ravel()), np.repeat(weight, items.shape[1])
    )
    b_rest = b.sum(axis=0) - b
    w_rest = w.sum(axis=0) - w
    a_rest = a.sum(axis=0) - a
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(a_rest > 0, (b_rest - w_rest) / np.maximum(a_rest, 1), 0.0)
    s_best = scores[annotators, best_item]
    s_worst = scores[annotators, worst_item]
    agree = np.where(s_best > s_worst, 1.0, np.where(s_best == s_worst, 0.5, 0.0))
    judgments = np.bincount(annotators, minlength=n_annotators)
    agreeing = np.bincount(annotators, weights=agree, minlength=n_annotators)
    return ConsensusAgreement(judgments.astype(np.int64), agreeing)


def chance_p_value(agreeing: float, n: int) -> float:
    """One-sided p-value of agreeing at least this often by chance (each judgment agreeing
    with probability one half); a half agreement (a tie) is rounded down."""
    if n <= 0:
        return 1.0
    k = int(np.floor(agreeing + 1e-9))
    return float(binom.sf(k - 1, n, 0.5))


def typical_agreement(agreement: ConsensusAgreement, min_judgments: int = MIN_JUDGMENTS) -> float:
    """The study's typical agreement: the median share of the annotators with enough
    judgments, held within TYPICAL_RANGE (a study of few annotators or little consensus
    still gets a usable figure). Random clickers, while fewer than half, barely move it."""
    shares = agreement.share[agreement.judgments >= min_judgments]
    typical = float(np.median(shares)) if shares.size else TYPICAL_RANGE[1]
    return float(np.clip(typical, *TYPICAL_RANGE))


def random_threshold(typical: float) -> float:
    """The agreement below which one half is the likelier explanation than ``typical``:
    k of n judgments agreeing is likelier under a random clicker (each agreeing with
    probability 1/2) than under the typical annotator when k/n is below this."""
    return float(np.log(0.5 / (1 - typical)) / np.log(typical / (1 - typical)))


def looks_random(
    agreeing: float,
    n: int,
    typical: float,
    *,
    alpha: float = ALPHA,
    min_judgments: int = MIN_JUDGMENTS,
) -> bool:
    """The random-clicking flag: at least ``min_judgments`` judgments, an agreement with the
    consensus not significantly above one half (one-sided binomial test at ``alpha``), and
    closer (in likelihood) to the one half of a random clicker than to the study's typical
    agreement. The test spares the attentive but noisy annotator with many judgments; the
    likelihood ratio spares the typical annotator with few."""
    if n < min_judgments:
        return False
    return agreeing / n < random_threshold(typical) and chance_p_value(agreeing, n) > alpha


def looks_reversed(
    agreeing: float, n: int, *, alpha: float = ALPHA, min_judgments: int = MIN_JUDGMENTS
) -> bool:
    """Agreement significantly below one half (one-sided binomial test at ``alpha``): best and
    worst swapped more often than chance, as someone who read the question backwards does.
    Not random clicking, and told apart from it."""
    if n < min_judgments:
        return False
    k = int(np.ceil(agreeing - 1e-9))
    return float(binom.cdf(k, n, 0.5)) < alpha


def gold_accuracy(right: np.ndarray) -> float | None:
    """The share of gold checks answered right (None without any)."""
    right = np.asarray(right, dtype=float)
    return float(right.mean()) if right.size else None


def median_seconds(milliseconds) -> float | None:
    """The median time per unit in seconds, of the times known (None without any)."""
    known = np.asarray([t for t in milliseconds if t is not None], dtype=float)
    return float(np.median(known) / 1000.0) if known.size else None


def precision_recall(flagged: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Precision and recall of a flag against the truth (both boolean per annotator); a
    precision with nothing flagged is 1 (no false alarm), a recall with nothing to find 1."""
    flagged = np.asarray(flagged, dtype=bool)
    truth = np.asarray(truth, dtype=bool)
    hits = int((flagged & truth).sum())
    precision = hits / flagged.sum() if flagged.sum() else 1.0
    recall = hits / truth.sum() if truth.sum() else 1.0
    return float(precision), float(recall)
