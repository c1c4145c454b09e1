"""The annotate pages allow wavesurfer.js's one inline style by its hash, and nothing more:
the hash is recomputed from the vendored file at the lane height the timeline draws, so an
upgrade or a new height fails here instead of blanking the waveform."""

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from projects.content_policy import WAVEFORM_LANE_HEIGHT, WAVEFORM_STYLE_HASH
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

STATIC = Path(settings.BASE_DIR) / "static"


def wavesurfer_style(height: int) -> str:
    """The <style> text wavesurfer.js writes into its shadow root (no nonce) at a height."""
    source = (STATIC / "vendor" / "wavesurfer" / "wavesurfer.esm.js").read_text()
    found = re.search(r'<style\$\{i\?` nonce="\$\{i\}"`:""\}>(.*?)</style>', source, re.S)
    assert found, "wavesurfer.js no longer writes its style the way this test reads it"
    text = found.group(1)
    height_expression = "${this.getHeight(this.options.height,this.options.splitChannels)}"
    assert text.count("${") == 1 and height_expression in text
    return text.replace(height_expression, str(height)).replace("\\n", "\n")


def test_the_allowed_hash_is_the_vendored_style_at_the_drawn_height():
    script = (STATIC / "annolab" / "timeline" / "lanes.js").read_text()
    assert f"const LANE_HEIGHT = {WAVEFORM_LANE_HEIGHT};" in script
    digest = hashlib.sha256(wavesurfer_style(WAVEFORM_LANE_HEIGHT).encode()).digest()
    assert WAVEFORM_STYLE_HASH == f"'sha256-{base64.b64encode(digest).decode()}'"


@pytest.mark.django_db
def test_only_the_annotate_pages_allow_it(client, tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "a", "media_url": "/a.wav"}) + "\n")
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: Clips\ndata_files: [d.jsonl]\nannotation_schemes:\n"
        "  - {annotation_type: temporal_grounding, name: events, labels: [speech]}\n"
    )
    project = import_project(config_path=tmp_path / "c.yaml", slug="clips").project
    user = UserFactory()
    MembershipFactory(user=user, project=project)
    client.force_login(user)

    page = client.get("/projects/clips/annotate/")
    assert page.status_code == 200 and b"segment-timeline" in page.content
    policy = page["Content-Security-Policy"]
    style = next(d for d in policy.split(";") if d.strip().startswith("style-src"))
    assert style.split() == ["style-src", "'self'", WAVEFORM_STYLE_HASH]
    assert "unsafe-inline" not in policy

    home = client.get("/")
    assert WAVEFORM_STYLE_HASH not in home["Content-Security-Policy"]
