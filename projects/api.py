"""REST views for what a manager does on the web: create a project from uploaded files,
manage its members, list its items and tuples, export its answers.

Each view calls the service the web page calls (the same checks, limits and messages);
projects/api_errors.py gives every refusal its one shape. Who may do what is
projects/access.py's rule: a project the caller may not manage is a 404.
"""

from collections import Counter

import django_filters
from django import forms
from django.db import connection
from django.db.models import Q
from django.shortcuts import get_object_or_404
from django.utils.datastructures import MultiValueDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from projects import selectors, services
from projects.access import managed_project_or_404
from projects.api_errors import NOT_FOUND, error_response
from projects.forms import ProjectUploadForm
from projects.models import Item, Project, Unit


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Answers given (for an annotator: theirs).")
    total = serializers.IntegerField(help_text="Answers the design asks for.")
    percent = serializers.FloatField()


class ProjectOutputSerializer(serializers.ModelSerializer):
    lab = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    role = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["slug", "name", "lab", "allow_all_users", "created_at", "role", "progress"]

    def get_role(self, project) -> str | None:
        return selectors.project_role(self.context["request"].user, project)

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, project) -> dict:
        progress = self.context.get("progress", {}).get(project.pk)
        if progress is None:
            progress = selectors.project_progress([project])[project.pk]
        return {"done": progress.done, "total": progress.total, "percent": progress.percent}


PROJECT_EXAMPLE = {
    "slug": "mt-ranking",
    "name": "MT Fluency and Adequacy (BWS)",
    "lab": "demo-lab",
    "allow_all_users": False,
    "created_at": "2026-03-01T09:30:00Z",
    "role": "annotator",
    "progress": {"done": 120, "total": 400, "percent": 30.0},
}


@extend_schema_view(
    get=extend_schema(
        tags=["Projects"],
        operation_id="projects_list",
        summary="List your projects",
        examples=[
            # one project: the schema puts it in a page of results
            OpenApiExample("A page of projects", value=PROJECT_EXAMPLE, response_only=True)
        ],
    )
)
class ProjectListApi(generics.ListAPIView):
    """Projects the caller may see, with their role and progress."""

    serializer_class = ProjectOutputSerializer

    def get_queryset(self):
        return selectors.visible_projects(self.request.user).order_by("name")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        page = getattr(self, "_page", None)
        if page is not None:
            context["progress"] = selectors.project_progress(page)
        return context

    def paginate_queryset(self, queryset):
        self._page = super().paginate_queryset(queryset)
        return self._page


@extend_schema_view(
    get=extend_schema(
        tags=["Projects"],
        operation_id="project_retrieve",
        summary="One project",
        examples=[OpenApiExample("A project", value=PROJECT_EXAMPLE, response_only=True)],
    )
)
class ProjectDetailApi(generics.RetrieveAPIView):
    """One project the caller may see (404 for any other)."""

    serializer_class = ProjectOutputSerializer

    def get_object(self):
        return get_object_or_404(
            selectors.visible_projects(self.request.user), slug=self.kwargs["slug"]
        )


# --------------------------------------------------------------------------- projects


class ProjectCreateInputSerializer(serializers.Serializer):
    """For the schema: the form's fields, checked by projects.forms.ProjectUploadForm."""

    config_file = serializers.FileField(help_text="The project's YAML config (.yaml or .yml).")
    data_files = serializers.ListField(
        child=serializers.FileField(),
        help_text="The files its data_files list names (.jsonl, .json, .csv or .tsv); "
        "send the field once per file.",
    )
    lab = serializers.SlugField(
        required=False,
        help_text="The lab's slug; may be left out by someone who may create projects in "
        "one lab only.",
    )


class ProjectCreatedSerializer(ProjectOutputSerializer):
    n_items = serializers.SerializerMethodField()
    n_instances = serializers.SerializerMethodField()
    n_tuples = serializers.SerializerMethodField()
    design_notes = serializers.SerializerMethodField()

    class Meta(ProjectOutputSerializer.Meta):
        fields = ProjectOutputSerializer.Meta.fields + [
            "n_items",
            "n_instances",
            "n_tuples",
            "design_notes",
        ]

    def _result(self):
        return self.context["result"]

    def get_n_items(self, project) -> int:
        return self._result().n_items

    def get_n_instances(self, project) -> int:
        return self._result().n_instances

    def get_n_tuples(self, project) -> int:
        return self._result().n_tuples

    def get_design_notes(self, project) -> list[str]:
        return list(self._result().design_notes)


def _choose_lab(labs, slug: str | None):
    """The lab to create in: the one named, or the only one the caller may create in."""
    if slug:
        lab = labs.filter(slug=slug).first()
        if lab is None:
            raise ValidationError({"lab": [f"You may not create projects in a lab named {slug}."]})
        return lab
    if labs.count() == 1:
        return labs.first()
    names = ", ".join(labs.order_by("slug").values_list("slug", flat=True)[:20])
    raise ValidationError({"lab": [f"Name the lab to create the project in: {names}."]})


def form_errors(form) -> dict:
    return {
        ("non_field_errors" if key == "__all__" else key): list(messages)
        for key, messages in form.errors.items()
    }


CREATED_EXAMPLE = {
    **PROJECT_EXAMPLE,
    "role": "manager",
    "progress": {"done": 0, "total": 400, "percent": 0.0},
    "n_items": 40,
    "n_instances": 0,
    "n_tuples": 100,
    "design_notes": [],
}


@extend_schema_view(
    post=extend_schema(
        tags=["Projects"],
        operation_id="project_create",
        summary="Create a project from a config and its data files",
        description="Multipart upload, as on the web's new-project page, with the same "
        "limits (UPLOAD_MAX_FILE_MB, UPLOAD_MAX_TOTAL_MB, CONFIG_MAX_BYTES and the design "
        "limits) and the same messages. Every path in the config must stay inside the "
        "upload's own folder. Nothing is kept when the project is refused. For lab admins "
        "(in their labs) and staff.",
        request={"multipart/form-data": ProjectCreateInputSerializer},
        responses={
            201: ProjectCreatedSerializer,
            400: error_response(
                "The files were refused; errors say why.",
                {
                    "detail": "config.yaml: data_files: 'items.jsonl' was not uploaded",
                    "errors": {
                        "non_field_errors": [
                            "config.yaml: data_files: 'items.jsonl' was not uploaded"
                        ]
                    },
                },
            ),
            403: error_response(
                "Only lab admins and staff create projects.",
                {"detail": "Only lab admins create projects."},
            ),
        },
        examples=[OpenApiExample("Created", value=CREATED_EXAMPLE, response_only=True)],
    )
)
class ProjectListCreateApi(ProjectListApi):
    """List the projects you may see (GET); create one from uploaded files (POST)."""

    parser_classes = [MultiPartParser, FormParser]

    def post(self, request):
        labs = selectors.labs_for_project_creation(request.user)
        if not labs.exists():
            raise PermissionDenied("Only lab admins create projects.")
        lab_slug = request.data.get("lab")  # reads the request: its files, within limits
        # Files the upload handler dropped for their size (projects/uploads.py).
        refused = list(getattr(request._request, "upload_refusals", []))
        if refused:
            raise ValidationError({"non_field_errors": refused})
        lab = _choose_lab(labs, lab_slug if isinstance(lab_slug, str) else None)
        files = MultiValueDict(
            {key: request.FILES.getlist(key) for key in ("config_file", "data_files")}
        )
        form = ProjectUploadForm({"lab": lab.pk}, files, labs=labs)
        if not form.is_valid():
            raise ValidationError(form_errors(form))
        try:
            result = services.create_project_from_upload(
                config_file=form.cleaned_data["config_file"],
                data_files=form.cleaned_data["data_files"],
                lab=lab,
                owner=request.user,
            )
        except services.ProjectImportError as exc:
            raise ValidationError({"non_field_errors": str(exc).splitlines()}) from None
        context = {**self.get_serializer_context(), "result": result}
        body = ProjectCreatedSerializer(result.project, context=context).data
        return Response(body, status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------- members


# --------------------------------------------------------------------------- items, tuples


def appearances(project) -> Counter:
    """How many of the project's tuples show each item, by Item.index."""
    counts: Counter = Counter()
    for indices in Unit.objects.filter(project=project, kind=Unit.Kind.TUPLE).values_list(
        "item_indices", flat=True
    ):
        counts.update(indices or [])
    return counts


class ItemSerializer(serializers.ModelSerializer):
    appearances = serializers.SerializerMethodField(help_text="Tuples that show the item.")

    class Meta:
        model = Item
        fields = ["item_id", "index", "text", "data", "appearances"]

    def get_appearances(self, item) -> int:
        return self.context["appearances"][item.index]


@extend_schema_field(OpenApiTypes.INT)
class CountFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField


class ItemFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(
        method="filter_search", max_length=1000, help_text="Part of the item's id or text."
    )
    min_appearances = CountFilter(
        method="filter_appearances", min_value=0, help_text="Shown in at least this many tuples."
    )
    max_appearances = CountFilter(
        method="filter_appearances", min_value=0, help_text="Shown in at most this many tuples."
    )

    class Meta:
        model = Item
        fields = ["item_id"]

    def filter_search(self, queryset, name, value):
        return queryset.filter(Q(item_id__icontains=value) | Q(text__icontains=value))

    def filter_appearances(self, queryset, name, value):
        counts = self.request.appearances
        indices = queryset.values_list("index", flat=True)
        if name == "min_appearances":
            keep = [i for i in indices if counts[i] >= value]
        else:
            keep = [i for i in indices if counts[i] <= value]
        return queryset.filter(index__in=keep)


ITEM_EXAMPLE = {
    "item_id": "s1",
    "index": 0,
    "text": "The cat sat on the mat.",
    "data": {"id": "s1", "text": "The cat sat on the mat.", "system": "A"},
    "appearances": 10,
}


@extend_schema_view(
    get=extend_schema(
        tags=["Items"],
        operation_id="items_list",
        summary="List the project's items",
        responses={200: ItemSerializer(many=True), 404: NOT_FOUND},
        examples=[OpenApiExample("A page of items", value=ITEM_EXAMPLE, response_only=True)],
    )
)
class ItemsApi(generics.ListAPIView):
    """The project's items in their order, with how many tuples show each."""

    serializer_class = ItemSerializer
    filterset_class = ItemFilter
    queryset = Item.objects.none()

    def get_queryset(self):
        project = managed_project_or_404(self.request.user, self.kwargs["slug"])
        self.request.appearances = appearances(project)
        return Item.objects.filter(project=project).order_by("index")

    def get_serializer_context(self):
        context = super().get_serializer_context()
        context["appearances"] = getattr(self.request, "appearances", Counter())
        return context


class TupleSerializer(serializers.ModelSerializer):
    tuple_id = serializers.CharField(source="external_id")
    annotators = serializers.IntegerField(
        source="completed", help_text="Annotators who finished it."
    )

    class Meta:
        model = Unit
        fields = ["id", "tuple_id", "position", "item_ids", "annotators"]


class TupleFilter(django_filters.FilterSet):
    item = django_filters.CharFilter(
        method="filter_item", max_length=255, help_text="Only tuples showing this item id."
    )
    tuple_id = django_filters.CharFilter(field_name="external_id", max_length=255)
    scheme = django_filters.CharFilter(
        method="filter_scheme", max_length=200, help_text="Only tuples answered in this scheme."
    )
    answered = django_filters.BooleanFilter(
        method="filter_answered", help_text="Only tuples with (true) or without (false) answers."
    )

    class Meta:
        model = Unit
        fields = []

    def filter_item(self, queryset, name, value):
        if connection.features.supports_json_field_contains:
            return queryset.filter(item_ids__contains=[value])
        keep = [pk for pk, ids in queryset.values_list("pk", "item_ids") if value in (ids or [])]
        return queryset.filter(pk__in=keep)

    def filter_scheme(self, queryset, name, value):
        return queryset.filter(annotations__scheme=value).distinct()

    def filter_answered(self, queryset, name, value):
        answered = Q(annotations__isnull=False)
        return (queryset.filter(answered) if value else queryset.exclude(answered)).distinct()


TUPLE_EXAMPLE = {
    "id": 812,
    "tuple_id": "t0001",
    "position": 0,
    "item_ids": ["s1", "s7", "s12", "s30"],
    "annotators": 3,
}


@extend_schema_view(
    get=extend_schema(
        tags=["Items"],
        operation_id="tuples_list",
        summary="List the project's best-worst tuples",
        responses={200: TupleSerializer(many=True), 404: NOT_FOUND},
        examples=[OpenApiExample("A page of tuples", value=TUPLE_EXAMPLE, response_only=True)],
    )
)
class TuplesApi(generics.ListAPIView):
    """The project's best-worst tuples in design order (none for a project of instances)."""

    serializer_class = TupleSerializer
    filterset_class = TupleFilter
    queryset = Unit.objects.none()

    def get_queryset(self):
        project = managed_project_or_404(self.request.user, self.kwargs["slug"])
        return Unit.objects.filter(project=project, kind=Unit.Kind.TUPLE).order_by("position")


# --------------------------------------------------------------------------- export
