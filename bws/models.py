"""Tuples of a BWS project, designed once when the project is built and never regenerated."""

from django.db import models


class TupleBatch(models.Model):
    """One version of an adaptive project's tuple set: batch 0 is the balanced start, each
    later batch was designed from a stored fit (``fit_run``) with ``seed``, so it can be
    designed again to the same tuples. Batches are only added, never regenerated."""

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="tuple_batches"
    )
    number = models.PositiveIntegerField()
    strategy = models.CharField(max_length=20, help_text="balanced, adaptive or iterative.")
    designer = models.CharField(
        max_length=80, blank=True, help_text="The function that designed it (bws.adaptive)."
    )
    fit_run = models.ForeignKey(
        "ScoreRun",
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="designed_batches",
        help_text="The scoring run whose fit the batch was designed from.",
    )
    seed = models.BigIntegerField()
    n_tuples = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="unique_batch_number"),
        ]

    def __str__(self) -> str:
        return f"{self.project} batch {self.number}"


class BwsTuple(models.Model):
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="bws_tuples"
    )
    tuple_id = models.CharField(max_length=64)
    position = models.PositiveIntegerField(help_text="Order in the design (fixed_order queue).")
    instance = models.ForeignKey(
        "projects.Instance",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="bws_tuples",
        help_text="The instance whose item list the tuple was drawn from, if any.",
    )
    unit = models.OneToOneField(
        "projects.Unit",
        on_delete=models.CASCADE,
        related_name="bws_tuple",
        help_text="The queue unit that shows this tuple (it holds the item lists).",
    )
    batch = models.ForeignKey(
        TupleBatch,
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="tuples",
        help_text="The batch of an adaptive design the tuple belongs to (none otherwise).",
    )

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "tuple_id"], name="unique_tuple_id"),
            models.UniqueConstraint(fields=["project", "position"], name="unique_tuple_position"),
        ]

    def __str__(self) -> str:
        return self.tuple_id

    @property
    def item_ids(self) -> list[str]:
        """Item ids in position order."""
        return self.unit.item_ids

    @property
    def item_indices(self) -> list[int]:
        """The same items as Item.index values."""
        return self.unit.item_indices


class ScoreRun(models.Model):
    """One computation of a scheme's scores by one method, with its figures and items."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        OK = "ok", "Done"
        FAILED = "failed", "Failed"

    class Trigger(models.TextChoices):
        AUTO = "auto", "After annotation"
        MANUAL = "manual", "Asked for"
        COMMAND = "command", "Command line"

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="score_runs"
    )
    scheme = models.CharField(max_length=200)
    method = models.CharField(max_length=40)
    parameters = models.JSONField(default=dict, blank=True)
    trigger = models.CharField(max_length=10, choices=Trigger.choices, default=Trigger.AUTO)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    n_judgments = models.PositiveIntegerField(null=True, blank=True)
    n_annotators = models.PositiveIntegerField(null=True, blank=True)
    n_tuples_annotated = models.PositiveIntegerField(null=True, blank=True)
    reliability = models.JSONField(null=True, blank=True)
    convergence = models.JSONField(null=True, blank=True)
    stats_text = models.TextField(blank=True)
    diagnostics = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the scores cannot tell (bws.core.diagnostics): separate groups of "
        "items, separated items, approximate intervals, with sentences for people.",
    )
    advice = models.JSONField(
        null=True,
        blank=True,
        help_text="When to stop (bws.core.advice): projection, statement, how.",
    )
    annotator_reliability = models.JSONField(
        null=True,
        blank=True,
        help_text="Each annotator's estimated sensitivity with its interval "
        "(bws.core.annotator_model), keyed by user id, and whether the scores used them.",
    )
    sources = models.JSONField(
        null=True,
        blank=True,
        help_text="The systems ranked (tuple_generation.system_key), with 95% intervals and "
        "rank sets (bws.source_scores.sources_summary); none without a system_key.",
    )
    ranks = models.JSONField(
        null=True,
        blank=True,
        help_text="Each item's rank with its 95% intervals (marginal and simultaneous, within "
        "its group) and the items surely among the top k (bws.rank_results); none without "
        "calibrated intervals.",
    )
    data_changed_at = models.DateTimeField(
        null=True, blank=True, help_text="Time of the newest answer this run read."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When its message went to the scoring queue: a queued run waits in the "
        "database for its lab's turn (bws.scheduling.dispatch_runs).",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["project", "scheme", "method", "status", "finished_at"]),
            models.Index(fields=["status", "dispatched_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.scheme} {self.method} ({self.status})"


class ItemScore(models.Model):
    run = models.ForeignKey(ScoreRun, on_delete=models.CASCADE, related_name="item_scores")
    item_index = models.PositiveIntegerField()
    item_id = models.CharField(max_length=255)
    score = models.FloatField(null=True)
    ci_low = models.FloatField(null=True)
    ci_high = models.FloatField(null=True)
    best = models.PositiveIntegerField()
    worst = models.PositiveIntegerField()
    appearances = models.PositiveIntegerField()
    rank = models.PositiveIntegerField(
        null=True, help_text="1 for the best; within its group when the design has groups."
    )
    design_group = models.CharField(
        max_length=255, blank=True, help_text="Its tuple_generation.group_key value, if any."
    )
    source = models.CharField(
        max_length=255, blank=True, help_text="Its tuple_generation.system_key value, if any."
    )

    class Meta:
        ordering = ["run", "rank"]
        indexes = [models.Index(fields=["run", "rank"])]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.score}"


class ScoringState(models.Model):
    """Per project: when answers last changed, the oldest answer no run has read yet and
    when a recomputation was last queued, so bursts of answers coalesce into one run per
    scheme and busy sessions are still scored within SCORING_MAX_STALENESS."""

    project = models.OneToOneField(
        "projects.Project", on_delete=models.CASCADE, related_name="scoring_state"
    )
    last_answer_at = models.DateTimeField(null=True, blank=True)
    dirty = models.BooleanField(default=False)
    unscored_since = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the oldest answer that no queued or started run reads arrived.",
    )
    scheduled_at = models.DateTimeField(null=True, blank=True)
    broker_failed_at = models.DateTimeField(
        null=True, blank=True, help_text="Last time the task queue could not be reached."
    )

    def __str__(self) -> str:
        return f"{self.project}: dirty={self.dirty}"
