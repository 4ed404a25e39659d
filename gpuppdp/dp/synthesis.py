"""Differentially private synthetic data: MST (McKenna, Miklau & Sheldon 2021).

:class:`MSTSynthesizer` fits a tree-structured graphical model to noisy marginals and samples
records from it, in the five steps of MST, the budget ``ρ`` (zCDP) split in thirds:

1. every 1-way marginal measured with the discrete Gaussian (one mechanism over the ``d``
   marginals: L2 sensitivity ``sqrt(d)``, ``ρ/3``); the values whose noisy count is below
   ``3σ`` merged into one code per column (MST's domain compression);
2. a maximum spanning tree of the attribute pairs chosen by ``d - 1`` exponential mechanisms
   (Kruskal: each step picks among the pairs joining two components), each pair scored by
   the L1 distance between its true 2-way marginal and the one the noisy 1-ways imply by
   independence (sensitivity 1); each step at ``ε_s = sqrt(8 (ρ/3) / (d - 1))``, ``ε_s²/8``
   zCDP as an ``ε_s``-bounded-range mechanism (Cesar & Rogers 2021, Lemma 3.2);
3. the 2-way marginals of the tree's edges measured as the 1-ways (``ρ/3``);
4. a consistent model: each column's distribution is the inverse-variance average of its
   noisy 1-way and of the sums of its noisy 2-ways, projected on the simplex (Duchi et al.
   2008); each edge's noisy joint is projected on the simplex and fitted to both columns'
   distributions by iterative proportional fitting (from a ``1e-6`` share of their product,
   so every row it must fill has support).  On a tree, pairwise marginals that agree on
   their shared columns are the marginals of ``P(x) = Π P_uv / Π p_v**(deg v - 1)``: where
   private-pgm fits that model by mirror descent, this fits it in closed form;
5. records drawn by ancestral sampling along the tree (from column 0): each code from its
   parent's conditional, with exact integer coins (:func:`~gpuppdp.dp.coins.uniform_below`
   on probabilities scaled to ``2**40``), on the backend; a merged code becomes one of its
   values uniformly, a bin a uniform value in it.

The marginals are counted on the backend (:func:`marginal_counts`): the engine's group-by
(:func:`~gpuppdp.kernels.groupby.group`) first reduces the rows to their distinct tuples with
counts, then all cliques' counts come from one ``bincount`` per batch.  Everything released
is post-processing of the noisy marginals and of the selection; the number of records is
estimated from the noisy 1-ways (private-pgm's MST takes it as public).  The whole fit is one
zCDP spend (``ρ`` and the discrete Gaussians' support δ), checked before the data is read and
charged before any noise is drawn.

Columns are categorical with a public domain (a hierarchy at a level, a list of values, or
values declared public, as :func:`~gpuppdp.dp.releases.dp_histogram` takes them), or numeric
with public bounds and a number of equal-width bins (``bins``; values outside are clipped to
the first or last bin, a per-row function of public parameters).

References
----------
.. [MMS21] R. McKenna, G. Miklau and D. Sheldon, "Winning the NIST Contest: A scalable and
   general approach to differentially private synthetic data", J. Privacy and
   Confidentiality 11(3), 2021.
.. [CR21] M. Cesar and R. Rogers, "Bounding, Concentrating, and Truncating: Unifying Privacy
   Loss Composition for Data Analytics", ALT 2021.
.. [DSSC08] J. Duchi, S. Shalev-Shwartz, Y. Singer and T. Chandra, "Efficient Projections
   onto the l1-Ball for Learning in High Dimensions", ICML 2008.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..kernels import groupby
from ..validation import check_epsilon, check_int, format_values
from .accountant import BudgetAccountant
from .accounting import approx_to_zcdp, zcdp_to_approx
from .cells import OTHER, UNKNOWN_CHOICES, _check_source, _column_codes, _out_of_domain, \
    _public_columns
from .coins import uniform_below
from .gaussian import DiscreteGaussianMechanism
from .randomness import RandomSource, default_source
from .selection import exponential_mechanism

__all__ = ["MSTSynthesizer", "marginal_counts", "project_simplex", "SCALE_BITS"]

#: conditional probabilities become integer weights of this many bits for the exact coins
SCALE_BITS = 40
_COMPRESS_SIGMAS = 3.0  # MST: values with a noisy count below 3σ are merged
_PRODUCT_SHARE = 1e-6  # the share of the product of the margins IPF starts from
_IPF_STEPS = 200
_BATCH = 1 << 24  # entries of one batched bincount
_MARGIN = 1.0 - 1e-6  # the mechanisms' float slack is absorbed by this share of ρ


def marginal_counts(xp, rows, weights, radix, cliques) -> tuple:
    """Counts of each clique's marginal: ``(flat int64 counts on the backend, offsets)``,
    clique ``c``'s table (row-major over its columns) at ``flat[offsets[c]:offsets[c+1]]``.

    ``rows`` (G, d) int64 codes (column ``j`` below ``radix[j]``) with ``weights`` (G,) (the
    distinct tuples of a table and their counts: :func:`frequency_set`); the cliques'
    mixed-radix keys shifted by their offsets are counted by one ``bincount`` per batch of
    about ``2**24`` entries."""
    sizes = [math.prod(int(radix[j]) for j in c) for c in cliques]
    offsets = np.zeros(len(cliques) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    g = max(int(rows.shape[0]), 1)
    per = max(1, _BATCH // g)
    parts = []
    w = weights.astype(xp.float64)
    for lo in range(0, len(cliques), per):
        batch = cliques[lo:lo + per]
        keys = []
        for i, c in enumerate(batch):
            key = xp.full(rows.shape[0], int(offsets[lo + i] - offsets[lo]), dtype=xp.int64)
            stride = 1
            for j in reversed(c):
                key += rows[:, j] * stride
                stride *= int(radix[j])
            keys.append(key)
        span = int(offsets[lo + len(batch)] - offsets[lo])
        parts.append(xp.bincount(xp.concatenate(keys), weights=xp.tile(w, len(batch)),
                                 minlength=span))
    flat = xp.concatenate(parts) if parts else xp.zeros(0, dtype=xp.float64)
    return xp.rint(flat).astype(xp.int64), offsets


def frequency_set(xp, codes, radix) -> tuple:
    """The distinct rows of ``codes`` (n, d) and their counts, by the engine's group-by."""
    if codes.shape[0] == 0:
        return codes, xp.zeros(0, dtype=xp.int64)
    ids, rep, _ = groupby.group(xp, codes, [int(r) for r in radix])
    return codes[rep], xp.bincount(ids, minlength=int(rep.shape[0])).astype(xp.int64)


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` (m, k) on the probability simplex (Duchi et
    al. 2008, Figure 1); NaN rows are not expected."""
    v = np.atleast_2d(np.asarray(v, dtype=np.float64))
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, v.shape[1] + 1)
    rho = np.sum(u - css / k > 0, axis=1)
    theta = css[np.arange(v.shape[0]), rho - 1] / rho
    return np.maximum(v - theta[:, None], 0.0)


@dataclass
class _Column:
    """A column's public domain: ``labels`` (categorical) or ``bins`` (numeric)."""

    name: str
    labels: np.ndarray | None = None
    bins: tuple | None = None  # (lower, upper, count)
    integer: bool = False

    @property
    def size(self) -> int:
        if self.labels is not None:
            return len(self.labels)
        assert self.bins is not None  # a column has labels or bins
        return int(self.bins[2])


def _check_bins(bins, cols) -> dict:
    out = {}
    for col, spec in dict(bins or {}).items():
        if col not in cols:
            raise InputError(f"bins given for {col!r}, which is not among the columns {cols}")
        if not isinstance(spec, (tuple, list)) or len(spec) != 3:
            raise InputError(f"bins[{col!r}] must be (lower, upper, count), got {spec!r}")
        lower, upper, count = spec
        for name, v in (("lower", lower), ("upper", upper)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise InputError(f"bins[{col!r}] {name} must be a finite number, got {v!r}")
        if not upper > lower:
            raise InputError(f"bins[{col!r}]: upper must exceed lower, got {spec!r}")
        out[col] = (float(lower), float(upper), check_int(f"bins[{col!r}] count", count, 1))
    return out


def _bin_codes(values: pd.Series, spec: tuple) -> np.ndarray:
    """Equal-width bin of each value (clipped to the bounds), -1 where missing or not a
    number."""
    lower, upper, count = spec
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    code = np.floor((np.clip(x, lower, upper) - lower) / (upper - lower) * count)
    code = np.minimum(code, count - 1)
    return np.where(np.isnan(x), -1, code).astype(np.int64)


class MSTSynthesizer:
    """MST (McKenna, Miklau & Sheldon 2021): synthetic records from a tree of noisy 2-way
    marginals, ``fit(data)`` then ``sample(n)`` (module docstring).

    Parameters
    ----------
    epsilon, delta : float, optional
        The (ε, δ) target; the zCDP budget is the largest ρ whose tight conversion meets it
        (:func:`~gpuppdp.dp.accounting.approx_to_zcdp`).
    rho : float, optional
        The zCDP budget instead of ``(epsilon, delta)``.
    columns : sequence of str, optional
        The columns to synthesize (default: every column of the data).
    hierarchies, levels, domains, public_domain
        Each categorical column's public domain, as in
        :func:`~gpuppdp.dp.releases.dp_histogram` (a hierarchy's level, a list of values,
        or values read from the data when declared public).
    bins : mapping column -> (lower, upper, count), optional
        Numeric columns: public bounds and equal-width bins; integer bounds give integer
        synthetic values (a uniform value in the bin, floored), float bounds floats.
    unknown : {"error", "other", "drop"}
        Rows with a value outside a categorical domain (or missing): refused after the
        charge, synthesized as ``"(other)"``, or dropped; as :func:`dp_histogram`.
    random : RandomSource, optional
        Backend and randomness (a seeded source needs ``insecure=True``).
    accountant : BudgetAccountant, optional
        Checked before the data is read, charged once (``rho`` and δ) before any noise.

    Attributes
    ----------
    edges : list of (str, str)
        The tree's edges, in the order selected (set by :meth:`fit`, as the two below).
    rows_estimate : int
        The noisy number of records (the default of :meth:`sample`).
    privacy : dict
        ``rho``, ``delta`` (the support's), ``epsilon`` at the target δ and each step's
        parameters.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": list("xyxy") * 50, "b": list("uuvv") * 50})
    >>> syn = MSTSynthesizer(epsilon=5.0, delta=1e-6, public_domain=True,
    ...                      random=RandomSource("cpu")).fit(df).sample(10)
    >>> syn.shape
    (10, 2)
    """

    def __init__(self, epsilon: float | None = None, delta: float | None = None, *,
                 rho: float | None = None, columns: Sequence[str] | None = None,
                 hierarchies: Mapping | None = None, levels: Mapping[str, int] | None = None,
                 domains: Mapping[str, Sequence] | None = None,
                 public_domain: bool | str | Sequence[str] = False,
                 bins: Mapping[str, tuple] | None = None, unknown: str = "error",
                 random: RandomSource | None = None,
                 accountant: BudgetAccountant | None = None):
        if (rho is None) == (epsilon is None) or (epsilon is None) != (delta is None):
            raise InputError(f"give epsilon and delta together, or rho; got epsilon={epsilon!r}"
                             f", delta={delta!r}, rho={rho!r}")
        if rho is not None:
            self.rho = check_epsilon("rho", rho)
        else:
            self.rho = approx_to_zcdp(epsilon, delta)  # type: ignore[arg-type]
        self.epsilon, self.delta = epsilon, delta
        if unknown not in UNKNOWN_CHOICES:
            raise InputError(f"unknown must be one of {UNKNOWN_CHOICES}, got {unknown!r}")
        if accountant is not None and not isinstance(accountant, BudgetAccountant):
            raise InputError(f"accountant must be a BudgetAccountant, got "
                             f"{type(accountant).__name__}")
        self.columns = None if columns is None else list(columns)
        self.hierarchies, self.levels = dict(hierarchies or {}), dict(levels or {})
        self.domains, self.public_domain = dict(domains or {}), public_domain
        self.bins, self.unknown = bins, unknown
        self.source = random if random is not None else default_source()
        _check_source(self.source)
        self.accountant = accountant
        self._model: dict | None = None

    # -- the budget -------------------------------------------------------------------------
    def mechanisms(self, d: int) -> tuple:
        """The three steps' parameters for ``d`` columns: the 1-way and 2-way discrete
        Gaussians, the selection's ``ε`` per step, and the charge ``{"rho", "delta"}``."""
        share = self.rho * _MARGIN / (3.0 if d > 1 else 1.0)
        one = DiscreteGaussianMechanism(rho=share, sensitivity=math.sqrt(d), coordinates=d)
        if d == 1:
            return one, None, 0.0, {"rho": one.rho, "delta": one.delta_trunc}
        two = DiscreteGaussianMechanism(rho=share, sensitivity=math.sqrt(d - 1),
                                        coordinates=d - 1)
        eps_select = math.sqrt(8.0 * share / (d - 1))
        rho = one.rho + share + two.rho
        if rho > self.rho:  # pragma: no cover - the margin absorbs the float slack
            raise InputError(f"the mechanisms' float slack exceeds the budget rho={self.rho:g}")
        return one, two, eps_select, {"rho": rho, "delta": one.delta_trunc + two.delta_trunc}

    # -- encoding ---------------------------------------------------------------------------
    def _columns_of(self, data) -> list[str]:
        """The columns to synthesize (the schema is public)."""
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        cols = list(data.columns) if self.columns is None else self.columns
        missing = [c for c in cols if c not in data.columns]
        if missing or not cols or len(set(cols)) != len(cols):
            raise InputError(f"columns must name distinct columns of the data, got {cols!r}"
                             + (f"; not in the data: {format_values(missing)}" if missing
                                else ""))
        return cols

    def _encode(self, data: pd.DataFrame, cols: list[str]) -> tuple:
        """``(columns, codes (n, d) host int64 of the kept rows, out-of-domain columns)``."""
        bins = _check_bins(self.bins, cols)
        public = _public_columns(self.public_domain, [c for c in cols if c not in bins])
        spec, codes, bad, undeclared = [], [], [], []
        for col in cols:
            if col in bins:
                lower, upper, _ = dict(self.bins or {})[col]
                integer = all(isinstance(v, numbers.Integral) for v in (lower, upper))
                spec.append(_Column(col, bins=bins[col], integer=integer))
                codes.append(_bin_codes(data[col], bins[col]))
            else:
                got = _column_codes(col, data[col], self.hierarchies.get(col),
                                    self.levels.get(col, 0), self.domains, public, "leaves",
                                    deferred=True)
                if got is None:
                    undeclared.append(col)
                    continue
                c, labels, read = got
                if self.unknown == "other" and not read:
                    c = np.where(c >= 0, c, len(labels))
                    labels = np.append(labels, np.array([OTHER], dtype=object))
                spec.append(_Column(col, labels=labels))
                codes.append(c)
            if (codes[-1] < 0).any():
                bad.append(col)
        if undeclared:
            raise InputError(
                f"column(s) {format_values(undeclared)} have no public domain: give a "
                "hierarchy (hierarchies=...), the list of values (domains=...), bins for a "
                "numeric column (bins=...), or declare the values public (public_domain=True)")
        table = np.stack(codes, axis=1) if codes else np.zeros((len(data), 0), np.int64)
        table = table[(table >= 0).all(axis=1)]
        return spec, table, [] if self.unknown == "drop" else bad

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, data: pd.DataFrame) -> "MSTSynthesizer":
        """Measure, select, measure, estimate (module docstring); returns ``self``."""
        cols = self._columns_of(data)
        d = len(cols)
        one, two, eps_select, charge = self.mechanisms(d)
        if self.accountant is not None:  # before the data is read
            self.accountant.check(**charge, label="MSTSynthesizer")
        spec, host_codes, bad = self._encode(data, cols)
        names = [c.name for c in spec]
        backend, xp = self.source.backend, self.source.backend.xp
        radix = np.array([c.size for c in spec], dtype=np.int64)
        rows, counts = frequency_set(xp, backend.asarray(host_codes), radix)
        ones, off1 = marginal_counts(xp, rows, counts, radix, [(j,) for j in range(d)])
        if self.accountant is not None:
            self.accountant.spend(**charge, label=f"MSTSynthesizer over {names}",
                                  seed=self.source.seed)
        if bad:  # decided after the charge, as dp_histogram's refusal
            raise _out_of_domain(bad)
        noisy1 = backend.to_host(one.release(ones, random=self.source)).astype(np.float64)
        total = max(float(np.mean([noisy1[off1[j]:off1[j + 1]].sum() for j in range(d)])), 1.0)
        keep, merged, y1 = _compress(noisy1, off1, one.sigma)
        small = np.array([len(v) for v in y1], dtype=np.int64)
        rows = _remap(xp, backend, rows, keep, radix)
        edges, noisy2 = [], []
        if d > 1:
            pairs = [(a, b) for a in range(d) for b in range(a + 1, d)]
            flat2, off2 = marginal_counts(xp, rows, counts, small, pairs)
            scores = _independence_errors(backend.to_host(flat2), off2, pairs, y1, total)
            chosen = _select_tree(scores, pairs, d, eps_select, self.source)
            edges = [pairs[i] for i in chosen]
            picked = xp.concatenate([flat2[int(off2[i]):int(off2[i + 1])] for i in chosen])
            measured = backend.to_host(two.release(picked, random=self.source))
            cuts = np.cumsum([0] + [int(small[a] * small[b]) for a, b in edges])
            noisy2 = [measured[cuts[e]:cuts[e + 1]].astype(np.float64).reshape(
                small[a], small[b]) for e, (a, b) in enumerate(edges)]
        margins = _node_margins(y1, edges, noisy2, one.sigma, two.sigma if two else 0.0,
                                total)
        joints = _edge_joints(edges, noisy2, margins, total)
        self._model = _tree_model(d, edges, joints, margins, keep, merged, spec, backend)
        self.edges = [(names[a], names[b]) for a, b in edges]
        self.rows_estimate = int(round(total))
        at = self.delta if self.delta is not None else None
        self.privacy = {
            "rho": charge["rho"], "delta_trunc": charge["delta"],
            "epsilon": zcdp_to_approx(charge["rho"], at - charge["delta"]) if at else None,
            "delta": at, "rho_budget": self.rho,
            "one_way": {"sigma": one.sigma, "rho": one.rho},
            "selection": {"epsilon_per_step": eps_select, "steps": max(d - 1, 0),
                          "rho": eps_select**2 / 8.0 * max(d - 1, 0)},
            "two_way": None if two is None else {"sigma": two.sigma, "rho": two.rho},
            "compressed": {c.name: int(merged[j].shape[0]) for j, c in enumerate(spec)},
            "seeded": self.source.seeded, "backend": backend.name}
        return self

    # -- sampling ---------------------------------------------------------------------------
    def sample(self, n: int | None = None) -> pd.DataFrame:
        """``n`` synthetic records (default: the noisy number of records) by ancestral
        sampling along the tree, on the backend."""
        model = self._fitted()
        n = self.rows_estimate if n is None else check_int("n", n, 0)
        return _decode(model, self.sample_codes(n), self.source)

    def _fitted(self) -> dict:
        if self._model is None:
            raise InputError("fit the synthesizer before sampling (fit(data))")
        return self._model

    def sample_codes(self, n: int):
        """``n`` records as compressed codes (n, d) int64 on the backend (before the merged
        codes and the bins are expanded)."""
        m, xp = self._fitted(), self.source.backend.xp
        out = xp.zeros((n, len(m["order"])), dtype=xp.int64)
        for node in m["order"]:
            cum, starts, sums, width = m["tables"][node]
            parent = m["parent"][node]
            given = xp.zeros(n, dtype=xp.int64) if parent < 0 else out[:, parent]
            r = starts[given] + uniform_below(self.source, sums[given]) if n else given
            out[:, node] = xp.searchsorted(cum, r, side="right") - given * width
        return out


def _compress(noisy1, off1, sigma) -> tuple:
    """MST's domain compression: per column the values kept (noisy count >= 3σ; all of them
    when fewer than 2 would be), the merged ones, and the compressed noisy 1-way (the merged
    values' counts summed into one last cell)."""
    keep, merged, y1 = [], [], []
    for j in range(len(off1) - 1):
        y = noisy1[off1[j]:off1[j + 1]]
        sup = y >= _COMPRESS_SIGMAS * sigma
        if sup.sum() < 2 or sup.all():
            sup = np.ones(y.shape[0], dtype=bool)
        keep.append(np.flatnonzero(sup))
        merged.append(np.flatnonzero(~sup))
        y1.append(y[sup] if sup.all() else np.append(y[sup], y[~sup].sum()))
    return keep, merged, y1


def _remap(xp, backend, rows, keep, radix):
    """The rows' codes in the compressed domains (a merged value: the last code)."""
    cols = []
    for j, k in enumerate(keep):
        fwd = np.full(int(radix[j]), k.shape[0], dtype=np.int64)
        fwd[k] = np.arange(k.shape[0])
        cols.append(backend.asarray(fwd)[rows[:, j]])
    return xp.stack(cols, axis=1)


def _independence_errors(flat2, off2, pairs, y1, total) -> np.ndarray:
    """MST's selection scores: ``|| x_ab - N p_a p_b^T ||_1`` per pair, ``p`` the noisy
    1-ways clipped at 0 and normalized (sensitivity 1 under add/remove-one)."""
    clipped = [np.maximum(y, 0.0) for y in y1]
    probs = np.concatenate([c / max(c.sum(), 1e-300) for c in clipped])
    sizes = np.array([len(y) for y in y1])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    a, b = np.array(pairs).T
    pair_of = np.repeat(np.arange(len(pairs)), sizes[a] * sizes[b])
    local = np.arange(pair_of.shape[0]) - off2[pair_of]
    width = sizes[b][pair_of]
    est = total * probs[starts[a][pair_of] + local // width] * probs[starts[b][pair_of]
                                                                     + local % width]
    return np.bincount(pair_of, weights=np.abs(flat2 - est), minlength=len(pairs))


def _select_tree(scores, pairs, d, epsilon, source) -> list[int]:
    """Kruskal with the exponential mechanism: ``d - 1`` selections among the pairs that join
    two components; returns the chosen pairs' indices."""
    comp = np.arange(d)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    chosen = []
    for _ in range(d - 1):
        cand = np.flatnonzero(comp[a] != comp[b])
        pick = int(cand[exponential_mechanism(scores[cand], epsilon=epsilon, sensitivity=1.0,
                                              random=source)])
        chosen.append(pick)
        comp[comp == comp[b[pick]]] = comp[a[pick]]
    return chosen


def _node_margins(y1, edges, noisy2, sigma1, sigma2, total) -> list[np.ndarray]:
    """Each column's distribution: the inverse-variance average of its noisy 1-way
    (variance ``σ1²`` per cell) and of its edges' noisy 2-way sums (``k σ2²``, ``k`` the
    other column's size), projected on the simplex."""
    num = [y / sigma1**2 for y in y1]
    den = [1.0 / sigma1**2] * len(y1)
    for (a, b), y in zip(edges, noisy2):
        for node, sums, other in ((a, y.sum(axis=1), y.shape[1]),
                                  (b, y.sum(axis=0), y.shape[0])):
            num[node] = num[node] + sums / (other * sigma2**2)
            den[node] = den[node] + 1.0 / (other * sigma2**2)
    return [project_simplex(nm / dn / total)[0] for nm, dn in zip(num, den)]


def _edge_joints(edges, noisy2, margins, total) -> list[np.ndarray]:
    """Each edge's joint distribution: its noisy table projected on the simplex, mixed with
    a ``1e-6`` share of the product of the margins, fitted to the margins by IPF; all edges
    at once, padded to the largest table."""
    if not edges:
        return []
    size = max(max(y.shape) for y in noisy2)
    e = len(edges)
    p = np.zeros((e, size, size))
    row = np.zeros((e, size))
    col = np.zeros((e, size))
    for i, ((a, b), y) in enumerate(zip(edges, noisy2)):
        proj = project_simplex((y / total).reshape(1, -1))[0].reshape(y.shape)
        prod = np.outer(margins[a], margins[b])
        p[i, :y.shape[0], :y.shape[1]] = (1.0 - _PRODUCT_SHARE) * proj + _PRODUCT_SHARE * prod
        row[i, :y.shape[0]], col[i, :y.shape[1]] = margins[a], margins[b]
    for _ in range(_IPF_STEPS):
        s = p.sum(axis=2)
        p *= np.divide(row, s, out=np.zeros_like(s), where=s > 0)[:, :, None]
        s = p.sum(axis=1)
        p *= np.divide(col, s, out=np.zeros_like(s), where=s > 0)[:, None, :]
        if np.abs(p.sum(axis=2) - row).max() < 1e-12:
            break
    return [p[i, :y.shape[0], :y.shape[1]] for i, y in enumerate(noisy2)]


def _integer_table(probs: np.ndarray) -> tuple:
    """Rows of probabilities (k, m) as integer weights (``2**SCALE_BITS`` per row, at least
    one per row): ``(cumulative flat weights, row starts, row sums)``."""
    probs = np.asarray(probs, dtype=np.float64)
    s = probs.sum(axis=1, keepdims=True)
    cond = np.where(s > 0, probs / np.where(s > 0, s, 1.0), 1.0 / probs.shape[1])
    w = np.floor(cond * float(1 << SCALE_BITS)).astype(np.int64)
    w[np.arange(w.shape[0]), np.argmax(cond, axis=1)] += (w.sum(axis=1) == 0)
    cum = np.cumsum(w.ravel())
    sums = w.sum(axis=1)
    return cum, cum[::w.shape[1]] - w[:, 0], sums


def _tree_model(d, edges, joints, margins, keep, merged, spec, backend) -> dict:
    """The sampler's tables: the order (breadth-first from column 0), each column's parent
    and its conditional's integer table on the backend."""
    adj: dict[int, list] = {j: [] for j in range(d)}
    for (a, b), p in zip(edges, joints):
        adj[a].append((b, p))
        adj[b].append((a, p.T))
    parent, order, tables = [-1] * d, [], {}
    if d:
        tables[0] = _integer_table(margins[0].reshape(1, -1))
        order.append(0)
    for node in order:  # grows while it is walked: breadth-first
        for child, p in adj[node]:
            if child not in tables:
                parent[child] = node
                tables[child] = _integer_table(p)
                order.append(child)
    dev = {j: tuple(backend.asarray(t) for t in tab) + (len(margins[j]),)
           for j, tab in tables.items()}
    return {"order": order, "parent": parent, "tables": dev, "keep": keep, "merged": merged,
            "spec": spec}


def _decode(model, codes, source) -> pd.DataFrame:
    """Compressed codes to values: a merged code becomes one of its values uniformly, a bin
    a uniform value in it (floored for an integer column)."""
    backend, xp = source.backend, source.backend.xp
    n = int(codes.shape[0])
    out = {}
    for j, col in enumerate(model["spec"]):
        keep, merged = model["keep"][j], model["merged"][j]
        c = codes[:, j]
        if merged.shape[0] and n:
            is_merged = c == keep.shape[0]
            pick = uniform_below(source, xp.full(n, merged.shape[0], dtype=xp.int64))
            c = xp.where(is_merged, backend.asarray(merged)[pick],
                         backend.asarray(keep)[xp.minimum(c, keep.shape[0] - 1)])
        else:
            c = backend.asarray(keep)[c]
        host = backend.to_host(c)
        if col.labels is not None:
            out[col.name] = col.labels[host]
            continue
        lower, upper, count = col.bins
        u = backend.to_host(source.random_bits(n)).astype(np.float64) * 2.0**-63
        x = lower + (host + u) * ((upper - lower) / count)
        out[col.name] = np.clip(np.floor(x), lower, upper).astype(np.int64) if col.integer \
            else x
    return pd.DataFrame(out, columns=[c.name for c in model["spec"]])
