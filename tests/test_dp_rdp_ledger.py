"""RDP curves and RDP entries in the budget ledger (issue 37, item 2): the curves against the
Rényi divergence computed independently (numerical integration, high-precision sums), the
composition of curves against the Gaussian of σ/√k and against exact (ε, δ) curves, the
accountings of a mixed ledger by hand, and a ledger written by the previous version."""

import json
import math
import shutil
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from gpuppdp.dp.accountant import BudgetAccountant, BudgetError, LedgerError
from gpuppdp.dp.accounting import (
    ALPHAS,
    group_curve,
    laplace_curve,
    pure_curve,
    rdp_to_approx,
    zcdp_curve,
    zcdp_to_approx,
)
from gpuppdp.errors import InputError

MAIN_LEDGER = Path(__file__).parent / "data" / "ledger_v2_main_8cd43f0.jsonl"
ORDERS = (1.1, 1.5, 2.0, 5.0, 20.0, 64.0)


def renyi_laplace_integrated(epsilon, alpha):
    """D_α(Lap(0, 1/ε) || Lap(1, 1/ε)) by quadrature of p**α q**(1-α) on the three pieces
    (scaled by e**(-(α-1)ε) to stay in range)."""
    b = 1.0 / epsilon

    def f(x):
        return math.exp(-(alpha * abs(x) + (1 - alpha) * abs(x - 1)) / b
                        - (alpha - 1) * epsilon) / (2 * b)

    total = sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
                for lo, hi in ((-math.inf, 0.0), (0.0, 1.0), (1.0, math.inf)))
    return epsilon + math.log(total) / (alpha - 1)


def renyi_discrete(p, q, alpha):
    """D_α(P || Q) of two distributions given as {point: Decimal probability}."""
    a = Decimal(alpha)
    s = sum(p[x] ** a * q[x] ** (1 - a) for x in p)
    return float(s.ln() / (a - 1))


def on_grid(curve, delta, orders=ALPHAS):
    """CKS 2020 Proposition 12 minimized over ``orders``, the curve given as a function."""
    return min(curve(a) + (math.log(1 / delta) - math.log(a)) / (a - 1) + math.log1p(-1 / a)
               for a in orders)


def tight(rho, delta):
    """The same conversion of ρ-zCDP over a dense grid of orders (as in
    test_dp_ledger_notions)."""
    alpha = 1.0 + np.geomspace(1e-3, 1e6, 200_001)
    eps = rho * alpha + (math.log(1 / delta) - np.log(alpha)) / (alpha - 1) \
        + np.log1p(-1 / alpha)
    return float(eps.min())


def rr(epsilon, alpha):
    """Randomized response at ε, as Mironov 2017, Proposition 5 writes it."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) \
        / (alpha - 1)


def test_laplace_curve_is_the_renyi_divergence_integrated_numerically():
    for epsilon in (0.1, 1.0, 3.0):
        ours = laplace_curve(epsilon, ORDERS)
        for alpha, value in zip(ORDERS, ours):
            assert value == pytest.approx(renyi_laplace_integrated(epsilon, alpha), rel=1e-9)
    # far out, where the plain formula overflows floats: against it in 60-digit decimals
    with localcontext() as ctx:
        ctx.prec = 60
        for epsilon, alpha in ((10.0, 512.0), (50.0, 128.0), (1e-4, 1.1)):
            a, e = Decimal(alpha), Decimal(epsilon)
            plain = ((a / (2 * a - 1) * ((a - 1) * e).exp()
                      + (a - 1) / (2 * a - 1) * (-a * e).exp()).ln() / (a - 1))
            assert float(laplace_curve(epsilon, [alpha])[0]) == pytest.approx(float(plain),
                                                                               rel=1e-12)


def test_pure_curve_is_randomized_response_and_bounds_every_pure_mechanism():
    with localcontext() as ctx:
        ctx.prec = 40
        for epsilon in (0.3, 2.0):
            e = Decimal(epsilon).exp()
            p = {0: e / (1 + e), 1: 1 / (1 + e)}
            q = {0: p[1], 1: p[0]}
            # the discrete Laplace at sensitivity 1 (the geometric mechanism): the same curve,
            # so its pure entries are charged exactly in the RDP accounting
            r = (-Decimal(epsilon)).exp()
            support = range(-int(80 / epsilon), int(80 / epsilon) + 2)  # tails < 1e-34
            lap = {x: (1 - r) / (1 + r) * r ** abs(x) for x in support}
            shifted = {x: (1 - r) / (1 + r) * r ** abs(x - 1) for x in support}
            ours = pure_curve(epsilon, ORDERS)
            for alpha, value in zip(ORDERS, ours):
                assert value == pytest.approx(renyi_discrete(p, q, alpha), rel=1e-10)
                assert value == pytest.approx(renyi_discrete(lap, shifted, alpha), rel=1e-10)
            # every ε-DP mechanism is dominated: the Laplace's curve lies below; and the
            # bounds min(ε, α ε²/2) of Mironov 2017 and Bun & Steinke 2016 hold
            grid = np.asarray(ALPHAS)
            curve = pure_curve(epsilon)
            assert np.all(laplace_curve(epsilon) <= curve + 1e-15)
            assert np.all(curve <= np.minimum(epsilon, 0.5 * epsilon**2 * grid) + 1e-15)


def test_curves_increase_with_epsilon_and_with_the_order():
    for make in (laplace_curve, pure_curve):
        previous = np.zeros(len(ALPHAS))
        for epsilon in (0.01, 0.1, 1.0, 5.0, 40.0):
            curve = make(epsilon)
            assert np.all(curve > previous) and np.all(np.diff(curve) >= -1e-15)
            assert curve[-1] <= epsilon
            previous = curve


def test_k_gaussian_entries_compose_as_the_gaussian_of_sigma_over_root_k():
    k, sigma, delta = 16, 8.0, 1e-6
    acc = BudgetAccountant(10.0, delta=delta)
    for i in range(k):
        acc.spend(curve=[a / (2 * sigma**2) for a in ALPHAS], label=f"gaussian {i}")
    eps, spent_delta, how = acc.composition
    assert how == "rdp" and spent_delta == delta
    one = sigma / math.sqrt(k)  # Mironov 2017, section VI.C
    assert eps == pytest.approx(on_grid(lambda a: a / (2 * one**2), delta), rel=1e-12)
    # the same releases as zCDP entries: the tight conversion over every order, a little
    # tighter than the grid of orders, never looser
    zcdp = BudgetAccountant(10.0, delta=delta)
    for _ in range(k):
        zcdp.spend(rho=1 / (2 * sigma**2))
    assert zcdp.spent <= eps <= 1.02 * zcdp.spent
    assert zcdp.spent == pytest.approx(tight(1 / (2 * one**2), delta), rel=1e-6)
    # and valid: the Gaussian of σ/√k has exactly this δ at ε (Balle & Wang 2018, Thm. 8)
    mu = 1 / one
    exact = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert exact <= delta


def test_laplace_entries_are_valid_and_beat_basic_and_zcdp_composition():
    k, epsilon, delta = 50, 0.05, 1e-6
    acc = BudgetAccountant(5.0, delta=delta)
    for _ in range(k):
        acc.spend(epsilon, curve=laplace_curve(epsilon), label="laplace")
    eps, _, how = acc.composition
    assert how == "rdp"
    assert eps == pytest.approx(on_grid(lambda a: k * float(laplace_curve(epsilon, [a])[0]),
                                        delta), rel=1e-12)
    assert eps < min(k * epsilon, tight(k * epsilon**2 / 2, delta))
    # one Laplace entry: the RDP accounting reports less than its ε, and that (ε', δ) holds
    # on the Laplace's exact privacy profile δ(ε') = 1 - e**((ε' - ε)/2) (e.g. Balle et al.
    # 2018), close to tight
    for epsilon, delta in ((1.0, 1e-3), (3.0, 1e-2), (0.5, 1e-1)):
        one = BudgetAccountant(5.0, delta=delta)
        one.spend(epsilon, curve=laplace_curve(epsilon))
        reported, _, how = one.composition
        assert how == "rdp" and reported < epsilon
        assert 0.9 * delta < 1 - math.exp((reported - epsilon) / 2) <= delta


def test_a_mixed_ledger_reports_the_tightest_valid_accounting(tmp_path):
    path = tmp_path / "mixed.jsonl"
    delta = 1e-6
    with BudgetAccountant.open_ledger(path, epsilon=10.0, delta=delta, create=True) as acc:
        acc.spend(0.3, label="pure")
        acc.spend(0.4, delta=1e-9, label="approx")
        acc.spend(rho=0.05, label="zcdp")
        acc.spend(curve=zcdp_curve(0.02), label="rdp without epsilon")
        acc.spend(0.2, curve=laplace_curve(0.2), label="rdp with epsilon")
        mixed = acc.composition
    eps, spent_delta, how = mixed
    slack = delta - 1e-9
    by_hand = {  # no basic or advanced accounting: a zCDP entry and an RDP entry without ε
        "rdp": on_grid(lambda a: 0.07 * a + rr(0.3, a)
                       + float(laplace_curve(0.2, [a])[0]), slack) + 0.4,
        "rdp, pure kept pure": on_grid(lambda a: 0.07 * a + float(laplace_curve(0.2, [a])[0]),
                                       slack) + 0.3 + 0.4,
    }
    assert spent_delta == delta
    assert eps == pytest.approx(min(by_hand.values()), rel=1e-12)
    assert eps == pytest.approx(by_hand[how], rel=1e-12)
    # every RDP entry with an ε: the zCDP and (ε, δ) accountings come back
    with_eps = BudgetAccountant(10.0, delta=delta)
    with_eps.spend(0.3)
    with_eps.spend(0.2, curve=laplace_curve(0.2))
    basic = BudgetAccountant(10.0, delta=delta)
    basic.spend(0.3)
    basic.spend(0.2)
    assert with_eps.spent <= basic.spent == pytest.approx(0.5)
    assert with_eps.composition[0] == pytest.approx(min(
        0.5, math.sqrt(2 * math.log(1 / delta) * 0.13) + 0.3 * math.expm1(0.3)
        + 0.2 * math.expm1(0.2), tight((0.09 + 0.04) / 2, delta),
        on_grid(lambda a: rr(0.3, a) + float(laplace_curve(0.2, [a])[0]), delta),
        on_grid(lambda a: float(laplace_curve(0.2, [a])[0]), delta) + 0.3), rel=1e-6)
    # the file keeps the curves, and the hash chain covers them
    loaded = BudgetAccountant.load(path)
    assert loaded.composition == mixed
    assert [s.notion for s in loaded.ledger] == ["pure", "approx", "zcdp", "rdp", "rdp"]
    assert loaded.ledger[3].curve == tuple(zcdp_curve(0.02).tolist())
    assert loaded.ledger[3].orders == ALPHAS and loaded.ledger[4].epsilon == 0.2
    lines = path.read_text().splitlines()
    item = json.loads(lines[4])
    item["curve"][0] /= 2
    lines[4] = json.dumps(item, separators=(",", ":"), sort_keys=True)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LedgerError, match=r"entry 4 \(line 5\) fails its hash check"):
        BudgetAccountant.load(path)


def test_the_ledger_is_never_looser_than_its_zcdp_accounting():
    rng = np.random.default_rng(7)
    for _ in range(12):
        acc = BudgetAccountant(1e6, delta=1e-7)
        pure = rng.uniform(0.01, 1.0, rng.integers(0, 6)).tolist()
        rhos = rng.uniform(0.001, 0.5, rng.integers(1, 6)).tolist()
        for e in pure:
            acc.spend(e)
        for r in rhos:
            acc.spend(rho=r)
        zcdp = tight(sum(rhos) + sum(e * e / 2 for e in pure), 1e-7)
        assert acc.spent <= zcdp * (1 + 1e-6)
        more = acc.spent
        acc.spend(curve=laplace_curve(0.1))  # a spend never lowers what was spent
        assert acc.spent > more


def test_a_larger_delta_budget_never_costs_more_epsilon():
    last = math.inf
    for delta in (1e-12, 1e-9, 1e-6, 1e-3):
        acc = BudgetAccountant(100.0, delta=delta)
        for _ in range(5):
            acc.spend(curve=laplace_curve(0.5))
            acc.spend(0.1)
        assert acc.spent < last
        last = acc.spent


def test_rdp_entries_across_neighbouring_relations():
    # a replaced record is two add/remove steps: the group curve bounds the true divergence
    # of the Laplace shifted by 2 (laplace_curve at 2ε) and of the Gaussian (4ρα, BS16 1.9)
    for epsilon in (0.1, 1.0):
        charged = group_curve(laplace_curve(epsilon))
        finite = np.isfinite(charged)
        assert finite.sum() > 100 and not finite[-1]
        assert np.all(charged[finite] >= laplace_curve(2 * epsilon)[finite])
    charged = group_curve(zcdp_curve(0.1))
    finite = np.isfinite(charged)
    assert np.all(charged[finite] >= 4 * 0.1 * np.asarray(ALPHAS)[finite])
    replace = BudgetAccountant(50.0, delta=1e-6, neighbouring="replace")
    entry = replace.spend(curve=zcdp_curve(0.1), neighbouring="add-remove")
    assert np.array_equal(entry.charged_curve, group_curve(zcdp_curve(0.1)))
    assert replace.spent == pytest.approx(
        rdp_to_approx(group_curve(zcdp_curve(0.1)), 1e-6), rel=1e-12)
    assert replace.spent > zcdp_to_approx(0.4, 1e-6)  # looser than zCDP's exact 4ρ
    with pytest.raises(BudgetError, match="cannot be charged to a replace budget"):
        replace.spend(curve=zcdp_curve(0.1), delta=1e-12, neighbouring="add-remove")
    add_remove = BudgetAccountant(5.0, delta=1e-6)
    given = zcdp_curve(0.1)
    entry = add_remove.spend(curve=given, neighbouring="replace")
    assert entry.charged_curve.tolist() == list(entry.curve) == given.tolist()
    given[:] = 0.0  # the ledger keeps its own copy
    assert entry.charged_curve.tolist() == list(entry.curve) != given.tolist()


def test_bad_rdp_spends_name_what_is_wrong():
    acc = BudgetAccountant(1.0, delta=1e-6)
    with pytest.raises(InputError, match="one value per order"):
        acc.spend(curve=[0.1, 0.2])
    with pytest.raises(InputError, match="increasing"):
        acc.spend(curve=[0.1, 0.2], orders=[3.0, 2.0])
    with pytest.raises(InputError, match=r"values must be >= 0, got -0\.1"):
        acc.spend(curve=[-0.1, 0.2], orders=[2.0, 3.0])
    with pytest.raises(InputError, match="must be finite"):
        acc.spend(curve=[0.1, math.inf], orders=[2.0, 3.0])
    with pytest.raises(InputError, match="rho or an RDP curve, not both"):
        acc.spend(rho=0.1, curve=zcdp_curve(0.1))
    with pytest.raises(InputError, match="orders apply to an RDP curve"):
        acc.spend(0.1, orders=ALPHAS)
    with pytest.raises(BudgetError, match="needs a budget with delta > 0"):
        BudgetAccountant(1.0).spend(curve=zcdp_curve(0.01))
    assert BudgetAccountant(1.0).spend(0.5, curve=laplace_curve(0.5)).charged == 0.5
    with pytest.raises(BudgetError, match="cannot spend an RDP curve"):
        acc.spend(curve=zcdp_curve(1.0))
    assert acc.ledger == ()
    # curves on other orders compose on the orders they share
    acc = BudgetAccountant(10.0, delta=1e-6)
    acc.spend(curve=[0.01, 0.02, 0.04], orders=[2.0, 4.0, 8.0])
    acc.spend(curve=[0.01, 0.03], orders=[4.0, 16.0])
    acc.spend(rho=0.001)
    assert acc.composition[2] == "rdp"
    assert acc.spent == pytest.approx(on_grid(lambda a: 0.02 + 0.01 + 0.001 * a, 1e-6,
                                              orders=[4.0]), rel=1e-12)
    with pytest.raises(BudgetError, match="would share no order"):
        acc.spend(curve=[0.01], orders=[2.0])
    assert len(acc.ledger) == 3


def test_a_ledger_written_by_the_previous_version_loads_and_takes_rdp_spends(tmp_path):
    """tests/data/ledger_v2_main_8cd43f0.jsonl: written by main at 8cd43f0 (a replace-one
    budget of ε = 4, δ = 1e-6; a pure, an add/remove approx, a zCDP, an add/remove parallel
    group of two parts and a seeded person-level spend)."""
    path = tmp_path / "old.jsonl"
    shutil.copy(MAIN_LEDGER, path)
    acc = BudgetAccountant.load(path)
    assert [s.notion for s in acc.ledger] == ["pure", "approx", "zcdp", "pure", "pure"]
    assert [s.label for s in acc.ledger][-1] == "seeded" and acc.ledger[-1].seed == 7
    # by hand: charged to replace-one, the add/remove entries double: the approx one
    # (and its δ: (1 + e**ε) δ) and the group (add/remove: its largest part)
    approx_delta = (1 + math.exp(0.5)) * 1e-9
    slack = 1e-6 - approx_delta - 1e-30
    pure = (0.25, 2 * 0.3, 0.05)
    routes = {
        "zcdp": tight(0.02 + sum(e * e / 2 for e in pure), slack) + 1.0,
        "zcdp, pure kept pure": tight(0.02, slack) + sum(pure) + 1.0,
        "rdp": on_grid(lambda a: 0.02 * a + sum(rr(e, a) for e in pure), slack) + 1.0,
        "rdp, pure kept pure": on_grid(lambda a: 0.02 * a, slack) + sum(pure) + 1.0,
    }
    eps, delta, how = acc.composition
    assert delta == 1e-6 and eps == pytest.approx(routes[how], rel=1e-6)
    assert eps == pytest.approx(min(routes.values()), rel=1e-6)
    with BudgetAccountant.open_ledger(path) as ledger:
        ledger.spend(0.1, curve=laplace_curve(0.1), label="laplace")
    again = BudgetAccountant.load(path)
    assert again.ledger[-1].notion == "rdp" and again.spent > eps
    assert path.read_bytes().startswith(MAIN_LEDGER.read_bytes())  # appended, not rewritten
