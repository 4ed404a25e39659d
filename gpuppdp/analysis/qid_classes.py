"""The equivalence classes of a table's quasi-identifiers, as the measures of
:mod:`gpuppdp.analysis` share them: the QID columns dictionary-encoded on the host
(:func:`gpuppdp.core.codes.encode_columns`), each row's class and the class sizes on
``backend.xp`` (:func:`gpuppdp.kernels.groupby.group`), and the risk thresholds that the
sample and the survey-weight risks count records against (ARX's ``RiskModelSampleSummary``).

Below :mod:`.risk`, :mod:`.survey`, :mod:`.suda`, :mod:`.utility` and :mod:`.adversary`, which
all import it; its public names are documented, and imported by users, from
:mod:`gpuppdp.analysis.risk`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..backend import Backend, get_backend
from ..core.codes import encode_columns as encode_host
from ..errors import InputError
from ..kernels import groupby
from ..validation import check_columns

#: Thresholds of ``records_at_risk`` (ARX's summary): share of records whose prosecutor risk
#: ``1/|E|`` is strictly greater than the threshold.
RISK_THRESHOLDS = (0.5, 0.2, 0.1, 0.05)


def _threshold_key(t: float) -> str:
    return f"{t:.2f}"


def _check_qids(data, qids) -> list[str]:
    qids = check_columns("quasi_identifiers", data, qids)
    if len(data) == 0:
        raise InputError("the table is empty (0 rows)")
    return qids


def encode_columns(data: pd.DataFrame, qids: Sequence[str], backend: Backend
                   ) -> tuple[list, list[int]]:
    """The ``qids`` columns encoded by :func:`gpuppdp.core.codes.encode_columns`:
    ``(codes, cards)`` with ``codes[j]`` an int32 device array (0..cards[j]-1, every code
    present) and ``cards[j]`` a host int."""
    codes, labels = encode_host(data, _check_qids(data, qids))
    return ([backend.asarray(c.astype(np.int32)) for c in codes],
            [max(len(lab), 1) for lab in labels])


def _classes_encoded(codes, cards, backend: Backend):
    """``(ids, sizes)``: each row's class id (classes in sorted order of the codes, widest
    columns first) and the class sizes (device int64), by :func:`gpuppdp.kernels.groupby.group`."""
    xp = backend.xp
    order = sorted(range(len(cards)), key=lambda j: -int(cards[j]))
    ids, rep, _ = groupby.group(xp, [codes[j] for j in order], [cards[j] for j in order],
                                order="sorted")
    return ids, xp.bincount(ids, minlength=int(rep.shape[0])).astype(xp.int64)


def class_sizes_encoded(codes, cards, backend: Backend):
    """Class sizes (device int64) of dictionary codes, as from :func:`encode_columns`."""
    return _classes_encoded(codes, cards, backend)[1]


def class_sizes(data: pd.DataFrame, quasi_identifiers: Sequence[str],
                backend: Backend | str = "cpu"):
    """Sizes of the equivalence classes of the QID combination (device int64 array)."""
    backend = get_backend(backend)
    codes, cards = encode_columns(data, quasi_identifiers, backend)
    return class_sizes_encoded(codes, cards, backend)
