"""The anonymization report: one self-contained HTML file with plots, and a JSON twin.

:func:`build_report` computes the figures of an :class:`~gpuppdp.anonymizer.AnonymizationResult`
and its input table as plain JSON values; :func:`render_html` draws that dict (hand-written
inline SVG, inline CSS: no script, nothing fetched from elsewhere); :func:`write_report`
writes both files.  The HTML is rendered from the JSON dict alone, so both hold the same
figures.

Sections: summary; class-size distribution of the release; records by risk level and the risk
summary before and after; per-class privacy losses and the sensitive distribution of the worst
class (for each sensitive attribute); distinction and separation of the QID subsets; the lattice
nodes the search evaluated.  A Mondrian or TDS release (:mod:`gpuppdp.algorithms.mondrian`,
:mod:`gpuppdp.algorithms.tds`) gets the same sections computed on its classes, with NCP/GCP as the loss
and, in place of the lattice, how the records were partitioned (:mod:`.partition`).
"""

from __future__ import annotations

import html
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from .. import __version__
from ..analysis.checker import check
from ..analysis.risk import RISK_THRESHOLDS, attribute_risks, class_sizes, sample_risk_summary
from ..engine.transform import suppressed_rows
from ..io import OutputPlan
from ..progress import Steps
from ..validation import check_frame, check_int
from .words import describe_release, level_samples, model_sentence, models_text

if TYPE_CHECKING:  # the anonymizer imports this module
    from ..anonymizer import AnonymizationResult

__all__ = ["build_report", "render_html", "write_report", "SECTION_TITLES",
           "PARTITION_SECTION_TITLES", "describe_release",
           "model_sentence", "models_text", "level_samples", "DOMINANCE_SHARE"]

#: a released class in which one sensitive value holds more than this share is flagged
DOMINANCE_SHARE = 0.5

#: section key -> heading, in page order
SECTION_TITLES = {
    "conclusion": "1. In plain words",
    "summary": "2. Files, columns and transformation",
    "class_sizes": "3. Class-size distribution",
    "risk": "4. Records by risk level",
    "privacy_losses": "5. Privacy loss per class",
    "worst_class": "6. Sensitive distribution of the worst class",
    "attribute_risks": "7. Distinction and separation of QID subsets",
    "lattice": "8. Generalization lattice",
}
#: the sections of a Mondrian or TDS report: no lattice (no level per QID), the partitioning
PARTITION_SECTION_TITLES = {**{k: v for k, v in SECTION_TITLES.items() if k != "lattice"},
                            "partitioning": "8. How the records were partitioned"}


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------

def _jsonable(value):
    """Plain JSON values: numpy scalars unwrapped, NaN -> None, infinities -> "inf"/"-inf"."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _size_bins(sizes: np.ndarray, start: int | None = None) -> list[dict]:
    """Histogram of class sizes from ``start`` (default: the smallest size; the smallest
    class size the models allow, so that the first bin begins at k): one bin per size when
    the sizes span fewer than 30 values (equal bins), otherwise bins that double in width
    (``[s, 2s)``, ``[2s, 4s)``, ...: equal bins on a logarithmic size axis); classes and
    records per bin."""
    hi = int(sizes.max())
    lo = int(sizes.min()) if start is None else max(1, min(int(start), int(sizes.min())))
    if hi - lo < 30:
        edges = np.arange(lo, hi + 2)
    else:
        count = int(math.ceil(math.log2((hi + 1) / lo))) + 1
        edges = np.unique(np.round(lo * 2.0 ** np.arange(count)).astype(np.int64))
        edges = edges[edges <= hi]
        edges = np.append(edges, max(int(round(edges[-1] * 2.0)), hi + 1))
    classes, _ = np.histogram(sizes, bins=edges)
    records, _ = np.histogram(sizes, bins=edges, weights=sizes)
    return [{"label": str(a) if b - a == 1 else f"{a}\u2013{b - 1}", "low": int(a),
             "high": int(b - 1), "classes": int(c), "records": int(r)}
            for a, b, c, r in zip(edges[:-1], edges[1:], classes, records)]


def _risk_levels(thresholds) -> list[dict]:
    """Buckets of prosecutor risk ``1/|E|`` between the thresholds: ``(low, high]``."""
    ts = sorted({float(t) for t in thresholds}, reverse=True)
    bounds = [1.0] + ts + [0.0]
    out = []
    for high, low in zip(bounds[:-1], bounds[1:]):
        if low == 0.0:
            label = f"\u2264 {high:.0%}"
        elif high == 1.0:
            label = f"> {low:.0%}"
        else:
            label = f"{low:.0%}\u2013{high:.0%}"
        out.append({"label": label, "low": low, "high": high})
    return out


def _records_by_risk(sizes: np.ndarray | None, levels: list[dict]) -> list[int | None]:
    if sizes is None:
        return [None] * len(levels)
    risk = 1.0 / sizes
    return [int(sizes[(risk > lv["low"]) & (risk <= lv["high"])].sum()) for lv in levels]


def _sensitive_columns(result: AnonymizationResult, sensitive) -> list[str]:
    """The sensitive attributes of sections 4-5: those given, else those the models refer to
    (in the schema's order), else the first declared one."""
    declared = list(result._anonymizer.schema.sensitive)
    if sensitive is not None:
        wanted = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        for name in wanted:
            if name not in declared:
                raise ValueError(f"sensitive: {name!r} is not a sensitive attribute of this "
                                 f"anonymization (declared: {declared or 'none'})")
        return wanted
    referred = {m.sensitive_attribute for m in result._anonymizer.models}
    return [c for c in declared if c in referred] or declared[:1]


def _privacy_losses(kept: pd.DataFrame, qids, sensitive, backend, max_classes: int,
                    max_values: int) -> tuple[dict, dict]:
    """Per-class distribution and entropy losses (largest first) and the sensitive
    distribution of the class with the largest distribution loss against the overall one."""
    table = check(kept, quasi_identifiers=qids, sensitive=sensitive, backend=backend,
                  per_class=True)["per_class"]
    table = table.sort_values(["distribution_loss", "entropy_loss"], ascending=False,
                              kind="stable").reset_index(drop=True)
    shown = table.head(max_classes)
    labels = shown[qids].astype(str).agg(", ".join, axis=1)
    losses = {
        "sensitive": sensitive, "classes": int(len(table)), "shown": int(len(shown)),
        "distribution_loss_max": float(table["distribution_loss"].iloc[0]),
        "entropy_loss_max": float(table["entropy_loss"].max()),
        "rows": [{"rank": i + 1, "label": lab, "size": int(s), "distribution_loss": float(d),
                  "entropy_loss": float(e)}
                 for i, (lab, s, d, e) in enumerate(zip(labels, shown["size"],
                                                        shown["distribution_loss"],
                                                        shown["entropy_loss"]))],
    }
    worst = table.iloc[0]
    in_worst = kept[qids].eq(worst[qids]).all(axis=1).to_numpy()
    overall = kept[sensitive].astype(str).value_counts()
    in_class = kept.loc[in_worst, sensitive].astype(str).value_counts()
    shares = pd.DataFrame({"overall": overall, "class": in_class}).fillna(0)
    shares["overall_share"] = shares["overall"] / len(kept)
    shares["class_share"] = shares["class"] / int(in_worst.sum())
    ranked = shares.assign(key=shares[["overall_share", "class_share"]].max(axis=1)) \
        .sort_values("key", ascending=False, kind="stable")
    top = ranked.head(max_values).sort_values("overall_share", ascending=False, kind="stable")
    rest = ranked.iloc[max_values:]
    worst_class = {
        "sensitive": sensitive, "label": labels.iloc[0],
        "quasi_identifiers": {q: str(worst[q]) for q in qids}, "size": int(worst["size"]),
        "distribution_loss": float(worst["distribution_loss"]),
        "entropy_loss": float(worst["entropy_loss"]),
        "values": [{"value": v, "class_count": int(c), "overall_count": int(o),
                    "class_share": float(cs), "overall_share": float(os_)}
                   for v, c, o, cs, os_ in zip(top.index, top["class"], top["overall"],
                                               top["class_share"], top["overall_share"])],
        "other_values": {"values": int(len(rest)),
                         "class_share": float(rest["class_share"].sum()),
                         "overall_share": float(rest["overall_share"].sum())},
    }
    return losses, worst_class


def _dominance(kept: pd.DataFrame, qids, sensitive, max_rows: int) -> dict:
    """Released classes in which one value of ``sensitive`` holds more than
    :data:`DOMINANCE_SHARE` of the records (an attacker who places a person in such a class
    guesses the value right more often than not): their number, their records and the
    ``max_rows`` largest shares (then larger classes first)."""
    counts = kept.groupby(qids + [sensitive], sort=False, observed=True).size() \
        .rename("count").reset_index()
    counts[sensitive] = counts[sensitive].astype(str)
    size = counts.groupby(qids, sort=False, observed=True)["count"].transform("sum")
    counts["size"] = size
    counts["share"] = counts["count"] / size
    top = counts.sort_values(["share", "size"], ascending=False, kind="stable") \
        .drop_duplicates(qids, keep="first")
    flagged = top[top["share"] > DOMINANCE_SHARE]
    labels = flagged[qids].astype(str).agg(", ".join, axis=1) if len(flagged) else []
    return {"sensitive": sensitive, "threshold": DOMINANCE_SHARE,
            "classes": int(len(flagged)), "records": int(flagged["size"].sum()),
            "classes_total": int(len(top)),
            "rows": [{"label": lab, "size": int(n), "value": v, "count": int(c),
                      "share": float(sh)}
                     for lab, n, v, c, sh in zip(list(labels)[:max_rows], flagged["size"],
                                                 flagged[sensitive], flagged["count"],
                                                 flagged["share"])]}


def _attribute_risks(data: pd.DataFrame, qids, backend, max_subsets: int,
                     released: pd.DataFrame | None = None) -> dict:
    """Distinction/separation of the QID subsets in the input, most distinguishing first, and
    (``release_distinction`` / ``release_separation``, None without ``released``) in the
    released records (suppressed ones left out); subsets up to the largest size whose count
    stays within ``max_subsets`` (at least the single QIDs)."""
    q = len(qids)
    counts = np.cumsum([math.comb(q, s) for s in range(1, q + 1)])
    max_size = max(1, int(np.searchsorted(counts, max_subsets, side="right")))
    rows = attribute_risks(data, qids, backend, max_size=max_size, sort="distinction")
    after = {}
    if released is not None and len(released):
        after = {tuple(r.attributes): r for r in
                 attribute_risks(released, qids, backend, max_size=max_size)}
    return {"quasi_identifiers": list(qids), "subsets_total": int(counts[-1]),
            "max_size": max_size, "computed": len(rows),
            "rows": [{"attributes": list(r.attributes), "distinction": r.distinction,
                      "separation": r.separation,
                      "release_distinction": getattr(after.get(tuple(r.attributes)),
                                                     "distinction", None),
                      "release_separation": getattr(after.get(tuple(r.attributes)),
                                                    "separation", None)}
                     for r in rows[:max_subsets]]}


def _lattice(result: AnonymizationResult, qids, max_nodes: int) -> dict:
    """The evaluated nodes (all, or ``max_nodes`` evenly spread over node ids, optimum kept)."""
    opt_levels = [result.transformation[q] for q in qids]
    out = {"lattice_size": result.lattice_size, "nodes_checked": result.nodes_evaluated,
           "search": result.search.strategy, "metric": result.metric,
           "quasi_identifiers": list(qids), "max_height": None, "evaluated": 0, "drawn": 0,
           "nodes": None,
           "optimum": {"levels": opt_levels, "height": int(result.node["height"]),
                       "information_loss": result.information_loss}}
    nodes = result.evaluated_nodes
    if nodes is None or len(nodes) == 0:
        return out
    n = len(nodes)
    pick = np.arange(n)
    if n > max_nodes:
        opt = int(np.flatnonzero((nodes.levels == np.asarray(opt_levels)).all(axis=1))[0])
        pick = np.unique(np.append(np.linspace(0, n - 1, max_nodes - 1).astype(np.int64), opt))
    heights = result._anonymizer.schema.quasi_identifiers
    out.update(max_height=int(sum(heights[q].height for q in qids)), evaluated=n,
               drawn=int(len(pick)),
               nodes={"levels": nodes.levels[pick], "height": nodes.height[pick],
                      "anonymous": nodes.anonymous[pick].astype(bool),
                      "information_loss": nodes.information_loss[pick],
                      "lower_bound": nodes.lower_bound[pick]})
    return out


def _release_figures(data: pd.DataFrame, kept: pd.DataFrame, qids, sens, backend, step, *,
                     smallest_allowed, k, max_classes: int, max_values: int,
                     max_subsets: int) -> dict:
    """The figures computed on the released classes, whatever the scheme: ``class_sizes``,
    ``risk`` (input against ``kept``, the released records), ``privacy_losses``,
    ``worst_class``, ``dominance`` and ``attribute_risks``; ``step()`` after each stage."""
    step()
    before = backend.to_host(class_sizes(data, qids, backend)).astype(np.int64)
    after = backend.to_host(class_sizes(kept, qids, backend)).astype(np.int64) \
        if len(kept) else None
    levels = _risk_levels(RISK_THRESHOLDS)
    for lv, b, a in zip(levels, _records_by_risk(before, levels),
                        _records_by_risk(after, levels)):
        lv.update(input_records=b, release_records=a)
    risk = {"thresholds": list(RISK_THRESHOLDS), "levels": levels,
            "input": sample_risk_summary(before, backend).to_dict(),
            "release": None if after is None else sample_risk_summary(after, backend).to_dict()}

    class_size = None
    if after is not None:
        class_size = {"classes": int(len(after)), "records": int(after.sum()),
                      "smallest": int(after.min()), "largest": int(after.max()),
                      "mean": float(after.mean()),
                      "smallest_allowed": smallest_allowed,
                      "k": k,
                      "bins": _size_bins(after, smallest_allowed)}

    step()
    losses = worst = dominance = None
    if sens and len(kept):
        losses, worst = (list(x) for x in zip(*[
            _privacy_losses(kept, qids, name, backend, max_classes, max_values)
            for name in sens]))
        dominance = [_dominance(kept, qids, name, max_classes) for name in sens]

    step()
    attribute_risks = _attribute_risks(data, qids, backend, max_subsets, kept)
    step()
    return {"class_sizes": class_size, "risk": risk, "privacy_losses": losses,
            "worst_class": worst, "dominance": dominance, "attribute_risks": attribute_risks}


def build_report(result: AnonymizationResult, data: pd.DataFrame, *, sensitive=None,
                 max_classes: int = 50, max_values: int = 30, max_subsets: int = 255,
                 max_nodes: int = 3000, files: dict | None = None, progress=None,
                 summary: dict | None = None, released: pd.DataFrame | None = None) -> dict:
    """The report's figures as a JSON-ready dict (the JSON twin of the HTML).

    Parameters
    ----------
    result : AnonymizationResult, or a Mondrian or TDS release
        (:class:`~gpuppdp.algorithms.mondrian.MondrianRelease`, :class:`~gpuppdp.algorithms.tds.TDSRelease`: the
        same sections computed on its classes, NCP/GCP as the loss, and a section on the
        partitioning in place of the lattice; see :mod:`gpuppdp.report.partition`)
    data : the input table ``result`` was fitted on (for the "before" figures)
    sensitive : the sensitive attribute(s) of sections 4-5, one part each (default: those the
        models refer to, else the first declared); none declared: those sections are empty
    max_classes : classes shown in the per-class loss plot (largest distribution loss first)
    max_values : sensitive values shown for the worst class (the rest summed as "other")
    max_subsets : QID subsets in the distinction/separation table
    max_nodes : lattice nodes drawn
    files : the files to name (``input``, ``output``, ``hierarchies`` QID -> path, ...; see
        :func:`describe_release`); the report names what it is given
    progress : ``progress(done, total)``, called before the first step and after each (risk,
        privacy losses, QID subsets, lattice)
    summary, released : Mondrian and TDS releases only: the run's summary (``gpuppdp
        anonymize --json``'s keys: files, roles, models) and the table as published (rows
        shuffled, identifying columns removed); default: the release's own
    """
    from ..algorithms.mondrian import MondrianRelease

    if isinstance(result, MondrianRelease):
        from .partition import build_partition_report

        return build_partition_report(result, data, sensitive=sensitive,
                                      max_classes=max_classes, max_values=max_values,
                                      max_subsets=max_subsets, files=files, progress=progress,
                                      summary=summary, released=released)
    if summary is not None or released is not None:
        raise TypeError("summary= and released= are for Mondrian and TDS releases")
    step = Steps(progress, 4)

    if not all(hasattr(result, a) for a in ("release", "transformation", "search")):
        raise TypeError(f"result must be an AnonymizationResult (or a Mondrian or TDS "
                        f"release), got {type(result).__name__}")
    check_frame("data", data)
    max_classes = check_int("max_classes", max_classes, 1)
    max_values = check_int("max_values", max_values, 1)
    max_subsets = check_int("max_subsets", max_subsets, 1)
    max_nodes = check_int("max_nodes", max_nodes, 1)
    qids = list(result.transformation)
    missing = [q for q in qids if q not in data.columns]
    if missing or len(data) != result.release.input_rows:
        raise ValueError(f"data must be the table the result was fitted on "
                         f"({result.release.input_rows} rows with columns {qids}); got "
                         f"{len(data)} rows" + (f" without {missing}" if missing else ""))
    sens = _sensitive_columns(result, sensitive)
    backend = result._evaluator.backend
    released = result.released
    kept = released.loc[~suppressed_rows(released, qids)].reset_index(drop=True)

    summary = result.summary()
    summary.update(describe_release(result, files))
    summary.update(sensitive=sens, suppression=result.release.suppression,
                   released_table_rows=int(len(released)))
    sizes_allowed = [m.min_class_size for m in result._anonymizer.models
                     if getattr(m, "min_class_size", None)]
    k_models = [int(m["k"]) for m in summary["models"] if m.get("model") == "k-anonymity"]
    smallest_allowed = max(sizes_allowed) if sizes_allowed else None

    figures = _release_figures(data, kept, qids, sens, backend, step,
                               smallest_allowed=smallest_allowed,
                               k=max(k_models) if k_models else None, max_classes=max_classes,
                               max_values=max_values, max_subsets=max_subsets)
    report = {
        "title": "Anonymization report",
        "generator": f"gpuppdp {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "summary": summary, **figures, "lattice": _lattice(result, qids, max_nodes),
    }
    step()
    return _jsonable(report)


# --------------------------------------------------------------------------------------------
# SVG plots
# --------------------------------------------------------------------------------------------

_COLORS = ("#3b6ea8", "#e08a2c", "#4c9a54", "#b8433d")
_FONT = 'font-family="sans-serif" font-size="12"'


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(value, digits: int = 4) -> str:
    """A number for people: ``-`` for None, ints with thousands separators, floats to
    ``digits`` significant digits."""
    if value is None:
        return "-"
    if isinstance(value, (str, bool)):
        return "\u221e" if value == "inf" else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}g}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.3g} %"


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


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 860px; margin: 0 auto; padding: 1em 1.5em 3em; background: #fff;
       box-sizing: border-box; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.meta, .caption { color: #555; font-size: 0.9em; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; max-width: 100%; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f0f3f7; }
td.n { text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: normal; }
tr.flag td { background: #fbeaea; }
.flag { color: #b8433d; font-weight: bold; }
.bar { display: inline-block; height: 0.7em; background: #3b6ea8; margin-right: 0.4em; }
svg { display: block; margin: 0.5em 0; max-width: 100%; height: auto; }
details { margin: 0.5em 0; }
summary { cursor: pointer; }
#conclusion p, #conclusion li { line-height: 1.45; }
code { overflow-wrap: anywhere; }
@media (max-width: 700px) {
  body { font-size: 15px; }
  main { padding: 0.5em 0.7em 2em; }
  th, td { padding: 0.2em 0.35em; }
}
"""


def _table(header, rows, numeric=(), flags=None) -> str:
    """An HTML table in a horizontally scrolling box; cells are escaped, columns in
    ``numeric`` right-aligned, rows whose ``flags`` entry is true marked ``class="flag"``."""
    out = ['<div class="scroll"><table><thead><tr>'
           + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        flagged = flags is not None and flags[i]
        out.append(("<tr class=\"flag\">" if flagged else "<tr>") + "".join(
            f'<td class="n">{_e(c)}</td>' if j in numeric else f"<td>{_e(c)}</td>"
            for j, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _model_text(model: dict) -> str:
    return model_sentence(model)


def _names(values, empty: str = "none") -> str:
    return ", ".join(str(v) for v in values) if values else empty


def _count_pct(count, total) -> str:
    return f"{_num(count)} ({_pct(count / total)})" if total else _num(count)


def _qid_phrase(q: dict) -> str:
    if q["level"] == 0:
        return f"{q['name']} kept as it is (level 0 of {q['max_level']})"
    like = ", ".join(f"\u201c{v}\u201d" for v in q.get("labels", [])[:3])
    return (f"{q['name']} generalized to level {q['level']} of {q['max_level']}"
            + (f" (values like {like})" if like else ""))


def _conclusion_html(report: dict) -> str:
    """The first section: what was released, which guarantees hold, the risks, what an
    attacker learns about the worst class, in plain words, from the report's figures."""
    s, risk = report["summary"], report["risk"]
    n, kept = s["input_rows"], s["released_records"]
    sup = s["suppressed_records"]
    source = f"<code>{_e(s['input'])}</code>" if s.get("input") else "The input table"
    target = (f" as <code>{_e(s['output'])}</code>" if s.get("output") else "")
    how = "kept in the table with every quasi-identifier replaced by *" \
        if s.get("suppression", "mark") == "mark" else "left out of the table"
    columns = (len(s["quasi_identifiers"]) + len(s.get("sensitive_columns", []))
               + len(s.get("insensitive_columns", [])) + len(s.get("removed_columns", [])))
    out = [f"<p><b>What was released.</b> {source} ({_num(n)} records, {columns} columns) was "
           f"released{target}: a table of {_num(s['rows_in_release'])} rows, of which "
           f"{_count_pct(kept, n)} records are published and {_count_pct(sup, n)} are "
           f"suppressed ({_e(how)}; at most {_pct(s['suppression_limit'])} allowed).</p>"]
    removed = s.get("identifying_columns", [])
    dropped = s.get("dropped_columns", [])
    out.append(_column_list(s, [_qid_phrase(q) for q in s["quasi_identifiers"]],
                            "removed: " + _names(removed, "no identifying column")
                            + (f"; dropped (no role): {_names(dropped)}" if dropped else "")))
    out.append("<p><b>Guarantees</b> (hold for every published record; suppressed records "
               "are not counted):</p><ul>" + "".join(
                   f"<li>{_e(model_sentence(m, explain=True))}</li>" for m in s["models"])
               + "</ul>")
    after = risk.get("release")
    if after:
        qids = _names([q["name"] for q in s["quasi_identifiers"]])
        at = after.get("records_at_risk", {})
        levels = []
        for t in sorted((float(k) for k in at), reverse=False):
            if t > 0.2:
                continue
            share = at[f"{t:.2f}"]
            levels.append(f"above {t:.0%}: {_num(round(share * after['records']))} records "
                          f"({_pct(share)})")
        before = risk["input"]
        smallest = round(1 / after["prosecutor_highest_risk"])
        out.append(
            f"<p><b>Re-identification risk.</b> An attacker who knows a person's {_e(qids)} "
            "and that the person is in the table can narrow the person down to one released "
            "class; the chance of picking the right record is at most "
            f"<b>{_pct(after['prosecutor_highest_risk'])}</b> (1 in {_num(smallest)}) and "
            f"<b>{_pct(after['prosecutor_average_risk'])}</b> on average over the published "
            f"records (input: highest {_pct(before['prosecutor_highest_risk'])}, average "
            f"{_pct(before['prosecutor_average_risk'])}). Records at risk "
            + "; ".join(_e(x) for x in levels) + ".</p>")
    else:
        out.append("<p><b>Re-identification risk.</b> Every record is suppressed: no record "
                   "can be re-identified from its quasi-identifiers.</p>")
    for w, d in zip(report.get("worst_class") or [], report.get("dominance") or []):
        text = _attacker_learns(w)
        if d["classes"]:
            text += (f'<span class="flag">{_num(d["classes"])} of {_num(d["classes_total"])} '
                     f"classes ({_num(d['records'])} records) have one value in more than "
                     f"{_pct(d['threshold'])} of their records</span>: an attacker who places "
                     "a person in one of them guesses that value right more often than not "
                     "(listed in section 6).</p>")
        else:
            text += (f"No class has one value in more than {_pct(d['threshold'])} of its "
                     "records.</p>")
        out.append(text)
    loss = _loss_text(s)
    out.append(f"<p><b>Information lost.</b> {_e(loss[:1].upper() + loss[1:])}; "
               f"{sum(q['level'] > 0 for q in s['quasi_identifiers'])} of "
               f"{len(s['quasi_identifiers'])} quasi-identifiers generalized, "
               f"{_pct(sup / n if n else 0)} of the records suppressed.</p>")
    return "\n".join(out)


def _column_list(s: dict, qid_phrases: list[str], removed: str) -> str:
    """The list of what became of the columns: each QID's phrase, the ``removed`` ones, the
    sensitive and insensitive ones published unchanged."""
    items = [*qid_phrases, removed]
    if s.get("sensitive_columns"):
        items.append("published unchanged as sensitive attributes: "
                     + _names(s["sensitive_columns"]))
    if s.get("insensitive_columns"):
        items.append("published unchanged (insensitive): " + _names(s["insensitive_columns"]))
    return "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


def _attacker_learns(w: dict) -> str:
    """The opening of the "what an attacker learns" paragraph for the class ``w`` whose
    sensitive distribution differs most from the table's."""
    top = max(w["values"], key=lambda v: v["class_share"]) if w["values"] else None
    text = (f"<p><b>What an attacker learns about {_e(w['sensitive'])}.</b> In the class "
            f"whose distribution differs most from the whole table ({_e(w['label'])}, "
            f"{_num(w['size'])} records)")
    if top is not None:
        text += (f", \u201c{_e(top['value'])}\u201d holds {_pct(top['class_share'])} of the "
                 f"records against {_pct(top['overall_share'])} overall")
    return text + ". "


def _loss_text(s: dict) -> str:
    rel = s.get("information_loss_relative")
    text = f"information loss {s['information_loss']:.6g} ({s['metric']} metric"
    if rel is not None:
        text += f"; {_pct(rel)} of the maximum"
    return text + ")"


def _summary_tables(s: dict, figures: list, qid_part: list[str]) -> str:
    """The summary section: files, columns by role, ``figures`` (rows), the quasi-identifiers
    (``qid_part``, HTML pieces) and the privacy models."""
    files = s.get("files") or {}
    file_rows = [("Input", files.get("input") or "(not given)")]
    file_rows += [(f"Hierarchy of {q}", p) for q, p in (files.get("hierarchies") or {}).items()
                  if p]
    file_rows += [(f"Hierarchy of {q} (sensitive)", p)
                  for q, p in (files.get("sensitive_hierarchies") or {}).items()]
    for key, label in (("population", "Population"), ("output", "Released table"),
                       ("json", "Summary (JSON)"), ("html", "This report")):
        if files.get(key):
            file_rows.append((label, files[key]))
    if "output" not in files:
        file_rows.append(("Released table", "not written by this run"))
    role_rows = [("Quasi-identifiers (generalized)",
                  _names([q["name"] for q in s["quasi_identifiers"]])),
                 ("Sensitive (published unchanged)", _names(s.get("sensitive_columns"))),
                 ("Insensitive (published unchanged)", _names(s.get("insensitive_columns"))),
                 ("Identifying (removed)", _names(s.get("identifying_columns"))),
                 ("No role (dropped)", _names(s.get("dropped_columns")))]
    models = "".join(f"<li>{_e(model_sentence(m, explain=True))}</li>" for m in s["models"])
    return "\n".join([
        "<h3>Files</h3>", _table(("File", "Path"), file_rows),
        "<h3>Columns</h3>", _table(("Role", "Columns"), role_rows),
        "<h3>Figures</h3>", _table(("Figure", "Value"), figures), *qid_part,
        "<h3>Privacy models</h3>", f"<ul>{models}</ul>"])


def _summary_html(s: dict) -> str:
    n = s["input_rows"]
    sup = s["suppressed_records"]
    rows = [
        ("Input records", _num(n)),
        ("Records published (not suppressed)", _count_pct(s["released_records"], n)),
        ("Records suppressed", f"{_count_pct(sup, n)}; limit {_pct(s['suppression_limit'])}"),
        ("Rows in the released table", f"{_num(s['rows_in_release'])} ("
         + ("suppressed records kept, marked *" if s.get("suppression", "mark") == "mark"
            else "suppressed records dropped") + ")"),
        ("Equivalence classes", f"{_num(s['equivalence_classes'])} (smallest "
                                f"{_num(s['smallest_class'])}, average "
                                f"{_num(s['average_class_size'])})"),
        ("Information loss", _loss_text(s)),
        ("Generalization height", _num(s["generalization_height"])),
        ("Search", f"{s['search']}: {_num(s['nodes_evaluated'])} nodes checked of "
                   f"{_num(s['lattice_size'])}"),
        ("Backend", s["backend"]),
        ("Timings", ", ".join(f"{k} {v:.3f} s" for k, v in s["timings"].items())),
    ]
    qrows = []
    for q in s["quasi_identifiers"]:
        chain = " \u2192 ".join(("[" + v["sample"] + "]") if v["level"] == q["level"]
                                else v["sample"] for v in q.get("levels", []))
        qrows.append((q["name"], f"{q['level']} of {q['max_level']}",
                      ", ".join(q.get("labels", [])) or "-", chain or "-"))
    return _summary_tables(s, rows, [
        "<h3>Transformation</h3>",
        '<p class="caption">Released values: the most frequent labels of each '
        "quasi-identifier in the release. Levels: one input value through every level of its "
        "hierarchy, the released level in brackets.</p>",
        _table(("Quasi-identifier", "Level", "Released values (most frequent)", "Levels"),
               qrows)])


def _class_sizes_html(cs: dict | None) -> str:
    if cs is None:
        return "<p>Every record is suppressed: the release has no classes.</p>"
    bins = cs["bins"]
    unit = all(b["low"] == b["high"] for b in bins)
    marker = None
    allowed = cs.get("smallest_allowed")
    if allowed is not None:
        at = next((i for i, b in enumerate(bins) if b["low"] <= allowed <= b["high"]), None)
        if at is not None:
            label = f"k = {allowed}" if cs.get("k") == allowed else \
                f"smallest allowed = {allowed}"
            marker = (float(at), label)
    svg = _bar_chart("Released classes by size", [b["label"] for b in bins],
                     [("classes", [b["classes"] for b in bins])],
                     xlabel="class size (records)" + ("" if unit else
                                                      ", bins doubling in width (log scale)"),
                     ylabel="classes", tips=[f"{b['records']} records" for b in bins],
                     marker=marker)
    binning = ("one bar per class size" if unit else
               "each bin twice as wide as the one before, so that the size axis is "
               "logarithmic and every bin has the same width on it")
    mark = f" The dashed line marks {_e(marker[1])}." if marker else ""
    return (f'<p class="caption">{_num(cs["classes"])} classes of the released (not suppressed) '
            f"records: {_num(cs['records'])} records, sizes {_num(cs['smallest'])} to "
            f"{_num(cs['largest'])}, mean {_num(cs['mean'])}; {binning}.{mark}</p>\n{svg}")


_RISK_ROWS = (("records", "Records"), ("equivalence_classes", "Classes"),
              ("sample_uniques", "Sample uniques"),
              ("sample_uniques_fraction", "Sample uniques (share)"),
              ("prosecutor_highest_risk", "Prosecutor risk, highest"),
              ("prosecutor_lowest_risk", "Prosecutor risk, lowest"),
              ("prosecutor_average_risk", "Prosecutor risk, average"),
              ("marketer_risk", "Marketer risk"))


def _risk_html(risk: dict) -> str:
    levels = risk["levels"]
    n_in = risk["input"]["records"]
    n_out = risk["release"]["records"] if risk["release"] else None
    series = [("input", [lv["input_records"] / n_in for lv in levels])]
    if n_out:
        series.append(("release", [lv["release_records"] / n_out for lv in levels]))
    svg = _bar_chart("Records by prosecutor risk 1/|class|", [lv["label"] for lv in levels],
                     series, xlabel="prosecutor risk of the record", ylabel="share of records",
                     percent=True)
    after = risk["release"] or {}
    rows = [(label, _num(risk["input"][key]), _num(after.get(key))) for key, label in _RISK_ROWS]
    rows += [(f"Records at risk > {t}", _pct(v), _pct(after.get("records_at_risk", {}).get(t)))
             for t, v in risk["input"]["records_at_risk"].items()]
    return "\n".join([
        '<p class="caption">Share of records per risk level, in the input (QIDs as they are) '
        "and in the release (suppressed records left out); journalist risk equals prosecutor "
        "risk without a population table.</p>", svg,
        _table(("Risk summary", "Input", "Release"), rows, numeric=(1, 2))])


def _losses_html(parts: list | None, summary: dict) -> str:
    if parts is None:
        return ("<p>No sensitive attribute: there are no privacy losses to show.</p>"
                if not summary["sensitive"] else "<p>Every record is suppressed.</p>")
    return "\n".join(_attribute_losses_html(pl) for pl in parts)


def _attribute_losses_html(pl: dict) -> str:
    rows = pl["rows"]
    labels = [r["label"] for r in rows]
    tips = [f"rank {r['rank']}, {r['size']} records" for r in rows]
    shown = f"{pl['shown']} of {pl['classes']} classes, largest distribution loss first"
    dist = _bar_chart(f"{pl['sensitive']}: distribution loss per class ({shown})", labels,
                      [("distribution loss", [r["distribution_loss"] for r in rows])],
                      xlabel="class (quasi-identifier values)",
                      ylabel="distribution loss (0 = same as the table)", tips=tips)
    ent = _bar_chart(f"{pl['sensitive']}: entropy loss per class (same classes)", labels,
                     [("entropy loss", [r["entropy_loss"] for r in rows])],
                     xlabel="class (quasi-identifier values)", ylabel="entropy loss (bits)",
                     tips=tips, yfmt=lambda t: f"{t:.3g} bit")
    table = _table(("Rank", "Class (quasi-identifiers)", "Size", "Distribution loss",
                    "Entropy loss (bits)"),
                   [(r["rank"], r["label"], r["size"], _num(r["distribution_loss"]),
                     _num(r["entropy_loss"])) for r in rows], numeric=(0, 2, 3, 4))
    return "\n".join([
        f'<p class="caption">Privacy loss of each released class about '
        f"<b>{_e(pl['sensitive'])}</b> against its distribution over the released records, "
        "in two panels with their own units: distribution loss (Euclidean distance of the "
        "two distributions of shares, no unit) and entropy loss (absolute difference of the "
        "entropies, in bits). Largest: distribution "
        f"{_num(pl['distribution_loss_max'])}, entropy {_num(pl['entropy_loss_max'])} bits."
        "</p>", dist, ent,
        f"<details><summary>The {pl['shown']} classes</summary>{table}</details>"])


def _worst_html(parts: list | None, dominance: list | None = None) -> str:
    if parts is None:
        return "<p>No sensitive attribute (or no released record): nothing to compare.</p>"
    dominance = dominance or [None] * len(parts)
    return "\n".join(_attribute_worst_html(w, d) for w, d in zip(parts, dominance))


def _dominance_html(d: dict) -> str:
    if not d["classes"]:
        return (f"<p>No released class has one value of {_e(d['sensitive'])} in more than "
                f"{_pct(d['threshold'])} of its records.</p>")
    rows = d["rows"]
    more = "" if len(rows) == d["classes"] else f" The {len(rows)} with the largest shares:"
    table = _table(("", "Class (quasi-identifiers)", "Size", f"Most frequent {d['sensitive']}",
                    "Share"),
                   [("\u26a0", r["label"], r["size"], r["value"], _pct(r["share"]))
                    for r in rows], numeric=(2, 4), flags=[True] * len(rows))
    return (f'<p><span class="flag">\u26a0 {_num(d["classes"])} of {_num(d["classes_total"])} '
            f"released classes ({_num(d['records'])} records) have one value of "
            f"{_e(d['sensitive'])} in more than {_pct(d['threshold'])} of their records</span>: "
            "whoever places a person in such a class guesses that value right more often than "
            f"not.{_e(more)}</p>\n{table}")


def _attribute_worst_html(w: dict, dominance: dict | None = None) -> str:
    vals = w["values"]
    svg = _bar_chart(f"{w['sensitive']}: worst class against all released records",
                     [v["value"] for v in vals],
                     [("worst class", [v["class_share"] for v in vals]),
                      ("overall", [v["overall_share"] for v in vals])],
                     xlabel=str(w["sensitive"]), ylabel="share of records", percent=True)
    other = w["other_values"]
    note = (f" {other['values']} further values are left out (class {_pct(other['class_share'])},"
            f" overall {_pct(other['overall_share'])}).") if other["values"] else ""
    top = max((v["class_share"] for v in vals), default=0.0)
    flag = (' <span class="flag">\u26a0 one value holds more than half of this class.</span>'
            if dominance is not None and top > dominance["threshold"] else "")
    return (f'<p class="caption">The class with the largest distribution loss '
            f"({_num(w['distribution_loss'])}; entropy loss {_num(w['entropy_loss'])} bits): "
            f"<b>{_e(w['label'])}</b>, {w['size']} records.{_e(note)}{flag}</p>\n{svg}"
            + ("" if dominance is None else "\n" + _dominance_html(dominance)))


def _attribute_risks_html(ar: dict) -> str:
    rows = ar["rows"]
    top = max((r["distinction"] for r in rows), default=1.0) or 1.0

    def num(v):
        return "-" if v is None else f"{v:.6f}"

    body = ['<div class="scroll"><table><thead><tr><th>Quasi-identifiers</th>'
            "<th>Distinction (input)</th><th>Separation (input)</th>"
            "<th>Distinction (release)</th><th>Separation (release)</th></tr></thead><tbody>"]
    for r in rows:
        bar = f'<span class="bar" style="width:{60 * r["distinction"] / top:.0f}px"></span>'
        body.append(f"<tr><td>{_e(', '.join(r['attributes']))}</td>"
                    f'<td class="n">{bar}{r["distinction"]:.6f}</td>'
                    f'<td class="n">{r["separation"]:.6f}</td>'
                    f'<td class="n">{num(r.get("release_distinction"))}</td>'
                    f'<td class="n">{num(r.get("release_separation"))}</td></tr>')
    body.append("</tbody></table></div>")
    cap = "" if ar["max_size"] == len(ar["quasi_identifiers"]) else \
        (f" Subsets of at most {ar['max_size']} attributes ({ar['computed']} of "
         f"{ar['subsets_total']}).")
    shown = "" if len(rows) == ar["computed"] else f" The first {len(rows)} are shown."
    return (f'<p class="caption">Distinction (distinct value combinations / records) and '
            "separation (share of record pairs that differ) of the quasi-identifier subsets, "
            "in the input and in the release (suppressed records left out), most "
            f"distinguishing in the input first.{_e(cap + shown)}</p>\n"
            f"<details><summary>{_num(len(rows))} quasi-identifier subsets, input and release "
            "side by side</summary>\n" + "\n".join(body) + "\n</details>")


def _lattice_html(lat: dict) -> str:
    if lat["nodes"] is None:
        return "<p>The result holds no node data of the search.</p>"
    sampled = "" if lat["drawn"] == lat["evaluated"] else \
        f" {lat['drawn']} of them are drawn, evenly spread over node ids."
    optimum = ", ".join(f"{q}={v}" for q, v in zip(lat["quasi_identifiers"],
                                                    lat["optimum"]["levels"]))
    return (f'<p class="caption">Nodes checked by the search ({_e(lat["search"])}): '
            f"{_num(lat['evaluated'])} evaluated of {_num(lat['lattice_size'])} in the lattice "
            f"({_num(lat['nodes_checked'])} counted as checked); nodes the search did not "
            "evaluate are not drawn. A node's information loss is known only when it is "
            "anonymous; the others are placed at the metric's lower bound. Optimum (ringed): "
            f"{_e(optimum)}.{_e(sampled)}</p>\n{_lattice_plot(lat)}")


def render_html(report: dict) -> str:
    """The report of :func:`build_report`'s dict as one self-contained HTML page: the common
    sections, then the lattice -- or, for a Mondrian or TDS release, how the records were
    partitioned (:mod:`.partition`)."""
    s = report["summary"]
    if report.get("partitioning") is not None:
        from .partition import partition_bodies

        titles, own = PARTITION_SECTION_TITLES, partition_bodies(report)
    else:
        titles, own = SECTION_TITLES, {"conclusion": _conclusion_html(report),
                                       "summary": _summary_html(s),
                                       "lattice": _lattice_html(report["lattice"])}
    bodies = {
        "class_sizes": _class_sizes_html(report["class_sizes"]),
        "risk": _risk_html(report["risk"]),
        "privacy_losses": _losses_html(report["privacy_losses"], s),
        "worst_class": _worst_html(report["worst_class"], report.get("dominance")),
        "attribute_risks": _attribute_risks_html(report["attribute_risks"]),
        **own,
    }
    sections = [f'<section id="{key}">\n<h2>{_e(title)}</h2>\n{bodies[key]}\n</section>'
                for key, title in titles.items()]
    return _page(report, sections)


def _page(report: dict, sections: list[str]) -> str:
    """The HTML page around the rendered ``sections``."""
    s = report["summary"]
    qids = ", ".join(q["name"] for q in s["quasi_identifiers"])
    source = f"input {s['input']}; " if s.get("input") else ""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(report['title'])}</title>", f"<style>{_CSS}</style>", "</head>",
        "<body><main>", f"<h1>{_e(report['title'])}</h1>",
        f'<p class="meta">{_e(report["generator"])}, {_e(report["created"])}; {_e(source)}'
        f"quasi-identifiers: {_e(qids)}</p>", *sections, "</main></body>", "</html>", ""])


def _path(value, name: str) -> Path:
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file path (str or os.PathLike), got "
                        f"{type(value).__name__}")
    if str(value) == "":
        raise ValueError(f"{name} must be a file path, got an empty string")
    return Path(value)


def write_report(result: AnonymizationResult, data: pd.DataFrame, path, *, json_path=None,
                 **options) -> tuple[Path, Path]:
    """Write the HTML report to ``path`` and its JSON twin to ``json_path`` (default: ``path``
    with the suffix ``.json``), checked before any work and replaced together (see
    :class:`gpuppdp.io.OutputPlan`); ``options`` go to :func:`build_report`.  ``result``: an
    ``AnonymizationResult`` or a Mondrian/TDS release.  Returns both paths."""
    html_path = _path(path, "path")
    json_file = html_path.with_suffix(".json") if json_path is None else \
        _path(json_path, "json_path")
    plan = OutputPlan().add("path", html_path).add("json_path", json_file)  # checked first
    report = build_report(result, data, **options)
    with plan.writing() as out:  # both files replaced together, or neither
        Path(out.path("path")).write_text(render_html(report), encoding="utf-8")
        out.write_json("json_path", report, indent=1)
    return html_path, json_file
