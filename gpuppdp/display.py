"""Notebook display: small HTML tables for hierarchies and measurements (``_repr_html_``,
which Jupyter calls), escaped, self-contained, no script.  The anonymization result's table is
in :mod:`gpuppdp.notebook`."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from .hierarchy import Hierarchy

__all__ = ["Measures", "hierarchy_html", "mapping_html", "html_table"]

_STYLE = "border-collapse:collapse;text-align:left"


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape(str(value))


def html_table(rows: Iterable[Sequence], header: tuple | None = None, caption: str = "") -> str:
    """Rows as an HTML table (cells escaped, floats to 6 significant digits)."""
    head = "" if header is None else \
        "<tr>" + "".join(f"<th>{_cell(h)}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f'<table style="{_STYLE}">{cap}{head}{body}</table>'


def _flat(mapping: Mapping, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows += _flat(value, name + ".")
        elif getattr(value, "ndim", 0):  # an array or a table
            rows.append((name, f"{type(value).__name__} of shape {tuple(value.shape)}"))
        elif isinstance(value, (list, tuple)) and len(value) > 8:
            rows.append((name, f"{len(value)} values"))
        else:
            rows.append((name, value))
    return rows


def mapping_html(mapping: Mapping, caption: str = "") -> str:
    """A (nested) mapping as a two-column table, nested keys joined with dots."""
    return html_table(_flat(mapping), ("measure", "value"), caption)


class Measures(dict):
    """The measurements of :func:`gpuppdp.analysis.checker.check` and
    :func:`gpuppdp.analysis.risk.risk_report`: a plain dict that shows as a table in a
    notebook."""

    def __init__(self, values=(), caption: str = "measures"):
        super().__init__(values)
        self.caption = caption

    def _repr_html_(self) -> str:
        return mapping_html(self, self.caption)


def hierarchy_html(hierarchy: Hierarchy, rows: int = 12) -> str:
    """The first ``rows`` leaves of a hierarchy through every level."""
    leaves = hierarchy.leaves
    shown = range(min(rows, len(leaves)))
    body = [[hierarchy.labels(lv)[hierarchy.codes(lv)[i]] for lv in range(hierarchy.height + 1)]
            for i in shown]
    if len(leaves) > rows:
        body.append(["…"] * (hierarchy.height + 1))
    caption = f"{hierarchy.name}: {len(leaves):,} leaves, height {hierarchy.height}"
    return html_table(body, tuple(f"level {lv}" for lv in range(hierarchy.height + 1)), caption)
