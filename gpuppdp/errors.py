"""The errors meant for the user (bottom layer: imports nothing of the package).

An error a user can fix -- a bad parameter, a value missing from a hierarchy, a file that cannot
be read, a problem with no solution -- derives from :class:`UserError`.  The command line shows
a :class:`UserError` as one line (``gpuppdp: error: ...``, exit status 2); anything else is a
bug and shows its traceback.  The subclasses also derive from the built-in type that names the
kind of mistake (``ValueError`` for a bad value, ``TypeError`` for a wrong type, ``KeyError``
for a missing name), so code written against the built-in types keeps working (as
scikit-learn's ``NotFittedError`` derives from ``ValueError`` and ``AttributeError``).
"""

from __future__ import annotations

__all__ = ["UserError", "InputError", "InputTypeError", "MissingNameError", "hinted"]


class UserError(Exception):
    """An error in what the user asked for or gave; its message says what to change."""

    #: where set, what the command line shows instead of the message (see :func:`hinted`)
    cli: str
    #: where set, the row the error is at, which the command line names as the file's line
    row: int | None


class InputError(UserError, ValueError):
    """A parameter or a value in the data that is not allowed (names the parameter or the
    offending values)."""


class InputTypeError(UserError, TypeError):
    """A parameter of the wrong type."""


class MissingNameError(UserError, KeyError):
    """A column, attribute or option that is not there."""

    def __str__(self) -> str:  # KeyError quotes its message; a user reads it as a sentence
        return str(self.args[0]) if self.args else ""


def hinted(message: str, python: str, cli: str, kind: type = InputError) -> UserError:
    """An error whose remedy depends on the interface: ``message`` then ``python`` (the
    parameter to pass) as its text, then ``cli`` (the flag) as its ``cli`` attribute, which
    the command line shows instead."""
    error = kind(message + python)
    error.cli = message + cli
    return error
