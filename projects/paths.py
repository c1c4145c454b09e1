"""Paths named in a project's config stay inside the project's folder.

Pure Python (no Django). ``confine`` is the one check every path key of a config goes
through (``task_dir``, ``data_files``, ``output_annotation_dir``, ``scoring.output_file``);
``write_inside`` is the one way a file is written for a project: checked again at write
time, no symbolic link followed, and atomic (a temporary file renamed into place).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO


class PathRefused(ValueError):
    """A path that leads outside the project's folder.

    The message names the config key only: never a server path, and the same whether or
    not anything exists where the path points.
    """

    reason = (
        "must be a relative path inside the project's folder "
        "(no absolute path, no '..' or link leading outside it)"
    )

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"{key}: {self.reason}")


def confine(
    key: str, value: str | Path, root: str | Path, *, start: str | Path | None = None
) -> Path:
    """The resolved path ``value`` (relative to ``start``, by default ``root``), which must
    lie inside ``root``; PathRefused (naming ``key``) if it is absolute or leads outside
    through '..' or a symbolic link."""
    text = os.fspath(value)
    if not text or "\x00" in text:
        raise PathRefused(key)
    relative = Path(text)
    if relative.is_absolute() or relative.anchor or text.startswith("~"):
        raise PathRefused(key)
    try:
        base = Path(root).resolve()
        origin = Path(start).resolve() if start is not None else base
        # resolve() follows every link that exists, so a link inside that points outside
        # is caught here; what does not exist is only normalised.
        target = (origin / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        raise PathRefused(key) from None
    if not target.is_relative_to(base):
        raise PathRefused(key)
    return target


def write_inside(
    root: str | Path,
    relative: str | Path,
    write: Callable[[IO[str]], None],
    *,
    key: str = "output_file",
) -> Path:
    """Write a text file at ``relative`` inside ``root`` through ``write(stream)``.

    The path is confined again here (a stored config may have been changed since it was
    checked), every folder on the way is opened without following links (O_NOFOLLOW), and
    the file appears complete or not at all (temporary file, then os.replace).
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    base = root.resolve()
    target = confine(key, relative, base)
    parts = target.relative_to(base).parts
    if not parts:
        raise PathRefused(key)
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    folder = os.open(base, flags)
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=folder)
            except FileExistsError:
                pass
            try:
                inner = os.open(part, flags, dir_fd=folder)
            except OSError:  # a link (ELOOP) or not a folder
                raise PathRefused(key) from None
            os.close(folder)
            folder = inner
        name = parts[-1]
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(temporary, create, 0o644, dir_fd=folder)
        try:
            with open(descriptor, "w", encoding="utf-8", newline="") as stream:
                write(stream)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            raise
    finally:
        os.close(folder)
    return target
