"""Reading the annotation page's form fields into answers (scheme name -> value), the same
values the REST API takes. Each scheme type reads its own fields (SchemeType.from_post in
projects.schemes): `S` for single values, `S__best`/`S__worst` for BWS, `S__step__N` for
trace steps, parallel lists such as `S__start`/`S__end` for segment and box rows."""

from django.http import QueryDict

from annotation.answers import submit_answers
from projects.schemes import scheme_type
from projects.schemes.base import WHOLE
from projects.validation import MAX_MILLISECONDS, AnswerError, row_of


def time_taken_from_post(post: QueryDict) -> int | None:
    """The page's time_taken_ms field: empty, or a whole number of milliseconds."""
    text = post.get("time_taken_ms", "").strip()
    if not text:
        return None
    if WHOLE.fullmatch(text) and len(text) <= 10 and int(text) <= MAX_MILLISECONDS:
        return int(text)
    raise AnswerError(
        {"time_taken_ms": f"give a whole number of milliseconds from 0 to {MAX_MILLISECONDS}"}
    )


def answers_from_post(schemes: list[dict], post: QueryDict) -> dict:
    """Answers from the submitted form; AnswerError for values that are not even numbers."""
    answers: dict = {}
    errors: dict[str, str] = {}
    rows: dict[str, tuple] = {}
    for scheme in schemes:
        name = scheme["name"]
        try:
            answers[name] = scheme_type(scheme["type"]).from_post(name, scheme["options"], post)
        except ValueError as exc:
            errors[name] = str(exc)
            if (row := row_of(exc)) is not None:
                rows[name] = row
    if errors:
        raise AnswerError(errors, rows)
    return answers


def submit_posted(*, project, user, unit_id: int, post: QueryDict):
    """The web form's answer to a unit read and stored (answers.submit_answers): AnswerError
    for a form that does not read or answers that do not validate (nothing stored), and
    SubmitRefused as submit_answers raises it."""
    answers = answers_from_post(project.schemes, post)
    return submit_answers(
        project=project,
        user=user,
        unit_id=unit_id,
        answers=answers,
        client_id=post.get("client_id") or None,
        time_taken_ms=time_taken_from_post(post),
    )
