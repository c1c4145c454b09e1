"""The quality page's figures, per annotator of a project: answers, gold accuracy, training,
agreement with the consensus of the others (BWS schemes), median time per unit, and the
random-clicking flag (bws.core.quality). Gold units' answers count only as gold; an
annotator a manager left out is measured but is not part of anyone's consensus."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.contrib.auth import get_user_model

from annotation.models import Annotation
from crowds import gold
from projects import selectors
from projects.models import Membership, Project, Unit

from . import selectors as bws_selectors
from .core import quality


@dataclass(frozen=True)
class SchemeReliability:
    scheme: str
    method: str
    sensitivity: float | None
    low: float | None
    high: float | None
    judgments: int
    joint: bool  # the scores were fitted with these sensitivities


@dataclass
class AnnotatorQuality:
    user_id: int
    username: str
    role: str
    excluded: bool
    answers: int = 0  # ordinary units answered
    gold_checks: int = 0  # attention checks answered
    gold_right: int = 0  # ... every scheme right (BWS: best and worst both)
    best_right: int = 0
    worst_right: int = 0
    bws_gold: int = 0  # attention checks with a best-worst answer
    training: str = ""
    judgments: int = 0
    agreeing: float = 0.0
    p_value: float | None = None
    median_seconds: float | None = None
    flagged: bool = False
    reversed: bool = False  # agreement significantly below one half
    # Per BWS scheme with a model run: the estimated sensitivity (1 typical, 0 random
    # clicking) with its interval and the judgments it rests on (bws.core.annotator_model).
    reliability: list[SchemeReliability] = field(default_factory=list)

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_right / self.gold_checks if self.gold_checks else None

    @property
    def best_accuracy(self) -> float | None:
        return self.best_right / self.bws_gold if self.bws_gold else None

    @property
    def worst_accuracy(self) -> float | None:
        return self.worst_right / self.bws_gold if self.bws_gold else None

    @property
    def agreement(self) -> float | None:
        return self.agreeing / self.judgments if self.judgments else None


@dataclass
class QualityReport:
    rows: list[AnnotatorQuality]
    typical: float | None
    threshold: float | None
    min_judgments: int = quality.MIN_JUDGMENTS


def project_quality(project: Project) -> QualityReport:
    members = Membership.objects.filter(project=project).select_related("user")
    rows = {
        m.user_id: AnnotatorQuality(m.user_id, m.user.username, m.role, m.excluded) for m in members
    }
    answers = Annotation.objects.filter(project=project).values_list(
        "annotator_id", "annotator__username", "unit_id", "scheme", "value", "time_taken_ms"
    )
    per_unit: dict[tuple[int, int], dict] = defaultdict(dict)
    times: dict[int, dict[int, int | None]] = defaultdict(dict)
    for user_id, username, unit_id, scheme, value, ms in answers.iterator(chunk_size=2000):
        if user_id not in rows:  # an answer of someone no longer a member
            rows[user_id] = AnnotatorQuality(user_id, username, "", False)
        per_unit[(user_id, unit_id)][scheme] = value
        if ms is not None:
            times[user_id][unit_id] = max(ms, times[user_id].get(unit_id) or 0)
    users = {user.pk: user for user in get_user_model().objects.filter(pk__in=list(rows))}
    gold_units = {
        unit.pk: unit
        for unit in Unit.objects.filter(project=project, is_gold=True).only("gold", "is_gold")
    }
    for (user_id, unit_id), given in per_unit.items():
        row = rows[user_id]
        unit = gold_units.get(unit_id)
        if unit is None:
            row.answers += 1
            continue
        if (unit.gold or {}).get("training"):
            continue
        graded = gold.grade(unit, given)
        row.gold_checks += 1
        row.gold_right += graded.correct
        if graded.best_right is not None:
            row.bws_gold += 1
            row.best_right += graded.best_right
            row.worst_right += bool(graded.worst_right)
    for row in rows.values():
        unit_times = [ms for unit_id, ms in times[row.user_id].items() if unit_id not in gold_units]
        row.median_seconds = quality.median_seconds(unit_times)
        row.training = str(gold.training_result(project, users[row.user_id]).status)
    typical = threshold = None
    if project.settings.bws_schemes:
        typical, threshold = _consensus(project, rows)
        _reliability(project, rows)
    ordered = sorted(rows.values(), key=lambda r: (r.role == Membership.Role.MANAGER, r.username))
    return QualityReport(ordered, typical, threshold)


def _reliability(project: Project, rows: dict[int, AnnotatorQuality]) -> None:
    """Each annotator's estimated sensitivity from every BWS scheme's newest model run."""
    for scheme in project.settings.bws_schemes:
        run = bws_selectors.latest_annotator_reliability(project, scheme.name)
        if run is None:
            continue
        stored = run.annotator_reliability
        for user_id, found in stored.get("annotators", {}).items():
            row = rows.get(int(user_id))
            if row is None:
                continue
            row.reliability.append(
                SchemeReliability(
                    scheme.name,
                    run.method,
                    found.get("sensitivity"),
                    found.get("low"),
                    found.get("high"),
                    int(found.get("judgments", 0)),
                    bool(stored.get("joint")),
                )
            )


def _consensus(project: Project, rows: dict[int, AnnotatorQuality]):
    left_out = selectors.excluded_user_ids(project)
    index = {user_id: n for n, user_id in enumerate(rows)}
    judgments = np.zeros(len(rows), dtype=np.int64)
    agreeing = np.zeros(len(rows))
    for scheme in project.settings.bws_schemes:
        found = list(
            Annotation.objects.filter(project=project, scheme=scheme.name, best_index__isnull=False)
            .exclude(unit__is_gold=True)
            .values_list("unit__item_indices", "best_index", "worst_index", "annotator_id")
        )
        if not found:
            continue
        size = max(len(r[0]) for r in found)
        found = [r for r in found if len(r[0]) == size]
        items = np.array([r[0] for r in found], dtype=np.int64)
        best = np.argmax(items == np.array([r[1] for r in found])[:, None], axis=1)
        worst = np.argmax(items == np.array([r[2] for r in found])[:, None], axis=1)
        who = np.array([index[r[3]] for r in found], dtype=np.int64)
        counted = np.array([r[3] not in left_out for r in found])
        n_items = int(items.max()) + 1
        result = quality.consensus_agreement(
            items, best, worst, who, n_items, len(rows), counted=counted
        )
        judgments += result.judgments
        agreeing += result.agreeing
    combined = quality.ConsensusAgreement(judgments, agreeing)
    included = np.array([user_id not in left_out for user_id in rows])
    typical = quality.typical_agreement(
        quality.ConsensusAgreement(judgments[included], agreeing[included])
    )
    for user_id, n in index.items():
        row = rows[user_id]
        row.judgments = int(combined.judgments[n])
        row.agreeing = float(combined.agreeing[n])
        if row.judgments:
            row.p_value = quality.chance_p_value(row.agreeing, row.judgments)
            row.flagged = quality.looks_random(row.agreeing, row.judgments, typical)
            row.reversed = quality.looks_reversed(row.agreeing, row.judgments)
    return typical, quality.random_threshold(typical)
