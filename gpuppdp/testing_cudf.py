"""A strict cuDF stand-in, so the cuDF code path (:mod:`gpuppdp.device_frames`) runs in CI
without a GPU.

:func:`strict_cudf` returns a module named ``cudf`` whose ``DataFrame``, ``Series`` and
``Index`` hold pandas objects on a pretend device; put it in ``sys.modules["cudf"]`` (tests:
``monkeypatch.setitem``) and run with :func:`gpuppdp.testing.strict_backend`, whose arrays are
the device arrays this module hands out and takes.  It refuses what cuDF refuses:

* implicit conversion to the host: ``__array__`` and ``tolist`` raise ``TypeError``, a
  ``Series`` or ``Index`` is not iterable (cuDF 26.10: ``Frame.__array__``,
  ``NotIterable.__iter__``, ``Series.tolist``);
* ``Series.values`` of a column that is not numeric (cuDF cannot make a CuPy array of strings);
* arguments a method of cuDF does not have: each call is bound to the parameters of the same
  method in cuDF 26.10.02 (:data:`CUDF_PARAMETERS`, read with :func:`inspect.signature` from the
  installed wheel, which imports without a GPU under ``CUDF_NO_INITIALIZE=1``).

It is stricter than cuDF in one place, on purpose: ``Series.take`` accepts only device arrays,
so a release that gathers with a host index (a transfer per column) fails here.  Every
device-to-host transfer of the data is counted (:func:`host_cells`), so a test can assert that a
table's rows never leave the device.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np
import pandas as pd

from .core.codes import encode_column
from .testing import StrictArray, asnumpy, strict_backend

__all__ = ["strict_cudf", "host_cells", "CUDF_PARAMETERS"]

#: ``(name, kind, has_default)`` of the parameters (``self`` left out) of the cuDF 26.10.02
#: methods the stand-in has; ``kind`` is :class:`inspect.Parameter`'s (1 positional or
#: keyword, 2 ``*args``, 3 keyword-only, 4 ``**kwargs``)
CUDF_PARAMETERS: dict[str, list[tuple[str, int, bool]]] = {
    "DataFrame": [("data", 1, True), ("index", 1, True), ("columns", 1, True), ("dtype", 1, True),
                  ("copy", 1, True), ("nan_as_null", 1, True)],
    "DataFrame.to_pandas": [("nullable", 3, True), ("arrow_type", 3, True)],
    "DataFrame.to_parquet": [("path", 1, False), ("engine", 1, True), ("compression", 1, True),
                             ("index", 1, True), ("partition_cols", 1, True),
                             ("partition_file_name", 1, True), ("partition_offsets", 1, True),
                             ("statistics", 1, True), ("metadata_file_path", 1, True),
                             ("int96_timestamps", 1, True), ("row_group_size_bytes", 1, True),
                             ("row_group_size_rows", 1, True), ("max_page_size_bytes", 1, True),
                             ("max_page_size_rows", 1, True), ("storage_options", 1, True),
                             ("return_metadata", 1, True), ("use_dictionary", 1, True),
                             ("header_version", 1, True), ("skip_compression", 1, True),
                             ("column_encoding", 1, True), ("column_type_length", 1, True),
                             ("output_as_binary", 1, True), ("args", 2, False),
                             ("kwargs", 4, False)],
    "DataFrame.to_csv": [("path_or_buf", 1, True), ("sep", 1, True), ("na_rep", 1, True),
                         ("columns", 1, True), ("header", 1, True), ("index", 1, True),
                         ("encoding", 1, True), ("compression", 1, True), ("quoting", 1, True),
                         ("lineterminator", 1, True), ("chunksize", 1, True),
                         ("storage_options", 1, True)],
    "Series": [("data", 1, True), ("index", 1, True), ("dtype", 1, True), ("name", 1, True),
               ("copy", 1, True), ("nan_as_null", 1, True)],
    "Series.factorize": [("sort", 1, True), ("use_na_sentinel", 1, True)],
    "Series.take": [("indices", 1, False), ("axis", 1, True)],
    "Series.reset_index": [("level", 1, True), ("drop", 1, True), ("name", 1, True),
                           ("inplace", 1, True), ("allow_duplicates", 1, True)],
    "Series.to_pandas": [("index", 3, True), ("nullable", 3, True), ("arrow_type", 3, True)],
    "Index.to_pandas": [("nullable", 3, True), ("arrow_type", 3, True)],
    "read_parquet": [("filepath_or_buffer", 1, False), ("engine", 1, True), ("columns", 1, True),
                     ("storage_options", 1, True), ("filesystem", 1, True), ("filters", 1, True),
                     ("row_groups", 1, True), ("use_pandas_metadata", 1, True),
                     ("categorical_partitions", 1, True), ("bytes_per_thread", 1, True),
                     ("dataset_kwargs", 1, True), ("nrows", 1, True), ("skip_rows", 1, True),
                     ("allow_mismatched_pq_schemas", 1, True),
                     ("ignore_missing_columns", 1, True), ("case_sensitive_names", 1, True),
                     ("args", 2, False), ("kwargs", 4, False)],
}

_KINDS = {int(kind): kind for kind in inspect._ParameterKind}

_HOST_CELLS = [0]


def host_cells() -> int:
    """Cells of frames copied to the host so far (``to_pandas`` of a ``DataFrame``, ``Series``
    or ``Index``: rows times columns)."""
    return _HOST_CELLS[0]


def _bound(name: str, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by parameter name, or ``TypeError`` as cuDF's own method raises
    for an argument it does not take."""
    params = [inspect.Parameter(p, _KINDS[kind], default=None if has else inspect.Parameter.empty)
              for p, kind, has in CUDF_PARAMETERS[name]]
    try:
        return inspect.Signature(params).bind(*args, **kwargs).arguments
    except TypeError as exc:
        raise TypeError(f"cudf.{name}(): {exc}") from None


def _not_iterable(self):
    raise TypeError(f"{type(self).__name__} object is not iterable. Consider using "
                    "`.to_arrow()`, `.to_pandas()` or `.to_numpy()` if you wish to iterate "
                    "over the values.")


def _no_array(self, dtype=None, copy=None):
    raise TypeError("Implicit conversion to a host NumPy array via __array__ is not allowed, "
                    "To explicitly construct a GPU matrix, consider using .to_cupy()")


class _OnDevice:
    """What cuDF's frames, series and indexes share here: pandas data on the pretend device,
    refused implicit host copies, ``len`` and an explicit ``to_pandas`` (counted)."""

    __module__ = "cudf"  # (each class: a class body sets its own)
    __iter__ = _not_iterable
    __array__ = _no_array
    _pd: Any  # pd.Index, pd.Series or pd.DataFrame

    @classmethod
    def _of(cls, data):
        out = cls.__new__(cls)
        out._pd = data
        return out

    def __len__(self) -> int:
        return len(self._pd)

    def to_pandas(self, *args, **kwargs):
        _bound(f"{type(self).__name__}.to_pandas", args, kwargs)
        _HOST_CELLS[0] += self._pd.size
        return self._pd.copy()


class Index(_OnDevice):
    """``cudf.Index``: the distinct values of a factorized column."""

    __module__ = "cudf"


def _first_appearance_codes(self, *args, **kwargs) -> tuple[StrictArray, Index]:
    """``Series.factorize``: ``(codes, uniques)``, device codes in order of first appearance
    (or of the sorted values), -1 for a null -- through the package's one encoder."""
    given = _bound("Series.factorize", args, kwargs)
    if given.get("use_na_sentinel") is False:
        raise NotImplementedError("the stand-in marks nulls with -1 only")
    codes, labels = encode_column(self._pd, sort=bool(given.get("sort")))
    missing = pd.isna(pd.Series(labels, dtype=object)).to_numpy()
    renumbered = np.cumsum(~missing) - 1
    renumbered[missing] = -1
    uniques = pd.Index(list(labels[~missing]), dtype=self._pd.dtype if len(labels) else None)
    return strict_backend().asarray(renumbered[codes.astype(np.int64)]), Index._of(uniques)


class Series(_OnDevice):
    """``cudf.Series`` on the pretend device."""

    __module__ = "cudf"
    factorize = _first_appearance_codes

    def __init__(self, *args, **kwargs):
        given = _bound("Series", args, kwargs)
        data = given.get("data")
        if isinstance(data, StrictArray):
            data = asnumpy(data)
        self._pd = pd.Series(data, name=given.get("name"), dtype=given.get("dtype"))

    @property
    def name(self):
        return self._pd.name

    @property
    def dtype(self):
        return self._pd.dtype

    @property
    def values(self) -> StrictArray:
        """A device array of a numeric column (cuDF refuses strings: no CuPy array of them)."""
        if not pd.api.types.is_numeric_dtype(self._pd.dtype):
            raise TypeError(f"cudf Series of dtype {self._pd.dtype} has no CuPy array: use "
                            ".to_pandas() or .to_arrow()")
        return strict_backend().asarray(self._pd.to_numpy())

    def tolist(self):
        raise TypeError("Conversion to host memory lists is currently unsupported")

    def take(self, *args, **kwargs) -> "Series":
        given = _bound("Series.take", args, kwargs)
        indices = given["indices"]
        if not isinstance(indices, StrictArray):
            raise TypeError("the stand-in takes only device arrays (the engine's gathers "
                            f"stay on the device), got {type(indices).__name__}")
        return Series._of(self._pd.take(asnumpy(indices)))

    def reset_index(self, *args, **kwargs) -> "Series":
        given = _bound("Series.reset_index", args, kwargs)
        if not given.get("drop"):
            raise NotImplementedError("the stand-in resets an index with drop=True only")
        return Series._of(self._pd.reset_index(drop=True))


class DataFrame(_OnDevice):
    """``cudf.DataFrame`` on the pretend device: its columns are :class:`Series`."""

    __module__ = "cudf"

    def __init__(self, *args, **kwargs):
        given = _bound("DataFrame", args, kwargs)
        data = given.get("data")
        if isinstance(data, dict):
            data = {k: v._pd if isinstance(v, Series) else v for k, v in data.items()}
        self._pd = pd.DataFrame(data, columns=given.get("columns"))

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame) -> "DataFrame":
        """A copy of ``frame`` on the pretend device."""
        return cls._of(frame.reset_index(drop=True).copy())

    def __iter__(self):  # (a frame iterates over its column names, as pandas's does)
        return iter(self._pd.columns)

    @property
    def columns(self) -> pd.Index:
        return self._pd.columns

    @property
    def shape(self) -> tuple[int, ...]:
        return self._pd.shape

    def __getitem__(self, key):
        """One column by name (a :class:`Series`) or several, by a list of names (a frame)."""
        if isinstance(key, list):
            return DataFrame.from_pandas(self._pd[key])
        if not isinstance(key, str):
            raise NotImplementedError("the stand-in selects columns by name")
        return Series._of(self._pd[key])

    def __setitem__(self, name: str, column: Series) -> None:
        if not isinstance(column, Series):
            raise TypeError("the stand-in sets a column from a cudf.Series (on the device)")
        self._pd[name] = column._pd.to_numpy()

    def to_parquet(self, *args, **kwargs) -> None:
        given = _bound("DataFrame.to_parquet", args, kwargs)
        self._pd.to_parquet(given["path"], index=given.get("index"))

    def to_csv(self, *args, **kwargs) -> None:
        given = _bound("DataFrame.to_csv", args, kwargs)
        self._pd.to_csv(given.get("path_or_buf"), sep=given.get("sep") or ",",
                        index=given.get("index") is not False)


def read_parquet(*args, **kwargs) -> DataFrame:
    """``cudf.read_parquet`` (a file read into the pretend device)."""
    given = _bound("read_parquet", args, kwargs)
    return DataFrame.from_pandas(pd.read_parquet(given["filepath_or_buffer"],
                                                 columns=given.get("columns")))


def strict_cudf() -> types.ModuleType:
    """The stand-in as a module named ``cudf`` (for ``sys.modules["cudf"]``)."""
    module = types.ModuleType("cudf", __doc__)
    for name, value in (("DataFrame", DataFrame), ("Series", Series), ("Index", Index),
                        ("read_parquet", read_parquet), ("__version__", "26.10.02-strict")):
        setattr(module, name, value)
    return module

