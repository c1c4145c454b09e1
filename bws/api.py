"""REST views of scores: the latest good run with its items, re-scoring, polling a run, and
an adaptive design with its target's answer."""

import math

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, Throttled, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from bws.comparisons import CompareRefused, compare_items
from bws.rank_results import ranks_with_k
from projects.access import managed_project_or_404

from . import adaptive, scheduling, selectors
from .core.diagnostics import StoredDiagnostics
from .core.scoring import METHODS
from .core.scoring_options import INTERVAL_METHODS
from .core.tail_coverage import OuterCuts
from .models import ItemScore, ScoreRun


class RunSerializer(serializers.ModelSerializer):
    diagnostics = serializers.SerializerMethodField(
        help_text="What the scores cannot tell: sentences (messages), the sizes of the "
        "separate groups of items (scores compare only within one), counts of never-shown, "
        "separated and one-sided items and of approximate intervals, and their thresholds. "
        "Empty for a run stored before diagnostics."
    )

    sources = serializers.JSONField(
        read_only=True,
        help_text="The systems ranked when the design names each item's system "
        "(tuple_generation.system_key): rows best first, each with its effect relative to "
        "the average system on the scores' scale, 95% interval (cluster-robust over the "
        "groups, else over items), rank and 95% rank set (rank_low..rank_high), items and "
        "groups. Null without a system_key.",
    )

    ranks = serializers.JSONField(
        read_only=True,
        help_text="Rank inference at 95%: level, procedure (bootstrap: max-t with the exact "
        "covariance; bonferroni: Holm over the pairs, for large studies), grouped (ranks "
        "within each group_key value), items (item id -> [low, high, simultaneous low, "
        "simultaneous high]: each interval holds the item's rank with 95% probability, the "
        "simultaneous ones all at once) and top_k (k; confident: items among the top k with "
        "95% confidence; possible: a set holding all of the top k). Null without calibrated "
        "intervals or above 20,000 items (2,000 with groups).",
    )

    class Meta:
        model = ScoreRun
        fields = [
            "id",
            "scheme",
            "method",
            "parameters",
            "trigger",
            "status",
            "error",
            "attempts",
            "n_judgments",
            "n_annotators",
            "n_tuples_annotated",
            "reliability",
            "convergence",
            "advice",
            "diagnostics",
            "sources",
            "ranks",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_diagnostics(self, run) -> dict:
        return selectors.run_diagnostics(run).summary()


class ItemScoreSerializer(serializers.ModelSerializer):
    """An item's score; the run's diagnostics (context "diagnostics") add whether its
    interval is approximate and why (a zero-width interval always is), its group when the
    items fall into separate groups, and whether it was chosen best or worst every time."""

    interval_approximate = serializers.SerializerMethodField()
    interval_note = serializers.SerializerMethodField()
    group = serializers.SerializerMethodField()
    separated = serializers.SerializerMethodField()
    interval_tail = serializers.SerializerMethodField()
    rank_interval = serializers.SerializerMethodField()

    class Meta:
        model = ItemScore
        fields = [
            "item_id",
            "score",
            "ci_low",
            "ci_high",
            "interval_approximate",
            "interval_note",
            "interval_tail",
            "best",
            "worst",
            "appearances",
            "rank",
            "rank_interval",
            "design_group",
            "source",
            "group",
            "separated",
        ]
        extra_kwargs = {
            "rank": {
                "help_text": "1 for the best; within design_group when the design has "
                "groups (tuple_generation.group_key): items of two groups were never "
                "compared, so no rank runs across them."
            },
            "design_group": {"help_text": "The item's group_key value (empty without one)."},
            "source": {"help_text": "The item's system_key value (empty without one)."},
        }

    def _diagnostics(self) -> StoredDiagnostics:
        return self.context.get("diagnostics") or StoredDiagnostics(None)

    def get_interval_approximate(self, item) -> bool:
        return self._diagnostics().approximate(item.item_index)

    def get_interval_note(self, item) -> str | None:
        return self._diagnostics().note(item.item_index, item.appearances)

    def get_interval_tail(self, item) -> dict | None:
        """For an item estimated in the lowest or highest tenth of the run: the side and
        the coverage such items' 95% intervals had in simulations, with a note."""
        cuts = self.context.get("tails")
        mark = cuts.mark(item.score, item.appearances) if cuts is not None else None
        return None if mark is None else mark.as_dict()

    def get_rank_interval(self, item) -> dict | None:
        """The item's rank with 95% intervals (marginal: low, high; all items at once:
        simultaneous_low, simultaneous_high); null when the run has none."""
        found = (self.context.get("ranks") or {}).get(item.item_id)
        if not found:
            return None
        names = ("low", "high", "simultaneous_low", "simultaneous_high")
        return dict(zip(names, found, strict=True))

    def get_group(self, item) -> int | None:
        """Group number (1 the largest) when the items fall into separate groups."""
        if item.score is None:
            return None
        return self._diagnostics().group(item.item_index)

    def get_separated(self, item) -> str | None:
        """'best' or 'worst' when the item was chosen so every time it was shown."""
        return self._diagnostics().separated(item.item_index)


class ScoresOutputSerializer(RunSerializer):
    items = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ["items"]

    @extend_schema_field(ItemScoreSerializer(many=True))
    def get_items(self, run) -> list[dict]:
        items = selectors.ranked_items(run)
        context = {
            "diagnostics": selectors.run_diagnostics(run),
            "tails": OuterCuts.of(run.method, items.values_list("score", flat=True)),
            "ranks": (run.ranks or {}).get("items"),
        }
        return ItemScoreSerializer(items, many=True, context=context).data


class RescoreInputSerializer(serializers.Serializer):
    scheme = serializers.CharField()
    method = serializers.ChoiceField(choices=list(METHODS), required=False)
    bootstrap = serializers.IntegerField(required=False, min_value=0, max_value=100_000)
    intervals = serializers.ChoiceField(
        choices=list(INTERVAL_METHODS),
        required=False,
        help_text="calibrated (the default: empirical-Bayes posterior, moderated t for "
        "counting) or bootstrap (percentile, over `bootstrap` resamples); coverage of each "
        "in benchmarks/RESULTS.md",
    )


class ScoresApi(APIView):
    """GET: the latest good run of a scheme (and method) with its items. POST: re-score."""

    @extend_schema(
        tags=["Scores"],
        operation_id="scores_retrieve",
        summary="Latest scores of a scheme",
        parameters=[
            OpenApiParameter("scheme", str, description="BWS scheme (default: the first)"),
            OpenApiParameter("method", str, enum=list(METHODS)),
            OpenApiParameter(
                "k",
                int,
                description="the k of ranks.top_k (default: 10% of the items, 1 to 10)",
            ),
        ],
        responses={200: ScoresOutputSerializer},
    )
    def get(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        schemes = selectors.bws_scheme_names(project)
        scheme = request.query_params.get("scheme") or (schemes[0] if schemes else "")
        if scheme not in schemes:
            raise ValidationError({"scheme": [f"no best-worst scheme {scheme!r}"]})
        method = request.query_params.get("method") or None
        if method and method not in METHODS:
            raise ValidationError({"method": [f"choose one of {', '.join(METHODS)}"]})
        run = selectors.latest_good_run(project, scheme, method)
        if run is None:
            raise NotFound("no scores yet for this scheme and method")
        data = ScoresOutputSerializer(run).data
        asked = request.query_params.get("k")
        if asked is not None:
            try:
                data["ranks"] = ranks_with_k(run.ranks, asked)
            except ValueError as exc:
                raise ValidationError({"k": [str(exc)]}) from exc
        return Response(data)

    @extend_schema(
        tags=["Scores"],
        operation_id="scores_rescore",
        summary="Re-score a scheme",
        description="Queues a run, or returns the scheme's queued run (it reads the answers "
        "as of its start), set to the parameters asked for. 429 with Retry-After past "
        "SCORING_MANUAL_RUNS_PER_HOUR new runs asked for in the project in an hour.",
        request=RescoreInputSerializer,
        responses={202: RunSerializer},
    )
    def post(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        data = RescoreInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        scheme = data.validated_data["scheme"]
        if scheme not in selectors.bws_scheme_names(project):
            raise ValidationError({"scheme": [f"no best-worst scheme {scheme!r}"]})
        try:
            run, created = scheduling.ask_for_run(
                project=project,
                scheme=scheme,
                method=data.validated_data.get("method"),
                bootstrap=data.validated_data.get("bootstrap"),
                trigger=ScoreRun.Trigger.MANUAL,
                intervals=data.validated_data.get("intervals"),
            )
        except ValueError as exc:  # a limit, e.g. SCORING_MAX_BOOTSTRAP_ITERATIONS
            raise ValidationError({"bootstrap": [str(exc)]}) from exc
        except scheduling.RunRefused as exc:  # SCORING_MANUAL_RUNS_PER_HOUR
            raise Throttled(wait=exc.retry_after, detail=str(exc)) from exc
        if created:
            scheduling.queue_run(run)
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class RunApi(APIView):
    """One run, to poll until its status is ok or failed."""

    @extend_schema(
        tags=["Runs"],
        operation_id="run_retrieve",
        summary="One scoring run",
        responses={200: RunSerializer},
    )
    def get(self, request, slug, run_id):
        project = managed_project_or_404(request.user, slug)
        run = get_object_or_404(ScoreRun, project=project, pk=run_id)
        return Response(RunSerializer(run).data)


class CompareApi(APIView):
    """Is A above B? Every pair of the items asked, from the answers as they are now."""

    @extend_schema(
        tags=["Scores"],
        operation_id="scores_compare",
        summary="Pairwise questions about items",
        description="Every pair of the items asked (2 to 20 item ids, comma-separated): the "
        "difference of their scores, its standard deviation, the two-sided p-value and "
        "Holm's adjusted p-value over the pairs, and the verdict at 95%: first_above, "
        "second_above or not_told_apart. Scored with calibrated intervals by the method "
        "asked (default: that of the scheme's latest scores).",
        parameters=[
            OpenApiParameter("items", str, required=True, description="item ids, a,b,c"),
            OpenApiParameter("scheme", str, description="BWS scheme (default: the first)"),
            OpenApiParameter("method", str, enum=list(METHODS)),
        ],
        responses={200: dict},
    )
    def get(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        schemes = selectors.bws_scheme_names(project)
        scheme = request.query_params.get("scheme") or (schemes[0] if schemes else "")
        if scheme not in schemes:
            raise ValidationError({"scheme": [f"no best-worst scheme {scheme!r}"]})
        method = request.query_params.get("method") or None
        if method and method not in METHODS:
            raise ValidationError({"method": [f"choose one of {', '.join(METHODS)}"]})
        if method is None:
            latest = selectors.latest_good_run(project, scheme, None)
            method = latest.method if latest is not None else "counting"
        ids = [part.strip() for part in request.query_params.get("items", "").split(",")]
        try:
            found = compare_items(
                project, scheme=scheme, method=method, item_ids=[i for i in ids if i]
            )
        except CompareRefused as exc:
            raise ValidationError({"items": [str(exc)]}) from exc
        return Response(found)


def _plain(value):
    """The design status as JSON holds it: tuples as lists, non-finite numbers as None."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class DesignApi(APIView):
    """An adaptive design: its batches and what the newest scores say of its target."""

    @extend_schema(
        tags=["Scores"],
        operation_id="design_retrieve",
        summary="The adaptive design and its target's answer",
        description="For a project whose tuples come in adaptive batches: the strategy, the "
        "batches (number, strategy, tuples, the scoring run each was designed from, when), "
        "the tuples made and still open, batch_tuples (a batch's size), ready_margin (a "
        "batch is designed when fewer tuples are open), margin (the same as the crowd's "
        "pace has it now: above ready_margin when the open tuples would run out while a "
        "batch is made) and max_appearances (per item), "
        "whether the design is complete, and the target: "
        "kind and words; for a narrow target (top_k, threshold, comparisons) the newest "
        "scores' answer (rows of item, with other for a pair, and p: the probability that "
        "the answer is right about it; the 50 surest), precision (the expected share of "
        "the answer that is right), all_right (the probability that all of it is), and the "
        "same projected after extra further judgments. unplaced: true while a threshold "
        "score cannot be placed on the scores' scale (no probabilities then). "
        "sure_pairs_right (comparisons) and precision_measured (a threshold score): how "
        "these probabilities fared in simulation, in percent. 404 for a balanced design.",
        responses={200: dict},
    )
    def get(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        status_ = adaptive.design_status(project)
        if status_ is None:
            raise NotFound(f"project {slug!r} has a balanced design: no adaptive batches")
        status_["batches"] = [
            {
                "number": batch["number"],
                "strategy": batch["strategy"],
                "n_tuples": batch["n_tuples"],
                "fit_run": batch["fit_run_id"],
                "created_at": batch["created_at"],
            }
            for batch in status_["batches"]
        ]
        return Response(_plain(status_))
