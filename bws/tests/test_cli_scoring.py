"""``python -m bws score`` and ``stats`` in file mode: config + data + annotation files."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bws import cli, filemode
from bws.core import scoring
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples
from bws.core.intervals import model_intervals
from bws.core.reliability import split_half

CONFIG_A = """\
annotation_task_name: "Ranking"
data_files: ["data/items.jsonl"]
item_properties: {{id_key: id, text_key: text}}
bws_config:
  tuple_size: 4
  min_item_appearances: 8
  seed: 42
  scoring: {{method: {method}, bootstrap_iterations: 200}}
annotation_schemes:
{schemes}
output_annotation_dir: "annotation_output/"
"""

SCHEME = """\
  - annotation_type: bws
    name: {name}
    description: "Pick the best and the worst"
"""

CONFIG_B = """\
task_name: "Systems"
data_files: ["data/sentences.jsonl"]
item_properties: {id_key: id, text_key: source}
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    description: "Best and worst translation"
    items_key: translations
    tuple_size: 4
    scoring: {method: plackett_luce, output_file: "results/quality.csv",
              include_confidence: false}
output_annotation_dir: "output/"
"""


def make_study(root, *, n_items=40, schemes=("fluency",), method="bradley_terry", seed=0):
    """A dialect A project with MaxDiff judgments from known utilities in two files."""
    (root / "data").mkdir(parents=True)
    ids = [f"item_{k:03d}" for k in range(n_items)]
    with open(root / "data" / "items.jsonl", "w") as stream:
        for item_id in ids:
            stream.write(json.dumps({"id": item_id, "text": f"text of {item_id}"}) + "\n")
    scheme_text = "".join(SCHEME.format(name=name) for name in schemes)
    (root / "config.yaml").write_text(CONFIG_A.format(method=method, schemes=scheme_text))
    rng = np.random.default_rng(seed)
    truth = np.linspace(-2, 2, n_items)
    tuples = balanced_tuples(n_items, 4, 8, seed=seed)
    out = root / "annotation_output"
    out.mkdir()
    for annotator in ("user_1", "user_2"):
        answers = {name: sample_maxdiff(tuples, truth, rng) for name in schemes}
        with open(out / f"{annotator}.jsonl", "w") as stream:
            for t, row in enumerate(tuples):
                items = [ids[i] for i in row]
                annotations = {
                    name: {"best": items[best[t]], "worst": items[worst[t]]}
                    for name, (best, worst) in answers.items()
                }
                record = {
                    "id": f"tuple_{t:04d}",
                    "items": items,
                    "annotations": annotations,
                    "annotator": annotator,
                    "timestamp": f"2026-03-01T{10 + t // 60:02d}:{t % 60:02d}:00Z",
                }
                stream.write(json.dumps(record) + "\n")
    return root / "config.yaml", ids, truth


def read_table(path, delimiter="\t"):
    with open(path, newline="") as stream:
        return list(csv.DictReader(stream, delimiter=delimiter))


@pytest.mark.parametrize("method", scoring.METHODS)
def test_score_writes_the_table_sorted_by_score_with_counts_and_intervals(tmp_path, capsys, method):
    config, ids, truth = make_study(tmp_path)
    code = cli.main(["score", "--config", str(config), "--method", method])
    assert code == 0
    path = tmp_path / "annotation_output" / "bws_scores.tsv"
    assert str(path) in capsys.readouterr().out
    rows = read_table(path)
    assert list(rows[0]) == list(filemode.TABLE_COLUMNS)
    assert len(rows) == len(ids)
    scores = [float(row["score"]) for row in rows]
    assert scores == sorted(scores, reverse=True)
    # Rank 1 is the best; tied scores share the lowest rank of their group.
    assert [int(row["rank"]) for row in rows] == [1 + sum(t > s for t in scores) for s in scores]
    # The table holds the same numbers as the core on the same judgments: the model fits
    # with their empirical-Bayes penalty, counting as it is.
    study = filemode.load_study(config)
    judgments = study.judgments("fluency")
    if method == "counting":
        fitted = scoring.fit(method, judgments)
    else:
        fitted, _ = model_intervals(judgments, method)
    for row in rows:
        index = study.item_index[row["item_id"]]
        assert float(row["score"]) == pytest.approx(fitted.scores[index], abs=1e-6)
        assert int(row["best_count"]) == fitted.best_counts[index]
        assert int(row["worst_count"]) == fitted.worst_counts[index]
        assert int(row["appearances"]) == fitted.appearances[index] == 16
        assert float(row["ci_low"]) <= float(row["score"]) <= float(row["ci_high"])
        assert row["text"] == f"text of {row['item_id']}"
    top = [study.item_index[row["item_id"]] for row in rows[:5]]
    assert np.mean(truth[top]) > 1.0


def test_csv_output_options_and_no_intervals(tmp_path, capsys):
    config, ids, _ = make_study(tmp_path)
    out = tmp_path / "elsewhere" / "scores.csv"
    args = ["score", "--config", str(config), "--output", str(out), "--bootstrap", "0"]
    args += ["--method", "plackett_luce", "--max-iter", "50", "--tolerance", "1e-8"]
    assert cli.main(args) == 0
    rows = read_table(out, delimiter=",")
    assert len(rows) == len(ids)
    assert rows[0]["ci_low"] == "" and rows[0]["ci_high"] == ""
    assert "Plackett-Luce" in capsys.readouterr().out


def test_stats_prints_the_spec_layout(tmp_path, capsys):
    config, ids, _ = make_study(tmp_path, n_items=40)
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[:6] == [
        "BWS Statistics",
        "==============",
        "Schema: fluency",
        "Items: 40",
        "Tuples: 80 (annotated: 80 / 80)",
        "Annotations: 160 (2 annotators)",
    ]
    assert lines[7] == "Score Summary (Bradley-Terry):"
    assert lines[8] == "  Mean:   0.00"
    assert lines[9].startswith("  Std:   ")
    assert lines[10].startswith("  Range: -") and " to +" in lines[10]
    assert lines[12] == "Top 5 Items:"
    assert all(line.startswith("  item_0") and "(±" in line for line in lines[13:18])
    study = filemode.load_study(config)
    expected = split_half(study.judgments("fluency"), seed=42)
    assert lines[18].startswith(
        f"Split-Half Reliability: r = {expected.mean:.2f} "
        f"(Spearman-Brown {expected.spearman_brown:.2f}"
    )


def test_stats_covers_every_scheme(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, schemes=("fluency", "adequacy"), method="counting")
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert "Schema: fluency" in text and "Schema: adequacy" in text
    assert "Score Summary (Counting):" in text


def test_item_ids_repeated_across_instances_aggregate(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    systems = ["sys_a", "sys_b", "sys_c", "sys_d", "sys_e"]
    quality = {"sys_a": 2.0, "sys_b": 1.0, "sys_c": 0.0, "sys_d": -1.0, "sys_e": -2.0}
    rng = np.random.default_rng(3)
    (tmp_path / "output").mkdir()
    with (
        open(tmp_path / "data" / "sentences.jsonl", "w") as data,
        open(tmp_path / "output" / "u1.jsonl", "w") as out,
    ):
        for s in range(30):
            translations = [{"id": name, "text": f"{name} says {s}"} for name in systems]
            data.write(
                json.dumps({"id": f"sent_{s}", "source": f"s{s}", "translations": translations})
                + "\n"
            )
            for t in range(3):
                items = list(rng.choice(systems, 4, replace=False))
                utility = np.array([quality[i] for i in items])
                best, worst = sample_maxdiff([[0, 1, 2, 3]], utility, rng)
                record = {
                    "id": f"sent_{s}_t{t}",
                    "items": items,
                    "instance": f"sent_{s}",
                    "annotations": {"quality": {"best": items[best[0]], "worst": items[worst[0]]}},
                    "annotator": "u1",
                }
                out.write(json.dumps(record) + "\n")
    (tmp_path / "config.yaml").write_text(CONFIG_B)
    assert cli.main(["score", "--config", str(tmp_path / "config.yaml")]) == 0
    rows = read_table(tmp_path / "results" / "quality.csv", delimiter=",")
    assert [row["item_id"] for row in rows] == systems
    assert sum(int(row["appearances"]) for row in rows) == 30 * 3 * 4
    assert rows[0]["ci_low"] == ""  # include_confidence: false
    assert "Plackett-Luce" in capsys.readouterr().out


def fail(capsys, args):
    code = cli.main(args)
    captured = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in captured.err
    return captured.err


def test_bad_annotation_lines_exit_2_naming_file_and_line(tmp_path, capsys):
    config, _, _ = make_study(tmp_path)
    path = tmp_path / "annotation_output" / "user_2.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-1]
    path.write_text("\n".join(lines) + "\n")
    err = fail(capsys, ["score", "--config", str(config)])
    assert "annotation_output/user_2.jsonl:3: not valid JSON" in err


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r["annotations"]["fluency"].update(best="item_999"), "best 'item_999' is not"),
        (
            lambda r: r["annotations"]["fluency"].update(worst=r["annotations"]["fluency"]["best"]),
            "best and worst are the same item",
        ),
        (lambda r: r["items"].__setitem__(0, "ghost"), "unknown item id 'ghost'"),
    ],
)
def test_bad_judgments_exit_2_naming_file_and_line(tmp_path, capsys, change, message):
    config, _, _ = make_study(tmp_path)
    path = tmp_path / "annotation_output" / "user_1.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records[4])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for command in ("score", "stats"):
        err = fail(capsys, [command, "--config", str(config)])
        assert "annotation_output/user_1.jsonl:5: " in err and message in err


def test_other_bad_input_exits_2_with_a_message(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, schemes=("fluency", "adequacy"))
    err = fail(capsys, ["score", "--config", str(config)])
    assert "choose one with --scheme" in err
    err = fail(capsys, ["score", "--config", str(config), "--scheme", "nope"])
    assert "no best-worst scheme 'nope'" in err
    err = fail(capsys, ["score", "--config", str(tmp_path / "missing.yaml")])
    assert "missing.yaml" in err
    with pytest.raises(SystemExit) as caught:
        cli.main(["score", "--config", str(config), "--method", "elo"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        cli.main(["score", "--config", str(config), "--tolerance", "-1"])
    assert caught.value.code == 2
    (tmp_path / "data" / "items.jsonl").write_text('{"id": "a", "text": "x"}\n{"id": "a"\n')
    err = fail(capsys, ["score", "--config", str(config), "--scheme", "fluency"])
    assert "items.jsonl:2" in err


def test_no_annotations_yet_is_a_clear_error(tmp_path, capsys):
    config, _, _ = make_study(tmp_path)
    for path in (tmp_path / "annotation_output").iterdir():
        path.unlink()
    err = fail(capsys, ["score", "--config", str(config)])
    assert "no judgments for scheme 'fluency'" in err


def run_module(*args):
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-m", "bws", *args], cwd=root, capture_output=True, text=True
    )


def test_python_m_bws_runs_score_and_stats(tmp_path):
    config, ids, _ = make_study(tmp_path)
    out = tmp_path / "scores.csv"
    done = run_module(
        "score", "--config", str(config), "--method", "counting", "--output", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert len(read_table(out, delimiter=",")) == len(ids)
    done = run_module("stats", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("BWS Statistics\n==============\nSchema: fluency\n")
    path = tmp_path / "annotation_output" / "user_1.jsonl"
    path.write_text(path.read_text() + "{oops\n")
    done = run_module("score", "--config", str(config))
    assert done.returncode == 2
    assert "annotation_output/user_1.jsonl:81: not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr


def split_study(root):
    """make_study, with items 30..39 judged only among themselves: two separate groups."""
    config, ids, _ = make_study(root)
    for path in (root / "annotation_output").iterdir():
        records = [json.loads(line) for line in path.read_text().splitlines()]
        kept = []
        for record in records:
            inside = [int(item[-3:]) >= 30 for item in record["items"]]
            if all(inside) or not any(inside):
                kept.append(record)
        path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    rng = np.random.default_rng(7)
    small = [ids[k] for k in range(30, 40)]
    # Every item of the large group shown at least once more, whatever was dropped.
    cover = [[ids[(k + j) % 30] for j in range(4)] for k in range(0, 30, 4)]
    extra = cover + [list(rng.choice(small, 4, replace=False)) for _ in range(30)]
    with open(root / "annotation_output" / "user_3.jsonl", "w") as stream:
        for t, items in enumerate(extra):
            record = {
                "id": f"extra_{t}",
                "items": items,
                "annotations": {"fluency": {"best": items[0], "worst": items[1]}},
                "annotator": "user_3",
            }
            stream.write(json.dumps(record) + "\n")
    return config


def test_score_and_stats_warn_of_separate_groups(tmp_path, capsys):
    config = split_study(tmp_path)
    assert cli.main(["score", "--config", str(config), "--bootstrap", "50"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert warnings[0] == (
        "warning: 2 separate groups of items (30 and 10 items): no tuple links one group to "
        "another, so scores (and ranks) are comparable only within a group."
    )
    assert "Wrote " in captured.out and "warning" not in captured.out
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    block = text.split("Warnings:\n", 1)[1]
    assert block.startswith("  - 2 separate groups of items (30 and 10 items)")


def test_a_connected_study_prints_no_warning(tmp_path, capsys):
    config, _, _ = make_study(tmp_path)
    assert cli.main(["score", "--config", str(config), "--bootstrap", "50"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert cli.main(["stats", "--config", str(config)]) == 0
    assert "Warnings:" not in capsys.readouterr().out


def test_one_annotator_resampled_by_annotator_gives_no_zero_width_figure(tmp_path, capsys):
    # Percentile bootstrap intervals resampling annotators (--resample-by): with one
    # annotator every resample is the data itself.
    config, _, _ = make_study(tmp_path, method="counting")
    (tmp_path / "annotation_output" / "user_2.jsonl").unlink()
    args = ["score", "--config", str(config), "--intervals", "bootstrap"]
    args += ["--resample-by", "annotator", "--bootstrap", "50"]
    assert cli.main(args) == 0
    err = capsys.readouterr().err
    assert (
        "warning: The bootstrap resampled annotators, and there is only 1: it needs at least "
        "6 to show the spread, so every interval is approximate (\u2248)."
    ) in err


def test_stats_shows_an_always_best_item_as_approximate_not_as_zero_width(tmp_path, capsys):
    config, _, _ = make_study(tmp_path, method="counting")
    path = tmp_path / "annotation_output" / "user_1.jsonl"
    (tmp_path / "annotation_output" / "user_2.jsonl").unlink()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        if "item_039" in record["items"]:
            answer = record["annotations"]["fluency"]
            others = [item for item in record["items"] if item != "item_039"]
            answer["best"] = "item_039"
            answer["worst"] = answer["worst"] if answer["worst"] in others else others[0]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    # Its counting score is +1 whatever the data's noise: its interval is approximate
    # ("≈ no spread" at zero width, as a bootstrap gives it), never "±0.00".
    assert "  item_039:  1.00 (\u2248" in text and "±0.00" not in text
    warnings = text.split("Warnings:\n", 1)[1]
    assert all(len(line) <= 88 for line in warnings.splitlines())
    assert " ".join(warnings.split()).startswith(
        "- 1 item was chosen best every time it was shown: its score sits at the end of "
        "the scale (+1 or -1), whatever its true distance from the rest."
    )
