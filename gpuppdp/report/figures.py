"""The report's figures as plain JSON values (:func:`lattice_report`, the numbers behind the
HTML): class sizes, records by risk level, per-class privacy losses, dominant sensitive
values, distinction and separation of the QID subsets, the lattice nodes the search
evaluated."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import __version__
from ..analysis.checker import check
from ..analysis.risk import RISK_THRESHOLDS, attribute_risks, class_sizes, sample_risk_summary
from ..engine.transform import suppressed_rows
from ..errors import InputError, InputTypeError
from ..io import jsonable
from ..progress import Steps
from ..validation import check_frame, check_int
from .words import describe_release

if TYPE_CHECKING:
    from ..anonymizer import AnonymizationResult

#: a released class in which one sensitive value holds more than this share is flagged
DOMINANCE_SHARE = 0.5


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
    declared = list(result.schema.sensitive)
    if sensitive is not None:
        wanted = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        for name in wanted:
            if name not in declared:
                raise InputError(f"sensitive: {name!r} is not a sensitive attribute of this "
                                 f"anonymization (declared: {declared or 'none'})")
        return wanted
    referred = {m.sensitive_attribute for m in result.privacy_models}
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
    heights = result.schema.quasi_identifiers
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


def lattice_report(result: AnonymizationResult, data: pd.DataFrame, *, sensitive=None,
                   max_classes: int = 50, max_values: int = 30, max_subsets: int = 255,
                   max_nodes: int = 3000, files: dict | None = None, progress=None) -> dict:
    """The report's figures of a full-domain generalization as a JSON-ready dict (the JSON
    twin of the HTML); the parameters are :func:`gpuppdp.report.build_report`'s."""
    step = Steps(progress, 4)

    if not all(hasattr(result, a) for a in ("release", "transformation", "search")):
        raise InputTypeError(f"result must be an AnonymizationResult (or a Mondrian or TDS "
                             f"release), got {type(result).__name__}")
    if result._evaluator is None:
        raise InputError("this result was unpickled and holds no encoded table: write the "
                         "report from the result Anonymizer.fit returns")
    check_frame("data", data)
    max_classes = check_int("max_classes", max_classes, 1)
    max_values = check_int("max_values", max_values, 1)
    max_subsets = check_int("max_subsets", max_subsets, 1)
    max_nodes = check_int("max_nodes", max_nodes, 1)
    qids = list(result.transformation)
    missing = [q for q in qids if q not in data.columns]
    if missing or len(data) != result.release.input_rows:
        raise InputError(f"data must be the table the result was fitted on "
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
    sizes_allowed: list[int] = [size for m in result.privacy_models
                                if (size := getattr(m, "min_class_size", None))]
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
    return jsonable(report)
