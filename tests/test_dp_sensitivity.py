"""Sensitivities derived from declared bounds: worked examples from the literature."""

import pytest

from gpuppdp.dp import (
    Neighbouring,
    count_sensitivity,
    counting_queries_sensitivity,
    grouped_sum_sensitivity,
    histogram_sensitivity,
    mean_sensitivity,
    sum_sensitivity,
)


def test_sold_real_estates_sum_query():
    """Each person in the database sold between 0 and 7 real estates (declared bounds); the
    query sums the sales.  One person more or less, or one person's record changed, moves
    the sum by at most 7: Δf = 7."""
    bounds = dict(lower=0, upper=7)
    assert sum_sensitivity(**bounds) == 7
    assert sum_sensitivity(**bounds, neighbouring=Neighbouring.REPLACE) == 7
    # the same query as a count over one row per sale, each person owning <= 7 rows
    assert count_sensitivity(max_contributions=7) == 7


def test_histogram_sensitivity_depends_on_the_neighbouring_relation():
    """Dwork & Roth 2014, Example 3.2: a record added or removed changes one bin by 1; a
    record replaced leaves one bin and enters another: Δ = 2."""
    assert histogram_sensitivity() == 1
    assert histogram_sensitivity(neighbouring="add-remove") == 1
    assert histogram_sensitivity(neighbouring="replace") == 2
    assert histogram_sensitivity(neighbouring="replace", max_contributions=3) == 6


def test_counting_queries():
    assert count_sensitivity() == 1
    assert count_sensitivity(neighbouring="replace") == 1
    assert counting_queries_sensitivity(5) == 5  # k counting queries together: Δ = k


def test_sum_and_mean_with_clipping():
    assert sum_sensitivity(lower=-3, upper=2) == 3  # add/remove: the largest |value|
    assert sum_sensitivity(lower=-3, upper=2, neighbouring="replace") == 5  # upper - lower
    assert sum_sensitivity(lower=0, upper=10, max_contributions=4) == 40
    assert mean_sensitivity(lower=0, upper=100, n=50) == 2.0
    assert grouped_sum_sensitivity(lower=0, upper=10) == 10
    assert grouped_sum_sensitivity(lower=0, upper=10, neighbouring="replace") == 20


@pytest.mark.parametrize("call,match", [
    (lambda: sum_sensitivity(lower=5, upper=1), "lower <= upper"),
    (lambda: sum_sensitivity(lower=0, upper=float("inf")), "upper must be a finite number"),
    (lambda: sum_sensitivity(lower=float("nan"), upper=1), "lower must be a finite number"),
    (lambda: mean_sensitivity(lower=0, upper=1, n=0), "n must be a positive integer"),
    (lambda: count_sensitivity(max_contributions=0), "max_contributions"),
    (lambda: histogram_sensitivity(neighbouring="swap"), "neighbouring must be one of"),
    (lambda: counting_queries_sensitivity(0), "k must be a positive integer"),
])
def test_invalid_bounds(call, match):
    with pytest.raises(ValueError, match=match):
        call()
