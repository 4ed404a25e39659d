"""The lattice searches."""
