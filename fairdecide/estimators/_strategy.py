"""How an estimator fits: one strategy per (policy family, treatment of the unknown
outcome model), each saying what it fits and what it certifies.

A strategy is a small frozen object. It declares

- ``family`` and ``uncertainty``: the estimator's ``policy`` and ``uncertainty`` it
  serves (the pair is its key in :data:`fairdecide.estimators._fitting.STRATEGIES`);
- ``world_kind``: what the policy is optimised over in a prediction problem (the class
  of the world handed to :func:`~fairdecide.optimize_policy`);
- ``certifies``: what ``result_.guarantee`` states, in words, and ``guarantee``: None
  (no guarantee: ``result_.guarantee`` is None), "exact" (a bound over a confidence
  set that holds with probability at least 1 - delta) or "approximate" (a bootstrap
  band's);
- ``summary``: what it optimises over, in a few words (errors quote it);
- ``no_interventions``: why it does not fit interventions (FairDecisionPolicy; None:
  it does), ``no_weights``: why it refuses ``sample_weight`` (None: it takes them);

and fits a :class:`Training` into a :class:`~fairdecide.estimators._rules.Fitted` rule.
:func:`fairdecide.estimators._fitting.strategy_for` chooses one, once, from the
estimator's parameters; nothing downstream asks which family or treatment it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairdecide.criteria import Criterion
from fairdecide.estimators._rules import Fitted
from fairdecide.problem import DecisionProblem

__all__ = ["CERTIFIED_DELTA", "FitStrategy", "Training"]

#: delta of the sets behind uncertainty="certified" and "refit-band" (as the maximin's
#: under "worst"): what they certify holds with probability 1 - delta = 0.9
CERTIFIED_DELTA = 0.1


@dataclass(frozen=True)
class Training:
    """What a strategy fits from: the estimator (its parameters), the problem, and the
    training rows as codes (``z``, ``y``, and ``a`` in an intervention, else None);
    ``sample_weight`` weighs the rows in the population and the outcome model,
    ``outcome_weight`` (if given instead) only in the softmax family's outcome model;
    ``criteria`` the user's, ``trade`` the one trade-off (``tradeoff``), ``seed`` the
    seed of every random step."""

    est: Any
    problem: DecisionProblem
    X: Any
    z: np.ndarray
    n_groups: int
    y: np.ndarray
    a: np.ndarray | None
    sample_weight: np.ndarray | None
    outcome_weight: np.ndarray | None
    action_encoding: str
    criteria: list[Criterion]
    trade: dict[str, Any]
    seed: int
    n_scenarios: int

    @property
    def intervention(self) -> bool:
        """An intervention: the outcome follows the logged action ``a``."""
        return self.a is not None


@dataclass(frozen=True, kw_only=True)
class FitStrategy:
    """One (family, uncertainty): what it optimises over and what it certifies (the
    module docstring lists the declarations)."""

    #: the policy family ("softmax", "tabular" or "score")
    family: ClassVar[str]
    #: why it does not fit interventions (None: it does)
    no_interventions: ClassVar[str | None] = None

    uncertainty: str
    world_kind: str
    summary: str
    certifies: str
    guarantee: str | None = None
    no_weights: str | None = None

    def check_scenarios(self, n_scenarios: int) -> None:
        """Refuse an ``n_scenarios`` too small for this strategy (beyond the estimators'
        common minimum of 2)."""

    def fit(self, job: Training) -> Fitted:
        """Optimise the policy of the training rows ``job`` and return its rule."""
        raise NotImplementedError
