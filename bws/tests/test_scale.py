"""Scoring at scale: calibrated Plackett-Luce takes few passes over the judgments, the
bootstrap's resample table stays within its memory budget whatever the number of items
(same intervals as in memory), and a run's item rows are written in one go (COPY on
PostgreSQL), all or nothing."""

import dataclasses
import tracemalloc

import numpy as np
import pytest

from bws.core import bootstrap, choice_models, intervals, scoring
from bws.core.choice_models import MaxDiffModel, sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.judgments import Judgments
from bws.tests.test_scoring import simulated


def maxdiff(n_items: int, seed: int = 1) -> Judgments:
    """A balanced design of tuples of 4 with 8 appearances, one MaxDiff judgment per tuple."""
    rng = np.random.default_rng(seed)
    tuples = balanced_tuples(n_items, 4, 8, seed=seed)
    best, worst = sample_maxdiff(tuples, rng.normal(size=n_items), rng)
    m = tuples.shape[0]
    return Judgments(
        tuples, best, worst, np.arange(m), np.zeros(m, dtype=np.int64), np.arange(m), n_items
    )


@pytest.mark.parametrize("method", scoring.METHODS)
def test_spilled_intervals_equal_the_in_memory_intervals(method):
    judgments, _ = simulated(120, per_tuple=2, seed=6)
    fitted = scoring.fit(method, judgments)
    options = dict(scores=fitted, resamples=300, seed=3)
    held = bootstrap.bootstrap_intervals(judgments, method, **options)
    # 120 items x 300 resamples is 288 kB per copy: a 64 kB budget spills it to a file
    # and reads it back a few rows at a time (and in several slabs of resamples).
    spilled = bootstrap.bootstrap_intervals(judgments, method, memory_budget=64_000, **options)
    for name in ("low", "high", "std"):
        np.testing.assert_array_equal(getattr(spilled, name), getattr(held, name))
    assert np.isfinite(held.low).all()


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
def test_spilled_summary_is_the_table_summary_with_nan_rows_and_ragged_blocks():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(37, 101))
    table[rng.random(table.shape) < 0.3] = np.nan
    table[5] = np.nan  # an item no resample showed
    quantiles = (0.025, 0.975)
    blocks = [table[:, :7], table[:, 7:8], table[:, 8:60], table[:, 60:]]
    expected = bootstrap._summarise(table, quantiles, True)
    for budget in (10**9, 4 * 8 * 101 * 3, 1):
        got = bootstrap.summarise_blocks(
            iter(blocks), 37, 101, quantiles, skip_nan=True, memory_budget=budget
        )
        for mine, theirs in zip(got, expected, strict=True):
            np.testing.assert_array_equal(mine, theirs)
    assert np.isnan(expected[0][5]) and np.isfinite(expected[0][4])


def _peak_bytes(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BUDGET = 4 * 1024 * 1024


def _bootstrap_peak(judgments, method, fitted, resamples) -> int:
    return _peak_bytes(
        lambda: bootstrap.bootstrap_intervals(
            judgments, method, scores=fitted, resamples=resamples, seed=0, memory_budget=BUDGET
        )
    )


@pytest.mark.parametrize("method", ["counting", "plackett_luce"])
def test_bootstrap_peak_memory_does_not_grow_with_resamples_beyond_the_budget(method):
    judgments = maxdiff(10_000)
    fitted = scoring.fit(method, judgments)
    few, many = (_bootstrap_peak(judgments, method, fitted, b) for b in (100, 800))
    # Held whole, 700 more resamples of 10,000 items add 56 MB for the table alone.
    assert many - few < BUDGET


def test_bootstrap_peak_memory_grows_with_items_by_far_less_than_the_table():
    peaks = {}
    for n in (5_000, 20_000):
        judgments = maxdiff(n)
        peaks[n] = _bootstrap_peak(judgments, "counting", scoring.fit("counting", judgments), 200)
    table = 20_000 * 200 * 8  # 32 MB: the table alone, held whole before
    assert peaks[20_000] < table / 2
    # From 5,000 to 20,000 items the table grows by 24 MB; the peak grows with the data
    # and a block of resamples only.
    assert peaks[20_000] - peaks[5_000] < (20_000 - 5_000) * 200 * 8 / 3


# --------------------------------------------------------------------------- item rows


def _run():
    from bws.models import ScoreRun
    from projects.tests.factories import ProjectFactory

    return ScoreRun.objects.create(project=ProjectFactory(), scheme="q", method="counting")


def _rows(n: int, *, best=1):
    from bws.filemode import ScoreRow

    rows = [
        ScoreRow(
            item_id=f"it\\em\t{i}\n",  # backslash, tab and newline survive the COPY text
            text="",
            score=1.0 - i / n,
            ci_low=float("nan") if i == 0 else -0.5,
            ci_high=0.5,
            best_count=best,
            worst_count=0,
            appearances=4,
            rank=i + 1,
        )
        for i in range(n)
    ]
    return rows, {row.item_id: n - 1 - i for i, row in enumerate(rows)}


def _stored(run) -> list[tuple]:
    from bws.models import ItemScore

    return list(
        ItemScore.objects.filter(run=run)
        .order_by("rank")
        .values_list("item_index", "item_id", "score", "ci_low", "ci_high", "best", "rank")
    )


@pytest.mark.django_db
def test_item_rows_are_written_replacing_the_runs_earlier_rows():
    from bws import services

    run = _run()
    services.write_item_scores(run, *_rows(3, best=7))
    rows, index_of = _rows(1200)
    services.write_item_scores(run, rows, index_of)
    stored = _stored(run)
    assert len(stored) == 1200
    assert stored[0] == (1199, "it\\em\t0\n", 1.0, None, 0.5, 1, 1)  # NaN stored as NULL
    assert stored[-1] == (0, "it\\em\t1199\n", 1.0 - 1199 / 1200, -0.5, 0.5, 1, 1200)


@pytest.mark.django_db
def test_a_write_that_fails_part_way_stores_nothing_and_keeps_the_earlier_rows():
    from django.db import IntegrityError, transaction

    from bws import services

    run = _run()
    services.write_item_scores(run, *_rows(5))
    before = _stored(run)
    rows, index_of = _rows(3000)
    # Refused by the column's check, after 2,500 good rows.
    rows[2500] = dataclasses.replace(rows[2500], best_count=-1)
    with pytest.raises(IntegrityError), transaction.atomic():
        services.write_item_scores(run, rows, index_of)
    assert _stored(run) == before
    # A failure after the rows are written (the run's own update) takes them back too.
    with pytest.raises(RuntimeError), transaction.atomic():
        services.write_item_scores(run, *_rows(3000))
        raise RuntimeError("the run's update failed")
    assert _stored(run) == before


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgresql_loads_item_rows_with_copy(monkeypatch):
    from bws import services

    copies = []
    real = services._copy_rows
    monkeypatch.setattr(services, "_copy_rows", lambda *args: copies.append(args[1]) or real(*args))
    run = _run()
    services.write_item_scores(run, *_rows(2000))
    assert copies == ["bws_itemscore"] and len(_stored(run)) == 2000


def test_calibrated_plackett_luce_at_scale_takes_few_passes_over_the_judgments(monkeypatch):
    # Past the exact-diagonal size the prior's refits are the cost of scoring a large
    # study: each pass (softmax rows at a new point, or a Hessian-vector product) reads
    # every judgment. Here scipy's Newton-CG took 330 passes; Newton's method with
    # preconditioned conjugate-gradient steps takes 141 (benchmarks/RESULTS.md).
    passes = {"rows": 0, "products": 0}
    rows, product = MaxDiffModel._column_probabilities, MaxDiffModel.hessian_vector

    def counted_rows(self, u):
        passes["rows"] += 1
        return rows(self, u)

    def counted_product(self, curvature, v):
        passes["products"] += 1
        return product(self, curvature, v)

    monkeypatch.setattr(MaxDiffModel, "_column_probabilities", counted_rows)
    monkeypatch.setattr(MaxDiffModel, "hessian_vector", counted_product)
    judgments = maxdiff(20_000)
    scores, found = intervals.calibrated(judgments, "plackett_luce")
    monkeypatch.undo()
    assert scores.converged and np.isfinite(found.low).all()
    assert passes["rows"] + passes["products"] <= 200, passes


@pytest.mark.parametrize(
    "size, count",
    [(1, 3), (10, 50), (5_000, 1_000), (10**9, 20_000), (10**12, 5_000)],
)
def test_grouping_by_table_or_by_sort_is_numpys_unique(size, count, monkeypatch):
    """The grouping the fits and the annotators' spread use: the same as np.unique with
    its inverse, whether the keys are few enough for a table or sorted."""
    keys = np.random.default_rng(size % 97).integers(0, size, count)
    expected, inverse = np.unique(keys, return_inverse=True)
    for dense in (choice_models.DENSE_KEYS, 0):
        monkeypatch.setattr(choice_models, "DENSE_KEYS", dense)
        found, found_inverse = choice_models.factorize(keys, size)
        assert np.array_equal(found, expected)
        assert np.array_equal(found_inverse, inverse.ravel())
    assert choice_models.factorize(np.zeros(0, np.int64), 5)[0].size == 0
