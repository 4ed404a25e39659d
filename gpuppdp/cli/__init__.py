"""The ``gpuppdp`` command line: one module per subcommand, the shared options in
:mod:`.common`."""

from .main import main

__all__ = ["main"]
