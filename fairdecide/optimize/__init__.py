"""Policy optimisation: exact LP (and exponential-cone) route and successive linearisation."""

from fairdecide.optimize.api import optimize_policy
from fairdecide.optimize.frontier import pareto_frontier
from fairdecide.optimize.result import OptimizeResult, Verification

__all__ = ["OptimizeResult", "Verification", "optimize_policy", "pareto_frontier"]
