"""The API's one error shape: every 4xx answers a JSON object with ``detail``, a sentence
saying what went wrong, and, when particular fields were refused, ``errors``: the messages
per field (``non_field_errors`` for the request as a whole; answers nest per scheme).

    {"detail": "role: choose manager or annotator", "errors": {"role": ["choose ..."]}}

Wired in as REST_FRAMEWORK["EXCEPTION_HANDLER"]; replies built by hand (409 for an
answer, 422 for agreement) carry ``detail`` too, with their own extra keys.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.views import exception_handler

MAX_DETAIL_MESSAGES = 10


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in one sentence.")
    errors = serializers.DictField(
        required=False,
        help_text="Only when fields were refused: a list of messages per field "
        "(non_field_errors for the request as a whole).",
    )


def _messages(errors, path: str = "") -> list[str]:
    """``field: message`` for every message of DRF's nested errors, in order."""
    if isinstance(errors, dict):
        found = []
        for key, value in errors.items():
            label = "" if key == "non_field_errors" else str(key)
            found += _messages(value, f"{path}.{label}" if path and label else path or label)
        return found
    if isinstance(errors, list):
        return [m for value in errors for m in _messages(value, path)]
    return [f"{path}: {errors}" if path else str(errors)]


def summary(errors) -> str:
    messages = _messages(errors)
    text = "; ".join(messages[:MAX_DETAIL_MESSAGES])
    if len(messages) > MAX_DETAIL_MESSAGES:
        text += f" (and {len(messages) - MAX_DETAIL_MESSAGES} more)"
    return text or "The request was refused."


def _request_too_large(exc) -> str | None:
    """Why Django refused to read a request's body, in words with the setting to change."""
    if isinstance(exc, TooManyFilesSent):
        return (
            f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request "
            "(UPLOAD_MAX_FILES)"
        )
    if isinstance(exc, TooManyFieldsSent):
        return f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields in one request"
    if isinstance(exc, RequestDataTooBig):
        return "the request's form data is larger than the limit"
    return None


def api_exception_handler(exc, context):
    if (message := _request_too_large(exc)) is not None:
        exc = ValidationError({"non_field_errors": [message]})
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        errors = response.data
        if not isinstance(errors, dict):  # ValidationError("...") or a list of messages
            errors = {"non_field_errors": errors if isinstance(errors, list) else [errors]}
        response.data = {"detail": summary(errors), "errors": errors}
    elif not (isinstance(response.data, dict) and "detail" in response.data):
        response.data = {"detail": summary(response.data)}
    return response


def error_response(
    description: str, example: dict | None = None, *, name: str = "Refused"
) -> OpenApiResponse:
    """An error reply for extend_schema(responses=...), in the one shape."""
    examples = []
    if example is not None:
        examples = [OpenApiExample(name, value=example, summary=description, response_only=True)]
    return OpenApiResponse(ErrorSerializer, description=description, examples=examples)


NOT_FOUND = error_response(
    "No such project, or you may not manage it.", {"detail": "No such project."}, name="Hidden"
)
