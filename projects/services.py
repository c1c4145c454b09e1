"""Writes: labs and their people, projects built from a YAML config and data files, members."""

import logging
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from projects import events, media
from projects.configuration import ConfigError, ProjectConfig, load_config, parse_config, parse_yaml
from projects.datafiles import LoadedData, load_items
from projects.limits import Limits
from projects.models import (
    AnnotatorProfile,
    Instance,
    Item,
    Lab,
    LabMembership,
    Membership,
    Project,
    Removal,
    Unit,
)
from projects.paths import PathRefused, confine
from projects.uploads import file_limit_bytes, file_too_large, total_limit_bytes, total_too_large

User = get_user_model()

DEFAULT_LAB_NAME = "Default lab"
BATCH = 5000  # rows per INSERT when a project is built


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


STORAGE_FOLDER = re.compile(r"[0-9a-f]{32}")


def current_limits() -> Limits:
    """The limits on configs and data set in settings ("Trust boundaries: limits")."""
    return Limits.from_settings(settings)


def project_folder(project: Project) -> Path:
    """The project's own folder under PROJECT_FILES_ROOT, where everything written for it
    goes (projects made before folders existed get one here)."""
    name = project.storage_folder
    if not name:
        name = uuid.uuid4().hex
        Project.objects.filter(pk=project.pk, storage_folder="").update(storage_folder=name)
        project.refresh_from_db(fields=["storage_folder"])
        name = project.storage_folder
    if not STORAGE_FOLDER.fullmatch(name):
        raise PathRefused("storage_folder")
    return Path(settings.PROJECT_FILES_ROOT) / name


def import_project(
    *,
    config_path: str | Path,
    lab: Lab | None = None,
    owner=None,
    slug: str | None = None,
    trusted: bool = False,
    storage_folder: str | None = None,
    parsed: Any = None,
    media_by_name: bool = False,
) -> ImportResult:
    """Validate the config, read its data files and build the project with its tuples, or
    raise ProjectImportError and leave nothing behind.

    Untrusted (the default: a config that came over the web), task_dir and data_files must
    stay inside the config's folder; ``trusted`` (the operator's import_project command)
    reads the paths the config names. Either way the project gets a folder of its own
    (``storage_folder``, a hex name under PROJECT_FILES_ROOT: the upload's, or a new one)
    and the worker writes only there. Every limit of settings applies. ``parsed`` is the
    file's YAML when the caller has read it already (the web upload), so it is parsed once.
    Media files the instances name are checked and copied into the project's folder
    (projects.media); ``media_by_name`` (the web upload, whose files arrive side by side)
    finds one missing at its path by its file name in the config's folder."""
    config_path = Path(config_path)
    limits = current_limits()
    try:
        if parsed is None:
            config = load_config(config_path, trusted=trusted, limits=limits)
        else:
            config = parse_config(
                parsed,
                config_path.name,
                config_path.resolve().parent,
                trusted=trusted,
                limits=limits,
            )
        data = load_items(config, limits=limits)
        events.plan_project(config=config, data=data, limits=limits)
        media_files = media.check_media(
            config,
            data,
            limits,
            by_name=config_path.resolve().parent if media_by_name else None,
        )
        config_source = config_path.read_text(encoding="utf-8")
    except (ConfigError, ValueError) as exc:
        raise ProjectImportError(str(exc)) from exc
    if slug is not None:
        if not re.fullmatch(r"[-a-zA-Z0-9_]+", slug):
            raise ProjectImportError(f"slug {slug!r}: use letters, digits, '-' and '_' only")
        if Project.objects.filter(slug=slug).exists():
            raise ProjectImportError(f"slug {slug!r}: a project with this slug exists already")
    storage_folder = storage_folder or uuid.uuid4().hex
    folder = Path(settings.PROJECT_FILES_ROOT) / storage_folder
    try:
        stored = media.store_media(media_files, folder)
    except media.MediaRefused as exc:  # a point cloud that does not decode
        raise ProjectImportError(str(exc)) from exc
    except OSError as exc:
        raise ProjectImportError("the media files could not be stored: try again") from exc
    try:
        return _build_project(
            config=config,
            data=data,
            lab=lab or get_default_lab(),
            owner=owner,
            slug=slug,
            config_source=config_source,
            config_filename=config_path.name,
            storage_folder=storage_folder,
        )
    except events.BuildRefused as exc:
        media.remove_media(stored, folder)
        raise ProjectImportError(f"{config_path.name}: {exc}") from exc
    except BaseException:
        media.remove_media(stored, folder)
        raise


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
    storage_folder: str,
) -> ImportResult:
    project = Project.objects.create(
        lab=lab,
        slug=slug or unique_project_slug(config.task_name),
        name=config.task_name,
        config=config.to_dict(),
        config_source=config_source,
        config_filename=config_filename,
        storage_folder=storage_folder,
        allow_all_users=config.allow_all_users,
        created_by=owner,
    )
    # Model objects are made a batch at a time, so a large project never holds them all.
    for start in range(0, len(data.items), BATCH):
        Item.objects.bulk_create(
            [
                Item(project=project, item_id=it.item_id, index=i, text=it.text or "", data=it.data)
                for i, it in enumerate(data.items[start : start + BATCH], start=start)
            ]
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
    # The apps built on projects add their rows here (bws: the tuples and their units),
    # inside this transaction, so a refused design stores nothing.
    design = events.built_project(project=project, config=config, data=data, instances=instances)
    if not config.bws_schemes:
        _build_instance_units(project=project, config=config, instances=instances)
    # crowds stores the gold units here; its GoldRefused rolls the import back.
    events.built_units(project=project, config=config)
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
        n_items=len(data.items),
        n_instances=len(instances),
        n_tuples=design.n_tuples,
        design_notes=design.notes,
    )


def _build_instance_units(
    *, project: Project, config: ProjectConfig, instances: list[Instance]
) -> None:
    """One queue unit per instance in projects with no BWS scheme (bws builds the units of
    its tuples when it receives project_built)."""
    store_units(
        project=project,
        kind=Unit.Kind.INSTANCE,
        rows=[(inst.instance_id, inst, [], []) for inst in instances],
        seed=config.seed,
    )


def store_units(
    *, project: Project, kind: str, rows: list[tuple], seed: int, first_position: int = 0
) -> list[int]:
    """Store a project's queue units in the rows' order, with a seeded random order for the
    `random` assignment strategy; a row is (external_id, instance or None, item_ids,
    item_indices). Units added later (an adaptive design's batches) start at
    ``first_position``. Returns the units' ids in the same order."""
    ranks = first_position + np.random.default_rng(seed).permutation(len(rows))
    pks: list[int] = []
    for start in range(0, len(rows), BATCH):
        created = Unit.objects.bulk_create(
            [
                Unit(
                    project=project,
                    kind=kind,
                    external_id=external_id,
                    position=n,
                    random_rank=int(ranks[n - first_position]),
                    instance=instance,
                    item_ids=item_ids,
                    item_indices=item_indices,
                )
                for n, (external_id, instance, item_ids, item_indices) in enumerate(
                    rows[start : start + BATCH], start=first_position + start
                )
            ]
        )
        pks += [unit.pk for unit in created]
    return pks


def store_uploaded_project(*, config_file, data_files) -> tuple[Path, Any]:
    """Save an uploaded YAML config and its data files in a new folder of their own under
    PROJECT_FILES_ROOT; return the config's path and its parsed YAML (None when it does not
    parse: the import reports why). ProjectImportError if they are too large.

    Data files are placed where the config's data_files entries point (matched by file name)
    when that place is inside the folder, so a config written for a folder layout such as
    data/items.jsonl imports unchanged; anything else lands at the top of the folder and the
    import names the key that points elsewhere.
    """
    limits = current_limits()
    folder = Path(settings.PROJECT_FILES_ROOT) / uuid.uuid4().hex
    folder.mkdir(parents=True)
    try:
        config_name = _upload_name(config_file.name)
        written = _save_upload(config_file, folder / config_name, file_limit_bytes())
        if written is None:
            raise ProjectImportError(file_too_large(config_name))
        if written > limits.config_bytes:
            raise ProjectImportError(
                f"{config_name}: the file is larger than the limit of {limits.config_bytes} "
                "bytes (CONFIG_MAX_BYTES)"
            )
        wanted: dict[str, Path] = {}
        try:
            raw = parse_yaml(
                (folder / config_name).read_text(encoding="utf-8"), config_name, limits=limits
            )
        except (ConfigError, UnicodeDecodeError):
            raw = None  # the import reports the problem with its line
        if isinstance(raw, dict):
            task_dir = raw.get("task_dir") if isinstance(raw.get("task_dir"), str) else "."
            entries = raw.get("data_files") or []
            for entry in entries if isinstance(entries, list) else []:
                if not isinstance(entry, str):
                    continue
                try:
                    start = confine("task_dir", task_dir, folder)
                    wanted[Path(entry).name] = confine("data_files", entry, folder, start=start)
                except PathRefused:
                    continue
        total = written
        for upload in data_files:
            name = _upload_name(upload.name)
            target = wanted.get(name, folder / name)
            target.parent.mkdir(parents=True, exist_ok=True)
            size = _save_upload(
                upload, target, min(file_limit_bytes(), total_limit_bytes() - total)
            )
            if size is None:
                too_large = total + (upload.size or 0) > total_limit_bytes()
                raise ProjectImportError(total_too_large() if too_large else file_too_large(name))
            total += size
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder / config_name, raw


def _upload_name(name: str | None) -> str:
    base = Path(name or "").name
    if base in ("", ".", ".."):
        raise ProjectImportError("an uploaded file has no usable name")
    return base


def _save_upload(upload, target: Path, limit: int) -> int | None:
    """Copy an upload to a new file; its size, or None (nothing kept) past ``limit`` bytes."""
    size = 0
    try:
        with target.open("xb") as out:
            for chunk in upload.chunks():
                size += len(chunk)
                if size > limit:
                    break
                out.write(chunk)
    except FileExistsError:
        raise ProjectImportError(f"two uploaded files are named {target.name}") from None
    if size > limit:
        target.unlink()
        return None
    return size


def create_project_from_upload(*, config_file, data_files, lab: Lab, owner) -> ImportResult:
    """Build a project from files uploaded on the web; nothing stays behind on failure.

    The upload is untrusted: every path in its config must stay inside its own folder,
    which becomes the project's folder."""
    config_path, parsed = store_uploaded_project(config_file=config_file, data_files=data_files)
    try:
        return import_project(
            config_path=config_path,
            lab=lab,
            owner=owner,
            trusted=False,
            storage_folder=config_path.parent.name,
            parsed=parsed,
            media_by_name=True,
        )
    except ProjectImportError:
        shutil.rmtree(config_path.parent, ignore_errors=True)
        raise


def mark_model_judge(*, user, model_name: str = "", is_model: bool = True) -> AnnotatorProfile:
    """Mark an account as a model judge (or as a person again)."""
    profile, _ = AnnotatorProfile.objects.update_or_create(
        user=user, defaults={"is_model": is_model, "model_name": model_name}
    )
    return profile


def set_excluded(*, project: Project, user, excluded: bool) -> bool:
    """Leave an annotator out of (or take them back into) scores and agreement; the scores
    and the agreement report are computed again as after new answers. Returns whether
    anything changed."""
    changed = Membership.objects.filter(project=project, user=user).exclude(excluded=excluded)
    if not changed.update(excluded=excluded):
        return False
    schemes = [scheme.name for scheme in project.settings.schemes]
    # Announced as changed answers, so scoring runs again; the agreement report names the
    # annotators it left out, and is out of date when they differ (agreement.selectors).
    events.announce_answers(project_id=project.pk, schemes=schemes, count=0, source="web")
    return True


@dataclass(frozen=True)
class MemberChange:
    username: str
    created_user: bool
    role: str
    previous_role: str | None = None  # the role before, for someone already a member


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
    before = dict(
        Membership.objects.filter(project=project, user__username__in=usernames).values_list(
            "user__username", "role"
        )
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
        Removal.objects.filter(project=project, user=users[name]).delete()  # added again
        changes.append(
            MemberChange(
                username=name, created_user=created, role=role, previous_role=before.get(name)
            )
        )
    return changes


def member_results(entries, changes: dict[str, MemberChange]) -> list[dict]:
    """One row per pasted entry of a bulk add (web form or API): what it named and what
    became of it, given the changes add_project_members made by username."""
    rows = []
    for entry in entries:
        change = changes.get(entry.user.username) if entry.user is not None else None
        if change is None:
            label = {"unknown": "unknown account", "invalid": "invalid entry"}
            outcome = label.get(entry.outcome, "skipped")
            text = f"not added: {entry.detail}"
        elif entry.outcome == "created":
            outcome, text = "account created", f"added as {change.role}; invite link below"
        elif change.previous_role is None:
            outcome, text = "added", f"added as {change.role}"
        elif change.previous_role == change.role:
            outcome, text = "already a member", f"role unchanged ({change.role})"
        else:
            outcome = "already a member"
            text = f"role changed from {change.previous_role} to {change.role}"
        account = entry.user.username if entry.user is not None else ""
        rows.append({"entry": entry.text, "account": account, "outcome": outcome, "text": text})
    return rows


@transaction.atomic
def remove_project_member(*, project: Project, user, removed_by=None) -> int:
    """Take the person out of the project at once: their membership goes, the units they
    hold go back to the queue, and a Removal is kept (until they are added again), so that
    on a project open to every user too the queue gives them nothing and their answers are
    refused (annotation.queue, annotation.answers). Returns how many leases were ended."""
    Membership.objects.filter(project=project, user=user).delete()
    Removal.objects.get_or_create(project=project, user=user, defaults={"removed_by": removed_by})
    ended = events.removed_member(project=project, user=user)  # annotation ends the leases
    logging.getLogger("annolab.audit").info(
        "%s removed %s from project %s (%d lease(s) ended)",
        removed_by.username if removed_by is not None else "the operator",
        user.username,
        project.slug,
        ended,
    )
    return ended
