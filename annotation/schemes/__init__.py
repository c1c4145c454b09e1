"""The scheme types of annotating, one module each (boxes, segments, traces, labels, text).

They plug into the scheme-type registry of `projects.schemes` from here: pyproject.toml
names this package under the ``annolab.scheme_types`` entry points, and importing it
imports every module in it, each of whose classes registers the stored type names it
serves as it is defined. Adding a type is adding its module here (and its template under
templates/annotation/schemes/).
"""

import importlib
import pkgutil


def discover() -> None:
    """Import every module of the package not imported yet (which registers its types);
    the registry calls this each time it looks for types."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


discover()
