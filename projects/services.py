"""Writes: labs and their people, projects built from a YAML config and data files, members."""

import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from .configuration import ConfigError, ProjectConfig, load_config
from .datafiles import LoadedData, load_items
from .models import (
    AnnotatorProfile,
    Instance,
    Item,
    Lab,
    LabMembership,
    Membership,
    Project,
    Unit,
)

User = get_user_model()

DEFAULT_LAB_NAME = "Default lab"


class ProjectImportError(ValueError):
    """A project could not be built; the message names file, key or line and the reason."""


def get_default_lab() -> Lab:
    """The site's default lab, created on first use."""
    lab = Lab.objects.filter(is_default=True).first()
    if lab is None:
        lab, _ = Lab.objects.get_or_create(
            slug="default", defaults={"name": DEFAULT_LAB_NAME, "is_default": True}
        )
    return lab


@transaction.atomic
def create_lab(*, name: str, slug: str | None = None, admins=(), members=()) -> Lab:
    lab = Lab.objects.create(name=name, slug=slug or slugify(name))
    for user in admins:
        add_lab_member(lab=lab, user=user, is_admin=True)
    for user in members:
        add_lab_member(lab=lab, user=user, is_admin=False)
    return lab


def add_lab_member(*, lab: Lab, user, is_admin: bool = False) -> LabMembership:
    membership, _ = LabMembership.objects.update_or_create(
        lab=lab, user=user, defaults={"is_admin": is_admin}
    )
    return membership


def remove_lab_member(*, lab: Lab, user) -> None:
    LabMembership.objects.filter(lab=lab, user=user).delete()


def unique_project_slug(base: str) -> str:
    root = slugify(base)[:80] or "project"
    slug, n = root, 2
    while Project.objects.filter(slug=slug).exists():
        slug, n = f"{root}-{n}", n + 1
    return slug


@dataclass(frozen=True)
class ImportResult:
    project: Project
    n_items: int
    n_instances: int
    n_tuples: int
    design_notes: list[str]


def import_project(
    *,
    config_path: str | Path,
    lab: Lab | None = None,
    owner=None,
    slug: str | None = None,
) -> ImportResult:
    """Validate the config, read its data files and build the project with its tuples, or
    raise ProjectImportError and leave nothing behind."""
    config_path = Path(config_path)
    try:
        config = load_config(config_path)
        data = load_items(config)
    except (ConfigError, ValueError) as exc:
        raise ProjectImportError(str(exc)) from exc
    if slug is not None:
        if not re.fullmatch(r"[-a-zA-Z0-9_]+", slug):
            raise ProjectImportError(f"slug {slug!r}: use letters, digits, '-' and '_' only")
        if Project.objects.filter(slug=slug).exists():
            raise ProjectImportError(f"slug {slug!r}: a project with this slug exists already")
    from bws.core.design import DesignError

    try:
        return _build_project(
            config=config,
            data=data,
            lab=lab or get_default_lab(),
            owner=owner,
            slug=slug,
            config_source=config_path.read_text(encoding="utf-8"),
            config_filename=config_path.name,
        )
    except DesignError as exc:
        raise ProjectImportError(f"{config_path.name}: tuple design: {exc}") from exc


@transaction.atomic
def _build_project(
    *,
    config: ProjectConfig,
    data: LoadedData,
    lab: Lab,
    owner,
    slug: str | None,
    config_source: str,
    config_filename: str,
) -> ImportResult:
    from bws.models import ScoringState
    from bws.services import build_tuples

    project = Project.objects.create(
        lab=lab,
        slug=slug or unique_project_slug(config.task_name),
        name=config.task_name,
        config=config.to_dict(),
        config_source=config_source,
        config_filename=config_filename,
        allow_all_users=config.allow_all_users,
        created_by=owner,
    )
    items = Item.objects.bulk_create(
        [
            Item(project=project, item_id=it.item_id, index=i, text=it.text or "", data=it.data)
            for i, it in enumerate(data.items)
        ],
        batch_size=5000,
    )
    instances = Instance.objects.bulk_create(
        [
            Instance(
                project=project,
                instance_id=inst.instance_id,
                position=i,
                data=inst.context,
                items=[{"id": it.item_id, "text": it.text, "data": it.data} for it in inst.items],
                source_file=Path(inst.file).name if inst.file else "",
                source_line=inst.line,
            )
            for i, inst in enumerate(data.instances)
        ],
        batch_size=5000,
    )
    design = build_tuples(project=project, config=config, data=data, instances=instances)
    _build_units(project=project, config=config, instances=instances)
    ScoringState.objects.create(project=project)
    if owner is not None:
        Membership.objects.get_or_create(
            user=owner, project=project, defaults={"role": Membership.Role.MANAGER}
        )
    for username in config.authorized_users:
        user = User.objects.filter(username=username).first()
        if user is not None:
            Membership.objects.get_or_create(
                user=user, project=project, defaults={"role": Membership.Role.ANNOTATOR}
            )
    if design.notes or design.summary:
        project.config = {
            **project.config,
            "notices": project.notices + design.notes,
            "design_summary": design.summary,
        }
        project.save(update_fields=["config"])
    return ImportResult(
        project=project,
        n_items=len(items),
        n_instances=len(instances),
        n_tuples=design.n_tuples,
        design_notes=design.notes,
    )


def _build_units(*, project: Project, config: ProjectConfig, instances: list[Instance]) -> None:
    """One queue unit per BWS tuple in BWS projects, per instance otherwise, with a seeded
    random order for the `random` assignment strategy."""
    from bws.models import BwsTuple

    if config.bws_schemes:
        units = [
            Unit(
                kind=Unit.Kind.TUPLE, external_id=t.tuple_id, bws_tuple=t, instance_id=t.instance_id
            )
            for t in BwsTuple.objects.filter(project=project).order_by("position")
        ]
    else:
        units = [
            Unit(kind=Unit.Kind.INSTANCE, external_id=inst.instance_id, instance=inst)
            for inst in instances
        ]
    seed = config.bws.seed if config.bws else 42
    ranks = np.random.default_rng(seed).permutation(len(units))
    for n, unit in enumerate(units):
        unit.project = project
        unit.position = n
        unit.random_rank = int(ranks[n])
    Unit.objects.bulk_create(units, batch_size=5000)


def store_uploaded_project(*, config_file, data_files) -> Path:
    """Save an uploaded YAML config and its data files in a fresh folder; return the config path.

    Data files are placed where the config's data_files entries point (matched by file name),
    so a config written for a folder layout such as data/items.jsonl imports unchanged.
    """
    import yaml

    folder = Path(settings.PROJECT_FILES_ROOT) / uuid.uuid4().hex
    folder.mkdir(parents=True)
    config_path = folder / Path(config_file.name).name
    with config_path.open("wb") as out:
        for chunk in config_file.chunks():
            out.write(chunk)
    wanted: dict[str, Path] = {}
    try:
        raw = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError):
        raw = {}  # load_config reports the error with its line
    if isinstance(raw, dict):
        task_dir = raw.get("task_dir") if isinstance(raw.get("task_dir"), str) else "."
        entries = raw.get("data_files") or []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and not Path(entry).is_absolute():
                target = (folder / task_dir / entry).resolve()
                if folder.resolve() in target.parents:
                    wanted[Path(entry).name] = target
    for upload in data_files:
        name = Path(upload.name).name
        target = wanted.get(name, folder / name)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    return config_path


def create_project_from_upload(*, config_file, data_files, lab: Lab, owner) -> ImportResult:
    """Build a project from files uploaded on the web; nothing stays behind on failure."""
    config_path = store_uploaded_project(config_file=config_file, data_files=data_files)
    try:
        return import_project(config_path=config_path, lab=lab, owner=owner)
    except ProjectImportError:
        shutil.rmtree(config_path.parent, ignore_errors=True)
        raise


@dataclass(frozen=True)
class MemberChange:
    username: str
    created_user: bool
    role: str


@transaction.atomic
def add_project_members(
    *,
    project: Project,
    usernames: list[str],
    role: str,
    create: bool = False,
    password: str | None = None,
) -> list[MemberChange]:
    """Give each user the role in the project; with create, make missing accounts first."""
    if role not in Membership.Role.values:
        raise ValueError(f"role {role!r}: choose one of {', '.join(Membership.Role.values)}")
    users = {u.username: u for u in User.objects.filter(username__in=usernames)}
    missing = [name for name in usernames if name not in users]
    if missing and not create:
        raise ValueError(
            f"unknown user(s): {', '.join(missing)} (use --create to make the accounts)"
        )
    changes = []
    for name in usernames:
        created = name not in users
        if created:
            user = User(username=name)
            if password:
                user.set_password(password)
            else:
                user.set_unusable_password()
            user.save()
            users[name] = user
        Membership.objects.update_or_create(
            user=users[name], project=project, defaults={"role": role}
        )
        changes.append(MemberChange(username=name, created_user=created, role=role))
    return changes


def remove_project_member(*, project: Project, user) -> None:
    Membership.objects.filter(project=project, user=user).delete()


def mark_model_judge(*, user, model_name: str = "", is_model: bool = True) -> AnnotatorProfile:
    """Mark an account as a model judge (or as a person again)."""
    profile, _ = AnnotatorProfile.objects.update_or_create(
        user=user, defaults={"is_model": is_model, "model_name": model_name}
    )
    return profile
