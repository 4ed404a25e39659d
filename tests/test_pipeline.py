"""Host threads for chunked passes (:mod:`gpuppdp.core.pipeline`): results in order, at most
``ahead`` items drawn beyond the one yielded, an error raised at its item's turn, and no call
left running however the iteration ends."""

from __future__ import annotations

import threading
import time

import pytest

import logging

from gpuppdp.core.pipeline import (MAX_HOST_THREADS, Stopwatch, host_threads, ordered_map,
                                   row_numbered)


def _slow_square(x: int) -> int:
    time.sleep(0.001 * ((x * 7) % 5))  # later items often finish first
    return x * x


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_results_come_in_the_items_order(threads):
    assert list(ordered_map(_slow_square, range(40), threads=threads)) == \
        [x * x for x in range(40)]


def test_one_thread_runs_on_the_calling_thread():
    callers = set(ordered_map(lambda _: threading.get_ident(), range(5), threads=1))
    assert callers == {threading.get_ident()}


@pytest.mark.parametrize("threads,ahead", [(2, None), (3, 1), (4, 6)])
def test_items_drawn_stay_within_ahead_of_the_one_yielded(threads, ahead):
    drawn = []

    def source():
        for x in range(30):
            drawn.append(x)
            yield x

    limit = 2 * threads if ahead is None else ahead
    for i, y in enumerate(ordered_map(_slow_square, source(), threads=threads, ahead=ahead)):
        assert y == i * i
        assert len(drawn) <= i + 1 + limit
    assert drawn == list(range(30))


def test_an_error_comes_at_its_items_turn_and_no_call_outlives_it():
    running = 0
    lock = threading.Lock()

    def work(x):
        nonlocal running
        with lock:
            running += 1
        try:
            time.sleep(0.002)
            if x in (6, 9):
                raise ValueError(f"bad item {x}")
            return x
        finally:
            with lock:
                running -= 1

    got = []
    with pytest.raises(ValueError, match="bad item 6"):
        for y in ordered_map(work, range(20), threads=4):
            got.append(y)
    assert got == list(range(6))
    assert running == 0


def test_closing_early_waits_for_the_calls_in_flight():
    finished = []
    results = ordered_map(lambda x: (time.sleep(0.01), finished.append(x))[0], range(50),
                          threads=3, ahead=6)
    next(results)
    results.close()
    count = len(finished)
    time.sleep(0.05)
    assert len(finished) == count < 50  # nothing ran on after the close; not all ran


def test_host_threads_reads_the_environment(monkeypatch):
    monkeypatch.setenv("GPUPPDP_HOST_THREADS", "3")
    assert host_threads() == 3
    for bad in ("0", "-2", "many", "1.5"):
        monkeypatch.setenv("GPUPPDP_HOST_THREADS", bad)
        with pytest.raises(ValueError, match="GPUPPDP_HOST_THREADS"):
            host_threads()
    monkeypatch.delenv("GPUPPDP_HOST_THREADS")
    assert 1 <= host_threads() <= MAX_HOST_THREADS


def test_row_numbered_skips_empty_chunks():
    chunks = [[1, 2], [], [3], [4, 5, 6]]
    assert list(row_numbered(chunks)) == [(0, [1, 2]), (2, [3]), (3, [4, 5, 6])]


def test_stopwatch_adds_up_the_calling_threads_parts_and_logs_them(caplog):
    watch = Stopwatch("pass")
    closed = []

    def slow_items():
        try:
            for i in range(3):
                time.sleep(0.02)
                yield i
        finally:
            closed.append(True)

    got = []
    for item in watch.waited(slow_items(), "waiting"):
        with watch.part("work"):
            time.sleep(0.01)
        got.append(item)
    assert got == [0, 1, 2] and closed == [True]
    assert watch.seconds["waiting"] >= 0.06 and 0.03 <= watch.seconds["work"] < 0.06
    early = watch.waited(slow_items(), "waiting")
    next(early)
    early.close()  # closing the wrapper closes the items
    assert closed == [True, True]
    with caplog.at_level(logging.DEBUG, logger="gpuppdp"):
        watch.log("3 chunks")
    (line,) = caplog.messages
    assert line.startswith("pass of 3 chunks on the calling thread: ") and "work 0.0" in line
