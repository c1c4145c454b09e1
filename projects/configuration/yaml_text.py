"""Reading a configuration file's text: size, encoding, YAML syntax, duplicate keys, and
documents that grow too large once their aliases are expanded. Each refusal is a
ConfigError naming the file (never a server path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from projects.configuration.issues import ConfigError, ConfigIssue, join
from projects.limits import Limits
from projects.storable import json_problem

# Deeper than any config needs; what the parser itself accepts is bounded the same way.
_YAML_MAX_DEPTH = 64


def read_text(path: Path, limits: Limits) -> str:
    """The file's text, refused over CONFIG_MAX_BYTES or when it is not UTF-8."""
    name = path.name
    try:
        with path.open("rb") as stream:
            raw = stream.read(limits.config_bytes + 1)
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(name, "", "file not found")]) from None
    except OSError as exc:
        reason = f"cannot read the file: {exc.strerror or type(exc).__name__}"
        raise ConfigError([ConfigIssue(name, "", reason)]) from None
    check_size(len(raw), name, limits)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError([ConfigIssue(name, "", "not valid UTF-8 text")]) from None


def check_size(size: int, source: str, limits: Limits) -> None:
    if size > limits.config_bytes:
        reason = (
            f"the file is larger than the limit of {limits.config_bytes} bytes (CONFIG_MAX_BYTES)"
        )
        raise ConfigError([ConfigIssue(source, "", reason)])


def parse_yaml(text: str, source: str = "config.yaml", *, limits: Limits | None = None) -> Any:
    """YAML text to Python data; syntax errors, duplicate keys and a document larger than
    the limits (aliases expanded, so an alias bomb is refused unbuilt) become a ConfigError."""
    limits = limits or Limits()
    check_size(len(text.encode("utf-8", "surrogatepass")), source, limits)
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
                yield join(path, key), seen[key], line
            else:
                seen[key] = line
            yield from _duplicate_keys(value_node, join(path, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            yield from _duplicate_keys(child, f"{path}[{index}]")
