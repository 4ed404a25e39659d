"""The anonymization engine, in the order data flows through it: :mod:`.encoding` (table ->
integer codes and the bottom frequency set), :mod:`.lattice`, :mod:`.evaluate` (batches of
nodes -> classes, model verdicts, metric values), :mod:`.metrics`, :mod:`.search` (the lattice
searches) and :mod:`.transform` (the release)."""

from . import metric_entropy, metric_kl  # noqa: F401,E402  (register theirs in METRICS)
