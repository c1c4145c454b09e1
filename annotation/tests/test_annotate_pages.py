"""The annotation pages: BWS with several schemes and every option, other scheme forms,
server-side checks shown in the page, going back, the done page."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.answers import submit_answers
from annotation.instructions import mark_seen
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLES = Path(settings.BASE_DIR) / "examples"


@pytest.fixture
def two_dims(client):
    project = import_project(
        config_path=EXAMPLES / "mt_two_dims" / "config.yaml", slug="mt"
    ).project
    user = UserFactory(username="anna")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    # anna has read the demo's instructions (the page shown before a first unit)
    session = client.session
    mark_seen(session, project)
    session.save()
    return project


def unit_page(client, slug="mt"):
    response = client.get(reverse("annotate", args=[slug]))
    assert response.status_code == 200
    return response.content.decode()


def item_ids(html, scheme):
    return re.findall(rf'name="{scheme}__best" value="([^"]+)"', html)


def form_action(html):
    return re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)


def test_bws_page_has_both_schemes_keys_and_labels(client, two_dims):
    html = unit_page(client)
    assert "fluency" in html and "adequacy" in html
    ids = item_ids(html, "fluency")
    assert len(ids) == 4 and ids == item_ids(html, "adequacy")
    for key in ("1", "2", "3", "4", "q", "w", "e", "r"):
        assert f'data-key="{key}"' in html
    assert "<kbd>q</kbd>" in html and "Enter submits" in html
    assert html.count('type="radio"') == 16  # 4 items x best/worst x 2 schemes


def test_submit_stores_two_judgments_and_moves_on(client, two_dims):
    html = unit_page(client)
    ids = item_ids(html, "fluency")
    response = client.post(
        form_action(html),
        {
            "client_id": re.search(r'name="client_id" value="([^"]+)"', html).group(1),
            "fluency__best": ids[0],
            "fluency__worst": ids[1],
            "adequacy__best": ids[2],
            "adequacy__worst": ids[1],
            "time_taken_ms": "4200",
        },
    )
    assert response.status_code == 302
    stored = {a.scheme: a for a in Annotation.objects.all()}
    assert stored["fluency"].value == {"best": ids[0], "worst": ids[1]}
    assert stored["adequacy"].value == {"best": ids[2], "worst": ids[1]}
    assert stored["fluency"].time_taken_ms == 4200
    assert Assignment.objects.filter(status="completed").count() == 1
    # The next page says the last answer was kept.
    following = client.get(response["Location"], follow=True).content.decode()
    assert '<li class="msg-success">Saved.</li>' in following


def test_retried_form_post_is_stored_once(client, two_dims):
    html = unit_page(client)
    ids = item_ids(html, "fluency")
    data = {
        "client_id": re.search(r'name="client_id" value="([^"]+)"', html).group(1),
        "fluency__best": ids[0],
        "fluency__worst": ids[1],
        "adequacy__best": ids[0],
        "adequacy__worst": ids[1],
    }
    client.post(form_action(html), data)
    client.post(form_action(html), data)
    assert Annotation.objects.count() == 2


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"fluency__best": 0}, "choose the worst item"),
        ({"fluency__best": 0, "fluency__worst": 0}, "must be different"),
        ({"fluency__best": 0, "fluency__worst": "mt_9999"}, "not in this tuple"),
    ],
)
def test_server_checks_show_in_the_page(client, two_dims, fields, message):
    html = unit_page(client)
    ids = item_ids(html, "fluency")
    data = {k: (ids[v] if isinstance(v, int) else v) for k, v in fields.items()}
    data.update({"adequacy__best": ids[0], "adequacy__worst": ids[1]})
    response = client.post(form_action(html), data)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'role="alert"' in page and message in page
    assert f'value="{ids[0]}" data-key="1" checked' in page  # the choice is kept
    assert not Annotation.objects.exists()


def test_go_back_and_change_an_answer(client, two_dims):
    html = unit_page(client)
    first_action = form_action(html)
    ids = item_ids(html, "fluency")
    answer = {"adequacy__best": ids[0], "adequacy__worst": ids[1]}
    client.post(first_action, {"fluency__best": ids[0], "fluency__worst": ids[1], **answer})
    html = unit_page(client)
    assert "Previous answer" in html
    back = client.get(first_action).content.decode()
    assert "changing an earlier answer" in back
    assert f'value="{ids[0]}" data-key="1" checked' in back
    client.post(first_action, {"fluency__best": ids[3], "fluency__worst": ids[1], **answer})
    fluency = Annotation.objects.get(scheme="fluency")
    assert fluency.value["best"] == ids[3]
    assert fluency.updated_at > fluency.created_at
    assert Annotation.objects.count() == 2


def test_randomized_order_is_stable_per_annotator_and_differs_between_them(client):
    from projects.selectors import display_order

    project = import_project(config_path=EXAMPLES / "mt_tuples" / "config.yaml", slug="b").project
    assert project.schemes[0]["options"]["randomize_order"] is True
    unit = project.units.select_related("bws_tuple").first()
    users = [UserFactory(username=f"r{n}") for n in range(8)]
    orders = [tuple(display_order(unit, u, True)) for u in users]
    assert orders == [tuple(display_order(unit, u, True)) for u in users]  # stable
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert len(set(orders)) > 1  # shuffled per annotator
    assert display_order(unit, users[0], False) == [0, 1, 2, 3]
    # the page shows the items in the annotator's order, with letters and context
    MembershipFactory(user=users[0], project=project)
    client.force_login(users[0])
    html = unit_page(client, "b")
    shown = project.units.get(pk=int(form_action(html).rstrip("/").split("/")[-1]))
    order = display_order(shown, users[0], True)
    assert item_ids(html, "overall_quality") == [shown.bws_tuple.item_ids[p] for p in order]
    assert "Source Sentence" in html  # instance_display context
    assert '<span class="item-letter">A</span>' in html  # show_item_labels


def test_reload_shows_the_same_unit_in_the_same_order(client, tmp_path):
    project = import_project(config_path=EXAMPLES / "mt_tuples" / "config.yaml", slug="b").project
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    first, second = unit_page(client, "b"), unit_page(client, "b")
    assert form_action(first) == form_action(second)
    assert item_ids(first, "overall_quality") == item_ids(second, "overall_quality")


def test_done_page_when_no_more_work(client, two_dims):
    two_dims.config = {**two_dims.config, "max_annotations_per_user": 1}
    two_dims.save()
    html = unit_page(client)
    # Annotators read their own count ("Tuple 1 of 1": the first of the one unit they may
    # take), never the unit's place in the project nor its internal id.
    unit = Unit.objects.get(pk=int(form_action(html).rstrip("/").split("/")[-1]))
    assert "Tuple 1 of 1" in html and unit.external_id not in html
    ids = item_ids(html, "fluency")
    client.post(
        form_action(html),
        {
            "fluency__best": ids[0],
            "fluency__worst": ids[1],
            "adequacy__best": ids[0],
            "adequacy__worst": ids[1],
        },
    )
    done = unit_page(client)
    assert "No more work" in done
    assert "Your answers" in done
    assert ">Tuple 1</a>" in done and unit.external_id not in done


def test_an_annotator_counts_the_units_assigned_to_them_and_left_for_them(client, two_dims):
    """With one answer a unit, the units others answered are not theirs to do: the page
    numbers the units left for them, and says how many are left."""
    two_dims.config = {**two_dims.config, "num_annotators_per_item": 1}
    two_dims.save()
    units = Unit.objects.filter(project=two_dims, is_gold=False).count()
    other = UserFactory()
    MembershipFactory(user=other, project=two_dims)
    for _ in range(5):
        unit = next_unit(project=two_dims, user=other)
        items = unit.bws_tuple.item_ids
        answer = {"best": items[0], "worst": items[1]}
        submit_answers(
            project=two_dims,
            user=other,
            unit_id=unit.pk,
            answers={"fluency": answer, "adequacy": answer},
        )
    html = unit_page(client)
    mine = units - 5
    assert f"Tuple 1 of {mine}" in html
    assert f"0 / {mine} answered by you (0%) · {mine} left for you" in html
    ids = item_ids(html, "fluency")
    answer = {"fluency__best": ids[0], "fluency__worst": ids[1]}
    client.post(form_action(html), {**answer, "adequacy__best": ids[0], "adequacy__worst": ids[1]})
    html = unit_page(client)
    assert f"Tuple 2 of {mine}" in html
    assert f"1 / {mine} answered by you" in html and f"{mine - 1} left for you" in html


def test_strangers_cannot_annotate(client, two_dims):
    two_dims.allow_all_users = False
    two_dims.save()
    client.force_login(UserFactory(username="stranger"))
    assert client.get(reverse("annotate", args=["mt"])).status_code == 404


def test_cannot_open_a_unit_never_given_to_me(client, two_dims):
    other = two_dims.units.order_by("-position").first()
    assert client.get(reverse("annotate-unit", args=["mt", other.pk])).status_code == 404


ALL_SCHEMES = """annotation_task_name: Every form
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
  - {annotation_type: multiselect, name: tags, description: Tags, labels: [funny, sad, long]}
  - {annotation_type: likert, name: quality, description: Quality, size: 5,
     min_label: bad, max_label: good}
  - {annotation_type: text, name: note, description: Note}
  - {annotation_type: process_reward, name: steps, description: Each step,
     labels: [good, bad]}
  - {annotation_type: tiered_annotation, name: speech, description: Who speaks,
     labels: [talk, laugh], tiers: [A, B]}
  - {annotation_type: spatial_annotation, name: boxes, description: Cars,
     labels: [car, truck]}
"""


@pytest.fixture
def every_form(client, tmp_path):
    rows = [
        {
            "id": f"doc{n}",
            "text": f"Document {n}",
            "media_url": "/static/none.mp4",
            "steps": [{"action": "search", "result": "ok"}, {"action": "click"}],
        }
        for n in range(3)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(ALL_SCHEMES)
    project = import_project(config_path=tmp_path / "c.yaml", slug="forms").project
    user = UserFactory(username="formy")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    return project


def test_every_scheme_form_renders_and_stores(client, every_form):
    html = unit_page(client, "forms")
    assert 'name="topic"' in html and 'type="checkbox" name="tags"' in html
    assert 'name="quality" value="5"' in html and "good" in html
    assert "<textarea" in html
    assert 'name="steps__step__0"' in html and 'name="steps__step__1"' in html
    assert "search" in html  # the trace's steps are shown
    assert "<video" in html and 'name="speech__tier"' in html
    assert 'name="boxes__cx"' in html and "Add box" in html
    response = client.post(
        form_action(html),
        {
            "topic": "sport",
            "tags": ["funny", "long"],
            "quality": "4",
            "note": "fine",
            "steps__step__0": "good",
            "steps__step__1": "bad",
            "speech__start": ["0.5", ""],
            "speech__end": ["2", ""],
            "speech__label": ["talk", ""],
            "speech__tier": ["B", "A"],
            "boxes__cx": ["1", "2"],
            "boxes__cy": ["0", "0"],
            "boxes__cz": ["0", "0"],
            "boxes__l": ["4", "2"],
            "boxes__w": ["2", "1"],
            "boxes__h": ["1.5", "1"],
            "boxes__yaw": ["0.1", ""],
            "boxes__label": ["car", "truck"],
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    stored = dict(Annotation.objects.values_list("scheme", "value"))
    assert stored["topic"] == "sport"
    assert stored["tags"] == ["funny", "long"]
    assert stored["quality"] == 4
    assert stored["note"] == "fine"
    assert stored["steps"] == {"0": "good", "1": "bad"}
    assert stored["speech"] == [{"start": 0.5, "end": 2.0, "label": "talk", "tier": "B"}]
    assert stored["boxes"][0] == {
        "label": "car",
        "center": [1.0, 0.0, 0.0],
        "size": [4.0, 2.0, 1.5],
        "yaw": 0.1,
    }
    assert len(stored["boxes"]) == 2


@pytest.mark.parametrize(
    "fields, scheme, message",
    [
        (
            {
                "speech__start": "3",
                "speech__end": "1",
                "speech__label": "talk",
                "speech__tier": "A",
            },
            "speech",
            "Segment 1: the start must be between 0 and the end (it is 3 s; the end is 1 s)",
        ),
        (
            {
                "boxes__cx": "1",
                "boxes__cy": "1",
                "boxes__cz": "1",
                "boxes__l": "0",
                "boxes__w": "1",
                "boxes__h": "1",
                "boxes__label": "car",
            },
            "boxes",
            "Box 1: the length must be more than 0 (it is 0)",
        ),
        ({"boxes__cx": "x", "boxes__label": "car"}, "boxes", "not a number"),
        ({"topic": "weather"}, "topic", "choose one of"),
        ({"quality": "9"}, "quality", "from 1 to 5"),
    ],
)
def test_bad_values_are_refused_with_a_message(client, every_form, fields, scheme, message):
    html = unit_page(client, "forms")
    response = client.post(form_action(html), fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Annotation.objects.exists()
