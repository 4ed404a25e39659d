"""The statistics file of :mod:`gpuppdp.attacks.reconstruct`: its attributes (checked and
sized before any domain is built), groups as masks over the record types, and the file
itself."""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import InputError

__all__ = ["Attribute", "group_mask", "is_number", "load_statistics", "parse_attributes",
           "too_large"]


def too_large(message: str, parameter: str) -> InputError:
    """An error ending in ``message`` + the parameter to raise (``max_types``), whose ``cli``
    text (what the command line shows) names its flag (``--max-types``) instead."""
    error = InputError(message + parameter)
    error.cli = message + "--" + parameter.replace("_", "-")
    return error


@dataclass(frozen=True)
class Attribute:
    name: str
    numeric: bool
    values: tuple  # categorical: the labels; numeric: every integer from min to max



def load_statistics(path: str | os.PathLike) -> dict:
    """The statistics file ``path`` (JSON) as a dict; see :func:`reconstruct`."""
    with open(os.fspath(path), encoding="utf-8") as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as exc:
            raise InputError(f"{os.fspath(path)}: not valid JSON ({exc})") from None


def is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(float(value))


def parse_attributes(raw, max_values: int | None = None) -> list[Attribute]:
    """The attributes of a statistics file; a numeric domain of more than ``max_values``
    values is refused before it is built (one variable per value and record type)."""
    if not isinstance(raw, Mapping) or not raw:
        raise InputError("attributes must be a non-empty object: name -> list of values "
                         "(categorical) or {\"min\", \"max\", \"integer\"} (numeric)")
    out = []
    for name, dom in raw.items():
        where = f"attributes[{name!r}]"
        if isinstance(dom, Mapping):
            extra = set(dom) - {"min", "max", "integer"}
            if extra:
                raise InputError(f"{where}: unknown key(s) {sorted(extra)}; a numeric "
                                 "attribute has min, max and integer")
            lo, hi = dom.get("min"), dom.get("max")
            if not (isinstance(lo, numbers.Integral) and not isinstance(lo, bool)
                    and isinstance(hi, numbers.Integral) and not isinstance(hi, bool)) or lo > hi:
                raise InputError(f"{where}: min and max must be integers with min <= max, "
                                 f"got {lo!r} and {hi!r}")
            lo, hi = int(lo), int(hi)
            if dom.get("integer", True) is not True:
                raise InputError(f"{where}: only integer-valued numeric attributes can be "
                                 "reconstructed (the encoding has one variable per value); "
                                 "give \"integer\": true, or bin the attribute")
            if max_values is not None and hi - lo + 1 > max_values:
                raise too_large(f"{where}: the domain min {lo:,} .. max {hi:,} has "
                                f"{hi - lo + 1:,} values, more than the {max_values:,} record "
                                "types allowed; narrow or bin it, or raise ", "max_types")
            out.append(Attribute(name, True, tuple(range(lo, hi + 1))))
        elif isinstance(dom, (list, tuple)):
            if not dom or len(set(map(repr, dom))) != len(dom):
                raise InputError(f"{where}: a categorical domain is a non-empty list of "
                                 f"distinct values, got {dom!r}")
            out.append(Attribute(name, False, tuple(dom)))
        else:
            raise InputError(f"{where}: expected a list of values or {{\"min\", \"max\", "
                             f"\"integer\"}}, got {dom!r}")
    return out


def group_mask(filters, attributes: dict, types: dict, where: str) -> np.ndarray:
    """Boolean mask over the record types of a group's filters (equality, a list of values,
    or a numeric range ``[lo, hi]``, inclusive, ``null`` for an open end)."""
    if not isinstance(filters, Mapping):
        raise InputError(f"{where}: a group is an object of filters, got {filters!r}")
    mask = np.ones(len(next(iter(types.values()))), dtype=bool)
    for name, cond in filters.items():
        if name not in attributes:
            raise InputError(f"{where}: unknown attribute {name!r}; the attributes are "
                             f"{', '.join(map(repr, attributes))}")
        attr, col = attributes[name], types[name]
        if attr.numeric:
            if is_number(cond):
                mask &= col == cond
            elif isinstance(cond, (list, tuple)) and len(cond) == 2 and all(
                    c is None or is_number(c) for c in cond):
                lo = -math.inf if cond[0] is None else cond[0]
                hi = math.inf if cond[1] is None else cond[1]
                mask &= (col >= lo) & (col <= hi)
            else:
                raise InputError(f"{where}: {name!r} is numeric: give a number or a range "
                                 f"[lo, hi], got {cond!r}")
        else:
            wanted = cond if isinstance(cond, (list, tuple)) else [cond]
            codes = []
            for value in wanted:
                if value not in attr.values:
                    raise InputError(f"{where}: {value!r} is not in the domain of {name!r} "
                                     f"({', '.join(map(repr, attr.values[:8]))}"
                                     f"{', ...' if len(attr.values) > 8 else ''})")
                codes.append(attr.values.index(value))
            mask &= np.isin(col, codes)
    return mask
