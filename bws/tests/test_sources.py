"""Ranks within groups and the sources' effects (bws.core.sources, bws.source_scores): hand
examples, the closed form of a balanced design, and coverage on seeded simulations in a
band that wrong intervals miss."""

import numpy as np
import pytest

from bws.core.design import balanced_tuples
from bws.core.judgments import Judgments
from bws.core.scoring import fit
from bws.core.sources import encode, group_ranks, source_effects
from bws.filemode import ScoreReport, score_judgments, score_table, write_score_table
from bws.source_scores import ItemLabels, sources_table

EFFECTS = np.array([0.6, 0.3, 0.0, -0.3, -0.6])
NAMES = ["a", "b", "c", "d", "e"]


def test_ranks_run_inside_each_group_with_ties_and_unshown_items():
    values = np.array([1.0, 2.0, 2.0, 9.0, 5.0, 3.0, 7.0])
    shown = np.array([True, True, True, True, True, True, False])
    groups = np.array([0, 0, 0, 1, 1, 1, 1])
    ranks = group_ranks(values, shown, groups)
    # group 0: the two 2.0s share rank 1, then 3; group 1: 9 > 5 > 3; the unshown item: 0
    assert ranks.tolist() == [3, 1, 1, 1, 2, 3, 0]


def test_no_rank_runs_across_groups():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(40), 5)
    ranks = group_ranks(rng.normal(size=200), np.ones(200, bool), groups)
    assert ranks.max() == 5
    for g in range(40):
        assert sorted(ranks[groups == g]) == [1, 2, 3, 4, 5]


def test_encode_keeps_first_appearance_and_skips_missing_values():
    codes, names = encode(["x", None, "y", 3, "", "x", {"a": 1}])
    assert names == ["x", "y", "3"] and codes.tolist() == [0, -1, 1, 2, -1, 0, -1]


def test_a_balanced_design_gives_the_mean_of_centred_scores_and_its_spread():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(12, 5)) + np.arange(12)[:, None] * 10  # groups far apart
    groups, sources = np.repeat(np.arange(12), 5), np.tile(np.arange(5), 12)
    table = source_effects(scores.ravel(), np.ones(60, bool), sources, NAMES, groups)
    centred = scores - scores.mean(axis=1, keepdims=True)
    assert table.effect == pytest.approx(centred.mean(axis=0))
    # cluster-robust over groups = the spread of the centred scores over groups / sqrt(G)
    assert table.se == pytest.approx(centred.std(axis=0, ddof=1) / np.sqrt(12))
    assert table.clustered_by == "group" and table.n_clusters == 12
    assert table.effect.sum() == pytest.approx(0, abs=1e-12)


def simulate_scores(rng, n_groups=40, noise=0.5, missing=0.0):
    groups, sources = np.repeat(np.arange(n_groups), 5), np.tile(np.arange(5), n_groups)
    scores = 3 * rng.normal(size=n_groups)[groups] + EFFECTS[sources]
    scores = scores + rng.normal(scale=noise, size=groups.size)
    shown = rng.random(groups.size) >= missing
    return scores, shown, sources, groups


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_source_intervals_cover_and_wrong_ones_do_not(missing):
    truth = EFFECTS - EFFECTS.mean()
    ours, narrow, wide = [], [], []
    for rep in range(300):
        rng = np.random.default_rng(rep)
        scores, shown, sources, groups = simulate_scores(rng, missing=missing)
        table = source_effects(scores, shown, sources, NAMES, groups)
        ours.append((table.low <= truth) & (truth <= table.high))
        # Wrong: half the error (an interval that forgets part of the item noise) ...
        half = (table.high - table.low) / 4
        narrow.append(np.abs(table.effect - truth) <= half)
        # ... and groups ignored (each source's plain mean, the group levels left in).
        plain = source_effects(scores, shown, sources, NAMES)
        wide.append((plain.low <= truth) & (truth <= plain.high))
    assert 0.93 <= np.mean(ours) <= 0.97
    assert np.mean(narrow) < 0.75 and np.mean(wide) > 0.99


def simulate_bws(seed, n_groups=40, noise=0.5):
    """A grouped BWS study: 5 items per group, one per source, T = 4, r = 8, two
    judgments per tuple by the MaxDiff model."""
    rng = np.random.default_rng(seed)
    groups, sources = np.repeat(np.arange(n_groups), 5), np.tile(np.arange(5), n_groups)
    utility = EFFECTS[sources] + rng.normal(scale=noise, size=groups.size)
    local = balanced_tuples(5, 4, 8, seed=seed)
    tuples = (np.arange(n_groups)[:, None, None] * 5 + local[None]).reshape(-1, 4)
    rows = np.repeat(tuples, 2, axis=0)
    u = utility[rows]
    best = np.argmax(u + rng.gumbel(size=u.shape), axis=1)
    rest = -u + rng.gumbel(size=u.shape)
    rest[np.arange(rows.shape[0]), best] = -np.inf
    n = rows.shape[0]
    judgments = Judgments(
        rows,
        best,
        np.argmax(rest, axis=1),
        np.arange(n) // 2,
        np.arange(n) % 7,
        np.arange(n),
        groups.size,
    )
    labels = ItemLabels(
        groups=[f"g{g}" for g in groups], sources=[NAMES[s] for s in sources], group_key="g"
    )
    return judgments, labels


def test_counting_source_intervals_cover_their_population_value():
    # The target: a source's within-group centred expected counting score over the
    # population of groups (each 4-subset of a group's 5 items twice, as the design has).
    rng = np.random.default_rng(99)
    utility = EFFECTS + rng.normal(scale=0.5, size=(40_000, 5))
    net = np.zeros_like(utility)
    for left_out in range(5):
        row = [k for k in range(5) if k != left_out]
        e = np.exp(utility[:, row])
        p_best = e / e.sum(axis=1, keepdims=True)
        p_worst = np.zeros_like(p_best)
        for b in range(4):
            others = [k for k in range(4) if k != b]
            w = np.exp(-utility[:, row][:, others])
            p_worst[:, others] += p_best[:, [b]] * w / w.sum(axis=1, keepdims=True)
        net[:, row] += p_best - p_worst
    expected = net / 4
    target = (expected - expected.mean(axis=1, keepdims=True)).mean(axis=0)
    hits, exact = [], []
    for rep in range(150):
        judgments, labels = simulate_bws(rep)
        table = sources_table(fit("counting", judgments), labels)
        hits.append((table.low <= target) & (target <= table.high))
        exact.append(table.rank.tolist() == [1, 2, 3, 4, 5])
    assert 0.92 <= np.mean(hits) <= 0.98
    assert np.mean(exact) > 0.8


def test_a_model_ranks_sources_from_its_unshrunk_fit():
    judgments, labels = simulate_bws(5)
    report = score_judgments(judgments, "plackett_luce", bootstrap=1)  # empirical Bayes
    table = sources_table(report.scores, labels, judgments)
    weak = sources_table(fit("plackett_luce", judgments), labels)
    assert table.effect == pytest.approx(weak.effect)
    # near the true effects, not pulled in by the items' shrinkage
    assert np.polyfit(EFFECTS, table.effect, 1)[0] == pytest.approx(1, abs=0.3)
    assert np.all((table.rank_low <= table.rank) & (table.rank <= table.rank_high))
    assert table.rank[0] == 1 and table.rank[-1] == 5


def test_rank_sets_hold_the_rank_and_close_in_on_separate_sources():
    rng = np.random.default_rng(1)
    scores, shown, sources, groups = simulate_scores(rng, noise=0.05)
    table = source_effects(scores, shown, sources, NAMES, groups)
    assert table.rank.tolist() == [1, 2, 3, 4, 5]
    assert table.rank_low.tolist() == [1, 2, 3, 4, 5] == table.rank_high.tolist()
    scores, shown, sources, groups = simulate_scores(rng, n_groups=6, noise=2.0)
    table = source_effects(scores, shown, sources, NAMES, groups)
    assert np.all((table.rank_low <= table.rank) & (table.rank <= table.rank_high))
    assert np.any(table.rank_low < table.rank_high)


def test_unlinked_or_single_sources_give_no_table_and_missing_values_are_counted():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    shown = np.ones(4, bool)
    # each group holds one source only: no group compares two
    assert (
        source_effects(values, shown, np.array([0, 0, 1, 1]), ["a", "b"], np.array([0, 0, 1, 1]))
        is None
    )
    assert source_effects(values, shown, np.array([0, 0, 0, -1]), ["a"]) is None
    table = source_effects(values, shown, np.array([0, 1, 0, -1]), ["a", "b"])
    assert table.left_out == 1 and table.n_items.tolist() == [2, 1]


def test_the_score_table_ranks_within_groups_and_writes_group_and_system(tmp_path):
    judgments, labels = simulate_bws(2, n_groups=3)
    report = ScoreReport("counting", fit("counting", judgments), None, judgments)
    ids = [f"i{k}" for k in range(15)]
    rows = score_table(ids, ids, report, labels)
    assert [row.group for row in rows] == ["g0"] * 5 + ["g1"] * 5 + ["g2"] * 5
    assert [row.rank for row in rows[:5]] == sorted(row.rank for row in rows[:5])
    assert max(row.rank for row in rows) <= 5 and [row.rank for row in rows].count(1) >= 3
    lines = write_score_table(rows, tmp_path / "s.tsv").read_text().splitlines()
    assert lines[0].split("\t")[-3:] == ["rank", "group", "system"]
    plain = write_score_table(score_table(ids, ids, report), tmp_path / "p.tsv")
    assert plain.read_text().splitlines()[0].split("\t")[-1] == "rank"
