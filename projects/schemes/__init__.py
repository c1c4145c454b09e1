"""The registry of annotation scheme types: one SchemeType subclass per module here.

Importing the package imports every module in it, and each class registers the stored
type names it serves as it is defined; there is no list of modules to keep. Adding a type
is adding its module (and its template under templates/projects/schemes/); an app above
`projects` adds one through an ``annolab.scheme_types`` entry point instead.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from projects.schemes.base import _REGISTRY, SchemeType

__all__ = [
    "SchemeType",
    "config_types",
    "discover",
    "known_types",
    "scheme_type",
    "stored_type",
    "table_types",
]


# Scheme types of other apps (bws: best-worst scaling) are found through entry points of
# this group in the installed package's metadata (pyproject.toml), so this package names no
# app above it.
ENTRY_POINTS = "annolab.scheme_types"


def discover() -> None:
    """Import every module of the package not imported yet, and every module the
    ``annolab.scheme_types`` entry points name (each registers its types)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    for entry in entry_points(group=ENTRY_POINTS):
        entry.load()


def scheme_type(type_name: str) -> type[SchemeType]:
    """The class serving a stored scheme type; KeyError naming the known types."""
    try:
        return _REGISTRY[type_name]
    except (KeyError, TypeError):
        raise KeyError(
            f"unknown scheme type {type_name!r}; known types: {', '.join(known_types())}"
        ) from None


def config_types() -> dict:
    """annotation_type as a configuration names it -> the option model that reads it."""
    return {
        name: cls.Options
        for cls in dict.fromkeys(_REGISTRY.values())
        if cls.Options is not None
        for name in (cls.config_types or cls.types)
    }


def known_types() -> list[str]:
    """Every stored type name a registered class serves, sorted."""
    return sorted(_REGISTRY)


def stored_type(annotation_type: str) -> str:
    """The type a project stores for a scheme its configuration names ``annotation_type``."""
    if annotation_type in _REGISTRY:
        return annotation_type
    for cls in dict.fromkeys(_REGISTRY.values()):
        if annotation_type in cls.config_types:
            return cls.types[0]
    return annotation_type


def table_types() -> list[type[SchemeType]]:
    """The registered classes whose answers a table splits into `<scheme>.<key>` columns."""
    return [cls for cls in dict.fromkeys(_REGISTRY.values()) if cls.table_keys]


discover()
