"""What the queue asks about the person it serves, answered by the apps built on it.

The queue knows members; crowd participants, their training and their attention checks
belong to `crowds`, which sits above `annotation`. So the queue asks through the functions
here, and `crowds` puts its answers in once, in its AppConfig.ready(), the way it receives
the project's signals. Without crowds every person is a plain member: nobody is a
participant, no training holds work back and no attention check takes a unit's place.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class PersonRules:
    # Whether the user entered this project through its participant link.
    is_participant: Callable = lambda project, user: False
    # Locks a participant's row for the transaction and counts the units they were given;
    # None where the person is not the request's participant (or not on PostgreSQL).
    take_turn: Callable = lambda project, user: None
    # Whether a training to pass first, a failed one or failed checks hold work back.
    withholds_work: Callable = lambda project, user: False
    # The attention check to hand out in place of the next unit, or None.
    attention_check: Callable = lambda project, user: None
    # How many units the person's plan holds for this many ordinary units (attention
    # checks come on top).
    units_planned: Callable = lambda project, user, units: units
    # Whether the annotate page sends the person to the training first (or to its result).
    training_first: Callable = lambda project, user: False
    # Why the person was screened out (failed training or checks), or None.
    screening_failure: Callable = lambda project, user: None
    # Where a person goes after storing an answer, when not back to the annotate page (a
    # participant's flow sends them to their next step); None for the annotate page.
    next_page: Callable = lambda request: None


rules = PersonRules()


def register(**answers: Callable) -> None:
    """Put an app's answers in (once, from AppConfig.ready)."""
    for name, function in answers.items():
        if not hasattr(rules, name):
            raise TypeError(f"the queue asks no question named {name!r}")
        setattr(rules, name, function)
