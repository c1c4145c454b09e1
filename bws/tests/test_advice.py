"""Advice on when to stop: projections made at half a simulated study against what the
whole study then shows, the formulas on hand-worked values, and the stop statement."""

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse
from scipy.stats import rankdata

from benchmarks.coverage import simulate
from bws import cli, services
from bws.core.advice import (
    CONTINUE,
    MIDDLE_SHARE,
    STOP,
    UNKNOWN,
    advice_for_judgments,
    advise,
    default_step,
    projected_split_half,
    rank_change_sd,
    score_density,
    whole_reliability,
)
from bws.core.intervals import calibrated
from bws.core.judgments import Judgments
from bws.core.reliability import split_half
from bws.core.scores import item_counts
from bws.selectors import judgments_for
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_cli_scoring import make_study
from .test_runs import annotate


def shuffled(judgments: Judgments, seed: int) -> Judgments:
    """The same judgments given in a random time order (annotators do not go tuple by tuple)."""
    order = np.random.default_rng(seed).permutation(judgments.n_judgments)
    j = judgments
    return Judgments(j.items, j.best, j.worst, j.tuple_ids, j.annotators, order, j.n_items)


def advice_for(judgments: Judgments, **options):
    """Advice as the platform makes it: counting scores with their calibrated intervals."""
    scores, intervals = calibrated(judgments, "counting")
    return advise(
        n_judgments=judgments.n_judgments,
        tuple_size=judgments.tuple_size,
        scores=scores.scores,
        sd=intervals.std,
        appearances=item_counts(judgments)[2],
        split_half=split_half(judgments).mean,
        **options,
    )


# --------------------------------------------------------------------------- formulas


def test_spearman_brown_projection_on_hand_worked_values():
    # r = 0.5 on 1,000 judgments; at 2,000 the halves are twice as long: 2(.5)/(1+.5)
    assert projected_split_half(0.5, 1000, 2000) == pytest.approx(2 / 3)
    assert projected_split_half(0.5, 1000, 1000) == pytest.approx(0.5)
    assert whole_reliability(0.5) == pytest.approx(2 / 3)
    # the whole data's reliability at M is the split-half projected to 2M
    assert whole_reliability(projected_split_half(0.6, 500, 800)) == pytest.approx(
        projected_split_half(0.6, 500, 1600)
    )


def test_rank_sd_of_evenly_spread_scores():
    # 101 scores 0.00 .. 1.00: 100 items per unit of score around the median
    assert score_density(np.linspace(0, 1, 101)) == pytest.approx(101 * 0.5 / 0.5)
    # a move of sd 0.05 with 100 items per unit: sqrt(5^2 + 5 / sqrt(pi))
    assert rank_change_sd(100, 0.05) == pytest.approx(math.sqrt(25 + 5 / math.sqrt(math.pi)))
    assert rank_change_sd(100, 0.0) == 0.0


def test_the_step_is_a_plain_number():
    assert default_step(200, 40) == 100
    assert default_step(3000, 500) == 1000
    assert default_step(20_000, 100) == 5000


# --------------------------------------------------------------------------- simulated studies

STUDIES = [
    # items, appearances, judgments per tuple, seed
    (100, 16, 1, 1),
    (100, 8, 3, 2),
    (200, 16, 1, 3),
    (300, 12, 1, 4),
]


@pytest.mark.parametrize("n_items, appearances, per_tuple, seed", STUDIES)
def test_a_projection_at_half_the_judgments_matches_the_whole_study(
    n_items, appearances, per_tuple, seed
):
    judgments = shuffled(simulate(n_items, appearances, per_tuple, 0.0, seed)[0], seed)
    m = judgments.n_judgments
    half = judgments.subset(judgments.order < m // 2)
    advice = advice_for(half, step=m - half.n_judgments)
    # reliability: the projection from half the data is within 0.06 of the whole's
    whole = split_half(judgments).mean
    assert advice.reliability_next == pytest.approx(whole_reliability(whole), abs=0.06)
    # rank movement: the median items' ranks then moved by the projected sd, within a
    # factor of 1.6 either way (the rms over the middle 20% of items is itself noisy)
    before = calibrated(half, "counting")[0].scores
    after = calibrated(judgments, "counting")[0].scores
    middle = np.argsort(np.abs(before - np.median(before)))[: int(MIDDLE_SHARE * n_items)]
    moved = rankdata(-before)[middle] - rankdata(-after)[middle]
    rms = float(np.sqrt(np.mean(moved**2)))
    assert 1 / 1.6 <= rms / advice.rank_sd <= 1.6


def test_the_statement_says_stop_once_more_judgments_change_little():
    # 20 items each shown 96 times: another 100 judgments move the median by under 2 ranks
    judgments = shuffled(simulate(20, 96, 1, 0.0, 5)[0], 5)
    advice = advice_for(judgments, step=100)
    assert advice.verdict == STOP and advice.rank_bound < 2
    assert advice.statement.startswith("You can stop: another 100 judgments would move the")
    assert f"by less than {math.ceil(advice.rank_bound)} rank" in advice.statement
    # the same study at an eighth of its judgments is told to keep going
    early = judgments.subset(judgments.order < judgments.n_judgments // 8)
    advice = advice_for(early, step=100)
    assert advice.verdict == CONTINUE and advice.statement.startswith("Keep going: another 100")
    assert advice.reliability_next > advice.reliability_now


def test_the_verdict_flips_once_along_a_growing_study():
    judgments = shuffled(simulate(30, 64, 1, 0.0, 6)[0], 6)
    m = judgments.n_judgments
    verdicts = [
        advice_for(judgments.subset(judgments.order < int(m * f)), step=100).verdict
        for f in (0.1, 0.25, 0.5, 1.0)
    ]
    assert verdicts[0] == CONTINUE and verdicts[-1] == STOP
    assert verdicts == sorted(verdicts)  # "continue" < "stop": once stopped, it stays


def test_too_little_to_project_from_says_so():
    advice = advise(
        n_judgments=3,
        tuple_size=4,
        scores=np.array([0.5, -0.5, 0.0, np.nan]),
        sd=np.array([0.3, 0.3, 0.3, np.nan]),
        appearances=np.array([1, 1, 1, 0]),
        split_half=float("nan"),
    )
    assert advice.verdict == UNKNOWN and advice.rank_bound is None
    assert advice.statement == "Too few judgments to project from yet: keep going."


def test_how_the_projection_was_made_is_stated():
    judgments = shuffled(simulate(100, 8, 1, 0.0, 7)[0], 7)
    advice = advice_for(judgments)
    text = " ".join(advice.how)
    assert "Spearman-Brown" in text and "1 / sqrt(appearances)" in text
    assert advice.to_dict()["statement"] == advice.statement
    assert advice.lines()[0] == f"Advice: {advice.statement}"


# --------------------------------------------------------------------------- the platform


@pytest.fixture
def scored_run(tmp_path, settings):
    """The example project, annotated and scored once by the worker's computation."""
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    folder = tmp_path / "mt"
    shutil.copytree(Path(settings.BASE_DIR) / "examples" / "mt_tuples", folder)
    (folder / "output").mkdir(exist_ok=True)
    project = import_project(config_path=folder / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=40)
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    return services.execute_run(run.pk)


@pytest.mark.django_db
def test_a_run_stores_the_advice_its_stats_print(scored_run):
    advice = scored_run.advice
    judgments = judgments_for(scored_run.project, "overall_quality")
    expected = advice_for_judgments(judgments, scored_run.reliability["mean"])
    assert advice["statement"] == expected.statement and advice["n_judgments"] == 120
    assert advice["verdict"] in (STOP, CONTINUE)
    assert f"Advice: {advice['statement']}" in scored_run.stats_text


@pytest.mark.django_db
def test_the_dashboard_and_the_api_show_the_advice(client, scored_run):
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=scored_run.project, role="manager")
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    advice = scored_run.advice
    assert f'data-advice="{advice["verdict"]}"' in html
    assert "How this was projected" in html and "Spearman-Brown" in html
    assert 'data-figure="projected-reliability"' in html
    body = client.get(f"/api/v1/projects/mt/scores/runs/{scored_run.pk}/").json()
    assert body["advice"]["statement"] == advice["statement"]
    assert body["advice"]["how"] == advice["how"]


def test_python_m_bws_stats_prints_the_advice(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, n_items=40)
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    advice_line = next(line for line in text.splitlines() if line.startswith("Advice: "))
    assert advice_line.split(": ", 1)[1].startswith(("Keep going: another", "You can stop:"))
    assert "  how: reliability: the split-half correlation" in text
    assert "  projected reliability: " in text
