"""Measuring a table, raw or released: :mod:`.checker` (every privacy model's value),
:mod:`.risk` (re-identification risk), :mod:`.utility` (information loss) and
:mod:`.adversary` (posterior beliefs and linkage)."""
