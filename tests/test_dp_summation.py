"""Exact sums in dp_group_stats (issue 32): a float sum depends on the order of its terms,
the fixed-point sum does not; the sensitivity is the summation grid's; overflow is refused."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from gpuppdp.dp import BudgetAccountant, LaplaceMechanism, RandomSource, dp_group_stats, summation
from gpuppdp.dp.releases import OutOfDomainError
from gpuppdp.dp.summation import (
    ExactSum,
    SummationRangeError,
    exact_grid_sums,
    exact_sum_plan,
    grouped_exact_sums,
    round_units_to_grid,
    to_units,
)
from gpuppdp.kernels.dp_sums import grid_unit_sums
from gpuppdp.testing import strict_backend

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")


def _table(n, seed=0, cells=3):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, cells, n).astype(np.int64),
            rng.uniform(-50.0, 1000.0, n) * rng.choice([1e-6, 1.0, 1e3], n))


def _plan(lower, upper, epsilon=1.0):
    return exact_sum_plan(lower, upper, LaplaceMechanism(
        epsilon=epsilon, sensitivity=max(abs(lower), abs(upper))).granularity)


def test_float_sums_depend_on_the_order_exact_sums_do_not():
    key, values = _table(200_000)
    order = np.random.default_rng(1).permutation(len(values))
    lower, upper = -100.0, 1e5
    # the old computation: a float64 bincount of the clipped values
    clipped = np.clip(values, lower, upper)
    old_a = np.bincount(key, weights=clipped, minlength=3)
    old_b = np.bincount(key[order], weights=clipped[order], minlength=3)
    assert not np.array_equal(old_a, old_b)  # the same multiset, two float sums
    plan = _plan(lower, upper)
    new_a = grouped_exact_sums(np, key, to_units(np, values, lower, upper, plan), 3, plan)
    new_b = grouped_exact_sums(np, key[order], to_units(np, values[order], lower, upper, plan),
                               3, plan)
    np.testing.assert_array_equal(new_a, new_b)


def test_exact_sums_are_the_sums_of_the_rounded_values():
    key, values = _table(5_000, seed=2)
    values[:4] = [-100.0, 1e5, 3.0 * 2.0**-30, 2.5 * 2.0**-30]  # the bounds; halves to even
    lower, upper = -100.0, 1e5
    plan = _plan(lower, upper)
    sums = grouped_exact_sums(np, key, to_units(np, values, lower, upper, plan), 3, plan)
    for cell in range(3):
        exact = sum(round(Fraction(float(v)) / Fraction(plan.grid))
                    for v in np.clip(values[key == cell], lower, upper))
        assert int(sums[cell]) == exact
    # then to the noise grid, half to even, in integers
    units = np.array([0, 2**15, 3 * 2**15, -(2**15), 2**15 + 1, -(2**40) - 2**15 - 1])
    np.testing.assert_array_equal(round_units_to_grid(np, units),
                                  [0, 0, 2, 0, 1, -(2**24) - 1])


def test_sensitivity_is_the_bound_rounded_to_the_summation_grid():
    plan = _plan(-3.0, 10.0)
    assert plan.grid == plan.noise_grid * 2.0**-16
    assert plan.bound_units == round(10.0 / plan.grid)
    assert plan.sensitivity(1) == 10.0 and plan.sensitivity(2) == 20.0
    odd = exact_sum_plan(0.0, 1.0 / 3.0, 2.0**-14)  # 1/3 is off the grid: rounded
    assert odd.sensitivity(1) == round(Fraction(1, 3) / Fraction(odd.grid)) * odd.grid
    assert abs(odd.sensitivity(1) - 1.0 / 3.0) <= odd.grid / 2


def test_overflow_is_refused():
    plan = ExactSum(grid=1.0, noise_grid=2.0**16, lower_units=-(2**60), upper_units=2**60)
    units = np.array([2**60, 2**60, 2**60, 2**60], dtype=np.int64)
    with pytest.raises(SummationRangeError, match="overflow"):
        grouped_exact_sums(np, np.zeros(4, np.int64), units, 1, plan)
    # three rows still fit: 3 * 2**60 < 2**62
    assert grouped_exact_sums(np, np.zeros(3, np.int64), units[:3], 1, plan)[0] == 3 * 2**60


def test_release_refuses_before_spending(monkeypatch):
    monkeypatch.setattr(summation, "SUM_LIMIT", 2**33)  # about 16 rows at these bounds
    data = pd.DataFrame({"g": ["a", "b"] * 20, "v": np.arange(40.0)})
    accountant = BudgetAccountant(5.0)
    with pytest.raises(SummationRangeError):
        dp_group_stats(data, "g", "v", epsilon=1.0, lower=0, upper=100, statistic="sum",
                       public_domain=True, random=RandomSource("cpu", seed=1, insecure=True),
                       accountant=accountant)
    assert accountant.spent == 0


@pytest.mark.parametrize("neighbouring, changed", [("add-remove", 1), ("replace", 2)])
def test_release_records_the_summation_and_its_sensitivity(neighbouring, changed):
    data = pd.DataFrame({"g": ["a", "b", "a"], "v": [1.0, 2.0, 1.0 / 3.0]})
    out = dp_group_stats(data, "g", "v", epsilon=1.0, lower=-1.0, upper=1.0 / 3.0,
                         public_domain=True, neighbouring=neighbouring,
                         random=RandomSource("cpu", seed=4, insecure=True))
    summ = out.attrs["dp"]["summation"]
    assert summ["method"] == "exact: fixed point in int64"
    assert summ["grid"] == summ["noise_grid"] * 2.0**-16
    assert summ["sensitivity"] == changed * 1.0  # max(|lower|, |upper|) = 1 is on the grid
    assert out.attrs["dp"]["queries"]["sum"]["sensitivity"] == summ["sensitivity"]
    assert out.attrs["dp"]["queries"]["sum"]["granularity"] == summ["noise_grid"]


def test_small_tables_release_what_the_float_sum_released():
    """Values on the summation grid: the exact sum is the float sum, the mechanism the same,
    so one seed gives the very same release as the float-sum code did."""
    rng = np.random.default_rng(5)
    data = pd.DataFrame({"g": rng.choice(["a", "b", "c"], 500),
                         "v": rng.integers(-40, 400, 500) / 8.0})
    lower, upper = -2.0, 30.0
    new = dp_group_stats(data, "g", "v", epsilon=0.7, lower=lower, upper=upper,
                         statistic="sum", public_domain=True,
                         random=RandomSource("cpu", seed=11, insecure=True))
    codes = data["g"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    float_sums = np.bincount(codes, weights=np.clip(data["v"].to_numpy(), lower, upper),
                             minlength=3)
    old = LaplaceMechanism(epsilon=0.7, sensitivity=30.0).release(
        float_sums, random=RandomSource("cpu", seed=11, insecure=True))
    np.testing.assert_array_equal(new["sum"].to_numpy(), old)


def test_release_is_the_same_for_any_row_order():
    key, values = _table(3_000, seed=8)
    data = pd.DataFrame({"g": key, "v": values})
    shuffled = data.sample(frac=1.0, random_state=3).reset_index(drop=True)
    a, b = (dp_group_stats(d, "g", "v", epsilon=1.0, lower=-10, upper=1e4, statistic="sum",
                           public_domain=True, random=RandomSource("cpu", seed=2, insecure=True))
            for d in (data, shuffled))
    np.testing.assert_array_equal(a["sum"].to_numpy(), b["sum"].to_numpy())


def test_every_backend_gives_the_same_exact_sums_and_release(backend):
    """Exact sums do not depend on the backend's order of additions (a GPU's bincount adds
    in any order): one seed, one release, on every backend."""
    key, values = _table(20_000, seed=9)
    plan = _plan(-10.0, 1e4)
    host = grouped_exact_sums(np, key, to_units(np, values, -10.0, 1e4, plan), 3, plan)
    xp = backend.xp
    dev = grouped_exact_sums(xp, backend.asarray(key),
                             to_units(xp, backend.asarray(values), -10.0, 1e4, plan), 3, plan)
    np.testing.assert_array_equal(backend.to_host(dev), host)
    data = pd.DataFrame({"g": key, "v": values})
    a, b = (dp_group_stats(data, "g", "v", epsilon=1.0, lower=-10, upper=1e4,
                           public_domain=True, random=RandomSource(be, seed=6, insecure=True))
            for be in ("cpu", backend))
    pd.testing.assert_frame_equal(a, b)


def test_group_stats_refuses_an_out_of_domain_value_only_after_the_charge():
    """A value outside the declared domain is refused after epsilon is charged, so that a
    probe ("does anyone have value v?") is never free, as the counts' releases do."""
    data = pd.DataFrame({"g": ["a", "b", "zzz"], "v": [1.0, 2.0, 3.0]})
    accountant = BudgetAccountant(5.0)
    with pytest.raises(OutOfDomainError):
        dp_group_stats(data, "g", "v", epsilon=1.0, lower=0, upper=10, statistic="sum",
                       domains={"g": ["a", "b"]}, accountant=accountant)
    assert accountant.spent == 1.0
    out = dp_group_stats(data, "g", "v", epsilon=1.0, lower=0, upper=10, statistic="sum",
                         domains={"g": ["a", "b"]}, unknown="drop", accountant=accountant)
    assert list(out["g"]) == ["a", "b"] and accountant.spent == 2.0


def _adversarial(rng, n, lower, upper, grid):
    """Values that stress a fused sum: NaN, infinities, the largest and smallest floats,
    negative zero, the clipping bounds and their neighbours, exact ties of the summation grid
    (``(k + 1/2)·s``, ``k`` even and odd), then ordinary values of every magnitude."""
    special = [np.nan, np.inf, -np.inf, 1.7976931348623157e308, -1.7976931348623157e308,
               5e-324, -5e-324, 0.0, -0.0, lower, upper, (lower + upper) / 2.0,
               np.nextafter(lower, -np.inf), np.nextafter(lower, np.inf),
               np.nextafter(upper, -np.inf), np.nextafter(upper, np.inf)]
    ties = (rng.integers(-1000, 1000, 64) + 0.5) * grid
    ordinary = rng.uniform(-1.0, 1.0, n) * 10.0 ** rng.integers(-12, 12, n)
    x = np.concatenate([special, ties, ties + (lower + upper) / 2.0, ordinary])
    return x[rng.permutation(x.shape[0])]


def _naive_unit_sums(key, values, n_cells, plan, shift, squares):
    """Reference: each value in Python floats and exact fractions, one at a time; the
    per-cell sums in units of the summation grid (before their rounding to the noise grid,
    which would hide an error of a few units)."""
    out = [[0] * n_cells, [0] * n_cells]
    for k, v in zip(key.tolist(), values.tolist()):
        c = min(max((0.0 if v != v else v) - shift, plan.lower), plan.upper)
        out[0][k] += round(Fraction(c) / Fraction(plan.grid))  # half to even, exact
        if squares is not None:
            c2 = min(max(c * c, squares.lower), squares.upper)
            out[1][k] += round(Fraction(c2) / Fraction(squares.grid))
    return out


@pytest.mark.parametrize("statistic", ["sum", "mean", "variance"])
def test_fused_sums_are_the_exact_sums_and_the_array_forms(statistic):
    """The CPU's fused pass (:mod:`gpuppdp.kernels.dp_sums`, several tasks on the pool) gives
    a per-value exact reference's sums to the unit, and the array form's (as CuPy runs it)
    release sums, on values at every magnitude, ties, signed zeros, NaN, infinities and the
    clipping edges."""
    rng = np.random.default_rng(21)
    lower, upper = -3.0, 1000.5
    if statistic == "sum":
        plan, shift, squares = _plan(lower, upper), 0.0, None
    else:
        half = (upper - lower) / 2.0
        plan, shift = _plan(-half, half), (lower + upper) / 2.0
        squares = _plan(0.0, half * half) if statistic == "variance" else None
    x = _adversarial(rng, 40_000, plan.lower + shift, plan.upper + shift, plan.grid)
    key = rng.integers(0, 5, x.shape[0]).astype(np.int64)
    units = grid_unit_sums(key, x, 5, shift, (plan.lower, plan.upper), 1.0 / plan.grid,
                           None if squares is None else (squares.lower, squares.upper),
                           1.0 if squares is None else 1.0 / squares.grid)
    naive = _naive_unit_sums(key, x, 5, plan, shift, squares)
    assert units[0].tolist() == naive[0]
    assert (units[1] is None) if squares is None else units[1].tolist() == naive[1]
    fused = exact_grid_sums(np, key, x, 5, plan, shift=shift, squares=squares)
    strict = strict_backend()  # the array form: what the other backends run
    array = exact_grid_sums(strict.xp, strict.asarray(key), strict.asarray(x), 5, plan,
                            shift=shift, squares=squares)
    whole = exact_grid_sums(np, None, x, 1, plan, shift=shift, squares=squares)  # no key
    for part, p in enumerate((plan, squares)):
        if p is None:
            assert fused[part] is None and array[part] is None
            continue
        np.testing.assert_array_equal(fused[part], strict.to_host(array[part]))
        np.testing.assert_array_equal(
            fused[part], [round(Fraction(u, 2**summation.SUM_GRID_BITS)) * p.noise_grid
                          for u in naive[part]])
        assert whole[part][0] == round(Fraction(sum(naive[part]), 2**summation.SUM_GRID_BITS)
                                       ) * p.noise_grid


def test_fused_sums_refuse_an_overflow_before_any_pass():
    plan = exact_sum_plan(-(2.0**24), 2.0**24, 2.0**-20)  # Q = 2**60 units
    with pytest.raises(SummationRangeError, match="overflow"):
        exact_grid_sums(np, None, np.zeros(4), 1, plan)
    assert exact_grid_sums(np, None, np.full(3, 2.0**30), 1, plan)[0][0] == 3 * 2.0**24
