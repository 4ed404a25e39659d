"""The report's section on perturbed columns: their measures against the original columns
(:func:`gpuppdp.perturb.perturbation_measures`) as tables and bar charts.

Utility: IL1s (Yancey, Winkler & Creecy 2002), the variation of the means, covariances and
correlations (Domingo-Ferrer & Torra 2001), the eigenvalue distance and the propensity score
(Woo et al. 2009); disclosure risk: distance-based record linkage (Domingo-Ferrer & Torra
2001) and interval disclosure (sdcMicro's ``dRisk``).
"""

from __future__ import annotations

from ..errors import InputError
from .html import _table
from .svg import _bar_chart
from .text import _e, _names, _num, _pct

__all__ = ["PERTURBATION_TITLE", "checked_measures", "perturbation_html"]

#: the section's heading, after the sections of every report
PERTURBATION_TITLE = "9. Perturbed columns against the original"

#: utility figures: key, name, what it says
_UTILITY = (("il1s", "IL1s", "mean distance of a value to its original, in original standard "
             "deviations divided by \u221a2 (0: unchanged)"),
            ("mean_variation", "Mean variation", "mean relative change of the column means"),
            ("covariance_variation", "Covariance variation",
             "mean relative change of the covariances"),
            ("correlation_variation", "Correlation variation",
             "mean absolute change of the correlations"),
            ("eigenvalue_distance", "Eigenvalue distance",
             "change of the correlation matrix's eigenvalues, relative to their sum"),
            ("propensity_score", "Propensity score",
             "how well a logistic model tells released from original records (0: not at all, "
             "0.25: every record)"))


def checked_measures(measures) -> dict:
    """``measures`` (:func:`gpuppdp.perturb.perturbation_measures` with ``columns``), checked
    to hold what the section draws."""
    if not isinstance(measures, dict) or not {"columns", "utility", "risk"} <= set(measures) \
            or "il1s_per_column" not in measures["utility"]:
        raise InputError("perturbation must be the measures of gpuppdp.perturb."
                         "perturbation_measures with their 'columns' (the names of the "
                         "perturbed columns), got "
                         + (f"the keys {sorted(measures)}" if isinstance(measures, dict)
                            else type(measures).__name__))
    return measures


def perturbation_html(measures: dict) -> str:
    """The section: the utility and risk tables, IL1s and interval disclosure per column, and
    each pair of columns' correlation in the original and the release."""
    columns, utility, risk = measures["columns"], measures["utility"], measures["risk"]
    interval = risk["interval_disclosure"]
    per_il1s, per_interval = utility["il1s_per_column"], interval["per_column"]
    out = [f'<p class="caption">The perturbed columns {_e(_names(columns))} of the release '
           "against the same columns of the original table, record by record (before any "
           "generalization).</p>",
           "<h3>Utility</h3>",
           _table(("Measure", "Value", "What it says"),
                  [(name, _num(utility[key]), text) for key, name, text in _UTILITY],
                  numeric=(1,)),
           "<h3>Disclosure risk</h3>",
           _table(("Measure", "Value", "What it says"), [
               ("Record linkage (DBRL)", _pct(risk["linkage_rate"]),
                f"share of {_num(risk['records_linked'])} released records (of "
                f"{_num(risk['records'])}) whose nearest original record is their own"),
               ("Interval disclosure", _pct(interval["records_at_risk"]),
                f"share of records whose every original value lies within "
                f"{_num(interval['width'])} standard deviations of the released one")],
                  numeric=(1,)),
           _bar_chart("IL1s per perturbed column", columns, [("IL1s", per_il1s)],
                      xlabel="column", ylabel="IL1s (0 = unchanged)"),
           _bar_chart("Values within the disclosure interval, per column", columns,
                      [("within the interval", per_interval)], xlabel="column",
                      ylabel="share of records", percent=True),
           _table(("Column", "IL1s", "Within the interval"),
                  [(c, _num(a), _pct(b)) for c, a, b in zip(columns, per_il1s, per_interval)],
                  numeric=(1, 2))]
    original, masked = utility["correlations"]["original"], utility["correlations"]["masked"]
    if original:
        pairs = [f"{a} \u00d7 {b}" for i, a in enumerate(columns) for b in columns[i + 1:]]
        change = [abs(x - y) for x, y in zip(original, masked)]
        out += [_bar_chart("Correlation change per pair of perturbed columns", pairs,
                           [("|original - released|", change)], xlabel="pair of columns",
                           ylabel="absolute change of the correlation",
                           tips=[f"original {x:.4g}, released {y:.4g}"
                                 for x, y in zip(original, masked)]),
                _table(("Pair", "Correlation (original)", "Correlation (released)", "Change"),
                       [(p, _num(x), _num(y), _num(c))
                        for p, x, y, c in zip(pairs, original, masked, change)],
                       numeric=(1, 2, 3))]
    return "\n".join(out)
