"""Reading tables: CSV (delimiter detected or given) and Parquet."""

from __future__ import annotations

import csv
import os
from typing import Sequence

import pandas as pd

from .hierarchy import format_values

__all__ = ["read_table", "write_table", "sniff_delimiter"]

_PARQUET = (".parquet", ".pq")
_SNIFF_BYTES = 64 * 1024


def sniff_delimiter(path: str, candidates: str = ";,\t|", default: str | None = None) -> str:
    """The delimiter of a CSV file among ``candidates``; ``default`` (or an error) if unclear."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        sample = fh.read(_SNIFF_BYTES)
    try:
        return csv.Sniffer().sniff(sample, delimiters=candidates).delimiter
    except csv.Error:
        if default is not None:
            return default
        raise ValueError(f"cannot detect the delimiter of {path}; pass sep (CLI: --sep)") \
            from None


def read_table(path: str | os.PathLike, *, sep: str | None = None,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file (optionally only ``columns``).

    CSV values are read as strings (hierarchies match them as strings, as ARX does); only empty
    fields count as missing.  The delimiter is detected among ``; , TAB |`` unless ``sep`` is
    given.  Requested columns that the file lacks raise ``ValueError`` listing them.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"input file not found: {path}")
    try:
        return _read(path, sep, columns)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty") from None


def _read(path: str, sep: str | None, columns: Sequence[str] | None) -> pd.DataFrame:
    parquet = path.lower().endswith(_PARQUET)
    if not parquet and sep is None:
        sep = sniff_delimiter(path)
    if columns is not None:
        if parquet:
            import pyarrow.parquet as pq  # noqa: PLC0415 - only for Parquet input
            available = list(pq.read_schema(path).names)
        else:
            available = list(pd.read_csv(path, sep=sep, nrows=0).columns)
        missing = [c for c in columns if c not in available]
        if missing:
            raise ValueError(f"column(s) {format_values(missing)} not in {path}; its columns "
                             f"are {format_values(available, first=10)}")
        columns = list(columns)
    if parquet:
        return pd.read_parquet(path, columns=columns)
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                       usecols=columns)


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, sep: str = ";") -> None:
    """Write CSV (``sep``-separated) or Parquet, chosen by the file extension."""
    path = os.fspath(path)
    if path.lower().endswith(_PARQUET):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, sep=sep, index=False)
