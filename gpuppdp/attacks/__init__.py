"""Attacks on released data: what an adversary actually recovers.

* :mod:`~gpuppdp.attacks.reconstruct` -- :func:`reconstruct`: the database reconstruction
  attack on published counts, means and medians (Dinur and Nissim 2003; Garfinkel, Abowd and
  Martindale 2018), an integer program solved by HiGHS; ``gpuppdp attack reconstruct``.
* :mod:`~gpuppdp.attacks.linkage` -- :func:`linkage_attack`, :func:`check_release`:
  cross-release attacks on two releases of one population (complementary releases, the
  difference attack on temporal releases, row-order leakage); ``gpuppdp attack linkage``.

SciPy (``pip install 'gpuppdp[attacks]'``) is imported on first use.
"""

from .linkage import LinkageReport, LinkageRisk, check_release, linkage_attack
from .reconstruct import (
    Reconstruction,
    ReconstructionError,
    load_statistics,
    match_records,
    reconstruct,
    tabulate,
)

__all__ = ["LinkageReport", "LinkageRisk", "check_release", "linkage_attack",
           "Reconstruction", "ReconstructionError", "load_statistics", "match_records",
           "reconstruct", "tabulate"]
