"""Nothing lost, nothing leaked: every output is checked before any work (never an input, never
twice, its folder there and writable, its ending the format), written to a temporary file and
renamed into place only when all of a run's outputs are complete; interrupts end with one line
and status 130; malformed inputs (repeated column names) are refused, byte-order marks
ignored."""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from gpuppdp import Hierarchy, datasets
from gpuppdp.cli.main import main
from gpuppdp.io import TABLE_SUFFIXES, TEMP_MARK, OutputError, OutputPlan, read_table
from gpuppdp.engine.transform import RowBuckets
from gpuppdp import stops
from gpuppdp.stops import interrupts_deferred, temporary_folder

SCRIPT = Path(sys.executable).parent / "gpuppdp"
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}
QI = ["--qi", f"sex={datasets.adult_path('adult_hierarchy_sex.csv')}",
      "--qi", f"race={datasets.adult_path('adult_hierarchy_race.csv')}"]
OLD = "previous contents\n"


@pytest.fixture
def table(tmp_path) -> Path:
    data, _ = datasets.adult()
    path = tmp_path / "data.csv"
    data.loc[:199, ["sex", "race", "age"]].to_csv(path, sep=";", index=False)
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def anonymize(capsys, table, *outputs):
    return cli(capsys, "anonymize", table, *QI, "--others", "insensitive", "--k", "2",
               "--quiet", "--seed", "1", *outputs)


def refused(rc, out, err, *fragments) -> str:
    """One error line, status 2, and no work done (the search prints its summary first)."""
    assert rc == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuppdp: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if TEMP_MARK in p.name)


# -- an input is never an output -----------------------------------------------------------------
@pytest.mark.parametrize("option", ["--output", "--json"])
def test_output_is_the_input(capsys, table, option):
    before = table.read_bytes()
    other = "--json" if option == "--output" else "--output"
    rc, out, err = anonymize(capsys, table, option, table, other,
                             table.with_name("other" + (".json" if other == "--json" else ".csv")))
    refused(rc, out, err, f"{option} {table} is an input of this run")
    assert table.read_bytes() == before
    assert temporaries(table.parent) == []


def test_output_is_the_input_through_a_symlink_or_hard_link(capsys, table):
    before = table.read_bytes()
    (table.parent / "link.csv").symlink_to(table)
    os.link(table, table.parent / "hard.csv")
    for name in ("link.csv", "hard.csv"):
        rc, out, err = anonymize(capsys, table, "--output", table.parent / name)
        refused(rc, out, err, "is an input of this run")
    # and the input named through a link, the output by its real name
    rc, out, err = anonymize(capsys, table.parent / "link.csv", "--output", table)
    refused(rc, out, err, "is an input of this run")
    assert table.read_bytes() == before


def test_output_is_a_hierarchy(capsys, table, tmp_path):
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text("Male;*\nFemale;*\n")
    rc, out, err = cli(capsys, "anonymize", table, "--qi", f"sex={hierarchy}",
                       "--others", "insensitive", "--k", "2", "--output", tmp_path / "o.csv",
                       "--json", hierarchy)
    refused(rc, out, err, f"--json {hierarchy} is an input")
    assert hierarchy.read_text() == "Male;*\nFemale;*\n"


def test_report_html_is_the_input(capsys, table):
    before = table.read_bytes()
    rc, out, err = cli(capsys, "report", table, *QI, "--others", "insensitive", "--k", "2",
                       "--quiet", "--html", table)
    refused(rc, out, err, f"--html {table} is an input")
    assert table.read_bytes() == before


def test_demo_output_is_a_bundled_file(capsys):
    rc, out, err = cli(capsys, "demo", "--quiet", "--output", datasets.adult_path())
    refused(rc, out, err, "is an input of this run")


def test_check_risk_dp_histogram_refuse_their_inputs(capsys, table, tmp_path):
    before = table.read_bytes()
    population = tmp_path / "population.csv"
    population.write_bytes(before)
    for argv in (["check", table, "--qi", "sex", "--json", table],
                 ["risk", table, "--qi", "sex", "--population", population, "--json",
                  population],
                 ["dp-histogram", table, "--by", "sex", "--epsilon", "1", "--output", table]):
        rc, out, err = cli(capsys, *argv)
        refused(rc, out, err, "is an input of this run")
    assert table.read_bytes() == before == population.read_bytes()


# -- checked before any work ----------------------------------------------------------------
@pytest.mark.parametrize("command", ["anonymize", "report"])
def test_missing_folder_refused_before_any_work(capsys, table, tmp_path, command):
    old_csv, old_html = tmp_path / "old.csv", tmp_path / "old.html"
    old_csv.write_text(OLD)
    old_html.write_text(OLD)
    missing = tmp_path / "missing" / "summary.json"
    argv = [command, table, *QI, "--others", "insensitive", "--k", "2", "--quiet",
            "--output", old_csv, "--json", missing]
    if command == "report":
        argv += ["--html", old_html]
    rc, out, err = cli(capsys, *argv)
    refused(rc, out, err, f"--json {missing}: the folder {missing.parent} does not exist")
    assert old_csv.read_text() == OLD and old_html.read_text() == OLD
    # and a missing folder of --html
    if command == "report":
        html = tmp_path / "nowhere" / "r.html"
        rc, out, err = cli(capsys, *argv[:-4], "--output", old_csv, "--html", html)
        refused(rc, out, err, f"--html {html}: the folder")
        assert old_csv.read_text() == OLD
    assert temporaries(tmp_path) == []


def test_other_bad_outputs(capsys, table, tmp_path):
    out = tmp_path / "o.csv"
    cases = [(["--output", tmp_path], "is a folder"),
             (["--output", tmp_path / "o.json"], "the name must end in .csv or .txt or "
                                                 ".parquet or .pq"),
             (["--output", out, "--json", out], f"--json {out} and --output {out} are the "
                                                "same file"),
             (["--output", ""], "--output needs a file name")]
    for outputs, fragment in cases:
        refused(*anonymize(capsys, table, *outputs), fragment)
    assert not out.exists()
    report = tmp_path / "r.html"
    rc, stdout, err = cli(capsys, "report", table, *QI, "--others", "insensitive", "--k", "2",
                          "--html", report, "--output", report.with_suffix(".json").with_name(
                              "r.csv"), "--json", report)
    refused(rc, stdout, err, "are the same file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_folder_not_writable(capsys, table, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    refused(*anonymize(capsys, table, "--output", locked / "o.csv"), "is not writable")
    read_only = tmp_path / "read-only.csv"
    read_only.write_text(OLD)
    read_only.chmod(0o444)
    refused(*anonymize(capsys, table, "--output", read_only), "is read-only")
    assert read_only.read_text() == OLD


def test_outputs_replace_old_files_with_their_mode(capsys, table, tmp_path):
    out, js = tmp_path / "o.csv", tmp_path / "link.json"
    out.write_text(OLD)
    out.chmod(0o640)
    real_json = tmp_path / "real.json"
    real_json.write_text(OLD)
    js.symlink_to(real_json)
    rc, stdout, err = anonymize(capsys, table, "--output", out, "--json", js)
    assert rc == 0, err
    assert f"released table     {out} (200 rows)" in stdout
    assert len(pd.read_csv(out, sep=";")) == 200
    assert out.stat().st_mode & 0o777 == 0o640
    assert js.is_symlink() and json.loads(real_json.read_text())["input_rows"] == 200
    assert temporaries(tmp_path) == []


def test_device_output_is_written_directly(capsys, table):
    rc, _, err = anonymize(capsys, table, "--output", os.devnull, "--json", os.devnull)
    assert rc == 0, err


# -- all outputs or none -------------------------------------------------------------------
def plan_two(tmp_path) -> tuple[OutputPlan, Path, Path]:
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text(OLD)
    b.write_text(OLD)
    return OutputPlan([]).add("A", a, TABLE_SUFFIXES).add("B", b), a, b


def test_error_while_writing_keeps_every_old_file(tmp_path):
    plan, a, b = plan_two(tmp_path)
    with pytest.raises(RuntimeError, match="disk on fire"):
        with plan.writing() as out:
            out.write_table("A", pd.DataFrame({"x": [1]}))
            Path(out.path("B")).write_text("half")
            assert len(temporaries(tmp_path)) == 2
            raise RuntimeError("disk on fire")
    assert a.read_text() == OLD and b.read_text() == OLD
    assert temporaries(tmp_path) == []


def test_interrupt_while_writing_keeps_every_old_file(tmp_path):
    plan, a, b = plan_two(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        with plan.writing() as out:
            out.write_json("B", {"new": 1})
            raise KeyboardInterrupt
    assert a.read_text() == OLD and b.read_text() == OLD
    assert temporaries(tmp_path) == []


def test_unwritten_output_replaces_nothing(tmp_path):
    plan, a, b = plan_two(tmp_path)
    with pytest.raises(RuntimeError, match="B planned but never written"):
        with plan.writing() as out:
            out.write_table("A", pd.DataFrame({"x": [1]}))
    assert a.read_text() == OLD and temporaries(tmp_path) == []


def test_failed_rename_names_what_was_replaced(tmp_path, monkeypatch):
    plan, a, b = plan_two(tmp_path)
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith(".json"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError, match=rf"could not write B {re.escape(str(b))}: No space "
                                          rf"left on device; A {re.escape(str(a))} replaced; "
                                          "no other output changed"):
        with plan.writing() as out:
            out.write_table("A", pd.DataFrame({"x": [1]}))
            out.write_json("B", {"new": 1})
    assert a.read_text() == "x\n1\n" and b.read_text() == OLD
    assert temporaries(tmp_path) == []


def test_interrupts_deferred_passes_the_interrupt_on_after_the_block():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # (a signal is handled between bytecodes)
            done.append(1)
    assert done == [1]
    with interrupts_deferred(reraise=False):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _mkdir_then_interrupted(real_mkdir):
    """``os.mkdir`` that makes the folder and then receives SIGINT, as a stop signal landing
    during the system call does: Python runs the handler right after it returns."""
    def mkdir(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)  # (a signal is handled between bytecodes)
    return mkdir


@pytest.mark.parametrize("make", [
    lambda folder: temporary_folder(dir=folder),
    lambda folder: RowBuckets(10, 5, ["age"], spill_dir=str(folder)).__enter__()])
def test_a_stop_signal_during_a_temporary_folders_mkdir_leaves_nothing(tmp_path, monkeypatch,
                                                                        make):
    """The signal is raised, and the folder made just before it is gone (before the fix the
    release's bucket folder stayed: CI, stop 43)."""
    monkeypatch.setattr(os, "mkdir", _mkdir_then_interrupted(os.mkdir))
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
    with temporary_folder(dir=tmp_path) as name:  # undisturbed: made, then removed at the end
        assert os.path.isdir(name)
    assert list(tmp_path.iterdir()) == []


# -- inputs ---------------------------------------------------------------------------------
def test_repeated_column_names_refused(capsys, tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("sex;citizenship;race;citizenship\nMale;a;White;b\n")
    with pytest.raises(ValueError, match=r"column name\(s\) 'citizenship' appear more than "
                                         "once"):
        read_table(path)
    parquet = tmp_path / "dup.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table([pa.array(["a"]), pa.array(["b"])], names=["x", "x"]), parquet)
    with pytest.raises(ValueError, match="'x' appear more than once"):
        read_table(parquet, columns=["x"])
    rc, out, err = anonymize(capsys, path, "--output", tmp_path / "o.csv")
    refused(rc, out, err, "'citizenship' appear more than once")
    assert not (tmp_path / "o.csv").exists()


def test_byte_order_marks_ignored(capsys, tmp_path):
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_bytes("\ufeffMale;*\nFemale;*\n".encode())
    assert Hierarchy.from_csv(hierarchy).leaves.tolist() == ["Male", "Female"]
    data = tmp_path / "data.csv"
    data.write_bytes("\ufeffsex;age\nMale;30\nFemale;31\nMale;32\nFemale;33\n".encode())
    assert list(read_table(data).columns) == ["sex", "age"]
    out = tmp_path / "o.csv"
    rc, _, err = cli(capsys, "anonymize", data, "--qi", f"sex={hierarchy}", "--insensitive",
                     "age", "--k", "2", "--quiet", "--output", out)
    assert rc == 0, err
    assert pd.read_csv(out, sep=";")["sex"].tolist().count("Male") == 2


# -- interrupts: the console script ---------------------------------------------------------------
@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Path:
    """20 copies of the Adult extract (600,000 rows): writing the release takes a moment."""
    path = tmp_path_factory.mktemp("big") / "big.csv"
    data = pd.read_csv(datasets.adult_path(), sep=";", dtype=str)
    pd.concat([data] * 20, ignore_index=True).to_csv(path, sep=";", index=False)
    return path


def assert_interrupted(proc, stderr: str, ignore=None) -> None:
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not (ignore and ignore(line))]
    assert lines == ["gpuppdp: interrupted"], stderr


#: runs ``argv[1:]`` with the stop signals at their default action: the runs below test how
#: the command line handles signals it may handle, whatever the test runner inherited (``nohup``
#: ignores SIGHUP, a shell's background job SIGINT; the command line leaves an ignored signal
#: ignored, as its parent asked, and such a run would finish instead of stopping)
_DEFAULT_STOPS = ("import os, signal, sys\n"
                  "for name in ('SIGINT', 'SIGTERM', 'SIGHUP'):\n"
                  "    signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
                  "os.execv(sys.argv[1], sys.argv[1:])\n")


def _stoppable(argv, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kwargs)`` with SIGINT, SIGTERM and SIGHUP at their default."""
    return subprocess.Popen([sys.executable, "-c", _DEFAULT_STOPS, *map(str, argv)], **kwargs)


def _sigint_once_the_release_is_being_written(big_table, out: Path) -> str:
    """Runs the command line, sends SIGINT as soon as a temporary file appears beside ``out``,
    checks what the run left, and says how it ended: ``"interrupted"``, ``"committed"`` (the
    signal came after the outputs were renamed into place: ignored, by design) or
    ``"finished"`` (done before the temporary file was seen)."""
    out.write_text(OLD)
    proc = _stoppable([SCRIPT, "anonymize", big_table, *QI, "--others", "insensitive", "--k",
                       "5", "--quiet", "--seed", "1", "--output", out],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        while proc.poll() is None and not temporaries(out.parent):
            time.sleep(0.002)
        writing = proc.poll() is None
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert temporaries(out.parent) == []
    assert "Traceback" not in stderr
    text = out.read_text()
    if proc.returncode == 0:  # finished, or the signal came after the commit (CI, stop 51)
        assert stderr == "" and len(text.splitlines()) == 603241
        return "committed" if writing else "finished"
    assert writing
    assert_interrupted(proc, stderr)
    assert text == OLD or len(text.splitlines()) == 603241  # the old file, or a complete one
    return "interrupted"


def test_sigint_while_the_release_is_written(big_table, tmp_path):
    """Ctrl-C while the release is written: status 130, one line, no temporary file left, and
    the old output or a complete new one.  A signal that lands just after the commit is
    ignored (the run is done): then the run is tried again, up to three times, so that the
    interrupted path is the one checked."""
    endings = []
    while len(endings) < 3 and "interrupted" not in endings:
        endings.append(_sigint_once_the_release_is_being_written(big_table,
                                                                   tmp_path / "released.csv"))
    assert "interrupted" in endings, endings


def test_sigint_while_starting_up(tmp_path, table):
    """Ctrl-C while the subcommands import NumPy and pandas (the first second): one line,
    status 130 (``-X importtime`` shows when NumPy is being imported)."""
    proc = _stoppable([sys.executable, "-X", "importtime", SCRIPT, "anonymize", table, *QI,
                       "--others", "insensitive", "--k", "2", "--output", tmp_path / "o.csv"],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if re.search(r"\|\s+numpy", line):
                break
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=60)
    finally:
        proc.kill()
    stderr = "".join(seen) + rest
    assert_interrupted(proc, stderr, ignore=lambda line: line.startswith("import time:"))
    assert out == ""
    assert not (tmp_path / "o.csv").exists() and temporaries(tmp_path) == []


# -- SIGTERM, SIGHUP, a late signal, a closed pipe ------------------------------------------------
def _chunked_run(big_table, out_dir: Path) -> subprocess.Popen:
    """A chunked run (bucket files in a hidden folder beside the output) with --json."""
    return _stoppable([SCRIPT, "anonymize", big_table, *QI, "--others", "insensitive", "--k",
                       "5", "--quiet", "--chunk-rows", "100000", "--output", out_dir / "rel.csv",
                       "--json", out_dir / "rel.json"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)


def _leftovers(folder: Path) -> list[str]:
    """Hidden temporaries of any kind: output files and the release's bucket folders."""
    return sorted(p.name for p in folder.rglob(".*") if "gpuppdp" in p.name)


@pytest.mark.parametrize("signum, status, line", [
    (signal.SIGTERM, 143, "gpuppdp: terminated"), (signal.SIGHUP, 129, "gpuppdp: hung up")])
def test_stop_signals_leave_nothing_behind(big_table, tmp_path, signum, status, line):
    """SIGTERM and SIGHUP end a run as Ctrl-C does, at each of several moments (start-up,
    reading and encoding the chunks, the search, the release's buckets): temporaries and
    bucket folders removed, one line, 128 + the signal's number -- or, once the outputs are
    in place, the run ends as it would have (status 0, complete outputs)."""
    finished = 0
    for delay in (0.3, 1.0, 1.7, 2.4, 3.1, 3.8):
        out_dir = tmp_path / f"after-{delay}"
        out_dir.mkdir()
        proc = _chunked_run(big_table, out_dir)
        time.sleep(delay)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=300)
        assert _leftovers(out_dir) == [] and _leftovers(tmp_path) == [], (delay, stderr)
        assert "Traceback" not in stderr
        if proc.returncode == 0:  # done before the signal: complete outputs
            finished += 1
            assert len(pd.read_csv(out_dir / "rel.csv", sep=";")) == 603240
            continue
        assert proc.returncode == status and stderr.splitlines() == [line], (delay, stderr)
        assert sorted(p.name for p in out_dir.iterdir()) == []
    assert finished < 6  # the signal came during the run at least once


def test_a_signal_once_the_outputs_are_in_place_stops_nothing(capsys, table, tmp_path,
                                                             monkeypatch):
    """A SIGTERM that arrives after the last rename (here: while the summary is printed)
    leaves the run's status 0."""
    from gpuppdp.cli import run as cli_run

    printed = cli_run.print_release

    def print_then_signal(result, plan):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)  # (a signal is handled between bytecodes)
        printed(result, plan)

    monkeypatch.setattr(cli_run, "print_release", print_then_signal)
    monkeypatch.setattr("gpuppdp.cli.anonymize.print_release", print_then_signal)
    rc, out, err = anonymize(capsys, table, "--output", tmp_path / "o.csv")
    assert rc == 0, err
    assert "released table" in out and len(pd.read_csv(tmp_path / "o.csv", sep=";")) == 200


def test_a_closed_stdout_fails_nothing(table, tmp_path):
    """``gpuppdp anonymize ... | head -c 0``: standard output is a pipe whose reader has
    already gone, so every print fails; the run still writes its files and exits 0, with
    nothing on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([str(SCRIPT), "anonymize", str(table), *QI, "--others",
                               "insensitive", "--k", "2", "--quiet", "--output",
                               str(tmp_path / "o.csv"), "--json", str(tmp_path / "o.json")],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert "rror" not in proc.stderr and "Traceback" not in proc.stderr
    assert len(pd.read_csv(tmp_path / "o.csv", sep=";")) == 200
    assert (tmp_path / "o.json").stat().st_size > 0


def test_a_stop_signal_during_an_import_is_sent_again_after_it(monkeypatch):
    """A stop signal whose frame is in the import system is not raised there (a weakref
    callback of importlib would drop the exception and could leave a module lock held):
    the handler sends it again shortly; elsewhere it raises at once."""
    cli_main = importlib.import_module("gpuppdp.cli.main")  # (gpuppdp.cli.main: the function)
    sent = []
    monkeypatch.setattr(cli_main, "COMMITTED", threading.Event())  # (an earlier run set it)
    monkeypatch.setattr(cli_main, "RESEND_AFTER", 0.0)
    monkeypatch.setattr(cli_main.os, "kill", lambda pid, signum: sent.append((pid, signum)))
    frames = {}
    exec(compile("import sys\nframes['import'] = sys._getframe()",
                 "<frozen importlib._bootstrap>", "exec"), {"frames": frames})
    handler = cli_main._Stops()
    handler(signal.SIGTERM, frames["import"])  # deferred, not raised
    deadline = time.time() + 5
    while not sent and time.time() < deadline:
        time.sleep(0.01)
    assert sent == [(os.getpid(), signal.SIGTERM)] and handler.count == 0
    with pytest.raises(cli_main.Stopped):
        handler(signal.SIGTERM, sys._getframe())
    assert handler.count == 1


def test_a_stop_put_off_during_an_import_is_raised_before_the_commit(tmp_path, monkeypatch):
    """A stop signal put off during an import whose second delivery has not come yet (a busy
    machine: the thread sending it again has not run) still ends the run before its outputs
    are renamed into place: the commit hands it to the handler, nothing is written, the
    temporaries are gone, and the late delivery is then ignored."""
    cli_main = importlib.import_module("gpuppdp.cli.main")
    monkeypatch.setattr(cli_main, "COMMITTED", threading.Event())
    scheduled = []

    class NeverSent:  # the second delivery, scheduled but never sent
        def __init__(self, interval, function, args):
            scheduled.append(args)

        def start(self):
            pass

    monkeypatch.setattr(cli_main.threading, "Timer", NeverSent)
    frames = {}
    exec(compile("import sys\nframes['import'] = sys._getframe()",
                 "<frozen importlib._bootstrap>", "exec"), {"frames": frames})
    handler = cli_main._Stops()
    previous = signal.signal(signal.SIGINT, handler)
    try:
        handler(signal.SIGINT, frames["import"])  # put off
        assert scheduled == [(os.getpid(), signal.SIGINT)]
        assert stops.PUT_OFF == [signal.SIGINT] and handler.count == 0
        out = tmp_path / "o.csv"
        with pytest.raises(cli_main.Stopped) as stopped:
            with OutputPlan([]).add("--output", out, TABLE_SUFFIXES).writing() as outputs:
                Path(outputs.path("--output")).write_text("a\n1\n")
        assert stopped.value.signum == signal.SIGINT
        assert not out.exists() and os.listdir(tmp_path) == []
        assert stops.PUT_OFF == [] and handler.count == 1
        handler(signal.SIGINT, sys._getframe())  # the late delivery: ignored
        assert handler.count == 2
    finally:
        signal.signal(signal.SIGINT, previous)
        stops.PUT_OFF.clear()
