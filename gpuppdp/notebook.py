"""Notebook display of an anonymization (``AnonymizationResult._repr_html_``): the chosen
level of each quasi-identifier, the loss, the record counts and the models in one table.
The tables of hierarchies and measurements are in :mod:`gpuppdp.display`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .display import html_table
from .words import models_text

if TYPE_CHECKING:
    from .anonymizer import AnonymizationResult

__all__ = ["result_html"]


def result_html(result: AnonymizationResult) -> str:
    """An anonymization in one table: the chosen level of each QID with a sample label, the
    loss and its scale, the record counts, the models in words."""
    s = result.summary()
    hierarchies = result.schema.quasi_identifiers
    rows = []
    for name, level in s["transformation"].items():
        h = hierarchies[name]
        rows.append((name, f"level {level} of {h.height}",
                     ", ".join(str(v) for v in h.labels(level)[:3])))
    facts = [("privacy models", models_text(s["models"])),
             ("information loss", f"{s['information_loss']:.6g} ({s['metric']})"),
             ("records", f"{s['input_rows']:,} in, {s['released_records']:,} released, "
                         f"{s['suppressed_records']:,} suppressed ({result.release.suppression})"),
             ("classes", f"{s['equivalence_classes']:,} (smallest {s['smallest_class']})"),
             ("search", f"{s['search']}, {s['nodes_evaluated']:,} of {s['lattice_size']:,} "
                        f"nodes, {s['seconds']:.3g} s on {s['backend']}")]
    return (html_table(rows, ("quasi-identifier", "generalization", "labels"), "transformation")
            + html_table(facts, caption="result"))
