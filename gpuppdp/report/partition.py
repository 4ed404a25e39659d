"""The report of a Mondrian or TDS release (:mod:`gpuppdp.algorithms.mondrian`,
:mod:`gpuppdp.algorithms.tds`).

The figures are those of a full-domain report, computed on the released classes (class
sizes, risk before and after, privacy losses, the worst class, QID subsets): see
:func:`gpuppdp.report.build_report`, which hands such releases to
:func:`build_partition_report`.  What only a lattice node has -- one generalization level per
QID, the lattice the search walked, the loss metric of the search -- is not shown: each class
has its own ranges or hierarchy nodes, so the summary gives per QID how it was released and
its NCP, the loss is the NCP/GCP (Xu et al., KDD 2006; Ghinita et al., VLDB 2007), and the
last section says how the records were partitioned (Mondrian's rounds and partitions, or
TDS's specializations and final cut).  Mondrian and TDS suppress no record.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

from .. import __version__
from ..backend import get_backend
from ..errors import InputError
from ..io import jsonable
from ..progress import Steps
from ..validation import check_frame, check_int
from ..words import model_sentence
from .figures import _release_figures
from .html import _attacker_learns, _column_list, _summary_tables, _table, perturbed_columns
from .text import _count_pct, _e, _names, _num, _pct

__all__ = ["build_partition_report", "partition_bodies", "TOP_AS_RELEASED",
           "MAX_STEPS"]

#: the label under which records released at the root of every QID are measured (the
#: checker, like ARX, reads rows of ``*`` only as suppressed; sibling TDS can release some)
TOP_AS_RELEASED = "*(released)"
#: specializations listed in the TDS section
MAX_STEPS = 100

_NAMES = {"mondrian": "Mondrian multidimensional partitioning",
          "tds": "top-down specialization (TDS)", "hdtds": "top-down specialization (HDTDS)"}


def _as_released(released: pd.DataFrame, qids) -> pd.DataFrame:
    """The released table with the QIDs as strings and rows of ``*`` on every QID relabelled
    :data:`TOP_AS_RELEASED` on the first QID (they are released records here)."""
    kept = released.copy()
    top = np.ones(len(kept), dtype=bool)
    for q in qids:
        kept[q] = kept[q].astype(str)
        top &= (kept[q] == "*").to_numpy()
    if top.any():
        kept.loc[top, qids[0]] = TOP_AS_RELEASED
    return kept


def _release_models(release) -> list[dict]:
    """The models a release was made for, as ``PrivacyModel.describe()`` writes them."""
    out = []
    lkc = getattr(release, "lkc", None)
    k = getattr(release, "k_anonymity", release.k) if hasattr(release, "lkc") else release.k
    if k is not None:
        out.append({"model": "k-anonymity", "k": int(k)})
    if getattr(release, "l", None) is not None:
        out.append({"model": "distinct-l-diversity", "l": int(release.l),
                    "attribute": release.sensitive})
    if lkc is not None:
        model = {"model": "lkc-privacy", "L": int(lkc[0]), "K": int(lkc[1]), "C": lkc[2]}
        if release.sensitive is not None:
            model["attribute"] = release.sensitive
        if len(lkc) > 3:
            model["sensitive_values"] = list(lkc[3])
        out.append(model)
    return out


def _qid_entries(release, data: pd.DataFrame, kept: pd.DataFrame, files: dict) -> list[dict]:
    hierarchy_files = {str(k): str(v) for k, v in (files.get("hierarchies") or {}).items()
                       if v}
    out = []
    for q in release.quasi_identifiers:
        h = release.hierarchies.get(q)
        counts = kept[q].value_counts(sort=True)
        out.append({"name": q, "level": None, "numeric": h is None,
                    "max_level": None if h is None else int(h.height),
                    "hierarchy": hierarchy_files.get(q),
                    "labels": [str(v) for v in counts.index[:3]],
                    "released_values": int(len(counts)),
                    "input_values": int(data[q].nunique()),
                    "ncp": float(release.ncp[q])})
    return out


def _partitioning(release, details: dict) -> dict:
    out = {"algorithm": details["algorithm"], "partitions": int(release.partitions),
           "rounds": details.get("rounds"), "mode": details.get("mode")}
    if hasattr(release, "history"):
        out.update(generalization=details.get("generalization", "subtree"),
                   specializations=int(release.specializations),
                   target=release.target,
                   cut={q: [str(v) for v in vals] for q, vals in release.cut.items()},
                   steps=[{"attribute": h["attribute"], "value": h["value"],
                           "children": list(h["children"]),
                           "kind": h.get("kind", "subtree"), "info_gain": h["info_gain"],
                           "priv_loss": h["priv_loss"], "score": h["score"]}
                          for h in release.history[:MAX_STEPS]])
    return out


def build_partition_report(release, data: pd.DataFrame, *, sensitive=None,
                           max_classes: int = 50, max_values: int = 30,
                           max_subsets: int = 255, files: dict | None = None, progress=None,
                           summary: dict | None = None,
                           released: pd.DataFrame | None = None) -> dict:
    """The report's figures (JSON-ready) of a Mondrian or TDS ``release`` of ``data``.

    ``released``: the table as published (default ``release.released``: input order, every
    column); ``summary``: the run's summary (``gpuppdp anonymize --json``: files, column
    roles, models), whose keys are kept where the report has no figure of its own;
    ``sensitive``: the sensitive attribute(s) of the privacy-loss sections (default: the
    release's, else the summary's first).  The other options are
    :func:`gpuppdp.report.build_report`'s."""
    step = Steps(progress, 4)
    check_frame("data", data)
    max_classes = check_int("max_classes", max_classes, 1)
    max_values = check_int("max_values", max_values, 1)
    max_subsets = check_int("max_subsets", max_subsets, 1)
    qids = list(release.quasi_identifiers)
    released = release.released if released is None else released
    check_frame("released", released)
    n = len(release.partition)
    missing = [q for q in qids if q not in data.columns or q not in released.columns]
    if missing or len(data) != n or len(released) != n:
        raise InputError(f"data and released must be the table the release was made of and "
                         f"the release ({n} rows with columns {qids}); got {len(data)} and "
                         f"{len(released)} rows" + (f", {missing} missing" if missing else ""))
    s = dict(summary or {})
    files = dict(files or s.get("files") or {})
    if sensitive is not None:
        sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    elif release.sensitive is not None:
        sens = [release.sensitive]
    else:
        sens = list(s.get("sensitive_columns") or [])[:1]
    absent = [c for c in sens if c not in released.columns]
    if absent:
        raise InputError(f"sensitive: {absent[0]!r} is not a column of the release")
    backend = get_backend("cpu")
    kept = _as_released(released, qids)

    details = jsonable(release.summary())
    details.pop("cut", None)
    models = s.get("models") or _release_models(release)
    k_models = [int(m["k"]) for m in models if m.get("model") == "k-anonymity"]
    smallest_allowed = max(k_models) if k_models else None   # LKC bounds subsets only
    named = set(qids) | set(sens)
    others = [c for c in released.columns if c not in named]
    s.update(
        algorithm=s.get("algorithm") or ("tds" if hasattr(release, "history") else "mondrian"),
        scheme=details["algorithm"], details=details,
        input_rows=int(len(data)), released_records=int(len(released)),
        suppressed_records=0, rows_in_release=int(len(released)), suppression_limit=0.0,
        ncp=dict(release.ncp), gcp=float(release.gcp), models=models,
        quasi_identifiers=_qid_entries(release, data, kept, files),
        sensitive=sens, files=files, input=files.get("input"), output=files.get("output"),
        transformation=None)
    s.setdefault("sensitive_columns", sens)
    s.setdefault("insensitive_columns", others)
    for key in ("identifying_columns", "dropped_columns", "removed_columns"):
        s.setdefault(key, [])
    s.setdefault("seconds", release.seconds)

    figures = _release_figures(data, kept, qids, sens, backend, step,
                               smallest_allowed=smallest_allowed,
                               k=max(k_models) if k_models else None, max_classes=max_classes,
                               max_values=max_values, max_subsets=max_subsets)
    sizes = figures["class_sizes"]
    s.update(equivalence_classes=sizes["classes"], smallest_class=sizes["smallest"],
             average_class_size=sizes["mean"])
    report = {"title": "Anonymization report", "generator": f"gpuppdp {__version__}",
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "summary": s, **figures, "lattice": None,
              "partitioning": _partitioning(release, details)}
    step()
    return jsonable(report)


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

def _name(s: dict) -> str:
    name = _NAMES.get(str(s.get("scheme")), str(s["algorithm"]))  # both set by the summary
    d = s.get("details") or {}
    if d.get("mode"):
        name += f", {d['mode']}"
    if d.get("generalization"):
        name += f", {d['generalization']} generalization"
    return name


def _qid_phrase(q: dict) -> str:
    like = ", ".join(f"\u201c{v}\u201d" for v in q.get("labels", [])[:3])
    how = ("released as ranges of its values" if q["numeric"] else
           "released as nodes of its hierarchy, each class at its own node")
    return (f"{q['name']} {how} ({q['released_values']} released values for "
            f"{q['input_values']} in the input" + (f", like {like}" if like else "")
            + f"; NCP {q['ncp']:.4g})")


def _loss_text(s: dict) -> str:
    return (f"GCP {s['gcp']:.4g} (the normalized certainty penalty averaged over records and "
            "quasi-identifiers: 0 = every value as in the input, 1 = every value fully "
            "generalized)")


def _conclusion_html(report: dict) -> str:
    s, risk = report["summary"], report["risk"]
    n = s["input_rows"]
    source = f"<code>{_e(s['input'])}</code>" if s.get("input") else "The input table"
    target = f" as <code>{_e(s['output'])}</code>" if s.get("output") else ""
    out = [f"<p><b>What was released.</b> {source} ({_num(n)} records) was released{target} "
           f"by {_e(_name(s))}: {_count_pct(s['released_records'], n)} records are "
           "published, none suppressed (the scheme generalizes every record instead).</p>"]
    out.append(_column_list(s, [_qid_phrase(q) for q in s["quasi_identifiers"]],
                            "removed: " + _names(s.get("removed_columns") or [], "no column"),
                            perturbed_columns(report)))
    out.append("<p><b>Guarantees</b> (hold for every published record):</p><ul>" + "".join(
        f"<li>{_e(model_sentence(m, explain=True))}</li>" for m in s["models"]) + "</ul>")
    after, before = risk["release"], risk["input"]
    qids = _names([q["name"] for q in s["quasi_identifiers"]])
    smallest = round(1 / after["prosecutor_highest_risk"])
    out.append(
        f"<p><b>Re-identification risk.</b> An attacker who knows a person's {_e(qids)} and "
        "that the person is in the table can narrow the person down to one released class; "
        f"the chance of picking the right record is at most "
        f"<b>{_pct(after['prosecutor_highest_risk'])}</b> (1 in {_num(smallest)}) and "
        f"<b>{_pct(after['prosecutor_average_risk'])}</b> on average (input: highest "
        f"{_pct(before['prosecutor_highest_risk'])}, average "
        f"{_pct(before['prosecutor_average_risk'])}).</p>")
    for w, d in zip(report.get("worst_class") or [], report.get("dominance") or []):
        out.append(_attacker_learns(w) + (
            f"{_num(d['classes'])} of {_num(d['classes_total'])} classes have one value in "
            f"more than {_pct(d['threshold'])} of their records.</p>"))
    out.append(f"<p><b>Information lost.</b> {_e(_loss_text(s))}; no record suppressed.</p>")
    return "\n".join(out)


def _summary_html(s: dict) -> str:
    n = s["input_rows"]
    d = s.get("details") or {}
    steps = (f"{_num(d['specializations'])} specializations" if "specializations" in d else
             f"{_num(d.get('rounds'))} rounds")
    rows = [
        ("Algorithm", _name(s)),
        ("Input records", _num(n)),
        ("Records published", _count_pct(s["released_records"], n)),
        ("Records suppressed", "0 (Mondrian and TDS suppress no record)"),
        ("Rows in the released table", _num(s["rows_in_release"])),
        ("Equivalence classes", f"{_num(s['equivalence_classes'])} (smallest "
                                f"{_num(s['smallest_class'])}, average "
                                f"{_num(s['average_class_size'])}; "
                                f"{_num(d.get('partitions'))} partitions)"),
        ("Information loss", _loss_text(s)),
        ("Steps", steps),
        ("Time", f"{s['seconds']:.3f} s" if isinstance(s.get("seconds"), (int, float))
         else "-"),
    ]
    qrows = [(q["name"], "numeric: ranges" if q["numeric"] else
              f"hierarchy of height {q['max_level']}", f"{q['ncp']:.4g}",
              f"{q['released_values']} (input {q['input_values']})",
              ", ".join(q["labels"]) or "-") for q in s["quasi_identifiers"]]
    return _summary_tables(s, rows, [
        "<h3>Quasi-identifiers</h3>",
        '<p class="caption">Each class has its own ranges or hierarchy nodes, so there is no '
        "single generalization level per quasi-identifier. NCP: mean over the records of the "
        "released value's share of the domain (a range's width over the column's, a node's "
        "leaves - 1 over the hierarchy's leaves - 1).</p>",
        _table(("Quasi-identifier", "Released as", "NCP", "Distinct values",
                "Released values (most frequent)"), qrows, numeric=(2,))])


def _partitioning_html(p: dict) -> str:
    if "steps" not in p:
        return (f"<p>Mondrian ({_e(p.get('mode'))}) cut the table top-down in "
                f"{_num(p.get('rounds'))} rounds, each partition along the quasi-identifier of "
                "widest normalized range (numeric at the median, categorical into the "
                f"children of its values' common ancestor), into {_num(p['partitions'])} "
                "partitions (partitions with equal released values form one class). There is "
                "no lattice: each partition is generalized on its own.</p>")
    steps = p["steps"]
    intro = (f"<p>Top-down specialization ({_e(p['algorithm'].upper())}, "
             f"{_e(p['generalization'])} generalization) started from the top cut and "
             f"performed {_num(p['specializations'])} specializations"
             + (f", scored by the information gain about {_e(p['target'])}"
                if p.get("target") else ", scored by the information gain about the "
                "quasi-identifiers' own values")
             + f"; {_num(p['partitions'])} classes. There is no lattice: the release is the "
             "final cut below" + (" (a value next to some of its own children stands for the "
                                  "children not released on their own)"
                                  if p["generalization"] == "sibling" else "") + ".</p>")
    cut = _table(("Quasi-identifier", "Values of the final cut"),
                 [(q, ", ".join(v[:30]) + (f", \u2026 ({len(v)} in all)" if len(v) > 30 else ""))
                  for q, v in p["cut"].items()])
    rows = [(i + 1, h["attribute"], h["value"], ", ".join(h["children"]), h["kind"],
             _num(h["info_gain"]), _num(h["priv_loss"]), _num(h["score"]))
            for i, h in enumerate(steps)]
    more = "" if len(steps) == p["specializations"] else f" (the first {len(steps)})"
    table = _table(("#", "Attribute", "Value", "Into", "Kind", "InfoGain", "PrivLoss",
                    "Score"), rows, numeric=(0, 5, 6, 7))
    return "\n".join([intro, cut, f"<details><summary>The specializations{_e(more)}"
                      f"</summary>{table}</details>"])


def partition_bodies(report: dict) -> dict[str, str]:
    """The sections of a Mondrian or TDS report that differ from a lattice node's: the
    conclusion, the summary and how the records were partitioned (the others are shared,
    :func:`gpuppdp.report.render_html`)."""
    return {"conclusion": _conclusion_html(report), "summary": _summary_html(report["summary"]),
            "partitioning": _partitioning_html(report["partitioning"])}
