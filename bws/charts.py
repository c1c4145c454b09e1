"""Geometry of the dashboard's charts, drawn as SVG by templates (no script, no internet).

Each function takes plain numbers and returns the shapes a template needs (bars, polyline
points, axis ticks) in a fixed viewBox; the page scales them.
"""

from __future__ import annotations

import math

import numpy as np

WIDTH, HEIGHT = 560, 220
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 34


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not math.isfinite(lo) or not math.isfinite(hi) or hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for mult in (1, 2, 2.5, 5, 10):
        if (hi - lo) / (step * mult) <= n:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [round(first + k * step, 10) for k in range(int((hi - first) / step) + 1)]


def _frame(x_lo, x_hi, y_lo, y_hi):
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x):
        return LEFT + (x - x_lo) / ((x_hi - x_lo) or 1) * inner_w

    def sy(y):
        return TOP + inner_h - (y - y_lo) / ((y_hi - y_lo) or 1) * inner_h

    return sx, sy


def _axes(x_ticks, y_ticks, sx, sy, x_fmt="{:g}", y_fmt="{:g}") -> dict:
    return {
        "x_ticks": [{"x": round(sx(t), 1), "label": x_fmt.format(t)} for t in x_ticks],
        "y_ticks": [{"y": round(sy(t), 1), "label": y_fmt.format(t)} for t in y_ticks],
        "x0": LEFT,
        "x1": WIDTH - RIGHT,
        "y0": HEIGHT - BOTTOM,
        "y1": TOP,
        "label_y": HEIGHT - BOTTOM + 16,
        "width": WIDTH,
        "height": HEIGHT,
    }


def histogram(values, bins: int = 24, x_label: str = "score") -> dict | None:
    """Bars of a histogram of the values (any count: 100,000 items draw 24 bars)."""
    values = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if values.size == 0:
        return None
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    top = int(counts.max()) or 1
    sx, sy = _frame(lo, hi, 0, top)
    bars = [
        {
            "x": round(sx(edges[k]) + 0.5, 1),
            "y": round(sy(counts[k]), 1),
            "w": round(max(sx(edges[k + 1]) - sx(edges[k]) - 1, 0.5), 1),
            "h": round(sy(0) - sy(counts[k]), 1),
            "title": f"{edges[k]:.2f} to {edges[k + 1]:.2f}: {int(counts[k])}",
        }
        for k in range(len(counts))
    ]
    y_ticks = [t for t in _ticks(0, top, 4) if float(t).is_integer()]
    return {
        "bars": bars,
        "axes": _axes(_ticks(lo, hi), y_ticks, sx, sy, x_fmt="{:.2g}"),
        "x_label": x_label,
        "y_label": "items",
        "n": int(values.size),
    }


def coverage(appearances) -> dict | None:
    """How many items were seen how often: one bar per appearance count."""
    counts = np.bincount(np.asarray(appearances, dtype=np.int64))
    if counts.size == 0:
        return None
    top = int(counts.max()) or 1
    hi = counts.size - 1
    sx, sy = _frame(-0.5, hi + 0.5, 0, top)
    bars = [
        {
            "x": round(sx(k - 0.45), 1),
            "y": round(sy(int(c)), 1),
            "w": round(max(sx(k + 0.45) - sx(k - 0.45), 0.5), 1),
            "h": round(sy(0) - sy(int(c)), 1),
            "title": f"seen {k} times: {int(c)} items",
            "zero": k == 0,
        }
        for k, c in enumerate(counts)
        if c
    ]
    x_ticks = [t for t in _ticks(0, hi) if float(t).is_integer()] or [0]
    y_ticks = [t for t in _ticks(0, top, 4) if float(t).is_integer()]
    return {
        "bars": bars,
        "axes": _axes(x_ticks, y_ticks, sx, sy, x_fmt="{:.0f}"),
        "x_label": "times an item was judged",
        "y_label": "items",
    }


def convergence(points: list[dict]) -> dict | None:
    """Two lines over the share of judgments used: Spearman with the final scores, and the
    mean absolute change of scores since the previous step."""
    if not points:
        return None
    xs = [p["fraction"] * 100 for p in points]
    rho = [p["spearman"] for p in points]
    change = [p["mean_abs_change"] for p in points]
    finite_change = [c for c in change if c is not None]
    c_top = max(finite_change) if finite_change else 1.0
    c_top = c_top or 1.0
    sx, sy = _frame(0, 100, 0, 1)

    def line(values, scale):
        return " ".join(
            f"{sx(x):.1f},{sy(v / scale):.1f}"
            for x, v in zip(xs, values, strict=True)
            if v is not None and math.isfinite(v)
        )

    return {
        "rho": line(rho, 1.0),
        "change": line(change, c_top),
        "rho_dots": [
            {"x": round(sx(x), 1), "y": round(sy(v), 1), "title": f"{x:.0f}%: rho {v:.3f}"}
            for x, v in zip(xs, rho, strict=True)
            if v is not None and math.isfinite(v)
        ],
        "axes": _axes(
            [0, 20, 40, 60, 80, 100],
            [0, 0.25, 0.5, 0.75, 1.0],
            sx,
            sy,
            x_fmt="{:.0f}%",
            y_fmt="{:.2f}",
        ),
        "change_max": c_top,
        "x_label": "share of judgments, in time order",
    }


def interval_bar(score, low, high, lo: float, hi: float, width: int = 160) -> dict | None:
    """Positions (in a width-wide strip) of an item's interval and score on the run's range."""
    if score is None or hi <= lo:
        return None

    def at(v):
        return round((min(max(v, lo), hi) - lo) / (hi - lo) * width, 1)

    low = score if low is None else low
    high = score if high is None else high
    return {"x0": at(low), "x1": at(high), "w": max(at(high) - at(low), 1), "x": at(score)}


def systems(summary: dict | None) -> dict | None:
    """The systems ranked as horizontal intervals, best on top: one row per system with its
    95% interval (x0 to x1) and effect (x), on an axis spanning every interval and zero."""
    rows = (summary or {}).get("rows") or []
    if not rows:
        return None
    ends = [0.0] + [
        v for row in rows for v in (row["ci_low"], row["ci_high"], row["effect"]) if v is not None
    ]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.05 or 0.5
    lo, hi = lo - pad, hi + pad
    row_height, top = 26, TOP
    height = top + row_height * len(rows) + BOTTOM
    left = 110  # room for the systems' names
    inner_w = WIDTH - left - RIGHT

    def sx(x):
        return round(left + (x - lo) / (hi - lo) * inner_w, 1)

    shapes = []
    for n, row in enumerate(rows):
        y = top + row_height * n + row_height / 2
        low, high = row["ci_low"], row["ci_high"]
        shapes.append(
            {
                "y": round(y, 1),
                "label": row["source"],
                "x": sx(row["effect"]),
                "x0": sx(low) if low is not None else None,
                "w": round(max(sx(high) - sx(low), 1), 1) if low is not None else None,
                "title": f"{row['source']}: {row['effect']:+.2f}"
                + ("" if low is None else f" (95% interval {low:+.2f} to {high:+.2f})"),
            }
        )
    axis_y = top + row_height * len(rows)
    return {
        "rows": shapes,
        "zero": sx(0.0),
        "ticks": [{"x": sx(t), "label": f"{t:g}"} for t in _ticks(lo, hi) if lo <= t <= hi],
        "x0": left,
        "x1": WIDTH - RIGHT,
        "y0": axis_y,
        "y1": top,
        "label_x": left - 8,
        "tick_y": axis_y + 16,
        "width": WIDTH,
        "height": height,
    }
