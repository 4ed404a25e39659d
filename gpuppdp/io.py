"""Reading tables: CSV (delimiter detected or given) and Parquet."""

from __future__ import annotations

import csv
import os

import pandas as pd

__all__ = ["read_table", "write_table"]

_PARQUET = (".parquet", ".pq")


def read_table(path: str | os.PathLike, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file.

    CSV values are read as strings (hierarchies match them as strings, as ARX does); only empty
    fields count as missing.  The delimiter is detected among ``; , TAB |`` unless ``sep`` is
    given.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"input file not found: {path}")
    if path.lower().endswith(_PARQUET):
        return pd.read_parquet(path)
    if sep is None:
        with open(path, newline="", encoding="utf-8") as fh:
            sample = fh.read(64 * 1024)
        try:
            sep = csv.Sniffer().sniff(sample, delimiters=";,\t|").delimiter
        except csv.Error as exc:
            raise ValueError(f"cannot detect the delimiter of {path}; pass sep (CLI: --sep)") \
                from exc
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""])


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, sep: str = ";") -> None:
    """Write CSV (``sep``-separated) or Parquet, chosen by the file extension."""
    path = os.fspath(path)
    if path.lower().endswith(_PARQUET):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, sep=sep, index=False)
