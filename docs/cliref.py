"""A Sphinx extension that renders the command-line reference from the argparse parser.

``.. gpuppdp-cli::`` imports :func:`gpuppdp.cli.main.build_parser` and writes, for the
top-level command and every subcommand (``generate census``, ``attack linkage`` ... included),
its description, its usage line and every option with its help text, grouped as argparse
groups them.  Nothing is copied by hand: a new option appears in the docs at the next build.

:func:`walk` and :func:`describe` hold the logic without Sphinx, so ``tests/test_docs.py``
checks the reference against the parser directly.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

# usage lines wrapped at a fixed width, whatever the terminal that runs the build
_WIDTH = "88"


@dataclass
class Option:
    """One argument: how it is written, its metavariable and its help text."""

    names: list[str]
    metavar: str
    help: str
    choices: list[str] = field(default_factory=list)


@dataclass
class Command:
    """One parser: ``gpuppdp`` or a subcommand, with its options by group."""

    prog: str
    description: str
    usage: str
    groups: list[tuple[str, list[Option]]]
    epilog: str = ""


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = _WIDTH
    try:
        return parser._get_formatter()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _option(parser: argparse.ArgumentParser, action: argparse.Action) -> Option:
    formatter = _formatter(parser)
    text = formatter._expand_help(action) if action.help else ""
    if action.option_strings:
        names = list(action.option_strings)
        metavar = "" if action.nargs == 0 else formatter._format_args(
            action, formatter._get_default_metavar_for_optional(action))
    else:
        default = formatter._get_default_metavar_for_positional(action)   # the dest
        names = [action.metavar if isinstance(action.metavar, str) else default]
        metavar = formatter._format_args(action, default)   # with nargs: FILE [FILE ...]
    choices = [str(c) for c in action.choices] if action.choices is not None and not isinstance(
        action, argparse._SubParsersAction) else []
    return Option(names, metavar, " ".join(text.split()), choices)


def describe(parser: argparse.ArgumentParser) -> Command:
    """The description, usage and options of one parser (its subparsers left out)."""
    groups = []
    for group in parser._action_groups:
        options = [_option(parser, a) for a in group._group_actions if a.help != argparse.SUPPRESS
                   and not isinstance(a, argparse._SubParsersAction)]
        if options:
            groups.append((group.title or "options", options))
    return Command(parser.prog, " ".join((parser.description or "").split()), _usage(parser),
                   groups, " ".join((parser.epilog or "").split()))


def walk(parser: argparse.ArgumentParser) -> list[Command]:
    """Every command of the tree, depth first: the parser, then each subcommand in order."""
    commands = [describe(parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for sub in action.choices.values():
                if id(sub) not in seen:          # aliases share their parser
                    seen.add(id(sub))
                    commands.extend(walk(sub))
    return commands


def commands() -> list[Command]:
    """The whole ``gpuppdp`` command tree."""
    from gpuppdp.cli.main import build_parser  # deferred: imported when the directive runs
    return walk(build_parser())


def setup(app):
    """Register the ``gpuppdp-cli`` directive."""
    from docutils import nodes  # deferred: Sphinx's dependency, needed only in a docs build
    from sphinx.util.docutils import SphinxDirective  # deferred: as above

    def paragraph(text: str) -> nodes.paragraph:
        return nodes.paragraph(text, text)

    def option_item(option: Option) -> nodes.definition_list_item:
        spelled = ", ".join(f"{n} {option.metavar}".strip() if n.startswith("-")
                            else option.metavar or n for n in option.names)
        term = nodes.term("", "", nodes.literal(spelled, spelled))
        body = nodes.definition()
        if option.help:
            body += paragraph(option.help)
        if option.choices and not option.metavar.startswith("{"):
            body += paragraph("choices: " + ", ".join(option.choices))
        return nodes.definition_list_item("", term, body)

    class CliReference(SphinxDirective):
        has_content = False

        def run(self):
            out = []
            for command in commands():
                section = nodes.section()
                section["ids"].append(nodes.make_id("cli " + command.prog))
                section["names"].append(nodes.fully_normalize_name(command.prog))
                section += nodes.title("", "", nodes.literal(command.prog, command.prog))
                if command.description:
                    section += paragraph(command.description)
                section += nodes.literal_block(command.usage, command.usage, language="text")
                for title, options in command.groups:
                    section += nodes.rubric(title, title)
                    listing = nodes.definition_list()
                    for option in options:
                        listing += option_item(option)
                    section += listing
                if command.epilog:
                    section += paragraph(command.epilog)
                self.state.document.note_implicit_target(section)
                out.append(section)
            return out

    app.add_directive("gpuppdp-cli", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
