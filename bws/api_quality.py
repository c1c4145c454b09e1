"""REST views of annotator quality for a project's managers: the quality page's figures per
annotator (bws.quality.project_quality, computed once, as the page does), and leaving an
annotator out of scores and agreement or taking them back (crowds.gold.set_excluded, the
page's Exclude/Include button: the scores and the agreement report are computed again).

A project the caller may not manage is a 404 (projects.access).
"""

import django_filters
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from projects import services
from projects.access import managed_project_or_404
from projects.api_errors import NOT_FOUND, error_response
from projects.models import Membership
from projects.pagination import Pages

from .quality import AnnotatorQuality, QualityReport, project_quality

FLAGS = ["random", "reversed", "too_few_judgments", "ok"]


def flag(row: AnnotatorQuality, report: QualityReport, *, is_bws: bool) -> str | None:
    """The page's Flag column: None where it shows no flag (no best-worst scheme, or a
    manager without judgments)."""
    if not is_bws or (row.role == Membership.Role.MANAGER and not row.judgments):
        return None
    if row.reversed:
        return "reversed"
    if row.flagged:
        return "random"
    if row.judgments < report.min_judgments:
        return "too_few_judgments"
    return "ok"


class SchemeReliabilitySerializer(serializers.Serializer):
    """An annotator's estimated reliability in one best-worst scheme's newest model run."""

    scheme = serializers.CharField()
    method = serializers.CharField(help_text="bradley_terry or plackett_luce.")
    sensitivity = serializers.FloatField(
        allow_null=True,
        help_text="How closely their choices follow the scores: 1 the typical annotator, 0 "
        "random clicking (estimated with the scores, bws.core.annotator_model).",
    )
    low = serializers.FloatField(allow_null=True, help_text="Lower end of its 95% interval.")
    high = serializers.FloatField(allow_null=True, help_text="Upper end of its 95% interval.")
    judgments = serializers.IntegerField(help_text="The judgments it rests on.")
    joint = serializers.BooleanField(
        help_text="Whether the run's scores weighted annotators by these (annotators differed)."
    )


class QualityRowSerializer(serializers.Serializer):
    """One row of the quality page (a bws.quality.AnnotatorQuality)."""

    user_id = serializers.IntegerField()
    username = serializers.CharField()
    role = serializers.CharField(
        help_text="manager or annotator; empty for someone with answers who is no longer a member."
    )
    excluded = serializers.BooleanField(
        help_text="Left out of scores and agreement (their answers stay, marked in exports)."
    )
    answers = serializers.IntegerField(help_text="Ordinary units answered (gold units not).")
    gold_checks = serializers.IntegerField(help_text="Attention checks answered.")
    gold_right = serializers.IntegerField(
        help_text="Attention checks answered right (best-worst: best and worst both)."
    )
    gold_accuracy = serializers.FloatField(allow_null=True, help_text="gold_right / gold_checks.")
    best_accuracy = serializers.FloatField(
        allow_null=True, help_text="Share of best-worst attention checks whose best was right."
    )
    worst_accuracy = serializers.FloatField(
        allow_null=True, help_text="Share of best-worst attention checks whose worst was right."
    )
    training = serializers.CharField(
        help_text="not required, not started, in progress, passed or failed."
    )
    judgments = serializers.IntegerField(
        help_text="Best-worst judgments compared with the others' consensus."
    )
    agreement = serializers.FloatField(
        allow_null=True,
        help_text="Share of their judgments whose best item the others' scores rank above "
        "their worst item (a tie counts one half); null without judgments.",
    )
    p_value = serializers.FloatField(
        allow_null=True, help_text="One-sided binomial test of the agreement against one half."
    )
    median_seconds = serializers.FloatField(
        allow_null=True, help_text="Median time per ordinary unit."
    )
    flagged = serializers.BooleanField(help_text="Agreement looks like random clicking.")
    reversed = serializers.BooleanField(
        help_text="Agreement significantly below one half (the question read backwards?)."
    )
    reliability = SchemeReliabilitySerializer(
        many=True,
        help_text="Per best-worst scheme with a model run: the estimated sensitivity and its "
        "interval; empty before such a run.",
    )
    flag = serializers.SerializerMethodField(
        help_text="The page's Flag column: random, reversed, too_few_judgments or ok; null "
        "without a best-worst scheme, and for a manager without judgments."
    )

    def get_flag(self, row) -> str | None:
        return flag(row, self.context["report"], is_bws=self.context["is_bws"])


QUALITY_ROW_EXAMPLE = {
    "user_id": 7,
    "username": "ada",
    "role": "annotator",
    "excluded": False,
    "answers": 120,
    "gold_checks": 12,
    "gold_right": 11,
    "gold_accuracy": 0.9167,
    "best_accuracy": 1.0,
    "worst_accuracy": 0.9167,
    "training": "passed",
    "judgments": 240,
    "agreement": 0.8396,
    "p_value": 1.2e-27,
    "median_seconds": 14.5,
    "flagged": False,
    "reversed": False,
    "reliability": [
        {
            "scheme": "overall_quality",
            "method": "plackett_luce",
            "sensitivity": 1.08,
            "low": 0.81,
            "high": 1.35,
            "judgments": 240,
            "joint": False,
        }
    ],
    "flag": "ok",
}


class QualityPages(Pages):
    """A page of rows, with the project-wide figures the flags are measured against."""

    def get_paginated_response_schema(self, schema):
        paged = super().get_paginated_response_schema(schema)
        paged["properties"].update(
            {
                "bws": {
                    "type": "boolean",
                    "example": True,
                    "description": "Whether the project has a best-worst scheme (agreement "
                    "and flags are measured only then).",
                },
                "typical_agreement": {
                    "type": "number",
                    "nullable": True,
                    "description": "The project's typical consensus agreement.",
                    "example": 0.82,
                },
                "random_threshold": {
                    "type": "number",
                    "nullable": True,
                    "description": "Below this agreement, one half (random clicking) "
                    "explains an annotator better than the typical agreement.",
                    "example": 0.66,
                },
                "min_judgments": {
                    "type": "integer",
                    "description": "Judgments an annotator needs before being flagged.",
                    "example": 20,
                },
            }
        )
        paged["required"] = [*paged.get("required", []), "bws", "min_judgments"]
        return paged


class QualityFilter(django_filters.FilterSet):
    """Filters of the quality rows (applied to the report's rows, see QualityApi.list)."""

    flagged = django_filters.BooleanFilter(
        method="keep",
        help_text="Only annotators flagged as random or reversed (true), or neither (false).",
    )
    excluded = django_filters.BooleanFilter(
        method="keep", help_text="Only annotators left out (true), or counted (false)."
    )
    role = django_filters.ChoiceFilter(choices=Membership.Role.choices, method="keep")

    class Meta:
        model = Membership
        fields = []

    def keep(self, queryset, name, value):  # the rows are filtered in rows() below
        return queryset

    def rows(self, rows: list[AnnotatorQuality]) -> list[AnnotatorQuality]:
        wanted = self.form.cleaned_data
        if wanted.get("flagged") is not None:
            rows = [r for r in rows if (r.flagged or r.reversed) == wanted["flagged"]]
        if wanted.get("excluded") is not None:
            rows = [r for r in rows if r.excluded == wanted["excluded"]]
        if wanted.get("role"):
            rows = [r for r in rows if r.role == wanted["role"]]
        return rows


@extend_schema_view(
    get=extend_schema(
        tags=["Quality"],
        operation_id="quality_list",
        summary="Annotator quality: the quality page's figures per annotator",
        description="Per annotator, as the web's quality page: answers, gold accuracy (and "
        "for best-worst attention checks, best and worst separately), training, agreement "
        "with the consensus of the others' judgments, median time per unit, and the "
        "random-clicking and reversed flags. Someone left out is measured but is part of "
        "nobody's consensus. Rows in the page's order (annotators, then managers, each by "
        "username).",
        responses={
            200: QualityRowSerializer(many=True),
            400: error_response(
                "A filter's value was refused.",
                {
                    "detail": "role: Select a valid choice. boss is not one of the available "
                    "choices.",
                    "errors": {
                        "role": ["Select a valid choice. boss is not one of the available choices."]
                    },
                },
            ),
            404: NOT_FOUND,
        },
        examples=[
            OpenApiExample("A page of annotators", value=QUALITY_ROW_EXAMPLE, response_only=True)
        ],
    )
)
class QualityApi(generics.ListAPIView):
    """The quality page's rows, paged and filtered."""

    serializer_class = QualityRowSerializer
    filterset_class = QualityFilter
    pagination_class = QualityPages
    queryset = Membership.objects.none()  # for the schema's filters; rows come from the report

    def list(self, request, *args, **kwargs):
        project = managed_project_or_404(request.user, self.kwargs["slug"])
        filters = QualityFilter(request.query_params, queryset=self.queryset, request=request)
        if not filters.is_valid():
            raise ValidationError(dict(filters.errors))
        report = project_quality(project)
        is_bws = bool(project.settings.bws_schemes)
        page = self.paginate_queryset(filters.rows(report.rows))
        context = {**self.get_serializer_context(), "report": report, "is_bws": is_bws}
        response = self.get_paginated_response(
            QualityRowSerializer(page, many=True, context=context).data
        )
        response.data.update(
            {
                "bws": is_bws,
                "typical_agreement": report.typical if is_bws else None,
                "random_threshold": report.threshold if is_bws else None,
                "min_judgments": report.min_judgments,
            }
        )
        return response


# --------------------------------------------------------------------------- exclusions


class ExclusionSerializer(serializers.ModelSerializer):
    """A member and whether they are left out."""

    username = serializers.CharField(source="user.username")
    role = serializers.CharField(help_text="annotator (managers are never left out).")

    class Meta:
        model = Membership
        fields = ["username", "role", "excluded"]


class ExclusionResultSerializer(ExclusionSerializer):
    changed = serializers.SerializerMethodField(
        help_text="Whether this request changed it (false: it was so already; nothing is "
        "recomputed)."
    )

    class Meta(ExclusionSerializer.Meta):
        fields = [*ExclusionSerializer.Meta.fields, "changed"]

    def get_changed(self, membership) -> bool:
        return self.context["changed"]


class ExclusionInputSerializer(serializers.Serializer):
    username = serializers.CharField(
        max_length=150, help_text="The annotator's username (a member of the project)."
    )
    excluded = serializers.BooleanField(
        help_text="true leaves them out of scores and agreement; false counts them again."
    )


EXCLUSION_EXAMPLE = {"username": "ada", "role": "annotator", "excluded": True}


@extend_schema_view(
    get=extend_schema(
        tags=["Quality"],
        operation_id="exclusions_list",
        summary="List the annotators left out",
        description="The members whose answers are left out of the scores and the "
        "agreement report (exports keep their answers and mark them excluded).",
        responses={200: ExclusionSerializer(many=True), 404: NOT_FOUND},
        examples=[OpenApiExample("A page of left-out annotators", value=EXCLUSION_EXAMPLE)],
    ),
    post=extend_schema(
        tags=["Quality"],
        operation_id="exclusion_set",
        summary="Leave an annotator out, or count them again",
        description="The quality page's Exclude and Include button. When it changes "
        "anything, the scores of every best-worst scheme and the agreement report are "
        "computed again, as after new answers; the annotator's answers stay (exports mark "
        "them excluded). Managers cannot be left out.",
        request=ExclusionInputSerializer,
        responses={
            200: ExclusionResultSerializer,
            400: error_response(
                "No such member, or a manager.",
                {
                    "detail": "username: ada is not a member of this project.",
                    "errors": {"username": ["ada is not a member of this project."]},
                },
            ),
            404: NOT_FOUND,
        },
        examples=[
            OpenApiExample(
                "Leave ada out", value={"username": "ada", "excluded": True}, request_only=True
            ),
            OpenApiExample(
                "ada is left out",
                value={**EXCLUSION_EXAMPLE, "changed": True},
                response_only=True,
            ),
        ],
    ),
)
class ExclusionsApi(generics.ListAPIView):
    """The annotators left out (GET); leave one out or take them back (POST)."""

    serializer_class = ExclusionSerializer
    filterset_class = None
    queryset = Membership.objects.none()

    def get_queryset(self):
        project = managed_project_or_404(self.request.user, self.kwargs["slug"])
        return (
            Membership.objects.filter(project=project, excluded=True)
            .select_related("user")
            .order_by("user__username")
        )

    def post(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        data = ExclusionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["username"]
        member = (
            Membership.objects.filter(project=project, user__username=username)
            .select_related("user")
            .first()
        )
        if member is None:
            raise ValidationError({"username": [f"{username} is not a member of this project."]})
        if member.role == Membership.Role.MANAGER:
            raise ValidationError({"username": ["A manager cannot be left out."]})
        changed = services.set_excluded(
            project=project, user=member.user, excluded=data.validated_data["excluded"]
        )
        member.refresh_from_db(fields=["excluded"])
        return Response(ExclusionResultSerializer(member, context={"changed": changed}).data)
