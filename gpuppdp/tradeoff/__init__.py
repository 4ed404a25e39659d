"""The utility-privacy trade-off of the thesis "seed 004": every lattice node measured
(:func:`explore`), its Pareto frontiers and the page that shows them; the three optimizations
of section 4.3 over a class's published distribution (:mod:`.optimize`), steering the
generalization toward their answer (:mod:`.steer`) and the machine-learning trade-off of
chapter 5 (:mod:`.ml`)."""

from ..engine.lattice import node_levels
from .exploration import Exploration, NodeFigures, explore
from .frontier import PARETO, exploration_html, pareto_mask
from .ml import MLTradeoff, ml_tradeoff
from .optimize import (
    Region,
    Solution,
    class_distributions,
    feasible_region,
    loss_values,
    min_privacy_loss,
    min_utility_loss,
)
from .steer import STEER_FIGURES, SteerResult, steer

__all__ = ["explore", "Exploration", "NodeFigures", "node_levels", "PARETO", "pareto_mask",
           "exploration_html", "min_utility_loss", "min_privacy_loss", "feasible_region",
           "loss_values", "class_distributions", "Solution", "Region", "steer", "SteerResult",
           "STEER_FIGURES", "ml_tradeoff", "MLTradeoff"]
