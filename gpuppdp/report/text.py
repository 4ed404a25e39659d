"""Text helpers of the report pages: escaping and numbers for people."""

from __future__ import annotations

import html


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _num(value, digits: int = 4) -> str:
    """A number for people: ``-`` for None, ints with thousands separators, floats to
    ``digits`` significant digits."""
    if value is None:
        return "-"
    if isinstance(value, (str, bool)):
        return "\u221e" if value == "inf" else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}g}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.3g} %"


def _names(values, empty: str = "none") -> str:
    return ", ".join(str(v) for v in values) if values else empty


def _count_pct(count, total) -> str:
    return f"{_num(count)} ({_pct(count / total)})" if total else _num(count)
