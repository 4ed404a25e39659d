"""Plain words for people: the privacy models as sentences (:func:`model_sentence`,
:func:`models_text`) and what a release holds (:func:`describe_release`: files, columns by
role, each quasi-identifier's level with sample labels).

:func:`model_sentence` and :func:`models_text` need only the standard library, so that error
messages (``no transformation satisfies ...``) can use them without loading the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..anonymizer import AnonymizationResult

__all__ = ["model_sentence", "models_text", "describe_release", "level_samples"]


def _n(value) -> str:
    """A parameter as written: ``0.2``, ``5``, ``60 %`` is left to the caller."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def model_sentence(model: dict, *, explain: bool = False) -> str:
    """One model of ``PrivacyModel.describe()`` in words, e.g. ``k-anonymity with k = 5``;
    with ``explain`` followed by what it guarantees, in parentheses."""
    name = model.get("model", "privacy model")
    a = model.get("attribute")
    g = model.get

    def on(text):  # "<model> of <attribute> with <parameters>"
        if not a:
            return text
        head, sep, tail = text.partition(" with ")
        return f"{head} of {a}{sep}{tail}"

    if name == "k-anonymity":
        text, why = f"k-anonymity with k = {g('k')}", (
            f"every released record shares its quasi-identifier values with at least "
            f"{int(g('k')) - 1} other record(s)")
    elif name == "k-anonymity-on-subsets":
        sets = "; ".join(", ".join(s) for s in g("subsets", []))
        text, why = f"k-anonymity with k = {g('k')} on the quasi-identifier sets {sets}", (
            f"the values of each set are shared by at least {g('k')} records")
    elif name == "distinct-l-diversity":
        text, why = on(f"distinct l-diversity with l = {_n(g('l'))}"), (
            f"every class holds at least {_n(g('l'))} different values of {a}")
    elif name == "entropy-l-diversity":
        text, why = on(f"entropy l-diversity with l = {_n(g('l'))}"), (
            f"the values of {a} in every class are at least as spread as {_n(g('l'))} equally "
            "frequent values")
    elif name == "recursive-cl-diversity":
        text, why = on(f"recursive (c, l)-diversity with c = {_n(g('c'))}, l = {_n(g('l'))}"), (
            f"in every class the most frequent value of {a} is rarer than c times the rest "
            "after the l - 1 most frequent")
    elif name == "t-closeness":
        text, why = on(f"t-closeness ({g('distance')} distance) with t = {_n(g('t'))}"), (
            f"the distribution of {a} in every class is within {_n(g('t'))} of the whole "
            "table's")
    elif name == "alpha-k-anonymity":
        value = f" '{g('value')}'" if g("value") is not None else ""
        text, why = on(f"(alpha, k)-anonymity with alpha = {_n(g('alpha'))}, k = {g('k')}"), (
            f"classes of at least {g('k')} records in which no value{value} of {a} exceeds a "
            f"share of {_n(g('alpha'))}")
    elif name == "delta-disclosure":
        text, why = on(f"delta-disclosure privacy with delta = {_n(g('delta'))}"), (
            f"the share of each value of {a} in a class differs from the whole table's by at "
            f"most a factor of 2^{_n(g('delta'))}")
    elif name in ("basic-beta-likeness", "enhanced-beta-likeness"):
        kind = name.split("-")[0]
        text, why = on(f"{kind} beta-likeness with beta = {_n(g('beta'))}"), (
            f"no value of {a} is more than {_n(g('beta'))} times (relatively) more frequent "
            "in a class than in the whole table")
    elif name == "privacy-loss":
        text, why = on(f"the privacy-loss model with epsilon = {_n(g('epsilon'))}, alpha = "
                       f"{_n(g('alpha'))} bits"), (
            f"what a class reveals about {a} beyond the whole table's distribution is bounded")
    elif name == "lkc-privacy":
        values = g("sensitive_values")
        which = f"the values {', '.join(map(str, values))}" if values else "any value"
        text = f"LKC-privacy with L = {g('L')}, K = {g('K')}, C = {_n(g('C'))}" + (
            f" on {a}" if a else "")
        why = (f"any combination of at most {g('L')} quasi-identifier values is shared by at "
               f"least {g('K')} records" + (f", and {which} of {a} has a share of at most "
                                            f"{_n(g('C'))} among them" if a else ""))
    elif name == "k-map":
        text, why = f"k-map with k = {g('k')}", (
            f"every released class matches at least {g('k')} records of the population "
            f"({g('population_rows')} rows)")
    elif name == "delta-presence":
        text, why = (f"delta-presence with {_n(g('delta_min'))} <= delta <= "
                     f"{_n(g('delta_max'))}"), (
            "the share of the population behind each released class that is in the table "
            "stays within these bounds")
    else:
        params = ", ".join(f"{k} = {v}" for k, v in model.items() if k != "model")
        text, why = (f"{name} ({params})" if params else str(name)), ""
    return f"{text} ({why})" if explain and why else text


def models_text(models) -> str:
    """Several models in words, joined by commas and ``and``."""
    parts = [model_sentence(m) for m in models]
    if len(parts) <= 1:
        return "".join(parts) or "no privacy model"
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def level_samples(hierarchy, value=None) -> list[dict]:
    """One value through every level of ``hierarchy``: ``[{"level": L, "sample": label}]``,
    for ``value`` (a leaf; default, or when not a leaf: the first leaf)."""
    import numpy as np

    leaves = hierarchy.leaves
    at = np.flatnonzero(leaves == str(value)) if value is not None else []
    leaf = int(at[0]) if len(at) else 0
    return [{"level": lv, "sample": str(hierarchy.labels(lv)[hierarchy.codes(lv)[leaf]])}
            for lv in range(hierarchy.height + 1)]


def _value_counts(result: AnonymizationResult) -> tuple[list, list]:
    """Per QID: the number of input records holding each leaf, and of released (not
    suppressed) records holding each label of the optimum's level -- from the bottom
    frequency set and the optimum's classes, so that a release written chunk by chunk is
    described as one held in memory.  Counted where the frequency sets are (on the device
    for a GPU backend, :func:`gpuppdp.kernels.marginal_counts`): only the per-label counts
    travel to the host."""
    import numpy as np

    from .. import kernels

    evaluator = result._evaluator
    enc, be = evaluator.encoded, evaluator.backend
    levels = np.array(list(result.transformation.values()), dtype=np.int64)
    bottom = enc.frequency_set()
    classes, outlier = evaluator.node_classes(levels)
    kept = ~outlier.astype(bool)
    leaf = kernels.marginal_counts(be, bottom.codes, bottom.count,
                                   [len(h.leaves) for h in enc.hierarchies])
    released = kernels.marginal_counts(be, classes.codes[kept], classes.size[kept],
                                       [len(h.labels(int(lv)))
                                        for h, lv in zip(enc.hierarchies, levels)])
    return leaf, released


def describe_release(result: AnonymizationResult, files: dict | None = None, *,
                     samples: int = 3) -> dict:
    """What a release holds, as JSON values.

    ``files`` (optional) names the files: ``input``, ``output``, ``hierarchies`` (QID ->
    path), ``sensitive_hierarchies``, ``population``; they are copied as given.  Returns
    ``files`` and ``input``/``output``; ``quasi_identifiers``: per QID ``name``, ``level``,
    ``max_level``, ``hierarchy`` (its file, if given), ``labels`` (up to ``samples`` released
    labels, most frequent first, suppressed records left out) and ``levels`` (the input's
    most frequent value through every level, ``[{"level", "sample"}]``); the columns by role:
    ``identifying_columns``, ``dropped_columns`` (no role, ``others="drop"``),
    ``removed_columns`` (both), ``insensitive_columns``, ``sensitive_columns``.
    """
    import numpy as np

    from ..engine.encoding import Role

    files = {k: v for k, v in dict(files or {}).items() if v is not None}
    schema = result._anonymizer.schema
    roles = result._evaluator.encoded.roles
    columns = list(roles)
    hierarchy_files = {str(k): str(v) for k, v in (files.get("hierarchies") or {}).items()}
    leaf_counts, released_counts = _value_counts(result)
    qids = []
    for j, (name, level) in enumerate(result.transformation.items()):
        h = schema.quasi_identifiers[name]
        mode = h.leaves[int(np.argmax(leaf_counts[j]))] if leaf_counts[j].sum() else None
        ranked = np.argsort(-released_counts[j], kind="stable")
        labels = [str(h.labels(int(level))[c]) for c in ranked[:samples]
                  if released_counts[j][c] > 0]
        qids.append({"name": name, "level": int(level), "max_level": int(h.height),
                     "hierarchy": hierarchy_files.get(name), "labels": labels,
                     "levels": level_samples(h, mode)})

    def having(role):
        return [c for c in columns if roles[c] == role]

    identifying = having(Role.IDENTIFYING)
    dropped = [c for c in columns if roles[c] is None]
    return {"files": {k: (dict(v) if isinstance(v, dict) else str(v)) for k, v in files.items()},
            "input": None if "input" not in files else str(files["input"]),
            "output": None if "output" not in files else str(files["output"]),
            "quasi_identifiers": qids, "identifying_columns": identifying,
            "dropped_columns": dropped, "removed_columns": identifying + dropped,
            "insensitive_columns": having(Role.INSENSITIVE),
            "sensitive_columns": having(Role.SENSITIVE)}
