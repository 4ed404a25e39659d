"""The report's plots: hand-written inline SVG (bar charts, the lattice scatter plot)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .text import _e, _num

_COLORS = ("#3b6ea8", "#e08a2c", "#4c9a54", "#b8433d")


_FONT = 'font-family="sans-serif" font-size="12"'


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering ``[lo, hi]``."""
    span = hi - lo
    if span <= 0:
        span = abs(hi) or 1.0
        lo, hi = lo - span / 2, hi + span / 2
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = mag * next(s for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.floor(lo / step) * step
    count = int(math.ceil((hi - first) / step - 1e-9)) + 1
    return [first + i * step for i in range(count)]


def _svg_open(width: int, height: int, title: str) -> list[str]:
    return [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{_e(title)}" {_FONT}>',
            f"<title>{_e(title)}</title>",
            f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="14" '
            f'font-weight="bold">{_e(title)}</text>']


def _axes(parts: list[str], box, yticks, ytop: float, ybottom: float, ylabel: str,
          yfmt) -> Callable[[float], float]:
    """Draw both axes, the y grid and the y title; return the value -> y pixel map."""
    left, top, right, bottom = box

    def y_of(v: float) -> float:
        return bottom - (v - ybottom) / (ytop - ybottom) * (bottom - top)

    for t in yticks:
        y = y_of(t)
        parts.append(f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#e3e3e3"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f"{_e(yfmt(t))}</text>")
    parts.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#444"/>')
    parts.append(f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#444"/>')
    mid = (top + bottom) / 2
    parts.append(f'<text x="16" y="{mid:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 16 {mid:.1f})">{_e(ylabel)}</text>')
    return y_of


def _legend(parts: list[str], entries, x: float, y: float) -> None:
    """``entries``: ``(name, marker)``, the marker an SVG element with ``{x}``/``{y}`` where
    its centre goes."""
    for i, (name, marker) in enumerate(entries):
        yy = y + 16 * i
        parts.append(marker.format(x=f"{x + 5:.1f}", y=f"{yy - 4:.1f}"))
        parts.append(f'<text x="{x + 16:.1f}" y="{yy:.1f}">{_e(name)}</text>')


def _bar_chart(title: str, labels, series, *, xlabel: str, ylabel: str, tips=None,
               percent: bool = False, width: int = 640, height: int = 320,
               marker: tuple[float, str] | None = None, yfmt=None) -> str:
    """Grouped vertical bars; ``series`` is a list of ``(name, values)`` (None = no bar),
    ``tips`` optional hover text per category; ``marker`` ``(position, text)`` draws a dashed
    vertical line at ``position`` (in categories: 0 is the left edge of the first bar's
    group) labelled ``text``; ``yfmt`` formats the y ticks."""
    labels = [str(lab) for lab in labels]
    longest = min(max((len(lab) for lab in labels), default=0), 22)
    rotate = len(labels) > 12 or longest > 10
    left, top, right = 72, 34 + (16 * len(series) if len(series) > 1 else 0), width - 16
    margin = 44 + (int(longest * 4.8) if rotate else 0)  # room for labels at 45 degrees
    height += margin - 44
    bottom = height - margin
    values = [v for _, vals in series for v in vals if v is not None]
    vmax = max(values, default=0.0) or 1.0
    yticks = [t for t in _ticks(0.0, vmax) if t >= 0]
    ytop = max(yticks[-1], vmax)
    parts = _svg_open(width, height, title)
    if yfmt is None:
        yfmt = (lambda t: f"{100 * t:.3g} %") if percent else (lambda t: f"{t:.4g}")
    y_of = _axes(parts, (left, top, right, bottom), yticks, ytop, 0.0, ylabel, yfmt)
    group = (right - left) / max(len(labels), 1)
    if marker is not None:
        mx = left + group * marker[0]
        parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{top - 4}" y2="{bottom}" '
                     'stroke="#b8433d" stroke-width="2" stroke-dasharray="5 3"/>')
        parts.append(f'<text x="{mx + 5:.1f}" y="{top + 8}" fill="#b8433d" font-weight="bold">'
                     f"{_e(marker[1])}</text>")
    bar = group * 0.8 / len(series)
    for i, lab in enumerate(labels):
        x0 = left + group * i + group * 0.1
        for s, (name, vals) in enumerate(series):
            v = vals[i]
            if not v:  # None or 0: no bar
                continue
            y = y_of(v)
            tip = f"{lab}: {name} {yfmt(v) if percent else _num(v)}"
            if tips is not None:
                tip += f"\n{tips[i]}"
            parts.append(f'<rect x="{x0 + bar * s:.1f}" y="{y:.1f}" width="{max(bar - 1, 1):.1f}"'
                         f' height="{max(bottom - y, 0):.1f}" fill="{_COLORS[s]}">'
                         f"<title>{_e(tip)}</title></rect>")
        cx = left + group * (i + 0.5)
        text = lab if len(lab) <= 22 else lab[:21] + "\u2026"
        if rotate:
            parts.append(f'<text x="{cx:.1f}" y="{bottom + 12}" text-anchor="end" '
                         f'transform="rotate(-45 {cx:.1f} {bottom + 12})">{_e(text)}</text>')
        else:
            parts.append(f'<text x="{cx:.1f}" y="{bottom + 15}" text-anchor="middle">'
                         f"{_e(text)}</text>")
    parts.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 f"{_e(xlabel)}</text>")
    if len(series) > 1:
        _legend(parts, [(name, f'<rect x="{{x}}" y="{{y}}" width="11" height="11" '
                               f'transform="translate(-5.5 -5.5)" fill="{_COLORS[s]}"/>')
                        for s, (name, _) in enumerate(series)], right - 170, 36)
    parts.append("</svg>")
    return "\n".join(parts)


def _lattice_plot(lat: dict, width: int = 640, height: int = 400) -> str:
    """Evaluated nodes: x = generalization height (spread within a height), y = information
    loss (the metric's lower bound for nodes that are not anonymous); the optimum ringed."""
    nodes = lat["nodes"]
    height_of = np.asarray(nodes["height"], dtype=np.float64)
    anonymous = np.asarray(nodes["anonymous"], dtype=bool)
    loss = np.array([np.nan if v is None else v for v in nodes["information_loss"]],
                    dtype=np.float64)
    bound = np.array([np.nan if v is None else v for v in nodes["lower_bound"]],
                     dtype=np.float64)
    y_val = np.where(anonymous, loss, bound)
    finite = np.isfinite(y_val)
    # spread the nodes of one height evenly over +-0.3 around it, in node-id order
    order = np.argsort(height_of, kind="stable")
    hs = height_of[order]
    start = np.searchsorted(hs, hs, side="left")
    count = np.searchsorted(hs, hs, side="right") - start
    offset = np.empty_like(height_of)
    offset[order] = np.where(count > 1, (np.arange(len(hs)) - start) / np.maximum(count - 1, 1)
                             - 0.5, 0.0) * 0.6
    left, top, right, bottom = 72, 84, width - 16, height - 44
    lo = float(np.nanmin(y_val[finite])) if finite.any() else 0.0
    hi = float(np.nanmax(y_val[finite])) if finite.any() else 1.0
    yticks = _ticks(min(lo, 0.0), hi)
    ytop, ybottom = max(yticks[-1], hi), min(yticks[0], lo)
    title = (f"Nodes checked by the search ({lat['drawn']} drawn; "
             f"lattice of {lat['lattice_size']})")
    parts = _svg_open(width, height, title)
    ylabel = f"information loss ({lat['metric']})"
    y_of = _axes(parts, (left, top, right, bottom), yticks, ytop, ybottom, ylabel,
                 lambda t: f"{t:.4g}")
    xmax = max(int(lat["max_height"]), 1)

    def x_of(h):
        return left + 20 + (h + 0.5) / (xmax + 1) * (right - left - 40)

    for h in range(xmax + 1):
        if xmax <= 40 or h % math.ceil(xmax / 40) == 0:
            parts.append(f'<text x="{x_of(h):.1f}" y="{bottom + 15}" text-anchor="middle">'
                         f"{h}</text>")
    parts.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 "generalization height (sum of levels)</text>")
    qids = lat["quasi_identifiers"]
    levels_of = np.asarray(nodes["levels"], dtype=np.int64).reshape(len(height_of), len(qids))
    for i in np.flatnonzero(finite):
        x, y = x_of(height_of[i] + offset[i]), y_of(y_val[i])
        levels = ", ".join(f"{q}={v}" for q, v in zip(qids, levels_of[i]))
        what = (f"anonymous, loss {y_val[i]:.6g}" if anonymous[i]
                else f"not anonymous, lower bound {y_val[i]:.6g}")
        style = ('fill="#4c9a54" fill-opacity="0.75"' if anonymous[i]
                 else 'fill="none" stroke="#b8433d" stroke-width="1.2"')
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.6" {style}>'
                     f"<title>{_e(levels)}: {_e(what)}</title></circle>")
    opt = lat["optimum"]
    if opt["information_loss"] is not None:
        at = np.flatnonzero((levels_of == np.asarray(opt["levels"])).all(axis=1))
        ox = x_of(opt["height"] + (offset[at[0]] if len(at) else 0.0))
        oy = y_of(opt["information_loss"])
        parts.append(f'<circle cx="{ox:.1f}" cy="{oy:.1f}" r="8" fill="none" stroke="#1d3f73" '
                     'stroke-width="2.5"><title>optimum</title></circle>')
    _legend(parts, [("anonymous", '<circle cx="{x}" cy="{y}" r="4" fill="#4c9a54"/>'),
                    ("not anonymous (at lower bound)",
                     '<circle cx="{x}" cy="{y}" r="4" fill="none" stroke="#b8433d"/>'),
                    ("optimum", '<circle cx="{x}" cy="{y}" r="6" fill="none" stroke="#1d3f73" '
                                'stroke-width="2"/>')], right - 200, 34)
    parts.append("</svg>")
    return "\n".join(parts)


def _scatter_plot(title: str, x, y, *, xlabel: str, ylabel: str, tips, filled, frontier,
                  lines=(), chosen: int | None = None, width: int = 640,
                  height: int = 420) -> str:
    """Points ``(x[i], y[i])`` (NaN ones left out) with hover text ``tips[i]``: ``filled``
    ones solid, the others as rings; the ``frontier`` ones (a bool mask) in their own colour,
    joined by a staircase in x order; ``lines``: ``(axis, value, label)`` dashed threshold
    lines (``axis`` ``"x"`` or ``"y"``); point ``chosen`` ringed."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    shown = np.isfinite(x) & np.isfinite(y)
    left, top, right, bottom = 72, 84, width - 16, height - 44
    xs = np.concatenate([x[shown], [v for a, v, _ in lines if a == "x"]])
    ys = np.concatenate([y[shown], [v for a, v, _ in lines if a == "y"]])
    xlo, xhi = (float(xs.min()), float(xs.max())) if len(xs) else (0.0, 1.0)
    ylo, yhi = (float(ys.min()), float(ys.max())) if len(ys) else (0.0, 1.0)
    xticks, yticks = _ticks(xlo, xhi), _ticks(ylo, yhi)  # the data's range, not from 0
    xleft, xright = min(xticks[0], xlo), max(xticks[-1], xhi)
    parts = _svg_open(width, height, title)
    y_of = _axes(parts, (left, top, right, bottom), yticks, max(yticks[-1], yhi),
                 min(yticks[0], ylo), ylabel, lambda t: f"{t:.4g}")

    def x_of(v: float) -> float:
        return left + (v - xleft) / ((xright - xleft) or 1.0) * (right - left)

    for t in xticks:
        parts.append(f'<text x="{x_of(t):.1f}" y="{bottom + 15}" text-anchor="middle">'
                     f"{_e(f'{t:.4g}')}</text>")
    parts.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 f"{_e(xlabel)}</text>")
    for axis, value, label in lines:
        if axis == "x":
            x1 = x2 = x_of(value)
            y1, y2 = float(top), float(bottom)
        else:
            x1, x2 = float(left), float(right)
            y1 = y2 = y_of(value)
        parts.append(f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y1:.1f}" y2="{y2:.1f}" '
                     'stroke="#b8433d" stroke-width="1.5" stroke-dasharray="5 3">'
                     f"<title>{_e(label)}</title></line>")
        parts.append(f'<text x="{x1 - 4:.1f}" y="{y1 - 4 if axis == "y" else top + 10:.1f}" '
                     f'text-anchor="end" fill="#b8433d">{_e(label)}</text>')
    front = np.flatnonzero(shown & np.asarray(frontier, dtype=bool))
    front = front[np.lexsort((y[front], x[front]))]
    if len(front) > 1:  # the staircase: right along the lower y, then down
        path = [f"{x_of(x[front[0]]):.1f},{y_of(y[front[0]]):.1f}"]
        for a, b in zip(front[:-1], front[1:]):
            path.append(f"{x_of(x[b]):.1f},{y_of(y[a]):.1f}")
            path.append(f"{x_of(x[b]):.1f},{y_of(y[b]):.1f}")
        parts.append(f'<polyline points="{" ".join(path)}" fill="none" stroke="#1d3f73" '
                     'stroke-width="1.5"/>')
    is_front = np.asarray(frontier, dtype=bool)
    for i in np.flatnonzero(shown):
        style = ('fill="#1d3f73"' if is_front[i] else
                 'fill="#4c9a54" fill-opacity="0.55"' if filled[i] else
                 'fill="none" stroke="#b8433d" stroke-opacity="0.6"')
        parts.append(f'<circle cx="{x_of(x[i]):.1f}" cy="{y_of(y[i]):.1f}" r="3.2" {style}>'
                     f"<title>{_e(tips[i])}</title></circle>")
    if chosen is not None and shown[chosen]:
        parts.append(f'<circle cx="{x_of(x[chosen]):.1f}" cy="{y_of(y[chosen]):.1f}" r="8" '
                     'fill="none" stroke="#e08a2c" stroke-width="3">'
                     f"<title>{_e('chosen: ' + tips[chosen])}</title></circle>")
    _legend(parts, [("anonymous", '<circle cx="{x}" cy="{y}" r="4" fill="#4c9a54"/>'),
                    ("not anonymous", '<circle cx="{x}" cy="{y}" r="4" fill="none" '
                                      'stroke="#b8433d"/>'),
                    ("Pareto frontier", '<circle cx="{x}" cy="{y}" r="4" fill="#1d3f73"/>'),
                    ("chosen node", '<circle cx="{x}" cy="{y}" r="6" fill="none" '
                                    'stroke="#e08a2c" stroke-width="2"/>')], right - 170, 34)
    parts.append("</svg>")
    return "\n".join(parts)
