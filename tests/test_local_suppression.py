"""sdcMicro-style local suppression and the checker's k with suppressed cells matching any
value, against naive references (pairs of records compared in plain Python)."""

import numpy as np
import pandas as pd
import pytest

from gpuppdp.algorithms.local_suppression import local_suppression
from gpuppdp.analysis.checker import check_cells, wildcard_class_sizes
from gpuppdp.errors import InputError


def naive_fk(table: pd.DataFrame, qids) -> np.ndarray:
    """Per record, the records equal to it wherever neither shows '*' (itself included)."""
    rows = table[qids].astype(str).to_numpy()
    return np.array([sum(all(a == b or a == "*" or b == "*" for a, b in zip(r, s))
                         for s in rows) for r in rows])


def naive_greedy(table: pd.DataFrame, qids, k: int, least_first) -> int:
    """Cells a plain sequential greedy suppresses: each record below k in row order, its QIDs
    from the least important on, until it is compatible with k records."""
    t = table[qids].astype(str).copy()
    cells = 0
    for i in range(len(t)):
        for q in least_first:
            if naive_fk(t, qids)[i] >= k:
                break
            if t.iloc[i][q] != "*":
                t.iloc[i, qids.index(q)] = "*"
                cells += 1
    return cells


def _table(seed: int, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1]),
                         "b": rng.choice(list("pqrs"), n),
                         "c": rng.choice(["1", "2"], n, p=[0.8, 0.2]),
                         "d": rng.choice(list("uvw"), n), "other": np.arange(n)})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wildcard_class_sizes_match_the_naive_count(seed):
    table = _table(seed)
    rng = np.random.default_rng(seed + 10)
    for q in "abcd":  # some cells suppressed already
        table.loc[rng.random(len(table)) < 0.15, q] = "*"
    assert check_cells(table, quasi_identifiers=list("abcd"))["k"] == naive_fk(table,
                                                                           list("abcd")).min()
    from gpuppdp.analysis.checker import cell_codes
    codes, _, cards = cell_codes(table, list("abcd"))
    assert wildcard_class_sizes(codes, codes, cards).tolist() == \
        naive_fk(table, list("abcd")).tolist()


@pytest.mark.parametrize("seed,k", [(0, 2), (1, 3), (2, 5)])
def test_every_record_reaches_k_with_no_more_cells_than_a_naive_greedy(seed, k):
    table = _table(seed)
    qids = list("abcd")
    importance = ["c", "a", "d", "b"]                          # most important first
    result = local_suppression(table, qids, k, importance=importance)
    released = result.released
    assert naive_fk(released, qids).min() >= k
    assert (released["other"] == table["other"]).all()
    changed = released[qids].astype(str).to_numpy() != table[qids].astype(str).to_numpy()
    assert (released[qids].astype(str).to_numpy()[changed] == "*").all()
    assert result.suppressed_cells == {q: int(changed[:, j].sum()) for j, q in enumerate(qids)}
    assert sum(result.suppressed_cells.values()) <= naive_greedy(table, qids, k,
                                                                 importance[::-1])
    assert check_cells(released, quasi_identifiers=qids)["suppressed_cells"] == \
        result.suppressed_cells


def test_the_least_important_attribute_goes_first():
    # record 0 reaches k=2 by suppressing either column: importance decides which
    table = pd.DataFrame({"A": ["a", "a", "b"], "B": ["x", "y", "x"]})
    first = local_suppression(table, ["A", "B"], 2, importance=["A", "B"]).released
    second = local_suppression(table, ["A", "B"], 2, importance=["B", "A"]).released
    assert (first.loc[0, "A"], first.loc[0, "B"]) == ("a", "*")
    assert (second.loc[0, "A"], second.loc[0, "B"]) == ("*", "x")
    default = local_suppression(_table(0), list("abcd"), 2)
    assert default.importance[0] == "c"                        # fewest distinct values


def test_local_suppression_errors():
    table = _table(0, 10)
    with pytest.raises(InputError, match="k"):
        local_suppression(table, list("abcd"), 11)
    with pytest.raises(InputError, match="k"):
        local_suppression(table, list("abcd"), 0)
    with pytest.raises(InputError, match="importance"):
        local_suppression(table, list("abcd"), 2, importance=["a", "b"])
    with pytest.raises(InputError, match="quasi_identifiers"):
        local_suppression(table, ["a", "nope"], 2)
