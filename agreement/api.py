"""REST view of a project's agreement report (managers and staff)."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from agreement.core.report import AgreementInputError
from projects.access import managed_project_or_404

from . import selectors, services


class AgreementOutputSerializer(serializers.Serializer):
    project = serializers.SlugField()
    computed_at = serializers.DateTimeField()
    age_seconds = serializers.IntegerField(help_text="How old the stored report is.")
    n_annotations = serializers.IntegerField(help_text="Stored answers the report read.")
    n_records = serializers.IntegerField(help_text="Annotator-unit records the report read.")
    model_annotators = serializers.ListField(child=serializers.CharField())
    computed_in_request = serializers.BooleanField(
        help_text="True when no report was stored and this request computed the first one."
    )
    iaa_url = serializers.URLField(help_text="The report as an HTML page.")
    schemes = serializers.DictField(
        child=serializers.DictField(),
        help_text="Per scheme name, the agreement figures its scheme type defines; an undefined "
        "figure is null with a `notes` entry giving the reason.",
    )


class AgreementErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


class AgreementApi(APIView):
    """The project's latest agreement report (computed in the request if none is stored)."""

    @extend_schema(
        tags=["Agreement"],
        operation_id="project_agreement",
        summary="Agreement report of a project",
        description="The latest stored inter-annotator agreement report: per scheme, "
        "Krippendorff's alpha, Fleiss' and Cohen's kappa and percent agreement for "
        "categorical schemes and traces, mean matched-IoU agreement for 3D boxes and time "
        "segments (not chance-corrected), best/worst alpha and split-half for BWS. The "
        "report is recomputed by the worker after annotation sessions; `age_seconds` says "
        "how old it is. Managers and staff only: anyone else gets 404.",
        responses={200: AgreementOutputSerializer, 404: None, 422: AgreementErrorSerializer},
        examples=[
            OpenApiExample(
                "A radio scheme",
                value={
                    "project": "news-topics",
                    "computed_at": "2026-03-01T14:22:00Z",
                    "age_seconds": 120,
                    "n_annotations": 300,
                    "n_records": 300,
                    "model_annotators": [],
                    "computed_in_request": False,
                    "iaa_url": "https://annolab.example.org/projects/news-topics/admin/iaa",
                    "schemes": {
                        "topic": {
                            "type": "radio",
                            "alpha_nominal": 0.71,
                            "fleiss_kappa": 0.7,
                            "cohen_kappa": 0.72,
                            "percent_agreement": 0.83,
                            "n_units": 100,
                            "n_annotators": 3,
                            "notes": [],
                        }
                    },
                },
                response_only=True,
            )
        ],
    )
    def get(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        iaa_url = request.build_absolute_uri(reverse("agreement-iaa", args=[project.slug]))
        try:
            report, computed_now = services.latest_or_compute(project=project)
        except AgreementInputError as exc:
            error = selectors.report_error_document(project, str(exc), iaa_url=iaa_url)
            return Response(error, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        data = selectors.report_document(
            project, report, computed_now=computed_now, iaa_url=iaa_url
        )
        return Response(AgreementOutputSerializer(data).data)
