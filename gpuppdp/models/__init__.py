"""Privacy models as plug-ins, one module per family (as ARX's ``criteria/``).

A model declares what it needs from the table, the smallest class it tolerates and whether it
is monotonic with generalization and with suppression (the pruning search may only use sound
flags).  It judges all classes of a batch of nodes at once: :meth:`PrivacyModel.class_fails`
returns one verdict per class, on the device, from the
:class:`~gpuppdp.core.classes.Classes` the evaluator hands it.  The interface
(:class:`PrivacyModel`, :class:`Requirement`, :class:`CompiledCheck`) lives in
:mod:`gpuppdp.core.model`, where the engine sees it; :mod:`.spec` parses the command line's
model options (:func:`from_spec`) and rebuilds a model from its description
(:func:`from_description`).  :mod:`.risk` holds the models judging the released classes'
size distribution as a whole (average risk, sample and population uniqueness).
"""

from .base import CompiledCheck, PrivacyModel, Requirement, SensitiveModel
from .distribution import AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy, PrivacyLoss
from .groups import KAnonymityOnSubsets, LKCPrivacy
from .kanonymity import KAnonymity
from .ldiversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .population import DeltaPresence, KMap
from .risk import AverageReidentificationRisk, PopulationUniqueness, RiskModel, SampleUniqueness
from .spec import (
                   SPEC_OPTIONS,
                   ParsedModel,
                   from_description,
                   from_spec,
                   parse_spec,
                   parsed_models,
                   spec_attribute,
)
from .tcloseness import TCLOSENESS_DISTANCES, TCloseness

__all__ = ["PrivacyModel", "Requirement", "CompiledCheck", "SensitiveModel", "KAnonymity",
           "DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity", "TCloseness",
           "TCLOSENESS_DISTANCES", "AlphaKAnonymity", "DeltaDisclosurePrivacy", "BetaLikeness",
           "PrivacyLoss", "KAnonymityOnSubsets", "LKCPrivacy", "KMap", "DeltaPresence",
           "RiskModel", "AverageReidentificationRisk", "PopulationUniqueness", "SampleUniqueness",
           "SPEC_OPTIONS", "ParsedModel", "parse_spec", "parsed_models", "from_spec",
           "from_description", "spec_attribute"]
