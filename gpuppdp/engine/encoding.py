"""Schema (attribute roles), encoding and the frequency set.

After :func:`encode`, the engine never sees strings or rows again: QIDs are hierarchy leaf codes
(smallest integer dtype), the sensitive attribute is dictionary-encoded, and every lattice-node
evaluation starts from a :class:`FrequencySet` (distinct rows + counts), never from the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import kernels
from ..backend import Backend
from ..hierarchy import Hierarchy
from ..validation import format_values
from .codes import encode_column, smallest_int_dtype

__all__ = ["Role", "Schema", "SchemaError", "EncodedTable", "FrequencySet", "SensitiveColumn",
           "encode", "smallest_int_dtype"]


class SchemaError(ValueError):
    """Attribute roles that do not fit the data."""


class Role(str, Enum):
    """Attribute roles (ARX's ``AttributeType``)."""

    IDENTIFYING = "identifying"
    QUASI_IDENTIFYING = "quasi-identifying"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"


@dataclass
class Schema:
    """Attribute roles of a table.

    Parameters
    ----------
    quasi_identifiers : mapping name -> Hierarchy
    sensitive, insensitive, identifying : sequences of column names
    others : {"error", "insensitive", "drop"}
        What to do with columns given no role: ``"error"`` (default) lists them in an error, so
        nothing passes through by accident.
    """

    quasi_identifiers: Mapping[str, Hierarchy]
    sensitive: Sequence[str] = ()
    insensitive: Sequence[str] = ()
    identifying: Sequence[str] = ()
    others: str = "error"

    def __post_init__(self):
        if self.others not in ("error", "insensitive", "drop"):
            raise SchemaError(
                f"others must be 'error', 'insensitive' or 'drop', got {self.others!r}")
        if not self.quasi_identifiers:
            raise SchemaError("at least one quasi-identifier is needed")
        for name, h in self.quasi_identifiers.items():
            if not isinstance(h, Hierarchy):
                raise SchemaError(
                    f"quasi-identifier {name!r} needs a Hierarchy, got {type(h).__name__}")
        seen: dict[str, str] = {}
        for role, names in ((Role.QUASI_IDENTIFYING, list(self.quasi_identifiers)),
                            (Role.SENSITIVE, list(self.sensitive)),
                            (Role.INSENSITIVE, list(self.insensitive)),
                            (Role.IDENTIFYING, list(self.identifying))):
            for name in names:
                if name in seen:
                    raise SchemaError(
                        f"column {name!r} is given two roles: {seen[name]} and {role.value}")
                seen[name] = role.value
        self.sensitive = list(self.sensitive)
        self.insensitive = list(self.insensitive)
        self.identifying = list(self.identifying)

    def roles(self) -> dict[str, Role]:
        out = {n: Role.QUASI_IDENTIFYING for n in self.quasi_identifiers}
        out.update({n: Role.SENSITIVE for n in self.sensitive})
        out.update({n: Role.INSENSITIVE for n in self.insensitive})
        out.update({n: Role.IDENTIFYING for n in self.identifying})
        return out

    def resolve(self, columns: Sequence[str]) -> dict[str, Role | None]:
        """Role of every column of a table (``None``: dropped); checks names both ways."""
        roles = self.roles()
        missing = [n for n in roles if n not in columns]
        if missing:
            raise SchemaError(f"column(s) not in the data: {format_values(missing)}; "
                              f"the data has {format_values(list(columns), 12)}")
        unassigned = [c for c in columns if c not in roles]
        if unassigned and self.others == "error":
            raise SchemaError(
                f"{len(unassigned)} column(s) have no role: {format_values(unassigned, 10)}; "
                "give each a role, or say what to do with the rest (others='insensitive' "
                "or 'drop'; CLI: --others insensitive|drop)")
        fallback = Role.INSENSITIVE if self.others == "insensitive" else None
        return {c: roles.get(c, fallback) for c in columns}


@dataclass
class FrequencySet:
    """Distinct rows of one or more lattice nodes, concatenated (node ``b`` owns
    ``ptr[b]:ptr[b+1]``), each node's entries ordered by ``first``.

    ``codes`` (E, q) QID codes at the node's levels (:attr:`EncodedTable.code_dtype`, the
    smallest dtype for every hierarchy); ``sens`` (E,) int32 sensitive code
    (0 when no sensitive attribute is carried); ``count`` (E,) int64; ``first`` (E,) int64 the
    first input row of the entry; ``levels`` (B, q) host int array; ``ptr`` device,
    ``host_ptr`` host offsets.
    """

    levels: np.ndarray
    codes: object
    sens: object
    count: object
    first: object
    ptr: object
    host_ptr: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.levels)

    def size(self, b: int) -> int:
        return int(self.host_ptr[b + 1] - self.host_ptr[b])

    def node(self, b: int) -> "FrequencySet":
        """Node ``b`` alone, as views of this set's arrays (no copy)."""
        lo, hi = int(self.host_ptr[b]), int(self.host_ptr[b + 1])
        return FrequencySet(self.levels[b:b + 1], self.codes[lo:hi], self.sens[lo:hi],
                            self.count[lo:hi], self.first[lo:hi], self.ptr[b:b + 2] - lo,
                            np.array([0, hi - lo], dtype=np.int64))


@dataclass
class SensitiveColumn:
    """One sensitive attribute the privacy models refer to: ``codes`` (device, one per row) index
    ``labels`` (host, first-appearance order); ``from_carried`` (device) maps the code carried
    by the frequency set to this attribute's code (``None``: the carried code is this one)."""

    codes: object
    labels: np.ndarray
    from_carried: object = None


@dataclass
class EncodedTable:
    """A table encoded once for the whole search.

    ``qi_codes[j]`` are the leaf codes of QID ``j`` (smallest dtype).  ``sensitive`` holds the
    sensitive attributes the privacy models refer to; the frequency set carries one code per
    row, ``sens_codes`` (``n_sens`` values): the attribute's own code with one attribute, the
    code of the combination of their values with several (``None`` without any).
    """

    backend: Backend
    qi_names: list[str]
    hierarchies: list[Hierarchy]
    qi_codes: list
    n_rows: int
    sens_codes: object = None
    n_sens: int = 1
    sensitive: dict = field(default_factory=dict)
    roles: dict = field(default_factory=dict)
    _maps: tuple | None = None
    _level_sizes: np.ndarray | None = None

    @property
    def code_dtype(self) -> np.dtype:
        """Smallest integer dtype holding every QID code of every level."""
        return smallest_int_dtype(max(len(h.leaves) for h in self.hierarchies))

    def sensitive_column(self, name: str) -> SensitiveColumn:
        """The encoded sensitive attribute ``name`` (a clear error if it was not encoded)."""
        if name not in self.sensitive:
            raise ValueError(f"a model refers to sensitive attribute {name!r}, which was not "
                             f"encoded; the table carries {sorted(self.sensitive) or 'none'}")
        return self.sensitive[name]

    @property
    def heights(self) -> np.ndarray:
        return np.array([h.height for h in self.hierarchies], dtype=np.int64)

    def distinct_per_level(self) -> list[np.ndarray]:
        """``d[j][L]``: distinct labels of QID ``j`` at level ``L`` among the data's values."""
        out = []
        for codes, h in zip(self.qi_codes, self.hierarchies):
            present = np.flatnonzero(np.bincount(self.backend.to_host(codes).astype(np.int64),
                                                 minlength=len(h.leaves)))
            out.append(np.array([len(np.unique(h.codes(L)[present]))
                                 for L in range(h.height + 1)], dtype=np.int64))
        return out

    def node_radix(self, levels: np.ndarray) -> np.ndarray:
        """(B, q+1): number of codes of each QID at each node's level, then of the sensitive
        attribute (1 if none) -- the radices of the nodes' mixed-radix class keys."""
        if self._level_sizes is None:
            hmax = int(self.heights.max())
            sizes = np.ones((len(self.hierarchies), hmax + 1), dtype=np.int64)
            for j, h in enumerate(self.hierarchies):
                sizes[j, :h.height + 1] = [len(h.labels(L)) for L in range(h.height + 1)]
            self._level_sizes = sizes
        levels = np.asarray(levels, dtype=np.int64)
        q = levels.shape[1]
        radix = self._level_sizes[np.arange(q)[None, :], levels]
        return np.concatenate([radix, np.full((len(levels), 1), self.n_sens)], axis=1)

    def level_maps(self):
        """``(maps_flat (device, code_dtype), off[j][a][b] (host int64))`` for every QID and levels
        ``a <= b``: ``maps_flat[off[j, a, b] + code_a] = code_b``."""
        if self._maps is None:
            hmax = int(self.heights.max())
            q = len(self.hierarchies)
            off = np.zeros((q, hmax + 1, hmax + 1), dtype=np.int64)
            parts, pos = [], 0
            for j, h in enumerate(self.hierarchies):
                for a in range(h.height + 1):
                    for b in range(a, h.height + 1):
                        m = h.upmap(a, b)
                        off[j, a, b] = pos
                        parts.append(m)
                        pos += len(m)
            self._maps = (self.backend.asarray(np.concatenate(parts).astype(self.code_dtype)), off)
        return self._maps

    def frequency_set(self) -> FrequencySet:
        """The bottom node's frequency set (one pass over the rows)."""
        xp = self.backend.xp
        q = len(self.qi_codes)
        src = xp.stack([c.astype(self.code_dtype) for c in self.qi_codes], axis=1)
        sens = (self.sens_codes.astype(xp.int32) if self.sens_codes is not None
                else xp.zeros(self.n_rows, dtype=xp.int32))
        maps, off = self.level_maps()
        node_off = off[np.arange(q), 0, 0][None, :]
        codes, sens, count, first, ptr = kernels.rollup(
            self.backend, src, sens, xp.ones(self.n_rows, dtype=xp.int64),
            xp.arange(self.n_rows, dtype=xp.int64), np.array([0]), np.array([self.n_rows]),
            node_off, maps, self.node_radix(np.zeros((1, q), dtype=np.int64)))
        ptr = self.backend.asarray(ptr)
        return FrequencySet(np.zeros((1, q), dtype=np.int64), codes, sens, count, first, ptr,
                            self.backend.to_host(ptr))


def encode(data: pd.DataFrame, schema: Schema, backend: Backend,
           sensitive_attributes: Sequence[str] | str | None = ()) -> EncodedTable:
    """Encode ``data`` under ``schema`` on ``backend``.

    QIDs are taken in the table's column order (as ARX does).  ``sensitive_attributes`` are the
    sensitive columns the privacy models refer to (each must have the sensitive role).  Missing
    values in a QID or sensitive column, and QID values absent from their hierarchy, raise
    errors that name the column and list the values.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise SchemaError("the table is empty (0 rows)")
    duplicated = data.columns[data.columns.duplicated()].unique().tolist()
    if duplicated:
        raise SchemaError(f"the table has duplicate column names: {format_values(duplicated)}")
    roles = schema.resolve(list(data.columns))
    qi_names = [c for c in data.columns if roles[c] is Role.QUASI_IDENTIFYING]
    for c in qi_names + list(schema.sensitive):
        if not data[c].hasnans:
            continue
        miss = data[c].isna().to_numpy()
        if miss.any():
            raise SchemaError(
                f"column {c!r} has {int(miss.sum())} missing value(s) (NaN/None), first at "
                f"row {int(np.flatnonzero(miss)[0])}; fill or remove them, or add a label for "
                "them to the hierarchy and encode them as that label")
    hierarchies = [schema.quasi_identifiers[c] for c in qi_names]
    qi_codes = []
    for c, h in zip(qi_names, hierarchies):
        qi_codes.append(backend.asarray(encode_column(data[c], domain=h.leaves, name=c)[0]))
    enc = EncodedTable(backend, qi_names, hierarchies, qi_codes, len(data), roles=roles)
    if sensitive_attributes is None:
        sensitive_attributes = ()
    names = [sensitive_attributes] if isinstance(sensitive_attributes, str) \
        else list(dict.fromkeys(sensitive_attributes))
    if names:
        _encode_sensitive(enc, data, names, roles)
    return enc


def _encode_sensitive(enc: EncodedTable, data: pd.DataFrame, names: list[str], roles) -> None:
    """Dictionary-encode the sensitive attributes and the code the frequency set carries."""
    backend = enc.backend
    host_codes = []
    for name in names:
        if roles.get(name) is not Role.SENSITIVE:
            raise SchemaError(f"privacy models refer to {name!r}, which is not a sensitive "
                              "attribute of the schema")
        codes, labels = encode_column(data[name], as_str=True)
        host_codes.append((codes.astype(np.int64), labels))
    if len(names) == 1:
        codes, labels = host_codes[0]
        carried, n_carried, maps = codes, len(labels), [None]
    else:
        # the carried code numbers the combinations of the attributes' values that occur
        # (pairwise factorization keeps the keys below rows x values)
        carried = host_codes[0][0]
        for codes, labels in host_codes[1:]:
            carried = encode_column(carried * len(labels) + codes)[0].astype(np.int64)
        n_carried = int(carried.max()) + 1
        first = np.empty(n_carried, dtype=np.int64)
        first[carried[::-1]] = np.arange(enc.n_rows - 1, -1, -1)
        maps = [codes[first] for codes, _ in host_codes]
    enc.sens_codes = backend.asarray(carried.astype(smallest_int_dtype(n_carried)))
    enc.n_sens = int(n_carried)
    for name, (codes, labels), m in zip(names, host_codes, maps):
        enc.sensitive[name] = SensitiveColumn(
            backend.asarray(codes.astype(smallest_int_dtype(len(labels)))), labels,
            None if m is None else backend.asarray(m.astype(np.int64)))
