"""Reads: which projects a person sees and may manage, and how far each has come."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum, Value
from django.db.models.functions import Least

from .models import Annotation, Instance, Item, Lab, LabMembership, Membership, Project, Unit

User = get_user_model()


def visible_projects(user) -> QuerySet[Project]:
    """Staff see every project; lab admins their labs' projects; others their own and open ones."""
    projects = Project.objects.select_related("lab")
    if not user.is_authenticated:
        return projects.none()
    if user.is_staff:
        return projects.all()
    member = Membership.objects.filter(project=OuterRef("pk"), user=user)
    lab_admin = LabMembership.objects.filter(lab=OuterRef("lab"), user=user, is_admin=True)
    return projects.filter(Exists(member) | Exists(lab_admin) | Q(allow_all_users=True))


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
    if project.allow_all_users:
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
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def units_required(project: Project) -> int:
    """How many annotators complete each unit: num_annotators_per_item, or one."""
    return int(project.config.get("num_annotators_per_item") or 1)


def project_progress(projects) -> dict[int, Progress]:
    """Per project: completed annotations, each unit counted up to num_annotators_per_item
    (or one), out of units times that number."""
    result = {}
    for project in projects:
        cap = units_required(project)
        figures = Unit.objects.filter(project=project).aggregate(
            units=Count("id"), done=Sum(Least("completed", Value(cap)))
        )
        result[project.pk] = Progress(done=figures["done"] or 0, total=figures["units"] * cap)
    return result


@dataclass(frozen=True)
class ProjectOverview:
    n_items: int
    n_instances: int
    n_tuples: int
    n_annotations: int
    members: list


def project_overview(project: Project) -> ProjectOverview:
    from bws.models import BwsTuple

    members = list(
        Membership.objects.filter(project=project)
        .select_related("user")
        .order_by("role", "user__username")
    )
    return ProjectOverview(
        n_items=Item.objects.filter(project=project).count(),
        n_instances=Instance.objects.filter(project=project).count(),
        n_tuples=BwsTuple.objects.filter(project=project).count(),
        n_annotations=Annotation.objects.filter(project=project).count(),
        members=members,
    )


def lab_members(lab: Lab) -> QuerySet[LabMembership]:
    return LabMembership.objects.filter(lab=lab).select_related("user").order_by("user__username")
