"""The options the subcommands share and their argument types: the catalogue of options
several declare alike (:data:`SHARED`, added by name: :func:`add_shared`), options of one
optional value each (:func:`add_values`), ``--qi`` of ``check`` and ``risk`` and of
``negotiate`` and ``tradeoff``, ``--chunk-rows``, ``--dask``, ``--json``, ``--prior`` (and
its file's reader), the run options (``--metric``, ``--search``, ``--backend``, ...), a
subcommand as data (:class:`Command`, whose parser it builds) and the options of a
differentially private release (its target, the privacy ledger, ``--seed``) with their
checks and printed lines.  Imports only the standard library, so that building the parser
(``gpuppdp --help``) loads no NumPy or pandas."""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from .choices import BACKENDS, METRICS, PREFERENCES, SEARCHES, UNKNOWN

__all__ = ["SHARED", "SEED_HELP", "add_shared", "add_hierarchy_sep_option",
           "add_measured_qi_option", "add_chunk_option", "add_dask_option",
           "add_measuring_options", "add_json_option", "add_prior_option", "read_prior", "Command",
           "add_run_options", "add_encoding_option", "encoding_of", "unassigned_error",
           "add_hierarchy_qi_options", "qi_names", "bound", "add_values",
           "add_privacy_target_options", "add_ledger_options", "add_seed_options",
           "check_ledger_options", "open_ledger", "ledger_record", "epsilon_at", "print_budget",
           "print_seed"]


#: The options several subcommands declare alike: flag -> ``add_argument``'s keywords but the
#: help, which is the command's (:func:`add_shared`).
SHARED: dict[str, dict] = {
    "--metric": {"choices": METRICS, "default": "loss"},
    "--backend": {"choices": BACKENDS, "default": "auto"},
    "--seed": {"type": int, "default": None},
    "--quiet": {"action": "store_true"},
    "--json": {"default": None, "metavar": "OUT.json"},
    "--html": {"default": None, "metavar": "OUT.html"},
    "--hierarchy": {"action": "append", "default": [], "metavar": "COL=FILE.csv"},
    "--hierarchy-sep": {"default": ";", "metavar": "SEP"},
    "--level": {"action": "append", "default": [], "metavar": "COL=LEVEL"},
    "--unknown": {"choices": UNKNOWN, "default": "error"},
    "--public-domain": {"action": "store_true"},
}


#: --seed of a release's row permutation (anonymize, demo, report, negotiate)
SEED_HELP = "seed of the release's row permutation (default: OS entropy)"


def add_shared(p: argparse.ArgumentParser, **helps) -> None:
    """Add the :data:`SHARED` options named by ``helps`` (``hierarchy_sep``: --hierarchy-sep),
    in their order; each value is the option's help (None: none) or a dict of its help and
    the keywords in which the command's option differs (``{"help": ..., "default": "cpu"}``).
    A default list is the parser's own copy."""
    for name, text in helps.items():
        flag = "--" + name.replace("_", "-")
        own = text if isinstance(text, dict) else {"help": text}
        keywords = {k: v.copy() if isinstance(v, list) else v for k, v in SHARED[flag].items()}
        p.add_argument(flag, **{**keywords, **own})


def _fraction(text: str) -> float:
    """``0.05`` or ``5%`` -> 0.05."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction like 0.05 or 5%, got {text!r}")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected positive seconds, got {text!r}")
    return value


def _weights(text: str) -> dict[str, float]:
    """``COL=W,COL=W`` -> ``{COL: W}`` (weights finite and >= 0)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.rpartition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"expected COL=WEIGHT,..., got {part!r}")
        if not (math.isfinite(weight) and weight >= 0):
            raise argparse.ArgumentTypeError(f"the weight of {name!r} must be a number >= 0, "
                                             f"got {value!r}")
        out[name] = weight
    return out


def _gs_factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _qi_spec(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path:
        raise argparse.ArgumentTypeError(
            f"quasi-identifier {text!r} needs a hierarchy: --qi COLUMN=HIERARCHY.csv")
    return name.strip(), path


def bound(option: str):
    """Parser of ``option``'s one finite number >= 0."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"{option} must be a finite number >= 0, got "
                                             f"{text!r}")
        return value

    return parse


def _qi_columns(text: str) -> list[tuple[str, str | None]]:
    """``check``/``risk``: ``COL``, ``COL=HIERARCHY.csv`` (the grammar of ``anonymize``; the
    hierarchy is optional there) or ``COL,COL,...`` -> ``[(name, path or None), ...]``."""
    name, sep, path = text.partition("=")
    if sep:
        if not name.strip() or not path:
            raise argparse.ArgumentTypeError(
                f"--qi expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
        return [(name.strip(), path)]
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"--qi expects COLUMN or COLUMN=HIERARCHY.csv, got {text!r}")
    return [(c, None) for c in names]


def add_measured_qi_option(p: argparse.ArgumentParser) -> None:
    """``--qi COL[=HIERARCHY.csv]`` of ``check`` and ``risk`` (repeatable; several columns
    may follow one --qi, space- or comma-separated) and ``--hierarchy-sep``."""
    p.add_argument("--qi", nargs="+", action="append", required=True, type=_qi_columns,
                   metavar="COL[=HIERARCHY.csv]",
                   help="one or more quasi-identifiers per --qi (space- or comma-separated; "
                   "repeatable), each optionally with its hierarchy as in anonymize (then "
                   "every value of the column must be a label of the hierarchy, at any "
                   "level)")
    add_hierarchy_sep_option(p)


def add_hierarchy_sep_option(p: argparse.ArgumentParser) -> None:
    """``--hierarchy-sep`` of the commands whose hierarchies are files of --qi (no metavar)."""
    add_shared(p, hierarchy_sep={"help": "hierarchy CSV delimiter (default ;)", "metavar": None})


def add_hierarchy_qi_options(p: argparse.ArgumentParser) -> None:
    """``--qi COL=HIERARCHY.csv`` (repeatable, each with its hierarchy), ``--hierarchy-sep``
    and ``--sensitive COL`` of ``negotiate`` and ``tradeoff`` (see :func:`qi_names`)."""
    p.add_argument("--qi", action="append", required=True, type=_qi_spec,
                   metavar="COL=HIERARCHY.csv",
                   help="quasi-identifier and its ARX hierarchy (repeatable)")
    add_hierarchy_sep_option(p)
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")


def qi_names(args) -> list[str]:
    """The columns of :func:`add_hierarchy_qi_options`'s ``--qi`` options, none given twice."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    names = [n for n, _ in args.qi]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"--qi: column given twice: {', '.join(dup)}")
    return names


def add_encoding_option(p: argparse.ArgumentParser, what: str = "INPUT") -> None:
    """``--encoding ENC``: the text encoding of the CSV tables read (default UTF-8)."""
    p.add_argument("--encoding", default="utf-8", metavar="ENC",
                   help=f"text encoding of {what} when CSV (default utf-8, a byte-order mark "
                   "ignored; e.g. latin-1, cp1252)")


def encoding_of(args, where: str | None = None) -> str:
    """``--encoding`` of the command (UTF-8 when it has none); with ``where`` (a reader that
    cannot take another encoding yet, e.g. "--dask") any other encoding is refused."""
    encoding = getattr(args, "encoding", None) or "utf-8"
    if where is not None and encoding.replace("_", "-").lower() not in ("utf-8", "utf8"):
        from ..errors import InputError  # deferred: keeps gpuppdp --help fast

        raise InputError(f"--encoding {encoding} is not supported with {where} yet; convert "
                         "INPUT to UTF-8 (iconv -f ENC -t UTF-8) or leave out " + where)
    return encoding


def unassigned_error(columns: list[str], others: str, option: str = "--others",
                     choices: str = "insensitive|drop") -> None:
    """Columns of INPUT given no role, with ``option`` ``error``: an error listing them (as
    ``anonymize`` does), so that none is dropped or published without a word."""
    if columns and others == "error":
        # deferred: keeps gpuppdp --help from importing NumPy/pandas
        from ..errors import InputError
        from ..validation import format_values

        raise InputError(f"{len(columns)} column(s) have no role: "
                         f"{format_values(columns, 10)}; give each a role, or say what to do "
                         f"with the rest ({option} {choices})")


def add_chunk_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--chunk-rows N`` (see :func:`.measure.chunk_rows_for`); ``what`` says what it does."""
    p.add_argument("--chunk-rows", default=None, metavar="N",
                   help=f"{what}; default: in memory up to 1,048,576 rows (Parquet) or 256 MiB "
                   "(CSV), in chunks of that many rows above")


def add_dask_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--dask local:N|local-cuda:N|tcp://HOST:PORT``; ``what`` says what runs on the
    cluster."""
    p.add_argument("--dask", default=None, metavar="local:N|local-cuda:N|tcp://HOST:PORT",
                   help=f"{what} on a Dask cluster: a new local cluster of N worker "
                   "processes (local-cuda: dask-cuda's, one GPU per worker), or a running "
                   "scheduler")


def add_measuring_options(p: argparse.ArgumentParser, measured: str, backend: str,
                          backend_help: str) -> None:
    """``--backend`` (default ``backend``), ``--quiet``, ``--chunk-rows`` and ``--dask`` of a
    command that measures INPUT's ``measured`` (its frequency set, its distinct QID
    combinations)."""
    add_shared(p, backend={"default": backend, "help": backend_help},
               quiet="no progress on stderr")
    add_chunk_option(p, f"read INPUT N rows at a time and measure {measured} (memory follows "
                     "the classes, not the rows; not with --population)")
    add_dask_option(p, f"reduce INPUT's partitions to {measured}")
    add_gpu_io_option(p, f" and reduced to {measured} (not with --population, --perturbed, "
                      "--dask or options that need the rows on the host)")


def add_gpu_io_option(p, what: str) -> None:
    """``--gpu-io auto|cudf|arrow``: how a Parquet INPUT is read (``what``: and what else the
    command does on the device with it)."""
    p.add_argument("--gpu-io", choices=("auto", "cudf", "arrow"), default="auto",
                   help=f"how a Parquet INPUT is read{what}: cudf reads it whole into GPU "
                   "memory (a GPU backend and cuDF: pip install 'gpuppdp[gpu-frames]'), arrow "
                   "through host memory (in chunks when large); auto (default) takes cudf when "
                   "the backend is a GPU, cuDF is installed and twice the file's uncompressed "
                   "size fits in the GPU's free memory")


def add_json_option(p, what: str, metavar: str = "OUT.json", required: bool = False) -> None:
    """``--json OUT.json``: write ``what`` as JSON."""
    add_shared(p, json={"metavar": metavar, "required": required,
                        "help": f"write {what} as JSON"})


def add_prior_option(p, what: str = "of the privacy losses") -> None:
    """``--prior PRIOR.csv`` (see :func:`read_prior`), the prior ``what`` uses."""
    p.add_argument("--prior", default=None, metavar="PRIOR.csv",
                   help=f"prior distribution of the sensitive values {what}: a CSV of value and "
                   "probability per line (default: the table's own)")


def read_prior(path: str) -> dict:
    """A prior distribution from a CSV file of ``value, probability`` lines (a header line is
    allowed; delimiter detected): ``{value: probability}``, values as strings."""
    # deferred: keeps gpuppdp --help from importing NumPy/pandas
    from ..errors import InputError
    from ..io import sniff_delimiter

    delimiter = sniff_delimiter(path, ";,\t|", default=",")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [row for row in csv.reader(fh, delimiter=delimiter) if any(f.strip() for f in row)]
    prior = {}
    for number, row in enumerate(rows, 1):
        if len(row) != 2:
            raise InputError(f"--prior {path}, line {number}: expected value{delimiter}"
                             f"probability, got {len(row)} field(s)")
        try:
            prior[row[0]] = float(row[1])
        except ValueError:
            if number == 1:        # a header line
                continue
            raise InputError(f"--prior {path}, line {number}: {row[1]!r} is not a "
                             "probability") from None
    if not prior:
        raise InputError(f"--prior {path} holds no value")
    return prior


def subcommand_group(subparsers, name: str, dest: str, **texts):
    """A subcommand whose second word says what it does (``generate census``, ``attack
    linkage``, ``hierarchy build``): the subparsers of that word (``dest``, required, shown as
    ``DEST``); ``texts`` are the subcommand's ``help`` and ``description``."""
    parent = subparsers.add_parser(name, **texts)
    return parent.add_subparsers(dest=dest, required=True, metavar=dest.upper())


@dataclass(frozen=True)
class Command:
    """A subcommand as data: its ``name``, ``run`` function (``args -> exit status``),
    ``help`` and ``description``, and ``options``, the function adding its own options;
    :meth:`register` builds its parser, so that the header every subcommand would repeat is
    written once.  A ``table`` command reads one table: INPUT, --sep and --encoding first,
    with ``population`` (its help) a --population FILE and with ``json`` a --json OUT.json
    option (see :func:`.measure.read_measured`); ``conflict_handler`` is argparse's."""

    name: str
    run: Callable[[argparse.Namespace], int]
    options: Callable[[argparse.ArgumentParser], None]
    help: str
    description: str | None = None
    table: bool = False
    population: str | None = None
    json: str | None = None
    conflict_handler: str = "error"

    def register(self, subparsers) -> argparse.ArgumentParser:
        """Add the subcommand to an ``argparse`` subparsers object; returns its parser."""
        p = subparsers.add_parser(self.name, help=self.help, description=self.description,
                                  conflict_handler=self.conflict_handler)
        if self.table:
            p.add_argument("input", help="CSV (delimiter sniffed unless --sep) or Parquet file")
            p.add_argument("--sep", default=None, help="CSV delimiter of INPUT (default: sniffed)")
            add_encoding_option(p, "INPUT" if self.population is None
                                else "INPUT (and --population)")
            if self.population is not None:
                p.add_argument("--population", default=None, metavar="FILE",
                               help=self.population)
            if self.json is not None:
                add_shared(p, json=self.json)
        self.options(p)
        # the run function as its module holds it now, as a register function written there
        # would read it (a replaced one, such as a test's, runs)
        p.set_defaults(func=getattr(sys.modules[self.run.__module__], self.run.__name__))
        return p


def add_run_options(p: argparse.ArgumentParser,
                    json_help: str = "write the summary as JSON") -> None:
    """Metric, search, backend, seed, --json and --quiet."""
    add_shared(p, metric="ARX's quality models: loss (default), precision, discernibility, "
               "discernibility-monotonic (DM*), aecs, entropy (non-uniform entropy), "
               "entropy-monotonic, normalized-entropy, height, ambiguity, kl (KL divergence)")
    p.add_argument("--weights", type=_weights, default=None, metavar="COL=W,...",
                   help="attribute weights >= 0 (ARX's setAttributeWeight; 0.5 unless given) "
                   "of loss, precision, entropy, normalized-entropy and height")
    p.add_argument("--gs-factor", type=_gs_factor, default=None, metavar="F",
                   help="ARX's generalization/suppression factor in [0, 1] (default 0.5; 0: "
                   "only suppression costs, 1: only generalization) of loss, precision, "
                   "entropy, entropy-monotonic and aecs")
    p.add_argument("--search", choices=SEARCHES, default="auto",
                   help="auto (default): levels on a GPU, above 100,000 nodes, and on "
                   "tables over 2**20 rows with the loss metric and monotone models; flash "
                   "elsewhere; flash: ARX's algorithm and tie-break (flash and levels switch "
                   "to beam on lattices over 10**7 nodes); "
                   "exhaustive: every node; levels: the lattice level by level in large "
                   "batches, skipping what the bounds rule out (exhaustive's optimum and "
                   "tie-break); lightning (ARX's best-first) and beam (batched top-down beam "
                   "search): heuristics with a time limit; samarati: a k-minimal "
                   "generalization (binary search on the height), see --prefer")
    p.add_argument("--time-limit", type=_positive_seconds, default=None, metavar="SECONDS",
                   help="time budget of a heuristic search (default 30)")
    p.add_argument("--prefer", choices=PREFERENCES, default="height",
                   help="samarati: the k-minimal generalization released -- lowest height "
                   "(default), precision (lowest relative distance), classes (most), "
                   "suppression (least)")
    add_shared(p, backend=None, seed=SEED_HELP, json=json_help, quiet="no progress bar")


# -- a differentially private release: dp-histogram, dp-query and synthesize ----------------

def add_values(p: argparse.ArgumentParser, *options: tuple[str, str | None, str],
               type=None) -> None:
    """Options of one value each, ``(flag, metavar, help)``, None unless given; ``type``
    converts the value (None: the text)."""
    for flag, metavar, text in options:
        p.add_argument(flag, type=type, default=None, metavar=metavar, help=text)


def add_privacy_target_options(p: argparse.ArgumentParser, *, epsilon: str, delta: str,
                               rho: str) -> None:
    """``--epsilon E``, ``--delta D`` and ``--rho R``, the privacy target of a release; their
    help texts are the command's (what they mean depends on its mechanisms)."""
    add_values(p, ("--epsilon", "E", epsilon), ("--delta", "D", delta), ("--rho", "R", rho),
               type=float)


def add_ledger_options(p: argparse.ArgumentParser) -> None:
    """``--budget-file LEDGER.json``, ``--budget EPS``, ``--budget-delta D`` and
    ``--new-ledger``: the privacy ledger shared by every run (:func:`open_ledger`)."""
    add_values(p, ("--budget-file", "LEDGER.json", "JSON ledger of the privacy budget shared "
                   "by every run: the release is refused if it would overspend it, and "
                   "recorded in it"))
    add_values(p, ("--budget", "EPS", "total epsilon of a new --budget-file (an existing ledger "
                   "keeps its own, and a different value is refused)"),
               ("--budget-delta", "D", "total delta of a new --budget-file (needed by the "
                "Gaussian mechanisms, whose zCDP spends are converted at it)"), type=float)
    p.add_argument("--new-ledger", action="store_true",
                   help="start --budget-file with --budget if it does not exist (without it, "
                        "--budget alone starts it with a note on the terminal, and a missing "
                        "ledger without --budget is an error: a deleted ledger never starts "
                        "afresh unnoticed)")


def add_seed_options(p: argparse.ArgumentParser, recovered: str | None = None) -> None:
    """``--seed N`` and ``--insecure-seed``: reproducible noise, refused without the latter
    (:func:`check_ledger_options`); ``recovered``, what anyone with the seed recovers."""
    why = "" if recovered is None else f" (anyone with the seed recovers {recovered})"
    add_shared(p, seed={"metavar": "N", "help": f"reproducible noise for testing: NOT "
                                                f"private{why}; needs --insecure-seed"})
    p.add_argument("--insecure-seed", action="store_true",
                   help="accept --seed for this release, knowing that it is not private")


def check_ledger_options(args, released: str, recovered: str | None = None) -> None:
    """The refusals of :func:`add_ledger_options` and :func:`add_seed_options` that depend only
    on the command line (before the ledger or the data are read); ``released`` names the
    release in the messages."""
    from ..errors import InputError  # deferred: keeps gpuppdp --help fast

    if args.budget_delta is not None and args.budget is None:
        raise InputError("--budget-delta needs --budget (the new ledger's total epsilon)")
    if args.seed is not None and not args.insecure_seed:
        why = "" if recovered is None else f" ({recovered} can be recovered exactly)"
        raise InputError(f"--seed makes the noise reproducible by anyone who knows the "
                         f"seed{why}, so {released} is NOT private; add --insecure-seed to "
                         "accept that (tests and experiments only)")
    if args.insecure_seed and args.seed is None:
        raise InputError("--insecure-seed needs --seed")
    if args.budget is not None and args.budget_file is None:
        raise InputError("--budget needs --budget-file (the ledger it starts)")
    if args.new_ledger and (args.budget_file is None or args.budget is None):
        raise InputError("--new-ledger needs --budget-file and --budget (the ledger to start "
                         "and its total epsilon)")
    if args.budget_file is not None and os.path.realpath(args.budget_file) in {
            os.path.realpath(path) for path in (args.input, args.output) if path is not None}:
        raise InputError(f"--budget-file {args.budget_file} is the input or the output")


def open_ledger(args):
    """The ledger of ``--budget-file``: a context giving its
    :class:`~gpuppdp.dp.accountant.BudgetAccountant` (None without ``--budget-file``); a
    ledger that ``--budget`` alone starts (no ``--new-ledger``) is said on the terminal."""
    from ..dp.accountant import BudgetAccountant  # deferred: keeps gpuppdp --help fast

    if args.budget_file is None:
        return contextlib.nullcontext()
    if args.budget is not None and not args.new_ledger and not os.path.exists(args.budget_file):
        print(f"gpuppdp: note: no ledger at {args.budget_file}: starting a new one with a "
              f"budget of {args.budget:g} (--new-ledger says so and silences this line)",
              file=sys.stderr)
    return BudgetAccountant.open_ledger(args.budget_file, epsilon=args.budget,
                                        delta=args.budget_delta,
                                        create=args.new_ledger or args.budget is not None)


def ledger_record(args, accountant) -> dict | None:
    """The ``ledger`` of a release's ``--json``: the file, the release's entry, the budget and
    what is spent (None without ``--budget-file``)."""
    if accountant is None:
        return None
    eps, delta, how = accountant.composition
    return {"file": os.path.realpath(args.budget_file),
            "entry": accountant.ledger[-1].to_json(),
            "budget": {"epsilon": accountant.total, "delta": accountant.total_delta,
                       "neighbouring": accountant.neighbouring.value},
            "spent": {"epsilon": eps, "delta": delta, "accounting": how}}


def epsilon_at(privacy: dict) -> str:
    """``"; (epsilon, delta) = (E, D)"`` of a zCDP release's record (empty without epsilon)."""
    if privacy["epsilon"] is None:
        return ""
    return f"; (epsilon, delta) = ({privacy['epsilon']:.6g}, {privacy['delta']:.3g})"


def print_budget(args, accountant) -> None:
    """The printed line of the ledger after a release (none without ``--budget-file``)."""
    if accountant is not None:
        eps, delta, how = accountant.composition
        print(f"budget {args.budget_file}: epsilon {eps:g} of {accountant.total:g} spent, "
              f"{accountant.remaining:g} remaining ({how} composition, delta {delta:.3g})")


def print_seed(seed) -> None:
    """The printed line of a ``--seed`` release (none without a seed)."""
    if seed is not None:
        print(f"seed: {seed} (--insecure-seed: the noise is reproducible, NOT private)")
