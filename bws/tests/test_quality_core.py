"""Annotator quality figures: agreement with the leave-one-out consensus and the
random-clicking flag (bws.core.quality)."""

import numpy as np
import pytest

from bws.core.quality import (
    chance_p_value,
    consensus_agreement,
    looks_random,
    looks_reversed,
    median_seconds,
    precision_recall,
    random_threshold,
    typical_agreement,
)


def _study(rng, n_items=30, n_attentive=8, n_random=2, judgments=60):
    utilities = np.arange(n_items, dtype=float)  # item i better than item j when i > j
    items, best, worst, who = [], [], [], []
    for annotator in range(n_attentive + n_random):
        for _ in range(judgments):
            row = rng.choice(n_items, 4, replace=False)
            if annotator < n_attentive:
                b, w = int(np.argmax(utilities[row])), int(np.argmin(utilities[row]))
            else:
                b, w = rng.choice(4, 2, replace=False)
            items.append(row)
            best.append(b)
            worst.append(w)
            who.append(annotator)
    return np.array(items), np.array(best), np.array(worst), np.array(who)


def test_attentive_annotators_agree_and_random_clickers_sit_near_one_half():
    items, best, worst, who = _study(np.random.default_rng(1))
    agreement = consensus_agreement(items, best, worst, who, 30)
    shares = agreement.share
    assert list(agreement.judgments) == [60] * 10
    assert shares[:8].min() > 0.9
    assert 0.3 < shares[8:].max() < 0.7
    typical = typical_agreement(agreement)
    pairs = zip(agreement.agreeing, agreement.judgments, strict=True)
    flags = [looks_random(k, n, typical) for k, n in pairs]
    assert flags == [False] * 8 + [True] * 2


def test_an_annotator_is_not_part_of_their_own_consensus():
    # Two annotators answering one tuple in opposite ways: each disagrees with the other.
    items = np.array([[0, 1, 2, 3], [0, 1, 2, 3]])
    agreement = consensus_agreement(items, np.array([0, 3]), np.array([3, 0]), np.array([0, 1]), 4)
    assert list(agreement.agreeing) == [0.0, 0.0]
    # Alone, an annotator has no consensus to agree with: a tie, counted one half.
    alone = consensus_agreement(items[:1], np.array([0]), np.array([3]), np.array([0]), 4)
    assert list(alone.agreeing) == [0.5]


def test_judgments_left_out_of_the_consensus_are_still_measured():
    items = np.array([[0, 1, 2, 3]] * 3)
    best, worst = np.array([3, 3, 0]), np.array([0, 0, 3])
    who = np.array([0, 1, 2])
    everyone = consensus_agreement(items, best, worst, who, 4)
    without_first = consensus_agreement(
        items, best, worst, who, 4, counted=np.array([False, True, True])
    )
    # Annotator 1 agrees with 0 and 2 together (a tie: one for, one against) ...
    assert everyone.agreeing[1] == 0.5
    # ... and disagrees once 0 is left out (only 2, who reversed it, remains).
    assert without_first.agreeing[1] == 0.0
    assert without_first.judgments[0] == 1


def test_chance_p_value_is_the_binomial_upper_tail():
    assert chance_p_value(10, 10) == pytest.approx(0.5**10)
    assert chance_p_value(0, 10) == pytest.approx(1.0)
    assert chance_p_value(5.5, 10) == pytest.approx(chance_p_value(5, 10))


def test_the_threshold_lies_between_one_half_and_the_typical_agreement():
    for typical in (0.6, 0.8, 0.95):
        assert 0.5 < random_threshold(typical) < typical


def test_too_few_judgments_are_never_flagged():
    assert not looks_random(4, 9, 0.8)
    assert looks_random(5, 10, 0.8)


def test_median_time_and_precision_recall():
    assert median_seconds([1000, None, 3000, 2000]) == 2.0
    assert median_seconds([None]) is None
    precision, recall = precision_recall(
        np.array([True, True, False, False]), np.array([True, False, True, False])
    )
    assert (precision, recall) == (0.5, 0.5)


def test_answers_swapped_more_often_than_chance_are_reversed_not_random():
    assert looks_reversed(2, 40)
    assert not looks_reversed(20, 40)
    assert not looks_reversed(0, 9)  # too few to tell
