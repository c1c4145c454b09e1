"""Agent traces: one label per step of the instance's list of steps. Five stored types
share it (they differ in the labels and the wording a configuration gives them)."""

from __future__ import annotations

from typing import Any

from projects.configuration.fields import Text as TextField
from projects.configuration.labels import Labels
from projects.configuration.scheme_options import LABELS_NOTE, SchemeEntry
from projects.configuration.vocabulary import DEFAULT_STEPS_KEY
from projects.schemes.base import SchemeType, json_type, label_names, short, too_many
from projects.texts import gettext


def _steps_key(options: dict) -> str:
    return options.get("steps_key") or "steps"


class TraceOptions(SchemeEntry):
    labels: Labels
    steps_key: TextField = DEFAULT_STEPS_KEY
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels, "steps_key": self.steps_key}


class Trace(SchemeType):
    types = (
        "process_reward",
        "trajectory_eval",
        "tool_call_review",
        "failure_attribution",
        "gui_trajectory",
    )
    template = "annotation/schemes/trace.html"
    measure = "trace"
    Options = TraceOptions

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        labels = label_names(options)
        steps = unit.data.get(_steps_key(options)) or []
        if not isinstance(value, dict):
            raise ValueError('give an object from step index ("0", "1", ...) to label')
        too_many(len(value), "trace steps", limits)
        cleaned = {}
        for key, label in value.items():
            key = str(key)
            if not (key.isascii() and key.isdigit()) or int(key) >= len(steps):
                raise ValueError(
                    f"step {short(key)} is not a step of this trace (0 to {len(steps) - 1})"
                )
            if label not in labels:
                raise ValueError(
                    gettext("step %(step)s: choose one of %(labels)s")
                    % {"step": key, "labels": ", ".join(labels)}
                )
            cleaned[key] = label
        return cleaned

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        prefix = f"{name}__step__"
        return {
            key[len(prefix) :]: value
            for key, value in post.items()
            if key.startswith(prefix) and value
        }

    @classmethod
    def view(cls, scheme, options, value, payload, posted=None) -> dict:
        steps = payload["data"].get(_steps_key(options)) or []
        if posted is not None:  # the verdicts as sent, when the form comes back refused
            value = cls.from_post(scheme["name"], options, posted)
        chosen = value or {}
        # Stored keys count from 0 ("0", "1", ...); people read steps numbered from 1.
        return {
            "value": value,
            "steps": [
                {"index": i, "number": i + 1, "step": step, "value": chosen.get(str(i))}
                for i, step in enumerate(steps)
            ],
        }

    @classmethod
    def drawn_fields(cls, options) -> list[str]:
        return [_steps_key(options)]

    @classmethod
    def data_problems(cls, options, data) -> list[str]:
        key = _steps_key(options)
        steps = data.get(key)
        if isinstance(steps, list):
            return []
        got = "missing" if steps is None else f"got {json_type(steps)}"
        return [f"a trace needs a list of steps under {key!r} ({got})"]
