"""Diagnostics of judgments: separate groups, separated items, approximate intervals."""

import json

import numpy as np
import pytest

from bws.core import diagnostics
from bws.core.bootstrap import bootstrap_intervals
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.diagnostics import StoredDiagnostics, diagnose, diagnose_report
from bws.core.judgments import Judgments
from bws.core.scoring import fit


def maxdiff(tuples, n_items, *, seed=0, annotators=None, tuple_ids=None, last=None):
    """MaxDiff answers from spread utilities; ``last`` fixes the (best, worst) column
    positions of the last rows."""
    rng = np.random.default_rng(seed)
    utilities = np.linspace(-1.5, 1.5, n_items)
    best, worst = sample_maxdiff(tuples, utilities, rng)
    m = len(tuples)
    for k, (b, w) in enumerate(last or [], start=m - len(last or [])):
        best[k], worst[k] = b, w
    return Judgments(
        items=tuples,
        best=best,
        worst=worst,
        tuple_ids=np.arange(m) if tuple_ids is None else tuple_ids,
        annotators=np.zeros(m) if annotators is None else annotators,
        order=np.arange(m),
        n_items=n_items,
    )


def two_groups():
    """Items 0..29 and 30..39 never share a tuple; item 40 is never shown."""
    tuples = np.vstack([balanced_tuples(30, 4, 8, seed=1), balanced_tuples(10, 4, 8, seed=2) + 30])
    return maxdiff(tuples, 41)


def test_a_connected_design_has_nothing_to_say():
    judgments = maxdiff(balanced_tuples(40, 4, 12, seed=3), 40)
    scores = fit("bradley_terry", judgments)
    found = diagnose_report(judgments, scores, bootstrap_intervals(judgments, "bradley_terry"))
    assert found.connected and found.component_sizes == [40]
    assert found.never_shown.size == 0 and found.separated.size == 0
    assert found.n_approximate == 0 and found.messages == []


def test_two_groups_are_found_with_their_items_and_said_to_be_incomparable():
    found = diagnose(two_groups())
    assert found.n_components == 2 and found.component_sizes == [30, 10]
    big, small = found.components
    assert big.tolist() == list(range(30)) and small.tolist() == list(range(30, 40))
    assert found.component[40] == -1 and found.never_shown.tolist() == [40]
    assert found.messages[0].startswith("2 separate groups of items (30 and 10 items):")
    assert "comparable only within a group" in found.messages[0]
    assert found.messages[1] == "1 item was never shown: no score or rank."


def test_groups_do_not_depend_on_item_numbering():
    judgments = two_groups()
    permutation = np.random.default_rng(5).permutation(41)
    found = diagnose(judgments.permute_items(permutation))
    assert found.component_sizes == [30, 10]
    assert sorted(permutation[:30].tolist()) == found.components[0].tolist()


def test_many_groups_give_the_largest_and_smallest_size():
    tuples = np.vstack([balanced_tuples(8, 4, 4, seed=k) + 8 * k for k in range(6)])
    tuples = np.vstack([tuples, np.array([[48, 49, 50, 51]])])
    found = diagnose(maxdiff(tuples, 52))
    assert found.component_sizes == [8] * 6 + [4]
    assert found.messages[0].startswith("7 separate groups of items (largest 8 items, smallest 4)")
    even = diagnose(maxdiff(tuples[:-1], 48))
    assert even.messages[0].startswith("6 separate groups of items (8 items each)")
    expected = [list(range(8 * k, 8 * k + 8)) for k in range(6)]
    assert [c.tolist() for c in even.components] == expected


def test_an_item_best_every_time_and_one_worst_every_time_are_separated():
    items = np.array([[0, 1, 2, 3], [0, 4, 5, 6], [0, 2, 4, 7], [1, 3, 5, 7], [6, 7, 1, 2]])
    best = np.array([0, 0, 0, 1, 6])
    worst = np.array([3, 6, 7, 7, 7])
    judgments = Judgments.from_indices(items, best, worst)
    found = diagnose(judgments, scores=fit("bradley_terry", judgments))
    assert found.always_best.tolist() == [0]
    assert found.always_worst.tolist() == [7]
    assert found.separated.tolist() == [0, 7]
    # Never best but not always worst: one-sided, listed, not separated.
    assert 3 in found.never_best.tolist() and 7 not in found.never_best.tolist()
    assert found.messages == [
        "1 item was chosen best and 1 item was chosen worst every time they were shown: the "
        "data put no bound on their scores (the fit holds them finite only by its penalty)."
    ]
    counted = diagnose(judgments, scores=fit("counting", judgments))
    assert "(+1 or -1)" in counted.messages[0]


def test_separated_items_intervals_are_approximate():
    items = np.array([[0, 1, 2, 3], [0, 4, 5, 6], [0, 2, 4, 7], [1, 3, 5, 7], [6, 7, 1, 2]])
    judgments = Judgments.from_indices(items, [0, 0, 0, 1, 6], [3, 6, 7, 7, 7])
    low, high = np.full(8, -0.5), np.full(8, 0.5)
    found = diagnose(
        judgments, low=low, high=high, unit="judgment", min_appearances=1, min_clusters=1
    )
    assert np.flatnonzero(found.approximate).tolist() == [0, 7]
    assert found.note(0) == "Approximate interval: chosen best every time it was shown."
    assert found.note(7) == "Approximate interval: chosen worst every time it was shown."
    assert found.note(1) is None


def test_one_annotator_resampled_by_annotator_marks_every_interval_approximate():
    judgments = maxdiff(balanced_tuples(40, 4, 12, seed=3), 40)
    intervals = bootstrap_intervals(judgments, "counting", resamples=50, unit="annotator")
    # The degenerate bootstrap itself: every resample is the data (up to rounding).
    assert np.allclose(intervals.high, intervals.low, rtol=0, atol=1e-12)
    found = diagnose_report(judgments, fit("counting", judgments), intervals)
    assert found.n_clusters == 1 and found.approximate.all()
    assert found.zero_width.tolist() == list(range(40))
    assert found.messages[-1] == (
        "The bootstrap resampled annotators, and there is only 1: it needs at least 6 to "
        "show the spread, so every interval is approximate (\u2248)."
    )
    note = found.note(0)
    assert "zero width, which is not certainty" in note and "in only 1 distinct annotator " in note


def test_few_appearances_and_few_clusters_are_told_apart():
    # Items 0..35 appear in 8 tuples each; item 36 in 3 tuples.
    tuples = balanced_tuples(36, 4, 8, seed=4)
    extra = np.array([[36, 0, 1, 2], [36, 3, 4, 5], [36, 6, 7, 8]])
    tuples = np.vstack([tuples, extra])
    # Item 36 is best once, worst once and in the middle once: not separated.
    answers = [(0, 1), (1, 0), (1, 2)]
    # Two annotators judge every tuple: item 36 has 6 appearances but 3 tuples.
    doubled = np.vstack([tuples, tuples])
    m = len(tuples)
    judgments = maxdiff(
        doubled,
        37,
        tuple_ids=np.tile(np.arange(m), 2),
        annotators=np.repeat([0, 1], m),
        last=answers,
    )
    intervals = bootstrap_intervals(judgments, "counting", resamples=200)
    found = diagnose_report(judgments, fit("counting", judgments), intervals)
    assert found.appearances[36] == 6 and found.clusters[36] == 3
    assert found.interval_flags[36] & diagnostics.FEW_CLUSTERS
    assert not found.interval_flags[36] & diagnostics.FEW_APPEARANCES
    assert "in only 3 distinct tuples" in found.note(36)
    assert all(found.clusters[:36] >= 8)
    # By judgment the same item has 6 clusters: no longer too few.
    by_judgment = diagnose(judgments, low=intervals.low, high=intervals.high, unit="judgment")
    assert not by_judgment.interval_flags[36] & diagnostics.FEW_CLUSTERS
    single = maxdiff(tuples, 37, last=answers)
    seen = diagnose(single, low=np.zeros(37) - 1, high=np.ones(37))
    assert seen.interval_flags[36] & diagnostics.FEW_APPEARANCES
    assert np.flatnonzero(seen.approximate).tolist() == [36]
    assert "seen fewer than 6 times (seen 3)" in seen.note(36)
    assert seen.messages == [
        "Intervals of 1 item (of 37) are approximate (\u2248): 1 seen fewer than 6 times."
    ]


def test_zero_width_and_missing_intervals_are_approximate_whatever_the_counts():
    judgments = maxdiff(balanced_tuples(20, 4, 12, seed=6), 20)
    low, high = np.linspace(-1, 0.5, 20), np.linspace(-0.5, 1, 20)
    high[3] = low[3]
    low[4] = np.nan
    found = diagnose(judgments, low=low, high=high)
    assert np.flatnonzero(found.approximate).tolist() == [3, 4]
    assert found.zero_width.tolist() == [3]
    assert found.interval_flags[4] == diagnostics.NO_INTERVAL


def test_the_stored_form_is_json_and_answers_per_item():
    judgments = two_groups()
    low, high = np.full(41, -0.2), np.full(41, 0.2)
    high[5] = low[5]
    found = diagnose(judgments, method="counting", low=low, high=high)
    stored = json.loads(json.dumps(found.to_dict()))
    assert stored["component_sizes"] == [30, 10] and stored["never_shown"] == [40]
    assert stored["messages"] == found.messages
    read = StoredDiagnostics(stored)
    assert read.n_groups == 2 and read.group(3) == 1 and read.group(35) == 2
    assert read.zero_width(5) and read.approximate(5) and not read.approximate(6)
    assert read.note(5) == found.note(5)
    assert StoredDiagnostics({}).group(3) is None and StoredDiagnostics(None).messages == []


@pytest.mark.parametrize("unit", ["tuple", "judgment", "annotator"])
def test_clusters_per_item_count_distinct_clusters(unit):
    items = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3]])
    judgments = Judgments.from_indices(
        items, [0, 1, 2], [1, 3, 3], tuple_ids=[0, 0, 1], annotators=[0, 1, 1]
    )
    found = diagnose(judgments, unit=unit)
    expected = {"tuple": [2, 1, 2, 2], "judgment": [3, 2, 2, 2], "annotator": [2, 2, 2, 1]}
    assert found.clusters.tolist() == expected[unit]


def test_intervals_not_from_a_bootstrap_are_judged_by_width_and_separation_only():
    # Item 36 is seen 3 times; posterior intervals are not bound by the bootstrap's
    # thresholds, but a zero-width one is still approximate.
    tuples = np.vstack([balanced_tuples(36, 4, 8, seed=4), [[36, 0, 1, 2], [36, 3, 4, 5]]])
    judgments = maxdiff(tuples, 37, last=[(0, 1), (1, 0)])
    low, high = np.full(37, -1.0), np.full(37, 1.0)
    high[7] = low[7]
    found = diagnose(judgments, low=low, high=high, unit="model", interval_kind="posterior")
    assert not found.resampled and found.n_clusters == len(tuples)  # counted by tuple
    assert np.flatnonzero(found.approximate).tolist() == [7]
    assert found.to_dict()["interval_kind"] == "posterior"
    bootstrap = diagnose(judgments, low=low, high=high)
    assert np.flatnonzero(bootstrap.approximate).tolist() == [7, 36]


def test_intervals_of_a_design_where_a_method_missed_the_band_are_approximate():
    # Tuples chosen from the current fit: Plackett-Luce's 95% intervals covered 0.67-0.98
    # under iterative rounds, Bradley-Terry's 0.66-0.97 there and 0.90-0.96 under adaptive
    # batches, counting's 0.96-0.98 under iterative rounds (benchmarks/RESULTS.md); the
    # others covered.
    tuples = np.vstack([balanced_tuples(36, 4, 8, seed=4), [[36, 0, 1, 2]]])
    judgments = maxdiff(tuples, 38)  # item 36 is seen once (separated), 37 never shown
    low, high = np.full(38, -1.0), np.full(38, 1.0)

    def check(method, design):
        return diagnose(
            judgments,
            method=method,
            low=low,
            high=high,
            unit="model",
            interval_kind="posterior",
            design=design,
        )

    plain = check("plackett_luce", None)
    assert np.flatnonzero(plain.approximate).tolist() == [36]
    for method, design, shown in (
        ("plackett_luce", "iterative", "0.67-0.98"),
        ("bradley_terry", "iterative", "0.66-0.97"),
        ("counting", "iterative", "0.96-0.98"),
        ("bradley_terry", "adaptive", "0.90-0.96"),
    ):
        found = check(method, design)
        assert np.flatnonzero(found.approximate).tolist() == list(range(37))
        assert (found.interval_flags[:37] & diagnostics.DESIGN).all()
        as_before = check(method, None).messages
        assert found.messages[:-1] == as_before[:-1]  # the rest is said as before
        message = found.messages[-1]
        assert shown in message and "every interval is approximate" in message
        assert "missing the 0.93-0.97 band" in message
        assert diagnostics.DESIGN_WORDS[design] in message
        assert shown in found.note(5) and diagnostics.DESIGN_WORDS[design] in found.note(5)
        stored = StoredDiagnostics(json.loads(json.dumps(found.to_dict())))
        assert stored.summary()["design"] == design
        assert stored.flags(5) & diagnostics.DESIGN and stored.approximate(36)
        assert stored.note(5) == found.note(5)
    # methods whose intervals covered under a strategy are marked as on a balanced design
    for method, design in (("plackett_luce", "adaptive"), ("counting", "adaptive")):
        found = check(method, design)
        assert np.flatnonzero(found.approximate).tolist() == [36]
        assert not any("simulations" in m for m in found.messages)
    # with no intervals there is nothing to mark
    assert not diagnose(judgments, method="plackett_luce", design="iterative").approximate.any()
