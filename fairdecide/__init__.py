"""fairdecide: decisions about people that are good for the decision maker and fair.

The core objects: a :class:`DecisionProblem` (actions, outcomes, utility), a world
(:class:`TabularWorld`, known or estimated from :class:`LoggedData`), a policy
(:class:`TabularPolicy`), fairness criteria (:class:`Independence`,
:class:`Separation`, :class:`Sufficiency`) and :func:`optimize_policy`.
"""

from fairdecide.beliefs import Belief
from fairdecide.criteria import (
    ConditionalIndependence,
    Independence,
    Separation,
    Sufficiency,
)
from fairdecide.data import LoggedData
from fairdecide.evaluation import BeliefEvaluation, evaluate_under_belief
from fairdecide.exceptions import (
    FairdecideError,
    InfeasibleToleranceError,
    SolverError,
    VerificationError,
)
from fairdecide.models import BootstrapPosterior, DirichletPosterior
from fairdecide.optimize import OptimizeResult, optimize_policy
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.world import DecisionTable, TabularWorld, decision_table, expected_utility

__version__ = "0.1.0"

__all__ = [
    "Belief",
    "BeliefEvaluation",
    "BootstrapPosterior",
    "ConditionalIndependence",
    "DecisionProblem",
    "DecisionTable",
    "DirichletPosterior",
    "FairdecideError",
    "Independence",
    "InfeasibleToleranceError",
    "LoggedData",
    "OptimizeResult",
    "Separation",
    "SolverError",
    "Sufficiency",
    "TabularPolicy",
    "TabularWorld",
    "VerificationError",
    "decision_table",
    "evaluate_under_belief",
    "expected_utility",
    "optimize_policy",
]
