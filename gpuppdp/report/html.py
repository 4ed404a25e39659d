"""The report as one self-contained HTML page (inline CSS and SVG, no script): the sections
drawn from :func:`gpuppdp.report.build_report`'s dict alone."""

from __future__ import annotations

from ..words import model_sentence
from .svg import _bar_chart, _lattice_plot
from .text import _count_pct, _e, _names, _num, _pct

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


def _qid_phrase(q: dict, perturbed=()) -> str:
    if q["level"] == 0:
        if q["name"] in perturbed:
            return (f"{q['name']} perturbed (section 9), not generalized (level 0 of "
                    f"{q['max_level']})")
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
    perturbed = perturbed_columns(report)
    out.append(_column_list(s, [_qid_phrase(q, perturbed) for q in s["quasi_identifiers"]],
                            "removed: " + _names(removed, "no identifying column")
                            + (f"; dropped (no role): {_names(dropped)}" if dropped else ""),
                            perturbed))
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


def perturbed_columns(report: dict) -> list[str]:
    """The columns the report's perturbation section measures (none without one)."""
    return list((report.get("perturbation") or {}).get("columns", []))


def _column_list(s: dict, qid_phrases: list[str], removed: str, perturbed=()) -> str:
    """The list of what became of the columns: each QID's phrase, the ``removed`` ones, the
    sensitive and insensitive ones published unchanged or, those in ``perturbed``,
    perturbed."""
    items = [*qid_phrases, removed]
    for key, unchanged, changed in (
            ("sensitive_columns", "published unchanged as sensitive attributes",
             "published perturbed as sensitive attributes (section 9)"),
            ("insensitive_columns", "published unchanged (insensitive)",
             "published perturbed (insensitive; section 9)")):
        names = s.get(key) or []
        kept = [c for c in names if c not in perturbed]
        if kept:
            items.append(f"{unchanged}: {_names(kept)}")
        if len(kept) < len(names):
            items.append(f"{changed}: {_names([c for c in names if c in perturbed])}")
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


def lattice_bodies(report: dict) -> dict[str, str]:
    """The sections of a full-domain generalization's report that a Mondrian or TDS report
    draws otherwise: the conclusion, the summary and the lattice."""
    return {"conclusion": _conclusion_html(report), "summary": _summary_html(report["summary"]),
            "lattice": _lattice_html(report["lattice"])}


def render_page(report: dict, titles: dict, own: dict[str, str]) -> str:
    """:func:`gpuppdp.report.build_report`'s dict as one self-contained HTML page: the
    sections common to every scheme, with ``own`` (the scheme's own sections) in the order
    of ``titles``."""
    s = report["summary"]
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
