"""REST views for labs and their people: the labs page and a lab's page over the API.

Staff create labs and appoint or remove lab admins; a lab's admins add and remove its
members. Every change goes through labs.services, the rule the web pages follow; a lab the
caller does not belong to (staff: every lab) is a 404.
"""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from labs import services as labs
from labs.services import LabRefused
from projects import selectors
from projects.api_errors import error_response
from projects.models import Lab, LabMembership

LAB_NOT_FOUND = error_response(
    "No such lab, or you do not belong to it.", {"detail": "No such lab."}, name="Hidden"
)
FORBIDDEN = error_response("You may not make this change.", {"detail": "Only staff create labs."})


def _refused(exc: LabRefused):
    """The API's exception for a refusal of labs.services, with its status."""
    if exc.status == 403:
        return PermissionDenied(str(exc))
    if exc.status == 404:
        return NotFound(str(exc))
    return ValidationError({"non_field_errors": [str(exc)]})


class LabSerializer(serializers.ModelSerializer):
    n_admins = serializers.IntegerField(read_only=True, help_text="Its lab admins.")
    n_people = serializers.IntegerField(read_only=True, help_text="Its admins and members.")
    n_projects = serializers.IntegerField(read_only=True)

    class Meta:
        model = Lab
        fields = ["slug", "name", "is_default", "n_admins", "n_people", "n_projects"]


class LabInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(
        max_length=100, required=False, default="", help_text="Made from the name if left out."
    )
    admins = serializers.ListField(
        child=serializers.CharField(max_length=150),
        required=False,
        default=list,
        max_length=100,
        help_text="Usernames of its first lab admins.",
    )


LAB_EXAMPLE = {
    "slug": "nlp-lab",
    "name": "NLP lab",
    "is_default": False,
    "n_admins": 1,
    "n_people": 12,
    "n_projects": 3,
}


@extend_schema_view(
    get=extend_schema(
        tags=["Labs"],
        operation_id="labs_list",
        summary="List your labs",
        description="The labs you belong to (staff: every lab), with their numbers of "
        "admins, people and projects.",
        examples=[OpenApiExample("A lab", value=LAB_EXAMPLE, response_only=True)],
    ),
    post=extend_schema(
        tags=["Labs"],
        operation_id="lab_create",
        summary="Create a lab (staff)",
        request=LabInputSerializer,
        responses={
            201: LabSerializer,
            400: error_response("Refused."),
            403: FORBIDDEN,
        },
        examples=[
            OpenApiExample(
                "A lab with its admin",
                value={"name": "NLP lab", "slug": "nlp-lab", "admins": ["ada"]},
                request_only=True,
            )
        ],
    ),
)
class LabsApi(generics.ListCreateAPIView):
    serializer_class = LabSerializer
    queryset = Lab.objects.none()  # for the schema; get_queryset scopes by user

    def get_queryset(self):
        return selectors.labs_with_people(self.request.user).order_by("name")

    def post(self, request):
        if not request.user.is_staff:
            refusal = labs.refuse(request.user, "create a lab", "Only staff create labs.", 403)
            raise _refused(refusal)
        data = LabInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            admins = [labs.account(name) for name in dict.fromkeys(data.validated_data["admins"])]
            lab = labs.create_lab(
                actor=request.user,
                name=data.validated_data["name"],
                slug=data.validated_data["slug"],
                admins=admins,
            )
        except LabRefused as exc:
            if exc.status == 404:  # an admin named who has no account: a bad request
                raise ValidationError({"admins": [str(exc)]}) from None
            raise _refused(exc) from None
        lab = selectors.labs_with_people(request.user).get(pk=lab.pk)
        return Response(LabSerializer(lab).data, status=status.HTTP_201_CREATED)


class LabMemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    role = serializers.SerializerMethodField(help_text="'admin' or 'member'.")

    class Meta:
        model = LabMembership
        fields = ["username", "role", "joined_at"]

    def get_role(self, membership) -> str:
        return "admin" if membership.is_admin else "member"


class LabMemberInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(
        ["member", "admin"],
        default="member",
        help_text="'admin' (staff only) or 'member'; an existing person gets the new role.",
    )


@extend_schema_view(
    get=extend_schema(
        tags=["Labs"],
        operation_id="lab_members_list",
        summary="List a lab's people",
        responses={200: LabMemberSerializer(many=True), 404: LAB_NOT_FOUND},
        examples=[
            OpenApiExample(
                "A lab admin",
                value={"username": "ada", "role": "admin", "joined_at": "2026-03-01T09:30:00Z"},
                response_only=True,
            )
        ],
    ),
    post=extend_schema(
        tags=["Labs"],
        operation_id="lab_member_add",
        summary="Add a person to a lab, or change their role",
        description="A lab's admins add members; staff also appoint admins.",
        request=LabMemberInputSerializer,
        responses={
            201: LabMemberSerializer,
            400: error_response("Refused."),
            403: FORBIDDEN,
            404: LAB_NOT_FOUND,
        },
        examples=[
            OpenApiExample(
                "A member", value={"username": "grace", "role": "member"}, request_only=True
            )
        ],
    ),
    delete=extend_schema(
        tags=["Labs"],
        operation_id="lab_member_remove",
        summary="Remove a person from a lab",
        description="A lab's admins remove members; staff also remove admins. Their project "
        "memberships stay.",
        parameters=[OpenApiParameter("username", str, required=True)],
        request=None,
        responses={204: None, 400: error_response("No username given."), 403: FORBIDDEN},
    ),
)
class LabMembersApi(generics.ListAPIView):
    serializer_class = LabMemberSerializer
    queryset = LabMembership.objects.none()  # for the schema; get_queryset scopes by lab

    def lab(self) -> Lab:
        changing = self.request.method not in ("GET", "HEAD", "OPTIONS")
        try:
            return labs.visible_lab(self.request.user, self.kwargs["slug"], changing=changing)
        except LabRefused as exc:
            raise _refused(exc) from None

    def get_queryset(self):
        return selectors.lab_members(self.lab())

    def administered_lab(self, what: str) -> Lab:
        """The lab, if the caller may change its people (403 with the reason otherwise)."""
        lab = self.lab()
        if not labs.may_administer(self.request.user, lab):
            message = f"Only the admins of {lab.name} or staff change its people."
            raise _refused(labs.refuse(self.request.user, f"{what} in {lab.slug}", message, 403))
        return lab

    def post(self, request, slug):
        lab = self.administered_lab("add a person")
        data = LabMemberInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        is_admin = data.validated_data["role"] == "admin"
        try:
            user = labs.account(data.validated_data["username"])
            labs.add_person(actor=request.user, lab=lab, user=user, is_admin=is_admin)
        except LabRefused as exc:
            raise _refused(exc) from None
        membership = LabMembership.objects.select_related("user").get(lab=lab, user=user)
        return Response(LabMemberSerializer(membership).data, status=status.HTTP_201_CREATED)

    def delete(self, request, slug):
        lab = self.administered_lab("remove a person")
        username = request.query_params.get("username", "")
        if not username:
            raise ValidationError({"username": ["Name the person to remove."]})
        try:
            labs.remove_person(actor=request.user, lab=lab, user=labs.account(username))
        except LabRefused as exc:
            raise _refused(exc) from None
        return Response(status=status.HTTP_204_NO_CONTENT)
