"""Split-half reliability of a model fit, for designs that are not balanced.

The counting split-half (``reliability.split_half``) scores each half by counting, which
reads an item shown among stronger items as weaker. Under an adaptive design (tuples of
items close in the fit) or iterative rounds (tuples inside score buckets) that reading
is wrong in both halves alike, so the split-half falls while the ranking gets better
(benchmarks/RESULTS.md, "Adaptive designs": 0.46-0.51 under adaptive batches, with
Spearman with the truth 0.74-0.83). A model fit (Plackett-Luce by default) accounts for
whom each item met, so the same split read through it measures the ranking:

* ``model_split_half``: the judgments are split as ``reliability.half_masks`` splits them;
  each half is fitted by the model (the judgments of the other half weighted 0); the two
  score lists are correlated (Spearman, over the items shown in both halves); the mean
  over ``trials`` splits is reported with its Spearman-Brown value (the reliability of the
  whole data), as the counting split-half is.

Measured against the truth (the squared Spearman of the full fit with the true utilities)
in bws/tests/test_model_reliability.py and benchmarks/adaptive.py: under adaptive designs
it reads high, by 0.01-0.10 for normal utilities and 0.14-0.19 for heavy-tailed ones,
because each half's later tuples were chosen with the other half's answers (the design
carries information across the split); the counting split-half reads low, by 0.07-0.20
for normal utilities and up to 0.09 for heavy-tailed ones. From 4 appearances per item on
the truth lay between the two (within 0.01).
``posterior_reliability`` (the fit's own, no split) read high even for balanced designs
(0.01-0.23), so it is reported by the benchmark only. Pure numpy.
"""

from __future__ import annotations

import numpy as np

from bws.core.judgments import Judgments
from bws.core.reliability import SplitHalf, split_half_of
from bws.core.scoring import METHOD_NAMES, fit

__all__ = [
    "DEFAULT_TRIALS",
    "MODEL_METHOD",
    "model_reliability_entry",
    "model_reliability_lines",
    "model_split_half",
    "posterior_reliability",
]

# Each trial costs two fits (0.1-0.2 s each at 10,000 items and 20,000 judgments).
DEFAULT_TRIALS = 5
MODEL_METHOD = "plackett_luce"


def model_split_half(
    judgments: Judgments, *, method: str = MODEL_METHOD, trials: int = DEFAULT_TRIALS, seed=0
) -> SplitHalf:
    """Split-half reliability of ``method``'s fit (a model: "plackett_luce" or
    "bradley_terry") over ``trials`` random splits (seeded)."""
    if method == "counting":
        raise ValueError("model_split_half needs a model; counting has reliability.split_half")
    n, size = judgments.n_items, judgments.tuple_size
    items = judgments.items.ravel()

    def fitted(weights: np.ndarray) -> np.ndarray:
        shown = np.bincount(items, np.repeat(weights, size), n) > 0
        scores = fit(method, judgments, weights=weights).scores.astype(float)
        scores[~shown] = np.nan
        return scores

    return split_half_of(judgments, fitted, trials=trials, seed=seed)


def model_reliability_entry(judgments: Judgments, method: str, *, seed=0) -> dict | None:
    """The model split-half of an adaptive design in the form a scoring run stores and the
    stats text shows (``reliability["model"]``): the scheme's method when it is a model,
    else MODEL_METHOD; None with fewer than 2 judgments or when no split correlates."""
    if judgments.n_judgments < 2:
        return None
    model = method if method != "counting" else MODEL_METHOD
    result = model_split_half(judgments, method=model, seed=seed)
    if not np.isfinite(result.mean):
        return None
    return {
        "method": model,
        "method_name": METHOD_NAMES[model],
        "mean": result.mean,
        "std": float(result.std),
        "spearman_brown": result.spearman_brown,
        "spearman_brown_reason": result.spearman_brown_reason,
        "trials": result.trials,
        "split": result.split,
    }


def model_reliability_lines(entry: dict) -> list[str]:
    """The stats text's lines for a ``model_reliability_entry``."""
    brown = entry["spearman_brown"]
    brown = entry["spearman_brown_reason"] if brown is None else f"{brown:.2f}"
    return [
        f"Model Split-Half Reliability ({entry['method_name']} fit of each half): r = "
        f"{entry['mean']:.2f} (Spearman-Brown {brown}; sd {entry['std']:.2f} over "
        f"{entry['trials']} splits)",
        "  An adaptive design: the counting split-half reads low, this one high; in "
        "simulations the true reliability lay between (from 4 appearances per item on).",
    ]


def posterior_reliability(scores, sd) -> float | None:
    """The fit's own reliability from its posterior means ``scores`` and standard
    deviations ``sd`` (NaN: not scored, left out): var(true) / (var(true) + mean posterior
    variance), var(true) taken as var(scores) + mean posterior variance (the law of total
    variance for posterior means). None with fewer than 3 scored items."""
    u, s = np.asarray(scores, dtype=float), np.asarray(sd, dtype=float)
    ok = np.isfinite(u) & np.isfinite(s)
    if ok.sum() < 3:
        return None
    spread, noise = float(np.var(u[ok])), float(np.mean(s[ok] ** 2))
    return spread / (spread + noise) if spread + noise > 0 else None
