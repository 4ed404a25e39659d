"""Attribute data types, as ARX declares them (``DataDefinition.setDataType``; ARX 3.9.2
``DataType``): ``string`` (ARX's default, nominal), ``integer`` and ``decimal`` (ratio scale),
``date`` (interval scale) and ``ordered`` (an ordered string, ordinal scale).

A type says how the values of a column compare (the order of ordered t-closeness, of a median
or an interval) and how an aggregate is written back (ARX's ``DataType.format``: an integer
mean rounded half up, a decimal as Java's ``Double.toString``).  Text such as ``integer`` or
``ordered:low,mid,high`` is parsed by :func:`parse_type` (the CLI's ``--type COL=TYPE``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

from ..errors import InputError
from ..validation import format_values

__all__ = ["DataType", "TYPE_KINDS", "NULL", "parse_type", "infer_type", "java_double",
           "java_string_key"]

#: ARX's missing value (``DataType.NULL_VALUE``): an empty cell reads as it, and every type
#: but string takes it (in any case) as null, which sorts after every value
NULL = "NULL"

#: the kinds of :class:`DataType` (ARX's STRING, INTEGER, DECIMAL, DATE, ORDERED_STRING)
TYPE_KINDS = ("string", "integer", "decimal", "date", "ordered")

#: ARX's scales of measure, weakest first (``DataScale``), and the scale of each kind
SCALES = ("nominal", "ordinal", "interval", "ratio")
_SCALE_OF = {"string": "nominal", "ordered": "ordinal", "date": "interval",
             "integer": "ratio", "decimal": "ratio"}


@dataclass(frozen=True)
class DataType:
    """The data type of one attribute: ``kind`` one of :data:`TYPE_KINDS`; ``format`` the
    ``strptime`` format of a date (ISO ``%Y-%m-%d`` by default); ``order`` every value of an
    ordered string, smallest first."""

    kind: str = "string"
    format: str | None = None
    order: tuple[str, ...] | None = None

    def __post_init__(self):
        if self.kind not in TYPE_KINDS:
            raise InputError(f"type must be one of {TYPE_KINDS}, got {self.kind!r}")
        if self.kind == "ordered":
            if not self.order:
                raise InputError("an ordered type needs its values in order "
                                 "(ordered:V1,V2,...)")
            if len(set(self.order)) != len(self.order):
                dup = [v for v in self.order if self.order.count(v) > 1]
                raise InputError(f"the ordered type lists {dup[0]!r} twice")

    @property
    def scale(self) -> str:
        """ARX's scale of measure (``DataScale``): nominal, ordinal, interval or ratio."""
        return _SCALE_OF[self.kind]

    def provides(self, scale: str) -> bool:
        """Does this type's scale provide ``scale`` (ARX's ``DataScale.provides``)?"""
        return SCALES.index(self.scale) >= SCALES.index(scale)

    @property
    def numeric(self) -> bool:
        return self.kind in ("integer", "decimal")

    def describe(self) -> str:
        """The type as :func:`parse_type` reads it."""
        if self.kind == "ordered":
            return "ordered:" + ",".join(self.order or ())
        return f"date:{self.format}" if self.kind == "date" and self.format else self.kind

    def keys(self, values, column: str) -> np.ndarray:
        """Sort keys of ``values`` (strings): float64 numbers for integer and decimal,
        positions in the order for ordered, seconds since 1970 for dates; strings as given
        (ARX compares them with ``String.compareTo``).  An ``InputError`` names ``column`` and
        the first value that is not of the type."""
        text = pd.Series(np.asarray(values, dtype=object)).astype(str)
        keys: pd.Series
        if self.kind == "string":
            return text.to_numpy(dtype=object)
        if self.kind == "ordered":
            pos = pd.Series(range(len(self.order or ())), index=list(self.order or ()))
            keys = text.map(pos)
            bad = keys.isna()
            what = f"one of its {len(self.order or ())} ordered values"
        elif self.kind == "date":
            dates = pd.to_datetime(text, format=self.format or "%Y-%m-%d", errors="coerce")
            bad = dates.isna()
            keys = dates.astype("int64") / 1e9
            what = f"a date of format {self.format or '%Y-%m-%d'!r}"
        else:
            keys = pd.to_numeric(text, errors="coerce")
            bad = keys.isna() | ~np.isfinite(keys)
            if self.kind == "integer":
                bad |= keys != np.floor(keys)
            what = "an integer" if self.kind == "integer" else "a decimal number"
        if bad.any():
            first = text[bad].iloc[0]
            raise InputError(f"column {column!r} is typed {self.describe()}, but {first!r} "
                             f"(and {int(bad.sum()) - 1} more) is not {what}" if bad.sum() > 1
                             else f"column {column!r} is typed {self.describe()}, but "
                             f"{first!r} is not {what}")
        return keys.to_numpy(dtype=np.float64)

    def sort(self, values, column: str) -> list[str]:
        """The distinct ``values`` (as strings) in this type's order, as ARX orders an
        attribute's dictionary (``DataManager.getOrder``: a stable sort with
        ``DataType.compare``): strings by UTF-16 code units, the other kinds by
        :meth:`keys`, ``NULL`` (any case) after every value."""
        text = list(dict.fromkeys(str(v) for v in values))
        if self.kind == "string":
            return sorted(text, key=java_string_key)
        null = np.array([v.upper() == NULL for v in text], dtype=bool)
        keys = np.full(len(text), np.inf)
        keys[~null] = self.keys([v for v, n in zip(text, null) if not n], column)
        return [text[i] for i in np.argsort(keys, kind="stable")]

    def format_number(self, x: float) -> str:
        """ARX's ``format(fromDouble(x))`` of a number: an integer rounded half up (Java's
        ``Math.round``), a decimal as Java's ``Double.toString``."""
        if self.kind == "integer":
            return str(int(math.floor(x + 0.5)))
        return java_double(x)


def parse_type(text: str, column: str = "") -> DataType:
    """A :class:`DataType` from ``integer``, ``decimal``, ``date[:FORMAT]``,
    ``ordered:V1,V2,...`` or ``string``."""
    kind, _, rest = str(text).partition(":")
    where = f" for {column!r}" if column else ""
    if kind == "ordered":
        return DataType("ordered", order=tuple(rest.split(",")) if rest else None)
    if kind == "date":
        return DataType("date", format=rest or None)
    if kind not in TYPE_KINDS or rest:
        raise InputError(f"type{where} must be string, integer, decimal, date[:FORMAT] or "
                         f"ordered:V1,V2,..., got {text!r}")
    return DataType(kind)


def infer_type(values) -> DataType:
    """``integer`` when every value is a whole number, ``decimal`` when every one is a number,
    else ``string`` (the default gpuppdp takes where a column has no declared type)."""
    num = pd.to_numeric(pd.Series(np.asarray(values, dtype=object)).astype(str),
                        errors="coerce")
    if len(num) == 0 or num.isna().any() or not np.isfinite(num).all():
        return DataType("string")
    return DataType("integer" if (num == np.floor(num)).all() else "decimal")


def java_string_key(value: str) -> bytes:
    """Sort key of Java's ``String.compareTo`` (UTF-16 code units, shorter prefix first), the
    order of ARX's string data type."""
    return value.encode("utf-16-be", "surrogatepass")


def java_double(x: float) -> str:
    """Java's ``Double.toString``: plain digits with at least one decimal for
    ``1e-3 <= |x| < 1e7``, else ``d.dddE±n``; the digits are Python's shortest repr (Java 17
    prints more digits for a few values)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        s = repr(x)
        if "e" in s:  # repr writes 1e-03 style for none of these, but be exact
            s = format(x, "f")
        return s if "." in s else s + ".0"
    exact = Decimal(repr(x)).normalize()
    digits = "".join(map(str, exact.as_tuple().digits))
    sign = "-" if x < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exact.adjusted()}"


def check_types(types, columns=None) -> dict[str, DataType]:
    """``{column: DataType}`` from a mapping of column to :class:`DataType` or text."""
    if types is None:
        return {}
    if not hasattr(types, "items"):
        raise InputError(f"types must be a mapping column -> type, got {types!r}")
    out = {str(c): t if isinstance(t, DataType) else parse_type(t, c) for c, t in types.items()}
    if columns is not None:
        unknown = [c for c in out if c not in columns]
        if unknown:
            raise InputError(f"types: column(s) {format_values(unknown)} not in the data")
    return out
