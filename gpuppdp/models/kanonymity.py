"""k-anonymity (Sweeney 2002).
"""

from __future__ import annotations

from ..validation import check_int
from .base import PrivacyModel

__all__ = ["KAnonymity"]


class KAnonymity(PrivacyModel):
    """k-anonymity: every equivalence class holds at least ``k`` records (Sweeney 2002)."""

    compiled_kind = "size"

    def __init__(self, k: int):
        self.k = check_int("k", k, 1)
        self.min_class_size = self.k

    def describe(self) -> dict:
        return {"model": "k-anonymity", "k": self.k}

    def __repr__(self) -> str:
        return f"KAnonymity(k={self.k})"
