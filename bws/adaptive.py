"""Adaptive tuple designs on the platform: the balanced start is batch 0, and each later
batch of tuples is designed from the latest stored fit where it tells most, stored as a new
version of the tuple set (TupleBatch) and served by the ordinary queue.

A batch is designed once fewer than ``ready_margin`` tuples are still open (the low-water
mark), or fewer than the crowd, at its pace, would use up while a batch is made
(``margin``), by a worker (``bws.tasks.design_batch_task``), so annotators never wait for
it; a short batch is topped up and followed at once by another until the mark is met, and
the design ends only when no tuple of the items below their bound keeps the rules; the
project's ScoringState row is locked while a batch is made, so two workers never make the
same batch twice. A batch records its seed and the run it was designed from, so
``redesign`` makes it again.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from datetime import timedelta

import numpy as np
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Max, Q, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from annotation.models import Annotation
from bws.configuration import design_of
from bws.configuration.adaptive import AdaptiveSettings, AdaptiveStrategy, AdaptiveTarget
from projects.models import Item, Project, Unit
from projects.queueing import send_task
from projects.services import project_folder, store_units

from . import services
from .core import adaptive as core
from .core import targets
from .filemode import write_tuple_file
from .models import BwsTuple, ScoreRun, ScoringState, TupleBatch
from .selectors import adaptive_settings

log = logging.getLogger(__name__)

# A design request is taken as still running for at most this long (a lost task's mark
# expires, and the next answer asks again).
DESIGN_PENDING_SECONDS = 300
# Where intervals come from (95% calibrated or bootstrap): half-width / Z is the score's sd.
Z95 = 1.959963984540054
# Batches one design request may add from one fit (each short one is followed by another
# until the margin is met; a bound, so one request cannot run on).
MAX_BATCHES_PER_REQUEST = 50
# The task that designs the next batch, queued by its registered name (bws.tasks).
DESIGN_BATCH_TASK = "bws.design_batch"
# A margin that follows the crowd (``margin``): the answers of the last PACE_WINDOW seconds
# give the pace (read again after PACE_SECONDS), the last design requests the lead (from
# the request to the stored batch, an average that gives the newest LEAD_WEIGHT), and the
# open tuples must last that long times PACE_ROOM; at most PACE_BATCHES batches' worth, since
# each batch past the first is designed from a fit that has not seen the one before.
PACE_WINDOW = 60
PACE_SECONDS = 5
LEAD_WEIGHT = 0.5
LEAD_SECONDS = 3600
PACE_ROOM = 1.5
PACE_BATCHES = 4


# --------------------------------------------------------------------------- the design


def item_index(project: Project) -> dict[str, int]:
    """The project's item ids to their Item.index."""
    return dict(Item.objects.filter(project=project).values_list("item_id", "index"))


def core_target(adaptive: AdaptiveSettings, index: dict[str, int]) -> targets.Target:
    """The design's target over Item.index (``index``: item_index; item ids mapped, top_k's
    share made a count)."""
    kind = str(adaptive.target)
    if adaptive.target == AdaptiveTarget.RANKING:
        return targets.Target()
    if adaptive.target == AdaptiveTarget.TOP_K:
        return targets.Target(kind, k=adaptive.count(len(index)))
    if adaptive.target == AdaptiveTarget.THRESHOLD:
        reference = None if adaptive.reference is None else index[adaptive.reference]
        return targets.Target(kind, score=adaptive.threshold, reference=reference)
    pairs = tuple((index[a], index[b]) for a, b in adaptive.comparisons or ())
    return targets.Target(kind, pairs=pairs)


def _designer(strategy: str) -> str:
    """The numeric designer of a strategy (recorded on each batch)."""
    if strategy == AdaptiveStrategy.ITERATIVE:
        return "bws.core.adaptive.iterative_round"
    return "bws.core.adaptive.adaptive_batch"


def batch_seed(project_seed: int, number: int) -> int:
    """A batch's seed: depends only on the project's seed and the batch's number."""
    return int(np.random.SeedSequence([project_seed, 0xADA, number]).generate_state(1)[0])


def design_state(project: Project, before: int | None = None) -> core.DesignState:
    """The design so far over Item.index (appearances, positions, pairs met), from the
    tuples of batches numbered below ``before`` (all when None), in position order."""
    n = Item.objects.filter(project=project).count()
    size = design_of(project.settings).tuple_size
    tuples = BwsTuple.objects.filter(project=project).order_by("position")
    if before is not None:
        tuples = tuples.filter(Q(batch__number__lt=before) | Q(batch__isnull=True))
    rows = [
        indices
        for indices in tuples.values_list("unit__item_indices", flat=True)
        if len(indices) == size
    ]
    return core.DesignState.from_tuples(np.asarray(rows, dtype=np.int64).reshape(-1, size), n)


def fit_arrays(run: ScoreRun, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """A stored run's scores and their standard deviations over Item.index (the 95%
    interval's inner half-width over z: a model fit's outer end may be moved out for the
    prior's pull, bws/core/tail_intervals.py; NaN for an item the run did not score or
    bound)."""
    u = np.full(n_items, np.nan)
    sd = np.full(n_items, np.nan)
    for index, score, low, high in run.item_scores.values_list(
        "item_index", "score", "ci_low", "ci_high"
    ):
        if score is not None:
            u[index] = score
        if low is not None and high is not None:
            half = (high - low) / 2 if score is None else min(score - low, high - score)
            sd[index] = max(half, 0.0) / Z95
    return u, sd


def design_batch(project: Project, *, number: int, fit_run: ScoreRun, seed: int) -> np.ndarray:
    """The tuples (rows of Item.index) of batch ``number``: from the design before it, the
    fit of ``fit_run`` and ``seed``, so the same inputs give the same tuples. The iterative
    strategy designs a round (every item below the bound once) in 2 ** number buckets.

    A short adaptive batch (or an empty round) is topped up (``core.topped_up``: closeness
    relaxed, then balanced tuples of the under-served items), so a batch comes back empty
    only when no tuple of the items below the bound keeps the design rules."""
    adaptive = adaptive_settings(project)
    state = design_state(project, before=number)
    u, sd = fit_arrays(fit_run, state.n_items)
    bound = adaptive.max_appearances
    exempt = None  # items not held to the bound: a reference item, the compared items
    if adaptive.strategy == AdaptiveStrategy.ITERATIVE:
        rows = core.iterative_round(
            u, state, n_buckets=2 ** min(number, 30), max_appearances=bound, seed=seed
        )
        # A round that buckets leave empty: one of every item below the bound that the
        # rules allow, so the design goes on.
        want = int((state.appearances < bound).sum()) // state.tuple_size if not rows.size else 0
    elif adaptive.target != AdaptiveTarget.RANKING:
        # A narrow target's batch holds the items that matter to it; never topped up with
        # fillers, and the design goes on while any item still matters.
        target = core_target(adaptive, item_index(project))
        exempt = targets.exempt_items(target)
        rows = targets.target_batch(
            u, sd, state, target,
            batch_tuples=adaptive.batch_tuples, max_appearances=bound, seed=seed,
        )  # fmt: skip
        want = min(rows.shape[0], adaptive.batch_tuples) if rows.size else adaptive.batch_tuples
    else:
        rows = core.adaptive_batch(
            u, sd, state, batch_tuples=adaptive.batch_tuples, max_appearances=bound, seed=seed
        )
        want = adaptive.batch_tuples
    if rows.shape[0] < want:
        # Short: closeness relaxed, then balanced tuples of the under-served items.
        rows = core.topped_up(
            rows, u, sd, state, batch_tuples=want, max_appearances=bound, seed=seed
        )
    problems = core.batch_problems(
        rows, state, max_appearances=adaptive.max_appearances, exempt=exempt
    )
    if problems:
        raise ValueError(f"batch {number} was refused: {'; '.join(problems)}")
    return np.asarray(rows, dtype=np.int64).reshape(-1, state.tuple_size)


def redesign(batch: TupleBatch) -> np.ndarray:
    """A stored batch designed again from its seed and stored fit (as Item.index rows)."""
    return design_batch(batch.project, number=batch.number, fit_run=batch.fit_run, seed=batch.seed)


# --------------------------------------------------------------------------- the platform


def open_tuples(project: Project) -> int:
    """Tuples still open to the queue: answer slots left under num_annotators_per_item,
    or (without that cap) tuples nobody has taken yet."""
    units = Unit.objects.filter(project=project, kind=Unit.Kind.TUPLE, is_gold=False)
    cap = project.settings.num_annotators_per_item
    if cap is None:
        return units.filter(load=0).count()
    slots = units.aggregate(open=Sum(Greatest(Value(cap) - F("load"), Value(0))))["open"]
    return int(slots or 0)


def _ended_empty(project: Project) -> bool:
    last = TupleBatch.objects.filter(project=project).order_by("-number").first()
    return last is not None and last.number > 0 and last.n_tuples == 0


def design_finished(project: Project) -> bool:
    """Whether the adaptive design can add nothing more: fewer than a tuple's worth of
    items are below max_appearances, or the last batch came back empty even after its
    top-up (no tuple of the items left keeps the rules: each would pair items that met
    before, or seat one where it has sat more often; exhaustively checked while at most
    ``core.FILL_POOL`` items are below the bound)."""
    adaptive = adaptive_settings(project)
    if _ended_empty(project):
        return True
    state = design_state(project)
    return int((state.appearances < adaptive.max_appearances).sum()) < state.tuple_size


def _cached(key: str):
    try:
        return cache.get(key)
    except Exception:  # the cache lives in Redis: nothing known when it cannot say
        return None


def _remember(key: str, value, seconds: int) -> None:
    try:
        cache.set(key, value, seconds)
    except Exception:
        pass  # the figure is worked out again next time


# How long whether a design is finished is remembered for the same last batch.
FINISHED_SECONDS = 600


def more_coming(project: Project) -> bool:
    """Whether the project's adaptive design will add tuples: it has a design that is not
    finished (read once per last batch: it changes only when a batch is added)."""
    if adaptive_settings(project) is None:
        return False
    last = (
        TupleBatch.objects.filter(project=project)
        .order_by("-number")
        .values_list("pk", "created_at")
        .first()
    )
    stamp = "none" if last is None else f"{last[0]}:{last[1].timestamp()}"
    key = f"bws:finished:{project.pk}:{stamp}"
    known = _cached(key)
    if known is None:
        known = design_finished(project)
        _remember(key, known, FINISHED_SECONDS)
    return not known


def _lead_key(project_id: int) -> str:
    return f"bws:design-lead:{project_id}"


def _pace_key(project_id: int) -> str:
    return f"bws:answer-pace:{project_id}"


def design_lead(project_id: int) -> float | None:
    """Seconds from a design request to its stored batch, as the last requests took (None
    before the first)."""
    return _cached(_lead_key(project_id))


def answer_pace(project: Project) -> float:
    """The project's answers a second over the last PACE_WINDOW seconds (its first BWS
    scheme's, the one the batches are designed from)."""
    known = _cached(_pace_key(project.pk))
    if known is not None:
        return known
    schemes = project.settings.bws_schemes
    since = timezone.now() - timedelta(seconds=PACE_WINDOW)
    answers = Annotation.objects.filter(
        project=project, scheme=schemes[0].name if schemes else "", created_at__gte=since
    ).count()
    pace = answers / PACE_WINDOW
    _remember(_pace_key(project.pk), pace, PACE_SECONDS)
    return pace


def margin(project: Project, adaptive: AdaptiveSettings) -> int:
    """The open tuples under which the next batch is designed: ``ready_margin``, or, where
    the crowd would use up more while a batch is made (its pace times the last requests'
    lead, with room PACE_ROOM), that many, up to PACE_BATCHES batches. A slow crowd gets
    the batches designed from the freshest fits; a fast one is not kept waiting for them."""
    base = max(adaptive.ready_margin, 1)
    lead = design_lead(project.pk)
    if not lead:
        return base
    wanted = math.ceil(answer_pace(project) * lead * PACE_ROOM)
    return max(base, min(wanted, PACE_BATCHES * adaptive.batch_tuples))


def needs_batch(project: Project) -> bool:
    """Whether the next batch is due: fewer than ``margin`` tuples open, and the design
    not finished."""
    adaptive = adaptive_settings(project)
    if adaptive is None or open_tuples(project) >= margin(project, adaptive):
        return False
    return not design_finished(project)


def _pending_key(project_id: int) -> str:
    return f"bws:design-batch:{project_id}"


def after_hand_out(project: Project) -> bool:
    """The queue handed out a unit or found none: for an adaptive project, the same check
    as after answers (a balanced project costs one look at its settings)."""
    if adaptive_settings(project) is None:
        return False
    return maybe_queue_batch(project.pk, project=project)


def maybe_queue_batch(project_id: int, project: Project | None = None) -> bool:
    """After answers, a hand-out or a run: queue the design of the next batch when the open
    tuples fell under the margin. One request at a time per project (until the task ends or
    DESIGN_PENDING_SECONDS pass), so a burst of answers does not fit the data once each;
    a duplicate that slips through costs one locked check."""
    if project is None:
        # the settings only: not the uploaded YAML text or the rest of the row
        project = Project.objects.filter(pk=project_id).only("id", "config").first()
    adaptive = None if project is None else adaptive_settings(project)
    # Cheap checks only (the task reads the whole design): this runs after every answer.
    if adaptive is None or open_tuples(project) >= margin(project, adaptive):
        return False
    if _ended_empty(project):
        return False
    try:
        # the mark holds when it was asked for: the lead is measured from there
        fresh = cache.add(_pending_key(project_id), time.time(), timeout=DESIGN_PENDING_SECONDS)
    except Exception:  # the cache lives in Redis: ask again when it cannot say
        fresh = True
    if not fresh:
        return False
    sent = send_task(DESIGN_BATCH_TASK, project_id)
    if not sent:
        done_designing(project_id)
    return sent


def record_lead(project_id: int, took: float) -> None:
    """A design request stored its batch ``took`` seconds after it was asked for: it counts
    LEAD_WEIGHT of the running average that ``margin`` plans with."""
    before = design_lead(project_id)
    lead = took if before is None else LEAD_WEIGHT * took + (1 - LEAD_WEIGHT) * before
    _remember(_lead_key(project_id), lead, LEAD_SECONDS)


def done_designing(project_id: int, *, stored: bool = False) -> None:
    """The design request of a project has ended: the next low margin may ask again.
    ``stored``: it stored a batch, so how long it took since it was asked for goes into
    the lead that ``margin`` plans with."""
    asked = _cached(_pending_key(project_id)) if stored else None
    took = None
    if isinstance(asked, (int, float)) and not isinstance(asked, bool):
        took = time.time() - float(asked)
    # a mark lives at most DESIGN_PENDING_SECONDS: anything else (a mark of the code before,
    # which held 1) is no time at all
    if took is not None and 0.0 <= took <= DESIGN_PENDING_SECONDS:
        record_lead(project_id, took)
    try:
        cache.delete(_pending_key(project_id))
    except Exception:
        pass  # the key expires on its own


def design_status(project: Project) -> dict | None:
    """What a manager sees of an adaptive design: its batches, the tuples still open and
    whether another batch can come (None for a balanced-only design)."""
    adaptive = adaptive_settings(project)
    if adaptive is None:
        return None
    batches = list(
        TupleBatch.objects.filter(project=project)
        .order_by("number")
        .values("number", "strategy", "n_tuples", "fit_run_id", "created_at")
    )
    return {
        "target": target_status(project, adaptive),
        "strategy": str(adaptive.strategy),
        "batches": batches,
        "n_tuples": sum(batch["n_tuples"] for batch in batches),
        "open": open_tuples(project),
        "ready_margin": adaptive.ready_margin,
        "margin": margin(project, adaptive),
        "batch_tuples": adaptive.batch_tuples,
        "max_appearances": adaptive.max_appearances,
        "complete": design_finished(project),
    }


# How long a target's status is kept for the same run and design (a new run or batch makes a
# new key at once).
TARGET_STATUS_SECONDS = 3600


def target_status(project: Project, adaptive: AdaptiveSettings) -> dict:
    """The target in words and, for a narrow one, what the newest fit says of its answer:
    the expected share of it that is right, the chance that all of it is, and the same
    after one more batch's judgments (bws.core.targets.target_report); ``unplaced`` instead
    while a threshold score cannot be placed on the fit's scale (targets.placed)."""
    index = item_index(project)
    n_items = len(index)
    status = {"kind": str(adaptive.target), "words": adaptive.describe(n_items)}
    run = _newest_ok_run(project)
    if adaptive.target == AdaptiveTarget.RANKING or run is None or n_items < 2:
        return status
    batches = TupleBatch.objects.filter(project=project).aggregate(last=Max("number"))["last"]
    settings = hashlib.sha256(repr(adaptive).encode()).hexdigest()[:16]
    finished = run.finished_at.timestamp() if run.finished_at else 0
    key = f"bws:target:{project.pk}:{project.slug}:{run.pk}:{finished}:{batches}:{settings}"
    known = cache.get(key)
    if known is not None:  # the same run and design: the same answer (it costs 2 s and
        return known  # ~200 MB at 100,000 items, and the dashboard and the API poll it)
    status = _answered(project, adaptive, run, status, index, n_items, batches)
    cache.set(key, status, TARGET_STATUS_SECONDS)
    return status


def _answered(project, adaptive, run, status, index, n_items, batches) -> dict:
    """``target_status`` computed: the newest run's report on the target."""
    u, sd = fit_arrays(run, n_items)
    state = design_state(project)
    extra = adaptive.batch_tuples
    target = core_target(adaptive, index)
    report = targets.target_report(
        u, sd, target, appearances=state.appearances,
        extra_judgments=extra, tuple_size=state.tuple_size,
        targeted=(batches or 0) > 0,
    )  # fmt: skip
    if not report.placed:  # no probabilities while the scale is unknown
        status.update(run_id=run.pk, unplaced=True)
        return status
    status.update(
        run_id=run.pk,
        answer=_answer_rows({i: item for item, i in index.items()}, report, target),
        precision=report.expected_precision,
        all_right=report.all_right,
        extra=extra,
        projected_precision=report.projected_precision,
        projected_all_right=report.projected_all_right,
    )
    if target.kind == "threshold" and target.score is not None:  # its share, as measured
        status["precision_measured"] = {
            side: tuple(round(100 * share) for share in shares)
            for side, shares in targets.THRESHOLD_PRECISION.items()
        }
    if report.kind == "comparisons":  # how often pairs said sure were right, measured
        few = len(target.pairs) < targets.PAIR_PRIOR_MIN
        measured = targets.SURE_PAIRS_RIGHT_FEW if few else targets.SURE_PAIRS_RIGHT
        status["sure_pairs_right"] = {
            side: tuple(round(100 * share) for share in shares) for side, shares in measured.items()
        }
        status["sure_pairs_right"]["few"] = few
    return status


ANSWER_ROWS = 50


def _answer_rows(ids: dict[int, str], report: targets.TargetReport, target) -> list[dict]:
    """The answer in item ids (``ids``: Item.index to item id), the surest first (at most
    ANSWER_ROWS): for top_k and threshold the items in it with the probability that each
    belongs; for comparisons each pair in the fit's order with the probability that the
    order is right."""
    if report.kind == "comparisons":
        rows = []
        for (a, b), ahead, p in zip(target.pairs, report.answer, report.membership, strict=True):
            first, second = (a, b) if ahead else (b, a)
            rows.append({"item": ids[first], "other": ids[second], "p": float(p)})
    else:
        rows = [
            {"item": ids[i], "p": float(report.membership[i])}
            for i in np.flatnonzero(report.answer)
        ]
    rows.sort(key=lambda row: -row["p"])
    return rows[:ANSWER_ROWS]


def _newest_ok_run(project: Project) -> ScoreRun | None:
    schemes = project.settings.bws_schemes
    if not schemes:
        return None
    return (
        ScoreRun.objects.filter(project=project, scheme=schemes[0].name, status=ScoreRun.Status.OK)
        .exclude(n_judgments=0)
        .order_by("-finished_at", "-pk")
        .first()
    )


def latest_fit(project: Project) -> ScoreRun | None:
    """The newest finished run of the project's first BWS scheme that read every answer."""
    run = _newest_ok_run(project)
    if run is None:
        return None
    newest = Annotation.objects.filter(project=project, scheme=run.scheme).aggregate(
        at=Max("updated_at")
    )["at"]
    if run is None or (newest is not None and (run.data_changed_at or newest) < newest):
        return None
    return run


def prepare_next_batch(project: Project) -> TupleBatch | None:
    """The worker's step: when the margin is reached and there is room, fit the answers
    so far (a new run unless the newest one read them all) and design batches from that
    fit until the open tuples are at the margin again or the design is finished; the last
    batch added (None: none was due)."""
    if not needs_batch(project):
        return None
    run = latest_fit(project)
    if run is None:
        scheme = project.settings.bws_schemes[0].name
        run = services.request_run(project=project, scheme=scheme, trigger=ScoreRun.Trigger.AUTO)
        run = services.execute_run(run.pk)
    # Batches until the open tuples are back above the margin: a short batch is followed
    # at once by another from the same fit, not after answers that may never come (the
    # queue may be empty by then).
    batch = None
    for _ in range(MAX_BATCHES_PER_REQUEST):
        added = add_batch(project=project, fit_run=run)
        if added is None:
            break
        batch = added
        if added.n_tuples == 0:
            break
    return batch


@transaction.atomic
def add_batch(*, project: Project, fit_run: ScoreRun | None) -> TupleBatch | None:
    """Design and store the next batch from ``fit_run`` (None: the margin is not reached
    or the design is finished). The project's ScoringState row is locked first, so a
    second worker waits and then finds the margin met."""
    ScoringState.objects.select_for_update().filter(project=project).first()
    adaptive = adaptive_settings(project)
    if adaptive is None or fit_run is None or not needs_batch(project):
        return None
    last = TupleBatch.objects.filter(project=project).aggregate(n=Max("number"))["n"]
    number = 1 if last is None else last + 1
    seed = batch_seed(project.settings.seed, number)
    # An empty batch is kept too: it records that nothing more fits, and ends the design.
    rows = design_batch(project, number=number, fit_run=fit_run, seed=seed)
    batch = TupleBatch.objects.create(
        project=project,
        number=number,
        strategy=str(adaptive.strategy),
        designer=_designer(adaptive.strategy)
        if adaptive.target == AdaptiveTarget.RANKING
        else f"bws.core.targets.target_batch ({adaptive.target})",
        fit_run=fit_run,
        seed=seed,
        n_tuples=rows.shape[0],
    )
    if rows.shape[0]:
        store_batch_tuples(project=project, batch=batch, rows=rows)
    log.info("project %s: batch %s of %s tuples", project.slug, number, rows.shape[0])
    return batch


def store_batch_tuples(*, project: Project, batch: TupleBatch, rows: np.ndarray) -> None:
    """Store a batch's tuples and their queue units after the tuples already there."""
    ids = dict(Item.objects.filter(project=project).values_list("index", "item_id"))
    first = (Unit.objects.filter(project=project).aggregate(p=Max("position"))["p"] or 0) + 1
    first_tuple = (
        BwsTuple.objects.filter(project=project).aggregate(p=Max("position"))["p"] or 0
    ) + 1
    # Named by unit position, as gold units are, so no two units share a name.
    names = [f"tuple_{first + n + 1:06d}" for n in range(rows.shape[0])]
    unit_pks = store_units(
        project=project,
        kind=Unit.Kind.TUPLE,
        rows=[
            (name, None, [ids[int(i)] for i in row], [int(i) for i in row])
            for name, row in zip(names, rows, strict=True)
        ],
        seed=batch.seed,
        first_position=first,
    )
    BwsTuple.objects.bulk_create(
        [
            BwsTuple(
                project=project,
                tuple_id=name,
                position=first_tuple + n,
                unit_id=unit_pks[n],
                batch=batch,
            )
            for n, name in enumerate(names)
        ]
    )
    _rewrite_tuple_file(project)


def _rewrite_tuple_file(project: Project) -> None:
    """Once the batch commits, the project's tuples.jsonl lists every batch's tuples."""
    listing = [
        (tuple_id, item_ids, instance)
        for tuple_id, item_ids, instance in BwsTuple.objects.filter(project=project)
        .order_by("position")
        .values_list("tuple_id", "unit__item_ids", "instance__instance_id")
    ]
    folder = project_folder(project)
    transaction.on_commit(lambda: write_tuple_file(folder, listing))
