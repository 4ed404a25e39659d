"""gpuppdp: GPU-accelerated privacy-preserving data publishing.

Optimal full-domain generalization with suppression (ARX-compatible), privacy models as
plug-ins, utility metrics, on NumPy (CPU) or CuPy (GPU) with one code path.

The names below are imported on first use (PEP 562), so ``import gpuppdp.cli`` loads no
NumPy or pandas before the command line has installed its interrupt handler.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # the exported names' types, for type checkers (imported lazily at run time)
    from .anonymizer import AnonymizationResult, Anonymizer, NoSolutionError
    from .backend import Backend, BackendError, get_backend
    from .engine.encoding import Schema, SchemaError
    from .engine.metrics import Discernibility, Loss, Precision
    from .hierarchy import Hierarchy, HierarchyError, UnknownValuesError
    from .models import (
        AverageReidentificationRisk,
        DistinctLDiversity,
        KAnonymity,
        PopulationUniqueness,
        PrivacyModel,
        SampleUniqueness,
    )
    from .tradeoff import Exploration, explore

_EXPORTS = {
    "Anonymizer": "anonymizer", "AnonymizationResult": "anonymizer",
    "NoSolutionError": "anonymizer", "Backend": "backend", "BackendError": "backend",
    "get_backend": "backend", "Schema": "engine.encoding", "SchemaError": "engine.encoding",
    "Loss": "engine.metrics", "Precision": "engine.metrics", "Discernibility": "engine.metrics",
    "Hierarchy": "hierarchy", "HierarchyError": "hierarchy", "UnknownValuesError": "hierarchy",
    "KAnonymity": "models", "DistinctLDiversity": "models", "PrivacyModel": "models",
    "AverageReidentificationRisk": "models", "PopulationUniqueness": "models",
    "SampleUniqueness": "models",
    "explore": "tradeoff", "Exploration": "tradeoff",
}

__all__ = ["Anonymizer", "AnonymizationResult", "NoSolutionError", "Backend", "BackendError",
           "get_backend", "Schema", "SchemaError", "Hierarchy", "HierarchyError",
           "UnknownValuesError", "Loss", "Precision", "Discernibility", "KAnonymity",
           "DistinctLDiversity", "PrivacyModel", "AverageReidentificationRisk",
           "PopulationUniqueness", "SampleUniqueness", "explore", "Exploration"]


def __getattr__(name: str):
    """The exported names and the subpackages (``gpuppdp.models``), imported when first used."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
