"""gpuppdp: GPU-accelerated privacy-preserving data publishing."""

__version__ = "0.1.0"
