"""Labs, projects, memberships, items and instances, and the answers annotators give."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.configuration import ProjectConfig


class Lab(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    is_default = models.BooleanField(
        default=False, help_text="Projects imported without a lab go to the default lab."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="LabMembership", related_name="labs"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="one_default_lab"
            )
        ]

    def __str__(self) -> str:
        return self.name


class LabMembership(models.Model):
    lab = models.ForeignKey(Lab, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lab_memberships"
    )
    is_admin = models.BooleanField(default=False)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lab", "user"], name="unique_lab_member"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.lab}{' (admin)' if self.is_admin else ''}"


class Project(models.Model):
    lab = models.ForeignKey(Lab, on_delete=models.PROTECT, related_name="projects")
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=300)
    config = models.JSONField(help_text="The validated, normalised configuration.")
    config_source = models.TextField(blank=True, help_text="The YAML file as uploaded.")
    config_filename = models.CharField(max_length=300, blank=True)
    allow_all_users = models.BooleanField(default=False)
    storage_folder = models.CharField(
        max_length=32,
        blank=True,
        help_text="The project's own folder under PROJECT_FILES_ROOT (a hex name): its "
        "uploaded files and every file the worker writes for it.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_projects",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def settings(self) -> ProjectConfig:
        """The stored configuration as typed objects, every default filled in."""
        return ProjectConfig.from_dict(self.config)

    @property
    def notices(self) -> list[str]:
        return self.settings.notices

    @property
    def schemes(self) -> list[dict]:
        """The schemes in their stored form ({name, type, description, options})."""
        return [scheme.model_dump(mode="json") for scheme in self.settings.schemes]

    @property
    def is_bws(self) -> bool:
        return bool(self.settings.bws_schemes)


class Membership(models.Model):
    class Role(models.TextChoices):
        MANAGER = "manager", "Manager"
        ANNOTATOR = "annotator", "Annotator"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    excluded = models.BooleanField(
        default=False,
        help_text="A manager left this annotator out: their answers count toward no score "
        "and no agreement figure, and exports mark them (crowds.gold).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="unique_project_member"),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.project}"


class Item(models.Model):
    """One thing to be judged; `index` is its dense 0..n-1 number for array code."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=255)
    index = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["project", "index"]
        constraints = [
            models.UniqueConstraint(fields=["project", "item_id"], name="unique_item_id"),
            models.UniqueConstraint(fields=["project", "index"], name="unique_item_index"),
        ]

    def __str__(self) -> str:
        return self.item_id


class Instance(models.Model):
    """A record of the data files that is shown as a whole: a unit of a non-BWS scheme, or
    the context (source sentence) of the BWS tuples drawn from its item list."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="instances")
    instance_id = models.CharField(max_length=255)
    position = models.PositiveIntegerField()
    data = models.JSONField(default=dict, blank=True, help_text="Fields shown as context.")
    items = models.JSONField(
        default=list,
        blank=True,
        help_text="The instance's own item list ({id, text, data}): texts differ per instance "
        "even where ids repeat (the same system translating each sentence).",
    )
    source_file = models.CharField(max_length=300, blank=True)
    source_line = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "instance_id"], name="unique_instance_id"),
        ]

    def __str__(self) -> str:
        return self.instance_id


# Unit keys are drawn at random from one space rather than counted up, so a unit's address
# tells nothing of when it was made (an attention check, made after the ordinary units, would
# otherwise carry the highest numbers). Below 2**53, so JavaScript reads them exactly.
UNIT_ID_LOW = 2**32
UNIT_ID_HIGH = 2**53


def random_unit_id() -> int:
    return UNIT_ID_LOW + secrets.randbelow(UNIT_ID_HIGH - UNIT_ID_LOW)


class Unit(models.Model):
    """What the queue hands out: a BWS tuple in BWS projects (its items listed here; the
    design record is bws.BwsTuple), an instance otherwise.

    `load` counts completed answers plus live reservations, so the queue's choice and its cap
    check read one indexed row; `completed` counts finished annotators.
    """

    id = models.BigIntegerField(primary_key=True, default=random_unit_id, editable=False)

    class Kind(models.TextChoices):
        TUPLE = "tuple", "BWS tuple"
        INSTANCE = "instance", "Instance"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="units")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    external_id = models.CharField(max_length=255, help_text="tuple_id or instance_id")
    position = models.PositiveIntegerField()
    random_rank = models.PositiveIntegerField(help_text="Place in the seeded random order.")
    item_ids = models.JSONField(
        default=list, blank=True, help_text="Items shown, in stored order (a BWS tuple's)."
    )
    item_indices = models.JSONField(
        default=list, blank=True, help_text="The same items as Item.index values."
    )
    instance = models.ForeignKey(
        Instance, null=True, blank=True, on_delete=models.CASCADE, related_name="units"
    )
    load = models.PositiveIntegerField(default=0)
    completed = models.PositiveIntegerField(default=0)
    is_gold = models.BooleanField(
        default=False,
        help_text="A gold unit (known answer): a training unit or an attention check, never "
        "counted in scores, agreement or progress (crowds.gold).",
    )
    gold = models.JSONField(
        default=dict,
        blank=True,
        help_text="A gold unit's expected answers per scheme, its training place and line.",
    )
    shown_number = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The number a gold unit's label shows, one of the ordinary units' numbers, "
        "so the label does not give it away.",
    )

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "position"], name="unique_unit_position"),
            models.UniqueConstraint(fields=["project", "external_id"], name="unique_unit_id"),
        ]
        indexes = [
            models.Index(fields=["project", "load", "position"], name="unit_least_loaded"),
            models.Index(fields=["project", "random_rank"], name="unit_random_order"),
        ]

    def __str__(self) -> str:
        return self.external_id

    @property
    def label(self) -> str:
        """What an annotator reads for the unit ("Tuple 12"), not its internal id."""
        noun = "Tuple" if self.kind == self.Kind.TUPLE else "Item"
        number = self.shown_number if self.shown_number is not None else self.position + 1
        return f"{noun} {number}"


class AnnotatorProfile(models.Model):
    """Per-account facts that Django's user lacks: whether the account is a model judge."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_profile"
    )
    is_model = models.BooleanField(
        default=False, help_text="A model judge annotating through its API token."
    )
    model_name = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({'model' if self.is_model else 'person'})"


class Removal(models.Model):
    """A person a manager removed from a project: on a project open to every user, losing the
    membership alone would let them go on, so the removal is kept until they are added again."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="removals")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_removals"
    )
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    removed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="unique_project_removal"),
        ]

    def __str__(self) -> str:
        return f"{self.user} removed from {self.project}"
