from django.contrib import admin

from .models import BwsTuple, ItemScore, ScoreRun, ScoringState, TupleBatch


@admin.register(BwsTuple)
class BwsTupleAdmin(admin.ModelAdmin):
    list_display = ["tuple_id", "project", "position", "instance", "item_ids"]
    list_filter = ["project"]
    search_fields = ["tuple_id"]
    list_select_related = ["project", "instance", "unit"]
    raw_id_fields = ["unit"]
    readonly_fields = ["item_ids", "item_indices"]


class ItemScoreInline(admin.TabularInline):
    model = ItemScore
    extra = 0
    max_num = 0
    can_delete = False
    readonly_fields = [
        "item_id",
        "score",
        "ci_low",
        "ci_high",
        "best",
        "worst",
        "appearances",
        "rank",
    ]
    fields = readonly_fields


@admin.register(ScoreRun)
class ScoreRunAdmin(admin.ModelAdmin):
    list_display = [
        "project",
        "scheme",
        "method",
        "status",
        "n_judgments",
        "trigger",
        "finished_at",
    ]
    list_filter = ["project", "status", "method", "trigger"]
    readonly_fields = ["reliability", "convergence", "stats_text", "parameters", "error"]


@admin.register(ItemScore)
class ItemScoreAdmin(admin.ModelAdmin):
    list_display = ["item_id", "run", "score", "ci_low", "ci_high", "rank"]
    list_select_related = ["run"]
    raw_id_fields = ["run"]


@admin.register(ScoringState)
class ScoringStateAdmin(admin.ModelAdmin):
    list_display = ["project", "dirty", "last_answer_at", "scheduled_at"]


@admin.register(TupleBatch)
class TupleBatchAdmin(admin.ModelAdmin):
    """Batches of an adaptive design: a record, never edited (they are designed, not typed)."""

    list_display = ["project", "number", "strategy", "n_tuples", "seed", "created_at"]
    list_filter = ["project", "strategy"]
    raw_id_fields = ["fit_run"]
    readonly_fields = ["project", "number", "strategy", "designer", "fit_run", "seed", "n_tuples"]
