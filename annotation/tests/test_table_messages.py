"""A refused box or segment says in plain words what is wrong, with the figures it read,
and names its row and the cells at fault (AnswerError.rows), the same for the REST API's
JSON and for the annotation form."""

import pytest
from django.http import QueryDict

from annotation.answer_forms import answers_from_post
from projects.schemes.base import UnitContext
from projects.validation import AnswerError, validate_answers

UNIT = UnitContext(items=[], data={})
SEGMENTS = {
    "name": "speech",
    "type": "temporal_grounding",
    "options": {"labels": ["talk", "laugh"]},
}
TIERS = {
    "name": "speech",
    "type": "tiered_annotation",
    "options": {"labels": ["talk"], "tiers": ["A", "B"]},
}
BOXES = {"name": "boxes", "type": "spatial_annotation", "options": {"labels": ["car", "truck"]}}
GOOD_SEGMENT = {"start": 0, "end": 1, "label": "talk"}
GOOD_BOX = {"label": "car", "center": [0, 0, 0], "size": [4, 2, 1.5], "yaw": 0}


def refused(scheme, value) -> tuple[str, tuple]:
    with pytest.raises(AnswerError) as caught:
        validate_answers([scheme], {scheme["name"]: value}, UNIT)
    name = scheme["name"]
    return caught.value.errors[name], caught.value.rows.get(name)


@pytest.mark.parametrize(
    "scheme, value, message, row",
    [
        (
            SEGMENTS,
            [GOOD_SEGMENT] * 4 + [{"start": 7.2, "end": 3.1, "label": "talk"}],
            "Segment 5: the start must be between 0 and the end (it is 7.2 s; the end is 3.1 s)",
            (4, ("start", "end")),
        ),
        (
            SEGMENTS,
            [{"start": -1, "end": 2, "label": "talk"}],
            "Segment 1: the start must be between 0 and the end (it is -1 s)",
            (0, ("start",)),
        ),
        (
            SEGMENTS,
            [GOOD_SEGMENT, {"start": 1, "end": "soon", "label": "talk"}],
            "Segment 2: the start and the end must be numbers of seconds "
            "(the start is 1, the end 'soon')",
            (1, ("end",)),
        ),
        (
            SEGMENTS,
            [GOOD_SEGMENT, {"start": 1, "end": 2}],
            "Segment 2: choose a label (talk, laugh)",
            (1, ("label",)),
        ),
        (
            SEGMENTS,
            [{"start": 1, "end": 2, "label": "sing"}],
            "Segment 1: the label 'sing' is not one of talk, laugh",
            (0, ("label",)),
        ),
        (
            TIERS,
            [{"start": 1, "end": 2, "label": "talk", "tier": "C"}],
            "Segment 1: the tier 'C' is not one of A, B",
            (0, ("tier",)),
        ),
        (
            BOXES,
            [GOOD_BOX, {**GOOD_BOX, "size": [0, 2, -1]}],
            "Box 2: every size must be more than 0 (the length is 0, the height is -1)",
            (1, ("l", "h")),
        ),
        (
            BOXES,
            [{**GOOD_BOX, "size": [4, 0, 1]}],
            "Box 1: the width must be more than 0 (it is 0)",
            (0, ("w",)),
        ),
        (
            BOXES,
            [{**GOOD_BOX, "center": [1, 2]}],
            "Box 1: the centre must be three numbers, x, y and z (it is [1, 2])",
            (0, ("cx", "cy", "cz")),
        ),
        (
            BOXES,
            [{**GOOD_BOX, "yaw": "north"}],
            "Box 1: the yaw must be a number of radians (it is 'north')",
            (0, ("yaw",)),
        ),
        (
            BOXES,
            [GOOD_BOX, GOOD_BOX, {**GOOD_BOX, "label": None}],
            "Box 3: choose a label (car, truck)",
            (2, ("label",)),
        ),
    ],
)
def test_a_refused_row_reads_in_plain_words_and_names_its_row(scheme, value, message, row):
    assert refused(scheme, value) == (message, row)


def test_an_error_of_no_row_names_none():
    message, row = refused(SEGMENTS, "every segment")
    assert message == "give a list of objects" and row is None


def form(fields: dict) -> QueryDict:
    post = QueryDict(mutable=True)
    for key, values in fields.items():
        post.setlist(key, values)
    return post


def test_the_form_names_the_row_among_those_filled_in():
    """Rows left empty are not counted: the third row filled in is "Segment 3", even with an
    empty row before it."""
    post = form(
        {
            "speech__start": ["0", "", "1", "4"],
            "speech__end": ["1", "", "2", "x"],
            "speech__label": ["talk", "", "talk", "talk"],
        }
    )
    with pytest.raises(AnswerError) as caught:
        answers_from_post([SEGMENTS], post)
    assert caught.value.errors == {
        "speech": "Segment 3: the end is 'x', which is not a number (write it with the digits 0-9)"
    }
    assert caught.value.rows == {"speech": (2, ("end",))}
    post = form(
        {"speech__start": ["0", "5"], "speech__end": ["1", "2"], "speech__label": ["talk"] * 2}
    )
    answers = answers_from_post([SEGMENTS], post)
    assert refused(SEGMENTS, answers["speech"]) == (
        "Segment 2: the start must be between 0 and the end (it is 5 s; the end is 2 s)",
        (1, ("start", "end")),
    )


@pytest.mark.parametrize(
    "language, scheme, value, message",
    [
        (
            "de",
            BOXES,
            [GOOD_BOX, {**GOOD_BOX, "size": [0, 2, -1]}],
            "Box 2: Jedes Maß muss größer als 0 sein (die Länge ist 0, die Höhe ist -1)",
        ),
        (
            "fr",
            SEGMENTS,
            [{"start": 7.2, "end": 3.1, "label": "talk"}],
            "Segment 1 : le début doit être entre 0 et la fin (il vaut 7.2 s ; la fin vaut 3.1 s)",
        ),
        (
            "es",
            TIERS,
            [{"start": 0, "end": 1, "label": "talk", "tier": "C"}],
            "Segmento 1: el nivel 'C' no es uno de A, B",
        ),
        (
            "pt",
            BOXES,
            [{**GOOD_BOX, "yaw": "left"}],
            "Caixa 1: a guinada deve ser um número em radianos (é 'left')",
        ),
    ],
)
def test_a_refused_row_reads_in_the_pages_language(language, scheme, value, message):
    """The same refusals in the language of the page (a participant's): the row still named,
    the figures as read."""
    from django.utils import translation

    with translation.override(language):
        assert refused(scheme, value)[0] == message


def test_the_forms_refusals_read_in_the_pages_language():
    from django.utils import translation

    filled = {f"boxes__{key}": ["1", "1"] for key in ("cy", "cz", "l", "w", "h", "yaw")}
    typed = form({**filled, "boxes__cx": ["1", ""], "boxes__label": ["car"] * 2})
    nothing = form(
        {"speech__start": ["0", "1"], "speech__end": ["1", "2"], "speech__nothing": ["1"]}
    )
    with translation.override("de"), pytest.raises(AnswerError) as caught:
        answers_from_post([BOXES], typed)
    assert caught.value.errors["boxes"] == "Box 2: x ist leer; geben Sie eine Zahl ein"
    with translation.override("it"), pytest.raises(AnswerError) as caught:
        answers_from_post([SEGMENTS], nothing)
    assert caught.value.errors["speech"] == (
        '"Niente da segnare" è spuntato, ma 2 segmenti sono compilati: togli la spunta o '
        "rimuovi i segmenti"
    )
