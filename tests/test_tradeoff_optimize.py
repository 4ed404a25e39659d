"""The three optimizations of section 4.3 (gpuppdp.tradeoff.optimize): answers meet their
constraints and are no worse than a dense grid over the simplex (step 0.02) for m = 2, 3, 4,
with losses recomputed here from their definitions; infeasible problems are reported so."""

import itertools
import math

import numpy as np
import pytest

from gpuppdp.errors import InputError
from gpuppdp.tradeoff import feasible_region, min_privacy_loss, min_utility_loss

STEP = 0.02
TOL = 1e-6


def simplex_grid(m: int, step: float = STEP) -> np.ndarray:
    n = round(1 / step)
    pts = [c + (n - sum(c),) for c in itertools.product(range(n + 1), repeat=m - 1)
           if sum(c) <= n]
    return np.array(pts, dtype=np.float64) / n


def entropy(x):
    x = np.atleast_2d(x)
    out = np.zeros(len(x))
    for j in range(x.shape[1]):  # -sum x log2 x, 0 log 0 = 0
        p = x[:, j]
        out -= np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0.0)
    return out


def naive_losses(x, a, o, reference):
    """The four losses from their definitions (module docstring of optimize)."""
    x = np.atleast_2d(x)
    if reference == "record":
        u_d = sum(o[v] * np.linalg.norm(x - np.eye(len(o))[v], axis=1) for v in range(len(o)))
        u_h = entropy(x)
    else:
        u_d = np.linalg.norm(x - o, axis=1)
        u_h = np.abs(entropy(o) - entropy(x))
    return {"distribution_privacy_loss": np.linalg.norm(x - a, axis=1),
            "entropy_privacy_loss": np.abs(entropy(a) - entropy(x)),
            "distribution_utility_loss": u_d, "entropy_utility_loss": u_h}


def cases(ms, seeds):
    for m in ms:
        for seed in seeds:
            rng = np.random.default_rng(100 * m + seed)
            yield m, rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m) * 0.7)


def check_against_grid(kind, m, a, o, b1, b2, objective, reference):
    grid = simplex_grid(m)
    lv = naive_losses(grid, a, o, reference)
    if kind == "utility":
        sol = min_utility_loss(a, o, b1, b2, objective=objective, reference=reference)
        ok = (lv["distribution_privacy_loss"] <= b1) & (lv["entropy_privacy_loss"] <= b2)
    else:
        sol = min_privacy_loss(a, o, b1, b2, objective=objective, reference=reference)
        ok = (lv["distribution_utility_loss"] <= b1) & (lv["entropy_utility_loss"] <= b2)
    key = f"{objective}_{kind}_loss"
    if sol.feasible is False:
        assert not ok.any(), "reported infeasible, but a grid point is feasible"
        return sol
    assert sol.feasible is True
    got = naive_losses(sol.x, a, o, reference)
    assert sol.x.min() >= -1e-12 and abs(sol.x.sum() - 1) < 1e-9
    if kind == "utility":
        assert got["distribution_privacy_loss"][0] <= b1 + TOL
        assert got["entropy_privacy_loss"][0] <= b2 + TOL
    else:
        assert got["distribution_utility_loss"][0] <= b1 + TOL
        assert got["entropy_utility_loss"][0] <= b2 + TOL
    assert sol.value == pytest.approx(got[key][0], abs=1e-9)
    if ok.any():
        assert sol.value <= lv[key][ok].min() + TOL
    assert sol.lower_bound <= sol.value + 1e-12 and sol.gap <= 1e-4 + 1e-12
    return sol


@pytest.mark.parametrize("reference", ["record", "original-class"])
@pytest.mark.parametrize("objective", ["distribution", "entropy"])
def test_answers_meet_their_constraints_and_beat_the_grid(objective, reference):
    for m, a, o in cases((2, 3), (0,)):
        check_against_grid("utility", m, a, o, 0.15, 0.2, objective, reference)
        check_against_grid("privacy", m, a, o, 0.8 if reference == "record" else 0.3, 0.9,
                           objective, reference)


def test_m4_and_more_instances_beat_the_grid():
    for m, a, o in cases((2, 3, 4), (1, 2, 3)):
        for reference in ("record", "original-class"):
            for objective in ("distribution", "entropy"):
                for b1, b2 in ((0.1, 0.1), (0.3, 0.5)):
                    check_against_grid("utility", m, a, o, b1, b2, objective, reference)
                for b1, b2 in ((0.5, 0.8), (0.9, 1.2)):
                    check_against_grid("privacy", m, a, o, b1, b2, objective, reference)


def test_convex_problem_is_solved_exactly_and_matches_the_projection():
    # min ||x - o|| s.t. ||x - a|| <= eps with both interior: x is o pulled onto the ball
    a, o = np.array([0.4, 0.35, 0.25]), np.array([0.1, 0.3, 0.6])
    eps = 0.1
    sol = min_utility_loss(a, o, eps, None, reference="original-class")
    assert sol.convex and sol.gap <= 1e-9
    want = a + eps * (o - a) / np.linalg.norm(o - a)
    np.testing.assert_allclose(sol.x, want, atol=1e-6)
    assert sol.value == pytest.approx(np.linalg.norm(o - a) - eps, abs=1e-7)


def test_infeasible_inputs_are_reported():
    a = np.array([0.5, 0.5])
    o = np.array([0.9, 0.1])
    # record utility: H(x) <= 0.1 bit forces x near a vertex, U_D <= 0.05 forces x near o
    sol = min_privacy_loss(a, o, 0.05, 0.1)
    assert sol.feasible is False and sol.x is None
    assert not ((naive_losses(simplex_grid(2), a, o, "record")["distribution_utility_loss"]
                 <= 0.05).any())
    # privacy: H(x) >= H(a) - 0.01 = 0.99 with ||x - a|| ... and a region that is empty
    reg = feasible_region(a, o, epsilon=0.05, delta_distribution=0.05)
    assert reg.feasible is False and reg.point is None and len(reg.boundary) == 0


def test_feasible_region_boundary_lies_on_the_boundary():
    a = np.array([0.5, 0.3, 0.2])
    o = np.array([0.6, 0.3, 0.1])
    bounds = dict(epsilon=0.25, alpha=0.3, delta_distribution=0.8, gamma_entropy=1.45)
    reg = feasible_region(a, o, **bounds, samples=24)
    assert reg.feasible is True
    names = {"epsilon": "distribution_privacy_loss", "alpha": "entropy_privacy_loss",
             "delta_distribution": "distribution_utility_loss",
             "gamma_entropy": "entropy_utility_loss"}

    def inside(x):
        lv = naive_losses(x, a, o, "record")
        return np.all([lv[names[k]] <= v + 1e-9 for k, v in bounds.items()], axis=0)

    assert inside(reg.point)[0]
    assert len(reg.boundary) >= 24 and set(reg.ray) == set(range(24))
    np.testing.assert_allclose(reg.boundary.sum(axis=1), 1.0)
    # every boundary point: membership changes across it along its ray (entry or exit), or
    # the ray leaves the simplex there from inside
    d = reg.boundary - reg.point
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    before, after = reg.boundary - 1e-6 * d, reg.boundary + 1e-6 * d
    off = after.min(axis=1) < 0
    assert ((inside(before) != inside(after)) | (off & inside(before))).all()
    assert (inside(before) & ~inside(after)).sum() >= 24 - off.sum()   # every ray exits


def test_per_class_answers_and_bad_input():
    a = np.array([[0.5, 0.5], [0.2, 0.8]])
    o = np.array([0.7, 0.3])
    sols = min_utility_loss(a, o, 0.1, 0.5)
    assert isinstance(sols, list) and len(sols) == 2
    for sol, prior in zip(sols, a):
        assert np.linalg.norm(sol.x - prior) <= 0.1 + 1e-9
    with pytest.raises(InputError, match="epsilon"):
        min_utility_loss([0.5, 0.5], [0.5, 0.5], -1.0)
    with pytest.raises(InputError, match="prior"):
        min_utility_loss([0.5, 0.6], [0.5, 0.5], 0.1)
    with pytest.raises(InputError, match="objective"):
        min_privacy_loss([0.5, 0.5], [0.5, 0.5], 0.1, objective="both")
    assert math.isclose(min_utility_loss([0.5, 0.5], [0.5, 0.5], 0.0, 0.0).x[0], 0.5,
                        abs_tol=1e-9)
