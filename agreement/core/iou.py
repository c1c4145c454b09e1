"""Overlap of time segments and of yaw-rotated 3D boxes, as intersection over union (0..1).

Segments are ``(start, end)`` in seconds. Boxes are rows ``(x, y, z, l, w, h, yaw)``: the
centre, the size along the box's own x (length), y (width) and z (height) axes, and the
rotation about z in radians. The 3D IoU is exact: the bird's-eye intersection of the two
rotated rectangles (a convex polygon) times the vertical overlap, over the union volume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

BOX_COLUMNS = ("x", "y", "z", "l", "w", "h", "yaw")
# Pairs handed to the polygon clipper at once: bounds the (pairs x 24 x 2) work arrays.
CHUNK_PAIRS = 65_536
_EPS = 1e-9

# Corner signs of a rectangle in counter-clockwise order, in its own frame.
_CORNER_SIGNS = np.array([[0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5], [0.5, -0.5]])


def box_array(boxes: Sequence | np.ndarray) -> np.ndarray:
    """An (n, 7) float array of boxes from rows or interchange dicts (center, size, yaw).

    Booleans are refused (ValueError naming the column): true is not a yaw of 1 radian.
    """
    if isinstance(boxes, np.ndarray):
        array = np.asarray(boxes, dtype=float)
        return array.reshape(-1, 7) if array.size else np.zeros((0, 7))
    rows = []
    for box in boxes:
        if isinstance(box, Mapping):
            yaw = box.get("yaw")
            rows.append([*box["center"], *box["size"], 0.0 if yaw is None else yaw])
        else:
            rows.append(list(box))
    for row in rows:
        for column, value in zip(BOX_COLUMNS, row, strict=False):
            if type(value) is bool:
                raise ValueError(f"box {column} must be a number, got {value} (a boolean)")
    array = np.asarray(rows, dtype=float)
    return array.reshape(-1, 7) if array.size else np.zeros((0, 7))


# --------------------------------------------------------------------------- segments


def temporal_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two time segments (start, end): overlap length over union length, 0..1.

    Two identical zero-length segments (one instant marked by both) agree fully: 1.
    """
    return float(temporal_iou_matrix(np.array([a], float), np.array([b], float))[0, 0])


def temporal_iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) temporal IoU of every segment of ``a`` (n, 2) against every one of ``b`` (m, 2)."""
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    return temporal_iou_pairs(a[:, None, :], b[None, :, :])


def temporal_iou_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Temporal IoU of segments a[..., :] and b[..., :] (broadcast; last axis start, end)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a_start, a_end = np.minimum(a[..., 0], a[..., 1]), np.maximum(a[..., 0], a[..., 1])
    b_start, b_end = np.minimum(b[..., 0], b[..., 1]), np.maximum(b[..., 0], b[..., 1])
    overlap = np.clip(np.minimum(a_end, b_end) - np.maximum(a_start, b_start), 0.0, None)
    union = (a_end - a_start) + (b_end - b_start) - overlap
    same = (a_start == b_start) & (a_end == b_end)
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = np.where(union > 0, overlap / np.where(union > 0, union, 1.0), 0.0)
    return np.where(same, 1.0, np.clip(iou, 0.0, 1.0))


# --------------------------------------------------------------------------- boxes


def box3d_iou(a: Sequence | Mapping, b: Sequence | Mapping) -> float:
    """Exact 3D IoU of two yaw-rotated boxes, 0..1 (see the module docstring for the layout)."""
    return float(box3d_iou_pairs(box_array([a]), box_array([b]))[0])


def box3d_iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) exact 3D IoU of every box of ``a`` (n, 7) against every box of ``b`` (m, 7)."""
    a, b = box_array(a), box_array(b)
    n, m = len(a), len(b)
    rows, cols = np.divmod(np.arange(n * m), m)
    return box3d_iou_pairs(a[rows], b[cols]).reshape(n, m)


def box3d_iou_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(p,) exact 3D IoU of box ``a[k]`` with box ``b[k]`` for each row k of two (p, 7) arrays.

    Each pair is computed about its own origin (the midpoint of the two centres), so boxes
    far from the world origin keep every digit of their size; yaw is taken modulo pi (a
    rectangle turned half a turn is the same rectangle). Pairs whose bounding circles or
    height ranges do not meet are 0 without clipping; the rest go through the batched
    polygon intersection in chunks. Zero-volume boxes (a side of length 0): IoU 1 when the
    two are the same point set (corners and height range within SAME_BOX_TOLERANCE of the
    larger box's largest side), else 0.
    """
    a, b = box_array(a), box_array(b)
    if a.shape != b.shape:
        raise ValueError(f"box arrays differ in shape: {a.shape} and {b.shape}")
    p = len(a)
    iou = np.zeros(p)
    if p == 0:
        return iou
    a, b = _local_pair(a, b)
    vertical = np.minimum(a[:, 2] + a[:, 5] / 2, b[:, 2] + b[:, 5] / 2) - np.maximum(
        a[:, 2] - a[:, 5] / 2, b[:, 2] - b[:, 5] / 2
    )
    reach = 0.5 * (np.hypot(a[:, 3], a[:, 4]) + np.hypot(b[:, 3], b[:, 4]))
    near = (vertical > 0) & (np.hypot(a[:, 0] - b[:, 0], a[:, 1] - b[:, 1]) < reach)
    volume_a = a[:, 3] * a[:, 4] * a[:, 5]
    volume_b = b[:, 3] * b[:, 4] * b[:, 5]
    candidates = np.flatnonzero(near & (volume_a > 0) & (volume_b > 0))
    for start in range(0, len(candidates), CHUNK_PAIRS):
        index = candidates[start : start + CHUNK_PAIRS]
        area = rectangle_intersection_area(a[index], b[index])
        inter = area * vertical[index]
        union = volume_a[index] + volume_b[index] - inter
        with np.errstate(invalid="ignore", divide="ignore"):
            iou[index] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    empty = (volume_a <= 0) & (volume_b <= 0)
    if empty.any():
        iou[empty] = same_boxes(a[empty], b[empty]).astype(float)
    return np.clip(iou, 0.0, 1.0)


# Two boxes are the same box when their corners and height ranges differ by at most this
# share of the larger box's largest side (used for zero-volume boxes, which have no IoU).
SAME_BOX_TOLERANCE = 1e-9


def same_boxes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(p,) whether boxes a[k] and b[k] are the same point set, within SAME_BOX_TOLERANCE.

    Compares the bird's-eye corners as sets (so yaw 0, pi and 2 pi, or a square's quarter
    turns, are one box) and the height ranges; boxes of size 0 (points) must coincide.
    """
    a, b = _local_pair(box_array(a), box_array(b))
    scale = np.maximum(a[:, 3:6].max(axis=1), b[:, 3:6].max(axis=1))
    tolerance = SAME_BOX_TOLERANCE * scale
    corners_a, corners_b = bev_corners(a), bev_corners(b)
    gap = np.hypot(*np.moveaxis(corners_a[:, :, None, :] - corners_b[:, None, :, :], -1, 0))
    corners_match = (gap.min(axis=2).max(axis=1) <= tolerance) & (
        gap.min(axis=1).max(axis=1) <= tolerance
    )
    low = np.abs((a[:, 2] - a[:, 5] / 2) - (b[:, 2] - b[:, 5] / 2))
    high = np.abs((a[:, 2] + a[:, 5] / 2) - (b[:, 2] + b[:, 5] / 2))
    return corners_match & (low <= tolerance) & (high <= tolerance)


def _local_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the paired boxes about the midpoint of each pair's centres, yaw mod pi."""
    origin = 0.5 * (a[:, :3] + b[:, :3])
    a, b = a.copy(), b.copy()
    a[:, :3] -= origin
    b[:, :3] -= origin
    a[:, 6] = np.mod(a[:, 6], np.pi)
    b[:, 6] = np.mod(b[:, 6], np.pi)
    return a, b


def bev_corners(boxes: np.ndarray) -> np.ndarray:
    """(p, 4, 2) bird's-eye corners of (p, 7) boxes, counter-clockwise."""
    cos, sin = np.cos(boxes[:, 6]), np.sin(boxes[:, 6])
    local_x = _CORNER_SIGNS[None, :, 0] * boxes[:, 3:4]
    local_y = _CORNER_SIGNS[None, :, 1] * boxes[:, 4:5]
    x = boxes[:, 0:1] + cos[:, None] * local_x - sin[:, None] * local_y
    y = boxes[:, 1:2] + sin[:, None] * local_x + cos[:, None] * local_y
    return np.stack([x, y], axis=-1)


def rectangle_intersection_area(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(p,) area of the bird's-eye intersection of rotated rectangles a[k] and b[k].

    The intersection of two convex polygons is the convex polygon whose vertices are the
    corners of each inside the other and the crossings of their edges. All 24 candidate
    points are found at once, the valid ones ordered by angle about their mean, and the
    shoelace formula gives the area; invalid slots repeat the first vertex, adding nothing.
    """
    corners_a, corners_b = bev_corners(a), bev_corners(b)
    p = len(a)
    # A length: the larger footprint's largest side (callers centre each pair first).
    size = np.maximum(a[:, 3:5].max(axis=1), b[:, 3:5].max(axis=1))
    eps = _EPS * size

    inside_a = _inside(corners_b, corners_a, eps)  # corners of b inside a: (p, 4)
    inside_b = _inside(corners_a, corners_b, eps)  # corners of a inside b

    # Edges: start points and direction vectors, (p, 4, 2).
    edge_a = np.roll(corners_a, -1, axis=1) - corners_a
    edge_b = np.roll(corners_b, -1, axis=1) - corners_b
    r = edge_a[:, :, None, :]  # (p, 4, 1, 2)
    s = edge_b[:, None, :, :]  # (p, 1, 4, 2)
    qp = corners_b[:, None, :, :] - corners_a[:, :, None, :]  # (p, 4, 4, 2)
    denom = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    # Near-parallel edges (sine of their angle under 1e-9) give ill-conditioned crossings;
    # where such edges overlap, the corner tests already supply the vertices.
    lengths = np.hypot(r[..., 0], r[..., 1]) * np.hypot(s[..., 0], s[..., 1])
    parallel = np.abs(denom) <= 1e-9 * lengths
    safe = np.where(parallel, 1.0, denom)
    t = (qp[..., 0] * s[..., 1] - qp[..., 1] * s[..., 0]) / safe
    u = (qp[..., 0] * r[..., 1] - qp[..., 1] * r[..., 0]) / safe
    tol = 1e-12
    crossing = ~parallel & (t >= -tol) & (t <= 1 + tol) & (u >= -tol) & (u <= 1 + tol)
    crossing_points = corners_a[:, :, None, :] + t[..., None] * r  # (p, 4, 4, 2)

    points = np.concatenate(
        [corners_a, corners_b, crossing_points.reshape(p, 16, 2)], axis=1
    )  # (p, 24, 2)
    valid = np.concatenate([inside_b, inside_a, crossing.reshape(p, 16)], axis=1)
    count = valid.sum(axis=1)

    weights = valid.astype(float)
    centre = (points * weights[..., None]).sum(axis=1) / np.maximum(count, 1)[:, None]
    angle = np.arctan2(points[..., 1] - centre[:, 1:2], points[..., 0] - centre[:, 0:1])
    angle = np.where(valid, angle, np.inf)
    order = np.argsort(angle, axis=1)
    ordered = np.take_along_axis(points, order[..., None], axis=1)
    ordered_valid = np.take_along_axis(valid, order, axis=1)
    ordered = np.where(ordered_valid[..., None], ordered, ordered[:, :1, :])
    following = np.roll(ordered, -1, axis=1)
    cross = ordered[..., 0] * following[..., 1] - ordered[..., 1] * following[..., 0]
    area = 0.5 * np.abs(cross.sum(axis=1))
    return np.where(count >= 3, area, 0.0)


def _inside(points: np.ndarray, polygon: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """(p, k) whether each of the (p, k, 2) points lies in the (p, 4, 2) CCW polygon, or
    within the length ``eps`` (p,) outside an edge."""
    start = polygon[:, None, :, :]  # (p, 1, 4, 2)
    edge = np.roll(polygon, -1, axis=1)[:, None, :, :] - start
    offset = points[:, :, None, :] - start  # (p, k, 4, 2)
    cross = edge[..., 0] * offset[..., 1] - edge[..., 1] * offset[..., 0]
    length = np.hypot(edge[..., 0], edge[..., 1])
    # cross / length is the signed distance from the edge's line: compare lengths.
    return np.all(cross >= -eps[:, None, None] * length, axis=2)
