"""Confidence sets for a tabular world, with stated coverage: the book's high-probability
decision max_pi min_{theta in Theta_hat} V(pi, theta).

A :class:`ConfidenceSet` is a product of regions, one per outcome conditional
P(y | x, z) (prediction problems) or P(y | a, x, z) (interventions), within the simplex
(:class:`~fairdecide.uncertainty.regions.OutcomeRegions`: L1 balls by default), and, when
the population is estimated, an L1 ball around P(z) and one around each group's P(x | z):

    Theta_hat = { theta : theta_c in R_c for every conditional c,
                          ||P(.) - P_hat(.)||_1 <= r_0 over the groups,
                          ||P(. | z) - P_hat(. | z)||_1 <= r_z for every group z }.

What the set is (its :class:`SetKind`) says what its level means (a coverage over data
sets, a posterior probability, a bootstrap approximation) and which policies it
certifies (a set pooled over the groups of a cell: group-blind ones only); its reading
("worst", or "best" for the optimistic twin) how a policy's value is read over it.

The population is split by group so that what a group is made of, P(x | z), has its own
parameters: a group's rate P(a | z) = sum_x P(x | z) pi(a | x, z) is then linear in them,
and its range over the set is exact (:mod:`fairdecide.criteria.over_set`).

**Coverage** (:meth:`ConfidenceSet.from_data`): Weissman et al.'s L1 bound, or exact
Clopper-Pearson intervals with two outcomes, simultaneous by the union bound over the
estimated multinomials (:mod:`fairdecide.uncertainty.data_region` says why each holds).

**Pooled outcomes** (``pooled=True``). A group-blind policy's value reads the outcomes
only through P(y | x) = sum_z P(z | x) P(y | x, z): one ball per cell, from all its rows,
stored once per group (the same ball and a linear objective give the same minimiser in
each group), certifies it, and criteria that do not read the outcome, with n_z times
fewer conditionals to share delta.

**Worst case** (:meth:`OutcomeRegions.worst
<fairdecide.uncertainty.regions.OutcomeRegions.worst>`). Utility is linear in theta for a
fixed policy, and its minimum over a region is in closed form (over an L1 ball: mass
min(r / 2, 1 - theta_hat_j*) moved to the cheapest outcome j* from the dearest ones in
turn). The optimiser writes the same minimum as linear rows, the region's dual
(:mod:`fairdecide.optimize.program.robust_value`); :meth:`ConfidenceSet.worst_value`
computes it in closed form, and the two are checked against each other on every result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairdecide._common.validation import as_float_array, as_real, check_choice, check_instance
from fairdecide.exceptions import FairdecideError
from fairdecide.uncertainty.balls import clopper_pearson, weissman_radius, worst_in_ball
from fairdecide.uncertainty.credible import credible_region
from fairdecide.uncertainty.data_region import data_region
from fairdecide.uncertainty.kinds import (
    CREDIBLE,
    DATA,
    POOLED,
    READINGS,
    REFIT_BAND,
    ReadsKind,
    SetKind,
)
from fairdecide.uncertainty.refit_band import refit_band
from fairdecide.uncertainty.regions import L1Balls, OutcomeRegions
from fairdecide.worlds.table import expected_utility
from fairdecide.worlds.world import TabularWorld

if TYPE_CHECKING:
    from fairdecide.data.logged import LoggedData
    from fairdecide.policies.base import Policy
    from fairdecide.problem import DecisionProblem

__all__ = ["CREDIBLE", "DATA", "POOLED", "REFIT_BAND", "ConfidenceSet", "SetKind",
           "clopper_pearson", "weissman_radius", "worst_in_ball"]




@dataclass(frozen=True, eq=False)
class ConfidenceSet(ReadsKind):
    """A set of tabular worlds holding the true one with probability at least 1 - delta.

    Pass it as the world to :func:`~fairdecide.optimize_policy`: the policy then
    maximises its worst value over the set (an exact linear program), and
    ``result.guarantee`` states what holds for it with probability 1 - delta.

    Parameters
    ----------
    center : TabularWorld
        The estimate theta_hat (maximum likelihood).
    outcomes : OutcomeRegions
        The region of each outcome conditional, shape ``center.p_y.shape[:-1]``
        (:class:`~fairdecide.uncertainty.regions.L1Balls`, ...).
    group_radius : float, default=0
        The L1 radius around the centre's P(z); 0 when the population is given.
    cell_radius : ndarray of shape (n_z,), optional
        The L1 radius around each group's P(x | z); default 0 (the population given).
    delta : float
        The set misses the truth with probability at most delta.
    method : str
        How the regions were set, for reports.
    kind : SetKind, default=DATA
        What the set is: :data:`DATA`, :data:`POOLED`, :data:`CREDIBLE` or
        :data:`REFIT_BAND` (what its level means, which policies it certifies).
    reading : {"worst", "best", "estimate"}, default="worst"
        What a program over the set maximises: a policy's worst value over the set (the
        maximin), its best (the book's optimistic twin, for a policy that will collect
        data: :meth:`as_optimistic`; needs the population given), or its value at the
        centre with the criteria still held over the whole set (:meth:`as_estimate`:
        certified fairness, estimated value). The guarantee states the worst value
        whenever the reading is not "best".

    Examples
    --------
    >>> from fairdecide import ConfidenceSet, DecisionProblem, LoggedData
    >>> problem = DecisionProblem.classification(2)
    >>> data = LoggedData(x=[0, 0, 1, 1] * 50, z=[0, 1, 0, 1] * 50, y=[0, 1, 1, 1] * 50)
    >>> cs = ConfidenceSet.from_data(data, problem, delta=0.1)
    >>> cs.radius.shape, round(cs.level, 2), cs.contains(cs.center)
    ((2, 2), 0.9, True)
    """

    center: TabularWorld
    outcomes: OutcomeRegions
    group_radius: float = 0.0
    cell_radius: Any = None
    delta: float = 0.1
    method: str = "given"
    kind: SetKind = DATA
    reading: str = "worst"

    def __post_init__(self) -> None:
        check_instance(self.center, "center", TabularWorld, "a TabularWorld")
        check_instance(self.outcomes, "outcomes", OutcomeRegions,
                       "the outcome conditionals' regions (e.g. L1Balls)")
        if self.outcomes.shape != self.center.p_y.shape[:-1]:
            raise FairdecideError(
                f"outcomes must hold one region per outcome conditional, shape "
                f"{self.center.p_y.shape[:-1]}; got {self.outcomes.shape}")
        check_instance(self.kind, "kind", SetKind, "a SetKind (DATA, POOLED, CREDIBLE, ...)")
        check_choice(self.reading, "reading", READINGS)
        n_z = self.center.n_z
        rz = np.zeros(n_z) if self.cell_radius is None else as_float_array(
            self.cell_radius, "cell_radius", ndim=1)
        if rz.shape != (n_z,) or np.any(rz < 0):
            raise FairdecideError(
                f"cell_radius must be {n_z} non-negative numbers (one per group), got "
                f"{self.cell_radius!r}")
        object.__setattr__(self, "cell_radius", np.minimum(rz, 2.0))
        object.__setattr__(self, "group_radius", min(2.0, as_real(
            self.group_radius, "group_radius", low=0)))
        object.__setattr__(self, "delta", as_real(self.delta, "delta", low=0, high=1,
                                                  low_open=True, high_open=True))
        if self.kind.pooled and not self.outcomes.shared_by_groups():
            raise FairdecideError(
                "a pooled set: every group of a cell must share the cell's outcome region")
        if self.optimistic and not self.population_given:
            raise FairdecideError(
                "the optimistic twin takes a given population (its best value over an "
                "estimated one is not a linear program): build the set with population=")

    def as_optimistic(self) -> ConfidenceSet:
        """The same set read optimistically: a policy's value is its best over the set
        (max_pi max_theta V, the book's twin of the maximin for a policy that will
        collect data). Exact where each conditional is read by one action
        (interventions); in a prediction problem the program maximises the per-action
        bound sum_a pi_a max_theta U_a . theta, an upper bound whose gap to the policy's
        true best value is reported in ``result.guarantee.gap`` (0 without criteria)."""
        return dataclasses.replace(self, reading="best")

    def as_estimate(self) -> ConfidenceSet:
        """The same set, a program over it maximising the policy's value at the centre
        (the maximum-likelihood world) while every criterion is still held over the
        whole set: the fairness is certified as before, the value is the decision
        maker's own estimate. The guarantee still states the policy's worst value over
        the set (:meth:`worst_value`), which such a policy may leave lower than the
        maximin's; the price (``guarantee.price``) puts both beside the plug-in policy.

        Examples
        --------
        >>> import fairdecide as fd
        >>> problem = fd.DecisionProblem.classification(2)
        >>> data = fd.LoggedData(x=[0, 0, 1, 1] * 50, z=[0, 1, 0, 1] * 50,
        ...                      y=[0, 1, 1, 1] * 50)
        >>> cs = fd.ConfidenceSet.from_data(data, problem, delta=0.1)
        >>> maximin = fd.optimize_policy(problem, cs, fd.Independence(), epsilon=0.05)
        >>> estimate = fd.optimize_policy(problem, cs.as_estimate(), fd.Independence(),
        ...                               epsilon=0.05)
        >>> center = cs.center
        >>> bool(fd.expected_utility(problem, center, estimate.policy)
        ...      >= fd.expected_utility(problem, center, maximin.policy) - 1e-9)
        True
        >>> bool(estimate.guarantee.value <= maximin.guarantee.value + 1e-9)
        True
        """
        return dataclasses.replace(self, reading="estimate")

    # ------------------------------------------------------------------ what it is
    @property
    def optimistic(self) -> bool:
        """A policy's value is read as its best over the set (:meth:`as_optimistic`)."""
        return self.reading == "best"

    @property
    def pooled(self) -> bool:
        """The outcome regions are pooled over the groups of a cell (``kind.pooled``)."""
        return self.kind.pooled

    @property
    def radius(self) -> np.ndarray:
        """The L1 radius of each outcome conditional's ball (sets of L1 balls)."""
        return self._balls().radius

    @property
    def ball_center(self) -> np.ndarray:
        """The centre of each outcome conditional's ball (sets of L1 balls)."""
        return self._balls().center

    def _balls(self) -> L1Balls:
        if not isinstance(self.outcomes, L1Balls):
            raise FairdecideError(
                f"this set's outcome regions are {self.outcomes.words}, not L1 balls: read "
                "them through cs.outcomes (ends(), worst(), contains())")
        return self.outcomes

    @property
    def level(self) -> float:
        """The coverage 1 - delta."""
        return 1.0 - self.delta

    @property
    def population_given(self) -> bool:
        """Whether the population P(x, z) is known (its balls have radius 0)."""
        return self.group_radius == 0 and not np.any(self.cell_radius > 0)

    @classmethod
    def from_data(cls, data: LoggedData, problem: DecisionProblem, delta: float = 0.1, *,
                  population: Any = None, outcomes: str = "auto", pooled: bool = False
                  ) -> ConfidenceSet:
        """Balls around the maximum-likelihood world, simultaneous at level 1 - delta by
        the union bound (see the module).

        Parameters
        ----------
        data : LoggedData
        problem : DecisionProblem
        delta : float in (0, 1), default=0.1
        population : TabularWorld or array of shape (n_x, n_z), optional
            A known population P(x, z) (a census; the people to be decided about): its
            balls have radius 0. Default: estimated from the data, with P(z) and each
            P(x | z) in a ball.
        outcomes : {"auto", "weissman", "clopper-pearson"}, default="auto"
            The outcome conditionals' sets: Weissman's L1 balls, or exact
            Clopper-Pearson intervals: with two outcomes one interval, the ball around
            its midpoint; with more a box of every outcome's interval (Bonferroni over
            the outcomes) within the simplex (:class:`~fairdecide.uncertainty.regions.
            Boxes`). "auto" takes Clopper-Pearson for two outcomes (narrower: 0.71
            against 0.94 wide at 8 of 17, 0.16 against 0.39 at 5 of 100, both at
            1 - 0.1 / 90), Weissman's balls for more.
        pooled : bool, default=False
            One outcome conditional per cell, P(y | x) from all its rows, for
            group-blind decisions (``optimize_policy(..., group_blind=True)``): far
            narrower when groups split the cells (on COMPAS, 141 conditionals instead
            of 1,692). Certifies group-blind policies and outcome-free criteria only.

        Examples
        --------
        >>> from fairdecide import ConfidenceSet, DecisionProblem, LoggedData
        >>> problem = DecisionProblem.classification(2)
        >>> data = LoggedData(x=[0, 0, 1, 1] * 50, z=[0, 1, 0, 1] * 50,
        ...                   y=[0, 1, 1, 1] * 50)
        >>> by_group = ConfidenceSet.from_data(data, problem)
        >>> pooled = ConfidenceSet.from_data(data, problem, pooled=True)
        >>> bool(pooled.radius[1, 0] < by_group.radius[1, 0])  # 100 rows, not 50
        True
        """
        return cls(**data_region(data, problem, delta, population, outcomes, pooled))

    @classmethod
    def from_posterior(cls, posterior: Any, delta: float = 0.1, *, population: Any = None,
                       n_draws: int = 4000, random_state: Any = None) -> ConfidenceSet:
        """The credible region of a fitted ``DirichletPosterior`` (``factorization=
        "joint"``) in the same shapes: posterior probability at least about 1 - delta,
        a Bayesian reading of the set rather than a frequentist coverage.

        The factors are independent a posteriori (each conditional is Dirichlet; P(z)
        and each P(x | z) are Dirichlet by aggregation), so regions of credibility
        (1 - d_i) multiply: the outcomes share 1 - delta / 2 as equal-tailed Beta
        intervals with two outcomes (exact), or with more the L1 ball holding the box of
        every outcome's Beta interval at 1 - d_i / m (Bonferroni: at least 1 - d_i,
        conservative); the population's 1 + n_z balls the other half, each the
        L1 ball around the posterior mean whose radius is the (1 - d_i) quantile of
        ``n_draws`` posterior draws' distances (Monte Carlo, approximate). With
        ``population=`` given, the outcomes take all of delta.
        """
        center, regions, r0, rz = credible_region(posterior, delta, population, n_draws,
                                                  random_state)
        return cls(center, regions, r0, rz, delta,
                   "Dirichlet posterior credible region (Beta intervals, union of "
                   "independent factors)", CREDIBLE)

    @classmethod
    def from_refits(cls, model: Any, delta: float = 0.1, *, n_refits: int = 200,
                    random_state: Any = None, weights: Any = None, refits: Any = None
                    ) -> ConfidenceSet:
        """A simultaneous bootstrap band around a fitted
        :class:`~fairdecide.models.IndividualOutcomeModel`'s probabilities for its
        training individuals (approximate: see :mod:`fairdecide.uncertainty.refit_band`).

        The set's cells are the individuals (cell i is individual i, in its own group;
        ``weights`` their population weights, default 1/n each): the policy optimised
        over it has one row per individual, ``res.policy.table[i, z_i]``, and the
        guarantee reads "about 1 - delta" (a bootstrap approximation, not a bound).

        Parameters
        ----------
        model : IndividualOutcomeModel
            Fitted.
        delta : float in (0, 1), default=0.1
        n_refits : int, default=200
            Bootstrap refits of the model; at least 1 / delta.
        random_state : int or RandomState, optional
        weights : array-like of shape (n,), optional
        refits : sequence of SampleWorld, optional
            Refits already drawn (``model.bootstrap_worlds``, a belief's scenarios), used
            instead of ``n_refits`` new ones.

        Examples
        --------
        >>> import numpy as np
        >>> import fairdecide as fd
        >>> from fairdecide.models import IndividualOutcomeModel
        >>> rng = np.random.RandomState(0)
        >>> X, z = rng.normal(size=(300, 1)), rng.randint(0, 2, 300)
        >>> y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
        >>> problem = fd.DecisionProblem.classification(2)
        >>> model = IndividualOutcomeModel().fit(X, z, y, problem)
        >>> cs = fd.ConfidenceSet.from_refits(model, n_refits=40, random_state=0)
        >>> cs.center.n_x, cs.approximate
        (300, True)
        """
        center, radius, n = refit_band(model, delta, n_refits, random_state, weights,
                                       refits)
        return cls(center, L1Balls(center.p_y, radius), 0.0, None, delta,
                   f"a bootstrap band over {n} refits of the outcome model, "
                   "simultaneous over the individuals (approximate)", REFIT_BAND)

    # ------------------------------------------------------------------ reading
    def contains(self, world: TabularWorld, slack: float = 1e-12) -> bool:
        """Whether ``world`` lies in the set (same cells, groups and outcome shape)."""
        check_instance(world, "world", TabularWorld, "a TabularWorld")
        if world.p_y.shape != self.center.p_y.shape:
            raise FairdecideError(
                f"world's p_y has shape {world.p_y.shape}, the set's {self.center.p_y.shape}")
        p_y = world.p_y
        if self.pooled:  # the world's P(y | [a,] x): its groups weighted by P(z | x)
            w = world.p_xz / np.maximum(world.p_xz.sum(axis=1, keepdims=True), 1e-300)
            w = w.reshape(w.shape + (1,) * (p_y.ndim - 2))
            p_y = np.broadcast_to((w * p_y).sum(axis=1, keepdims=True), p_y.shape)
        d0 = np.abs(world.p_z - self.center.p_z).sum()
        dz = np.abs(world.p_x_given_z - self.center.p_x_given_z).sum(axis=0)
        return bool(self.outcomes.contains(p_y, slack) and d0 <= self.group_radius + slack
                    and np.all(dz <= self.cell_radius + slack))

    def action_values(self, problem: DecisionProblem, best: bool = False) -> np.ndarray:
        """Each unit's and action's least (``best``: greatest) expected utility U_a .
        theta over the region the action reads, shape (n_units, n_actions): the (u, a)
        conditional's in an intervention, the unit's own in a prediction problem (there
        a bound per action, not the policy's mix)."""
        U = problem.utility
        n_x, n_z, n_a = self.center.n_x, self.center.n_z, problem.n_actions
        sign = -1.0 if best else 1.0
        if self.center.outcome_depends_on_action:  # region (x, z, a) reads U_a
            theta = self.outcomes.worst(sign * U)
        else:  # region (x, z) read by each action: its worst for U_a, per action
            theta = self.outcomes.worst(sign * U[:, None, None, :]).transpose(1, 2, 0, 3)
        return np.einsum("uay,ay->ua", theta.reshape(n_x * n_z, n_a, -1), U)

    def unit_worst(self, rows: np.ndarray, problem: DecisionProblem, best: bool = False
                   ) -> np.ndarray:
        """For policy rows pi(a | u) of shape (n_units, n_actions): each unit's worst
        (``best``: best) expected utility g_u over its conditionals."""
        if self.center.outcome_depends_on_action:  # one conditional per (u, a)
            return (rows * self.action_values(problem, best)).sum(axis=1)
        # one per u, priced by the policy's mix of actions
        sign, U = -1.0 if best else 1.0, problem.utility
        cost = (sign * rows @ U).reshape(*self.outcomes.shape, -1)
        theta = self.outcomes.worst(cost).reshape(len(rows), -1)
        return np.einsum("ua,uy,ay->u", rows, theta, U)

    def population_min(self, values: np.ndarray) -> tuple[np.ndarray, float]:
        """min over the set's populations of sum_{x,z} P(x, z) values[x, z], nested: each
        group's P(x | z) at its worst, then P(z). Returns each group's worst mean (n_z,)
        and the minimum."""
        cond = self.center.p_x_given_z.T  # (n_z, n_x)
        v = np.asarray(values, dtype=float).T
        per_group = np.einsum("zx,zx->z", worst_in_ball(v, cond, self.cell_radius), v)
        worst_z = worst_in_ball(per_group, self.center.p_z, np.asarray(self.group_radius))
        return per_group, float(worst_z @ per_group)

    def worst_value(self, policy: Policy, problem: DecisionProblem) -> float:
        """min over the set of the policy's expected utility, in closed form (independent
        of the optimiser's linear program)."""
        return self._extreme_value(policy, problem, best=False)

    def value(self, policy: Policy, problem: DecisionProblem) -> float:
        """The policy's value over the set that its guarantee states: its worst
        (:meth:`worst_value`; also when the set is read at its estimate) or, optimistic,
        its best, in closed form."""
        return self._extreme_value(policy, problem, best=self.optimistic)

    def objective_value(self, policy: Policy, problem: DecisionProblem) -> float:
        """The policy's value as a program over the set maximises it: :meth:`value`, or
        with ``reading="estimate"`` its expected utility at the centre."""
        if self.reading == "estimate":
            return float(expected_utility(problem, self.center, policy))
        return self.value(policy, problem)

    def _extreme_value(self, policy: Policy, problem: DecisionProblem, best: bool) -> float:
        # the population's worst over the units' extremes (an optimistic set's population
        # is given: the balls have radius 0, and the nesting weighs by P(x, z))
        rows = policy.proba(self.center.units())
        if rows.shape[1] != problem.n_actions:
            raise FairdecideError(
                f"policy has {rows.shape[1]} actions but the problem has "
                f"{problem.n_actions}: give a policy over the problem's actions")
        if self.pooled:
            self.check_group_blind(rows)
        g = self.unit_worst(rows, problem, best)
        return self.population_min(g.reshape(self.center.n_x, self.center.n_z))[1]

    def check_group_blind(self, rows: np.ndarray) -> None:
        """Raise unless policy rows (n_units, n_actions) are the same in every group of a
        cell: a pooled set certifies group-blind policies only."""
        by_cell = rows.reshape(self.center.n_x, self.center.n_z, -1)
        if not np.allclose(by_cell, by_cell[:, :1], atol=1e-9):
            raise FairdecideError(
                "this ConfidenceSet pools the outcomes over the groups of a cell "
                "(pooled=True), which certifies group-blind policies only; the policy "
                "treats the groups of a cell differently. Optimise with group_blind=True, "
                "or build the set with pooled=False")

    def __repr__(self) -> str:
        pop = ("given population" if self.population_given else
               f"population radii {self.group_radius:.3g} (groups), "
               f"{self.cell_radius.min():.3g}-{self.cell_radius.max():.3g} (cells)")
        n_c = int(np.prod(self.outcomes.shape)) // (
            self.center.n_z if self.pooled or self.approximate else 1)
        kind = "pooled " if self.pooled else "individuals' " if self.approximate else ""
        low, high = self.outcomes.spans()
        size = "radii" if isinstance(self.outcomes, L1Balls) else "widths"
        return (f"ConfidenceSet(level {self.level:g}{' (approximate)' * self.approximate}, "
                f"{n_c} {kind}conditionals in {self.outcomes.words}, "
                f"{size} {low:.3g}-{high:.3g}, {pop})")
