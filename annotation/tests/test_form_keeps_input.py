"""A refused annotation form comes back with everything typed in it, exactly as typed, and
the scheme at fault (and where the page can tell, its row and cell) marked with the message:
a box cell that is not a number, a value that fails the checks, a required answer left out.
Nothing is stored."""

import json
import re

import pytest

from annotation.models import Annotation
from annotation.tests.test_annotate_pages import (
    ALL_SCHEMES,
    form_action,
    item_ids,
    two_dims,
    unit_page,
)
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
__all__ = ["two_dims"]  # the fixture, used below by name

REQUIRED_NOTE = ALL_SCHEMES.replace(
    "{annotation_type: text, name: note, description: Note}",
    "{annotation_type: text, name: note, description: Note, label_requirement: {required: true}}",
)


@pytest.fixture
def forms(client, tmp_path):
    from projects.services import import_project

    rows = [
        {
            "id": f"doc{n}",
            "text": f"Document {n}",
            "media_url": "/static/none.mp4",
            "steps": [{"action": "search"}, {"action": "click"}, {"action": "stop"}],
        }
        for n in range(2)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(REQUIRED_NOTE)
    project = import_project(config_path=tmp_path / "c.yaml", slug="forms").project
    user = UserFactory(username="typist")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    return project


TYPED = {
    "topic": "politics",
    "tags": ["funny", "long"],
    "quality": "4",
    "note": "  two spaces first, <b>not bold</b>\nand a second line",
    "steps__step__0": "bad",
    "steps__step__2": "good",  # step 1 left without a verdict
    "speech__start": ["0.50", ""],
    "speech__end": ["2", ""],
    "speech__label": ["laugh", ""],
    "speech__tier": ["B", "A"],
    # box 1 complete, box 2 without a width, box 3 with a comma for a point, then a row
    # added and left empty
    "boxes__cx": ["1.50", "7", "1,5", ""],
    "boxes__cy": ["0", "8", "2", ""],
    "boxes__cz": ["-0", "9", "3", ""],
    "boxes__l": ["4", "3", "1", ""],
    "boxes__w": ["2", "", "1", ""],
    "boxes__h": ["1.5e0", "1", "1", ""],
    "boxes__yaw": ["", "0.25", "", ""],
    "boxes__label": ["car", "truck", "", ""],
}


def table_rows(html, field):
    """The data rows of the table of `field` (not its empty row's <template>)."""
    body = html.split(f'data-rows="{field}"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr class="data-row[^"]*".*?</tr>', body, re.S)


def speech_rows(html) -> str:
    return "".join(table_rows(html, "speech"))


def spare_row(html, field) -> str:
    """The empty row a page without scripts offers to type into (annotate.js removes it)."""
    body = html.split(f'data-rows="{field}"', 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r'<tr class="spare-row">.*?</tr>', body, re.S)
    assert len(rows) == 1
    return rows[0]


def marked(row: str) -> bool:
    """Whether a table row is marked as the one at fault."""
    head = row.split(">", 1)[0]
    return "row-invalid" in head and 'aria-invalid="true"' in head


def cells(html, field):
    """The <input>/<select> tags named `field`, in page order."""
    return re.findall(rf'<(?:input|select)[^>]*name="{field}"[^>]*>', html)


def value_of(tag):
    return re.search(r'value="([^"]*)"', tag).group(1)


def test_a_cell_that_is_not_a_number_keeps_every_typed_value(client, forms):
    response = client.post(form_action(unit_page(client, "forms")), TYPED)
    assert response.status_code == 400
    assert not Annotation.objects.exists()
    html = response.content.decode()

    # the message, under the row at fault (box 2) and in the summary on top
    form = table_rows(html, "boxes")
    message = re.search(r'<td colspan="9" id="boxes-row-2-error">([^<]*)</td>', html)
    assert message and message.group(1) == "Box 2: the width is empty; fill in a number"
    assert 'id="boxes-error"' not in html  # said once, under its row
    assert 'class="card scheme scheme-spatial_annotation has-error"' in html
    assert 'role="alert"' in html
    # that row is marked, and no other
    assert [marked(row) for row in form] == [False, True, False]
    assert 'aria-describedby="boxes-row-2-error"' in form[1]

    # every filled box row as typed (not as the numbers read from them); the empty one is
    # not drawn again, only the spare row a page without scripts types into
    assert [value_of(t) for t in cells(spare_row(html, "boxes"), "boxes__cx")] == [""]
    for key in ("cx", "cy", "cz", "l", "w", "h", "yaw"):
        typed = TYPED[f"boxes__{key}"][:3]
        assert [value_of(t) for t in cells("".join(form), f"boxes__{key}")] == typed
    labels = cells("".join(form), "boxes__label")
    assert len(labels) == 3
    chosen = re.findall(r"<option selected>(\w+)</option>", html.split('name="boxes__label"', 1)[1])
    assert chosen[:2] == ["car", "truck"]
    # the bad cells are marked; the others are not
    widths = cells("".join(form), "boxes__w")
    assert 'aria-invalid="true"' in widths[1]
    assert 'aria-describedby="boxes-row-2-error"' in widths[1]
    assert not any('aria-invalid="true"' in widths[i] for i in (0, 2))
    comma = cells(html, "boxes__cx")[2]
    assert 'type="text"' in comma and 'aria-invalid="true"' in comma  # shown, not emptied
    assert 'aria-invalid="true"' in cells(html, "boxes__label")[2]  # box 3 has no label
    assert 'type="number"' in cells(html, "boxes__cx")[0]
    assert not any('aria-invalid="true"' in t for t in cells(html, "boxes__yaw"))  # may be empty

    # the other schemes, as typed
    assert re.search(r'name="topic" value="politics" checked', html)
    assert not re.search(r'name="topic" value="sport" checked', html)
    for tag in ("funny", "long"):
        assert f'name="tags" value="{tag}" checked' in html
    assert 'name="tags" value="sad" >' in html
    assert 'name="quality" value="4" checked' in html
    assert ">  two spaces first, &lt;b&gt;not bold&lt;/b&gt;\nand a second line</textarea>" in html
    assert 'name="steps__step__0" value="bad" checked' in html
    assert 'name="steps__step__2" value="good" checked' in html
    assert "checked" not in "".join(cells(html, "steps__step__1"))
    assert [value_of(t) for t in cells(speech_rows(html), "speech__start")] == ["0.50"]
    assert [value_of(t) for t in cells(speech_rows(html), "speech__end")] == ["2"]
    speech = html.split('data-rows="speech"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<option selected>(\w+)</option>", speech)[:2] == ["laugh", "B"]
    # only the bad scheme is marked
    assert html.count("has-error") == 1
    assert 'id="speech-error"' not in html and 'id="topic-error"' not in html


def test_values_that_fail_the_checks_and_a_missing_answer_come_back_as_typed(client, forms):
    fields = {k: v for k, v in TYPED.items() if not k.startswith("boxes__") and k != "note"}
    fields.update(
        {
            "boxes__cx": ["1", ""],
            "boxes__cy": ["2", ""],
            "boxes__cz": ["3", ""],
            "boxes__l": ["00", ""],  # reads as a number, but a size must be positive
            "boxes__w": ["1", ""],
            "boxes__h": ["1", ""],
            "boxes__yaw": ["", ""],
            "boxes__label": ["car", ""],
        }
    )
    response = client.post(form_action(unit_page(client, "forms")), fields)
    assert response.status_code == 400
    assert not Annotation.objects.exists()
    html = response.content.decode()
    errors = dict(re.findall(r'<p class="field-error" id="(\w+)-error">([^<]*)</p>', html))
    assert set(errors) == {"note"}  # the box's message is under its row
    assert "an answer is required" in errors["note"]
    row = re.search(r'id="boxes-row-1-error">([^<]*)<', html).group(1)
    assert row == "Box 1: the length must be more than 0 (it is 0)"
    boxes = table_rows(html, "boxes")
    assert len(boxes) == 1 and marked(boxes[0])
    assert 'aria-invalid="true"' in cells(boxes[0], "boxes__l")[0]
    assert 'aria-invalid="true"' not in cells(boxes[0], "boxes__w")[0]

    assert [value_of(t) for t in cells("".join(boxes), "boxes__l")] == ["00"]  # not "0.0"
    assert 'aria-invalid="true"' in html.split('id="text-note"', 1)[1].split(">", 1)[0]
    assert [value_of(t) for t in cells(speech_rows(html), "speech__start")] == ["0.50"]
    assert 'name="topic" value="politics" checked' in html
    assert 'name="steps__step__0" value="bad" checked' in html
    assert "checked" not in cells(html, "speech__nothing")[0]


def test_nothing_to_mark_ticked_with_rows_comes_back_ticked_and_marked(client, forms):
    fields = {**TYPED, "speech__nothing": "1"}  # ticked while a segment row is filled in
    response = client.post(form_action(unit_page(client, "forms")), fields)
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r"id=\"speech-error\">&quot;Nothing to mark&quot; is ticked, but 1 seg", html)
    nothing = cells(html, "speech__nothing")[0]
    assert "checked" in nothing and 'aria-invalid="true"' in nothing
    assert "speech-error" in re.search(r'aria-describedby="([^"]*)"', nothing).group(1)
    assert [value_of(t) for t in cells(speech_rows(html), "speech__start")] == ["0.50"]
    assert "checked" not in cells(html, "boxes__nothing")[0]


def test_best_worst_choices_come_back_with_the_incomplete_scheme_marked(client, two_dims):
    html = unit_page(client)
    ids = item_ids(html, "fluency")
    response = client.post(
        form_action(html),
        {"fluency__best": ids[2], "fluency__worst": ids[0], "adequacy__worst": ids[3]},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert f'name="fluency__best" value="{ids[2]}" data-key="3" checked' in page
    assert f'name="fluency__worst" value="{ids[0]}" data-key="q" checked' in page
    assert f'name="adequacy__worst" value="{ids[3]}" data-key="r" checked' in page
    assert re.search(r'id="adequacy-error">adequacy: choose the best item<', page)
    adequacy = cells(page, "adequacy__best")
    # each choice is described by its item's text and, when refused, by the message
    assert adequacy and all(
        re.search(r'aria-describedby="item-\d-text adequacy-error"', t) for t in adequacy
    )
    assert not any('aria-invalid="true"' in t for t in cells(page, "fluency__best"))
    assert not Annotation.objects.exists()


def test_a_first_visit_draws_stored_boxes_as_numbers(client, forms):
    """Without a refused form the rows are the stored answer's, in number fields."""
    fields = {k: v for k, v in TYPED.items() if not k.startswith("boxes__")}
    fields.update({"boxes__cx": "1.5", "boxes__cy": "0", "boxes__cz": "0", "boxes__l": "4"})
    fields.update({"boxes__w": "2", "boxes__h": "1", "boxes__label": "car"})
    html = unit_page(client, "forms")
    action = form_action(html)
    assert client.post(action, fields).status_code == 302
    again = client.get(action).content.decode()
    stored = "".join(table_rows(again, "boxes"))
    assert [value_of(t) for t in cells(stored, "boxes__cx")] == ["1.5"]  # no empty row
    assert [value_of(t) for t in cells(stored, "boxes__yaw")] == ["0.0"]
    assert "aria-invalid" not in again


def test_a_number_cell_says_whether_it_is_empty_or_not_a_number():
    from projects.schemes.base import RowError, form_float

    assert form_float("-1.25", "box 1 x") == -1.25
    with pytest.raises(ValueError, match=r"^Box 3: the width is empty; fill in a number$"):
        form_float("", "Box 3: the width")
    with pytest.raises(RowError, match=r"^Box 3: the width is '1,5', which is not a number") as e:
        form_float("1,5", "Box 3: the width", row=2, field="w")
    assert (e.value.row, e.value.fields) == (2, ("w",))
