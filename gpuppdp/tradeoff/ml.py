"""The machine-learning trade-off (the thesis "seed 004", chapter 5): for a list of privacy
constraints, release the table under each, train the same classifier on each release and on
the original, and report accuracy, precision, recall, F1 and the relative utility loss
``L_U = (accuracy_original - accuracy_released) / accuracy_original`` (Def. 25); then, for each
tolerance lambda, which constraints keep ``L_U <= lambda`` (the lambda-(epsilon, alpha) table,
Table 5.6), as a table and an SVG figure.

Each release is the :class:`gpuppdp.Anonymizer`'s optimum under the (epsilon, alpha)
privacy-loss model (:class:`gpuppdp.models.PrivacyLoss`) on the sensitive attribute; the
scores are :func:`gpuppdp.analysis.ml.ml_utility_loss`'s (stratified cross-validation, the
same folds for every table).  A constraint no node meets has no release: NaN scores, never
within a tolerance.  Needs scikit-learn (``pip install "gpuppdp[tradeoff]"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.ml import ML_METRICS, ml_utility_loss
from ..anonymizer import Anonymizer, NoSolutionError
from ..errors import InputError
from ..models import PrivacyLoss
from ..report.svg import _svg_open
from ..report.text import _e
from ..validation import check_number

__all__ = ["ml_tradeoff", "MLTradeoff"]


@dataclass
class MLTradeoff:
    """``scores``: one row per privacy constraint (``epsilon``, ``alpha``, the release's
    ``transformation``, each metric's ``_released`` score and ``L_U``), ``original``: the
    original's scores; ``lambda_table``: one row per lambda, one column per constraint
    (``"eps,alpha"``), whether ``L_U <= lambda`` (Table 5.6)."""

    scores: pd.DataFrame
    original: dict
    lambda_table: pd.DataFrame

    def to_svg(self, title: str = "lambda-(epsilon, alpha) table: L_U <= lambda") -> str:
        """Table 5.6 as a self-contained SVG grid: a filled cell where the release of that
        constraint (column) loses at most lambda (row) of the original's accuracy; each
        cell's tooltip gives ``L_U``."""
        table = self.lambda_table
        cols, rows = list(table.columns), list(table.index)
        cell, left, top = 64, 90, 56
        width = left + cell * len(cols) + 20
        height = top + 28 * len(rows) + 40
        parts = _svg_open(width, height, title)
        loss = dict(zip(cols, self.scores["L_U"]))
        for j, c in enumerate(cols):
            parts.append(f'<text x="{left + cell * j + cell / 2:.1f}" y="{top - 8}" '
                         f'text-anchor="middle">{_e(c)}</text>')
        for i, lam in enumerate(rows):
            y = top + 28 * i
            parts.append(f'<text x="{left - 8}" y="{y + 18}" text-anchor="end">'
                         f"{_e(f'lambda {lam:g}')}</text>")
            for j, c in enumerate(cols):
                ok = bool(table.loc[lam, c])
                fill = "#4c9a54" if ok else "#f4f4f4"
                parts.append(f'<rect x="{left + cell * j}" y="{y}" width="{cell - 2}" '
                             f'height="26" fill="{fill}" stroke="#ccc"><title>'
                             f"{_e(f'{c}: L_U = {loss[c]:.4f}, lambda = {lam:g}')}</title>"
                             "</rect>")
        parts.append(f'<text x="{left}" y="{height - 12}">columns: epsilon,alpha; filled: '
                     "L_U &lt;= lambda</text>")
        parts.append("</svg>")
        return "\n".join(parts)

    def to_dict(self) -> dict:
        return {"original": self.original,
                "scores": self.scores.replace({np.nan: None}).to_dict(orient="records"),
                "lambda_table": {f"{lam:g}": {c: bool(v) for c, v in row.items()}
                                 for lam, row in self.lambda_table.iterrows()}}


def ml_tradeoff(data: pd.DataFrame, *, quasi_identifiers: Mapping, sensitive: str,
                constraints: Sequence, features: Sequence[str], target: str,
                lambdas: Sequence[float] = (0.01, 0.02, 0.05, 0.1), classifier=None,
                cv: int = 5, random_state: int = 0, suppression_limit: float = 0.0,
                prior=None, prior_qids: Sequence[str] = (), search: str = "auto",
                backend="auto") -> MLTradeoff:
    """Release ``data`` under each ``(epsilon, alpha)`` of ``constraints`` (the privacy-loss
    model on ``sensitive``, ``prior``/``prior_qids`` as :class:`~gpuppdp.models.PrivacyLoss`
    takes them; columns other than the QIDs and ``sensitive`` kept as insensitive), score a
    classifier of ``target`` from ``features`` on each release and on the original
    (:func:`gpuppdp.analysis.ml.ml_utility_loss`), and tabulate ``L_U <= lambda`` per
    ``lambdas`` (see the module docstring)."""
    pairs = []
    for c in constraints:
        if not isinstance(c, Sequence) or len(c) != 2:
            raise InputError(f"constraints: each is an (epsilon, alpha) pair, got {c!r}")
        pairs.append((check_number("epsilon", c[0], 0.0), check_number("alpha", c[1], 0.0)))
    if not pairs:
        raise InputError("constraints: give at least one (epsilon, alpha) pair")
    lambdas = [check_number("lambdas", lam, 0.0) for lam in lambdas]
    rows, original = [], None
    for eps, alpha in pairs:  # one search and one cross-validation per constraint
        model = PrivacyLoss(sensitive, eps, alpha, prior=prior, prior_qids=prior_qids)
        row = {"constraint": f"{eps:g},{alpha:g}", "epsilon": eps, "alpha": alpha}
        try:
            res = Anonymizer(quasi_identifiers=quasi_identifiers, sensitive=[sensitive],
                             models=[model], others="insensitive",
                             suppression_limit=suppression_limit, search=search,
                             backend=backend, seed=random_state).fit(data)
        except NoSolutionError:
            row.update({"transformation": None, **{f"{m}_released": np.nan
                                                    for m in ML_METRICS}, "L_U": np.nan})
            rows.append(row)
            continue
        scores = ml_utility_loss(data, res.release, features=features, target=target,
                                 classifier=classifier, cv=cv, random_state=random_state)
        original = original or {m: scores[f"{m}_original"] for m in ML_METRICS}
        row["transformation"] = dict(res.transformation)
        row.update({f"{m}_released": scores[f"{m}_released"] for m in ML_METRICS})
        row["L_U"] = scores["relative_loss"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    loss = frame["L_U"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        met = loss[None, :] <= np.asarray(lambdas)[:, None] + 1e-12   # NaN: never
    table = pd.DataFrame(met, index=pd.Index(lambdas, name="lambda"),
                         columns=frame["constraint"].tolist())
    return MLTradeoff(frame, original or {}, table)
