"""The bottom layer of the data path: :mod:`.codes` (a column -> integer codes over a
domain), :mod:`.classes` (equivalence classes as sorted runs of frequency-set entries) and
:mod:`.pipeline` (overlapping a chunked input's reading with its processing).  Nothing here
imports from the engine, the models or anything above them."""
