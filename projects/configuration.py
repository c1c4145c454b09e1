"""Project configuration: a Potato-style YAML file (dialect A or B) read into one normal form.

Pure Python (no Django), so the web upload, the management commands, the REST API and the
``python -m bws`` command line all read a configuration the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from projects.limits import MAX_DB_INTEGER, Limits
from projects.paths import PathRefused, confine
from projects.validation import json_problem

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")

BWS_TYPES = ("bws", "best_worst_scaling")
CHOICE_TYPES = ("radio", "multiselect")
TRACE_TYPES = (
    "process_reward",
    "trajectory_eval",
    "tool_call_review",
    "failure_attribution",
    "gui_trajectory",
)
SEGMENT_TYPES = ("temporal_grounding", "tiered_annotation")
SCHEME_TYPES = (
    BWS_TYPES
    + CHOICE_TYPES
    + ("likert", "text", "spatial_annotation")
    + SEGMENT_TYPES
    + TRACE_TYPES
)

ASSIGNMENT_STRATEGIES = ("least_annotated", "random", "fixed_order")
# The interchange formats answers are read and written in (projects.interchange).
OUTPUT_FORMATS = ("jsonl", "csv", "tsv")
SCORING_METHODS = ("counting", "bradley_terry", "plackett_luce")
TUPLE_METHODS = ("balanced_incomplete", "random")
DISPLAY_TYPES = ("text", "image", "audio", "video", "code", "dialogue")

# The BWS page binds worst to q..i, so eight items is the most a tuple can hold.
MIN_TUPLE_SIZE, MAX_TUPLE_SIZE = 3, 8
DEFAULT_TUPLE_SIZE = 4
DEFAULT_APPEARANCES = 8
DEFAULT_SEED = 42
DEFAULT_SCORING_METHOD = "counting"
DEFAULT_BOOTSTRAP_ITERATIONS = 1000
DEFAULT_LEASE_MINUTES = 30
DEFAULT_OUTPUT_DIR = "annotation_output/"

COMMON_TOP_KEYS = (
    "task_dir",
    "data_files",
    "item_properties",
    "assignment_strategy",
    "num_annotators_per_item",
    "max_annotations_per_user",
    "assignment_lease_minutes",
    "user_config",
    "agreement_metrics",
    "output_annotation_dir",
    "instance_display",
    "annotation_schemes",
)
DIALECT_TOP_KEYS = {
    "A": ("annotation_task_name", "bws_config", "export_annotation_format"),
    "B": ("task_name", "output_annotation_format"),
}
# The same setting under the other dialect's name.
EQUIVALENT_KEYS = {
    "task_name": "annotation_task_name",
    "annotation_task_name": "task_name",
    "output_annotation_format": "export_annotation_format",
    "export_annotation_format": "output_annotation_format",
}

COMMON_SCHEME_KEYS = ("annotation_type", "name", "description", "label_requirement")
SCHEME_KEYS = {
    "bws": (
        "tuple_size",
        "best_description",
        "worst_description",
        "sequential_key_binding",
    ),
    "best_worst_scaling": (
        "items_key",
        "tuple_size",
        "best_label",
        "worst_label",
        "show_item_labels",
        "randomize_order",
        "show_source",
        "sequential_key_binding",
        "tuple_generation",
        "scoring",
    ),
    "radio": ("labels", "sequential_key_binding", "horizontal"),
    "multiselect": ("labels", "sequential_key_binding", "horizontal"),
    "likert": ("size", "labels", "min_label", "max_label", "sequential_key_binding"),
    "text": ("multiline",),
    "spatial_annotation": ("labels",),
    "temporal_grounding": ("labels", "media_key"),
    "tiered_annotation": ("labels", "tiers", "media_key"),
}
for _trace_type in TRACE_TYPES:
    SCHEME_KEYS[_trace_type] = ("labels", "steps_key")

SCORING_KEYS = (
    "method",
    "auto_compute",
    "output_file",
    "include_confidence",
    "bootstrap_iterations",
)
TUPLE_GENERATION_KEYS = ("method", "tuples_per_item", "seed", "ensure_pair_coverage")
BWS_CONFIG_KEYS = (
    "tuple_size",
    "min_item_appearances",
    "seed",
    "scoring",
    "method",
    "ensure_pair_coverage",
)

_A_SCHEME_KEY_LIST = ", ".join(COMMON_SCHEME_KEYS[1:] + SCHEME_KEYS["bws"])
# Keys a dialect-A `bws` scheme may carry by mistake: (reason, suggestion).
BWS_A_SCHEME_HINTS = {
    "tuple_generation": ("tuple generation belongs in the top-level bws_config", "bws_config"),
    "scoring": ("scoring belongs in the top-level bws_config", "bws_config.scoring"),
    "min_item_appearances": ("belongs in the top-level bws_config", "bws_config"),
    "tuples_per_item": ("belongs in the top-level bws_config", "bws_config.min_item_appearances"),
    "seed": ("belongs in the top-level bws_config", "bws_config.seed"),
    "method": ("belongs in the top-level bws_config", "bws_config.scoring.method"),
    "best_label": ("is the best_worst_scaling (dialect B) name", "best_description"),
    "worst_label": ("is the best_worst_scaling (dialect B) name", "worst_description"),
}
for _key in ("items_key", "show_item_labels", "randomize_order", "show_source"):
    BWS_A_SCHEME_HINTS[_key] = (
        "is a best_worst_scaling (dialect B) key; a bws scheme accepts only "
        f"{_A_SCHEME_KEY_LIST} (tuple generation and scoring belong in bws_config); "
        "for instances that hold item lists use annotation_type: best_worst_scaling",
        None,
    )
BWS_B_SCHEME_HINTS = {
    "best_description": ("is the bws (dialect A) name", "best_label"),
    "worst_description": ("is the bws (dialect A) name", "worst_label"),
    "min_item_appearances": (
        "is the bws_config (dialect A) name",
        "tuple_generation.tuples_per_item",
    ),
    "seed": ("belongs in tuple_generation", "tuple_generation.seed"),
    "bootstrap_iterations": ("belongs in scoring", "scoring.bootstrap_iterations"),
}
BWS_CONFIG_HINTS = {
    "tuples_per_item": ("is the tuple_generation (dialect B) name", "min_item_appearances"),
    "items_key": (
        "belongs to best_worst_scaling (dialect B) schemes; dialect A reads one item per line",
        None,
    ),
    "tuple_generation": (
        "is a best_worst_scaling (dialect B) block; bws_config holds its settings directly",
        "method",
    ),
}
TUPLE_GENERATION_HINTS = {
    "min_item_appearances": ("is the bws_config (dialect A) name", "tuples_per_item"),
}


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a configuration file: where it is and what is wrong."""

    file: str
    key_path: str
    reason: str
    suggestion: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}: {self.key_path}: " if self.key_path else f"{self.file}: "
        hint = f"; did you mean '{self.suggestion}'?" if self.suggestion else ""
        return f"{where}{self.reason}{hint}"


class ConfigError(ValueError):
    """A configuration that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: list[ConfigIssue]):
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


@dataclass(frozen=True)
class BwsDesign:
    """How the project's one tuple set is built: shared by every BWS scheme of the project."""

    tuple_size: int = DEFAULT_TUPLE_SIZE
    items_key: str | None = None
    method: str = "balanced_incomplete"
    appearances: int = DEFAULT_APPEARANCES
    seed: int = DEFAULT_SEED
    ensure_pair_coverage: bool = False


@dataclass(frozen=True)
class Scheme:
    name: str
    type: str
    description: str = ""
    options: dict = field(default_factory=dict)

    @property
    def is_bws(self) -> bool:
        return self.type == "bws"


@dataclass(frozen=True)
class ProjectConfig:
    """The normal form of a project configuration, whichever dialect it was written in."""

    task_name: str
    dialect: str
    base_dir: str
    data_files: list[str]
    schemes: list[Scheme]
    item_properties: dict = field(default_factory=lambda: {"id_key": "id", "text_key": "text"})
    instance_display: list[dict] = field(default_factory=list)
    assignment_strategy: str = "least_annotated"
    num_annotators_per_item: int | None = None
    max_annotations_per_user: int | None = None
    lease_minutes: int = DEFAULT_LEASE_MINUTES
    allow_all_users: bool = False
    authorized_users: list[str] = field(default_factory=list)
    output_annotation_dir: str = DEFAULT_OUTPUT_DIR
    output_annotation_format: str = "jsonl"
    agreement_metrics: dict = field(default_factory=dict)
    bws: BwsDesign | None = None
    notices: list[str] = field(default_factory=list)
    source: str = "config.yaml"

    @property
    def bws_schemes(self) -> list[Scheme]:
        return [scheme for scheme in self.schemes if scheme.is_bws]

    @property
    def id_key(self) -> str:
        return self.item_properties["id_key"]

    @property
    def text_key(self) -> str:
        return self.item_properties["text_key"]

    def scheme(self, name: str) -> Scheme:
        for scheme in self.schemes:
            if scheme.name == name:
                return scheme
        known = ", ".join(s.name for s in self.schemes)
        raise KeyError(f"no scheme named {name!r} (schemes: {known})")

    def data_paths(self) -> list[Path]:
        return [Path(self.base_dir) / name for name in self.data_files]

    def output_dir(self) -> Path:
        return Path(self.base_dir) / self.output_annotation_dir

    def to_dict(self) -> dict:
        """A JSON-serialisable dict; ``from_dict`` reads it back."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> ProjectConfig:
        """Read a stored ``to_dict``; keys this version does not know are ignored."""
        data = _known_fields(cls, data)
        data["schemes"] = [Scheme(**_known_fields(Scheme, s)) for s in data.get("schemes", [])]
        if data.get("bws") is not None:
            data["bws"] = BwsDesign(**_known_fields(BwsDesign, data["bws"]))
        return cls(**data)


def _known_fields(cls, data: dict) -> dict:
    names = {f.name for f in dataclasses.fields(cls)}
    return {key: value for key, value in data.items() if key in names}


# --------------------------------------------------------------------------- reading


def load_config(
    path: str | Path,
    *,
    check_files: bool = True,
    trusted: bool = True,
    limits: Limits | None = None,
) -> ProjectConfig:
    """Read and check a YAML configuration file; raise ConfigError naming every problem.

    ``trusted`` (the operator's own files) lets task_dir and data_files point anywhere;
    otherwise (a config that came over the web) they must stay inside the config's folder.
    Paths the worker writes stay inside the project's folder either way.
    """
    limits = limits or Limits()
    path = Path(path)
    name = path.name
    try:
        with path.open("rb") as stream:
            raw = stream.read(limits.config_bytes + 1)
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(name, "", "file not found")]) from None
    except OSError as exc:
        reason = f"cannot read the file: {exc.strerror or type(exc).__name__}"
        raise ConfigError([ConfigIssue(name, "", reason)]) from None
    _check_size(len(raw), name, limits)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError([ConfigIssue(name, "", "not valid UTF-8 text")]) from None
    data = parse_yaml(text, name, limits=limits)
    return parse_config(
        data, name, path.resolve().parent, check_files=check_files, trusted=trusted, limits=limits
    )


def _check_size(size: int, source: str, limits: Limits) -> None:
    if size > limits.config_bytes:
        reason = (
            f"the file is larger than the limit of {limits.config_bytes} bytes (CONFIG_MAX_BYTES)"
        )
        raise ConfigError([ConfigIssue(source, "", reason)])


# Deeper than any config needs; what the parser itself accepts is bounded the same way.
_YAML_MAX_DEPTH = 64


def parse_yaml(text: str, source: str = "config.yaml", *, limits: Limits | None = None) -> Any:
    """YAML text to Python data; syntax errors, duplicate keys and a document larger than
    the limits (aliases expanded, so an alias bomb is refused unbuilt) become a ConfigError."""
    limits = limits or Limits()
    _check_size(len(text.encode("utf-8", "surrogatepass")), source, limits)
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_nodes(node, source, limits)
                data = loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise ConfigError([ConfigIssue(source, "", "YAML nested too deeply")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if mark is not None:
            reason = (
                f"YAML syntax error at line {mark.line + 1}, column {mark.column + 1}: {problem}"
            )
        else:
            reason = f"YAML syntax error: {problem}"
        raise ConfigError([ConfigIssue(source, "", reason)]) from None
    if node is None:
        raise ConfigError([ConfigIssue(source, "", "the file is empty")])
    if problem := json_problem(data, max_depth=_YAML_MAX_DEPTH, setting="YAML nesting"):
        raise ConfigError([ConfigIssue(source, "", f"cannot be stored: {problem}")])
    duplicates = list(_duplicate_keys(node, ""))
    if duplicates:
        raise ConfigError(
            [
                ConfigIssue(source, key_path, f"duplicate key (lines {first} and {second})")
                for key_path, first, second in duplicates
            ]
        )
    return data


def _check_nodes(root: yaml.Node, source: str, limits: Limits) -> None:
    """Refuse a document whose nodes, every alias expanded, exceed CONFIG_MAX_YAML_NODES,
    or that refers to itself; counted on the composed graph (each node once), so a few
    lines of nested aliases cost nothing to refuse."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _child_nodes(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > limits.yaml_nodes:
                reason = (
                    f"the document holds more than {limits.yaml_nodes} values once its "
                    "aliases (*name) are expanded; the limit is "
                    f"{limits.yaml_nodes} (CONFIG_MAX_YAML_NODES)"
                )
                raise ConfigError([ConfigIssue(source, "", reason)])
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ConfigError(
                [ConfigIssue(source, "", "an alias (*name) refers to the value that holds it")]
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _child_nodes(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _duplicate_keys(node: yaml.Node, path: str):
    """Keys given twice in one mapping (PyYAML would silently keep the last)."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                yield _join(path, key), seen[key], line
            else:
                seen[key] = line
            yield from _duplicate_keys(value_node, _join(path, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            yield from _duplicate_keys(child, f"{path}[{index}]")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _nearest(word: str, candidates) -> str | None:
    word = str(word)
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    if matches:
        return matches[0]
    # Abbreviations and truncations ("key" for "key_value") score low on similarity.
    if len(word) >= 3:
        for candidate in candidates:
            if candidate.startswith(word) or word.startswith(candidate):
                return candidate
    return None


class _Checker:
    """Collects issues while reading values out of the parsed YAML."""

    def __init__(self, source: str, limits: Limits | None = None, root: Path | None = None):
        self.source = source
        self.issues: list[ConfigIssue] = []
        self.limits = limits or Limits()
        # The project's folder, inside which the paths the worker writes must stay.
        self.root = root

    def issue(self, path: str, reason: str, suggestion: str | None = None) -> None:
        self.issues.append(ConfigIssue(self.source, path, reason, suggestion))

    def known_keys(self, mapping: dict, path: str, allowed, hints: dict | None = None) -> None:
        hints = hints or {}
        for key in mapping:
            if key in allowed:
                continue
            key_path = _join(path, str(key))
            if key in hints:
                reason, suggestion = hints[key]
                self.issue(key_path, reason, suggestion)
            else:
                self.issue(key_path, "unknown key", _nearest(key, allowed))

    def mapping(self, value: Any, path: str) -> dict | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.issue(path, f"must be a mapping of keys, got {_type_name(value)}")
            return None
        return value

    def string(self, mapping: dict, key: str, path: str, default=None, *, required=False):
        key_path = _join(path, key)
        if key not in mapping or mapping[key] is None:
            if required:
                self.issue(key_path, "missing required key")
            return default
        value = mapping[key]
        if not isinstance(value, str):
            self.issue(key_path, f"must be a string, got {_type_name(value)}")
            return default
        if required and not value.strip():
            self.issue(key_path, "must not be empty")
            return default
        return value

    def boolean(self, mapping: dict, key: str, path: str, default: bool) -> bool:
        value = mapping.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.issue(_join(path, key), f"must be true or false, got {_type_name(value)}")
            return default
        return value

    def integer(self, mapping: dict, key: str, path: str, default, *, minimum=None, maximum=None):
        value = mapping.get(key)
        if value is None:
            return default
        key_path = _join(path, key)
        if isinstance(value, bool) or not isinstance(value, int):
            self.issue(key_path, f"must be an integer, got {_type_name(value)} {value!r}")
            return default
        if minimum is not None and maximum is not None and not minimum <= value <= maximum:
            self.issue(key_path, f"must be between {minimum} and {maximum}, got {value}")
            return default
        if minimum is not None and value < minimum:
            wanted = "a positive integer" if minimum == 1 else f"at least {minimum}"
            self.issue(key_path, f"must be {wanted}, got {value}")
            return default
        return value

    def limited(self, mapping: dict, key: str, path: str, default, limit: str, *, minimum=1):
        """An integer from ``minimum`` up to the named limit (Limits field ``limit``)."""
        value = self.integer(mapping, key, path, default, minimum=minimum)
        if value is not None and value > getattr(self.limits, limit):
            self.issue(_join(path, key), self.limits.above(limit, value))
            return default
        return value

    def count(self, mapping: dict, key: str, path: str):
        """An optional count that database columns can hold."""
        value = self.integer(mapping, key, path, None, minimum=1)
        if value is not None and value > MAX_DB_INTEGER:
            self.issue(_join(path, key), f"must be at most {MAX_DB_INTEGER}, got {value}")
            return None
        return value

    def written_path(self, mapping: dict, key: str, path: str, default=None):
        """A path the worker writes under: relative, and inside the project's folder."""
        value = self.string(mapping, key, path, default)
        if value is None or self.root is None:
            return value
        try:
            confine(_join(path, key), value, self.root)
        except PathRefused as exc:
            self.issues.append(ConfigIssue(self.source, exc.key, exc.reason))
            return default
        return value

    def choice(self, mapping: dict, key: str, path: str, choices, default: str) -> str:
        value = mapping.get(key)
        if value is None:
            return default
        key_path = _join(path, key)
        if not isinstance(value, str) or value not in choices:
            self.issue(
                key_path,
                f"unknown value {value!r} (one of: {', '.join(choices)})",
                _nearest(value, choices) if isinstance(value, str) else None,
            )
            return default
        return value

    def string_list(self, mapping: dict, key: str, path: str) -> list[str]:
        value = mapping.get(key)
        if value is None:
            return []
        key_path = _join(path, key)
        if not isinstance(value, list):
            self.issue(key_path, f"must be a list of strings, got {_type_name(value)}")
            return []
        result = []
        for index, entry in enumerate(value):
            if not isinstance(entry, str) or not entry.strip():
                self.issue(f"{key_path}[{index}]", f"must be a non-empty string, got {entry!r}")
            else:
                result.append(entry)
        return result


# --------------------------------------------------------------------------- parsing


def parse_config(
    data: Any,
    source: str = "config.yaml",
    base_dir: str | Path = ".",
    *,
    check_files: bool = True,
    trusted: bool = True,
    limits: Limits | None = None,
) -> ProjectConfig:
    """Check parsed YAML data and normalise it; raise ConfigError listing every problem.

    ``source`` names the file in messages; ``base_dir`` is the directory of the
    configuration file, against which ``task_dir`` (and through it the data files) resolve.
    Untrusted (``trusted=False``), every path key must stay inside ``base_dir``; trusted,
    task_dir and data_files may point anywhere. output_annotation_dir and
    scoring.output_file stay inside the project's folder either way.
    """
    base = Path(base_dir).resolve()
    check = _Checker(source, limits, base)
    if not isinstance(data, dict):
        check.issue("", f"the file must hold a mapping of keys, got {_type_name(data)}")
        raise ConfigError(check.issues)

    notices: list[str] = []
    raw_schemes = data.get("annotation_schemes")
    dialect = _dialect(data, check)
    check.known_keys(data, "", COMMON_TOP_KEYS + DIALECT_TOP_KEYS["A"] + DIALECT_TOP_KEYS["B"])

    name_key = "annotation_task_name" if dialect == "A" else "task_name"
    task_name = check.string(data, name_key, "")
    if task_name is not None and not task_name.strip():
        check.issue(name_key, "must not be empty")
    if not task_name or not task_name.strip():
        task_name = _default_task_name(source, base_dir)
        notices.append(f"No {name_key}: the task is named {task_name!r} after the file")

    task_dir = check.string(data, "task_dir", "", ".")
    root: Path | None = base
    if trusted:
        root = (base / task_dir).resolve()
    else:
        try:
            root = confine("task_dir", task_dir, base)
        except PathRefused as exc:
            check.issue("task_dir", exc.reason)
            root = None
    if root is not None and check_files and task_dir != "." and not root.is_dir():
        check.issue("task_dir", f"directory not found: {task_dir!r}")
    if root is not None:
        check.root = root
    data_files = _data_files(
        data,
        check,
        root,
        check_files=check_files and root is not None and root.is_dir(),
        within=None if trusted else base,
    )

    item_properties = _item_properties(data, check)
    instance_display = _instance_display(data, check)

    assignment_strategy = check.choice(
        data, "assignment_strategy", "", ASSIGNMENT_STRATEGIES, "least_annotated"
    )
    num_annotators = check.count(data, "num_annotators_per_item", "")
    max_per_user = check.count(data, "max_annotations_per_user", "")
    lease_minutes = check.limited(
        data, "assignment_lease_minutes", "", DEFAULT_LEASE_MINUTES, "lease_minutes"
    )

    user_config = check.mapping(data.get("user_config"), "user_config") or {}
    check.known_keys(user_config, "user_config", ("allow_all_users", "authorized_users"))
    allow_all_users = check.boolean(user_config, "allow_all_users", "user_config", False)
    authorized_users = check.string_list(user_config, "authorized_users", "user_config")

    output_dir = check.written_path(data, "output_annotation_dir", "", DEFAULT_OUTPUT_DIR)
    format_key = "export_annotation_format" if dialect == "A" else "output_annotation_format"
    output_format = check.choice(data, format_key, "", OUTPUT_FORMATS, "jsonl")

    agreement_metrics = check.mapping(data.get("agreement_metrics"), "agreement_metrics") or {}
    try:
        json.dumps(agreement_metrics)
    except (TypeError, ValueError):
        check.issue(
            "agreement_metrics",
            "holds a value that is not plain data (quote dates and times)",
        )
    else:
        if agreement_metrics:
            # Chosen metrics would be ignored: refuse them rather than pretend.
            check.issue(
                "agreement_metrics",
                "is not supported: the agreement report computes every figure each scheme's "
                "type defines; remove this key",
            )

    schemes_data = _schemes(raw_schemes, check)
    bws, schemes = _bws_design(data, dialect, schemes_data, check, notices)

    if check.issues:
        raise ConfigError(check.issues)
    return ProjectConfig(
        task_name=task_name,
        dialect=dialect,
        base_dir=str(root if root is not None else base),
        data_files=data_files,
        schemes=schemes,
        item_properties=item_properties,
        instance_display=instance_display,
        assignment_strategy=assignment_strategy,
        num_annotators_per_item=num_annotators,
        max_annotations_per_user=max_per_user,
        lease_minutes=lease_minutes,
        allow_all_users=allow_all_users,
        authorized_users=authorized_users,
        output_annotation_dir=output_dir,
        output_annotation_format=output_format,
        agreement_metrics=dict(agreement_metrics),
        bws=bws,
        notices=notices,
        source=source,
    )


def _default_task_name(source: str, base_dir: str | Path) -> str:
    stem = Path(source).stem
    folder = Path(base_dir).resolve().name
    if stem in ("config", "project", "") and folder:
        return folder
    return stem or "Untitled task"


def _dialect(data: dict, check: _Checker) -> str:
    """Decide A or B and report every key of the other dialect: the two do not mix.

    The first BWS scheme decides; without one, the first dialect-specific top-level key.
    """
    markers: list[tuple[str, str, str]] = []  # (dialect, key path, what)
    schemes = data.get("annotation_schemes")
    if isinstance(schemes, list):
        for index, scheme in enumerate(schemes):
            if isinstance(scheme, dict) and scheme.get("annotation_type") in BWS_TYPES:
                kind = scheme["annotation_type"]
                markers.append(
                    (
                        "A" if kind == "bws" else "B",
                        f"annotation_schemes[{index}].annotation_type",
                        f"annotation_type: {kind}",
                    )
                )
    for key in data:
        for dialect, keys in DIALECT_TOP_KEYS.items():
            if key in keys:
                markers.append((dialect, str(key), str(key)))
    if not markers:
        return "A"
    dialect, _, decider = markers[0]
    other = "B" if dialect == "A" else "A"
    for marker_dialect, key_path, what in markers:
        if marker_dialect == dialect:
            continue
        if what.startswith("annotation_type"):
            suggestion = "bws" if dialect == "A" else "best_worst_scaling"
            reason = f"{what} is dialect {other}"
        else:
            suggestion = EQUIVALENT_KEYS.get(what)
            reason = f"{what} is a dialect {other} key"
        check.issue(
            key_path,
            f"{reason}, but this file is dialect {dialect} ({decider}); "
            "one file cannot mix the two dialects",
            suggestion,
        )
    return dialect


def _data_files(
    data: dict, check: _Checker, root: Path | None, *, check_files: bool, within: Path | None
) -> list[str]:
    """The data file names; ``within`` (untrusted configs) is the folder they must stay in."""
    value = data.get("data_files")
    if value is None:
        check.issue("data_files", "missing required key (a list of data files)")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        check.issue("data_files", f"must be a list of file names, got {_type_name(value)}")
        return []
    if not value:
        check.issue("data_files", "must name at least one data file")
        return []
    files: list[str] = []
    for index, name in enumerate(value):
        key_path = f"data_files[{index}]"
        if not isinstance(name, str) or not name.strip():
            check.issue(key_path, f"must be a file name, got {name!r}")
            continue
        if name in files:
            check.issue(key_path, f"{name!r} is listed twice")
            continue
        if within is not None and root is not None:
            try:
                confine(key_path, name, within, start=root)
            except PathRefused as exc:
                check.issue(key_path, exc.reason)
                continue
        files.append(name)
        suffix = Path(name).suffix.lower()
        if suffix not in DATA_SUFFIXES:
            check.issue(
                key_path,
                f"unsupported file type {suffix or '(none)'!r} for {name!r} "
                f"(use {', '.join(DATA_SUFFIXES)})",
            )
        elif check_files and not (root / name).is_file():
            check.issue(key_path, f"data file not found: {name!r}")
    return files


def _item_properties(data: dict, check: _Checker) -> dict:
    props = check.mapping(data.get("item_properties"), "item_properties") or {}
    check.known_keys(props, "item_properties", ("id_key", "text_key"))
    return {
        "id_key": check.string(props, "id_key", "item_properties", "id"),
        "text_key": check.string(props, "text_key", "item_properties", "text"),
    }


def _instance_display(data: dict, check: _Checker) -> list[dict]:
    block = check.mapping(data.get("instance_display"), "instance_display")
    if not block:
        return []
    check.known_keys(block, "instance_display", ("fields",))
    fields = block.get("fields")
    if fields is None:
        return []
    if not isinstance(fields, list):
        check.issue("instance_display.fields", f"must be a list, got {_type_name(fields)}")
        return []
    result = []
    seen: set[str] = set()
    for index, entry in enumerate(fields):
        path = f"instance_display.fields[{index}]"
        entry = check.mapping(entry, path)
        if entry is None:
            continue
        check.known_keys(entry, path, ("key", "type", "label", "display_options"))
        key = check.string(entry, "key", path, required=True)
        kind = check.choice(entry, "type", path, DISPLAY_TYPES, "text")
        options = check.mapping(entry.get("display_options"), _join(path, "display_options"))
        options = options or {}
        check.known_keys(options, _join(path, "display_options"), ("label",))
        label = check.string(entry, "label", path) or check.string(
            options, "label", _join(path, "display_options")
        )
        if key is None:
            continue
        if key in seen:
            check.issue(_join(path, "key"), f"field {key!r} is listed twice")
        seen.add(key)
        result.append({"key": key, "label": label or key, "type": kind})
    return result


# --------------------------------------------------------------------------- schemes


@dataclass
class _RawScheme:
    """A scheme read so far, before the project-wide BWS design is settled."""

    index: int
    name: str
    kind: str  # as written: bws, best_worst_scaling, radio, ...
    description: str
    options: dict
    data: dict

    @property
    def path(self) -> str:
        return f"annotation_schemes[{self.index}]"


def _schemes(raw: Any, check: _Checker) -> list[_RawScheme]:
    if raw is None:
        check.issue("annotation_schemes", "missing required key (at least one scheme)")
        return []
    if not isinstance(raw, list):
        check.issue("annotation_schemes", f"must be a list of schemes, got {_type_name(raw)}")
        return []
    if not raw:
        check.issue("annotation_schemes", "must hold at least one scheme")
        return []
    schemes: list[_RawScheme] = []
    names: dict[str, int] = {}
    for index, entry in enumerate(raw):
        path = f"annotation_schemes[{index}]"
        entry = check.mapping(entry, path)
        if entry is None:
            if raw[index] is None:
                check.issue(path, "empty scheme")
            continue
        kind = entry.get("annotation_type")
        name = check.string(entry, "name", path, required=True)
        if name is not None:
            if name in names:
                check.issue(
                    _join(path, "name"),
                    f"duplicate scheme name {name!r} (also annotation_schemes[{names[name]}])",
                )
            else:
                names[name] = index
        if kind is None:
            check.issue(_join(path, "annotation_type"), "missing required key")
            continue
        if kind not in SCHEME_TYPES:
            check.issue(
                _join(path, "annotation_type"),
                f"unknown annotation type {kind!r}",
                _nearest(kind, SCHEME_TYPES) if isinstance(kind, str) else None,
            )
            continue
        hints = {"bws": BWS_A_SCHEME_HINTS, "best_worst_scaling": BWS_B_SCHEME_HINTS}
        check.known_keys(entry, path, COMMON_SCHEME_KEYS + SCHEME_KEYS[kind], hints.get(kind))
        description = check.string(entry, "description", path, "")
        options = _scheme_options(kind, entry, path, check)
        schemes.append(_RawScheme(index, name or "", kind, description, options, entry))
    return schemes


def _required(entry: dict, path: str, check: _Checker, default: bool) -> bool:
    block = check.mapping(entry.get("label_requirement"), _join(path, "label_requirement"))
    if not block:
        return default
    check.known_keys(block, _join(path, "label_requirement"), ("required",))
    return check.boolean(block, "required", _join(path, "label_requirement"), default)


def _scheme_options(kind: str, entry: dict, path: str, check: _Checker) -> dict:
    if kind in BWS_TYPES:
        return _bws_options(kind, entry, path, check)
    options: dict[str, Any] = {"required": _required(entry, path, check, False)}
    if kind in CHOICE_TYPES:
        options["labels"] = _labels(entry, path, check, required=True)
        options["sequential_key_binding"] = check.boolean(
            entry, "sequential_key_binding", path, False
        )
        options["horizontal"] = check.boolean(entry, "horizontal", path, False)
    elif kind == "likert":
        options.update(_likert(entry, path, check))
    elif kind == "text":
        options["multiline"] = check.boolean(entry, "multiline", path, False)
    elif kind == "spatial_annotation":
        options["labels"] = _labels(entry, path, check, required=True)
    elif kind in SEGMENT_TYPES:
        options["labels"] = _labels(entry, path, check, required=True)
        if kind == "tiered_annotation":
            options["tiers"] = _tiers(entry, path, check)
        options["media_key"] = check.string(entry, "media_key", path, "media_url")
    elif kind in TRACE_TYPES:
        options["labels"] = _labels(entry, path, check, required=True)
        options["steps_key"] = check.string(entry, "steps_key", path, "steps")
    return options


def _labels(entry: dict, path: str, check: _Checker, *, required: bool) -> list[dict]:
    key_path = _join(path, "labels")
    labels: list[dict] = []
    names: set[str] = set()
    keys: set[str] = set()
    for index, label in enumerate(_label_list(entry.get("labels"), key_path, check, required)):
        label_path = f"{key_path}[{index}]"
        parsed = _label(label, label_path, check, keys)
        if parsed is None:
            continue
        name, key_value = parsed
        if not name.strip():
            check.issue(label_path, "label name must not be empty")
            continue
        if name in names:
            check.issue(label_path, f"duplicate label {name!r}")
            continue
        names.add(name)
        labels.append({"name": name, "key_value": key_value})
    return labels


def _label_list(value: Any, key_path: str, check: _Checker, required: bool) -> list:
    """The labels key as a non-empty list, or [] with an issue (none if optional and absent)."""
    if value is None:
        if required:
            check.issue(key_path, "missing required key (the choices, a list of labels)")
        return []
    if not isinstance(value, list):
        check.issue(key_path, f"must be a list of labels, got {_type_name(value)}")
        return []
    if not value:
        check.issue(key_path, "must list at least one label")
        return []
    return value


def _label(label: Any, label_path: str, check: _Checker, keys: set[str]):
    """(name, key_value or None) of one label, a plain name or a mapping; None if unusable."""
    if isinstance(label, (str, int)) and not isinstance(label, bool):
        return str(label), None
    if isinstance(label, dict):
        return _label_mapping(label, label_path, check, keys)
    if isinstance(label, bool):
        check.issue(
            label_path,
            f"YAML read this label as the boolean {str(label).lower()}; quote it "
            "(yes/no/on/off/true/false unquoted are booleans)",
        )
        return None
    check.issue(label_path, f"must be a string or a mapping with name, got {_type_name(label)}")
    return None


def _label_mapping(label: dict, label_path: str, check: _Checker, keys: set[str]):
    check.known_keys(label, label_path, ("name", "key_value"))
    raw_name = label.get("name")
    if raw_name is None:
        check.issue(_join(label_path, "name"), "missing required key")
        return None
    if isinstance(raw_name, bool) or not isinstance(raw_name, (str, int)):
        check.issue(_join(label_path, "name"), f"must be a string, got {_type_name(raw_name)}")
        return None
    key_value = _label_key(label.get("key_value"), _join(label_path, "key_value"), check, keys)
    return str(raw_name), key_value


def _label_key(raw_key: Any, key_path: str, check: _Checker, keys: set[str]) -> str | None:
    """A label's keyboard key; each key bound to one label (an issue names a second one)."""
    if raw_key is None:
        return None
    if isinstance(raw_key, bool) or not isinstance(raw_key, (str, int)):
        check.issue(key_path, f"must be a key (a string), got {_type_name(raw_key)}")
        return None
    if not str(raw_key).strip():
        check.issue(key_path, "must not be empty")
        return None
    key_value = str(raw_key)
    if key_value in keys:
        check.issue(key_path, f"key {key_value!r} is bound to two labels")
    keys.add(key_value)
    return key_value


def _likert(entry: dict, path: str, check: _Checker) -> dict:
    labels = _labels(entry, path, check, required=False) if "labels" in entry else []
    size = check.limited(entry, "size", path, None, "likert_size", minimum=2)
    if size is None and not labels:
        if "size" not in entry and "labels" not in entry:
            check.issue(_join(path, "size"), "missing required key (likert needs size or labels)")
        size = len(labels) or None
    elif size is not None and labels and size != len(labels):
        check.issue(_join(path, "size"), f"is {size} but {len(labels)} labels are listed")
    elif size is None:
        size = len(labels)
    options: dict[str, Any] = {
        "size": size,
        "min_label": check.string(entry, "min_label", path, ""),
        "max_label": check.string(entry, "max_label", path, ""),
        "sequential_key_binding": check.boolean(entry, "sequential_key_binding", path, False),
    }
    if labels:
        if len(labels) > check.limits.likert_size:
            check.issue(
                _join(path, "labels"), check.limits.above("likert_size", len(labels), "labels")
            )
        options["labels"] = labels
    return options


def _tiers(entry: dict, path: str, check: _Checker) -> list[str]:
    key_path = _join(path, "tiers")
    if entry.get("tiers") is None:
        check.issue(key_path, "missing required key (tiered_annotation lists its tiers)")
        return []
    tiers = check.string_list(entry, "tiers", path)
    if not tiers and isinstance(entry.get("tiers"), list) and not entry["tiers"]:
        check.issue(key_path, "must list at least one tier")
    for index, tier in enumerate(tiers):
        if tier in tiers[:index]:
            check.issue(f"{key_path}[{index}]", f"duplicate tier {tier!r}")
    return tiers


def _scoring(block: Any, path: str, check: _Checker) -> dict:
    block = check.mapping(block, path) or {}
    check.known_keys(block, path, SCORING_KEYS)
    return {
        "method": check.choice(block, "method", path, SCORING_METHODS, DEFAULT_SCORING_METHOD),
        "auto_compute": check.boolean(block, "auto_compute", path, True),
        "output_file": check.written_path(block, "output_file", path),
        "include_confidence": check.boolean(block, "include_confidence", path, True),
        "bootstrap_iterations": check.limited(
            block,
            "bootstrap_iterations",
            path,
            DEFAULT_BOOTSTRAP_ITERATIONS,
            "bootstrap_iterations",
        ),
    }


def _bws_options(kind: str, entry: dict, path: str, check: _Checker) -> dict:
    if kind == "bws":
        best = check.string(entry, "best_description", path, "Best")
        worst = check.string(entry, "worst_description", path, "Worst")
    else:
        best = check.string(entry, "best_label", path, "Best")
        worst = check.string(entry, "worst_label", path, "Worst")
    return {
        "best_label": best,
        "worst_label": worst,
        "sequential_key_binding": check.boolean(entry, "sequential_key_binding", path, True),
        "required": _required(entry, path, check, True),
        "show_item_labels": check.boolean(entry, "show_item_labels", path, True),
        "randomize_order": check.boolean(entry, "randomize_order", path, False),
        "show_source": check.boolean(entry, "show_source", path, False),
        # Dialect A scores in bws_config: filled in by _bws_design.
        "scoring": _scoring(entry.get("scoring"), _join(path, "scoring"), check)
        if kind == "best_worst_scaling"
        else None,
    }


def _tuple_size(entry: dict, path: str, check: _Checker) -> int | None:
    return check.integer(
        entry, "tuple_size", path, None, minimum=MIN_TUPLE_SIZE, maximum=MAX_TUPLE_SIZE
    )


def _bws_design(
    data: dict,
    dialect: str,
    raw: list[_RawScheme],
    check: _Checker,
    notices: list[str],
) -> tuple[BwsDesign | None, list[Scheme]]:
    """Settle the project's one tuple design and give every scheme its final options."""
    bws_raw = [scheme for scheme in raw if scheme.kind in BWS_TYPES]
    if dialect == "A":
        design, scoring = _design_a(data, bws_raw, check, notices)
        for scheme in bws_raw:
            scheme.options["scoring"] = dict(scoring)
    else:
        design = _design_b(bws_raw, check, notices)
    schemes = [
        Scheme(
            name=scheme.name,
            type="bws" if scheme.kind in BWS_TYPES else scheme.kind,
            description=scheme.description,
            options=scheme.options,
        )
        for scheme in raw
    ]
    return design, schemes


def _design_a(
    data: dict, bws_raw: list[_RawScheme], check: _Checker, notices: list[str]
) -> tuple[BwsDesign | None, dict]:
    config = check.mapping(data.get("bws_config"), "bws_config")
    sizes = [(s, _tuple_size(s.data, s.path, check)) for s in bws_raw]
    if config is None:
        scoring = _scoring(None, "bws_config.scoring", check)
        if not bws_raw:
            return None, scoring
        given = [(s, size) for s, size in sizes if size is not None]
        tuple_size = given[0][1] if given else DEFAULT_TUPLE_SIZE
        for scheme, size in given[1:]:
            if size != tuple_size:
                check.issue(
                    _join(scheme.path, "tuple_size"),
                    f"{size} differs from {given[0][0].path}.tuple_size {tuple_size}: "
                    "the BWS schemes of a project share one tuple set",
                )
        notices.append(
            f"No bws_config: defaults applied (tuple_size {tuple_size}, min_item_appearances "
            f"{DEFAULT_APPEARANCES}, seed {DEFAULT_SEED}, scoring {DEFAULT_SCORING_METHOD})"
        )
        return BwsDesign(tuple_size=tuple_size), scoring

    check.known_keys(config, "bws_config", BWS_CONFIG_KEYS, BWS_CONFIG_HINTS)
    scoring = _scoring(config.get("scoring"), "bws_config.scoring", check)
    given_sizes = [size for _, size in sizes if size is not None]
    default_size = given_sizes[0] if given_sizes else DEFAULT_TUPLE_SIZE
    tuple_size = _tuple_size(config, "bws_config", check)
    if tuple_size is None:
        tuple_size = default_size
    else:
        for scheme, size in sizes:
            if size is not None and size != tuple_size:
                check.issue(
                    _join(scheme.path, "tuple_size"),
                    f"{size} differs from bws_config.tuple_size {tuple_size}",
                )
    design = BwsDesign(
        tuple_size=tuple_size,
        items_key=None,
        method=check.choice(config, "method", "bws_config", TUPLE_METHODS, "balanced_incomplete"),
        appearances=check.limited(
            config, "min_item_appearances", "bws_config", DEFAULT_APPEARANCES, "appearances"
        ),
        seed=check.integer(config, "seed", "bws_config", DEFAULT_SEED, minimum=0),
        ensure_pair_coverage=check.boolean(config, "ensure_pair_coverage", "bws_config", False),
    )
    if not bws_raw:
        notices.append("bws_config is ignored: no scheme has annotation_type bws")
        return None, scoring
    return design, scoring


def _tuple_generation(entry: dict, path: str, check: _Checker) -> dict | None:
    block_path = _join(path, "tuple_generation")
    block = check.mapping(entry.get("tuple_generation"), block_path)
    if block is None:
        return None
    check.known_keys(block, block_path, TUPLE_GENERATION_KEYS, TUPLE_GENERATION_HINTS)
    return {
        "method": check.choice(block, "method", block_path, TUPLE_METHODS, "balanced_incomplete"),
        "appearances": check.limited(
            block, "tuples_per_item", block_path, DEFAULT_APPEARANCES, "appearances"
        ),
        "seed": check.integer(block, "seed", block_path, DEFAULT_SEED, minimum=0),
        "ensure_pair_coverage": check.boolean(block, "ensure_pair_coverage", block_path, False),
    }


def _design_b(bws_raw: list[_RawScheme], check: _Checker, notices: list[str]) -> BwsDesign | None:
    if not bws_raw:
        return None
    first = bws_raw[0]
    items_key = check.string(first.data, "items_key", first.path)
    size_from = generation_from = None
    tuple_size = generation = None
    for scheme in bws_raw:
        # A dialect-A scheme here is reported as a mix already.
        if scheme is not first and scheme.kind == "best_worst_scaling":
            key = check.string(scheme.data, "items_key", scheme.path)
            if key != items_key:
                check.issue(
                    _join(scheme.path, "items_key"),
                    f"{key!r} differs from {first.path}.items_key {items_key!r}: "
                    "the BWS schemes of a project share one tuple set",
                )
        size = _tuple_size(scheme.data, scheme.path, check)
        if size is not None:
            if tuple_size is None:
                tuple_size, size_from = size, scheme.path
            elif size != tuple_size:
                check.issue(
                    _join(scheme.path, "tuple_size"),
                    f"{size} differs from {size_from}.tuple_size {tuple_size}: "
                    "the BWS schemes of a project share one tuple set",
                )
        this = _tuple_generation(scheme.data, scheme.path, check)
        if this is not None:
            if generation is None:
                generation, generation_from = this, scheme.path
            elif this != generation:
                check.issue(
                    _join(scheme.path, "tuple_generation"),
                    f"differs from {generation_from}.tuple_generation: "
                    "the BWS schemes of a project share one tuple set",
                )
    if generation is None:
        generation = {
            "method": "balanced_incomplete",
            "appearances": DEFAULT_APPEARANCES,
            "seed": DEFAULT_SEED,
            "ensure_pair_coverage": False,
        }
        notices.append(
            f"No tuple_generation: defaults applied (balanced_incomplete, tuples_per_item "
            f"{DEFAULT_APPEARANCES}, seed {DEFAULT_SEED})"
        )
    return BwsDesign(
        tuple_size=tuple_size if tuple_size is not None else DEFAULT_TUPLE_SIZE,
        items_key=items_key,
        **generation,
    )
