"""The trade-off between privacy and utility over the whole lattice: every node measured
(:func:`explore`), its Pareto frontiers and the page that shows them."""

from .exploration import PARETO, Exploration, NodeFigures, explore, node_levels
from .frontier import exploration_html, pareto_mask

__all__ = ["explore", "Exploration", "NodeFigures", "node_levels", "PARETO", "pareto_mask",
           "exploration_html"]
