"""Measuring a table, raw or released: :mod:`.checker` (every privacy model's value),
:mod:`.risk` (re-identification risk; with survey weights :mod:`.survey`, special uniques
:mod:`.suda`), :mod:`.utility` (information loss) and
:mod:`.adversary` (posterior beliefs and linkage)."""
