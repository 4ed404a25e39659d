"""What a release holds, in words and JSON values (:func:`describe_release`: files, columns
by role, each quasi-identifier's level with sample labels; :func:`level_samples`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import kernels
from ..engine.encoding import Role

if TYPE_CHECKING:
    from ..anonymizer import AnonymizationResult

__all__ = ["describe_release", "level_samples"]


def level_samples(hierarchy, value=None) -> list[dict]:
    """One value through every level of ``hierarchy``: ``[{"level": L, "sample": label}]``,
    for ``value`` (a leaf; default, or when not a leaf: the first leaf)."""
    leaves = hierarchy.leaves
    at = np.flatnonzero(leaves == str(value)) if value is not None else np.empty(0, np.intp)
    leaf = int(at[0]) if len(at) else 0
    return [{"level": lv, "sample": str(hierarchy.labels(lv)[hierarchy.codes(lv)[leaf]])}
            for lv in range(hierarchy.height + 1)]


def value_counts(result: AnonymizationResult) -> tuple[list, list]:
    """Per QID: the number of input records holding each leaf, and of released (not
    suppressed) records holding each label of the optimum's level -- from the bottom
    frequency set and the optimum's classes, so that a release written chunk by chunk is
    described as one held in memory.  Counted where the frequency sets are (on the device
    for a GPU backend, :func:`gpuppdp.kernels.marginal_counts`): only the per-label counts
    travel to the host."""
    evaluator = result._evaluator
    assert evaluator is not None, "a result holds its evaluator until pickled"
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
    files = {k: v for k, v in dict(files or {}).items() if v is not None}
    schema = result.schema
    assert result._evaluator is not None, "a result holds its evaluator until pickled"
    roles = result._evaluator.encoded.roles
    columns = list(roles)
    hierarchy_files = {str(k): str(v) for k, v in (files.get("hierarchies") or {}).items()}
    leaf_counts, released_counts = value_counts(result)
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
