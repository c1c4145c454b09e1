"""Studies with few items: the model fits integrate their prior's variance out, so their
calibrated 95% intervals cover in the band from 6 items up and nothing is marked for the
study's size. Where a method is listed in coverage_limits (measured to miss below an item
count; none is now, the former limits are used to check the mechanism), every interval of
a smaller study is marked approximate (SMALL_STUDY), with the measured coverage."""

import json

import numpy as np
import pytest

from benchmarks.coverage import simulate, target
from bws.core import coverage_limits, diagnostics
from bws.core.bootstrap import bootstrap_intervals
from bws.core.diagnostics import StoredDiagnostics, diagnose_report
from bws.core.intervals import calibrated
from bws.core.scoring import fit

# The limits measured before the prior's variance was integrated out: they exercise the
# marking that a future measured miss would use.
FORMER_ITEMS = {"bradley_terry": 40, "plackett_luce": 20}
FORMER_COVERAGE = {"bradley_terry": "0.809-0.945", "plackett_luce": "0.833-0.950"}
LIMITED = sorted(FORMER_ITEMS)


@pytest.fixture
def limited(monkeypatch):
    for method in LIMITED:
        monkeypatch.setitem(coverage_limits.SMALL_STUDY_ITEMS, method, FORMER_ITEMS[method])
        monkeypatch.setitem(coverage_limits.SMALL_STUDY_COVERAGE, method, FORMER_COVERAGE[method])


def study(n_items, seed=1, appearances=8):
    judgments, *_ = simulate(n_items, appearances, 1, 0.0, seed)
    return judgments


def checked(n_items, method, seed=1):
    judgments = study(n_items, seed)
    scores, intervals = calibrated(judgments, method)
    return diagnose_report(judgments, scores, intervals)


def test_no_method_is_limited_now():
    # benchmarks/coverage.py --small (benchmarks/RESULTS.md, "Interval coverage"): every
    # cell from 6 items up covered 0.943-0.968 (model fits) and 0.940-0.965 (counting).
    assert coverage_limits.SMALL_STUDY_ITEMS == {}
    for method in ("counting", "bradley_terry", "plackett_luce"):
        assert coverage_limits.small_study_items(method) == 0


@pytest.mark.parametrize("method", LIMITED)
def test_a_study_of_6_items_is_not_marked_for_its_size(method):
    found = checked(6, method)
    assert not (found.interval_flags & diagnostics.SMALL_STUDY).any()
    assert not any("simulations of studies under" in m for m in found.messages)


@pytest.mark.parametrize("method", LIMITED)
def test_every_interval_of_a_study_under_a_limit_is_approximate_with_its_range(method, limited):
    found = checked(10, method)
    shown = found.appearances > 0
    assert shown.all()
    assert (found.interval_flags & diagnostics.SMALL_STUDY).all()
    assert found.n_approximate == 10
    message = coverage_limits.small_study_message(10, method)
    assert message in found.messages
    limit, measured = FORMER_ITEMS[method], FORMER_COVERAGE[method]
    assert message.startswith(
        f"The study has only 10 items: in simulations of studies under {limit}"
    )
    assert f"covered {measured} of the time" in message
    assert message.endswith("so every interval is approximate (\u2248).")
    # No other reason is claimed for these items: the small study's message stands alone.
    assert not any(m.startswith("Intervals of ") for m in found.messages)
    for item in (0, 9):
        note = found.note(item)
        assert "only 10 items" in note and measured in note
    stored = StoredDiagnostics(json.loads(json.dumps(found.to_dict())))
    assert all(stored.approximate(i) for i in range(10))
    assert stored.note(3, 8) == found.note(3)
    assert stored.messages == found.messages


@pytest.mark.parametrize("method", LIMITED)
def test_a_study_at_the_limit_is_not_marked(method, limited):
    limit = coverage_limits.SMALL_STUDY_ITEMS[method]
    found = checked(limit, method)
    assert not (found.interval_flags & diagnostics.SMALL_STUDY).any()
    assert not any("simulations of studies under" in m for m in found.messages)
    below = checked(limit - 1, method)
    assert (below.interval_flags & diagnostics.SMALL_STUDY).all()


def test_counting_and_bootstrap_intervals_of_a_small_study_are_not_marked_for_its_size(limited):
    judgments = study(10)
    scores, intervals = calibrated(judgments, "counting")
    found = diagnose_report(judgments, scores, intervals)
    assert not (found.interval_flags & diagnostics.SMALL_STUDY).any()
    # The limit was measured on calibrated intervals; a bootstrap's have their own checks.
    plain = fit("bradley_terry", judgments)
    boot = bootstrap_intervals(judgments, "bradley_terry", scores=plain, resamples=200)
    found = diagnose_report(judgments, plain, boot)
    assert not (found.interval_flags & diagnostics.SMALL_STUDY).any()


def test_the_message_for_a_bradley_terry_study_of_10_items(limited):
    limit, measured = FORMER_ITEMS["bradley_terry"], FORMER_COVERAGE["bradley_terry"]
    assert coverage_limits.small_study_message(10, "bradley_terry") == (
        f"The study has only 10 items: in simulations of studies under {limit} items, "
        f"Bradley-Terry calibrated intervals called 95% covered {measured} of the time, so "
        "every interval is approximate (\u2248)."
    )


@pytest.mark.parametrize("method", ["counting", "bradley_terry", "plackett_luce"])
def test_intervals_of_studies_of_40_items_cover_in_the_band(method):
    # 60 simulated studies of 40 items (4 appearances, three judgments per tuple), the
    # seeds of benchmarks/coverage.py --small: 2,400 intervals, standard error about 0.005
    # (0.947, 0.940 and 0.950 for counting, Bradley-Terry and Plackett-Luce).
    inside = []
    for rep in range(60):
        judgments, truth, tuples, own = simulate(40, 4, 3, 0.0, 7919 * rep + 1)
        goal = target(method, truth, tuples, own)
        _, intervals = calibrated(judgments, method)
        inside.append((intervals.low <= goal) & (goal <= intervals.high))
    assert 0.93 <= np.mean(inside) <= 0.97


@pytest.mark.parametrize("method", ["bradley_terry", "plackett_luce"])
@pytest.mark.parametrize("n_items", [10, 20])
def test_intervals_of_studies_of_10_and_20_items_cover_in_the_band(method, n_items):
    # Below 40 items the prior's variance is integrated out (bws/core/hyperprior.py); with
    # the point estimate plugged in, Bradley-Terry's intervals covered 0.861 at 10 items and
    # 0.93 at 20, Plackett-Luce's 0.884 at 10 (4 appearances, one judgment per tuple).
    # 2,000 intervals of the seeds of benchmarks/coverage.py --small: standard error about
    # 0.006.
    inside = []
    for rep in range(2000 // n_items):
        judgments, truth, tuples, own = simulate(n_items, 4, 1, 0.0, 7919 * rep + 1)
        goal = target(method, truth, tuples, own)
        _, intervals = calibrated(judgments, method)
        inside.append((intervals.low <= goal) & (goal <= intervals.high))
    assert 0.93 <= np.mean(inside) <= 0.97
