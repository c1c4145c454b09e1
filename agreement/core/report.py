"""The inter-annotator agreement report: per-scheme figures from interchange records.

Input is plain data: interchange records (dicts or objects with ``id``, ``annotator``,
``annotations`` {scheme: value} and, on BWS units, ``items``) and the project's schemes in
normal form ({name, type, options, measure}, as projects.configuration produces, with the
measure its scheme type names; see ``measure_of``). Output is a
JSON-ready dict; ``format_text`` renders it for people. The web page, the API, the worker
and ``python -m agreement`` all call ``build_report``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np

from agreement.core.coefficients import (
    Coefficient,
    cohen_kappa,
    disagreement_rate,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)
from agreement.core.structured import (
    ObjectError,
    parse_boxes,
    parse_segments,
    structured_agreement,
)
from bws.core.judgments import JudgmentError, build_judgments
from bws.core.reliability import split_half

# What build_scheme_report computes, by the scheme's ``measure`` (the platform's scheme
# types name theirs: projects.schemes). None, or a name not listed: answers not compared.
CATEGORICAL_MEASURES = ("nominal", "ordinal", "label_set")
STRUCTURED_MEASURES = ("boxes", "segments", "tiered_segments", "trace")

# Fallback for schemes given without a measure: the pure callers that hand the core plain
# {name, type, options} dicts (the core's own tests, benchmarks/agreement.py) cannot ask
# the platform's registry, which the core may not import. Callers inside the platform
# (agreement.services, agreement.cli_report) always pass the registry's measure.
_MEASURE_OF_TYPE = {
    "radio": "nominal",
    "likert": "ordinal",
    "multiselect": "label_set",
    "spatial_annotation": "boxes",
    "temporal_grounding": "segments",
    "tiered_annotation": "tiered_segments",
    "process_reward": "trace",
    "trajectory_eval": "trace",
    "tool_call_review": "trace",
    "failure_attribution": "trace",
    "gui_trajectory": "trace",
    "bws": "bws",
    "best_worst_scaling": "bws",
}
_NO_MEASURE = object()
SPLIT_HALF_TRIALS = 100


class AgreementInputError(ValueError):
    """Annotation values the report cannot read; the message names scheme, unit, annotator."""


# --------------------------------------------------------------------------- entry points


def build_report(
    records: Iterable[Any],
    schemes: Iterable[Any],
    *,
    model_annotators: Iterable[str] = (),
) -> dict:
    """The full report: {"schemes": {name: scheme report}, "n_records", "model_annotators"}."""
    records = list(records)
    judges = sorted(set(model_annotators))
    reports = {}
    for scheme in schemes:
        name = str(_get(scheme, "name"))
        reports[name] = build_scheme_report(scheme, records, model_annotators=judges)
    return {"schemes": reports, "n_records": len(records), "model_annotators": judges}


def measure_of(scheme: Any) -> str | None:
    """The scheme's ``measure``; for a scheme given without one, the measure of its type."""
    measure = _get(scheme, "measure", _NO_MEASURE)
    if measure is _NO_MEASURE:
        return _MEASURE_OF_TYPE.get(str(_get(scheme, "type")))
    return measure


def build_scheme_report(
    scheme: Any, records: Iterable[Any], *, model_annotators: Iterable[str] = ()
) -> dict:
    """The report of one scheme: the figures of its measure (see measure_of), under its type."""
    name = str(_get(scheme, "name"))
    kind = str(_get(scheme, "type"))
    measure = measure_of(scheme)
    options = _get(scheme, "options") or {}
    units, repeats = _units(records, name)
    notes: list[str] = []
    if repeats:
        notes.append(
            f"{repeats} repeated answer(s) by one annotator to one unit: the last one read counts"
        )
    try:
        if measure in CATEGORICAL_MEASURES:
            report = _categorical(kind, measure, options, units, notes, name)
        elif measure == "boxes":
            report = structured_agreement(parse_boxes(units), kind="boxes")
        elif measure in ("segments", "tiered_segments"):
            objects = parse_segments(units, tiered=measure == "tiered_segments")
            report = structured_agreement(objects, kind="segments")
        elif measure == "trace":
            report = _trace(options, units, notes, name, set(model_annotators))
        elif measure == "bws":
            report = _bws(units, records, notes, name)
        elif measure is None:
            notes.append(f"no agreement measure for {kind} answers (free text is not compared)")
            report = {"n_units": len(units)}
        else:
            notes.append(f"no agreement measure named {measure!r}: {kind} answers not compared")
            report = {"n_units": len(units)}
    except ObjectError as exc:
        raise AgreementInputError(f"scheme {name!r}: {exc}") from None
    report["notes"] = notes + report.pop("notes", [])
    return {"type": kind, **report}


# --------------------------------------------------------------------------- scheme kinds


def _categorical(
    kind: str, measure: str, options: Mapping, units: dict, notes: list[str], name: str
) -> dict:
    labels = [_label_name(label) for label in options.get("labels") or []]
    if measure == "label_set":
        notes.append(f"{kind}: each answer's set of labels is one nominal value")
        coder = _Coder([], name)
        values = {
            unit: {who: coder.code(_label_set(value, name, unit, who)) for who, value in answers}
            for unit, answers in _answers(units)
        }
    elif measure == "ordinal":
        coder = _Coder(labels, name, ordinal=True)
        values = {
            unit: {who: coder.likert(value, unit, who) for who, value in answers}
            for unit, answers in _answers(units)
        }
    else:
        coder = _Coder(labels, name)
        values = {
            unit: {who: coder.label(value, unit, who) for who, value in answers}
            for unit, answers in _answers(units)
        }
    coder.note_unknown(notes)
    matrix, annotators = _matrix(values)
    report: dict[str, Any] = {}
    report["alpha_nominal"] = _value(krippendorff_alpha(matrix, "nominal"), "alpha_nominal", notes)
    if measure == "ordinal":
        alpha = krippendorff_alpha(matrix, "ordinal")
        report["alpha_ordinal"] = _value(alpha, "alpha_ordinal", notes)
    report["fleiss_kappa"] = _value(fleiss_kappa(matrix), "fleiss_kappa", notes)
    report.update(_kappa_and_percent(matrix, annotators, notes))
    return report


def _trace(options: Mapping, units: dict, notes: list[str], name: str, judges: set[str]) -> dict:
    coder = _Coder([_label_name(label) for label in options.get("labels") or []], name)
    steps: dict[tuple[str, str], dict[str, float]] = {}
    for unit, answers in _answers(units):
        for who, value in answers:
            for step, label in _step_labels(value, name, unit, who):
                steps.setdefault((unit, step), {})[who] = coder.label(label, unit, who)
    coder.note_unknown(notes)
    matrix, annotators = _matrix(steps)
    report: dict[str, Any] = {
        "alpha_nominal": _value(krippendorff_alpha(matrix, "nominal"), "alpha_nominal", notes)
    }
    report.update(_kappa_and_percent(matrix, annotators, notes))
    taking_part = [who for who in annotators if who in judges]
    if not taking_part:
        report["judge_disagreement"] = None
        notes.append("judge_disagreement: no model annotator took part")
        return report
    people = [row for row, who in enumerate(annotators) if who not in judges]
    table = {}
    for judge in taking_part:
        rate, n_steps, comparisons = disagreement_rate(matrix, annotators.index(judge), people)
        entry: dict[str, Any] = {"rate": rate, "n_steps": n_steps, "n_comparisons": comparisons}
        if rate is None:
            entry["reason"] = "no step labelled by both the judge and a person"
            notes.append(f"judge_disagreement of {judge}: undefined, {entry['reason']}")
        table[judge] = entry
    report["judge_disagreement"] = table
    return report


def _bws(units: dict, records: list, notes: list[str], name: str) -> dict:
    report: dict[str, Any] = {}
    for key in ("best", "worst"):
        coder = _Coder([], name)
        values: dict[str, dict[str, float]] = {}
        for unit, answers in _answers(units):
            for who, value in answers:
                if not isinstance(value, Mapping) or value.get(key) is None:
                    raise AgreementInputError(
                        f"scheme {name!r}, unit {unit!r}, annotator {who!r}: "
                        f"expected {{'best': ..., 'worst': ...}}, got {value!r}"
                    )
                values.setdefault(unit, {})[who] = coder.code(str(value[key]))
        matrix, _ = _matrix(values)
        report[f"{key}_alpha"] = _value(
            krippendorff_alpha(matrix, "nominal"), f"{key}_alpha", notes
        )
    report["split_half"] = _split_half(records, name, notes)
    report["n_units"] = int(sum(len(answers) >= 2 for answers in units.values()))
    report["n_annotators"] = len({who for answers in units.values() for who in answers})
    return report


def _split_half(records: list, name: str, notes: list[str]) -> dict | None:
    rows = []
    for record in records:
        annotations = _get(record, "annotations") or {}
        if annotations.get(name) is None:
            continue
        rows.append(
            SimpleNamespace(
                id=_get(record, "id"),
                items=list(_get(record, "items") or []),
                annotations=annotations,
                annotator=_get(record, "annotator"),
                timestamp=_get(record, "timestamp"),
                file=_get(record, "file") or "records",
                line=_get(record, "line"),
            )
        )
    item_ids = sorted({str(item) for row in rows for item in row.items})
    if not rows:
        notes.append("split_half: no best-worst judgments")
        return None
    try:
        judgments = build_judgments(rows, {item: i for i, item in enumerate(item_ids)}, name)
    except (JudgmentError, ValueError) as exc:
        raise AgreementInputError(f"scheme {name!r}: {exc}") from None
    result = split_half(judgments, trials=SPLIT_HALF_TRIALS, seed=0)
    if not math.isfinite(result.mean):
        notes.append("split_half: undefined, no split left three or more items scored in both")
        return None
    if result.spearman_brown is None:
        notes.append(f"split_half: Spearman-Brown {result.spearman_brown_reason}")
    return {
        "mean": result.mean,
        "std": result.std,
        "spearman_brown": result.spearman_brown,
        "trials": result.trials,
        "split": result.split,
    }


def _kappa_and_percent(matrix: np.ndarray, annotators: list[str], notes: list[str]) -> dict:
    kappa, pairs = cohen_kappa(matrix)
    table = []
    for pair in pairs:
        entry: dict[str, Any] = {
            "annotators": [annotators[pair.first], annotators[pair.second]],
            "kappa": pair.kappa,
            "n_units": pair.n_units,
        }
        if pair.reason:
            entry["reason"] = pair.reason
        table.append(entry)
    undefined = [entry for entry in table if entry["kappa"] is None]
    if undefined and kappa.value is not None:
        notes.append(
            f"cohen_kappa: {len(undefined)} of {len(table)} annotator pairs undefined and "
            "left out of the mean (see cohen_kappa_pairs)"
        )
    present = ~np.isnan(matrix)
    pairable = present.sum(axis=0) >= 2
    return {
        "cohen_kappa": _value(kappa, "cohen_kappa", notes),
        "cohen_kappa_pairs": table,
        "percent_agreement": _value(percent_agreement(matrix), "percent_agreement", notes),
        "n_units": int(pairable.sum()),
        "n_annotators": int(np.any(present[:, pairable], axis=1).sum()),
    }


# --------------------------------------------------------------------------- plumbing


def _get(record: Any, key: str, default=None):
    if isinstance(record, Mapping):
        return record.get(key, default)
    return getattr(record, key, default)


def _units(records: Iterable[Any], scheme: str) -> tuple[dict[str, dict[str, Any]], int]:
    """unit id -> annotator -> value for one scheme; the last answer read wins. A value of
    None (or the scheme absent) is no answer and left out; an empty list is kept, which a
    boxes or segments scheme counts as "nothing to mark" (agreement.core.structured)."""
    units: dict[str, dict[str, Any]] = {}
    repeats = 0
    for record in records:
        annotations = _get(record, "annotations") or {}
        if not isinstance(annotations, Mapping) or scheme not in annotations:
            continue
        value = annotations[scheme]
        if value is None:
            continue
        answers = units.setdefault(str(_get(record, "id")), {})
        who = str(_get(record, "annotator") or "")
        repeats += who in answers
        answers[who] = value
    return units, repeats


def _answers(units: dict):
    for unit, answers in units.items():
        yield unit, list(answers.items())


def _matrix(values: Mapping[Any, Mapping[str, float]]) -> tuple[np.ndarray, list[str]]:
    """(annotators, units) float matrix, NaN where missing; annotators sorted by name."""
    annotators = sorted({who for answers in values.values() for who in answers})
    row = {who: index for index, who in enumerate(annotators)}
    rows, cols, codes = [], [], []
    for col, answers in enumerate(values.values()):
        for who, code in answers.items():
            rows.append(row[who])
            cols.append(col)
            codes.append(code)
    matrix = np.full((len(annotators), len(values)), np.nan)
    matrix[rows, cols] = codes
    return matrix, annotators


def _value(coefficient: Coefficient, key: str, notes: list[str]) -> float | None:
    if coefficient.value is None:
        notes.append(f"{key}: undefined, {coefficient.reason}")
        return None
    return float(coefficient.value)


def _label_name(label: Any) -> str:
    return str(label["name"]) if isinstance(label, Mapping) else str(label)


def _label_set(value: Any, scheme: str, unit: str, who: str) -> str:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AgreementInputError(
            f"scheme {scheme!r}, unit {unit!r}, annotator {who!r}: "
            f"expected a list of label strings, got {value!r}"
        )
    return "\x1f".join(sorted(set(value)))


def _step_labels(value: Any, scheme: str, unit: str, who: str):
    if isinstance(value, Mapping):
        pairs = value.items()
    elif isinstance(value, list):
        pairs = enumerate(value)
    else:
        raise AgreementInputError(
            f"scheme {scheme!r}, unit {unit!r}, annotator {who!r}: "
            f"expected an object from step index to label, got {value!r}"
        )
    for step, label in pairs:
        if label is not None:
            yield str(step), label


class _Coder:
    """Label -> number: the scheme's labels in order first, unknown labels after."""

    def __init__(self, labels: list[str], scheme: str, *, ordinal: bool = False):
        self.codes = {label: float(index) for index, label in enumerate(labels)}
        self.known = len(labels)
        self.scheme = scheme
        self.ordinal = ordinal
        self.unknown: list[str] = []

    def code(self, key: str) -> float:
        if key not in self.codes:
            self.codes[key] = float(len(self.codes))
        return self.codes[key]

    def label(self, value: Any, unit: str, who: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise AgreementInputError(
                f"scheme {self.scheme!r}, unit {unit!r}, annotator {who!r}: "
                f"expected a label, got {value!r}"
            )
        key = str(value)
        if key not in self.codes and self.known:
            self.unknown.append(key)
        return self.code(key)

    def likert(self, value: Any, unit: str, who: str) -> float:
        """A point on the scale: integer 1..size, or a listed label's position (1-based)."""
        if isinstance(value, str) and value in self.codes:
            return self.codes[value] + 1.0
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(int(value))
            except ValueError:
                pass
        raise AgreementInputError(
            f"scheme {self.scheme!r}, unit {unit!r}, annotator {who!r}: "
            f"expected a point of the likert scale, got {value!r}"
        )

    def note_unknown(self, notes: list[str]) -> None:
        if self.unknown:
            names = ", ".join(repr(label) for label in sorted(set(self.unknown))[:5])
            notes.append(f"labels not listed in the scheme, kept as their own values: {names}")


# --------------------------------------------------------------------------- text


_ORDER = (
    "alpha_nominal",
    "alpha_ordinal",
    "fleiss_kappa",
    "cohen_kappa",
    "percent_agreement",
    "best_alpha",
    "worst_alpha",
    "mean_agreement",
    "mean_object_count_diff",
    "n_items",
    "n_pairs",
    "n_units",
    "n_annotators",
)


def format_text(report: Mapping) -> str:
    """The report as aligned plain text, one block per scheme."""
    lines = [f"Agreement report ({report.get('n_records', 0)} records)"]
    judges = report.get("model_annotators") or []
    if judges:
        lines.append(f"Model annotators: {', '.join(judges)}")
    for name, scheme in (report.get("schemes") or {}).items():
        lines.append("")
        lines.append(f"{name} ({scheme.get('type')})")
        for key in _ORDER:
            if key in scheme:
                lines.append(f"  {key:<24}{_show(scheme[key])}")
        for pair in scheme.get("cohen_kappa_pairs") or []:
            who = " / ".join(pair["annotators"])
            lines.append(f"    kappa {who}: {_show(pair['kappa'])} on {pair['n_units']} units")
        split = scheme.get("split_half")
        if "split_half" in scheme:
            shown = (
                "undefined"
                if split is None
                else f"{split['mean']:.3f} (Spearman-Brown {_show(split['spearman_brown'])}, "
                f"{split['trials']} splits of {split['split']})"
            )
            lines.append(f"  {'split_half':<24}{shown}")
        judges_table = scheme.get("judge_disagreement")
        if judges_table:
            for judge, entry in judges_table.items():
                lines.append(
                    f"  judge {judge}: disagrees on {_show(entry['rate'])} of "
                    f"{entry['n_comparisons']} comparisons ({entry['n_steps']} steps)"
                )
        for note in scheme.get("notes") or []:
            lines.append(f"  note: {note}")
    return "\n".join(lines) + "\n"


def _show(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
