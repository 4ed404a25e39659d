"""The HTML page of a synthesis (``gpuppdp synthesize --html``): the privacy spent, the tree,
and the evaluation of :func:`gpuppdp.dp.synthesis_eval.evaluate_synthetic` (self-contained:
inline CSS and SVG, no script)."""

from __future__ import annotations

from .html import _CSS, _table
from .svg import _bar_chart
from .text import _e

__all__ = ["synthesis_html"]


def _privacy_rows(summary: dict) -> list:
    p = summary["privacy"]
    rows = [("rho (zCDP) spent", f"{p['rho']:.6g}"), ("support delta", f"{p['delta_trunc']:.3g}")]
    if p.get("epsilon") is not None:
        rows.append(("(epsilon, delta)", f"({p['epsilon']:.6g}, {p['delta']:.3g})"))
    rows.append(("1-way noise sigma", f"{p['one_way']['sigma']:.4g}"))
    if p.get("two_way"):
        rows.append(("2-way noise sigma", f"{p['two_way']['sigma']:.4g}"))
        rows.append(("selection epsilon per step",
                     f"{p['selection']['epsilon_per_step']:.4g} x {p['selection']['steps']}"))
    return rows


def synthesis_html(summary: dict) -> str:
    """The page of a ``synthesize --json`` summary (with ``evaluation`` when evaluated)."""
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>Synthetic data (MST)</title>", f"<style>{_CSS}</style>", "</head>",
             "<body><main>", "<h1>Synthetic data (MST)</h1>",
             f'<p class="meta">input {_e(summary["input"])}; {summary["rows"]} synthetic '
             f'records written to {_e(summary["output"])}; columns '
             f'{_e(", ".join(summary["columns"]))}</p>',
             "<h2>1. Privacy spent</h2>", _table(["", "value"], _privacy_rows(summary)),
             "<h2>2. The tree of measured 2-way marginals</h2>",
             _table(["column", "column"], [tuple(e) for e in summary["edges"]])]
    ev = summary.get("evaluation")
    if ev:
        rows = [("mean 1-way total variation", f"{ev['one_way']['mean']:.4f}"),
                ("max 1-way total variation", f"{ev['one_way']['max']:.4f}")]
        if ev.get("two_way"):
            rows += [("mean 2-way total variation", f"{ev['two_way']['mean']:.4f}"),
                     ("max 2-way total variation", f"{ev['two_way']['max']:.4f}")]
        if ev.get("queries"):
            rows.append((f"random {ev['queries']['columns']}-way counting queries: mean / max "
                         "absolute error of the share", f"{ev['queries']['mean_abs_error']:.4f}"
                         f" / {ev['queries']['max_abs_error']:.4f}"))
        if ev.get("propensity"):
            rows.append(("propensity score (0: indistinguishable, 0.25: told apart)",
                         f"{ev['propensity']['propensity_score']:.4f}"))
        cr = ev["closest_record"]
        rows += [("synthetic records identical to a real one",
                  f"{100 * cr['identical_share']:.2f} %"),
                 ("median Hamming distance to the closest real record",
                  f"{cr['hamming_quantiles'][50]:g}")]
        one = ev["one_way"]["per_clique"]
        parts += ["<h2>3. Utility and closeness</h2>", _table(["measure", "value"], rows),
                  _bar_chart("1-way total variation per column", list(one),
                             [("TV", list(one.values()))], xlabel="column",
                             ylabel="total variation")]
        if ev.get("two_way"):
            worst = sorted(ev["two_way"]["per_clique"].items(), key=lambda kv: -kv[1])[:12]
            parts.append(_bar_chart("2-way total variation: the 12 worst pairs",
                                    [k for k, _ in worst], [("TV", [v for _, v in worst])],
                                    xlabel="pair of columns", ylabel="total variation"))
        parts.append('<p class="caption">The evaluation reads the real data without noise: '
                     "it is for the data's owner, not for publication.</p>")
    parts += ["</main></body>", "</html>", ""]
    return "\n".join(parts)
