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
from django.utils.datastructures import MultiValueDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.annotation_files import EXPORT_TYPES, export_file
from annotation.api import PROJECT_EXAMPLE, ProjectListApi, ProjectOutputSerializer
from labs import services as lab_services
from labs.invites import create_missing_accounts, mail_invite
from projects import selectors, services
from projects.access import managed_project_or_404
from projects.api_errors import NOT_FOUND, error_response
from projects.downloads import attachment
from projects.forms import AddMembersForm, ProjectUploadForm, split_entries
from projects.models import Item, Membership, Unit

ROLES = Membership.Role.values

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


def _form_errors(form) -> dict:
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
            raise ValidationError(_form_errors(form))
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


class MemberSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(source="user.pk")
    username = serializers.CharField(source="user.username")
    email = serializers.CharField(source="user.email")
    joined_at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Membership
        fields = ["user_id", "username", "email", "role", "joined_at"]


def one_entry(value: str) -> None:
    if split_entries(value) != [value]:
        raise serializers.ValidationError(
            "one username or e-mail address per entry, without spaces, commas or semicolons"
        )


class MembersInputSerializer(serializers.Serializer):
    members = serializers.ListField(
        child=serializers.CharField(max_length=254, validators=[one_entry]),
        min_length=1,
        max_length=500,
        help_text="Usernames or e-mail addresses of accounts (at most 500).",
    )
    role = serializers.ChoiceField(ROLES, default=Membership.Role.ANNOTATOR)
    create_missing = serializers.BooleanField(
        default=False,
        help_text="Make an account for each entry nobody has yet; its invite link comes back "
        "(and goes by e-mail to an address entry).",
    )


class MemberResultSerializer(serializers.Serializer):
    entry = serializers.CharField(help_text="The entry as sent.")
    account = serializers.CharField(help_text="The account it names; empty for none.")
    outcome = serializers.ChoiceField(
        [
            "added",
            "account created",
            "already a member",
            "unknown account",
            "invalid entry",
            "skipped",
        ]
    )
    text = serializers.CharField(help_text="What became of it, in words.")
    invite_url = serializers.CharField(
        required=False, help_text="For a created account: where its owner sets a password."
    )
    emailed = serializers.BooleanField(required=False)


class MembersAddedSerializer(serializers.Serializer):
    results = MemberResultSerializer(many=True)


class MemberFilter(django_filters.FilterSet):
    role = django_filters.ChoiceFilter(choices=Membership.Role.choices)
    search = django_filters.CharFilter(
        method="filter_search", max_length=254, help_text="Part of a username or e-mail address."
    )

    class Meta:
        model = Membership
        fields = ["role"]

    def filter_search(self, queryset, name, value):
        return queryset.filter(Q(user__username__icontains=value) | Q(user__email__icontains=value))


MEMBER_EXAMPLE = {
    "user_id": 7,
    "username": "ada",
    "email": "ada@example.org",
    "role": "annotator",
    "joined_at": "2026-03-01T09:30:00Z",
}


def _invite_rows(request, project, invites) -> dict[str, dict]:
    """Each new account's invite link, e-mailed where an address is known."""
    rows = {}
    for invite in invites:
        link = request.build_absolute_uri(invite.path)
        try:
            emailed = mail_invite(invite=invite, link=link, project=project, sender=request.user)
        except OSError:  # a mail server that is down loses no link
            emailed = False
        rows[invite.user.username] = {"invite_url": link, "emailed": emailed}
    return rows


@extend_schema_view(
    get=extend_schema(
        tags=["Members"],
        operation_id="members_list",
        summary="List the project's members",
        responses={200: MemberSerializer(many=True), 404: NOT_FOUND},
        examples=[OpenApiExample("A page of members", value=MEMBER_EXAMPLE, response_only=True)],
    )
)
class MembersApi(generics.ListAPIView):
    """The project's members with their roles (for its managers, its lab's admins, staff).
    Lab admins and staff manage a project without being listed as its members."""

    serializer_class = MemberSerializer
    filterset_class = MemberFilter
    queryset = Membership.objects.none()  # for the schema; get_queryset scopes by project

    def get_queryset(self):
        project = managed_project_or_404(self.request.user, self.kwargs["slug"])
        return (
            Membership.objects.filter(project=project)
            .select_related("user")
            .order_by("user__username")
        )

    @extend_schema(
        tags=["Members"],
        operation_id="members_add",
        summary="Add members, or change their role",
        description="The web's members form: each entry (a username or an e-mail address) "
        "gets the role, or says why not; accounts already in the project get the new role. "
        "With create_missing, entries nobody has yet become new accounts with invite links.",
        request=MembersInputSerializer,
        responses={200: MembersAddedSerializer, 400: error_response("Refused."), 404: NOT_FOUND},
        examples=[
            OpenApiExample(
                "Two accounts",
                value={"members": ["ada", "grace@example.org"], "role": "annotator"},
                request_only=True,
            ),
            OpenApiExample(
                "What became of them",
                value={
                    "results": [
                        {
                            "entry": "ada",
                            "account": "ada",
                            "outcome": "added",
                            "text": "added as annotator",
                        },
                        {
                            "entry": "grace@example.org",
                            "account": "",
                            "outcome": "unknown account",
                            "text": "not added: no account has this e-mail address",
                        },
                    ]
                },
                response_only=True,
            ),
        ],
    )
    def post(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        data = MembersInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        form = AddMembersForm(
            {
                "usernames": "\n".join(data.validated_data["members"]),
                "role": data.validated_data["role"],
            }
        )
        if not form.is_valid():
            raise ValidationError(
                {("members" if k == "usernames" else k): v for k, v in _form_errors(form).items()}
            )
        entries, role = form.cleaned_data["usernames"], form.cleaned_data["role"]
        invites = {}
        if data.validated_data["create_missing"]:
            made = create_missing_accounts(entries, project=project, role=role)
            invites = _invite_rows(request, project, made)
        known = [e.user.username for e in entries if e.user is not None]
        changes = lab_services.add_project_members(project=project, usernames=known, role=role)
        rows = lab_services.member_results(entries, {c.username: c for c in changes})
        for row in rows:
            row.update(invites.get(row["account"], {}))
        return Response({"results": rows})

    @extend_schema(
        tags=["Members"],
        operation_id="member_remove",
        summary="Remove a member",
        parameters=[
            OpenApiParameter("username", str, required=True, description="The member's username.")
        ],
        request=None,
        responses={
            204: None,
            400: error_response("No username given."),
            404: error_response(
                "No such project or member.", {"detail": "ada is not a member of this project."}
            ),
        },
    )
    def delete(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        username = request.query_params.get("username", "")
        if not username:
            raise ValidationError({"username": ["Name the member to remove."]})
        membership = (
            Membership.objects.filter(project=project, user__username=username)
            .select_related("user")
            .first()
        )
        if membership is None:
            raise NotFound(f"{username[:150]} is not a member of this project.")
        lab_services.remove_project_member(
            project=project, user=membership.user, removed_by=request.user
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


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
