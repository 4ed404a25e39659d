"""The anonymization engine, in the order data flows through it: :mod:`.encoding` (table ->
integer codes and the bottom frequency set), :mod:`.lattice`, :mod:`.classes` and
:mod:`.evaluate` (batches of nodes -> classes, model verdicts, metric values), :mod:`.metrics`,
:mod:`.search` (Flash and exhaustive), :mod:`.heuristic` (Lightning and beam search for
lattices too large to walk) and :mod:`.transform` (the release)."""
