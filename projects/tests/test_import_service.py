"""Projects built from YAML and data files: everything stored in one step, or nothing."""

import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings

from bws.models import BwsTuple
from projects.models import Instance, Item, Lab, Membership, Project, Unit
from projects.services import ProjectImportError, add_project_members, import_project
from projects.tests.factories import LabFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLES = Path(settings.BASE_DIR) / "examples"


def test_dialect_a_example_builds_balanced_tuples():
    owner = UserFactory(username="owner")
    result = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", owner=owner)
    project = result.project
    assert project.lab == Lab.objects.get(is_default=True)
    assert project.config["dialect"] == "A"
    assert project.allow_all_users is True
    assert Item.objects.filter(project=project).count() == 200
    tuples = list(BwsTuple.objects.filter(project=project).select_related("unit"))
    assert len(tuples) == result.n_tuples == 200 * 8 // 4
    counts = Counter(i for t in tuples for i in t.item_ids)
    assert set(counts.values()) == {8}
    index = dict(Item.objects.filter(project=project).values_list("item_id", "index"))
    assert all([index[i] for i in t.item_ids] == t.item_indices for t in tuples)
    assert all(len(set(t.item_ids)) == 4 for t in tuples)
    assert Membership.objects.get(project=project, user=owner).role == "manager"


def test_dialect_b_example_draws_tuples_within_instances_and_aggregates_ids():
    result = import_project(config_path=EXAMPLES / "mt_tuples" / "config.yaml")
    project = result.project
    assert project.config["dialect"] == "B"
    instances = Instance.objects.filter(project=project)
    assert instances.count() == result.n_instances == 30
    # the same six systems translate every sentence: their ids are stored once
    item_ids = set(Item.objects.filter(project=project).values_list("item_id", flat=True))
    assert item_ids == {f"sys_{c}" for c in "abcdef"}
    per_instance = Counter()
    for t in BwsTuple.objects.filter(project=project).select_related("instance", "unit"):
        assert t.unit.external_id == t.tuple_id and t.unit.instance_id == t.instance_id
        assert t.instance is not None
        assert len(set(t.item_ids)) == 4
        assert set(t.item_ids) <= {it["id"] for it in t.instance.items}
        per_instance[t.instance_id] += 1
    # 6 items x 5 tuples_per_item / 4 per tuple = 7.5, so 8 tuples in every sentence
    assert set(per_instance.values()) == {8}
    # each sentence keeps its own translation texts under the shared system ids
    first, second = instances[0].items, instances[1].items
    assert first[0]["id"] == second[0]["id"] and first[0]["text"] != second[0]["text"]


def test_tuple_design_is_reproducible_from_the_seed():
    first = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="one")
    second = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="two")

    def design(project):
        return list(
            BwsTuple.objects.filter(project=project)
            .order_by("position")
            .values_list("unit__item_ids", flat=True)
        )

    assert design(first.project) == design(second.project)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bws_config(tmp_path, data_name="items.jsonl", extra="") -> Path:
    return write(
        tmp_path / "config.yaml",
        f"""annotation_task_name: Tiny study
data_files: [{data_name}]
item_properties: {{id_key: id, text_key: text}}
annotation_schemes:
  - annotation_type: bws
    name: quality
    description: Pick the best and the worst
    tuple_size: 4
{extra}""",
    )


def test_bad_data_line_imports_nothing(tmp_path):
    lines = [json.dumps({"id": f"i{n}", "text": f"item {n}"}) for n in range(10)]
    lines.insert(6, '{"id": "broken", "text": ')
    write(tmp_path / "items.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(ProjectImportError) as err:
        import_project(config_path=bws_config(tmp_path))
    assert "items.jsonl:7" in str(err.value)
    assert not Project.objects.exists()
    assert not Item.objects.exists()
    assert not BwsTuple.objects.exists()
    assert not Unit.objects.exists()


def test_bws_without_bws_config_gets_defaults_and_a_notice(tmp_path):
    write(
        tmp_path / "items.jsonl",
        "".join(json.dumps({"id": f"i{n}", "text": f"t{n}"}) + "\n" for n in range(20)),
    )
    result = import_project(config_path=bws_config(tmp_path))
    assert result.n_tuples == 20 * 8 // 4
    assert any("default" in notice.lower() for notice in result.project.notices)


def test_slug_must_be_free(tmp_path):
    import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="taken")
    with pytest.raises(ProjectImportError, match="exists already"):
        import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", slug="taken")
    assert Project.objects.count() == 1


def test_project_goes_to_given_lab():
    lab = LabFactory(slug="nlp")
    result = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml", lab=lab)
    assert result.project.lab == lab


def test_add_members_creates_accounts_only_when_asked():
    project = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml").project
    with pytest.raises(ValueError, match="unknown user"):
        add_project_members(project=project, usernames=["ghost"], role="annotator")
    changes = add_project_members(
        project=project, usernames=["ghost"], role="annotator", create=True, password="pw-12345"
    )
    assert changes[0].created_user
    user = Membership.objects.get(project=project, user__username="ghost").user
    assert user.check_password("pw-12345")


def test_short_item_list_is_an_import_error_naming_the_line(tmp_path):
    rows = [
        {"id": "s1", "src": "a", "outs": [{"id": f"m{k}", "text": "x"} for k in range(6)]},
        {"id": "s2", "src": "b", "outs": [{"id": f"m{k}", "text": "y"} for k in range(3)]},
    ]
    write(tmp_path / "d.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write(
        tmp_path / "c.yaml",
        """task_name: Within instances
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: q
    description: d
    items_key: outs
    tuple_size: 4
""",
    )
    with pytest.raises(ProjectImportError) as err:
        import_project(config_path=tmp_path / "c.yaml")
    assert "d.jsonl:2" in str(err.value)
    assert not Project.objects.exists()


def test_impossible_pair_coverage_is_an_import_error_not_a_crash(tmp_path):
    write(
        tmp_path / "d.jsonl",
        "".join(json.dumps({"id": f"i{n}", "text": "t"}) + "\n" for n in range(2000)),
    )
    write(
        tmp_path / "c.yaml",
        """task_name: Too many pairs
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: q
    description: d
    tuple_size: 4
    tuple_generation: {method: balanced_incomplete, tuples_per_item: 8, seed: 1,
                       ensure_pair_coverage: true}
""",
    )
    with pytest.raises(ProjectImportError) as err:
        import_project(config_path=tmp_path / "c.yaml")
    assert str(err.value).startswith("c.yaml: tuple design:")
    assert "tuples" in str(err.value)
    assert not Project.objects.exists()


def test_design_summary_is_stored_with_the_project():
    project = import_project(config_path=EXAMPLES / "mt_bws" / "config.yaml").project
    summary = "\n".join(project.config["design_summary"])
    assert "tuples designed within 40 groups: 400" in summary
    assert "appearances per item within a group: min 8, max 8" in summary
    per_instance = import_project(config_path=EXAMPLES / "mt_tuples" / "config.yaml").project
    assert any("within 30 instances" in line for line in per_instance.config["design_summary"])


@pytest.mark.django_db
def test_the_config_is_parsed_once_per_import(monkeypatch, settings, tmp_path):
    """Reading the YAML once: the web upload places the data files and builds the project
    from one parse, and the operator's import reads the file once."""
    import yaml
    from django.core.files.uploadedfile import SimpleUploadedFile

    from projects.services import create_project_from_upload

    settings.PROJECT_FILES_ROOT = str(tmp_path / "files")
    parses = Counter()
    construct = yaml.SafeLoader.construct_document

    def counted(loader, node):
        parses["yaml"] += 1
        return construct(loader, node)

    monkeypatch.setattr(yaml.SafeLoader, "construct_document", counted)
    example = EXAMPLES / "mt_bws"
    create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", (example / "config.yaml").read_bytes()),
        data_files=[
            SimpleUploadedFile(
                "mt_systems.jsonl", (example / "data" / "mt_systems.jsonl").read_bytes()
            )
        ],
        lab=LabFactory(),
        owner=UserFactory(),
    )
    assert parses["yaml"] == 1
    import_project(config_path=example / "config.yaml", slug="again", trusted=True)
    assert parses["yaml"] == 2
