"""The registry of annotation scheme types: every SchemeType subclass, by the stored type
names it serves.

The types live in the apps that own them (annotation: boxes, segments, traces, labels and
text; bws: best-worst scaling) and plug in through the ``annolab.scheme_types`` entry
points of the installed package (pyproject.toml): the first question asked of the
registry loads them, and each class registers itself as it is defined; there is no list of
types to keep. Loading them at the first question rather than at import lets the types'
modules import the configuration reader that asks the registry (projects.configuration).
"""

from __future__ import annotations

import threading
from importlib.metadata import entry_points

from projects.schemes.base import _REGISTRY, SchemeType

__all__ = [
    "SchemeType",
    "config_types",
    "discover",
    "known_types",
    "registered_types",
    "scheme_type",
    "stored_type",
    "table_types",
]


# The scheme types are found through entry points of this group in the installed package's
# metadata (pyproject.toml), so this package names no app above it.
ENTRY_POINTS = "annolab.scheme_types"
# Whether the entry points have been loaded; the lock makes a thread that asks while
# another loads them wait for the whole registry.
_LOADING = threading.RLock()
_loaded = False


def _registry() -> dict[str, type[SchemeType]]:
    """The registry, its types loaded at the first question."""
    global _loaded
    if not _loaded:
        with _LOADING:
            if not _loaded:
                discover()
                _loaded = True
    return _REGISTRY


def discover() -> None:
    """Import every module the ``annolab.scheme_types`` entry points name (each registers
    its types), in the order of their names; a package among them that has a ``discover()``
    of its own is asked again for modules added since."""
    for entry in sorted(entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        module = entry.load()
        if callable(getattr(module, "discover", None)):
            module.discover()


def scheme_type(type_name: str) -> type[SchemeType]:
    """The class serving a stored scheme type; KeyError naming the known types."""
    try:
        return _registry()[type_name]
    except (KeyError, TypeError):
        raise KeyError(
            f"unknown scheme type {type_name!r}; known types: {', '.join(known_types())}"
        ) from None


def config_types() -> dict:
    """annotation_type as a configuration names it -> the option model that reads it."""
    return {
        name: cls.Options
        for cls in dict.fromkeys(_registry().values())
        if cls.Options is not None
        for name in (cls.config_types or cls.types)
    }


def registered_types() -> list[type[SchemeType]]:
    """Every registered class, once each, in the order they registered."""
    return list(dict.fromkeys(_registry().values()))


def known_types() -> list[str]:
    """Every stored type name a registered class serves, sorted."""
    return sorted(_registry())


def stored_type(annotation_type: str) -> str:
    """The type a project stores for a scheme its configuration names ``annotation_type``."""
    if annotation_type in _registry():
        return annotation_type
    for cls in dict.fromkeys(_registry().values()):
        if annotation_type in cls.config_types:
            return cls.types[0]
    return annotation_type


def table_types() -> list[type[SchemeType]]:
    """The registered classes whose answers a table splits into `<scheme>.<key>` columns."""
    return [cls for cls in dict.fromkeys(_registry().values()) if cls.table_keys]
