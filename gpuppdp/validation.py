"""Parameter validation for the whole public API: fail on entry and name the parameter.

Every public function and class checks its arguments with these helpers, so one kind of
mistake gets one kind of message: the parameter's name, what was expected and what was given
(as scikit-learn's ``_param_validation`` and diffprivlib's ``_check_all`` do).  Column lists
are always called ``quasi_identifiers`` in messages, the one name the API uses for them.

Every ``check_*`` helper takes the parameter's name first, then its value (``check_int("k", k,
1)``), in the order the message names them; a bad value raises
:class:`~gpuppdp.errors.InputError` (a ``ValueError``), a wrong type
:class:`~gpuppdp.errors.InputTypeError` (a ``TypeError``).
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence, overload

import numpy as np
import pandas as pd

from .errors import InputError, InputTypeError

__all__ = ["check_columns", "check_epsilon", "check_frame", "check_int", "check_number",
           "check_name", "format_values", "check_positive", "check_probability", "column_list",
           "plain_number"]


def format_values(values: Sequence, first: int = 5) -> str:
    """``'a', 'b', 'c' and 7 more`` -- the first few values of a list, for error messages."""
    shown = ", ".join(repr(v) for v in list(values)[:first])
    rest = len(values) - first
    return shown + (f" and {rest} more" if rest > 0 else "")


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive(name: str, value) -> float:
    """``value`` as a float; ``InputError`` unless it is a finite real number ``> 0``."""
    if not _is_real(value):
        raise InputError(f"{name} must be a finite number > 0, got {value!r} "
                         f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_epsilon(name: str, epsilon) -> float:
    """A privacy parameter ε: finite and strictly positive (ε = 0, NaN, ±inf are refused)."""
    return check_positive(name, epsilon)


def check_probability(name: str, value, *, low: float, high: float) -> float:
    """``value`` as a float in the open interval ``(low, high)``."""
    if not _is_real(value) or not low < float(value) < high:
        raise InputError(f"{name} must be a number in the open interval ({low:g}, {high:g}), "
                         f"got {value!r}")
    return float(value)


def check_int(name: str, value, minimum: int) -> int:
    """``value`` as an int ``>= minimum``; integral floats (``5.0``) are accepted, bools not."""
    integral = isinstance(value, (numbers.Integral, np.integer)) or (
        isinstance(value, (float, np.floating)) and float(value).is_integer())
    if isinstance(value, bool) or not integral or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_number(name: str, value, minimum: float, maximum: float = math.inf) -> float:
    """``value`` as a finite float in ``[minimum, maximum]``."""
    if not _is_real(value) or not math.isfinite(float(value)) \
            or not minimum <= float(value) <= maximum:
        bounds = f">= {minimum:g}" if maximum == math.inf else f"in [{minimum:g}, {maximum:g}]"
        raise InputError(f"{name} must be a finite number {bounds}, got {value!r}")
    return float(value)


def plain_number(value: float):
    """``3.0 -> 3`` for JSON summaries, other floats unchanged."""
    return int(value) if float(value).is_integer() else value


def check_name(name: str, value) -> str:
    """``value`` itself; ``InputError`` unless it is a non-empty string (a column name)."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{name} must be a column name, got {value!r}")
    return value


@overload
def check_attribute(name: str, column: str, quasi_identifiers) -> str: ...
@overload
def check_attribute(name: str, column: object, quasi_identifiers) -> str | None: ...
def check_attribute(name: str, column, quasi_identifiers) -> str | None:
    """``column`` itself (None stays None): one column name that is not one of the
    ``quasi_identifiers`` (``name`` is its role: ``"sensitive"``, ``"target"``)."""
    if column is None:
        return None
    if not isinstance(column, str):
        raise InputTypeError(f"{name} must be a column name, got {column!r}")
    if column in quasi_identifiers:
        raise InputError(f"column {column!r} is given as a quasi-identifier and as the "
                         f"{name} attribute")
    return column


def check_complete(data, columns) -> None:
    """``InputError`` naming the first missing value of ``columns`` of ``data``, with its
    0-based row as the error's ``row`` (the command line names the file's line)."""
    for c in columns:
        miss = data[c].isna().to_numpy()
        if miss.any():
            first = int(miss.argmax())
            error = InputError(f"column {c!r} has {int(miss.sum())} missing value(s), first at "
                               f"row {first}")
            error.row = first
            raise error


def column_list(columns, name: str = "quasi_identifiers") -> list[str]:
    """``columns`` as a list of distinct column names (one name may be a plain string)."""
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise InputError(f"{name}: at least one column is needed, got none")
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise InputError(f"{name}: column(s) given twice: {', '.join(map(repr, dup))}")
    return cols


def check_frame(name: str, data):
    """``data`` itself; ``InputTypeError`` unless it is a pandas DataFrame."""
    if not isinstance(data, pd.DataFrame):
        raise InputTypeError(f"{name} must be a pandas DataFrame, got {type(data).__name__}")
    return data


def check_columns(name: str, data, columns, frame: str = "data") -> list[str]:
    """:func:`column_list` of ``columns`` (the parameter ``name``), each of which must be a
    column of ``data`` (the parameter ``frame``)."""
    check_frame(frame, data)
    cols = column_list(columns, name)
    missing = [c for c in cols if c not in data.columns]
    if missing:
        have = list(data.columns)
        raise InputError(f"{name}: column(s) not in the {frame}: "
                         f"{', '.join(map(repr, missing))}; the {frame} has "
                         f"{', '.join(map(repr, have[:12]))}"
                         f"{', ...' if len(have) > 12 else ''}")
    return cols
