"""A project's instructions: Markdown from the config (inline or a file inside the project's
folder, size-limited), rendered with no raw HTML or script, shown before an annotator's first
unit and linked from every unit page."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.instructions import render_instructions
from projects.configuration import ConfigError, load_config
from projects.configuration.instructions import MAX_INSTRUCTIONS_BYTES
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

HEAD = """task_name: With instructions
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Yes or no, labels: [yes_, no_]}
"""
GUIDE = """# How to judge

Read the **whole** text first.

- say *yes* when it answers the question
- say *no* otherwise
"""


def write(tmp_path, extra: str = "") -> str:
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Text {n}"}}\n' for n in range(3))
    )
    (tmp_path / "c.yaml").write_text(HEAD + extra)
    return tmp_path / "c.yaml"


def config_problems(tmp_path, extra: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, extra))
    return [str(issue) for issue in caught.value.issues]


def indented(text: str) -> str:
    return "instructions: |\n" + "".join(f"  {line}\n" for line in text.splitlines())


# --------------------------------------------------------------------------- the config


def test_inline_instructions_are_kept_in_the_stored_config(tmp_path):
    config = load_config(write(tmp_path, indented(GUIDE)))
    assert config.instructions == GUIDE
    assert load_config(write(tmp_path)).instructions == ""


def test_an_instructions_file_beside_the_config_is_read(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(GUIDE, encoding="utf-8")
    config = load_config(write(tmp_path, "instructions_file: docs/guide.md\n"))
    assert config.instructions == GUIDE


@pytest.mark.parametrize("path", ["../secret.md", "/etc/passwd", "docs/../../x.md"])
def test_an_instructions_file_outside_the_project_folder_is_refused(tmp_path, path):
    folder = tmp_path / "project"
    folder.mkdir()
    (tmp_path / "secret.md").write_text("secret")
    assert config_problems(folder, f"instructions_file: {path!r}\n") == [
        "c.yaml: instructions_file: must be a relative path inside the project's folder "
        "(no absolute path, no '..' or link leading outside it)"
    ]


def test_instructions_over_the_size_limit_are_refused_naming_the_limit(tmp_path):
    (tmp_path / "big.md").write_text("x" * (MAX_INSTRUCTIONS_BYTES + 1))
    assert config_problems(tmp_path, "instructions_file: big.md\n") == [
        "c.yaml: instructions_file: 'big.md' is larger than the limit of 64 KB for instructions"
    ]
    big = "x" * (MAX_INSTRUCTIONS_BYTES + 1)
    assert config_problems(tmp_path, f"instructions: {big}\n") == [
        "c.yaml: instructions: the text is larger than the limit of 64 KB for instructions"
    ]


def test_other_bad_instructions_are_named(tmp_path):
    (tmp_path / "latin1.md").write_bytes("Voil\xe0".encode("latin-1"))
    assert config_problems(tmp_path, "instructions_file: missing.md\n") == [
        "c.yaml: instructions_file: file not found: 'missing.md'"
    ]
    assert config_problems(tmp_path, "instructions_file: latin1.md\n") == [
        "c.yaml: instructions_file: 'latin1.md' is not valid UTF-8 text"
    ]
    assert config_problems(tmp_path, "instructions: Read me\ninstructions_file: a.md\n") == [
        "c.yaml: instructions_file: give the instructions either inline (instructions) or in a file"
    ]
    assert config_problems(tmp_path, "instructions: [a, b]\n") == [
        "c.yaml: instructions: must be a text or a mapping of language codes to texts, got list"
    ]


# --------------------------------------------------------------------------- rendering


def test_markdown_is_rendered():
    html = render_instructions(
        GUIDE + "\n| a | b |\n|---|---|\n| 1 | 2 |\n[the wiki](https://example.org/wiki)"
    )
    assert "<h2>How to judge</h2>" in html  # under the page's own h1
    assert "<strong>whole</strong>" in html and "<li>say <em>yes</em>" in html
    assert "<table>" in html and "<td>1</td>" in html
    assert '<a href="https://example.org/wiki">the wiki</a>' in html


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        "Hello <script src=x></script> world",
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click]( javascript:alert(1) )",
        "<javascript:alert(1)>",
        "[click](vbscript:msgbox(1)) [data](data:text/html;base64,PHNjcmlwdD4=)",
        '<a href="https://x.org" onclick="alert(1)">raw link</a>',
        '<img src=x onerror="alert(1)">',
        "<iframe src=https://evil.example></iframe>",
        '<div style="position:fixed">raw block</div>\n\ntext',
        "![tracker](https://evil.example/pixel.png)",
        "[ref]\n\n[ref]: javascript:alert(1)",
    ],
)
def test_no_raw_html_script_or_unsafe_link_comes_through(markdown):
    html = render_instructions(markdown)
    tags = re.findall(r"<\s*([a-zA-Z]+)([^>]*)>", html)
    assert {name.lower() for name, _ in tags} <= {"p", "a", "em", "strong", "code"}
    for name, attributes in tags:
        assert not re.search(r"\son\w+=", attributes)
        assert "style" not in attributes
        if name == "a":
            (href,) = re.findall(r'href="([^"]*)"', attributes)
            assert href.startswith("https://"), href
    assert "<script" not in html and "<img" not in html and "<iframe" not in html


# --------------------------------------------------------------------------- the pages


@pytest.fixture
def project(tmp_path, db):
    evil = "\n\n<script>alert('x')</script>\n\n[bad](javascript:alert(1))\n"
    return import_project(config_path=write(tmp_path, indented(GUIDE + evil)), slug="ins").project


def annotator(project, client, name="anna"):
    user = UserFactory(username=name)
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    return user


def test_first_visit_lands_on_the_instructions_with_a_start_button(client, project):
    annotator(project, client)
    annotate = reverse("annotate", args=["ins"])
    response = client.get(annotate)
    assert response.status_code == 302
    assert response["Location"] == reverse("project-instructions", args=["ins"])
    page = client.get(response["Location"]).content.decode()
    assert "<h2>How to judge</h2>" in page and "<strong>whole</strong>" in page
    assert "<script>alert" not in page and 'href="javascript:' not in page
    assert "<p>&lt;script&gt;alert('x')&lt;/script&gt;</p>" in page  # shown as text
    assert re.search(rf'<a class="button" id="start-annotating" href="{annotate}">Start</a>', page)
    # Start: the first unit, which links the instructions (in a new tab: nothing is lost)
    unit_page = client.get(annotate)
    assert unit_page.status_code == 200 and "annotate-form" in unit_page.content.decode()
    link = reverse("project-instructions", args=["ins"])
    assert f'<a href="{link}" target="_blank" rel="noopener">Instructions' in (
        unit_page.content.decode()
    )
    assert client.get(annotate).status_code == 200  # shown once, not before every unit


def test_an_annotator_who_has_started_is_not_sent_back_in_a_new_session(project):
    first, second = Client(), Client()
    user = annotator(project, first)
    first.get(reverse("project-instructions", args=["ins"]))
    assert first.get(reverse("annotate", args=["ins"])).status_code == 200  # given a unit
    second.force_login(user)
    assert second.get(reverse("annotate", args=["ins"])).status_code == 200
    page = second.get(reverse("project-instructions", args=["ins"])).content.decode()
    assert ">Back to annotating</a>" in page


def test_the_unit_page_of_a_project_without_instructions_has_no_link(client, tmp_path, db):
    plain = import_project(config_path=write(tmp_path), slug="plain").project
    annotator(plain, client)
    response = client.get(reverse("annotate", args=["plain"]))
    assert response.status_code == 200
    assert reverse("project-instructions", args=["plain"]) not in response.content.decode()
    page = client.get(reverse("project-instructions", args=["plain"])).content.decode()
    assert "This project has no written instructions" in page


def test_people_outside_the_project_get_a_404(client, project):
    client.force_login(UserFactory(username="stranger"))
    assert client.get(reverse("project-instructions", args=["ins"])).status_code == 404
