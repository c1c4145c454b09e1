"""Limits on what a project's config and data may ask of the server.

Pure Python (no Django): the config parser, the data reader and the command line take a
``Limits``; the platform builds it from settings (``Limits.from_settings``), where each
value is read from the environment (config/settings.py, "Trust boundaries: limits").
Every refusal names the setting and its value, so a lab admin can ask the operator for it.
"""

from __future__ import annotations

from dataclasses import dataclass

# field name -> the setting (and environment variable) that sets it
SETTING_NAMES = {
    "config_bytes": "CONFIG_MAX_BYTES",
    "yaml_nodes": "CONFIG_MAX_YAML_NODES",
    "items": "PROJECT_MAX_ITEMS",
    "tuples": "PROJECT_MAX_TUPLES",
    "appearances": "DESIGN_MAX_APPEARANCES",
    "design_memory_mb": "DESIGN_MAX_MEMORY_MB",
    "bootstrap_iterations": "SCORING_MAX_BOOTSTRAP_ITERATIONS",
    "likert_size": "LIKERT_MAX_SIZE",
    "lease_minutes": "QUEUE_MAX_LEASE_MINUTES",
    "media_file_mb": "PROJECT_MEDIA_MAX_FILE_MB",
    "media_total_mb": "PROJECT_MEDIA_MAX_TOTAL_MB",
    "media_files": "PROJECT_MEDIA_MAX_FILES",
}

# Counts stored in database integer columns or compared with them.
MAX_DB_INTEGER = 2**31 - 1


@dataclass(frozen=True)
class Limits:
    """The largest values a config may ask for (defaults: the settings' defaults)."""

    config_bytes: int = 256 * 1024
    yaml_nodes: int = 20_000
    items: int = 100_000
    tuples: int = 250_000
    appearances: int = 100
    design_memory_mb: int = 1024
    bootstrap_iterations: int = 5000
    likert_size: int = 101
    lease_minutes: int = 10080
    # Media files a project stores (projects/media.py): each, all together, how many.
    media_file_mb: int = 200
    media_total_mb: int = 2048
    media_files: int = 10_000

    @classmethod
    def from_settings(cls, settings) -> Limits:
        """The limits configured in Django settings (missing ones keep their default)."""
        values = {}
        for name, setting in SETTING_NAMES.items():
            value = getattr(settings, setting, None)
            if value is not None:
                values[name] = int(value)
        return cls(**values)

    def above(self, name: str, value: int, what: str = "") -> str:
        """The refusal for ``value`` over the limit ``name``, naming the setting."""
        limit = getattr(self, name)
        unit = f" {what}" if what else ""
        return f"{value}{unit} is above the limit of {limit}{unit} ({SETTING_NAMES[name]})"
