"""Attacks on released data: what an adversary actually recovers.

* :mod:`~gpuppdp.attacks.reconstruct` -- :func:`reconstruct`: the database reconstruction
  attack on published counts, means and medians (Dinur and Nissim 2003; Garfinkel, Abowd and
  Martindale 2018), an integer program solved by HiGHS; ``gpuppdp attack reconstruct``.

SciPy (``pip install 'gpuppdp[attacks]'``) is imported on first use.
"""

from .reconstruct import (
    Reconstruction,
    ReconstructionError,
    load_statistics,
    match_records,
    reconstruct,
    tabulate,
)

__all__ = ["Reconstruction", "ReconstructionError", "load_statistics", "match_records",
           "reconstruct", "tabulate"]
