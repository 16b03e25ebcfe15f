"""Figures of the report as inline SVG: no plotting library, no network, text that a
screen reader and a search can read. Colours are the Okabe-Ito palette (safe for colour
blindness); every mark has a ``<title>`` with its numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

__all__ = ["dot_chart", "frontier_chart"]

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
           "#000000")
_FONT = 'font-family="system-ui, sans-serif"'


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values spanning [lo, hi]."""
    span = hi - lo if hi > lo else 1.0
    step = 10 ** math.floor(math.log10(span / n))
    for m in (1, 2, 2.5, 5, 10):
        if span / (m * step) <= n:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [round(first + k * step, 10) for k in range(int((hi - first) / step + 1e-9) + 1)]


def _text(x: float, y: float, s: str, size: int = 12, anchor: str = "start",
          weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" {_FONT}>{escape(s)}</text>')


def dot_chart(title: str, panels: Sequence[tuple[str, Sequence[tuple]]], xlabel: str,
              xmax: float = 1.0) -> str:
    """Estimates with intervals, one row per label, in stacked panels.

    ``panels``: (panel title, rows) with rows (label, estimate, low, high); a row whose
    estimate is None (suppressed) is drawn as the text "not shown".
    """
    left, right, width, row_h = 170, 30, 720, 26
    inner = width - left - right
    y, parts = 34, [_text(8, 20, title, 14, weight="bold")]
    labels = sorted({r[0] for _, rows in panels for r in rows}, key=str)
    colour = {lab: PALETTE[i % len(PALETTE)] for i, lab in enumerate(labels)}

    def X(v: float) -> float:
        return left + inner * min(max(v / xmax, 0.0), 1.0)

    for ptitle, rows in panels:
        parts.append(_text(8, y + 14, ptitle, 12, weight="bold"))
        y += 22
        top = y
        for label, est, low, high in rows:
            cy = y + row_h / 2
            parts.append(_text(left - 8, cy + 4, str(label), 12, "end"))
            if est is None:
                parts.append(_text(left + 4, cy + 4, "not shown (small cell)", 11))
            else:
                c = colour[label]
                tip = escape(f"{label}: {est:.3f} [{low:.3f}, {high:.3f}]")
                parts.append(
                    f'<g><title>{tip}</title><line x1="{X(low):.1f}" x2="{X(high):.1f}" '
                    f'y1="{cy:.1f}" y2="{cy:.1f}" stroke="{c}" stroke-width="2.5"/>'
                    f'<circle cx="{X(est):.1f}" cy="{cy:.1f}" r="5" fill="{c}"/></g>')
            y += row_h
        for t in _ticks(0, xmax):
            parts.append(f'<line x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top:.1f}" '
                         f'y2="{y:.1f}" stroke="#ccc" stroke-width="1"/>')
        parts.append(f'<rect x="{left}" y="{top:.1f}" width="{inner}" height="{y - top:.1f}" '
                     'fill="none" stroke="#888"/>')
        y += 6
    for t in _ticks(0, xmax):
        parts.append(_text(X(t), y + 12, f"{t:g}", 11, "middle"))
    parts.append(_text(left + inner / 2, y + 30, xlabel, 12, "middle"))
    return _svg(width, y + 40, title, parts)


def frontier_chart(title: str, frontier: Sequence[tuple[float, float]],
                   points: Sequence[tuple], xlabel: str, ylabel: str) -> str:
    """The Pareto frontier (deviation, utility) as a line, and named points with
    intervals in both directions: (name, x, x_low, x_high, y, y_low, y_high)."""
    left, right, top, width, height = 70, 190, 34, 760, 360
    inner_w, inner_h = width - left - right, height - top - 50
    xs = [p[0] for p in frontier] + [v for p in points for v in p[1:4]]
    ys = [p[1] for p in frontier] + [v for p in points for v in p[4:7]]
    x0, x1 = 0.0, max(xs) * 1.05 or 1.0
    y0, y1 = min(ys), max(ys)
    pad = (y1 - y0) * 0.08 or 0.01
    y0, y1 = y0 - pad, y1 + pad

    def X(v: float) -> float:
        return left + inner_w * (v - x0) / (x1 - x0)

    def Y(v: float) -> float:
        return top + inner_h * (1 - (v - y0) / (y1 - y0))

    parts = [_text(8, 20, title, 14, weight="bold"),
             f'<rect x="{left}" y="{top}" width="{inner_w}" height="{inner_h}" fill="none" '
             'stroke="#888"/>']
    for t in _ticks(x0, x1):
        parts += [f'<line x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top}" y2="{top + inner_h}" '
                  'stroke="#eee"/>', _text(X(t), top + inner_h + 16, f"{t:g}", 11, "middle")]
    for t in _ticks(y0, y1):
        parts += [f'<line x1="{left}" x2="{left + inner_w}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" '
                  'stroke="#eee"/>', _text(left - 6, Y(t) + 4, f"{t:g}", 11, "end")]
    path = " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in sorted(frontier))
    parts.append(f'<g><title>best utility at each tolerance (training world)</title>'
                 f'<polyline points="{path}" fill="none" stroke="#555" stroke-width="2"/></g>')
    for i, (name, x, xl, xh, yv, yl, yh) in enumerate(points):
        c = PALETTE[i % len(PALETTE)]
        tip = escape(f"{name}: deviation {x:.3f} [{xl:.3f}, {xh:.3f}], value {yv:.3f} "
                     f"[{yl:.3f}, {yh:.3f}]")
        parts.append(
            f'<g><title>{tip}</title>'
            f'<line x1="{X(xl):.1f}" x2="{X(xh):.1f}" y1="{Y(yv):.1f}" y2="{Y(yv):.1f}" '
            f'stroke="{c}" stroke-width="2"/><line x1="{X(x):.1f}" x2="{X(x):.1f}" '
            f'y1="{Y(yl):.1f}" y2="{Y(yh):.1f}" stroke="{c}" stroke-width="2"/>'
            f'<circle cx="{X(x):.1f}" cy="{Y(yv):.1f}" r="6" fill="{c}"/></g>')
        ly = top + 14 + 20 * i
        parts += [f'<circle cx="{left + inner_w + 16}" cy="{ly - 4}" r="6" fill="{c}"/>',
                  _text(left + inner_w + 28, ly, name, 12)]
    ly = top + 14 + 20 * len(points)
    parts += [f'<line x1="{left + inner_w + 8}" x2="{left + inner_w + 24}" y1="{ly - 4}" '
              f'y2="{ly - 4}" stroke="#555" stroke-width="2"/>',
              _text(left + inner_w + 28, ly, "frontier (training)", 12),
              _text(left + inner_w / 2, height - 10, xlabel, 12, "middle"),
              f'<text x="16" y="{top + inner_h / 2:.1f}" font-size="12" text-anchor="middle" '
              f'{_FONT} transform="rotate(-90 16 {top + inner_h / 2:.1f})">'
              f"{escape(ylabel)}</text>"]
    return _svg(width, height, title, parts)


def _svg(width: float, height: float, title: str, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} '
            f'{height:.0f}" width="{width}" height="{height:.0f}" '
            f'style="max-width:100%;height:auto"><title>{escape(title)}</title>'
            + "".join(parts) + "</svg>")
