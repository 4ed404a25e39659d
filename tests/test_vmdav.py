"""V-MDAV and optimal univariate microaggregation (gpuppdp.perturb.microaggregate, method=
"vmdav" | "optimal") against direct transcriptions of Solanas and Martinez-Balleste (2006)
and brute force over every partition, on every backend (small tables run the CUDA kernel
under Numba's simulator on the strict stand-in); ordinal columns released as categories."""

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from gpuppdp.backend import cpu_backend
from gpuppdp.cli.main import USER_ERROR, main
from gpuppdp.errors import InputError
from gpuppdp.kernels.mdav import fixed_point_scale
from gpuppdp.perturb import Perturbation, microaggregate
from gpuppdp.testing import strict_backend
from tests.test_microaggregation import _groups_of, _standardized


def _vmdav_reference(z, k, gamma):
    """The paper's loop, every choice the smallest (distance, row) -- farthest: largest
    distance, smallest row; centroids from the kernels' fixed-point sums.  Returns the
    groups and whether records left over at the end joined groups."""
    n, d = z.shape
    scale = fixed_point_scale(float(np.abs(z).max()), n)
    q = np.rint(z * scale).astype(np.int64)

    def dist(a, point):
        s = 0.0
        for j in range(d):
            t = z[a, j] - point[j]
            s += t * t
        return s

    def centroid(rows):
        sums = q[sorted(rows)].sum(axis=0)
        return [(float(sums[j]) / float(len(rows))) / scale for j in range(d)]

    c = centroid(range(n))
    unassigned = set(range(n))
    groups = []
    while len(unassigned) >= 2 * k:
        e = min(unassigned, key=lambda i: (-dist(i, c), i))
        group = [e] + [i for _, i in sorted((dist(i, z[e]), i) for i in unassigned
                                            if i != e)[:k - 1]]
        unassigned -= set(group)
        while len(group) < 2 * k - 1 and unassigned:
            d_in, e_min = min((min(dist(i, z[g]) for g in group), i) for i in unassigned)
            d_out = min((dist(j, z[e_min]) for j in unassigned if j != e_min), default=math.inf)
            if not math.sqrt(d_in) < gamma * math.sqrt(d_out):
                break
            group.append(e_min)
            unassigned.remove(e_min)
        groups.append(group)
    joined = 0 < len(unassigned) < k
    if joined:
        centroids = [centroid(g) for g in groups]
        for p in sorted(unassigned):
            nearest = min(range(len(groups)), key=lambda g: (dist(p, centroids[g]),
                                                               groups[g][0]))
            groups[nearest] = groups[nearest] + [p]
    elif unassigned:
        groups.append(sorted(unassigned))
    return sorted(sorted(g) for g in groups), joined


#: (seed, n, d, k, gamma) of the comparisons with the paper's loop
CASES = [(0, 40, 2, 3, 0.2), (1, 33, 3, 2, 1.1), (2, 26, 1, 4, 2.0), (3, 24, 2, 3, 5.0)]


def _clustered(seed, n, d):
    """Small integers around a few centres: groups worth extending, and many ties."""
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 30, size=(n // 4, d))
    return (centres[rng.integers(0, len(centres), size=n)] + rng.integers(0, 3, size=(n, d))
            ).astype(np.float64)


def _equals_the_paper(backend, seed, n, d, k, gamma):
    x = _clustered(seed, n, d)
    got = microaggregate(backend.asarray(x), k, method="vmdav", gamma=gamma, backend=backend)
    groups = _groups_of(backend.to_host(got.groups))
    expected, joined = _vmdav_reference(_standardized(x), k, gamma)
    assert groups == expected
    sizes = [len(g) for g in groups]
    assert min(sizes) >= k and max(sizes) <= (3 * k - 2 if joined else 2 * k - 1)
    assert got.method == "vmdav" and got.summary()["method"] == "vmdav"


@pytest.mark.parametrize("seed, n, d, k, gamma", CASES)
def test_vmdav_equals_the_paper(seed, n, d, k, gamma):
    _equals_the_paper(cpu_backend(), seed, n, d, k, gamma)


@pytest.mark.parametrize("seed, n, d, k, gamma", CASES)
def test_vmdav_equals_the_paper_on_every_backend(backend, seed, n, d, k, gamma):
    """The same under Numba's CUDA simulator (strict stand-in): slow, in the slow tier."""
    _equals_the_paper(backend, seed, n, d, k, gamma)


def test_the_cases_cover_every_step():
    """The cases above extend groups, end with a last group and with leftovers joining."""
    seen = set()
    for seed, n, d, k, gamma in CASES:
        groups, joined = _vmdav_reference(_standardized(_clustered(seed, n, d)), k, gamma)
        seen.add("joined" if joined else "last group")
        if max(len(g) for g in groups) > k:
            seen.add("extended")
    assert seen == {"joined", "last group", "extended"}


def test_the_papers_two_clusters():
    """Solanas and Martinez-Balleste's example (as Zhang and Zheng 2019 give it, k = 3):
    MDAV's fixed sizes mix the two clusters of 4 and 5 records in one group; V-MDAV finds
    the two clusters."""
    s = np.array([(2.4, 3), (1.68, 4.9), (3.18, 5.54), (5.32, 3.6), (18.68, 11.49),
                  (20.14, 9.56), (19.85, 10.33), (21.28, 10.9), (23, 11.5)])
    fixed = _groups_of(microaggregate(s, 3, backend="cpu").groups)
    assert any(min(g) < 4 <= max(g) for g in fixed)  # a group across both clusters
    variable = microaggregate(s, 3, method="vmdav", backend="cpu")
    assert _groups_of(variable.groups) == [[0, 1, 2, 3], [4, 5, 6, 7, 8]]
    assert variable.sse < microaggregate(s, 3, backend="cpu").sse


def test_vmdav_partitions_take_a_block_each():
    """Under the simulator (strict stand-in) the CUDA form runs a block per partition; the
    CPU form a task per partition: the same groups."""
    x = _clustered(6, 20, 2)
    strict = strict_backend()
    got = microaggregate(strict.asarray(x), 2, method="vmdav", gamma=2.0, partition_rows=10,
                         backend=strict)
    cpu = microaggregate(x, 2, method="vmdav", gamma=2.0, partition_rows=10, backend="cpu")
    np.testing.assert_array_equal(strict.to_host(got.groups), cpu.groups)
    assert got.partitions == 2 and got.largest_group > 2


def _brute_force_sse(v, k):
    """The least within-group SSE over every partition of ``v`` into groups of >= k."""
    best = math.inf

    def walk(rest, sse):
        nonlocal best
        if not rest:
            best = min(best, sse)
            return
        first, others = rest[0], rest[1:]
        for size in range(k - 1, len(others) + 1):
            for mates in itertools.combinations(others, size):
                group = [first, *mates]
                left = [i for i in others if i not in mates]
                if 0 < len(left) < k:
                    continue
                g = v[group]
                walk(left, sse + float(((g - g.mean()) ** 2).sum()))

    walk(list(range(len(v))), 0.0)
    return best


@pytest.mark.parametrize("seed, n, k", [(0, 9, 2), (1, 9, 3), (2, 8, 2), (3, 10, 3)])
def test_optimal_equals_brute_force(seed, n, k):
    v = np.random.default_rng(seed).lognormal(0, 1, size=n)
    got = microaggregate(v, k, method="optimal", backend="cpu")
    assert got.sse == pytest.approx(_brute_force_sse(_standardized(v[:, None])[:, 0], k),
                                    rel=1e-9, abs=1e-12)
    order = np.argsort(v, kind="stable")
    runs = got.groups[order]
    assert (np.diff(runs) != 0).sum() == got.n_groups - 1  # groups are runs of sorted values
    assert k <= got.smallest_group and got.largest_group <= 2 * k - 1


def test_optimal_is_never_worse_than_mdav_or_vmdav(backend):
    rng = np.random.default_rng(4)
    for k in (2, 3, 5):
        v = np.concatenate([rng.normal(size=150), rng.normal(8, 0.5, size=47)])
        opt = microaggregate(backend.asarray(v), k, method="optimal", backend=backend)
        for method in ("mdav", "vmdav"):
            other = microaggregate(v, k, method=method, backend="cpu")
            assert opt.sse <= other.sse * (1 + 1e-12)
        assert opt.method == "optimal" and opt.partitions == 1
        np.testing.assert_array_equal(
            backend.to_host(opt.groups),
            microaggregate(v, k, method="optimal", backend="cpu").groups)


def test_ordinal_columns_release_the_groups_median_category():
    rng = np.random.default_rng(9)
    levels = ["none", "primary", "secondary", "bachelor", "master", "doctorate"]
    data = pd.DataFrame({
        "education": pd.Categorical(rng.choice(levels, size=200), categories=levels,
                                    ordered=True),
        "income": rng.lognormal(10, 1, size=200),
        "grade": rng.choice(["low", "mid", "high"], size=200)})
    release = Perturbation(microaggregate=[(["education", "income"], 4), (["grade"], 3)],
                           microaggregate_method="mdav", order={"grade": ["low", "mid",
                                                                          "high"]},
                           backend="cpu").fit(data)
    out = release.data
    assert out["education"].dtype == data["education"].dtype
    for column, order in (("education", levels), ("grade", ["low", "mid", "high"])):
        rank = {v: r for r, v in enumerate(order)}
        by_release = out.groupby(list(out.columns if column == "grade" else
                                      ["education", "income"]), observed=True)
        for _, rows in by_release.groups.items():
            original = sorted(rank[v] for v in data.loc[rows, column])
            assert rank[out.loc[rows[0], column]] == original[(len(original) - 1) // 2]
    methods = release.summary()["methods"]
    assert methods[0]["ordinal"] == ["education"] and methods[1]["ordinal"] == ["grade"]
    assert methods[0]["algorithm"] == "mdav" and methods[0]["sst"] > 0
    assert release.summary()["measures"]["columns"] == ["income"]
    with pytest.raises(InputError, match="'grade' has .*ordinal column is an ordered"):
        Perturbation(microaggregate=[(["grade"], 3)], backend="cpu").fit(data)
    with pytest.raises(InputError, match="misses its values 'mid'"):
        Perturbation(microaggregate=[(["grade"], 3)], order={"grade": ["low", "high"]},
                     backend="cpu").fit(data)
    with pytest.raises(InputError, match="order is for microaggregated columns; 'grade'"):
        Perturbation(microaggregate=[(["income"], 3)], order={"grade": ["low", "high"]},
                     backend="cpu").fit(data)


def test_ordinal_array_columns_and_bad_input():
    x = np.column_stack([np.arange(12.0), np.repeat([0.0, 1.0, 2.0], 4)])
    got = microaggregate(x, 4, method="vmdav", ordinal=[1],
                         backend="cpu")
    for g in range(got.n_groups):
        rows = got.groups == g
        assert got.values[rows, 1][0] == np.sort(x[rows, 1])[(rows.sum() - 1) // 2]
    with pytest.raises(InputError, match="method must be one of"):
        microaggregate(x, 3, method="kmeans")
    with pytest.raises(InputError, match="univariate: values must be one column, got 2"):
        microaggregate(x, 3, method="optimal")
    with pytest.raises(InputError, match="partition_rows is for mdav and vmdav"):
        microaggregate(x[:, 0], 3, method="optimal", partition_rows=6)
    with pytest.raises(InputError, match="gamma must be a positive number, got 0"):
        microaggregate(x, 3, method="vmdav", gamma=0)
    with pytest.raises(InputError, match="gamma is V-MDAV's gain factor"):
        microaggregate(x, 3, gamma=0.5)
    with pytest.raises(InputError, match="ordinal must list column indices in 0..1, got 2"):
        microaggregate(x, 3, ordinal=[2])


def test_cli_method_gamma_and_order(tmp_path, capsys):
    rng = np.random.default_rng(10)
    src = tmp_path / "in.csv"
    pd.DataFrame({"age": rng.integers(18, 90, size=120),
                  "hours": rng.integers(1, 80, size=120),
                  "grade": rng.choice(["low", "mid", "high"], size=120)}).to_csv(src,
                                                                               index=False)
    code = main(["perturb", str(src), "--microaggregate", "age,hours:k=3", "--method",
                 "vmdav", "--gamma", "1.5", "--output", str(tmp_path / "out.csv"),
                 "--json", str(tmp_path / "s.json"), "--backend", "cpu"])
    assert code == 0, capsys.readouterr().err
    method = json.loads((tmp_path / "s.json").read_text())["methods"][0]
    assert method["algorithm"] == "vmdav" and method["gamma"] == 1.5
    assert method["largest_group"] > 3 and method["checked_k"] >= 3
    assert 0 < method["sse"] < method["sst"] and "(vmdav, SSE/SST" in capsys.readouterr().out
    code = main(["perturb", str(src), "--microaggregate", "grade:k=4", "--method", "optimal",
                 "--order", "grade=low,mid,high", "--output", str(tmp_path / "out.csv"),
                 "--backend", "cpu"])
    assert code == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "out.csv")
    assert set(out["grade"]) <= {"low", "mid", "high"} and out["grade"].value_counts().min() >= 4
    assert main(["perturb", str(src), "--microaggregate", "age,hours:k=3", "--method",
                 "optimal", "--output", str(tmp_path / "out.csv")]) == USER_ERROR
    assert "univariate" in capsys.readouterr().err
