"""Writes of the BWS app: the tuples of a project, designed once when it is built."""

from dataclasses import dataclass, field

import numpy as np

from projects.configuration import ProjectConfig
from projects.datafiles import LoadedData

from .core import design
from .models import BwsTuple


@dataclass
class TupleBuild:
    n_tuples: int = 0
    notes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def _instance_seed(seed: int, position: int) -> int:
    """A seed per instance that depends only on the project seed and the instance's place."""
    return int(np.random.SeedSequence([seed, position]).generate_state(1)[0])


def design_for(n_items: int, bws, seed: int) -> tuple[np.ndarray, list[str]]:
    """Tuples (as local item indices) for one pool of items under the project's design."""
    if bws.method == "random":
        return design.random_tuples(n_items, bws.tuple_size, bws.appearances, seed=seed), []
    return design.balanced_design(
        n_items,
        bws.tuple_size,
        bws.appearances,
        seed=seed,
        ensure_pair_coverage=bws.ensure_pair_coverage,
    )


def build_tuples(*, project, config: ProjectConfig, data: LoadedData, instances) -> TupleBuild:
    """Design and store the project's tuples: from the whole pool, or within each instance
    (pre-generated tuples used as they are). Called once, inside the project's import."""
    bws = config.bws
    if bws is None or not config.bws_schemes:
        return TupleBuild()
    index_of = {item.item_id: i for i, item in enumerate(data.items)}
    rows: list[tuple[int | None, list[str]]] = []
    notes: list[str] = []
    if not bws.items_key:
        ids = [item.item_id for item in data.items]
        tuples, notes = design_for(len(ids), bws, bws.seed)
        summary = design.design_summary(tuples, len(ids)).lines()
        id_array = np.asarray(ids, dtype=object)
        rows = [(None, list(row)) for row in id_array[tuples]]
    else:
        per_instance: list[design.DesignSummary] = []
        n_given = 0
        for position, (inst, record) in enumerate(zip(instances, data.instances, strict=True)):
            local_ids = [item.item_id for item in record.items]
            if record.pregenerated:
                rows.append((inst, local_ids))
                n_given += 1
                continue
            try:
                tuples, inst_notes = design_for(
                    len(local_ids), bws, _instance_seed(bws.seed, position)
                )
            except design.DesignError as exc:
                raise design.DesignError(
                    f"instance {record.instance_id} ({record.file}:{record.line}): {exc}"
                ) from exc
            notes.extend(f"instance {record.instance_id}: {note}" for note in inst_notes)
            per_instance.append(design.design_summary(tuples, len(local_ids)))
            id_array = np.asarray(local_ids, dtype=object)
            rows.extend((inst, list(row)) for row in id_array[tuples])
        summary = _instances_summary(per_instance, n_given)
    BwsTuple.objects.bulk_create(
        [
            BwsTuple(
                project=project,
                tuple_id=f"tuple_{n + 1:06d}",
                position=n,
                instance=inst,
                item_ids=item_ids,
                item_indices=[index_of[i] for i in item_ids],
            )
            for n, (inst, item_ids) in enumerate(rows)
        ],
        batch_size=5000,
    )
    if len(notes) > 20:
        notes = notes[:20] + [f"... and {len(notes) - 20} more design notes"]
    return TupleBuild(n_tuples=len(rows), notes=notes, summary=summary)


def _instances_summary(designed: list, n_given: int) -> list[str]:
    """Summary lines for tuples drawn within instances: the worst figures of any instance."""
    lines = []
    if n_given:
        lines.append(f"pre-generated tuples used as given: {n_given:,}")
    if designed:
        lines += [
            f"tuples designed within {len(designed):,} instances: "
            f"{sum(d.n_tuples for d in designed):,}",
            "appearances per item within an instance: "
            f"min {min(d.appearances_min for d in designed)}, "
            f"max {max(d.appearances_max for d in designed)}",
            "pairs covered within instances: "
            f"{sum(d.pairs_covered for d in designed):,} of "
            f"{sum(d.pairs_total_possible for d in designed):,}",
            f"largest pair count in an instance: {max(d.max_pair_count for d in designed)}",
            "position balance: largest spread within an item "
            f"{max(d.position_spread for d in designed)}",
        ]
    return lines
