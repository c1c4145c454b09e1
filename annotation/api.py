"""REST views for annotators: projects, the queue, answers (tokens: labs/token_api.py)."""

import django_filters
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.annotation_files import EXPORT_TYPES, export_file
from annotation.answers import SubmitRefused, submit_answers
from annotation.models import Annotation
from annotation.queue import WAIT_SECONDS, next_unit, units_coming
from projects import selectors
from projects.access import managed_project_or_404, visible_project_or_404
from projects.api_errors import NOT_FOUND, error_response
from projects.downloads import attachment
from projects.validation import MAX_MILLISECONDS, AnswerError


class UnitItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    letter = serializers.CharField()
    source = serializers.CharField(
        allow_blank=True, required=False, help_text="Only when the BWS scheme shows sources."
    )


class UnitMediaSerializer(serializers.Serializer):
    url = serializers.CharField(
        help_text="What to load: a stored file's /projects/<slug>/media/<path> URL, or the "
        "URL written in the data."
    )
    kind = serializers.ChoiceField(["audio", "video", "pointcloud"])
    stored = serializers.BooleanField(help_text="Whether the project stores the file.")
    points_url = serializers.CharField(
        allow_null=True,
        help_text="A stored point cloud's points, decoded: little-endian float32 x, y, z, "
        "intensity (header X-Point-Count); null for anything else.",
    )


class UnitOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    kind = serializers.CharField()
    items = UnitItemSerializer(many=True)
    context = serializers.ListField(child=serializers.DictField())
    data = serializers.DictField()
    schemes = serializers.ListField(child=serializers.DictField())
    media = serializers.DictField(
        child=UnitMediaSerializer(),
        help_text="Per field of data that names a media file (a clip, a point cloud).",
    )
    source_label = serializers.CharField(
        required=False,
        help_text="What the items' sources are called; only when a BWS scheme shows sources.",
    )


WAIT_DETAIL = (
    "no unit is free yet: the next ones are being chosen from the answers so far; ask "
    "again after Retry-After seconds"
)


class WaitSerializer(serializers.Serializer):
    detail = serializers.CharField()
    retry_after = serializers.IntegerField(help_text="Seconds to wait before asking again.")


class QueueNextApi(APIView):
    """Reserve the next unit for the caller (200), 202 when more units are on their way
    (ask again after Retry-After seconds), or 204 when there is no more work."""

    @extend_schema(
        tags=["Queue"],
        operation_id="queue_next",
        summary="Reserve your next unit",
        description="200 with the unit; 202 when none is free yet but more are on their way "
        "(an adaptive design's next batch is being designed from the answers so far): ask "
        "again after the Retry-After header's seconds; 204 when there is no more work for "
        "the caller.",
        request=None,
        responses={200: UnitOutputSerializer, 202: WaitSerializer, 204: None},
    )
    def post(self, request, slug):
        project = visible_project_or_404(request.user, slug)
        unit = next_unit(project=project, user=request.user)
        if unit is None and units_coming(project=project, user=request.user):
            return Response(
                {"detail": WAIT_DETAIL, "retry_after": WAIT_SECONDS},
                status=status.HTTP_202_ACCEPTED,
                headers={"Retry-After": str(WAIT_SECONDS)},
            )
        if unit is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        payload = selectors.unit_payload(project, unit, request.user)
        if selectors.names_hidden(project, request.user):
            payload["external_id"] = selectors.unit_name(unit, hidden=True)
        return Response(payload)


class AnnotationInputSerializer(serializers.Serializer):
    unit = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    annotations = serializers.DictField()
    client_id = serializers.UUIDField(required=False, allow_null=True)
    time_taken_ms = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=MAX_MILLISECONDS
    )


class SubmitRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    annotation_ids = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Stored under the client_id."
    )
    unit_id = serializers.IntegerField(required=False)
    unit = serializers.CharField(required=False)


class AnnotationOutputSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username")
    unit_id = serializers.IntegerField(source="unit.pk")
    unit = serializers.CharField(source="unit.external_id")

    class Meta:
        model = Annotation
        fields = [
            "id",
            "unit_id",
            "unit",
            "scheme",
            "value",
            "annotator",
            "time_taken_ms",
            "created_at",
            "updated_at",
        ]

    def to_representation(self, annotation):
        body = super().to_representation(annotation)
        if self.context.get("names_hidden"):
            body["unit"] = selectors.unit_name(annotation.unit, hidden=True)
        return body


class AnnotationFilter(django_filters.FilterSet):
    mine = django_filters.BooleanFilter(method="filter_mine")
    scheme = django_filters.CharFilter()

    class Meta:
        model = Annotation
        fields = ["scheme"]

    def filter_mine(self, queryset, name, value):
        return queryset.filter(annotator=self.request.user) if value else queryset


class AnnotationsSchema(AutoSchema):
    """Only the GET lists pages of answers with filters; a POST answers with a plain list."""

    def _get_paginator(self):
        return super()._get_paginator() if self.method == "GET" else None

    def get_filter_backends(self):
        return super().get_filter_backends() if self.method == "GET" else []


@extend_schema_view(
    get=extend_schema(tags=["Answers"], operation_id="answers_list", summary="List answers")
)
class AnnotationsApi(generics.ListCreateAPIView):
    """Submit answers to a unit; list answers (annotators see only their own)."""

    schema = AnnotationsSchema()
    serializer_class = AnnotationOutputSerializer
    filterset_class = AnnotationFilter
    queryset = Annotation.objects.none()  # for the schema; get_queryset scopes by project

    def get_queryset(self):
        project = visible_project_or_404(self.request.user, self.kwargs["slug"])
        answers = Annotation.objects.filter(project=project).select_related("annotator", "unit")
        if not selectors.can_manage(self.request.user, project):
            answers = answers.filter(annotator=self.request.user)
        self.names_hidden = selectors.names_hidden(project, self.request.user)
        return answers.order_by("id")

    def get_serializer_context(self):
        hidden = getattr(self, "names_hidden", False)
        return {**super().get_serializer_context(), "names_hidden": hidden}

    @extend_schema(
        tags=["Answers"],
        operation_id="answers_submit",
        summary="Answer a unit",
        request=AnnotationInputSerializer,
        responses={
            201: AnnotationOutputSerializer(many=True),
            200: AnnotationOutputSerializer(many=True),
            409: SubmitRefusedSerializer,
        },
        description="Answers a unit the caller holds a live lease on (from queue/next), or "
        "changes the caller's earlier answer to it. 200 repeats the stored answers when the "
        "same client_id comes again with the same answers; 409 when the unit is not reserved "
        "for the caller, or the client_id was used for other answers or another unit.",
    )
    def post(self, request, slug):
        project = visible_project_or_404(request.user, slug)
        data = AnnotationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = submit_answers(
                project=project,
                user=request.user,
                unit_id=data.validated_data["unit"],
                answers=data.validated_data["annotations"],
                client_id=data.validated_data.get("client_id"),
                time_taken_ms=data.validated_data.get("time_taken_ms"),
                source="api",
            )
        except AnswerError as exc:
            field_errors = {k: [v] for k, v in exc.errors.items()}
            if set(exc.errors) <= {"unit", "client_id", "annotations", "time_taken_ms"}:
                raise ValidationError(field_errors) from exc
            raise ValidationError({"annotations": field_errors}) from exc
        except SubmitRefused as exc:
            body = exc.details()
            if exc.stored and selectors.names_hidden(project, request.user):
                body["unit"] = selectors.unit_name(exc.stored[0].unit, hidden=True)
            return Response(body, status=status.HTTP_409_CONFLICT)
        code = status.HTTP_200_OK if result.replayed else status.HTTP_201_CREATED
        hidden = selectors.names_hidden(project, request.user)
        return Response([answer_body(a, hidden=hidden) for a in result.annotations], status=code)


_STAMP = serializers.DateTimeField()


def answer_body(annotation: Annotation, *, hidden: bool = False) -> dict:
    """AnnotationOutputSerializer's representation of one answer, built directly: the
    serializer would build its fields from the model on every answer (a test holds the
    two equal)."""
    return {
        "id": annotation.pk,
        "unit_id": annotation.unit.pk,
        "unit": selectors.unit_name(annotation.unit, hidden=hidden),
        "scheme": annotation.scheme,
        "value": annotation.value,
        "annotator": annotation.annotator.username,
        "time_taken_ms": annotation.time_taken_ms,
        "created_at": _STAMP.to_representation(annotation.created_at),
        "updated_at": _STAMP.to_representation(annotation.updated_at),
    }


class ErrorsAsJson(DefaultContentNegotiation):
    """The export answers a file itself; only its refusals are rendered, always as JSON.
    (DRF's own negotiation would read ?format= as a renderer's name.)"""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportApi(APIView):
    """Every answer of the project in the interchange format: the web export's file."""

    content_negotiation_class = ErrorsAsJson

    @extend_schema(
        tags=["Export"],
        operation_id="project_export",
        summary="Export the project's answers",
        description="One record per annotator and unit, as the web page's export: JSON "
        "Lines, or CSV/TSV whose cells cannot start a spreadsheet formula.",
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=list(EXPORT_TYPES),
                default="jsonl",
                description="jsonl, csv or tsv.",
            )
        ],
        responses={
            (200, media_type): OpenApiResponse(OpenApiTypes.BINARY, description="The file.")
            for media_type in EXPORT_TYPES.values()
        }
        | {
            400: error_response(
                "Unknown format.",
                {
                    "detail": "format: choose jsonl, csv or tsv",
                    "errors": {"format": ["choose jsonl, csv or tsv"]},
                },
            ),
            404: NOT_FOUND,
        },
    )
    def get(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in EXPORT_TYPES:
            raise ValidationError({"format": ["choose jsonl, csv or tsv"]})
        body, filename, content_type = export_file(project, fmt)
        return attachment(body, filename=filename, content_type=content_type)
