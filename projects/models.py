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
        "and no agreement figure, and exports mark them (projects.gold).",
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
        "counted in scores, agreement or progress (projects.gold).",
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


class Assignment(models.Model):
    """A unit handed to an annotator: reserved under a lease, then completed."""

    class Status(models.TextChoices):
        RESERVED = "reserved", "Reserved"
        COMPLETED = "completed", "Completed"

    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=Status.choices)
    leased_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "annotator"], name="one_assignment_per_unit"),
        ]
        indexes = [
            models.Index(fields=["project", "annotator", "status"], name="assignment_by_annotator"),
            models.Index(fields=["project", "status", "leased_until"], name="assignment_leases"),
        ]

    def __str__(self) -> str:
        return f"{self.unit} to {self.annotator} ({self.status})"


class Annotation(models.Model):
    """One annotator's answer to one scheme on one unit. BWS answers also keep the chosen
    items as Item.index values, so scoring reads integer arrays in one query."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    scheme = models.CharField(max_length=200)
    value = models.JSONField()
    best_index = models.PositiveIntegerField(null=True, blank=True)
    worst_index = models.PositiveIntegerField(null=True, blank=True)
    time_taken_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="When it was last stored.")
    answered_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the annotator gave it, where that is earlier than when it was "
        "stored (an imported answer keeps its file's timestamp).",
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["unit", "annotator", "scheme"], name="one_answer_per_unit_scheme"
            ),
        ]
        indexes = [models.Index(fields=["project", "scheme", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.unit} ({self.scheme})"


class Submission(models.Model):
    """A client's submission id, so a retried request stores its answers once."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    client_id = models.UUIDField()
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="submissions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "client_id"], name="unique_client_id"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id} by {self.annotator}"


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


class PasswordResetRequest(models.Model):
    """A request for a password-reset e-mail, kept while the reset throttle's window lasts
    (projects/login_protection.py); the e-mail address is stored only as a keyed hash."""

    address = models.GenericIPAddressField(null=True)
    email_digest = models.CharField(max_length=64)
    requested_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["address", "requested_at"]),
            models.Index(fields=["email_digest", "requested_at"]),
        ]

    def __str__(self) -> str:
        return f"reset request from {self.address} at {self.requested_at}"


class Participant(models.Model):
    """A crowd participant who came in through a project's participant link: an annotator
    account of that project only, named by the panel's id (projects/participants.py)."""

    class Training(models.TextChoices):
        NONE = "none", "No training"
        PENDING = "pending", "In training"
        PASSED = "passed", "Passed training"
        FAILED = "failed", "Failed training"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    external_id = models.CharField(max_length=64, help_text="The panel's id (e.g. PROLIFIC_PID).")
    params = models.JSONField(
        default=dict, blank=True, help_text="The link's other query parameters, as last sent."
    )
    consent_at = models.DateTimeField(null=True, blank=True)
    instructions_seen_at = models.DateTimeField(null=True, blank=True)

    class Outcome(models.TextChoices):
        NONE = "", "Not ended"
        COMPLETED = "completed", "Completed"
        PARTIAL = "partial", "No more work (partial)"
        SCREENED_OUT = "screened_out", "Screened out"

    training = models.CharField(max_length=10, choices=Training.choices, default=Training.NONE)
    completed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(
        max_length=20,
        choices=Outcome.choices,
        default=Outcome.NONE,
        blank=True,
        help_text="How the participant's part ended: the quota answered (the completion "
        "code), no work left before the quota (the partial code), or screened out.",
    )
    outcome_at = models.DateTimeField(null=True, blank=True)
    outcome_reason = models.CharField(max_length=200, blank=True)
    entry_digest = models.CharField(
        max_length=64,
        blank=True,
        help_text="A keyed hash of the client address the participant was made from, so that "
        "new participants are counted per address (projects/entry_rate.py) without keeping "
        "the address.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="unique_participant_id"
            ),
        ]
        indexes = [
            models.Index(fields=["entry_digest", "created_at"], name="participant_entries"),
        ]

    def __str__(self) -> str:
        return f"participant {self.external_id} of {self.project}"


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
