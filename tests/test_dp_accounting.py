"""Conversions between privacy notions against hand-computed values, their monotonicity, and
composition in zCDP against basic composition."""

import math

import pytest

from gpuppdp.dp.accounting import (
    ALPHAS,
    advanced_composition,
    compose_approx,
    pure_to_zcdp,
    rdp_to_approx,
    zcdp_curve,
    zcdp_to_approx,
    zcdp_to_approx_standard,
)
from gpuppdp.dp.gaussian import GaussianMechanism
from gpuppdp.errors import InputError


def test_hand_computed_values():
    assert pure_to_zcdp(0.2) == pytest.approx(0.02)
    # ρ + 2 sqrt(ρ ln(1/δ)) at ρ = 0.5, δ = 1e-6: 0.5 + 2 sqrt(0.5 * 13.8155...) = 5.75652
    assert zcdp_to_approx_standard(0.5, 1e-6) == pytest.approx(5.756522, abs=1e-6)
    # one order by hand: α = 4, τ = 2: 2 + (ln 1e6 - ln 4)/3 + ln(3/4) = 6.1133...
    alpha, tau = 4.0, 2.0
    by_hand = tau + (math.log(1e6) - math.log(alpha)) / (alpha - 1) + math.log(1 - 1 / alpha)
    assert rdp_to_approx([tau], 1e-6, alphas=[alpha]) == pytest.approx(by_hand, rel=1e-12)
    # 1000 × ε = 0.01 at δ' = 1e-6: sqrt(2 ln(1e6) · 0.1) + 1000 · 0.01 (e**0.01 - 1)
    assert advanced_composition([0.01] * 1000, 1e-6) == pytest.approx(
        math.sqrt(2 * math.log(1e6) * 0.1) + 10 * math.expm1(0.01), rel=1e-12)


def test_tight_conversion_is_tighter_and_monotone():
    last = 0.0
    for rho in (1e-4, 1e-2, 0.1, 0.5, 2.0, 10.0):
        tight = zcdp_to_approx(rho, 1e-6)
        assert tight < zcdp_to_approx_standard(rho, 1e-6)
        assert tight > last
        assert zcdp_to_approx(rho, 1e-3) < tight  # a larger δ costs less ε
        # the RDP grid's coarser orders give a slightly larger, never smaller, bound
        assert tight <= rdp_to_approx(zcdp_curve(rho), 1e-6) <= tight * 1.05 + 1e-9
        last = tight


def test_zcdp_composition_of_gaussians_beats_basic_composition():
    mech = GaussianMechanism(epsilon=0.5, delta=1e-7, sensitivity=1.0)
    k = 20
    basic_eps, basic_delta = compose_approx([0.5] * k, [1e-7] * k)
    assert (basic_eps, basic_delta) == pytest.approx((10.0, 2e-6))
    assert zcdp_to_approx(k * mech.rho, basic_delta) < 0.6 * basic_eps


def test_compose_approx_takes_advanced_only_where_tighter():
    assert compose_approx([1.0] * 3, [0.0] * 3, 1e-6) == (3.0, 0.0)  # basic is tighter
    eps, delta = compose_approx([0.01] * 1000, [0.0] * 1000, 1e-6)
    assert eps < 2 and delta == 1e-6


def test_bad_inputs_name_the_parameter():
    with pytest.raises(InputError, match="delta"):
        zcdp_to_approx(0.5, 0.0)
    with pytest.raises(InputError, match="rho"):
        zcdp_to_approx(-1.0, 1e-6)
    with pytest.raises(InputError, match="one value per order"):
        rdp_to_approx([1.0], 1e-6, alphas=ALPHAS)
