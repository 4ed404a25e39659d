"""Plain words for people, from the standard library alone: the privacy models as sentences
(:func:`model_sentence`, :func:`models_text`) and what the information loss's scale means
(:func:`loss_scale`), for error messages, notebook tables and the report."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["model_sentence", "models_text", "loss_scale"]


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
    g: Callable[..., Any] = model.get    # a parameter: any JSON value

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


def loss_scale(metric: str, rows: int) -> tuple[float | None, str]:
    """``(divisor, words)``: what divides a loss of ``metric`` into a share of its maximum on
    a table of ``rows`` records (``None``: a metric without one), and that scale in words."""
    if metric in ("discernibility", "discernibility-monotonic"):  # <= n^2
        return float(rows * rows), (
            f"sum of squared class sizes plus {rows} per suppressed record; maximum "
            f"{rows * rows} (every record in one class or suppressed)")
    if metric == "aecs":
        return float(rows), f"average class size; maximum {rows} (one class)"
    if metric not in ("loss", "precision"):
        return None, f"ARX's value of the {metric} metric, in its own units"
    return 1.0, ("share of the maximum: 0 = no value generalized or suppressed, 1 = every "
                 "value at the top of its hierarchy or suppressed")
