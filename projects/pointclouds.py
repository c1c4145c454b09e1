"""Point clouds read from the files a project stores: KITTI ``.bin`` and PCD ``.pcd``.

Pure numpy (no Django), so the import and a notebook share one reader. Every reader
returns an (n, 4) float32 array of x, y, z, intensity (intensity 0 when the file has none),
without the points whose x, y or z is not a finite number. Malformed files raise ValueError
with a message about the file's content, never its path.

A cloud is decoded once, at import (write_points): the points the viewer draws are written
beside the project's media in the form it reads, and served as a plain file from then on.
"""

from __future__ import annotations

import io
import os
import re
import secrets
from pathlib import Path

import numpy as np

EXTENSIONS = (".bin", ".pcd")
# The decoded form, what the viewer reads: little-endian float32 x, y, z, intensity.
POINTS_SUFFIX = ".xyzi"
POINT_BYTES = 16

# A PCD header is a few hundred bytes; a file without DATA in its first 64 KiB is not one.
MAX_HEADER_BYTES = 64 * 1024
BIN_POINT_BYTES = 16  # KITTI: float32 x, y, z, intensity

# PCD TYPE and SIZE -> the little-endian numpy type they name.
_PCD_TYPES = {
    ("F", 4): "<f4",
    ("F", 8): "<f8",
    ("I", 1): "<i1",
    ("I", 2): "<i2",
    ("I", 4): "<i4",
    ("I", 8): "<i8",
    ("U", 1): "<u1",
    ("U", 2): "<u2",
    ("U", 4): "<u4",
    ("U", 8): "<u8",
}


def read_points(path: str | Path, max_points: int | None = None) -> np.ndarray:
    """The points of a .bin or .pcd file as an (n, 4) float32 array (x, y, z, intensity);
    with ``max_points``, at most that many, evenly spread over the file (decimate)."""
    path = Path(path)
    if path.suffix.lower() == ".bin" and max_points is not None:
        # Only the rows kept are read: a large sweep never sits whole in memory.
        size = path.stat().st_size
        _check_bin_size(size)
        if size == 0:
            return np.zeros((0, 4), dtype=np.float32)
        rows = np.memmap(path, dtype="<f4", mode="r", shape=(size // BIN_POINT_BYTES, 4))
        return _finite(np.asarray(decimate(rows, max_points)))
    points = parse_points(path.read_bytes(), path.suffix)
    return points if max_points is None else decimate(points, max_points)


def write_points(source: str | Path, target: str | Path, max_points: int) -> int:
    """Decode ``source`` once into the viewer's form at ``target``: little-endian float32
    x, y, z, intensity, four per point, evenly thinned to ``max_points``; the file appears
    complete or not at all (a temporary file renamed into place). The number of points;
    ValueError when ``source`` does not decode (nothing written then)."""
    points = read_points(source, max_points=max_points)
    body = np.ascontiguousarray(points, dtype="<f4")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        with temporary.open("xb") as out:
            body.tofile(out)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return len(points)


def parse_points(data: bytes, extension: str) -> np.ndarray:
    """The points of a file's bytes, read by its extension (".bin" or ".pcd")."""
    extension = extension.lower()
    if extension == ".bin":
        return parse_bin(data)
    if extension == ".pcd":
        return parse_pcd(data)
    raise ValueError(f"{extension or 'no extension'}: a point cloud is a .bin or a .pcd file")


def parse_bin(data: bytes) -> np.ndarray:
    """KITTI velodyne points: float32 little-endian x, y, z, intensity, 16 bytes each."""
    _check_bin_size(len(data))
    points = np.frombuffer(data, dtype="<f4").reshape(-1, 4)
    return _finite(points)


def parse_pcd(data: bytes) -> np.ndarray:
    """A PCD file (DATA ascii or binary) with fields x, y, z and optionally intensity, in
    any order and of any PCD type."""
    header, body = _pcd_header(data)
    fields = header["FIELDS"]
    n_fields = len(fields)
    sizes = _ints(header, "SIZE", n_fields)
    counts = _ints(header, "COUNT", n_fields) if "COUNT" in header else [1] * n_fields
    types = header.get("TYPE")
    if types is None or len(types) != n_fields:
        raise ValueError(f"PCD header: TYPE must give one type per field ({n_fields} fields)")
    formats = []
    for name, kind, size in zip(fields, types, sizes, strict=True):
        numpy_type = _PCD_TYPES.get((kind.upper(), size))
        if numpy_type is None:
            raise ValueError(
                f"PCD header: field {name!r} has TYPE {kind} and SIZE {size}; "
                "supported: F 4/8, I 1/2/4/8, U 1/2/4/8"
            )
        formats.append(numpy_type)
    if any(count < 1 for count in counts):
        raise ValueError("PCD header: every COUNT must be at least 1")
    missing = [axis for axis in ("x", "y", "z") if axis not in fields]
    if missing:
        raise ValueError(f"PCD header: FIELDS has no {', '.join(missing)} (x, y and z are needed)")
    n_points = _point_count(header)
    mode = header["DATA"][0].lower() if header["DATA"] else ""
    # The fields read, by their index in FIELDS.
    wanted = {name: fields.index(name) for name in ("x", "y", "z", "intensity") if name in fields}
    if mode == "ascii":
        columns = _pcd_ascii(body, n_points, counts, wanted)
    elif mode == "binary":
        columns = _pcd_binary(body, n_points, formats, sizes, counts, wanted)
    elif mode == "binary_compressed":
        raise ValueError(
            "PCD DATA binary_compressed is not supported: save the cloud with DATA binary "
            "or DATA ascii"
        )
    else:
        raise ValueError(f"PCD header: DATA must be ascii or binary, not {mode or 'empty'!r}")
    points = np.zeros((n_points, 4), dtype=np.float32)
    for axis, name in enumerate(("x", "y", "z", "intensity")):
        if name in wanted:
            points[:, axis] = columns[name]
    return _finite(points)


def _check_bin_size(size: int) -> None:
    if size % BIN_POINT_BYTES:
        raise ValueError(
            f"a .bin point cloud holds 16 bytes per point (float32 x, y, z, intensity); "
            f"this file has {size} bytes, not a multiple of 16"
        )


def decimate(points: np.ndarray, limit: int) -> np.ndarray:
    """At most ``limit`` points, evenly spread over the array (all of them when fewer)."""
    n = len(points)
    if limit < 1:
        return points[:0]
    if n <= limit:
        return points
    return points[np.linspace(0, n - 1, num=limit, dtype=np.int64)]


def _finite(points: np.ndarray) -> np.ndarray:
    """Points whose x, y and z are finite, with a non-finite intensity read as 0."""
    kept = np.isfinite(points[:, :3]).all(axis=1)
    points = np.array(points[kept], dtype=np.float32, order="C")
    points[~np.isfinite(points[:, 3]), 3] = 0.0
    return points


def _pcd_header(data: bytes) -> tuple[dict[str, list[str]], bytes]:
    """The header's keys with their words, and the bytes after the DATA line."""
    header: dict[str, list[str]] = {}
    position = 0
    while True:
        end = data.find(b"\n", position)
        if end < 0 or end > MAX_HEADER_BYTES:
            raise ValueError("not a PCD file: no DATA line in its header")
        raw = data[position:end]
        position = end + 1
        try:
            line = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise ValueError("not a PCD file: its header is not plain text") from None
        if not line or line.startswith("#"):
            continue
        key, *words = line.split()
        header[key.upper()] = words
        if key.upper() == "DATA":
            break
    if "FIELDS" not in header or not header["FIELDS"]:
        raise ValueError("PCD header: no FIELDS line")
    read = [field for field in header["FIELDS"] if field in ("x", "y", "z", "intensity")]
    if len(set(read)) != len(read):
        raise ValueError("PCD header: a field among x, y, z, intensity is named twice")
    return header, data[position:]


def _ints(header: dict, key: str, n: int) -> list[int]:
    words = header.get(key)
    if words is None or len(words) != n:
        raise ValueError(f"PCD header: {key} must give one number per field ({n} fields)")
    try:
        values = [int(word) for word in words]
    except ValueError:
        raise ValueError(f"PCD header: {key} must hold whole numbers") from None
    return values


def _count(header: dict, key: str) -> int | None:
    words = header.get(key)
    if words is None:
        return None
    if len(words) != 1 or not words[0].isdigit():
        raise ValueError(f"PCD header: {key} must be one whole number")
    return int(words[0])


def _point_count(header: dict) -> int:
    points = _count(header, "POINTS")
    width, height = _count(header, "WIDTH"), _count(header, "HEIGHT")
    if points is None:
        if width is None:
            raise ValueError("PCD header: neither POINTS nor WIDTH says how many points")
        points = width * (height if height is not None else 1)
    return points


def _pcd_ascii(body, n_points, counts, wanted) -> dict[str, np.ndarray]:
    n_columns = sum(counts)
    if body.strip():
        try:
            # loadtxt reads in chunks: far less memory than splitting the text into words.
            table = np.loadtxt(io.BytesIO(body), dtype=np.float64, ndmin=2, comments=None)
        except ValueError as exc:
            raise ValueError(f"PCD DATA ascii: {_loadtxt_reason(exc)}") from None
    else:
        table = np.zeros((0, n_columns))
    if table.shape != (n_points, n_columns):
        raise ValueError(
            f"PCD DATA ascii: the header announces {n_points} points of {n_columns} values, "
            f"the file holds {table.shape[0]} lines of {table.shape[1]} values"
        )
    # A field with COUNT > 1 spans COUNT columns; each field is read from its first one.
    starts = [sum(counts[:index]) for index in range(len(counts))]
    return {name: table[:, starts[index]] for name, index in wanted.items()}


def _loadtxt_reason(exc: ValueError) -> str:
    """numpy's reason, with the data line counted from 1 (numpy counts a value it cannot
    convert from row 0, a change in the number of columns from row 1)."""
    text = str(exc)
    value = re.search(r"could not convert string '(.{0,40}).*?' .*at row (\d+)", text)
    if value:
        return f"data line {int(value.group(2)) + 1}: {value.group(1)!r} is not a number"
    columns = re.search(r"number of columns changed from (\d+) to (\d+) at row (\d+)", text)
    if columns:
        first, then, row = columns.groups()
        return f"data line {row} has {then} values where the first line has {first}"
    return "a line that is not a row of numbers"


def _pcd_binary(body, n_points, formats, sizes, counts, wanted) -> dict[str, np.ndarray]:
    offsets, offset = [], 0
    for size, count in zip(sizes, counts, strict=True):
        offsets.append(offset)
        offset += size * count
    stride = offset
    if len(body) < n_points * stride:
        raise ValueError(
            f"PCD DATA binary: the header announces {n_points} points of {stride} bytes "
            f"({n_points * stride} bytes), the file holds {len(body)} bytes of data"
        )
    names = [f"f{index}" for index in range(len(formats))]
    dtype = np.dtype(
        {
            "names": names,
            "formats": [(f, (c,)) if c > 1 else f for f, c in zip(formats, counts, strict=True)],
            "offsets": offsets,
            "itemsize": stride,
        }
    )
    records = np.frombuffer(body, dtype=dtype, count=n_points)
    columns = {}
    for name, index in wanted.items():
        column = records[names[index]]
        columns[name] = column[:, 0] if column.ndim > 1 else column
    return columns
