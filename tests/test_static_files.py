"""Static files as production collects them (STATIC_MANIFEST=1): every ES module gets a
hashed name and the imports between modules name the hashed files, so a browser loads one
release's modules together, never a new module with an old one cached, and each module may
be cached for good. The box tool (annolab/boxes3d.js and its modules, three.js) and the
timeline (wavesurfer.js) are such module graphs."""

import json
import posixpath
import re

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

# A static import or re-export: `import x from "url"`, `export {x} from "url"`, `import "url"`.
IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^'";]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']""",
    re.M,
)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    root = tmp_path_factory.mktemp("static")
    storages = {**settings.STORAGES, "staticfiles": {"BACKEND": "config.storage.StaticStorage"}}
    with override_settings(STATIC_ROOT=root, STORAGES=storages):
        call_command("collectstatic", "--noinput", verbosity=0)
    manifest = json.loads((root / "staticfiles.json").read_text())["paths"]
    return root, manifest


def module_graph(root, manifest, entry):
    """The hashed files a browser loads for the module `entry`, following static imports;
    fails on an import that names anything but a hashed file."""
    hashed = set(manifest.values())
    seen, todo = set(), [manifest[entry]]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for match in IMPORT.finditer((root / name).read_text()):
            url = match.group(1) or match.group(2)
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), url))
            assert target in hashed, f"{name} imports {url}, which is not a hashed file"
            todo.append(target)
    return seen


def test_the_box_tool_loads_only_hashed_modules(collected):
    root, manifest = collected
    loaded = module_graph(root, manifest, "annolab/boxes3d.js")
    modules = [name for name in manifest if name.startswith("annolab/boxes3d/")]
    assert len(modules) >= 4  # the tool is split into modules, each reached from the entry
    three = [
        "vendor/three/three.module.js",
        "vendor/three/three.core.js",
        "vendor/three/addons/OrbitControls.js",
    ]
    assert {manifest[name] for name in modules + three} <= loaded


def test_the_timeline_loads_only_hashed_modules(collected):
    root, manifest = collected
    loaded = module_graph(root, manifest, "annolab/timeline.js")
    modules = [name for name in manifest if name.startswith("annolab/timeline/")]
    assert len(modules) >= 4  # the timeline is split into modules, each reached from the entry
    wavesurfer = ["vendor/wavesurfer/wavesurfer.esm.js", "vendor/wavesurfer/plugins/regions.esm.js"]
    assert {manifest[name] for name in modules + wavesurfer} <= loaded
