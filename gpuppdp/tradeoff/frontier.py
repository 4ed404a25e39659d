"""The Pareto frontier of explored nodes (:func:`pareto_mask`) and the page that shows it
(:func:`exploration_html`: self-contained HTML, inline SVG, no script)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..report.html import _CSS, _table
from ..report.svg import _scatter_plot
from ..report.text import _e, _num
from ..words import models_text

if TYPE_CHECKING:
    from .exploration import Exploration

__all__ = ["PARETO", "pareto_mask", "exploration_html"]

#: the Pareto flags: column -> (x axis, y axis), both minimized
PARETO = {"pareto_privacy_utility": ("distribution_privacy_loss_max",
                                     "distribution_utility_loss_mean"),
          "pareto_risk_loss": ("highest_risk", "information_loss")}


def pareto_mask(x, y, eligible=None) -> np.ndarray:
    """Which points are Pareto-optimal when both ``x`` and ``y`` are minimized: no other
    eligible point is at most as large on both axes and smaller on one.  Points with equal
    ``(x, y)`` do not dominate one another (all are kept, or none).  Points not ``eligible``
    (bool mask, default all) or with a NaN are never optimal and dominate nothing.

    One sort by ``(x, y)`` and a cumulative minimum: a point is dominated when a smaller ``x``
    has a ``y`` at most its own, or its own ``x`` a smaller ``y``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = ~np.isnan(x) & ~np.isnan(y)
    if eligible is not None:
        ok &= np.asarray(eligible, dtype=bool)
    out = np.zeros(len(x), dtype=bool)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return out
    idx = idx[np.lexsort((y[idx], x[idx]))]
    xs, ys = x[idx], y[idx]
    first = np.concatenate([[True], xs[1:] != xs[:-1]])  # first (smallest y) of each x
    group = np.cumsum(first) - 1
    group_min = ys[first]
    before = np.concatenate([[np.inf], np.minimum.accumulate(group_min)[:-1]])
    out[idx] = ~((before[group] <= ys) | (ys > group_min[group]))
    return out


_LABELS = {"distribution_privacy_loss_max": "distribution privacy loss (largest class)",
           "distribution_utility_loss_mean": "distribution utility loss (mean over records)",
           "highest_risk": "highest prosecutor risk (1 / smallest class)",
           "information_loss": "information loss"}

#: the figures in each node's hover title and the chosen node's table
_SHOWN = ("classes", "suppressed_records", "information_loss", "highest_risk", "average_risk",
          "records_at_risk", "distribution_privacy_loss_max", "entropy_privacy_loss_max",
          "distribution_utility_loss_mean", "entropy_utility_loss_mean")


def _tips(exp: Exploration) -> list[str]:
    """Hover text per node: its levels, whether anonymous, its figures."""
    nodes = exp.nodes
    levels = nodes[exp.quasi_identifiers].to_numpy()
    anonymous = nodes["anonymous"].to_numpy()
    shown = [c for c in _SHOWN if nodes[c].notna().any()]
    values = nodes[shown].to_numpy(dtype=np.float64)
    head = [", ".join(f"{q}={v}" for q, v in zip(exp.quasi_identifiers, row)) for row in levels]
    return [f"{head[i]}{'' if anonymous[i] else ' (not anonymous)'}\n" + "\n".join(
        f"{c}: {_num(float(v)) if np.isfinite(v) else '-'}" for c, v in zip(shown, values[i]))
        for i in range(len(nodes))]


def exploration_html(exp: Exploration, at: int | None) -> str:
    """The frontier page of ``exp``: a summary, the figures of the chosen node (row ``at`` of
    its nodes), both scatter plots (privacy vs utility loss, risk vs information loss) with
    their frontiers and thresholds, and the frontier nodes in a table."""

    nodes = exp.nodes
    tips = _tips(exp)
    anonymous = nodes["anonymous"].to_numpy()
    plots = []
    for flag, (x_name, y_name) in PARETO.items():
        x, y = nodes[x_name].to_numpy(), nodes[y_name].to_numpy()
        if not (np.isfinite(x) & np.isfinite(y)).any():
            plots.append(f"<p>{_e(flag)}: no node has both {_e(x_name)} and {_e(y_name)} "
                         "(the losses need a sensitive attribute).</p>")
            continue
        lines = [(axis, value, f"{name} = {value:.4g}") for name, value in
                 exp.thresholds.items() for axis, axis_name in (("x", x_name), ("y", y_name))
                 if name == axis_name]
        title = f"{_LABELS[y_name].split(' (')[0]} against {_LABELS[x_name].split(' (')[0]}"
        plots.append(_scatter_plot(title, x, y, xlabel=_LABELS[x_name],
                                   ylabel=_LABELS[y_name], tips=tips, filled=anonymous,
                                   frontier=nodes[flag].to_numpy(), lines=lines, chosen=at))
        front = exp.frontier(flag)
        plots.append(f'<p class="caption">{len(front)} Pareto-optimal node(s) of '
                     f'{int(anonymous.sum())} anonymous (both axes minimized; a point that '
                     "ties another on both axes is kept with it); nodes that are not anonymous "
                     "are drawn as rings where both figures are defined (their information "
                     "loss is not).</p>")
        columns = list(dict.fromkeys((x_name, y_name, "information_loss")))
        rows = [(", ".join(f"{q}={int(r[q])}" for q in exp.quasi_identifiers),
                 *(_num(float(r[c])) for c in columns)) for _, r in front.head(40).iterrows()]
        plots.append(_table(("node", *columns), rows, tuple(range(1, len(columns) + 1))))
    measured = "" if exp.complete else (f" of {exp.summary()['lattice_nodes']:,} (a partial "
                                        "walk: those a heuristic search visited)")
    chosen_part = ""
    if at is not None:
        row = nodes.iloc[at]
        facts = [("node", ", ".join(f"{q}={int(row[q])}" for q in exp.quasi_identifiers)),
                 ("anonymous", "yes" if row["anonymous"] else "no")]
        facts += [(c, _num(float(row[c])) if np.isfinite(row[c]) else "-") for c in _SHOWN]
        chosen_part = "<h2>Chosen node</h2>" + _table(("figure", "value"), facts, (1,))
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Every node measured</title>", f"<style>{_CSS}</style>", "</head>",
        "<body><main>", "<h1>Every node measured: the frontier</h1>",
        f'<p class="meta">{len(nodes):,} nodes{measured}, {int(anonymous.sum()):,} anonymous '
        "under "
        f"{_e(models_text(exp.models))} with at most {exp.suppression_limit:.2%} of the "
        f"records suppressed; {_e(exp.metric)} metric; losses on "
        f"{_e(exp.sensitive or 'no sensitive attribute')}; evaluated in {exp.seconds:.3g} s. "
        "Hover over a point for its levels and figures.</p>",
        chosen_part, "<h2>Frontiers</h2>", *plots, "</main></body>", "</html>", ""])
