"""Gold units: read from the config's gold file (refused by file and line), mixed into the
queue at the configured rate without giving themselves away, a training with feedback and
a pass threshold, and exclusions that change scores and agreement and are marked in
exports."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.annotation_files import export_records
from annotation.answers import submit_answers
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from crowds import attention_checks, gold
from projects import services
from projects import services as projects_services
from projects.models import Membership, Unit
from projects.services import ProjectImportError, import_project
from projects.tests.factories import UserFactory

N_ITEMS = 24


def bws_project(tmp_path, *, gold_lines=None, block=None, appearances=8, slug="gold"):
    """A BWS project of N_ITEMS items (item i better than j when i > j in the gold file's
    eyes) and, unless gold_lines is None, a gold file."""
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"id": "i{n:02d}", "text": "item {n}"}}\n' for n in range(N_ITEMS))
    )
    gold_block = ""
    if gold_lines is not None:
        (tmp_path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold_lines))
        gold_block = block or "gold:\n  file: gold.jsonl\n  attention_rate: 0.1\n"
    (tmp_path / "c.yaml").write_text(
        "task_name: Ranking test\ndata_files: [items.jsonl]\n"
        "annotation_schemes:\n"
        "  - name: q\n    annotation_type: best_worst_scaling\n    tuple_size: 4\n"
        f"    tuple_generation: {{tuples_per_item: {appearances}, seed: 7}}\n" + gold_block
    )
    return import_project(config_path=tmp_path / "c.yaml", slug=slug).project


def gold_records(n, start=0):
    """n gold tuples whose best is the highest-numbered item and worst the lowest."""
    records = []
    for k in range(start, start + n):
        ids = [f"i{(k + j * 5) % N_ITEMS:02d}" for j in range(4)]
        ordered = sorted(ids)
        records.append({"items": ids, "best": ordered[-1], "worst": ordered[0]})
    return records


def truthful(unit):
    ordered = sorted(unit.item_ids)
    return {"q": {"best": ordered[-1], "worst": ordered[0]}}


def member(project, user, role=Membership.Role.ANNOTATOR):
    Membership.objects.create(project=project, user=user, role=role)
    return user


# --------------------------------------------------------------------------- import


@pytest.mark.django_db
def test_gold_tuples_are_stored_as_gold_units_numbered_like_the_others(tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(6))
    ordinary = Unit.objects.filter(project=project, is_gold=False)
    golds = Unit.objects.filter(project=project, is_gold=True)
    assert golds.count() == 6
    n = ordinary.count()
    assert n == N_ITEMS * 8 // 4
    for unit in golds:
        # The page label shows one of the ordinary numbers, never one past them.
        assert unit.label.startswith("Tuple ")
        assert 1 <= int(unit.label.split()[1]) <= n
        assert unit.gold["answers"]["q"]["best"] in unit.item_ids


@pytest.mark.django_db
@pytest.mark.parametrize(
    "record, message",
    [
        ({"items": ["i01", "i02", "i03", "zz"], "best": "i01", "worst": "i02"}, "'zz' is not"),
        ({"items": ["i01", "i02", "i03", "i04"], "best": "i09", "worst": "i02"}, "best must be"),
        ({"items": ["i01", "i02", "i03", "i04"], "best": "i01", "worst": "i01"}, "different"),
        ({"items": ["i01", "i02"], "best": "i01", "worst": "i02"}, "3 to 8 items"),
        ({"items": ["i01", "i02", "i03", "i04"], "best": "i01", "wrost": "i02"}, "'wrost'"),
    ],
)
def test_a_bad_gold_record_is_named_by_file_and_line_and_nothing_is_stored(
    tmp_path, record, message
):
    from projects.models import Project

    lines = gold_records(2) + [record]
    with pytest.raises(ProjectImportError) as refused:
        bws_project(tmp_path, gold_lines=lines)
    assert "gold.jsonl:3:" in str(refused.value)
    assert message in str(refused.value)
    assert str(tmp_path) not in str(refused.value)
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_a_gold_file_outside_the_folder_or_missing_is_refused(tmp_path):
    for name, message in (("../gold.jsonl", "gold.file"), ("none.jsonl", "file not found")):
        block = f"gold:\n  file: {name}\n"
        with pytest.raises(ProjectImportError, match=message):
            bws_project(tmp_path, gold_lines=gold_records(2), block=block)


@pytest.mark.django_db
def test_more_training_units_than_gold_records_is_refused(tmp_path):
    block = "gold:\n  file: gold.jsonl\n  training:\n    units: 5\n"
    with pytest.raises(ProjectImportError, match="training units, but gold.jsonl holds 3"):
        bws_project(tmp_path, gold_lines=gold_records(3), block=block)


# --------------------------------------------------------------------------- mixing


def _serve(project, user, n):
    served = []
    for _ in range(n):
        unit = next_unit(project=project, user=user)
        if unit is None:
            break
        served.append(unit)
        submit_answers(project=project, user=user, unit_id=unit.pk, answers=truthful(unit))
    return served


@pytest.mark.django_db
def test_gold_is_mixed_in_at_the_configured_rate_deterministically(tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(40), appearances=40)
    assert Unit.objects.filter(project=project, is_gold=False).count() >= 240
    user = UserFactory()
    served = _serve(project, user, 200)
    assert len(served) == 200
    n_gold = sum(unit.is_gold for unit in served)
    assert 10 <= n_gold <= 30
    # Never the same gold twice, and the same draws for the same person again.
    gold_ids = [unit.pk for unit in served if unit.is_gold]
    assert len(set(gold_ids)) == len(gold_ids)
    again = [unit.is_gold for unit in served]
    Annotation.objects.filter(annotator=user).delete()
    Assignment.objects.filter(annotator=user).delete()
    Unit.objects.filter(project=project).update(load=0, completed=0)
    assert [unit.is_gold for unit in _serve(project, user, 200)] == again


@pytest.mark.django_db
def test_no_gold_without_the_block_and_none_at_rate_zero(tmp_path):
    project = bws_project(
        tmp_path,
        gold_lines=gold_records(10),
        block="gold:\n  file: gold.jsonl\n  attention_rate: 0\n",
    )
    assert not any(unit.is_gold for unit in _serve(project, UserFactory(), 40))


@pytest.mark.django_db
def test_gold_answers_count_toward_no_score(tmp_path):
    from bws import selectors

    project = bws_project(tmp_path, gold_lines=gold_records(40), block=None)
    Unit.objects.filter(project=project, is_gold=True).update(gold={"training": False})
    project.config = {**project.config, "gold": {"file": "gold.jsonl", "attention_rate": 0.5}}
    project.save()
    user = UserFactory()
    served = _serve(project, user, 30)
    n_gold = sum(unit.is_gold for unit in served)
    assert n_gold > 0
    assert selectors.judgments_for(project, "q").n_judgments == 30 - n_gold


@pytest.mark.django_db
def test_the_page_does_not_give_a_gold_unit_away(client, tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(6), slug="ranking")
    user = member(project, UserFactory())
    client.force_login(user)
    gold_unit = Unit.objects.filter(project=project, is_gold=True).first()
    Assignment.objects.create(
        unit=gold_unit,
        annotator=user,
        project=project,
        status=Assignment.Status.RESERVED,
        leased_until=timezone.now() + timedelta(minutes=5),
    )
    page = client.get(reverse("annotate-unit", args=[project.slug, gold_unit.pk]))
    n = Unit.objects.filter(project=project, is_gold=False).count()
    text = page.content.decode()
    # Numbered in the person's own sequence, out of their ordinary units and the checks that
    # come with them: never the gold unit's place in the project.
    total = attention_checks.check_plan(project, user).units_for(n)
    assert total > n
    assert f"Tuple 1 of {total}" in text
    assert f"0 / {total} answered by you" in text
    assert "gold" not in text.lower()


# --------------------------------------------------------------------------- training

TRAINING = "gold:\n  file: gold.jsonl\n  attention_rate: 0.1\n  training:\n    units: 3\n"


def _post_training(client, project, answer):
    return client.post(
        reverse("project-training", args=[project.slug]),
        {"q__best": answer["q"]["best"], "q__worst": answer["q"]["worst"]},
    )


def _bws_form_names():
    return "q__best", "q__worst"


@pytest.mark.django_db
def test_training_shows_feedback_and_passes(client, tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    user = member(project, UserFactory())
    membership = Membership.objects.get(user=user)
    assert gold.training_required(membership)
    assert gold.training_status(membership) == gold.TrainingStatus.NOT_STARTED
    client.force_login(user)
    # The annotate page sends a trainee to the training first; the queue gives them nothing.
    assert client.get(reverse("annotate", args=[project.slug])).url.endswith("/training/")
    assert next_unit(project=project, user=user) is None
    units = gold.training_units(project)
    for n, unit in enumerate(units):
        page = client.get(reverse("project-training", args=[project.slug]))
        assert f"Training {n + 1} of 3" in page.content.decode()
        answer = truthful(unit)
        if n == 0:  # one wrong answer of three: 2/3 is below 0.8
            answer = {"q": {"best": answer["q"]["worst"], "worst": answer["q"]["best"]}}
        posted = _post_training(client, project, answer)
        assert posted.status_code == 302, posted.content.decode()[:2000]
        feedback = client.get(posted.url).content.decode()
        best = answer["q"]["best"] if n else answer["q"]["worst"]
        assert f"The best was “item {int(best[1:])}”" in feedback
        assert ("Not quite." in feedback) == (n == 0)
    assert gold.training_status(membership) == gold.TrainingStatus.FAILED
    result = client.get(reverse("project-training", args=[project.slug])).content.decode()
    assert "Thank you" in result and "2 of 3" in result
    assert next_unit(project=project, user=user) is None
    assert client.get(reverse("annotate", args=[project.slug])).url.endswith("/training/")
    # Managers see it on the quality page.
    manager = member(project, UserFactory(), Membership.Role.MANAGER)
    client.force_login(manager)
    quality = client.get(reverse("project-quality", args=[project.slug])).content.decode()
    assert "failed" in quality


@pytest.mark.django_db
def test_passing_the_training_opens_the_queue(client, tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    user = member(project, UserFactory())
    client.force_login(user)
    for unit in gold.training_units(project):
        client.get(reverse("project-training", args=[project.slug]))
        _post_training(client, project, truthful(unit))
    membership = Membership.objects.get(user=user)
    assert gold.training_status(membership) == gold.TrainingStatus.PASSED
    unit = next_unit(project=project, user=user)
    assert unit is not None and not unit.gold.get("training")
    # Training answers are gold: no score sees them.
    from bws import selectors

    assert selectors.judgments_for(project, "q").n_judgments == 0


@pytest.mark.django_db
def test_managers_need_no_training(tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(8), block=TRAINING)
    manager = member(project, UserFactory(), Membership.Role.MANAGER)
    assert not gold.training_required(Membership.objects.get(user=manager))
    assert next_unit(project=project, user=manager) is not None


# --------------------------------------------------------------------------- exclusions


def _answer_all(project, users, flip=()):
    for user in users:
        while (unit := next_unit(project=project, user=user)) is not None:
            answer = truthful(unit)
            if user in flip:
                answer = {"q": {"best": answer["q"]["worst"], "worst": answer["q"]["best"]}}
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=answer)


@pytest.mark.django_db
def test_excluding_an_annotator_changes_scores_and_agreement_and_including_restores(tmp_path):
    from agreement import selectors as agreement_selectors
    from agreement import services as agreement
    from bws import selectors, services

    project = bws_project(tmp_path, appearances=4, slug="excl")
    users = [member(project, UserFactory()) for _ in range(3)]
    _answer_all(project, users, flip=(users[2],))

    def scores():
        run = services.request_run(project=project, scheme="q", bootstrap=50)
        services.execute_run(run.pk)
        latest = selectors.latest_good_run(project, "q")
        return {s.item_id: s.score for s in latest.item_scores.all()}

    def alpha():
        report = agreement.compute_report(project=project).report
        return json.dumps(report["schemes"]["q"], sort_keys=True)

    before_scores, before_alpha = scores(), alpha()
    assert before_scores["i23"] > before_scores["i00"]
    assert projects_services.set_excluded(project=project, user=users[2], excluded=True)
    report = agreement_selectors.latest_report(project)
    assert not agreement_selectors.is_current(report)
    left_out_scores, left_out_alpha = scores(), alpha()
    assert left_out_scores != before_scores
    assert left_out_alpha != before_alpha
    # Without the one who answered backwards, the top item scores higher than before.
    assert left_out_scores["i23"] > before_scores["i23"]
    marked = [r for r in export_records(project) if r.annotator == users[2].username]
    assert marked and all(r.excluded for r in marked)
    assert not any(r.excluded for r in export_records(project) if r.annotator != users[2].username)
    assert projects_services.set_excluded(project=project, user=users[2], excluded=False)
    assert scores() == before_scores
    assert alpha() == before_alpha


@pytest.mark.django_db
def test_exports_mark_gold_answers(tmp_path):
    from projects.interchange import read_table_text, write_table

    project = bws_project(tmp_path, gold_lines=gold_records(40), appearances=8)
    project.config = {**project.config, "gold": {"file": "gold.jsonl", "attention_rate": 0.5}}
    project.save()
    _serve(project, UserFactory(), 20)
    records = export_records(project)
    marked = [r for r in records if r.gold]
    assert marked and len(marked) < len(records)
    assert all(r.to_dict()["gold"] is True for r in marked)
    assert all("gold" not in r.to_dict() for r in records if not r.gold)
    import io

    stream = io.StringIO()
    write_table(records, stream)
    back = read_table_text(stream.getvalue())
    assert [r.gold for r in back] == [r.gold for r in records]
    assert [r.annotations for r in back] == [r.annotations for r in records]


# --------------------------------------------------------------------------- other schemes


def radio_project(tmp_path, block):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "doc{n:02d}", "text": "text {n}"}}\n' for n in range(30))
    )
    gold_lines = [{"instance": f"doc{n:02d}", "answers": {"q": "yes_"}} for n in range(6)]
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold_lines))
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: Radio gold\ndata_files: [d.jsonl]\n"
        "annotation_schemes:\n  - {annotation_type: radio, name: q, description: d, "
        "labels: [yes_, no_]}\n" + block
    )
    return import_project(config_path=tmp_path / "c.yaml", slug="radio").project


@pytest.mark.django_db
def test_instance_gold_marks_those_instances_and_grades_their_answers(client, tmp_path):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.5\n  training:\n    units: 2\n"
    project = radio_project(tmp_path, block)
    golds = Unit.objects.filter(project=project, is_gold=True).order_by("gold__order")
    assert [u.external_id for u in golds] == [f"doc{n:02d}" for n in range(6)]
    assert Unit.objects.filter(project=project).count() == 30  # no unit added
    user = member(project, UserFactory())
    client.force_login(user)
    # Training: one right, one wrong; the feedback names the expected answer.
    for answer in ("yes_", "no_"):
        client.get(reverse("project-training", args=[project.slug]))
        posted = client.post(reverse("project-training", args=[project.slug]), {"q": answer})
        feedback = client.get(posted.url).content.decode()
        assert f"The expected answer was “yes_”; you answered “{answer}”." in feedback
    # Threshold 0.8 of 2: both needed.
    assert gold.training_result(project, user).status == gold.TrainingStatus.FAILED
    Membership.objects.filter(user=user).delete()
    other = member(project, UserFactory())
    Annotation.objects.filter(annotator=user).delete()
    block_free = {**project.config, "gold": {**project.config["gold"], "training_units": 0}}
    project.config = block_free
    project.save()
    served = []
    while (unit := next_unit(project=project, user=other)) is not None:
        served.append(unit)
        value = "no_" if unit.is_gold and unit.external_id == "doc05" else "yes_"
        submit_answers(project=project, user=other, unit_id=unit.pk, answers={"q": value})
    checks = [u for u in served if u.is_gold]
    assert checks and all(not u.gold["training"] for u in checks)
    manager = member(project, UserFactory(), Membership.Role.MANAGER)
    client.force_login(manager)
    page = client.get(reverse("project-quality", args=[project.slug])).content.decode()
    right = sum(u.external_id != "doc05" for u in checks)
    assert f"of {len(checks)}" in page
    assert f"{round(100 * right / len(checks))}%" in page


def test_the_gold_block_is_checked_with_the_config():
    from projects.configuration import ConfigError, parse_config

    base = {
        "data_files": ["x.jsonl"],
        "annotation_schemes": [{"name": "q", "annotation_type": "best_worst_scaling"}],
    }
    config = parse_config(
        {**base, "gold": {"file": "g.jsonl", "training": {"units": 3}}}, check_files=False
    )
    assert (config.gold.attention_rate, config.gold.training_units) == (0.1, 3)
    assert config.gold.pass_threshold == 0.8
    with pytest.raises(ConfigError) as refused:
        parse_config(
            {
                **base,
                "gold": {
                    "fil": "g.jsonl",
                    "attention_rate": 0.7,
                    "training": {"pass_threshold": 2},
                },
            },
            check_files=False,
        )
    text = str(refused.value)
    assert "gold.fil: unknown key; did you mean 'file'?" in text
    assert "gold.attention_rate: must be from 0 to 0.5, got 0.7" in text
    assert "gold.training.units: missing required key" in text
    assert "gold.training.pass_threshold: must be from 0 to 1, got 2" in text


@pytest.mark.django_db
def test_the_answer_file_gives_the_platform_s_agreement_report(tmp_path, capsys):
    from agreement.cli import main
    from agreement.services import compute_report
    from annotation.annotation_files import write_answer_file

    project = bws_project(tmp_path, gold_lines=gold_records(20), appearances=4, slug="files")
    project.config = {**project.config, "gold": {"file": "gold.jsonl", "attention_rate": 0.5}}
    project.save()
    users = [member(project, UserFactory()) for _ in range(3)]
    _answer_all(project, users, flip=(users[2],))
    services.set_excluded(project=project, user=users[1], excluded=True)
    platform = json.loads(json.dumps(compute_report(project=project).report))
    assert platform.pop("excluded_annotators") == [users[1].username]
    path = write_answer_file(project)
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert any(r.get("gold") for r in written) and any(r.get("excluded") for r in written)
    capsys.readouterr()
    assert main(["report", "--config", str(tmp_path / "c.yaml"), "--annotations", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == platform


@pytest.mark.django_db
def test_the_answer_file_scores_as_the_platform_does(tmp_path):
    import shutil

    from annotation.annotation_files import write_answer_file
    from bws import filemode, selectors
    from projects.services import project_folder

    project = bws_project(tmp_path, gold_lines=gold_records(20), appearances=4, slug="scored")
    project.config = {**project.config, "gold": {"file": "gold.jsonl", "attention_rate": 0.5}}
    project.save()
    users = [member(project, UserFactory()) for _ in range(3)]
    _answer_all(project, users, flip=(users[2],))
    services.set_excluded(project=project, user=users[2], excluded=True)
    write_answer_file(project)
    shutil.copytree(project_folder(project), tmp_path, dirs_exist_ok=True)
    from_file = filemode.load_study(tmp_path / "c.yaml").judgments("q")
    on_platform = selectors.judgments_for(project, "q")
    assert from_file.n_judgments == on_platform.n_judgments > 0
    assert sorted(map(tuple, from_file.items.tolist())) == sorted(
        map(tuple, on_platform.items.tolist())
    )
