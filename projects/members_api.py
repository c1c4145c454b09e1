"""REST views for a project's members: list them, add people (making accounts and invites
where asked), remove one. The same services and rules as the members page."""

import django_filters
from django.db.models import Q
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from projects import services
from projects.access import managed_project_or_404
from projects.api import form_errors
from projects.api_errors import NOT_FOUND, error_response
from projects.forms import AddMembersForm, split_entries
from projects.invites import create_missing_accounts, mail_invite
from projects.models import Membership
from projects.storable import text_problem

ROLES = Membership.Role.values


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
                {("members" if k == "usernames" else k): v for k, v in form_errors(form).items()}
            )
        entries, role = form.cleaned_data["usernames"], form.cleaned_data["role"]
        invites = {}
        if data.validated_data["create_missing"]:
            made = create_missing_accounts(entries, project=project, role=role)
            invites = _invite_rows(request, project, made)
        known = [e.user.username for e in entries if e.user is not None]
        changes = services.add_project_members(project=project, usernames=known, role=role)
        rows = services.member_results(entries, {c.username: c for c in changes})
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
        if problem := text_problem(username):  # no account has such a name; asking fails
            raise ValidationError({"username": [f"The name {problem}."]})
        membership = (
            Membership.objects.filter(project=project, user__username=username)
            .select_related("user")
            .first()
        )
        if membership is None:
            raise NotFound(f"{username[:150]} is not a member of this project.")
        services.remove_project_member(
            project=project, user=membership.user, removed_by=request.user
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
