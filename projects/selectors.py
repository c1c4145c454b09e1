"""Reads: which projects a person sees and may manage, and how far each has come."""

import json
import random
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum, Value
from django.db.models.functions import Least

from projects.media import unit_media
from projects.models import Instance, Item, Lab, LabMembership, Membership, Project, Removal, Unit
from projects.schemes import scheme_type

User = get_user_model()


def visible_projects(user) -> QuerySet[Project]:
    """Staff see every project; lab admins their labs' projects; others their own and open
    ones, but not an open one whose managers removed them."""
    projects = Project.objects.select_related("lab")
    if not user.is_authenticated:
        return projects.none()
    if user.is_staff:
        return projects.all()
    member = Membership.objects.filter(project=OuterRef("pk"), user=user)
    lab_admin = LabMembership.objects.filter(lab=OuterRef("lab"), user=user, is_admin=True)
    removed = Removal.objects.filter(project=OuterRef("pk"), user=user)
    return projects.filter(
        Exists(member) | Exists(lab_admin) | (Q(allow_all_users=True) & ~Exists(removed))
    )


def project_role(user, project: Project) -> str | None:
    """The user's role in the project: 'manager', 'annotator' or None."""
    if not user.is_authenticated:
        return None
    if user.is_staff or is_lab_admin(user, project.lab_id):
        return Membership.Role.MANAGER
    role = (
        Membership.objects.filter(user=user, project=project).values_list("role", flat=True).first()
    )
    if role:
        return role
    # An open project takes every user, but not one its managers removed.
    if project.allow_all_users and not Removal.objects.filter(project=project, user=user).exists():
        return Membership.Role.ANNOTATOR
    return None


def can_manage(user, project: Project) -> bool:
    return project_role(user, project) == Membership.Role.MANAGER


def is_lab_admin(user, lab_id: int) -> bool:
    return LabMembership.objects.filter(lab_id=lab_id, user=user, is_admin=True).exists()


def labs_for_project_creation(user) -> QuerySet[Lab]:
    """Labs in which the user may create projects: all for staff, administered ones otherwise."""
    if user.is_staff:
        return Lab.objects.all()
    return Lab.objects.filter(memberships__user=user, memberships__is_admin=True)


def manageable_labs(user) -> QuerySet[Lab]:
    return labs_for_project_creation(user)


def visible_labs(user) -> QuerySet[Lab]:
    if user.is_staff:
        return Lab.objects.all()
    return Lab.objects.filter(memberships__user=user)


@dataclass(frozen=True)
class Progress:
    """How far a project (or one person in it) has come, as its bar and its line read:
    ``done`` of ``total``, with what they count (``label``)."""

    done: int
    total: int
    label: str = "answers given / needed"
    # A person's figure only: the units still open to them (which the queue may yet give
    # them), so that done + left is what they are assigned.
    left: int | None = None

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


@dataclass(frozen=True)
class ProjectProgress(Progress):
    """A project's answers: every ordinary unit (gold not counted) needs ``per_unit``
    answers, so ``total`` = units x per_unit answers are needed and ``done`` are given,
    each unit counted up to what it needs; ``units_full``: units with all they need."""

    units: int = 0
    per_unit: int = 1
    units_full: int = 0


def units_required(project: Project) -> int:
    """How many annotators complete each unit: num_annotators_per_item, or one."""
    return project.settings.num_annotators_per_item or 1


def project_progress(projects) -> dict[int, ProjectProgress]:
    """Per project: its answers given out of those needed (ProjectProgress), the one
    figure the home page, the project pages, the dashboard and the API show."""
    result = {}
    for project in projects:
        cap = units_required(project)
        figures = Unit.objects.filter(project=project, is_gold=False).aggregate(
            units=Count("id"),
            done=Sum(Least("completed", Value(cap))),
            full=Count("id", filter=Q(completed__gte=cap)),
        )
        result[project.pk] = ProjectProgress(
            done=figures["done"] or 0,
            total=figures["units"] * cap,
            units=figures["units"],
            per_unit=cap,
            units_full=figures["full"],
        )
    return result


def lab_members(lab: Lab) -> QuerySet[LabMembership]:
    return LabMembership.objects.filter(lab=lab).select_related("user").order_by("user__username")


def labs_with_people(user) -> QuerySet[Lab]:
    """The labs the user sees (visible_labs), each with its numbers of admins, people and
    projects."""
    return Lab.objects.filter(pk__in=visible_labs(user).values("pk")).annotate(
        n_admins=Count("memberships", filter=Q(memberships__is_admin=True), distinct=True),
        n_people=Count("memberships", distinct=True),
        n_projects=Count("projects", distinct=True),
    )


def _item_display(project: Project) -> dict:
    """How the tuple's items are shown: in the order the first scheme whose type shows items
    asks; with their source when any such scheme shows sources (its source_key)."""
    shown = [
        display
        for scheme in project.schemes
        if (display := scheme_type(scheme["type"]).item_display(scheme["options"])) is not None
    ]
    if not shown:
        return {}
    sources = [display for display in shown if display.get("show_source")]
    return {**shown[0], **(sources[0] if sources else {}), "show_source": bool(sources)}


# The fields show_source reads when no source_key is given, in this order.
DEFAULT_SOURCE_KEYS = ("system", "source")


def item_source(data: dict, item_id: str, source_key: str | None, *, listed: bool) -> str:
    """What show_source shows for an item: its source_key field ("id": the item's id), or
    by default its system or source field; for an item listed in an instance (items_key),
    its id, which names the system that produced it in the guides' data."""
    if source_key == "id":
        return str(item_id)
    if source_key:
        value = data.get(source_key)
        return "" if value is None or isinstance(value, dict | list) else str(value)
    for key in DEFAULT_SOURCE_KEYS:
        value = data.get(key)
        if value not in (None, "") and not isinstance(value, dict | list):
            return str(value)
    return str(item_id) if listed else ""


def source_label(project: Project, source_key: str | None) -> str:
    """The label of the items' source: instance_display's label for its key, else the key."""
    key = source_key or "source"
    for field in project.settings.instance_display:
        if field["key"] == key:
            return field["label"]
    return key.replace("_", " ").capitalize()


def display_order(unit: Unit, user, randomize: bool) -> list[int]:
    """Positions of the tuple's items in the order this annotator sees them: stored order,
    or a shuffle seeded by annotator and unit (stable across reloads)."""
    n = len(unit.item_ids)
    order = list(range(n))
    if randomize:
        random.Random(f"{user.pk}:{unit.pk}").shuffle(order)
    return order


def unit_items(project: Project, unit: Unit, user) -> list[dict]:
    """The tuple's items in display order with their text (the instance's own text where
    items come from an instance's list), their letter A, B, C, ... and, only when the scheme
    showing the items (BWS) shows sources, their source."""
    if not unit.item_ids:
        return []
    ids = unit.item_ids
    if unit.instance_id is not None and unit.instance.items:
        texts = {it["id"]: it for it in unit.instance.items}
        rows = {i: (texts[i].get("text", ""), texts[i].get("data", {})) for i in ids}
    else:
        # Unordered (read into a dict): Item's default order would join the projects table.
        rows = {
            item_id: (text, data)
            for item_id, text, data in Item.objects.filter(project=project, item_id__in=ids)
            .order_by()
            .values_list("item_id", "text", "data")
        }
    display = _item_display(project)
    listed = unit.instance_id is not None and bool(unit.instance.items)
    order = display_order(unit, user, bool(display.get("randomize_order")))
    items = []
    for shown, position in enumerate(order):
        item_id = ids[position]
        text, data = rows.get(item_id, ("", {}))
        item = {"id": item_id, "text": text, "letter": chr(ord("A") + shown)}
        if display.get("show_source"):
            item["source"] = item_source(
                data or {}, item_id, display.get("source_key"), listed=listed
            )
        items.append(item)
    return items


def unit_context_fields(project: Project, unit: Unit) -> list[dict]:
    """The instance fields shown as context: instance_display's fields, or every simple
    field of the instance when the config lists none. A tuple of items read one per line
    shows the instance_display fields its items all share (the source sentence of the
    outputs it compares)."""
    if unit.instance_id is None:
        return _shared_item_fields(project, unit)
    data = unit.instance.data or {}
    config = project.settings
    if config.instance_display:
        return [
            {"key": f["key"], "label": f["label"], "value": data[f["key"]]}
            for f in config.instance_display
            if f["key"] in data
        ]
    id_key = config.id_key
    drawn = set(drawn_fields(project))  # a scheme draws them (a clip, a point cloud)
    return [
        {"key": k, "label": k, "value": v}
        for k, v in data.items()
        if k != id_key and k not in drawn and isinstance(v, str | int | float)
    ]


def _shared_item_fields(project: Project, unit: Unit) -> list[dict]:
    fields = project.settings.instance_display
    if not fields or not unit.item_ids:
        return []
    rows = list(
        Item.objects.filter(project=project, item_id__in=unit.item_ids).values_list(
            "data", flat=True
        )
    )
    shared = []
    for field in fields:
        values = {
            json.dumps((data or {}).get(field["key"]), sort_keys=True, default=str) for data in rows
        }
        value = (rows[0] or {}).get(field["key"]) if rows else None
        if len(values) == 1 and isinstance(value, str | int | float) and value != "":
            shared.append({"key": field["key"], "label": field["label"], "value": value})
    return shared


def drawn_fields(project: Project) -> list[str]:
    """Instance fields the schemes draw on the page (e.g. trace steps, segment media)."""
    keys: list[str] = []
    for scheme in project.schemes:
        keys.extend(scheme_type(scheme["type"]).drawn_fields(scheme["options"]))
    return keys


def unit_payload(project: Project, unit: Unit, user) -> dict:
    """What an annotator sees of a unit, the same on the web page and through the REST API:
    the items, the context fields, the instance fields the schemes draw, the questions.
    Nothing the page hides (sources when show_source is off, other instance fields)."""
    data = (unit.instance.data or {}) if unit.instance_id is not None else {}
    payload = {
        "id": unit.pk,
        "external_id": unit.external_id,
        "kind": unit.kind,
        "items": unit_items(project, unit, user),
        "context": unit_context_fields(project, unit),
        "data": {key: data[key] for key in drawn_fields(project) if key in data},
        "schemes": project.schemes,
    }
    # The URLs of the media these fields name (a stored file's own URL; projects.media).
    payload["media"] = unit_media(project, payload["data"])
    display = _item_display(project)
    if display.get("show_source"):
        payload["source_label"] = source_label(project, display.get("source_key"))
    return payload


def names_hidden(project: Project, user) -> bool:
    """Whether the API names tuples to this person by their id rather than their name: in a
    project with attention checks a gold tuple's name, numbered after the design's tuples,
    would tell it apart; so there tuples go by their id to anyone but the managers."""
    gold = project.settings.gold
    return gold is not None and gold.attention_rate > 0 and not can_manage(user, project)


def unit_name(unit: Unit, *, hidden: bool) -> str:
    """A unit's name as the API gives it (names_hidden: a tuple's id instead)."""
    return str(unit.pk) if hidden and unit.kind == Unit.Kind.TUPLE else unit.external_id


def excluded_names(project: Project | int) -> list[str]:
    """The usernames of the annotators left out, sorted."""
    project_id = project.pk if isinstance(project, Project) else project
    return sorted(
        Membership.objects.filter(project_id=project_id, excluded=True).values_list(
            "user__username", flat=True
        )
    )


def excluded_user_ids(project: Project | int) -> set[int]:
    project_id = project.pk if isinstance(project, Project) else project
    return set(
        Membership.objects.filter(project_id=project_id, excluded=True).values_list(
            "user_id", flat=True
        )
    )


@dataclass(frozen=True)
class ProjectOverview:
    n_items: int
    n_instances: int
    n_tuples: int
    n_annotations: int
    members: list


def project_overview(project: Project) -> ProjectOverview:
    members = list(
        Membership.objects.filter(project=project)
        .exclude(user__participant__project=project)  # listed apart, in pages (participant_list)
        .select_related("user")
        .order_by("role", "user__username")
    )
    return ProjectOverview(
        n_items=Item.objects.filter(project=project).count(),
        n_instances=Instance.objects.filter(project=project).count(),
        n_tuples=Unit.objects.filter(project=project, kind=Unit.Kind.TUPLE, is_gold=False).count(),
        n_annotations=project.annotations.count(),  # annotation's answers, by their relation
        members=members,
    )


# How far one person has come in a project is counted by the app that hands out the work
# (annotation, which registers its count here in AppConfig.ready): its queue and answers
# sit above projects.
_person_progress = []


def register_person_progress(count) -> None:
    _person_progress[:] = [count]


def person_progress(project: Project, user) -> Progress:
    """The units this person answered out of those assigned to them, and those left for
    them (annotation.selectors.my_progress)."""
    return _person_progress[0](project, user)
