"""Tuples of a BWS project, designed once when the project is built and never regenerated."""

from django.db import models


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
    item_ids = models.JSONField(help_text="Item ids in position order.")
    item_indices = models.JSONField(help_text="The same items as Item.index values.")

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "tuple_id"], name="unique_tuple_id"),
            models.UniqueConstraint(fields=["project", "position"], name="unique_tuple_position"),
        ]

    def __str__(self) -> str:
        return f"{self.tuple_id}: {', '.join(self.item_ids)}"
