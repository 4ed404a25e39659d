"""Machine-learning utility of a release: a classifier trained on the release against the
same classifier trained on the original (Iyengar 2002; LeFevre, DeWitt & Ramakrishnan 2006).
Needs scikit-learn (``pip install "gpuppdp[ml]"``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..core.codes import encode_column
from ..engine.transform import Release
from ..errors import InputError
from ..validation import column_list
from .utility import _check_frames, _source_rows

__all__ = ["ML_METRICS", "ml_utility_loss"]

#: the scores of :func:`ml_utility_loss`
ML_METRICS = ("accuracy", "precision", "recall", "f1")


def ml_utility_loss(original: pd.DataFrame, released: pd.DataFrame | Release, *,
                    features: Sequence[str], target: str, classifier=None, cv: int = 5,
                    random_state: int = 0, average: str = "macro",
                    tolerance: float | None = None) -> dict:
    """Classification utility of a release: the same classifier trained on the original and on
    the released features, compared by stratified ``cv``-fold cross-validated accuracy,
    precision, recall and F1 (Iyengar 2002, "Transforming data to satisfy privacy
    constraints", KDD; LeFevre, DeWitt & Ramakrishnan 2006, "Workload-aware anonymization",
    KDD; precision, recall and F1 as the classification-utility measures of the
    privacy/utility-loss work, beside accuracy).

    Every feature is ordinally encoded by its labels (a generalized label or a suppressed
    ``'*'`` is just a category); ``classifier`` is any scikit-learn classifier (cloned per
    fold; default ``DecisionTreeClassifier(min_samples_leaf=5, random_state=random_state)``,
    a tree kept from overfitting single records).  Both tables are
    evaluated on the same records in the same order (a Release's rows are put back in input
    order through its ``source_rows``; a ``drop`` release keeps only its own records), so equal
    tables give equal folds and equal scores.  Each score is the mean over the folds;
    precision, recall and F1 are ``average``-d over the target's classes (scikit-learn's
    ``"macro"`` by default, ``"weighted"`` or ``"micro"``; ``"binary"`` for a 0/1 target), a
    class never predicted in a fold counting precision 0.

    Returns ``{"accuracy_original", "accuracy_released", "relative_loss"}`` with
    ``relative_loss = (accuracy_original - accuracy_released) / accuracy_original`` (as
    before), plus ``precision_*``, ``recall_*``, ``f1_*`` (``_original`` / ``_released``),
    ``relative_losses`` (each metric's relative loss) and, with a ``tolerance`` lambda,
    ``within_tolerance``: per metric whether the release loses at most the share lambda of it,
    the relative loss ``L_U = (original - released) / original <= lambda`` of Def. 25 of the
    thesis "seed 004" (lambda = 0.05 accepts a drop from 0.80 to 0.76; before 0.x this tested
    the absolute drop), and ``tolerance``.
    Needs scikit-learn (``pip install "gpuppdp[ml]"``).
    """
    try:
        # deferred: scikit-learn is an optional dependency (the ml extra)
        from sklearn.metrics import f1_score, make_scorer, precision_score, recall_score
        from sklearn.model_selection import StratifiedKFold, cross_validate
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as exc:
        raise ImportError('ml_utility_loss needs scikit-learn: pip install "gpuppdp[ml]" '
                          '(or pip install scikit-learn)') from exc
    features = column_list(features, "features")
    if target in features:
        raise InputError(f"column {target!r} is given as a feature and as the target")
    if tolerance is not None and not float(tolerance) >= 0:
        raise InputError(f"tolerance must be a number >= 0, got {tolerance!r}")
    released, src = _source_rows(original, released)
    _check_frames(original, released, features + [target], "features")
    if not np.array_equal(src, np.arange(len(original))):
        order = np.argsort(src, kind="stable")
        released = released.iloc[order].reset_index(drop=True)
        original = original.iloc[src[order]].reset_index(drop=True)
    if classifier is None:
        classifier = DecisionTreeClassifier(min_samples_leaf=5, random_state=random_state)
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    scoring = {"accuracy": "accuracy",
               "precision": make_scorer(precision_score, average=average, zero_division=0),
               "recall": make_scorer(recall_score, average=average, zero_division=0),
               "f1": make_scorer(f1_score, average=average, zero_division=0)}

    def scores(table: pd.DataFrame) -> dict:
        x = np.column_stack([encode_column(table[c])[0].astype(np.int64) for c in features])
        y = encode_column(table[target])[0].astype(np.int64)
        res = cross_validate(classifier, x, y, cv=folds, scoring=scoring)
        return {m: float(np.mean(res[f"test_{m}"])) for m in ML_METRICS}

    so, sr = scores(original), scores(released)
    out = {"accuracy_original": so["accuracy"], "accuracy_released": sr["accuracy"],
           "relative_loss": (so["accuracy"] - sr["accuracy"]) / so["accuracy"]
           if so["accuracy"] > 0 else float("nan")}
    for m in ML_METRICS[1:]:
        out[f"{m}_original"], out[f"{m}_released"] = so[m], sr[m]
    out["relative_losses"] = {m: (so[m] - sr[m]) / so[m] if so[m] > 0 else float("nan")
                              for m in ML_METRICS}
    if tolerance is not None:
        out["tolerance"] = float(tolerance)
        out["within_tolerance"] = {m: bool(out["relative_losses"][m] <= float(tolerance)
                                           + 1e-12) for m in ML_METRICS}
    return out
