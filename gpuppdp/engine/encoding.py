"""Schema (attribute roles), encoding and the frequency set.

After :func:`encode`, the engine never sees strings or rows again: QIDs are hierarchy leaf codes
(smallest integer dtype), the sensitive attribute is dictionary-encoded, and every lattice-node
evaluation starts from a :class:`FrequencySet` (distinct rows + counts), never from the rows.

A missing cell (null, NaN, None; an empty CSV field) of a quasi-identifier or sensitive column
is ARX's value ``NULL`` (``DataType.NULL_VALUE``, what ARX makes of a null cell): a value like
any other, which a quasi-identifier's hierarchy must hold, as ARX requires.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import kernels
from ..backend import Array, Backend, cpu_backend
from ..core.codes import ColumnDictionary, UnknownValuesError, encode_column, smallest_int_dtype
from ..core.datatypes import NULL
from ..errors import InputError, InputTypeError
from ..hierarchy import Hierarchy
from ..kernels import groupby
from ..kernels.grouping import IDENTITY_OFFSET
from ..validation import format_values

__all__ = ["Role", "Schema", "SchemaError", "check_hierarchy", "hierarchy_of", "EncodedTable",
           "FrequencySet", "SensitiveColumn",
           "encode", "SensitiveEncoder", "check_complete", "leaf_codes",
           "with_null", "sensitive_names", "smallest_int_dtype", "missing_error", "table_roles"]


class SchemaError(InputError):
    """Attribute roles that do not fit the data."""


def check_hierarchy(name: str, value) -> None:
    """A quasi-identifier's hierarchy is a Hierarchy or the path of its CSV file."""
    if value is None:
        raise SchemaError(f"quasi-identifier {name!r} has no hierarchy")
    if not isinstance(value, (Hierarchy, str, os.PathLike)):
        raise SchemaError(f"quasi-identifier {name!r}: expected a Hierarchy or a CSV path, "
                          f"got {type(value).__name__}")


def hierarchy_of(name: str, value) -> Hierarchy:
    """The hierarchy of quasi-identifier ``name``, read from its CSV file when given a path."""
    check_hierarchy(name, value)
    return value if isinstance(value, Hierarchy) else Hierarchy.from_csv(value, name=name)


class Role(str, Enum):
    """Attribute roles (ARX's ``AttributeType``)."""

    IDENTIFYING = "identifying"
    QUASI_IDENTIFYING = "quasi-identifying"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"
    #: a quasi-identifier without hierarchy, aggregated within the classes (ARX's
    #: microaggregation without clustering, :mod:`gpuppdp.engine.microaggregation`)
    MICROAGGREGATED = "microaggregated"


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
    microaggregation : mapping name -> :class:`~gpuppdp.engine.microaggregation.Aggregation`
        Attributes released as one aggregate per class; those without a hierarchy in
        ``quasi_identifiers`` have the role ``microaggregated``.
    types : mapping name -> :class:`~gpuppdp.core.datatypes.DataType`
        Declared data types (ARX's ``setDataType``), e.g. the order of ordered t-closeness.
    """

    quasi_identifiers: Mapping[str, Hierarchy]
    sensitive: Sequence[str] = ()
    insensitive: Sequence[str] = ()
    identifying: Sequence[str] = ()
    others: str = "error"
    microaggregation: Mapping = field(default_factory=dict)
    types: Mapping = field(default_factory=dict)

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
                            (Role.IDENTIFYING, list(self.identifying)),
                            (Role.MICROAGGREGATED, self.microaggregated)):
            for name in names:
                if name in seen:
                    raise SchemaError(
                        f"column {name!r} is given two roles: {seen[name]} and {role.value}")
                seen[name] = role.value
        self.sensitive = list(self.sensitive)
        self.insensitive = list(self.insensitive)
        self.identifying = list(self.identifying)

    @property
    def microaggregated(self) -> list[str]:
        """The microaggregated attributes without a hierarchy (not in the lattice)."""
        return [n for n in self.microaggregation if n not in self.quasi_identifiers]

    def roles(self) -> dict[str, Role]:
        out = {n: Role.QUASI_IDENTIFYING for n in self.quasi_identifiers}
        out.update({n: Role.MICROAGGREGATED for n in self.microaggregated})
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
            message = (f"{len(unassigned)} column(s) have no role: "
                       f"{format_values(unassigned, 10)}; give each a role, or say what to do "
                       "with the rest (")
            error = SchemaError(message + "others='insensitive' or 'drop')")
            error.cli = message + "--others insensitive|drop)"  # what the command line shows
            raise error
        fallback = Role.INSENSITIVE if self.others == "insensitive" else None
        return {c: roles.get(c, fallback) for c in columns}


@dataclass
class FrequencySet:
    """Distinct rows of one or more lattice nodes, concatenated (node ``b`` owns
    ``ptr[b]:ptr[b+1]``), each node's entries ordered by ``first``.

    ``codes`` (E, q) QID codes at the node's levels (:attr:`EncodedTable.code_dtype`, the
    smallest dtype for every hierarchy; (E,) int64 packed codes in the sets of a packed walk,
    :mod:`~gpuppdp.engine.search.packed_walk`); ``sens`` (E,) int32 sensitive code (0 when no
    sensitive attribute is carried; empty in a packed walk's sets); ``count`` (E,) int64;
    ``first`` (E,) int64 the first input row of the entry (empty in the sets of a CPU lattice
    walk, which do not keep it: :class:`~.evaluate.RollupBuffers`); ``levels`` (B, q) host int
    array; ``ptr`` device, ``host_ptr`` host offsets.
    """

    levels: np.ndarray
    codes: Array
    sens: Array
    count: Array
    first: Array
    ptr: Array
    host_ptr: np.ndarray

    @property
    def n_nodes(self) -> int:
        return len(self.levels)

    def size(self, b: int) -> int:
        return int(self.host_ptr[b + 1] - self.host_ptr[b])

    @property
    def rows(self) -> int:
        """Rows of the arrays the nodes' entries fill (back to back from row 0)."""
        return int(self.host_ptr[-1])

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.codes, self.sens, self.count, self.first))

    def moved(self, convert: Callable) -> "FrequencySet":
        """This set with its arrays passed through ``convert`` (e.g. ``Backend.to_host``)."""
        codes, sens, count, first, ptr = (convert(a) for a in (
            self.codes, self.sens, self.count, self.first, self.ptr))
        return FrequencySet(self.levels, codes, sens, count, first, ptr, self.host_ptr)

    @staticmethod
    def concatenate(xp, parts: list["FrequencySet"]) -> "FrequencySet":
        """The nodes of ``parts`` (device arrays of namespace ``xp``) in one set, in order."""
        start = np.cumsum([0] + [int(p.host_ptr[-1]) for p in parts])
        host_ptr = np.concatenate([np.zeros(1, np.int64)] + [
            p.host_ptr[1:] + off for p, off in zip(parts, start)]).astype(np.int64)
        codes, sens, count, first = (xp.concatenate([getattr(p, name) for p in parts])
                                     for name in ("codes", "sens", "count", "first"))
        return FrequencySet(np.concatenate([p.levels for p in parts]), codes, sens, count,
                            first, xp.asarray(host_ptr), host_ptr)

    def node(self, b: int) -> "FrequencySet":
        """Node ``b`` alone, as views of this set's arrays (no copy)."""
        lo, hi = int(self.host_ptr[b]), int(self.host_ptr[b + 1])
        return FrequencySet(self.levels[b:b + 1], self.codes[lo:hi], self.sens[lo:hi],
                            self.count[lo:hi], self.first[lo:hi], self.ptr[b:b + 2] - lo,
                            np.array([0, hi - lo], dtype=np.int64))


@dataclass
class SensitiveColumn:
    """One sensitive attribute the privacy models refer to: ``counts`` (device int64) the number
    of rows holding each of its ``labels`` (host, in order of first appearance in the table);
    ``from_carried`` (device) maps the code carried by the frequency set to this attribute's
    code (``None``: the carried code is this one)."""

    counts: Array
    labels: np.ndarray
    from_carried: Array = None


#: merges of at least this many entries read counts and first rows as int32 (memory)
MERGE_NARROW_ENTRIES = 1 << 22


@dataclass
class EncodedTable:
    """A table encoded once for the whole search.

    ``qi_codes[j]`` are the leaf codes of QID ``j`` per row (smallest dtype; ``None`` for a
    table encoded chunk by chunk, see
    :func:`~gpuppdp.engine.chunked_encoding.encode_chunks`, which keeps only its frequency
    set).  ``sensitive`` holds the sensitive attributes the privacy models refer to; the
    frequency set carries one code per row (``n_sens`` values): the attribute's own code with
    one attribute, the code of the combination of their values with several; ``sens_codes``
    are those codes per row (``None`` without sensitive attributes, or when chunked).
    """

    backend: Backend
    qi_names: list[str]
    hierarchies: list[Hierarchy]
    qi_codes: list | None
    n_rows: int
    sens_codes: Array = None
    n_sens: int = 1
    sensitive: dict = field(default_factory=dict)
    roles: dict = field(default_factory=dict)
    #: column -> typed :class:`~gpuppdp.engine.microaggregation.Aggregation`
    microaggregation: dict = field(default_factory=dict)
    #: column -> declared :class:`~gpuppdp.core.datatypes.DataType` (:attr:`Schema.types`)
    types: dict = field(default_factory=dict)
    _bottom: FrequencySet | None = None
    _maps: tuple | None = None
    _level_sizes: np.ndarray | None = None
    _heights: np.ndarray | None = None
    _code_dtype: np.dtype | None = None
    #: (bottom set, counts, offsets) of the last :meth:`leaf_counts`
    _leaf_counts: tuple | None = None

    @property
    def code_dtype(self) -> np.dtype:
        """Smallest integer dtype holding every QID code of every level (computed once)."""
        if self._code_dtype is None:
            self._code_dtype = smallest_int_dtype(max(len(h.leaves) for h in self.hierarchies))
        return self._code_dtype

    @property
    def carries_sensitive(self) -> bool:
        """Does the frequency set carry a sensitive code?"""
        return bool(self.sensitive)

    def sensitive_column(self, name: str) -> SensitiveColumn:
        """The encoded sensitive attribute ``name`` (a clear error if it was not encoded)."""
        if name not in self.sensitive:
            raise InputError(f"a model refers to sensitive attribute {name!r}, which was not "
                             f"encoded; the table carries {sorted(self.sensitive) or 'none'}")
        return self.sensitive[name]

    @property
    def heights(self) -> np.ndarray:
        """Each QID's hierarchy height (computed once; a copy each time: a read-only array
        would take another compiled form of every kernel it is passed to)."""
        if self._heights is None:
            self._heights = np.array([h.height for h in self.hierarchies], dtype=np.int64)
        return self._heights.copy()

    def rows_on_host(self) -> "EncodedTable":
        """A bare twin of this table on the CPU backend -- its QIDs, hierarchies, roles and
        row count, no codes or frequency set -- for row-wise work on rows kept in host memory
        (a release written chunk by chunk, by the host threads or Dask workers), where a
        device would only add copies and the frequency set need not travel."""
        return EncodedTable(cpu_backend(), self.qi_names, self.hierarchies, None, self.n_rows,
                            roles=self.roles)

    def take_rows(self, rows) -> "EncodedTable":
        """Rows ``rows`` (device int64) as a table of their own: their codes gathered, the
        sensitive attributes' counts of the whole table (ARX's ``DataManagerSubset`` takes its
        distributions from the source), the level maps and radices shared (they depend on the
        hierarchies only)."""
        assert self.qi_codes is not None  # (a table encoded whole)
        return EncodedTable(self.backend, self.qi_names, self.hierarchies,
                            [c[rows] for c in self.qi_codes], int(rows.shape[0]),
                            sens_codes=None if self.sens_codes is None else self.sens_codes[rows],
                            n_sens=self.n_sens, sensitive=self.sensitive, roles=self.roles,
                            types=self.types, _maps=self.level_maps(),
                            _level_sizes=self.level_sizes(), _heights=self._heights,
                            _code_dtype=self.code_dtype)

    def distinct_per_level(self) -> np.ndarray:
        """``d[j, L]`` (q, largest height + 1): distinct labels of QID ``j`` at level ``L``
        among the data's values, 0 past its height."""
        maps, map_off = self.level_maps()
        return groupby.distinct_at_levels(*self.leaf_counts(), self.backend.to_host(maps),
                                          map_off, self.heights, self.level_sizes())

    def leaf_counts(self, bottom: FrequencySet | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(counts, offsets)`` (host int64): the records per leaf of each QID in ``bottom``
        (default: the table's), QID ``j``'s in ``counts[offsets[j]:offsets[j+1]]``; the last
        set's kept (the search's key terms and the loss's prior bound both read the bottom's)."""
        bottom = self.frequency_set() if bottom is None else bottom
        if self._leaf_counts is None or self._leaf_counts[0] is not bottom:
            sizes = [len(h.leaves) for h in self.hierarchies]
            counts = kernels.marginal_counts(self.backend, bottom.codes, bottom.count, sizes)
            self._leaf_counts = (bottom, np.concatenate([np.zeros(0, np.int64), *counts]),
                                 np.cumsum([0, *sizes]))
        return self._leaf_counts[1], self._leaf_counts[2]

    def node_radix(self, levels: np.ndarray) -> np.ndarray:
        """(B, q+1): number of codes of each QID at each node's level, then of the sensitive
        attribute (1 if none) -- the radices of the nodes' mixed-radix class keys."""
        levels = np.asarray(levels, dtype=np.int64)
        q = levels.shape[1]
        radix = np.empty((len(levels), q + 1), np.int64)
        radix[:, :q] = self.level_sizes()[np.arange(q), levels]
        radix[:, q] = self.n_sens
        return radix

    def level_sizes(self) -> np.ndarray:
        """(q, height + 1): the codes of each QID at each level (1 past its height)."""
        if self._level_sizes is None:
            self._level_sizes = sizes = np.ones((len(self.qi_names),
                                                 int(self.heights.max()) + 1), np.int64)
            for j, h in enumerate(self.hierarchies):
                sizes[j, :h.height + 1] = [len(h.labels(L)) for L in range(h.height + 1)]
        return self._level_sizes

    def level_maps(self):
        """``(maps_flat (device, code_dtype), off[j][a][b] (host int64))`` for every QID and levels
        ``a <= b``: ``maps_flat[off[j, a, b] + code_a] = code_b``.  Every ``off[j, a, a]`` is 0,
        one identity shared by all QIDs (the roll-up's ``IDENTITY_OFFSET``: no gather there)."""
        if self._maps is None:
            hmax = int(self.heights.max())
            q = len(self.hierarchies)
            off = np.zeros((q, hmax + 1, hmax + 1), dtype=np.int64)
            parts = [np.arange(max((len(h.labels(0)) for h in self.hierarchies), default=0))]
            pos = len(parts[0])
            for j, h in enumerate(self.hierarchies):
                for a in range(h.height + 1):
                    for b in range(a + 1, h.height + 1):
                        m = h.upmap(a, b)
                        off[j, a, b] = pos
                        parts.append(m)
                        pos += len(m)
            self._maps = (self.backend.asarray(np.concatenate(parts).astype(self.code_dtype)), off)
        return self._maps

    def generalize(self, levels, qi_codes: Sequence) -> Array:
        """Device (n, q): leaf codes ``qi_codes`` (one array per QID) at node ``levels``."""
        xp = self.backend.xp
        maps, off = self.level_maps()
        return xp.stack([maps[int(off[j, 0, int(levels[j])]) + codes.astype(xp.int64)]
                         for j, codes in enumerate(qi_codes)], axis=1)

    def class_set(self, levels, class_codes) -> groupby.KeySet:
        """The distinct classes ``class_codes`` (F, q) of node ``levels`` (arrays of the
        backend) prepared for :meth:`~gpuppdp.kernels.groupby.KeySet.contains`: which rows (their
        codes at the node) are in one of them?  Built once, tested chunk after chunk."""
        radix = self.node_radix(np.asarray(levels).reshape(1, -1))[0, :-1]
        return groupby.KeySet(self.backend.xp, class_codes, radix)

    def frequency_set(self) -> FrequencySet:
        """The bottom node's frequency set (one pass over the rows, kept)."""
        if self._bottom is None:
            assert self.qi_codes is not None  # (a chunked table's set is built as it is read)
            xp, dtype = self.backend.xp, self.code_dtype
            codes = xp.stack([c.astype(dtype, copy=False) for c in self.qi_codes], axis=1)
            self._bottom = self.bottom_of(codes, self.sens_codes, 0)
        return self._bottom

    def bottom_of(self, row_codes, sens_codes, first_row: int,
                  backend: Backend | None = None) -> FrequencySet:
        """The bottom frequency set of rows ``first_row, first_row + 1, ...`` whose leaf codes
        are ``row_codes`` (n, q) and carried sensitive codes ``sens_codes`` (``None``: none),
        arrays of ``backend`` (default the table's), where it is computed."""
        backend = backend or self.backend
        xp = backend.xp
        n = int(row_codes.shape[0])
        sens = (sens_codes.astype(xp.int32) if sens_codes is not None
                else xp.zeros(n, dtype=xp.int32))
        return self._merged(row_codes, sens, xp.ones(n, dtype=xp.int64),
                            xp.arange(first_row, first_row + n, dtype=xp.int64), backend)

    def merge(self, sets: list[FrequencySet], backend: Backend | None = None) -> FrequencySet:
        """One bottom frequency set of the rows of ``sets`` (bottom sets of consecutive row
        ranges, in row order): equal entries merged, counts summed, the first row kept.
        ``sets`` is emptied, and each field's parts are let go once concatenated, so that a
        caller holding no other reference does not keep them through the roll-up.
        ``backend``: where the sets are and the merge runs (default the table's)."""
        if len(sets) == 1:
            return sets.pop()
        backend = backend or self.backend
        xp = backend.xp
        fields = [[getattr(fs, name) for fs in sets] for name in ("codes", "sens", "count",
                                                                   "first")]
        sets.clear()
        n = sum(int(p.shape[0]) for p in fields[0])
        # a large merge on the CPU reads counts and first rows in 4 bytes when the rows allow
        # (the partitioned roll-up's source only: its output is int64 as always)
        narrow = (not backend.is_gpu and n >= MERGE_NARROW_ENTRIES
                  and sum(int(c.sum()) for c in fields[2]) < 1 << 31)
        columns = []
        for name, parts in zip(("codes", "sens", "count", "first"), fields):
            if name == "sens" and self.n_sens <= 1:  # all 0: zero pages, never resident
                columns.append(xp.zeros(n, dtype=xp.int32))
            elif narrow and name in ("count", "first"):
                columns.append(np.concatenate(parts, dtype=np.int32, casting="same_kind"))
            else:
                columns.append(xp.concatenate(parts))
            parts.clear()
        codes, sens, count, first = columns
        return self._merged(codes, sens, count, first, backend=backend)

    def _merged(self, codes, sens, count, first, backend: Backend | None = None
                ) -> FrequencySet:
        backend = backend or self.backend
        q = len(self.hierarchies)
        maps, _ = self.level_maps()
        if backend is not self.backend:
            maps = backend.asarray(self.backend.to_host(maps))
        bottom = np.zeros((1, q), dtype=np.int64)
        codes, sens, count, first, ptr, host_ptr = kernels.rollup(
            backend, codes, sens, count, first, np.array([0]), np.array([len(count)]),
            np.full((1, q), IDENTITY_OFFSET), maps, self.node_radix(bottom))
        return FrequencySet(bottom, codes, sens, count, first, backend.asarray(ptr), host_ptr)


def check_complete(data: "pd.DataFrame | pa.Table", columns: Sequence[str],
                   row_offset: int) -> None:
    """A clear error for the first missing value (null, NaN, None) in ``columns`` of
    ``data`` (a DataFrame, or an Arrow table as pandas would read it), rows numbered from
    ``row_offset``."""
    for c in columns:
        miss = _missing(data[c])
        if miss is not None and miss.any():
            first = row_offset + int(np.flatnonzero(miss)[0])
            error = SchemaError(
                f"column {c!r} has {int(miss.sum())} missing value(s) (NaN/None), first at "
                f"row {first}; fill or remove them, or add a label for them to the hierarchy "
                "and encode them as that label")
            error.row = first  # the command line names the file's line instead
            raise error


def _missing(values) -> np.ndarray | None:
    """Which values of a pandas or Arrow column are missing as pandas sees them (an Arrow null,
    or a NaN, which pandas reads as missing); ``None`` when none is."""
    if isinstance(values, pd.Series):
        return values.isna().to_numpy() if values.hasnans else None

    if not values.null_count and not pa.types.is_floating(values.type):
        return None
    return pc.is_null(values, nan_is_null=True).to_numpy(zero_copy_only=False)


def with_null(values):
    """``(values, missing)``: a pandas or Arrow column with every missing cell (null, NaN,
    None) ARX's ``NULL``, and which cells were missing (``None``, ``values`` unchanged, when
    none was)."""
    miss = _missing(values)
    if miss is None or not miss.any():
        return values, None
    if not isinstance(values, pd.Series):
        values = values.to_pandas()
    return values.astype(object).where(~miss, NULL), miss


def missing_error(column: str, h: Hierarchy, miss: np.ndarray, row_offset: int
                  ) -> SchemaError:
    """The error for missing cells of a quasi-identifier whose hierarchy has no ``NULL``."""
    first = row_offset + int(np.flatnonzero(miss)[0])
    top = h.labels(h.height)
    row = ";".join([NULL] * (h.height + (len(top) != 1)) + ([str(top[0])] if len(top) == 1
                                                            else []))
    error = SchemaError(
        f"column {column!r} has {int(miss.sum())} missing value(s) (NaN/None), first at row "
        f"{first}; as ARX, a missing value is the value {NULL}, which the hierarchy of "
        f"{column!r} lacks: add a row for it (e.g. {row!r}, or {NULL} mapped into its "
        "levels as any value), or fill or remove the missing values")
    error.row = first  # the command line names the file's line instead
    return error


def leaf_codes(data: "pd.DataFrame | pa.Table", qi_names, hierarchies, row_offset: int
               ) -> list[np.ndarray]:
    """Host leaf codes of every QID column of ``data`` (rows numbered from ``row_offset`` in
    errors); a missing cell is the leaf ``NULL`` (:func:`with_null`)."""
    out = []
    for c, h in zip(qi_names, hierarchies):
        values, miss = with_null(data[c])
        if miss is not None and not (h.leaves == NULL).any():
            raise missing_error(c, h, miss, row_offset)
        try:
            out.append(encode_column(values, domain=h.leaf_domain, name=c)[0])
        except UnknownValuesError as exc:
            raise exc.at(row_offset) from None
    return out


def table_roles(data: pd.DataFrame, schema: Schema) -> dict:
    """The role of each column of ``data`` (a pandas or cuDF frame) under ``schema``; an
    empty table and duplicate column names are errors."""
    if len(data) == 0:
        raise SchemaError("the table is empty (0 rows)")
    duplicated = data.columns[data.columns.duplicated()].unique().tolist()
    if duplicated:
        raise SchemaError(f"the table has duplicate column names: {format_values(duplicated)}")
    return schema.resolve(list(data.columns))


def encode(data: pd.DataFrame, schema: Schema, backend: Backend,
           sensitive_attributes: Sequence[str] | str | None = ()) -> EncodedTable:
    """Encode ``data`` under ``schema`` on ``backend``.

    QIDs are taken in the table's column order (as ARX does).  ``sensitive_attributes`` are the
    sensitive columns the privacy models refer to (each must have the sensitive role).  Missing
    values in a QID or sensitive column, and QID values absent from their hierarchy, raise
    errors that name the column and list the values.
    """
    if not isinstance(data, pd.DataFrame):
        kind = type(data).__module__.partition(".")[0]
        raise InputTypeError("data must be a pandas DataFrame, got "
                             + ("" if kind == "builtins" else kind + ".") + type(data).__name__)
    roles = table_roles(data, schema)
    qi_names = [c for c in data.columns if roles[c] is Role.QUASI_IDENTIFYING]
    check_complete(data, schema.microaggregated, 0)
    hierarchies = [schema.quasi_identifiers[c] for c in qi_names]
    qi_codes = [backend.asarray(c) for c in leaf_codes(data, qi_names, hierarchies, 0)]
    enc = EncodedTable(backend, qi_names, hierarchies, qi_codes, len(data), roles=roles,
                       microaggregation={c: a.typed(data[c])
                                         for c, a in schema.microaggregation.items()},
                       types=dict(schema.types))
    sensitive = SensitiveEncoder(sensitive_names(sensitive_attributes), roles)
    if sensitive.names:
        carried = sensitive.encode(data)
        enc.sens_codes = backend.asarray(carried.astype(smallest_int_dtype(sensitive.n_carried)))
        sensitive.finish(enc)
    return enc


def sensitive_names(sensitive_attributes) -> list[str]:
    if sensitive_attributes is None:
        return []
    if isinstance(sensitive_attributes, str):
        return [sensitive_attributes]
    return list(dict.fromkeys(sensitive_attributes))


class SensitiveEncoder:
    """Dictionary-encodes the sensitive attributes the models refer to, chunk after chunk, and
    the code the frequency set carries: each attribute's labels and (with several attributes)
    the combinations of their values numbered in order of first appearance in the whole table,
    whatever the chunking."""

    def __init__(self, names: list[str], roles: dict):
        for name in names:
            if roles.get(name) not in (Role.SENSITIVE, Role.MICROAGGREGATED):
                raise SchemaError(f"privacy models refer to {name!r}, which is not a sensitive "
                                  "attribute of the schema")
        self.names = names
        self._labels = [ColumnDictionary() for _ in names]
        self._counts = [np.zeros(0, dtype=np.int64) for _ in names]
        self._combinations: dict = {}                          # tuple of codes -> carried code

    @property
    def n_carried(self) -> int:
        if len(self.names) > 1:
            return len(self._combinations)
        return len(self._labels[0]) if self.names else 1

    def encode(self, data: pd.DataFrame, weights=None) -> np.ndarray:
        """Host int64 carried code of every row of ``data``; ``weights`` (optional) is the
        number of records each row stands for (distinct rows of a partition, see
        :mod:`gpuppdp.cluster`)."""
        codes = []
        for i, name in enumerate(self.names):
            col = self._labels[i].encode(with_null(data[name])[0])
            counts = np.bincount(col, weights=weights,
                                 minlength=len(self._labels[i])).astype(np.int64)
            counts[:len(self._counts[i])] += self._counts[i]
            self._counts[i] = counts
            codes.append(col)
        if len(codes) == 1:
            return codes[0]
        # the carried code numbers the combinations that occur (keys stay below rows x values)
        group, rep, _ = groupby.group(np, codes, None)
        seen = self._combinations
        keys = zip(*(c[rep].tolist() for c in codes))
        lut = np.array([seen.setdefault(key, len(seen)) for key in keys], dtype=np.int64)
        return lut[group]

    def finish(self, enc: EncodedTable) -> None:
        """Record the attributes (labels, counts, maps from the carried code) on ``enc``."""
        backend = enc.backend
        enc.n_sens = self.n_carried
        combos = np.array(list(self._combinations), dtype=np.int64).reshape(-1, len(self.names))
        for i, name in enumerate(self.names):
            labels = self._labels[i].labels
            from_carried = None if len(self.names) == 1 else backend.asarray(combos[:, i])
            enc.sensitive[name] = SensitiveColumn(backend.asarray(self._counts[i]), labels,
                                                  from_carried)
