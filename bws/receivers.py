"""How the BWS app answers what `projects` announces (projects.events): it checks a planned
design against its budgets, builds the tuples of a new project, schedules scoring when
answers change and scores at once when an annotator logs out."""

from bws import tuple_design
from bws.configuration import scoring_of
from projects.events import BuildRefused

from . import adaptive, scheduling, services
from .core.design import DesignError, design_memory
from .models import ScoringState


def check_design_budget(sender, *, config, data, limits, **kwargs) -> None:
    """Refuse a tuple design whose memory estimate passes DESIGN_MAX_MEMORY_MB, before any
    of it is built (bws.core.design.design_memory), and scoring settings whose bootstrap
    would pass SCORING_MAX_MEMORY_MB for this many items."""
    bws = config.bws
    if bws is None or not config.bws_schemes:
        return
    for index, scheme in enumerate(config.schemes):
        scoring = scoring_of(scheme)
        if scheme.is_bws and scoring.include_confidence:
            refusal = services.resamples_refusal(len(data.items), scoring.bootstrap_iterations)
            if refusal:
                where = (
                    "bws_config.scoring"
                    if config.dialect == "A"
                    else f"annotation_schemes[{index}].scoring"
                )
                raise BuildRefused(f"{config.source}: {where}.bootstrap_iterations: {refusal}")
    if bws.items_key:
        pools = [len(instance.items) for instance in data.instances]
    elif bws.group_key:
        try:
            pools = [len(members) for _, members in tuple_design.design_groups(data, bws)]
        except DesignError as exc:
            raise BuildRefused(f"{config.source}: tuple design: {exc}") from exc
    else:
        pools = [len(data.items)]
    need = design_memory(
        pools,
        bws.tuple_size,
        bws.appearances,
        method=bws.method,
        ensure_pair_coverage=bws.ensure_pair_coverage,
    )
    budget = limits.design_memory_mb * 1024 * 1024
    tuples = sum(
        1 if n == bws.tuple_size and bws.items_key else -(-n * bws.appearances // bws.tuple_size)
        for n in pools
    )
    if tuples > limits.tuples:
        raise BuildRefused(
            f"{config.source}: tuple design: {sum(pools)} items in tuples of {bws.tuple_size}, "
            f"{bws.appearances} appearances each make {tuples} tuples, above the limit of "
            f"{limits.tuples} (PROJECT_MAX_TUPLES): lower the appearances or split the items"
        )
    if need > budget:
        raise BuildRefused(
            f"{config.source}: tuple design: {sum(pools)} items in tuples of {bws.tuple_size}, "
            f"{bws.appearances} appearances each ({tuples} tuples) need about "
            f"{-(-need // (1024 * 1024))} MB, above the limit of {limits.design_memory_mb} MB "
            "(DESIGN_MAX_MEMORY_MB): lower the appearances or split the items"
        )


def build_project_tuples(sender, *, project, config, data, instances, **kwargs):
    """Inside the import's transaction: the scoring state and the tuples with their units."""
    ScoringState.objects.create(project=project)
    try:
        return tuple_design.build_tuples(
            project=project, config=config, data=data, instances=instances
        )
    except DesignError as exc:
        raise BuildRefused(f"tuple design: {exc}") from exc


def schedule_scoring(sender, *, project_id, **kwargs) -> None:
    scheduling.note_answers(project_id)
    adaptive.maybe_queue_batch(project_id)


def design_ahead(sender, *, project, unit, **kwargs) -> None:
    """A unit handed out (or none left) in an adaptive project: order the next batch if the
    open tuples fell under the margin, so annotators who hold units without answering yet
    do not run the queue dry."""
    adaptive.after_hand_out(project)


def score_after_session(sender, *, user, **kwargs) -> None:
    scheduling.end_session(user)


def catch_up_on_start(sender, **kwargs) -> None:
    scheduling.schedule_dirty_projects()


def batch_coming(sender, *, project, **kwargs) -> bool:
    """The queue is empty: whether an adaptive design will add a batch (so the annotator
    waits for it rather than being told the work is over)."""
    return adaptive.more_coming(project)
