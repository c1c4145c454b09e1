"""``python -m bws score --ranks`` / ``--compare`` and ``stats --ranks``: each item's rank
with its 95% interval, the items surely among the top k, pairwise questions with Holm's
correction, and plain refusals."""

import re

import pytest

from bws import cli
from bws.core import scoring
from bws.tests.test_cli_scoring import make_study

LINE = re.compile(r"^  (item_\d{3}): (\d+)(?:-(\d+))?; (\d+)(?:-(\d+))?$")


def _ranks(out: str) -> dict[str, tuple[int, int, int, int]]:
    found = {}
    for line in out.splitlines():
        if match := LINE.match(line):
            low, high = int(match[2]), int(match[3] or match[2])
            slow, shigh = int(match[4]), int(match[5] or match[4])
            found[match[1]] = (low, high, slow, shigh)
    return found


@pytest.mark.parametrize("method", scoring.METHODS)
def test_score_prints_rank_intervals_that_hold_the_true_ranks(tmp_path, capsys, method):
    config, ids, truth = make_study(tmp_path, n_items=12, method=method)
    assert cli.main(["score", "--config", str(config), "--ranks", "--top-k", "3"]) == 0
    out = capsys.readouterr().out
    found = _ranks(out)
    assert len(found) == 12  # every item, best first, under the limit of 20 lines
    true_rank = {ids[i]: 12 - i for i in range(12)}  # truth rises with the index
    for item_id, (low, high, slow, shigh) in found.items():
        assert low <= true_rank[item_id] <= high, (item_id, low, high)
        # all at once is wider than each alone
        assert slow <= low and high <= shigh
    # what is said surely in the top 3 is; the set said to hold the top 3 holds it, and
    sure = re.search(r"Among the top 3 with 95% confidence: (.*)", out)[1]
    assert sure == "none yet" or set(sure.split(", ")) <= {"item_011", "item_010", "item_009"}
    possible = re.search(r"The top 3 lie among these \d+: (.*)", out)[1].split(", ")
    assert {"item_011", "item_010", "item_009"} <= set(possible)


def test_compare_answers_with_holm_and_says_unsure_when_close(tmp_path, capsys):
    config, ids, _ = make_study(tmp_path, n_items=12)
    code = cli.main(["score", "--config", str(config), "--compare", "item_011,item_000,item_010"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Holm-adjusted over 3 pairs" in out
    assert "item_011 is above item_000" in out
    assert "item_010 is above item_000" in out
    # neighbours on a linear scale of 12 items, 16 appearances each: too close to tell
    assert "item_011 and item_010: not told apart" in out


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("item_001,nope", "no item 'nope'"),
        ("item_001", "at least two item ids"),
        (",".join(f"item_{k:03d}" for k in range(21)), "at most 20 items"),
    ],
)
def test_a_bad_compare_exits_2_with_a_message(tmp_path, capsys, value, words):
    config, _, _ = make_study(tmp_path, n_items=24)
    assert cli.main(["score", "--config", str(config), "--compare", value]) == 2
    assert words in capsys.readouterr().err


def test_stats_prints_the_ranks_of_every_scheme(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, n_items=12, schemes=("fluency", "adequacy"))
    assert cli.main(["stats", "--config", str(config), "--ranks"]) == 0
    out = capsys.readouterr().out
    assert "\nfluency:\nRanks with 95% intervals" in out
    assert "\nadequacy:\nRanks with 95% intervals" in out
    assert "Among the top 1 with 95% confidence" in out


def test_ranks_need_calibrated_intervals(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, n_items=12)
    code = cli.main(["score", "--config", str(config), "--ranks", "--intervals", "bootstrap"])
    assert code == 0
    assert "no rank intervals (they need calibrated intervals" in capsys.readouterr().out


def test_more_items_than_lines_are_cut_with_a_count(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, n_items=30)
    assert cli.main(["score", "--config", str(config), "--ranks"]) == 0
    out = capsys.readouterr().out
    assert len(_ranks(out)) == 20 and "... 10 more" in out
