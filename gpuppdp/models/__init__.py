"""Privacy models as plug-ins, one module per family (as ARX's ``criteria/``).

A model declares what it needs from the table, the smallest class it tolerates and whether it
is monotonic with generalization and with suppression (the pruning search may only use sound
flags).  It judges all classes of a batch of nodes at once: :meth:`PrivacyModel.class_fails`
returns one verdict per class, on the device, from the
:class:`~gpuppdp.core.classes.Classes` the evaluator hands it.
"""

from .base import PrivacyModel, Requirement, SensitiveModel
from .distribution import AlphaKAnonymity, BetaLikeness, DeltaDisclosurePrivacy, PrivacyLoss
from .groups import KAnonymityOnSubsets, LKCPrivacy
from .kanonymity import KAnonymity
from .ldiversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .population import DeltaPresence, KMap
from .tcloseness import TCLOSENESS_DISTANCES, TCloseness

__all__ = ["PrivacyModel", "Requirement", "SensitiveModel", "KAnonymity", "DistinctLDiversity",
           "EntropyLDiversity", "RecursiveCLDiversity", "TCloseness", "TCLOSENESS_DISTANCES",
           "AlphaKAnonymity", "DeltaDisclosurePrivacy", "BetaLikeness", "PrivacyLoss",
           "KAnonymityOnSubsets", "LKCPrivacy", "KMap", "DeltaPresence"]
