"""Beliefs about the unknown world: weighted scenarios and how to aggregate them.

=================  ==========================================  ==========================
method             scenarios                                   aggregate
=================  ==========================================  ==========================
plug-in            one world (e.g. the maximum-likelihood one)  (either; they agree)
Bayesian           K draws from the posterior                  "mean": E_k V(pi, theta_k)
bootstrap          K refits on resampled data                  "mean"
maximin            the most probable 1-delta share of K draws   "worst": min_k V(pi, theta_k)
=================  ==========================================  ==========================

The maximin belief (:meth:`Belief.highest_density_draws`) is a finite set of posterior
draws and guarantees nothing about the rest of the posterior; a guarantee over every
world of a set holding theta with probability 1 - delta is a
:class:`~fairdecide.ConfidenceSet`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.deprecation import warn_deprecated
from fairdecide._common.registry import REGISTRY
from fairdecide._common.validation import as_float_array, as_int, as_real
from fairdecide.exceptions import FairdecideError
from fairdecide.worlds.world import World

if TYPE_CHECKING:
    from fairdecide.data.logged import LoggedData
    from fairdecide.models.bayesian import BayesianOutcomeModel
    from fairdecide.models.dirichlet import DirichletPosterior
    from fairdecide.problem import DecisionProblem

__all__ = ["Belief", "cvar"]

AGGREGATES = ("mean", "worst")


@dataclass(frozen=True, eq=False)
class Belief:
    """A weighted set of scenarios (worlds) and how to aggregate a policy's value over them.

    Parameters
    ----------
    worlds : sequence of World
        The scenarios theta_1..theta_K, all with the same units (cells and groups, or
        individuals) and outcome shapes.
    weights : array-like of shape (K,), optional
        Non-negative scenario weights (normalised to sum to one); default uniform.
    aggregate : {"mean", "worst"}, default="mean"
        "mean" maximises the weighted mean of the trade-off's value over scenarios (the
        Bayesian decision; the fairness term is the mean of each scenario's deviation,
        never the deviation of the mean world). "worst" maximises the worst scenario's
        value (maximin over a confidence set).
    label : str, optional
        A name used in results.

    Examples
    --------
    >>> from fairdecide import Belief, DirichletPosterior, LoggedData, DecisionProblem
    >>> problem = DecisionProblem.classification(2)
    >>> data = LoggedData(x=[0, 0, 1, 1], z=[0, 1, 0, 1], y=[0, 1, 1, 1])
    >>> post = DirichletPosterior(prior=0.5).fit(data, problem)
    >>> belief = Belief.from_posterior(post, n_scenarios=8, random_state=0)
    >>> belief.n_scenarios, belief.aggregate
    (8, 'mean')
    """

    worlds: tuple[World, ...]
    weights: np.ndarray | None = None
    aggregate: str = "mean"
    label: str = "belief"

    def __post_init__(self) -> None:
        if isinstance(self.worlds, World | str | bytes) or not isinstance(
                self.worlds, Sequence):
            raise FairdecideError(
                "worlds must be a sequence of World objects (scenarios), got "
                f"{type(self.worlds).__name__}; for a single world use Belief.plug_in(world)")
        worlds = tuple(self.worlds)
        if not worlds:
            raise FairdecideError("a Belief needs at least one world (scenario)")
        for i, w in enumerate(worlds):
            if not isinstance(w, World):
                raise FairdecideError(
                    f"worlds[{i}] must be a World such as TabularWorld, got "
                    f"{type(w).__name__}")
        first = worlds[0].units() if len(worlds) > 1 else None  # one world: nothing to match
        for i, w in enumerate(worlds[1:], start=1):
            if not w.units().same_as(first) or w.outcome_shape() != worlds[0].outcome_shape():
                raise FairdecideError(
                    f"worlds[{i}] has other units, labels or outcome shape "
                    f"{w.outcome_shape()} than worlds[0] {worlds[0].outcome_shape()}; all "
                    "scenarios must share their units: the same cells and groups, with the "
                    "same labels in the same order (fit every world from data built with the "
                    "same x_labels and group_labels)")
        if self.weights is None:
            wts = np.full(len(worlds), 1.0 / len(worlds))
        else:
            wts = as_float_array(self.weights, "weights", ndim=1)
            if wts.shape != (len(worlds),) or not np.all(np.isfinite(wts)) or np.any(wts < 0):
                raise FairdecideError(
                    f"weights must be {len(worlds)} non-negative numbers, got {self.weights!r}")
            if wts.sum() <= 0:
                raise FairdecideError("weights must not all be zero")
            wts = wts / wts.sum()
        if self.aggregate not in AGGREGATES:
            raise FairdecideError(
                f"aggregate must be one of {AGGREGATES}, got {self.aggregate!r}")
        object.__setattr__(self, "worlds", worlds)
        object.__setattr__(self, "weights", wts)

    @property
    def n_scenarios(self) -> int:
        """Number of scenarios K."""
        return len(self.worlds)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def plug_in(cls, world: World, label: str = "plug-in") -> Belief:
        """A single world taken as the truth (e.g. the maximum-likelihood estimate)."""
        return cls((world,), label=label)

    @classmethod
    def from_posterior(
        cls, posterior: DirichletPosterior | BayesianOutcomeModel,
        n_scenarios: int = N_SCENARIOS, random_state: Any = None, aggregate: str = "mean",
        *, X: Any = None, z: Any = None,
    ) -> Belief:
        """``n_scenarios`` draws from a fitted posterior, equally weighted: exact draws of
        a :class:`~fairdecide.DirichletPosterior` (tabular worlds), or posterior draws of
        a :class:`~fairdecide.models.BayesianOutcomeModel` (at most its chains * draws),
        each a :class:`~fairdecide.SampleWorld` of its training individuals or of new
        ones (features ``X`` and group labels ``z``, both or neither)."""
        # scikit-learn (heavy) loads with the models, at the first posterior, not at
        # ``import fairdecide``
        from fairdecide.models.bayesian import BayesianOutcomeModel

        if isinstance(posterior, BayesianOutcomeModel):
            worlds = posterior.sample(n_scenarios, random_state, X, z)
        else:
            _check_posterior(posterior)
            if X is not None or z is not None:
                raise FairdecideError(
                    "X and z (new individuals) are for a BayesianOutcomeModel's posterior; "
                    "a DirichletPosterior's worlds are its cells")
            worlds = posterior.sample(as_int(n_scenarios, "n_scenarios", minimum=1),
                                      random_state=random_state)
        return cls(tuple(worlds), aggregate=aggregate, label=f"Bayes ({len(worlds)} draws)")

    @classmethod
    def from_bootstrap(
        cls, data: LoggedData, problem: DecisionProblem, n_scenarios: int = N_SCENARIOS, *,
        smoothing: float = 0.5, factorization: str = "joint", random_state: Any = None,
        allow_empty_groups: bool = False,
    ) -> Belief:
        """Smoothed maximum-likelihood worlds refitted on ``n_scenarios`` bootstrap resamples
        of the data (the papers' second approximate posterior)."""
        from fairdecide.models.dirichlet import BootstrapPosterior  # heavy: scikit-learn

        n_scenarios = as_int(n_scenarios, "n_scenarios", minimum=1)
        boot: BootstrapPosterior = BootstrapPosterior(
            smoothing=smoothing, factorization=factorization,
            allow_empty_groups=allow_empty_groups).fit(data, problem)
        worlds = boot.sample(n_scenarios, random_state=random_state)
        return cls(tuple(worlds), label=f"bootstrap ({n_scenarios})")

    @classmethod
    def from_refits(cls, model: Any, n_scenarios: int = N_SCENARIOS, random_state: Any = None,
                    aggregate: str = "mean", weights: Any = None) -> Belief:
        """Scenarios from ``n_scenarios`` bootstrap refits of a fitted
        :class:`~fairdecide.models.IndividualOutcomeModel`, each predicting for the same
        individuals (a belief over a :class:`~fairdecide.SampleWorld`'s outcomes), whose
        population weights are ``weights`` (default 1/n each)."""
        from fairdecide.models.individuals import IndividualOutcomeModel  # heavy: sklearn

        if not isinstance(model, IndividualOutcomeModel):
            raise FairdecideError(
                "model must be a fitted IndividualOutcomeModel, got "
                f"{type(model).__name__}")
        worlds = model.bootstrap_worlds(n_scenarios, random_state, weights)
        return cls(tuple(worlds), aggregate=aggregate,
                   label=f"bootstrap refits ({len(worlds)})")

    @classmethod
    def highest_density_draws(
        cls, posterior: DirichletPosterior, delta: float = 0.1, n_scenarios: int = N_SCENARIOS,
        random_state: Any = None,
    ) -> Belief:
        """Maximin belief: the most probable 1 - delta share of ``n_scenarios`` posterior
        draws (ranked by posterior density), aggregated by their worst case.

        The kept draws are points of a highest-posterior-density region of posterior
        probability about 1 - delta; the optimal policy maximises its worst value over
        these draws, and nothing is guaranteed about the rest of the region (a
        :class:`~fairdecide.ConfidenceSet` guarantees its whole set: over 500 data sets
        of ``benchmarks/bench_certified.py`` this maximin broke a separation tolerance
        in 63.0% of them, the certified policy in none). With Dirichlet
        concentrations below one (a prior < 1 on cells without data) the density is
        unbounded at the simplex's edges, so the densest draws are the extreme ones
        there, not the central ones: use prior >= 1 for a central set.

        ``Belief.confidence_set`` is this constructor's earlier name (it warns): it
        named a set with a guarantee, which the draws are not.

        Examples
        --------
        >>> import fairdecide as fd
        >>> from fairdecide.datasets import make_bail_problem, sample_logged_data
        >>> problem, world = make_bail_problem()
        >>> data = sample_logged_data(problem, world, 500, random_state=0)
        >>> posterior = fd.DirichletPosterior(prior=1.0).fit(data, problem)
        >>> belief = fd.Belief.highest_density_draws(posterior, delta=0.25, n_scenarios=8,
        ...                                          random_state=0)
        >>> belief.n_scenarios, belief.aggregate
        (6, 'worst')
        """
        _check_posterior(posterior)
        delta = as_real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
        n_scenarios = as_int(n_scenarios, "n_scenarios", minimum=1)
        params = posterior.sample_parameters(n_scenarios, random_state=random_state)
        logp = np.array([posterior.log_density(p) for p in params])
        keep = int(np.floor((1.0 - delta) * len(params) + 1e-9))
        if keep < 1:
            raise FairdecideError(
                f"no draw is kept: (1 - delta) * n_scenarios = "
                f"{(1 - delta) * len(params):.3g} < 1; raise n_scenarios or lower delta")
        order = np.argsort(-logp, kind="stable")[:keep]
        worlds = tuple(posterior.world_from(params[i]) for i in order)
        return cls(worlds, aggregate="worst", label=f"maximin ({keep} of {n_scenarios})")

    @classmethod
    def confidence_set(cls, posterior: DirichletPosterior, delta: float = 0.1,
                       n_scenarios: int = N_SCENARIOS, random_state: Any = None) -> Belief:
        """Deprecated name of :meth:`highest_density_draws` (it warns)."""
        warn_deprecated("Belief.confidence_set", "Belief.highest_density_draws (the draws "
                        "guarantee nothing; a ConfidenceSet does)")
        return cls.highest_density_draws(posterior, delta, n_scenarios, random_state)

    def with_aggregate(self, aggregate: str) -> Belief:
        """The same scenarios aggregated differently."""
        return Belief(self.worlds, self.weights, aggregate, self.label)

    # ------------------------------------------------------------------ aggregation
    def combine(self, values: np.ndarray) -> float:
        """Aggregate per-scenario values: weighted mean or worst (minimum) case."""
        values = np.asarray(values, dtype=float)
        if self.aggregate == "mean":
            return float(self.weights @ values)
        return float(values.min())

    def combine_deviation(self, values: np.ndarray) -> float:
        """Aggregate per-scenario deviations: weighted mean or worst (maximum) case."""
        values = np.asarray(values, dtype=float)
        if self.aggregate == "mean":
            return float(self.weights @ values)
        return float(values.max())

    def __repr__(self) -> str:
        return (f"Belief({self.label}, {self.n_scenarios} scenarios, "
                f"aggregate={self.aggregate!r})")


def cvar(values: Sequence[float], weights: Sequence[float], delta: float) -> float:
    """Conditional value at risk CVaR_{1-delta}: the mean of the worst delta share.

    Computed exactly for a discrete distribution as min_eta eta + E[(F - eta)_+] / delta
    (Rockafellar and Uryasev), whose minimum is attained at one of the values.

    Examples
    --------
    >>> cvar([0.0, 1.0, 2.0, 3.0], [0.25] * 4, delta=0.5)
    2.5
    """
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    if v.ndim != 1 or v.size == 0 or w.shape != v.shape:
        raise FairdecideError(
            f"values and weights must be non-empty and of one length, got {v.shape} and "
            f"{w.shape}")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(w)) and np.all(w >= 0)
            and abs(w.sum() - 1.0) <= 1e-9):
        raise FairdecideError("values must be finite and weights a distribution")
    if not 0.0 < delta <= 1.0:
        raise FairdecideError(f"delta must lie in (0, 1], got {delta!r}")
    best = np.inf
    for eta in v:
        best = min(best, eta + float(w @ np.maximum(v - eta, 0.0)) / delta)
    return float(best)


def _check_posterior(posterior: Any) -> None:
    from fairdecide.models.dirichlet import DirichletPosterior  # heavy: scikit-learn

    if not isinstance(posterior, DirichletPosterior) or not hasattr(posterior, "counts_"):
        raise FairdecideError(
            "posterior must be a fitted DirichletPosterior (DirichletPosterior(...).fit(data, "
            f"problem)), got {type(posterior).__name__}")


# the deprecated BayesianOutcomeModel.belief builds this class (fairdecide._common.registry)
REGISTRY["Belief"] = Belief
