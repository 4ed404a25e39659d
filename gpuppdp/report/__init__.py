"""The anonymization report: one self-contained HTML file with plots, and a JSON twin.

:func:`build_report` computes the figures of an :class:`~gpuppdp.anonymizer.AnonymizationResult`
and its input table as plain JSON values; :func:`render_html` draws that dict (hand-written
inline SVG, inline CSS: no script, nothing fetched from elsewhere); :func:`write_report`
writes both files.  The HTML is rendered from the JSON dict alone, so both hold the same
figures.

Sections: summary; class-size distribution of the release; records by risk level and the risk
summary before and after; per-class privacy losses and the sensitive distribution of the worst
class (for each sensitive attribute); distinction and separation of the QID subsets; the lattice
nodes the search evaluated; with ``perturbation``, the measures of perturbed columns against
the original ones (:mod:`.perturbation`).  A Mondrian or TDS release
(:mod:`gpuppdp.algorithms.mondrian`, :mod:`gpuppdp.algorithms.tds`) gets the same sections
computed on its classes, with NCP/GCP as the loss and, in place of the lattice, how the
records were partitioned (:mod:`.partition`).

Modules: :mod:`.figures` (the numbers), :mod:`.svg` (the plots), :mod:`.html` (the page),
:mod:`.text` (escaping and numbers for people), :mod:`.words` (what a release holds),
:mod:`.partition` (Mondrian and TDS), :mod:`.perturbation` (perturbed columns),
:mod:`.compare` (two runs side by side).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..algorithms.mondrian import MondrianRelease
from ..errors import InputError, InputTypeError
from ..io import OutputPlan
from ..words import model_sentence, models_text
from .figures import DOMINANCE_SHARE, lattice_report
from .html import PARTITION_SECTION_TITLES, SECTION_TITLES, lattice_bodies, render_page
from .partition import build_partition_report, partition_bodies
from .perturbation import PERTURBATION_TITLE, checked_measures, perturbation_html
from .words import describe_release, level_samples

if TYPE_CHECKING:
    from ..anonymizer import AnonymizationResult

__all__ = ["build_report", "render_html", "write_report", "SECTION_TITLES",
           "PARTITION_SECTION_TITLES", "describe_release",
           "model_sentence", "models_text", "level_samples", "DOMINANCE_SHARE"]


def build_report(result: AnonymizationResult, data: pd.DataFrame, *, sensitive=None,
                 max_classes: int = 50, max_values: int = 30, max_subsets: int = 255,
                 max_nodes: int = 3000, files: dict | None = None, progress=None,
                 summary: dict | None = None, released: pd.DataFrame | None = None,
                 perturbation: dict | None = None) -> dict:
    """The report's figures as a JSON-ready dict (the JSON twin of the HTML).

    Parameters
    ----------
    result : AnonymizationResult, or a Mondrian or TDS release
        (:class:`~gpuppdp.algorithms.mondrian.MondrianRelease`,
        :class:`~gpuppdp.algorithms.tds.TDSRelease`: the same sections computed on its
        classes, NCP/GCP as the loss, and a section on the partitioning in place of the
        lattice; see :mod:`gpuppdp.report.partition`)
    data : the input table ``result`` was fitted on (for the "before" figures)
    sensitive : str or sequence of str (column names)
        the sensitive attribute(s) of sections 4-5, one part each (default: those the models
        refer to, else the first declared); none declared: those sections are empty
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
    perturbation : the measures of the perturbed columns of ``data`` against the original
        ones (:func:`gpuppdp.perturb.perturbation_measures` with ``columns``, as
        ``PerturbedRelease.measures`` holds them): the report's ``perturbation``, a section
        of tables and bar charts
    """
    measures = None if perturbation is None else checked_measures(perturbation)
    if isinstance(result, MondrianRelease):
        report = build_partition_report(result, data, sensitive=sensitive,
                                        max_classes=max_classes, max_values=max_values,
                                        max_subsets=max_subsets, files=files,
                                        progress=progress, summary=summary, released=released)
    elif summary is not None or released is not None:
        raise InputTypeError("summary= and released= are for Mondrian and TDS releases")
    else:
        report = lattice_report(result, data, sensitive=sensitive, max_classes=max_classes,
                                max_values=max_values, max_subsets=max_subsets,
                                max_nodes=max_nodes, files=files, progress=progress)
    if measures is not None:
        report["perturbation"] = measures
    return report


def render_html(report: dict) -> str:
    """The report of :func:`build_report`'s dict as one self-contained HTML page: the common
    sections, then the lattice -- or, for a Mondrian or TDS release, how the records were
    partitioned (:mod:`.partition`) -- and the perturbed columns' measures when it has
    them."""
    if report.get("partitioning") is not None:
        titles, own = dict(PARTITION_SECTION_TITLES), partition_bodies(report)
    else:
        titles, own = dict(SECTION_TITLES), lattice_bodies(report)
    if report.get("perturbation") is not None:
        titles["perturbation"] = PERTURBATION_TITLE
        own["perturbation"] = perturbation_html(report["perturbation"])
    return render_page(report, titles, own)


def _path(value, name: str) -> Path:
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise InputTypeError(f"{name} must be a file path (str or os.PathLike), got "
                        f"{type(value).__name__}")
    if str(value) == "":
        raise InputError(f"{name} must be a file path, got an empty string")
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
