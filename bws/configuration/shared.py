"""The one tuple design a project's BWS schemes share, read from what each scheme says of
it (tuple_size, items_key, tuple_generation: in dialect A, bws_config placed in each)."""

from __future__ import annotations

from bws.configuration.adaptive import AdaptiveSettings
from bws.configuration.blocks import TupleGeneration
from bws.configuration.normal import BwsDesign
from bws.configuration.vocabulary import (
    DEFAULT_APPEARANCES,
    DEFAULT_TUPLE_METHOD,
    DEFAULT_TUPLE_SIZE,
)
from projects.configuration.dialects import Translated
from projects.configuration.issues import Issues
from projects.configuration.vocabulary import DEFAULT_SEED, Dialect

SHARED = "the BWS schemes of a project share one tuple set"


def shared_design(bws: list, translated: Translated, issues: Issues) -> BwsDesign:
    """The one tuple set the BWS schemes share, from [(index, checked options)] in file order:
    each scheme that says something about it must say the same as the first one that does."""
    notices, dialect = translated.notices, translated.dialect
    first_index, first = bws[0]
    size = size_from = generation = generation_from = None
    for index, scheme in bws:
        path = f"annotation_schemes[{index}]"
        if index != first_index and scheme.items_key != first.items_key:
            issues.add(
                f"{path}.items_key",
                f"{scheme.items_key!r} differs from annotation_schemes[{first_index}].items_key "
                f"{first.items_key!r}: {SHARED}",
            )
        if scheme.tuple_size is not None:
            if size is None:
                size, size_from = scheme.tuple_size, path
            elif scheme.tuple_size != size:
                issues.add(
                    f"{path}.tuple_size",
                    f"{scheme.tuple_size} differs from {size_from}.tuple_size {size}: {SHARED}",
                )
        if scheme.tuple_generation is not None:
            if generation is None:
                generation, generation_from = scheme.tuple_generation, path
            elif scheme.tuple_generation != generation:
                issues.add(
                    f"{path}.tuple_generation",
                    f"differs from {generation_from}.tuple_generation: {SHARED}",
                )
    if generation is None:
        generation = TupleGeneration()
        notices.append(
            f"No tuple_generation: defaults applied ({DEFAULT_TUPLE_METHOD}, tuples_per_item "
            f"{DEFAULT_APPEARANCES}, seed {DEFAULT_SEED})"
        )
    if generation.group_key is not None and first.items_key is not None:
        where = "bws_config" if dialect == Dialect.A else f"{generation_from}.tuple_generation"
        issues.add(
            f"{where}.group_key",
            "cannot be used with items_key: tuples are already drawn within each instance",
        )
    if generation.adaptive is not None and (first.items_key or generation.group_key):
        where = "bws_config" if dialect == Dialect.A else f"{generation_from}.tuple_generation"
        issues.add(
            f"{where}.adaptive",
            "cannot be used with items_key or group_key: adaptive batches are drawn from "
            "the whole pool of items",
        )
    return BwsDesign(
        tuple_size=size if size is not None else DEFAULT_TUPLE_SIZE,
        items_key=first.items_key,
        method=generation.method,
        appearances=generation.tuples_per_item,
        seed=generation.seed,
        ensure_pair_coverage=generation.ensure_pair_coverage,
        group_key=generation.group_key,
        system_key=generation.system_key,
        adaptive=AdaptiveSettings.of(generation.adaptive),
    )
