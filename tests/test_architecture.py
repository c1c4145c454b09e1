"""The apps depend on each other in one direction, read from their own imports.

Every import statement of every module is collected with `ast`, those inside functions
included. The intended graph is written below (DEPENDS_ON): an app imports only the apps it
names, `projects` is the ground floor and imports no other app (its migrations included),
and the graph has no circle. Inside an app the modules import each other without a circle
too, and an import inside a function is there only where a framework needs it (the app
registry in AppConfig.ready, a migration's historical models), with its reason on the line.
A core (bws/core, agreement/core) imports neither Django nor app code: only its own core,
or the bws core, which agreement builds on. Tests of an app may import anything.
"""

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("projects", "labs", "annotation", "crowds", "bws", "agreement", "demo")
# The intended graph: which apps each app may import (the ground floor first).
DEPENDS_ON = {
    "projects": set(),
    "labs": {"projects"},
    "annotation": {"projects"},
    "crowds": {"projects", "labs", "annotation"},
    "bws": {"projects", "annotation", "crowds"},
    "agreement": {"projects", "annotation", "bws"},  # bws: its core only (below)
    "demo": {"projects", "labs", "annotation", "crowds", "bws", "agreement"},
}
CORES = ("bws.core", "agreement.core")
# The pure cores a core may use besides its own (agreement scores BWS reliability).
SHARED_CORES = {"agreement.core": ("bws.core",)}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str | None = None):
    """(line, imported module) for every import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name or _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module
            # `from bws import services` names the submodule too
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _once_per_line(offences: list[str]) -> list[str]:
    """One message per file:line (`from a import b` is read as a and as a.b)."""
    seen: dict[str, str] = {}
    for offence in offences:
        seen.setdefault(offence.split(": ")[0], offence)
    return list(seen.values())


def _sources(*, tests: bool):
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if not tests and "tests" in path.relative_to(ROOT / app).parts:
                continue
            yield app, path


def _app_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in APPS else None


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_module_parses_and_imports_are_read():
    files = list(_sources(tests=False))
    assert len(files) > 50
    assert any(module == "django.db" for _, p in files for _, module in _imports(p))


def test_projects_imports_no_other_app():
    offences = [
        f"{_where(path, line)}: imports {module}"
        for app, path in _sources(tests=False)
        if app == "projects"
        for line, module in _imports(path)
        if _app_of(module) not in (None, "projects")
    ]
    offences = _once_per_line(offences)
    assert not offences, "projects is the ground floor:\n" + "\n".join(offences)


def test_no_cycle_between_apps():
    edges: dict[str, dict[str, str]] = defaultdict(dict)
    for app, path in _sources(tests=False):
        for line, module in _imports(path):
            other = _app_of(module)
            if other not in (None, app):
                edges[app].setdefault(other, f"{_where(path, line)}: imports {module}")
    # Depth-first search for a path back to where it started.
    cycles = []

    def walk(start, node, trail):
        for nxt, where in edges[node].items():
            if nxt == start:
                cycles.append(trail + [where])
            elif all(nxt not in step for step in trail) and len(trail) < len(APPS):
                walk(start, nxt, trail + [where])

    for app in APPS:
        walk(app, app, [])
    assert not cycles, "apps import each other in a circle:\n" + "\n\n".join(
        "\n".join(cycle) for cycle in cycles
    )


def test_cores_import_no_django_and_no_app_code():
    offences = []
    for _, path in _sources(tests=False):
        module_name = _module_name(path)
        core = next((c for c in CORES if module_name.startswith(c)), None)
        if core is None:
            continue
        allowed = (core, *SHARED_CORES.get(core, ()))
        for line, module in _imports(path):
            if module.split(".")[0] == "django":
                offences.append(f"{_where(path, line)}: imports {module} (Django)")
            elif _app_of(module) and not any(
                module == c or module.startswith(c + ".") for c in allowed
            ):
                offences.append(f"{_where(path, line)}: imports {module} (app code)")
    offences = _once_per_line(offences)
    assert not offences, "a core imports Django or app code:\n" + "\n".join(offences)


def test_bws_and_agreement_use_no_service_of_each_other():
    offences = []
    for app, path in _sources(tests=False):
        if app not in ("bws", "agreement"):
            continue
        other = "agreement" if app == "bws" else "bws"
        for line, module in _imports(path):
            if _app_of(module) == other and not module.startswith(f"{other}.core"):
                offences.append(f"{_where(path, line)}: imports {module}")
    offences = _once_per_line(offences)
    assert not offences, "bws and agreement share only the bws core:\n" + "\n".join(offences)


def test_the_checks_see_function_level_imports(tmp_path):
    """The reader finds an import inside a function, and names its file and line."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n    if True:\n        from bws import services\n"
        "        from ..bws import tasks\n"
    )
    found = list(_imports(sample, "projects.sample"))
    assert (3, "bws.services") in found
    assert (4, "bws.tasks") in found
    assert _app_of("bws.services") == "bws"


def test_the_intended_graph_has_no_circle():
    seen, done = set(), set()

    def visit(app, trail):
        assert app not in seen or app in done, "circle: " + " -> ".join(trail + [app])
        if app in done:
            return
        seen.add(app)
        for other in DEPENDS_ON[app]:
            visit(other, trail + [app])
        done.add(app)

    for app in APPS:
        visit(app, [])
    assert set(DEPENDS_ON) == set(APPS)


def test_each_app_imports_only_the_apps_it_builds_on():
    offences = [
        f"{_where(path, line)}: {app} imports {module}"
        for app, path in _sources(tests=False)
        for line, module in _imports(path)
        if _app_of(module) not in (None, app, *DEPENDS_ON[app])
    ]
    offences = _once_per_line(offences)
    assert not offences, "an import outside the intended graph:\n" + "\n".join(offences)


def _module_graph(app: str) -> dict[str, dict[str, str]]:
    """module -> {module of the same app it imports: where}, migrations left out."""
    modules = {
        _module_name(path): path
        for a, path in _sources(tests=False)
        if a == app and "migrations" not in path.parts
    }
    graph: dict[str, dict[str, str]] = {name: {} for name in modules}
    for name, path in modules.items():
        for line, module in _imports(path, name):
            # `from app import x` names the package and the submodule: the submodule counts
            target = module if module in modules else None
            if target is None or target == name or target == app:
                continue
            graph[name].setdefault(target, _where(path, line))
    return graph


def _cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                strong(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            strong(node)
    return found


def test_no_import_circle_inside_an_app():
    report = []
    for app in APPS:
        graph = _module_graph(app)
        for component in _cycles(graph):
            edges = [
                f"  {graph[a][b]}: {a} imports {b}"
                for a in component
                for b in graph[a]
                if b in component
            ]
            report.append(f"{app}: " + ", ".join(component) + "\n" + "\n".join(edges))
    assert not report, "modules of one app import each other in a circle:\n" + "\n".join(report)


def test_the_circle_check_finds_a_circle():
    graph = {"a.x": {"a.y": "x:1"}, "a.y": {"a.z": "y:1"}, "a.z": {"a.x": "z:1"}, "a.w": {}}
    assert _cycles(graph) == [["a.x", "a.y", "a.z"]]
    assert _cycles({"a.x": {"a.y": "x:1"}, "a.y": {}}) == []


def _function_level_imports(path: Path):
    """(line, source line) of each import statement inside a function or method."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    yield inner.lineno, lines


def _reason_above(lines: list[str], line: int) -> bool:
    """A comment line right above the block of imports this line belongs to."""
    at = line - 2
    while (
        at >= 0
        and lines[at].strip().startswith(("from ", "import ", ")"))
        or (at >= 0 and not lines[at].strip())
    ):
        at -= 1
    return at >= 0 and lines[at].strip().startswith("#")


def test_function_level_imports_only_with_a_reason():
    """An import inside a function is for the framework (AppConfig.ready, a migration), and
    says why on its line or the comment line just above it."""
    offences = []
    for _, path in _sources(tests=False):
        if "migrations" in path.parts:
            continue
        for line, lines in _function_level_imports(path):
            same = lines[line - 1]
            if "#" not in same and not _reason_above(lines, line):
                offences.append(f"{_where(path, line)}: {same.strip()}")
    offences = sorted(set(offences))
    assert not offences, "imports inside functions without a reason:\n" + "\n".join(offences)
