"""The sampler's stated (ε, δ), by exhaustive enumeration; ranges (no clipping or wrapping);
randomized response at large ε and its input types."""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from gpuppdp.dp import (
    GeometricMechanism,
    LaplaceMechanism,
    NoiseRangeError,
    RandomizedResponse,
    RandomSource,
)

pytestmark = pytest.mark.filterwarnings("ignore::gpuppdp.dp.SeededNoiseWarning")

PREC = 120  # decimal digits: products of a dozen float64 probabilities stay (nearly) exact


def exact_noise_distribution(sampler):
    """``{z: P[Z = z]}`` of the sampler *as run*: every outcome of its trials enumerated.

    The trials are exact (``test_dp_chacha``): trial ``row`` fires with probability
    ``probabilities[row]`` exactly, complemented where ``invert[row]``.  ``Z = 0`` unless
    trial 1 fires; then ``|Z| = 1 + Σ_j b_j 2**j`` (trial ``2 + j`` gives ``b_j``) and the
    sign is a fair bit.  The support is ``|Z| <= 2**J``: all of it is enumerated.
    """
    with localcontext() as ctx:
        ctx.prec = PREC
        fire = [Decimal(p) if not inv else 1 - Decimal(p)
                for p, inv in zip(sampler.probabilities, sampler.invert)]
        magnitude = [Decimal(1)]  # P[G = g] over g < 2**j, doubling one digit at a time
        for j in range(sampler.bits):
            q = fire[2 + j]
            magnitude = [m * (1 - q) for m in magnitude] + [m * q for m in magnitude]
        dist = {0: 1 - fire[1]}
        half = fire[1] / 2
        for g, m in enumerate(magnitude):
            dist[g + 1] = dist[-(g + 1)] = half * m
        assert abs(sum(dist.values()) - 1) < Decimal(10) ** -100
        return dist


def hockey_stick(dist, shift: int, epsilon: float) -> Decimal:
    """``max_S P[Z ∈ S] - e**ε P[Z + shift ∈ S]`` = ``Σ_z max(0, P[z] - e**ε P[z - shift])``:
    the smallest δ of one coordinate moved by ``shift``."""
    with localcontext() as ctx:
        ctx.prec = PREC
        e = Decimal(epsilon).exp()
        zero = Decimal(0)
        return sum((max(zero, p - e * dist.get(z - shift, zero)) for z, p in dist.items()),
                   zero)


MECHANISMS = [
    ("geometric eps=0.5", lambda: GeometricMechanism(epsilon=0.5)),
    ("geometric eps=1 sens=2", lambda: GeometricMechanism(epsilon=1.0, sensitivity=2)),
    ("geometric eps=40", lambda: GeometricMechanism(epsilon=40.0)),
    ("geometric eps=600", lambda: GeometricMechanism(epsilon=600.0)),
    ("laplace grid sens 3", lambda: LaplaceMechanism(epsilon=1.0, sensitivity=1.0,
                                                     granularity=0.5)),
    ("laplace 2 coordinates", lambda: LaplaceMechanism(epsilon=3.0, sensitivity=1.0,
                                                       granularity=0.25, coordinates=2)),
]


@pytest.mark.parametrize("name,make", MECHANISMS, ids=[m[0] for m in MECHANISMS])
def test_stated_delta_bounds_the_exact_privacy_loss(name, make):
    """Enumerate the whole output distribution of the sampler as run; for every shift a
    neighbour can cause (1 .. grid sensitivity, on one coordinate) the exact δ at the stated
    ε is within the stated δ per coordinate -- and at a slightly smaller ε it is not: the
    stated ε is tight, the check has teeth."""
    mech = make()
    sampler = mech.sampler
    assert 0 < mech.delta <= mech.coordinates * sampler.top_probability < 1e-150
    dist = exact_noise_distribution(sampler)
    assert max(abs(z) for z in dist) == 2**sampler.bits
    worst = Decimal(0)
    for shift in range(1, mech.grid_sensitivity + 1):
        for signed in (shift, -shift):
            delta = hockey_stick(dist, signed, mech.epsilon)
            assert delta <= Decimal(sampler.top_probability), (name, signed, delta)
            worst = max(worst, delta)
    assert worst > 0  # the finite support costs a (tiny) δ: not pure ε-DP, as stated
    below = hockey_stick(dist, mech.grid_sensitivity, mech.epsilon * (1 - 1e-9))
    assert below > Decimal(10) ** -14


def test_sampler_support_and_refusals():
    with pytest.raises(ValueError, match=r"epsilon=1000 is too large.*below about 690"):
        GeometricMechanism(epsilon=1000.0)
    with pytest.raises(ValueError, match="too large for the exact sampler"):
        LaplaceMechanism(epsilon=1e-9, sensitivity=1.0)
    noisy = GeometricMechanism(epsilon=600.0)
    assert noisy.sampler.bits >= 1 and noisy.delta > 0
    # ε is not exceeded by the rounding of the trial probabilities: the noise is a hair wider
    mech = GeometricMechanism(epsilon=1.0)
    assert 1.0 < mech.scale < 1.0 + 1e-12


# --- no clipping, no wrapping ----------------------------------------------------------

def test_laplace_refuses_values_beyond_its_exact_range():
    mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0)
    src = RandomSource("cpu", seed=1)
    with pytest.raises(NoiseRangeError, match=r"a query value is out of .* range") as info:
        mech.release(1e15, random=src)  # was clipped to 5.63e14
    for shown in ("1e+15", "1000000000000000", "1e15"):  # the range only, never the value
        assert shown not in str(info.value)
    assert isinstance(info.value, OverflowError) and isinstance(info.value, ValueError)
    with pytest.raises(NoiseRangeError):
        mech.release(np.array([0.0, -1e15]), random=src)
    edge = 2.0**52 * mech.granularity  # the largest exact grid value
    out = mech.release(np.full(1000, edge), random=src)
    assert np.all(np.abs(out - edge) < 100) and out.std() > 0
    coarse = LaplaceMechanism(epsilon=1.0, sensitivity=1.0, granularity=2.0**8)
    assert abs(coarse.release(1e15, random=src) - 1e15) < 1e5  # a coarser grid reaches it


def test_geometric_refuses_values_that_would_wrap():
    mech = GeometricMechanism(epsilon=0.5)
    src = RandomSource("cpu", seed=2)
    out = mech.release(np.full(100_000, 2**62, dtype=np.int64), random=src)  # wrapped before
    assert out.min() > 2**62 - 1000 and out.max() < 2**62 + 1000 and len(np.unique(out)) > 5
    low = mech.release(np.full(10, -2**62, dtype=np.int64), random=src)
    assert low.max() < -2**62 + 1000
    for bad in (np.full(3, 2**62 + 1, dtype=np.int64), np.array([2**63 + 5], dtype=np.uint64),
                2**70, [1, -2**70], np.array([-2**62 - 1])):
        with pytest.raises(NoiseRangeError, match="a query value is out of") as info:
            mech.release(bad, random=src)
        assert not any(str(v) in str(info.value) for v in np.ravel(bad))  # never quoted


# --- randomized response --------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1.0, 36.0, 37.0, 40.0, 200.0])
def test_flip_probability_is_exact_and_positive(epsilon):
    rr = RandomizedResponse(epsilon=epsilon)
    with localcontext() as ctx:
        ctx.prec = 100
        exact = 1 / (1 + Decimal(epsilon).exp())
        flip = Decimal(rr.flip_probability)
        assert flip >= exact  # rounded up: the effective ε is at most the stated one
        assert Decimal(math.nextafter(rr.flip_probability, 0)) < exact  # by one float at most
        assert ((1 - flip) / flip).ln() <= Decimal(rr.epsilon)
    assert rr.flip_probability > 0 and rr.delta == 0.0


def test_flip_probability_never_rounds_to_zero():
    assert RandomizedResponse(epsilon=40.0).flip_probability == pytest.approx(4.248354e-18,
                                                                              rel=1e-6)
    assert RandomizedResponse(epsilon=1e6).flip_probability == 5e-324
    rr = RandomizedResponse(truth_probability=0.9)
    assert rr.flip_probability == 1.0 - 0.9
    with localcontext() as ctx:
        ctx.prec = 100
        assert Decimal(rr.epsilon) >= (Decimal(0.9) / Decimal(1.0 - 0.9)).ln()


def test_rare_flips_happen_at_their_rate():
    src = RandomSource("cpu", seed=5)
    truth = np.zeros(1_000_000, dtype=bool)
    rr = RandomizedResponse(epsilon=12.0)  # flip probability 6.1e-6: about 6 flips
    flips = int(rr.release(truth, random=src).sum())
    assert 0 < flips < 30
    assert not RandomizedResponse(epsilon=40.0).release(truth, random=src).any()


def test_randomized_response_takes_booleans_only(backend):
    rr = RandomizedResponse(epsilon=1.0)
    src = RandomSource(backend, seed=6)
    for bad, dtype in ((np.array(["no", "yes"]), "<U3"), (np.array([0, 1]), "int64"),
                       ([0.0, 1.0], "float64"), (["yes"], "<U3")):
        with pytest.raises(TypeError, match=f"boolean answers, got dtype {dtype}"):
            rr.release(bad, random=src)
    with pytest.raises(TypeError, match="boolean answers"):
        rr.release(backend.asarray(np.array([1, 0])), random=src)
    out = rr.release([True, False, True], random=src)
    assert backend.to_host(out).dtype == bool and out.shape == (3,)
    assert backend.to_host(rr.release(True, random=src)).shape == ()
    device = rr.release(backend.asarray(np.ones(5, dtype=bool)), random=src)
    assert isinstance(device, backend.xp.ndarray)
