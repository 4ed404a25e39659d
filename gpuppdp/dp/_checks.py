"""Parameter validation shared by the DP layer: fail on entry, name the parameter."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_epsilon", "check_positive", "check_probability"]


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive(value, name: str) -> float:
    """``value`` as a float; ``ValueError`` unless it is a finite real number ``> 0``."""
    if not _is_real(value):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r} "
                         f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """A privacy parameter ε: finite and strictly positive (ε = 0, NaN, ±inf are refused)."""
    return check_positive(epsilon, name)


def check_probability(value, name: str, *, low: float, high: float) -> float:
    """``value`` as a float in the open interval ``(low, high)``."""
    if not _is_real(value) or not low < float(value) < high:
        raise ValueError(f"{name} must be a number in the open interval ({low:g}, {high:g}), "
                         f"got {value!r}")
    return float(value)
