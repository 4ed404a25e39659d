"""Perturbation and generalization in one run (:meth:`.Perturbation.anonymize`, the CLI's
``gpuppdp perturb ... --qi COL=HIERARCHY.csv``).

The named columns are perturbed first (:meth:`.Perturbation.fit`); then the optimal
full-domain generalization of the anonymizer's quasi-identifiers is searched over the
perturbed table.  The microaggregated columns are quasi-identifiers already released: they
take part in the equivalence classes (the release is k-anonymous over every QID, generalized
and microaggregated; MDAV's groups of at least k records, Domingo-Ferrer & Mateo-Sanz 2002,
are split further by the other QIDs' values) but are never generalized: each gets a
hierarchy of one level, the identity.  The release is then measured by the independent
checker (:func:`gpuppdp.analysis.checker.check`) over all these QIDs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import pandas as pd

from ..analysis.checker import MEASURED_MODELS, check, measured_holds
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy

if TYPE_CHECKING:  # the public API's classes, a layer above: an anonymizer is passed in
    from ..anonymizer import AnonymizationResult, Anonymizer
    from .release import Perturbation, PerturbedRelease

__all__ = ["PerturbedAnonymization", "anonymize_perturbed", "check_perturbed_roles"]

@dataclass
class PerturbedAnonymization:
    """What :meth:`.Perturbation.anonymize` released: the perturbation (``perturbation``,
    its methods and measures), the generalization of the perturbed table (``result``), the
    microaggregated columns it kept as quasi-identifiers (``microaggregated``) and the
    independent checker's verdict over every QID (``checked``)."""

    perturbation: PerturbedRelease
    result: AnonymizationResult
    microaggregated: list[str]
    checked: dict
    seconds: float

    @property
    def released(self) -> pd.DataFrame:
        """The released table (rows permuted as the anonymizer releases them)."""
        return self.result.released

    def summary(self, generalization: dict | None = None) -> dict:
        """The perturbation's summary (``methods``, ``measures``), the generalization's
        (``generalization``: ``result.summary()`` unless given), the ``quasi_identifiers``
        (``generalized`` and ``microaggregated``), the ``check`` and the record counts:
        ``input_rows`` = ``released_records`` + ``suppressed_records``; ``seconds`` of both
        steps (``perturbation_seconds`` of the first)."""
        general = self.result.summary() if generalization is None else generalization
        qids = list(self.result.transformation)
        return {**self.perturbation.summary(), "perturbation_seconds": self.perturbation.seconds,
                "generalization": general,
                "quasi_identifiers": {
                    "generalized": [q for q in qids if q not in self.microaggregated],
                    "microaggregated": list(self.microaggregated)},
                "check": self.checked, "input_rows": self.result.release.input_rows,
                "released_records": self.result.release.released_rows,
                "suppressed_records": self.result.suppressed_records, "seconds": self.seconds}


def check_perturbed_roles(perturbation: Perturbation, *, quasi_identifiers=(), sensitive=(),
                          insensitive=(), identifying=(), option: str = "") -> None:
    """The roles of the perturbed columns: a microaggregated column is a quasi-identifier
    released as it is, so it has no other role; no perturbed column is identifying (those are
    removed).  ``option`` is the CLI's prefix of the parameters' names (``--``)."""
    micro = [c for cols, _ in perturbation.microaggregate for c in cols]
    qi = "qi" if option else "quasi_identifiers"
    for role, names in ((qi, quasi_identifiers), ("sensitive", sensitive),
                        ("insensitive", insensitive)):
        both = [c for c in micro if c in names]
        if both:
            raise InputError(f"{option}{role}: {both[0]!r} is microaggregated, which releases "
                             "it as a quasi-identifier of its own (never generalized); give it "
                             f"no other role (leave it out of {option}{role})")
    for method, column in perturbation._targets():
        if column in identifying:
            raise InputError(f"{option}identifying: {column!r} is also perturbed ({method}); "
                             "an identifying column is removed from the release: perturb it "
                             "or remove it, not both")


def anonymize_perturbed(perturbation: Perturbation, data: pd.DataFrame, anonymizer: Anonymizer,
                        *, progress: Callable[[int, int], None] | None = None
                        ) -> PerturbedAnonymization:
    """``perturbation`` applied to ``data``, then ``anonymizer``'s generalization of the
    perturbed table with the microaggregated columns as quasi-identifiers of one level (the
    identity); the perturbed columns the anonymizer gives no role are released as
    insensitive.  See :meth:`.Perturbation.anonymize`."""
    t0 = time.perf_counter()
    if not callable(getattr(anonymizer, "get_params", None)):
        raise InputTypeError(f"anonymizer must be a gpuppdp.Anonymizer, got "
                             f"{type(anonymizer).__name__}")
    params = anonymizer.get_params()
    check_perturbed_roles(perturbation, quasi_identifiers=params["quasi_identifiers"],
                          sensitive=params["sensitive"], insensitive=params["insensitive"],
                          identifying=params["identifying"])
    micro = [c for cols, _ in perturbation.microaggregate for c in cols]
    named = {*params["quasi_identifiers"], *params["sensitive"], *params["insensitive"]}
    unnamed = [c for _, c in perturbation._targets() if c not in named and c not in micro]
    perturbed = perturbation.fit(data)
    table = perturbed.data
    identity = {c: Hierarchy([list(pd.unique(table[c]))], name=c) for c in micro}
    combined = type(anonymizer)(**{**params,
                                   "quasi_identifiers": {**params["quasi_identifiers"],
                                                         **identity},
                                   "insensitive": [*params["insensitive"], *unnamed]})
    result = combined.fit(table, progress=progress)
    checked = _checked_release(result)
    return PerturbedAnonymization(perturbed, result, micro, checked, time.perf_counter() - t0)


def _checked_release(result: AnonymizationResult) -> dict:
    """The independent checker's measures of ``result``'s release over all its quasi-
    identifiers (``k``, ``classes``, ``suppressed_rows``) and, per privacy model, whether
    they satisfy it (``holds``, :func:`~gpuppdp.analysis.checker.measured_holds`;
    ``measured`` False for a model the checker has no measure of, e.g. LKC-privacy or k-map:
    the search's own verdict stands); ``satisfied``: all hold."""
    released, qids = result.released, list(result.transformation)
    measured = {None: check(released, quasi_identifiers=qids, backend="cpu")}
    verdicts = []
    for model in result.models:
        attribute = model.get("attribute")
        if attribute not in measured:
            measured[attribute] = check(released, quasi_identifiers=qids,
                                        sensitive=attribute, backend="cpu")
        values = measured[attribute]
        measured_here = model["model"] in MEASURED_MODELS and not (  # e.g. hierarchical t
            model["model"] == "t-closeness" and values.get(f"t_{model['distance']}") is None)
        verdicts.append({**model, "measured": measured_here,
                         "holds": measured_holds(model, values)})
    overall = measured[None]
    return {"quasi_identifiers": qids, "k": overall["k"], "classes": overall["classes"],
            "suppressed_rows": overall["suppressed_rows"], "models": verdicts,
            "satisfied": all(v["holds"] for v in verdicts)}
