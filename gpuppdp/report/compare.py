"""Two configurations side by side: :func:`compare` reads two JSON files written by
``gpuppdp report`` (the report's JSON twin) or ``gpuppdp anonymize --json`` (the run's
summary) and lines up what a data steward weighs (files, transformation, guarantees, records
released and suppressed, information loss, risk); :func:`render_compare_html` draws it as one
self-contained page (no script, nothing fetched)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..words import model_sentence
from .html import _CSS
from .text import _e

__all__ = ["compare", "load_run", "render_compare_html"]


def load_run(path) -> dict:
    """A report twin or a run summary as ``{"summary": ..., "risk": ..., ...}`` (a bare
    summary gets ``risk`` None)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"--compare: file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"--compare: {path} is not a JSON file ({exc})") from None
    if not isinstance(doc, dict):
        raise InputError(f"--compare: {path} holds no summary")
    if "summary" not in doc:
        doc = {"summary": doc}
    s = doc["summary"]
    if not isinstance(s, dict) or "transformation" not in s or "information_loss" not in s:
        raise InputError(f"--compare: {path} is neither a report's JSON nor an anonymize "
                         "summary (no transformation and information loss)")
    return doc


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.3g} %"


def _num(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.4g}"


def _levels(s: dict) -> dict:
    """QID -> "level of max (sample labels)" from a summary."""
    qids = {q["name"]: q for q in s.get("quasi_identifiers", []) if isinstance(q, dict)}
    out = {}
    for name, level in s["transformation"].items():
        q = qids.get(name, {})
        text = f"{level}" + (f" of {q['max_level']}" if "max_level" in q else "")
        if q.get("labels"):
            text += " (" + ", ".join(q["labels"][:3]) + ")"
        out[name] = text
    return out


def _rows(doc: dict) -> list[tuple[str, str]]:
    s = doc["summary"]
    n = s.get("input_rows")
    sup = s.get("suppressed_records")
    released = s.get("released_records", s.get("released_rows"))
    rows = [("Input", str(s.get("input") or "-")), ("Released table", str(s.get("output") or "-")),
            ("Input records", _num(n)),
            ("Records published", _num(released) + (f" ({_pct(released / n)})"
                                                   if n and released is not None else "")),
            ("Records suppressed", _num(sup) + (f" ({_pct(sup / n)})" if n and sup is not None
                                                else "")),
            ("Suppression limit", _pct(s.get("suppression_limit"))),
            ("Rows in the released table", _num(s.get("rows_in_release"))),
            ("Removed columns", ", ".join(s.get("removed_columns", [])) or "-"),
            ("Privacy models", "; ".join(model_sentence(m) for m in s.get("models", []))),
            ("Information loss", f"{s['information_loss']:.6g} ({s.get('metric', '?')})"
             + (f", {_pct(s['information_loss_relative'])} of the maximum"
                if s.get("information_loss_relative") is not None else "")),
            ("Equivalence classes", _num(s.get("equivalence_classes"))),
            ("Smallest class", _num(s.get("smallest_class"))),
            ("Average class size", _num(s.get("average_class_size")))]
    risk = (doc.get("risk") or {}).get("release")
    if risk:
        rows += [("Highest re-identification risk", _pct(risk["prosecutor_highest_risk"])),
                 ("Average re-identification risk", _pct(risk["prosecutor_average_risk"]))]
        for t, share in sorted(risk.get("records_at_risk", {}).items()):
            if float(t) <= 0.2:
                rows.append((f"Records at risk above {float(t):.0%}", _pct(share)))
    for d in doc.get("dominance") or []:
        rows.append((f"Classes with one {d['sensitive']} value above {_pct(d['threshold'])}",
                     f"{_num(d['classes'])} of {_num(d['classes_total'])} "
                     f"({_num(d['records'])} records)"))
    return rows


def compare(a, b) -> dict:
    """The side-by-side figures of two JSON files (paths): ``names``, ``transformation``
    (QID -> [A, B]) and ``rows`` (``[label, A, B]``; a figure one side lacks is ``-``)."""
    docs = [load_run(a), load_run(b)]
    levels = [_levels(d["summary"]) for d in docs]
    qids = list(dict.fromkeys([*levels[0], *levels[1]]))
    rows = [dict(_rows(d)) for d in docs]
    labels = list(dict.fromkeys([*rows[0], *rows[1]]))
    return {"names": [str(a), str(b)],
            "transformation": {q: [levels[0].get(q, "-"), levels[1].get(q, "-")]
                               for q in qids},
            "rows": [[lab, rows[0].get(lab, "-"), rows[1].get(lab, "-")] for lab in labels]}


def render_compare_html(cmp: dict) -> str:
    """:func:`compare`'s figures as one self-contained HTML page; rows that differ are
    marked."""
    def table(rows):
        out = ['<div class="scroll"><table><thead><tr><th></th>'
               f"<th>A: {_e(cmp['names'][0])}</th><th>B: {_e(cmp['names'][1])}</th>"
               "</tr></thead><tbody>"]
        for label, x, y in rows:
            flag = ' class="flag"' if x != y else ""
            out.append(f"<tr{flag}><td>{_e(label)}</td><td>{_e(x)}</td><td>{_e(y)}</td></tr>")
        out.append("</tbody></table></div>")
        return "\n".join(out)

    transformation = [[q, *v] for q, v in cmp["transformation"].items()]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Two anonymizations compared</title>", f"<style>{_CSS}</style>", "</head>",
        "<body><main>", "<h1>Two anonymizations compared</h1>",
        '<p class="meta">Rows that differ are shaded.</p>',
        '<section id="figures">', "<h2>Release, guarantees and risk</h2>",
        table(cmp["rows"]), "</section>",
        '<section id="transformation">', "<h2>Transformation: level of the highest, and the "
        "most frequent released values</h2>", table(transformation), "</section>",
        "</main></body>", "</html>", ""])
