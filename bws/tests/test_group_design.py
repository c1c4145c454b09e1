"""Tuples within groups (tuple_generation.group_key): no tuple mixes two groups, every item
appears as often as the design promises inside its group, and a group too small for a
tuple, or an item without a group, is refused by name before anything is built."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from bws.core.design import DesignError
from bws.core.groups import item_groups
from projects.configuration import ConfigError, load_config
from projects.models import Item, Unit
from projects.services import ProjectImportError, import_project

EXAMPLES = Path(settings.BASE_DIR) / "examples"

CONFIG = """task_name: Groups
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    tuple_size: 4
    tuple_generation: {tuples_per_item: APPEARANCES, seed: 9, group_key: prompt}
"""


def write(tmp_path, sizes: list[int], appearances=3, config=CONFIG) -> Path:
    rows = []
    for group, size in enumerate(sizes):
        rows += [
            {"id": f"g{group}_{k}", "text": f"Answer {k} to prompt {group}", "prompt": f"p{group}"}
            for k in range(size)
        ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(config.replace("APPEARANCES", str(appearances)))
    return tmp_path / "c.yaml"


def tuples_and_groups(project) -> tuple[list[list[str]], dict[str, str]]:
    tuples = [list(u.item_ids) for u in Unit.objects.filter(project=project).order_by("position")]
    group = {
        i.item_id: i.data.get("sentence_id") or i.data.get("prompt") for i in project.items.all()
    }
    return tuples, group


def assert_grouped_and_balanced(tuples, group, appearances, size):
    for row in tuples:
        assert len(row) == size == len(set(row))
        assert len({group[i] for i in row}) == 1, row  # one group per tuple
    counts = Counter(i for row in tuples for i in row)
    assert set(counts) == set(group)  # every item appears
    for value in set(group.values()):
        members = [counts[i] for i in group if group[i] == value]
        assert min(members) >= appearances
        assert max(members) - min(members) <= 1, (value, members)


# --------------------------------------------------------------------------- the MT demo


@pytest.mark.django_db
def test_mt_demo_tuples_compare_outputs_of_one_sentence():
    project = import_project(config_path=EXAMPLES / "mt_two_dims" / "config.yaml").project
    tuples, group = tuples_and_groups(project)
    assert len(set(group.values())) == 40 and len(tuples) == 400  # 40 x (5 x 8 / 4)
    assert_grouped_and_balanced(tuples, group, appearances=8, size=4)
    # 5 outputs x 8 appearances / 4 per tuple is whole: exactly 8 each
    assert set(Counter(i for row in tuples for i in row).values()) == {8}
    sources = {i.item_id: i.data["source"] for i in Item.objects.filter(project=project)}
    assert all(len({sources[i] for i in row}) == 1 for row in tuples)


# --------------------------------------------------------------------------- groups of any size


@pytest.mark.django_db
def test_groups_of_uneven_sizes_are_each_balanced(tmp_path):
    sizes = [4, 5, 7, 9, 13]
    project = import_project(config_path=write(tmp_path, sizes), slug="g").project
    tuples, group = tuples_and_groups(project)
    assert len(tuples) == sum(-(-n * 3 // 4) for n in sizes)
    assert_grouped_and_balanced(tuples, group, appearances=3, size=4)


@hsettings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(3, 12), min_size=1, max_size=6),
    size=st.integers(3, 5),
    appearances=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_grouped_designs_keep_groups_apart_for_any_sizes(sizes, size, appearances, seed):
    """The service's per-group design, on the group values as an import reads them."""
    from types import SimpleNamespace

    from bws.tuple_design import design_for

    sizes = [max(n, size) for n in sizes]
    values = [f"p{g}" for g, n in enumerate(sizes) for _ in range(n)]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(values))  # groups interleaved in the file
    values = [values[k] for k in order]
    ids = [f"i{k}" for k in range(len(values))]
    bws = SimpleNamespace(
        method="balanced_incomplete",
        tuple_size=size,
        appearances=appearances,
        ensure_pair_coverage=False,
    )
    rows = []
    for position, (_, members) in enumerate(item_groups(values, ids, size, "prompt")):
        tuples, _ = design_for(len(members), bws, seed + position)
        rows += [[ids[k] for k in row] for row in members[tuples]]
    group = dict(zip(ids, values, strict=True))
    assert_grouped_and_balanced(rows, group, appearances, size)


# --------------------------------------------------------------------------- refusals


def test_groups_come_in_file_order_with_their_items():
    groups = item_groups(["b", "a", "b", "a", 3, 3, 3], list("ABCDEFG"), 2, "k")
    assert [(value, list(m)) for value, m in groups] == [
        ("b", [0, 2]),
        ("a", [1, 3]),
        ("3", [4, 5, 6]),
    ]


def test_a_group_smaller_than_a_tuple_is_refused_naming_it_and_its_count():
    values = ["x"] * 4 + ["y"] * 2 + ["z"] * 3
    with pytest.raises(DesignError) as caught:
        item_groups(values, [f"i{k}" for k in range(9)], 4, "prompt")
    assert str(caught.value) == (
        "group_key 'prompt': every group needs at least tuple_size 4 items; "
        "2 groups have fewer ('y' has 2, 'z' has 3)"
    )


def test_items_without_a_group_value_are_refused_by_id():
    with pytest.raises(DesignError, match=r"2 items have no 'prompt' value to group by \(b, d\)"):
        item_groups(["x", None, "x", ""], list("abcd"), 2, "prompt")


@pytest.mark.django_db
def test_import_refuses_a_small_group_and_builds_nothing(tmp_path):
    with pytest.raises(ProjectImportError) as caught:
        import_project(config_path=write(tmp_path, [5, 3]), slug="small")
    assert str(caught.value) == (
        "c.yaml: tuple design: group_key 'prompt': every group needs at least tuple_size 4 "
        "items; 1 group has fewer ('p1' has 3)"
    )
    assert not Unit.objects.exists()


def test_group_key_cannot_be_combined_with_items_key(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "task_name: T\ndata_files: [d.jsonl]\nannotation_schemes:\n"
        "  - annotation_type: best_worst_scaling\n    name: q\n    items_key: translations\n"
        "    tuple_generation: {group_key: sentence}\n"
    )
    with pytest.raises(ConfigError, match=r"tuple_generation\.group_key: cannot be used with"):
        load_config(tmp_path / "c.yaml", check_files=False)


def test_dialect_a_names_the_group_in_bws_config(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: T\ndata_files: [d.jsonl]\n"
        "bws_config: {tuple_size: 4, group_key: sentence_id}\n"
        "annotation_schemes:\n  - {annotation_type: bws, name: q}\n"
    )
    assert load_config(tmp_path / "c.yaml", check_files=False).bws.group_key == "sentence_id"
