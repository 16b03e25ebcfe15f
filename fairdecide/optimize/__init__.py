"""Policy optimisation: trade-offs, routes (exact program, successive linearisation),
verification and Pareto frontiers."""

from fairdecide.optimize.api import optimize_distributed as optimize_distributed  # deprecated
from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.distributed import outcome_columns
from fairdecide.optimize.frontier import pareto_frontier
from fairdecide.optimize.held_out import optimize_held_out
from fairdecide.optimize.program.tradeoff import (
    FairnessConstraint,
    MaxUtility,
    Mixture,
    Tradeoff,
    UtilityConstraint,
)
from fairdecide.optimize.progress import Progress, ProgressBar, reporting
from fairdecide.optimize.result import OptimizeResult, Verification
from fairdecide.optimize.rows_needed import RowsNeeded, rows_needed

__all__ = [
    "FairnessConstraint",
    "MaxUtility",
    "Mixture",
    "OptimizeResult",
    "Progress",
    "ProgressBar",
    "RowsNeeded",
    "Tradeoff",
    "UtilityConstraint",
    "Verification",
    "optimize_held_out",
    "optimize_policy",
    "outcome_columns",
    "pareto_frontier",
    "reporting",
    "rows_needed",
]
