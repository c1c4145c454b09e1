"""A project's tuples, designed when it is imported (bws receives projects.events.project_built):
one balanced design per instance or group of items, its queue units, and the tuple file."""

from dataclasses import dataclass, field

import numpy as np
from django.db import transaction

from bws.configuration.adaptive import AdaptiveSettings
from bws.core import design
from bws.core.groups import item_groups
from bws.filemode import write_tuple_file
from bws.models import BwsTuple, TupleBatch
from projects.configuration.normal import ProjectConfig
from projects.datafiles import LoadedData
from projects.models import Unit
from projects.notices import shorten
from projects.services import project_folder, store_units


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


def store_sized_adaptive(project, adaptive: AdaptiveSettings, n_items: int) -> None:
    """The adaptive batch and margin a config left out, set for the project's items and
    stored with its settings (AdaptiveSettings.sized); a margin given above the batch so
    set is refused."""
    sized = adaptive.sized(n_items)
    if adaptive.ready_margin is not None and adaptive.batch_tuples is None:
        if sized.ready_margin > sized.batch_tuples:
            raise design.DesignError(
                f"tuple_generation.adaptive.ready_margin: {sized.ready_margin} is above the "
                f"batch of {sized.batch_tuples} tuples this target takes for {n_items} items "
                "when batch_tuples is left out; give batch_tuples too, or a smaller margin"
            )
    if sized == adaptive:
        return
    stored = dict(project.config)
    stored["bws"] = {**stored["bws"], "adaptive": sized.model_dump(mode="json")}
    project.config = stored
    project.save(update_fields=["config"])


def build_tuples(*, project, config: ProjectConfig, data: LoadedData, instances) -> TupleBuild:
    """Design and store the project's tuples: from the whole pool, or within each instance
    (pre-generated tuples used as they are). Called once, inside the project's import."""
    bws = config.bws
    if bws is None or not config.bws_schemes:
        return TupleBuild()
    if bws.adaptive is not None:
        # The balanced start (batch 0); later batches come from the fit (bws.adaptive).
        bws = bws.model_copy(update={"appearances": bws.adaptive.initial_appearances})
    index_of = {item.item_id: i for i, item in enumerate(data.items)}
    if bws.adaptive is not None:
        unknown = [i for i in bws.adaptive.item_ids() if i not in index_of]
        if unknown:
            shown = ", ".join(repr(i) for i in unknown[:5])
            raise design.DesignError(
                f"tuple_generation.adaptive names items that are not in the data: {shown}"
                + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            )
        k = bws.adaptive.k
        if k is not None and k >= 1 and k >= len(index_of):
            raise design.DesignError(
                f"tuple_generation.adaptive.k: the top {int(k)} of {len(index_of)} items is "
                "every item; give fewer, or a share below 1"
            )
        store_sized_adaptive(project, bws.adaptive, len(index_of))
    rows: list[tuple[int | None, list[str]]] = []
    notes: list[str] = []
    if not bws.items_key and bws.group_key:
        rows, notes, summary = _grouped_rows(data, bws)
    elif not bws.items_key:
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
    # Each tuple is shown by a queue unit that lists its items; written a batch at a time,
    # so a large design holds no model object per tuple.
    unit_pks = store_units(
        project=project,
        kind=Unit.Kind.TUPLE,
        rows=[
            (f"tuple_{n + 1:06d}", inst, item_ids, [index_of[i] for i in item_ids])
            for n, (inst, item_ids) in enumerate(rows)
        ],
        seed=bws.seed,
    )
    batch = None
    if bws.adaptive is not None:
        batch = TupleBatch.objects.create(
            project=project, number=0, strategy="balanced", seed=bws.seed, n_tuples=len(rows)
        )
    for start in range(0, len(rows), 5000):
        BwsTuple.objects.bulk_create(
            [
                BwsTuple(
                    project=project,
                    tuple_id=f"tuple_{n + 1:06d}",
                    position=n,
                    instance=inst,
                    unit_id=unit_pks[n],
                    batch=batch,
                )
                for n, (inst, _) in enumerate(rows[start : start + 5000], start=start)
            ]
        )
    _keep_tuple_file(project, rows)
    return TupleBuild(n_tuples=len(rows), notes=shorten(notes), summary=summary)


def design_groups(data: LoadedData, bws) -> list[tuple[str, np.ndarray]]:
    """The groups of items a design keeps apart (tuple_generation.group_key), each with its
    items' indices; DesignError when an item has no value or a group is too small."""
    ids = [item.item_id for item in data.items]
    values = [item.data.get(bws.group_key) for item in data.items]
    return item_groups(values, ids, bws.tuple_size, bws.group_key)


def _grouped_rows(data: LoadedData, bws) -> tuple[list, list[str], list[str]]:
    """Tuples designed inside each group of items sharing the group_key value, seeded per
    group as instances are: no tuple mixes two groups."""
    id_array = np.asarray([item.item_id for item in data.items], dtype=object)
    rows: list[tuple[None, list[str]]] = []
    notes: list[str] = []
    designed = []
    for position, (value, members) in enumerate(design_groups(data, bws)):
        tuples, group_notes = design_for(len(members), bws, _instance_seed(bws.seed, position))
        notes.extend(f"group {value}: {note}" for note in group_notes)
        designed.append(design.design_summary(tuples, len(members)))
        rows.extend((None, list(row)) for row in id_array[members][tuples])
    return rows, notes, _instances_summary(designed, 0, pools="groups")


def _keep_tuple_file(project, rows) -> None:
    """Once the import commits, write the tuples in the project's folder (tuples.jsonl,
    beside an uploaded config), where ``python -m bws score --config`` looks up the tuple
    of an answer record that names it by id only."""
    listing = [
        (f"tuple_{n + 1:06d}", item_ids, inst.instance_id if inst is not None else None)
        for n, (inst, item_ids) in enumerate(rows)
    ]
    folder = project_folder(project)
    transaction.on_commit(lambda: write_tuple_file(folder, listing))


def _instances_summary(designed: list, n_given: int, pools: str = "instances") -> list[str]:
    """Summary lines for tuples drawn within instances (or groups): the worst figures of any
    one of them."""
    lines = []
    if n_given:
        lines.append(f"pre-generated tuples used as given: {n_given:,}")
    if designed:
        lines += [
            f"tuples designed within {len(designed):,} {pools}: "
            f"{sum(d.n_tuples for d in designed):,}",
            f"appearances per item within {'a group' if pools == 'groups' else 'an instance'}: "
            f"min {min(d.appearances_min for d in designed)}, "
            f"max {max(d.appearances_max for d in designed)}",
            f"pairs covered within {pools}: "
            f"{sum(d.pairs_covered for d in designed):,} of "
            f"{sum(d.pairs_total_possible for d in designed):,}",
            f"largest pair count in {'a group' if pools == 'groups' else 'an instance'}: "
            f"{max(d.max_pair_count for d in designed)}",
            "position balance: largest spread within an item "
            f"{max(d.position_spread for d in designed)}",
        ]
    return lines
