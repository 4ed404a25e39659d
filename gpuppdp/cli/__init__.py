"""The ``gpuppdp`` command line: one module per subcommand (``anonymize``/``demo``, ``check``,
``risk``, ``report``, ``dp-histogram``, ``generate``, ``attack``, ``anatomize``,
``negotiate``) and the pieces they share: :mod:`.options` (option builders, argument types),
:mod:`.common` (the model options and the privacy models they build), :mod:`.progress`,
:mod:`.measure` (``check``/``risk``), :mod:`.run` (``anonymize``/``demo``/``report``) and
:mod:`.main` (the parser, errors and exit statuses)."""

from .main import main

__all__ = ["main"]
