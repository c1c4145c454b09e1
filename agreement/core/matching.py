"""One-to-one matching of two annotators' objects by IoU."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

# IoU computed in floating point may land a hair under a threshold it meets exactly.
THRESHOLD_SLACK = 1e-12
# Worth of a preferred pair (same label) among otherwise equal assignments: far under any
# IoU difference that matters, so count and total IoU still decide first.
TIE_BREAK = 1e-9


def match_objects(
    iou_matrix: np.ndarray,
    threshold: float,
    allowed: np.ndarray | None = None,
    prefer: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Matched (rows, cols) of an (n, m) IoU matrix: the most pairs at or above ``threshold``,
    and among those the highest total IoU.

    Pairs under the threshold (or outside ``allowed``, e.g. another tier) are priced out
    before solving: an admissible pair is worth a bonus larger than any total IoU plus its
    IoU, a forbidden pair nothing, so the assignment maximises the count first. Rows the
    solver had to seat on a zero-worth pair are unmatched; they never entered the total.
    Between assignments equal in count and total IoU, ``prefer`` (e.g. same label) decides,
    so the result does not depend on the order of the objects.
    """
    iou = np.asarray(iou_matrix, dtype=float)
    if iou.ndim != 2:
        raise ValueError(f"iou_matrix must be 2-dimensional, got shape {iou.shape}")
    empty = np.zeros(0, dtype=np.int64)
    if iou.size == 0:
        return empty, empty
    admissible = iou >= threshold - THRESHOLD_SLACK
    if allowed is not None:
        admissible &= np.asarray(allowed, dtype=bool)
    if not admissible.any():
        return empty, empty
    bonus = float(min(iou.shape)) + 1.0
    worth = np.where(admissible, bonus + iou, 0.0)
    if prefer is not None:
        worth += TIE_BREAK * (admissible & np.asarray(prefer, dtype=bool))
    rows, cols = linear_sum_assignment(worth, maximize=True)
    keep = admissible[rows, cols]
    return rows[keep].astype(np.int64), cols[keep].astype(np.int64)
