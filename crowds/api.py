"""REST view of a project's participant link for its managers: the link to give the panel,
the config's participants block, and the participants who came through it with where each
stands (crowds/participants.py, as the members page's Participants section shows them).

A project the caller may not manage is a 404 (projects/access.py).
"""

import django_filters
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from crowds import gold, participant_list, participants
from crowds.models import Participant
from projects.access import managed_project_or_404
from projects.api_errors import NOT_FOUND
from projects.pagination import Pages

STATES = [
    "consent",
    "instructions",
    "training",
    "failed",
    "annotating",
    "completed",
    "partial",
    "screened_out",
]


class ParticipantSerializer(serializers.ModelSerializer):
    username = serializers.CharField(
        source="user.username", help_text="The participant's account (named by a keyed hash)."
    )
    state = serializers.SerializerMethodField(
        help_text="Where they stand: consent, instructions, training, failed, annotating, or "
        "how their part ended: completed, partial (no more work) or screened_out."
    )
    outcome = serializers.ChoiceField(
        choices=Participant.Outcome.choices,
        help_text="How their part ended: completed (the completion code), partial (no unit "
        "left before their quota: the partial code), screened_out (the screen-out code); "
        "empty while they take part.",
    )
    answered = serializers.IntegerField(
        source="answered_count",
        help_text="Ordinary units they answered (training units and attention checks not "
        "counted), as the quota counts them.",
    )
    state_label = serializers.SerializerMethodField(
        help_text="The same in words, as the members page shows it (with units answered)."
    )
    params = serializers.DictField(
        child=serializers.CharField(), help_text="The link's other query parameters, as last sent."
    )
    arrived_at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Participant
        fields = [
            "external_id",
            "username",
            "state",
            "state_label",
            "params",
            "outcome",
            "outcome_at",
            "outcome_reason",
            "answered",
            "training",
            "arrived_at",
            "last_seen_at",
            "consent_at",
            "instructions_seen_at",
            "completed_at",
        ]

    def _stage(self, participant) -> participants.Stage:
        cache = self.context.setdefault("stages", {})
        if participant.pk not in cache:
            cache[participant.pk] = participants.stage(participant)
        return cache[participant.pk]

    def get_state(self, participant) -> str:
        return self._stage(participant).key

    def get_state_label(self, participant) -> str:
        return self._stage(participant).label


class ParticipantFilter(django_filters.FilterSet):
    external_id = django_filters.CharFilter(
        lookup_expr="icontains", max_length=64, help_text="Part of the panel's id."
    )
    id_prefix = django_filters.CharFilter(
        field_name="external_id",
        lookup_expr="startswith",
        max_length=64,
        help_text="The start of the panel's id.",
    )
    completed = django_filters.BooleanFilter(
        field_name="completed_at",
        lookup_expr="isnull",
        exclude=True,
        help_text="Only those who completed (true) or have not (false).",
    )
    state = django_filters.ChoiceFilter(
        choices=list(participant_list.STATES.items()),
        method="filter_state",
        help_text="active (still taking part), completed, partial or screened_out.",
    )

    class Meta:
        model = Participant
        fields = []

    def filter_state(self, queryset, name, value):
        if value == "active":
            return queryset.filter(outcome=Participant.Outcome.NONE)
        return queryset.filter(outcome=value)


SETTINGS_EXAMPLE = {
    "open_link": True,
    "id_param": "PROLIFIC_PID",
    "units_per_participant": 40,
    "completion_code": "C1A2B3",
    "completion_url": "https://panel.example.org/complete?cc=C1A2B3",
    "consent": "",
    "max_participants": 200,
    "lease_minutes": 10,
    "partial": {
        "code": "P4R7",
        "url": "https://panel.example.org/complete?cc=P4R7",
        "message": None,
    },
    "screen_out": {"code": "SCR33N", "url": None, "message": None},
}


def outcome_schema(example: dict) -> dict:
    """An outcome's block (partial, screen_out): its code, the panel address, the message."""
    return {
        "type": "object",
        "description": "What this outcome shows: its code, the panel address and the message "
        "(null: none, or the default message).",
        "properties": {
            name: {"type": "string", "nullable": True, "example": example[name]}
            for name in ("code", "url", "message")
        },
    }


SETTINGS_SCHEMA = {
    "type": "object",
    "nullable": True,
    "description": "The config's participants block; null when it has none (no link).",
    "properties": {
        name: {**schema, "example": SETTINGS_EXAMPLE[name]}
        for name, schema in {
            "open_link": {"type": "boolean"},
            "id_param": {"type": "string"},
            "units_per_participant": {"type": "integer", "nullable": True},
            "completion_code": {"type": "string", "nullable": True},
            "completion_url": {"type": "string", "nullable": True},
            "consent": {
                "oneOf": [
                    {"type": "string"},
                    {"type": "object", "additionalProperties": {"type": "string"}},
                ],
                "description": "Markdown, or Markdown per language code; empty for none.",
            },
            "max_participants": {"type": "integer"},
            "lease_minutes": {
                "type": "integer",
                "description": "How long a participant holds a unit before it returns.",
            },
            "partial": outcome_schema(SETTINGS_EXAMPLE["partial"]),
            "screen_out": outcome_schema(SETTINGS_EXAMPLE["screen_out"]),
        }.items()
    },
    "required": list(SETTINGS_EXAMPLE),
}
LINK_EXAMPLE = (
    "https://annolab.example.org/p/mt/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
    "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
SETTINGS_FIELDS = list(SETTINGS_SCHEMA["properties"])


class ParticipantPages(Pages):
    """A page of participants, with the link and the settings it was opened with."""

    def get_paginated_response_schema(self, schema):
        paged = super().get_paginated_response_schema(schema)
        paged["properties"].update(
            {
                "link": {
                    "type": "string",
                    "nullable": True,
                    "example": LINK_EXAMPLE,
                    "description": "The entry link to give the panel, its id parameter left "
                    "for the panel to fill in; null while the link is closed.",
                },
                "settings": SETTINGS_SCHEMA,
            }
        )
        paged["required"] = [*paged.get("required", []), "link", "settings"]
        return paged


PARTICIPANT_EXAMPLE = {
    "external_id": "5f2a9c",
    "username": "participant-12-3b9d0f6a1c2e4d5b7a8c",
    "state": "annotating",
    "state_label": "Annotating: 12 of 40",
    "params": {"STUDY_ID": "65a1", "SESSION_ID": "x9k2"},
    "outcome": "",
    "outcome_at": None,
    "outcome_reason": "",
    "answered": 12,
    "training": "none",
    "arrived_at": "2026-03-01T09:30:00Z",
    "last_seen_at": "2026-03-01T09:52:10Z",
    "consent_at": "2026-03-01T09:30:20Z",
    "instructions_seen_at": "2026-03-01T09:31:02Z",
    "completed_at": None,
}


@extend_schema_view(
    get=extend_schema(
        tags=["Participants"],
        operation_id="participants_list",
        summary="The participant link, its settings and the participants",
        description="The entry link to give a crowd panel (null while the link is closed), "
        "the settings of the config's participants block (open_link, id_param, "
        "units_per_participant, completion_code, completion_url, consent, max_participants, "
        "lease_minutes, partial, screen_out), and a page of the participants who came "
        "through the link, in the order they came, with where each stands, the ordinary "
        "units each answered and how their part ended (outcome). Filter with state= and "
        "id_prefix=. The settings are read-only here as on the web: they come "
        "from the project's config file.",
        responses={200: ParticipantSerializer(many=True), 404: NOT_FOUND},
        examples=[
            OpenApiExample("A page of participants", value=PARTICIPANT_EXAMPLE, response_only=True)
        ],
    )
)
class ParticipantsApi(generics.ListAPIView):
    """The project's participant link and the participants who came through it."""

    serializer_class = ParticipantSerializer
    filterset_class = ParticipantFilter
    pagination_class = ParticipantPages
    queryset = Participant.objects.none()

    def get_queryset(self):
        self.project = managed_project_or_404(self.request.user, self.kwargs["slug"])
        return participant_list.filtered(self.project)

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        block = self.project.settings.participants
        open_block = participants.link_settings(self.project)
        link = None
        if open_block is not None:
            link = participants.entry_link_example(self.request, self.project, open_block)
        response.data["link"] = link
        response.data["settings"] = (
            None if block is None else block.model_dump(mode="json", include=set(SETTINGS_FIELDS))
        )
        return response


class ResetInputSerializer(serializers.Serializer):
    annotator = serializers.CharField(max_length=150, help_text="The person's username.")


class ResetOutputSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    reason = serializers.CharField(help_text="Why they were screened out.")
    answers_deleted = serializers.IntegerField(help_text="Their training and check answers.")
    units_released = serializers.IntegerField(help_text="Gold units given back.")


class ScreeningResetApi(APIView):
    """Let a person who failed the training or too many attention checks start again
    (managers only): their gold answers are deleted; logged."""

    @extend_schema(
        tags=["Quality"],
        operation_id="screening_reset",
        summary="Reset a screened-out person",
        request=ResetInputSerializer,
        responses={200: ResetOutputSerializer},
    )
    def post(self, request, slug):
        project = managed_project_or_404(request.user, slug)
        data = ResetInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["annotator"]
        try:
            person = gold.person_to_reset(project, username, by=request.user)
            result = gold.reset_screening(project=project, user=person, by=request.user)
        except gold.ResetRefused as exc:
            raise ValidationError({"annotator": [str(exc)]}) from exc
        body = {
            "annotator": username,
            "reason": result.reason,
            "answers_deleted": result.answers,
            "units_released": result.units,
        }
        return Response(ResetOutputSerializer(body).data)
