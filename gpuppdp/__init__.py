"""gpuppdp: GPU-accelerated privacy-preserving data publishing.

Optimal full-domain generalization with suppression (ARX-compatible), privacy models as
plug-ins, utility metrics, on NumPy (CPU) or CuPy (GPU) with one code path.
"""

__version__ = "0.1.0"  # before the imports: the report module reads it

from .anonymizer import AnonymizationResult, Anonymizer, NoSolutionError
from .backend import Backend, BackendError, get_backend
from .engine.encoding import Schema, SchemaError
from .engine.metrics import Discernibility, Loss, Precision
from .hierarchy import Hierarchy, HierarchyError, UnknownValuesError
from .models import DistinctLDiversity, KAnonymity, PrivacyModel

__all__ = ["Anonymizer", "AnonymizationResult", "NoSolutionError", "Backend", "BackendError",
           "get_backend", "Schema", "SchemaError", "Hierarchy", "HierarchyError",
           "UnknownValuesError", "Loss", "Precision", "Discernibility", "KAnonymity",
           "DistinctLDiversity", "PrivacyModel"]
