"""A fitted classifier's fairness deviations bounded on held-out labelled rows: upper
confidence bounds that hold in the population with probability at least 1 - delta
(:func:`certify_held_out`, a :class:`HeldOutGuarantee`).

"Certify" means one thing in the package: state what holds in the population with
probability at least 1 - delta, and whether it meets epsilon; from held-out rows here,
over a confidence set in :func:`~fairdecide.certify_policy`. A solver's
``result.certificates`` are another thing, its proofs about its own program (docs/concepts.md,
vocabulary)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairdecide._common.deprecation import deprecated_function
from fairdecide._common.validation import as_float_array, as_real, check_distribution
from fairdecide.criteria.base import ByCriterion, as_criteria, resolve_names
from fairdecide.criteria.conditional import ConditionalIndependence
from fairdecide.evaluation._bounds import deviation_bound, level
from fairdecide.exceptions import FairdecideError
from fairdecide.labels import Labels
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.table import row_counts

__all__ = ["HeldOutGuarantee", "certify_held_out"]


@dataclass(frozen=True)
class HeldOutGuarantee:
    """Each criterion's deviation on held-out rows and an upper bound of its deviation
    in the population, all bounds holding at once with probability at least 1 - delta.

    Attributes
    ----------
    deviations : dict[str, float]
        The deviation of the held-out rows' joint
        M[z, a, y] = (1/n) sum_i pi(a | x_i, z_i) [z_i = z, y_i = y] (the plug-in, what
        :func:`~fairdecide.make_fairness_scorer` reports).
    bounds : dict[str, float]
        The upper confidence bounds (UCB) of the population deviations.
    epsilon : float
        The tolerance the bounds are tested against.
    delta : float
        The probability that some bound fails (is below its population deviation).
    n_rows : int
        Held-out rows the conditionals were estimated from.
    """

    deviations: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, float] = field(default_factory=dict)
    epsilon: float = 0.0
    delta: float = 0.05
    n_rows: int = 0

    @property
    def certified(self) -> bool:
        """Whether every bound is at most epsilon."""
        return all(b <= self.epsilon for b in self.bounds.values())

    @property
    def smallest_epsilon(self) -> float:
        """The smallest tolerance these bounds pass: the largest bound."""
        return max(self.bounds.values(), default=0.0)

    def summary(self) -> str:
        """A readable report."""
        word = "certified" if self.certified else "NOT certified"
        lines = [f"fairdecide held-out guarantee: {word} at epsilon = {self.epsilon:.6g}, "
                 f"delta = {self.delta:.6g}, {self.n_rows} held-out rows",
                 f"  {'criterion':<14}  {'held-out':>10}  {'UCB':>10}"]
        for name, dev in self.deviations.items():
            lines.append(f"  {name:<14}  {dev:>10.6g}  {self.bounds[name]:>10.6g}")
        return "\n".join(lines)


def certifiable(criteria: Any, name: str = "criteria") -> list[ConditionalIndependence]:
    """The criteria as a list, each one whose deviation can be bounded from labelled rows:
    a conditional independence of the action given nothing or the outcome, measured by
    "tv" or "max"; anything else raises an error naming it."""
    crits = as_criteria(criteria, name, kind=ConditionalIndependence,
                        what="a group criterion (Independence, Separation) with a deviation "
                        "bound; Lipschitz is not supported with a guarantee")
    if not crits:
        raise FairdecideError(f"{name} is empty: there is no deviation to bound; give at "
                              "least one criterion, e.g. 'independence'")
    for c in crits:
        if c.target != "action" or c.given not in (None, "outcome"):
            raise FairdecideError(
                f"{name}: {c.label!r} is not supported with a guarantee: only the action's "
                "independence of the group, alone or given the outcome (Independence, "
                "Separation), is bounded; sufficiency conditions on the decision itself")
        if c.measure not in ("tv", "max"):
            raise FairdecideError(
                f"{name}: {c.label!r} has measure={c.measure!r}, which is not supported "
                "with a guarantee (no bound of KL from intervals); use 'tv' or 'max'")
    return crits


def bound_rows(criteria: list[ConditionalIndependence], problem: DecisionProblem,
               rows: np.ndarray, y: np.ndarray, z: np.ndarray, n_groups: int, delta: float,
               epsilon: float, labels: np.ndarray | None = None) -> HeldOutGuarantee:
    """The guarantee of policy rows pi(. | x_i, z_i) (n, n_a) on labelled rows (codes
    ``y``, ``z``). ``labels``: rows per (z, y) that estimate the group weights (default:
    these rows' own)."""
    counts = row_counts(z, rows, y, n_groups, problem.n_outcomes)
    if labels is None:
        labels = counts.sum(axis=1)
    at = level(criteria, problem, n_groups, delta)
    names = resolve_names(criteria)
    devs = ByCriterion({n: c.deviation_from_marginal(counts / len(y), problem)
                        for n, c in zip(names, criteria, strict=True)})
    bounds = ByCriterion({n: deviation_bound(c, problem, counts, labels, at)
                          for n, c in zip(names, criteria, strict=True)})
    return HeldOutGuarantee(devs, bounds, epsilon, delta, len(y))


def certify_held_out(estimator: Any, X: Any, y: Any, *, epsilon: float,
                     sensitive_features: Any = None, criteria: Any = None,
                     delta: float = 0.05) -> HeldOutGuarantee:
    """Upper confidence bounds of a fitted classifier's deviations in the population,
    from labelled rows it was not fitted on, and whether they are within ``epsilon``.

    The rows must be a sample of the population, independent of the rows the classifier
    was fitted on. Each conditional the criterion compares, P(a | c, z) (c an outcome
    for separation, nothing for independence), is the mean of pi(a | x_i, z_i) over the
    rows in (c, z), and each group weight P(z | c) a share of rows; every one gets an
    interval from Hoeffding's relative-entropy bound for means of values in [0, 1],

        {q : n kl(mean, q) <= log(2 m / delta)},  kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q)),

    so that all m of them hold at once with probability at least 1 - delta (union bound).
    The difference of two groups' conditionals also gets Hoeffding's two-sample interval.
    On that event every |P(a | c, z) - P(a | c, z')| is bounded, which is what
    ``reference="pairwise"`` compares; with the pooled reference,
    P(a | c) = sum_z' P(z' | c) P(a | c, z') and

        |P(a | c, z) - P(a | c)| <= max over weights in their intervals of
                                   sum_{z' != z} P(z' | c) |P(a | c, z) - P(a | c, z')|.

    The bound of the deviation is the criterion's sum (``"tv"``) or maximum (``"max"``)
    of these. No distributional
    assumption beyond independent rows; the policy's rows may be fractional.

    Parameters
    ----------
    estimator : fitted classifier
        Anything with ``classes_`` and ``predict_proba`` (taking ``sensitive_features=``
        when given), such as :class:`~fairdecide.FairPolicyClassifier`.
    X, y : held-out rows and their labels (classes of the estimator)
    epsilon : float
        The tolerance, >= 0: certified when every bound is at most epsilon.
    sensitive_features : array-like of shape (n,), optional
        The group of each row; needed unless the estimator takes it from a column of X
        (its ``group_column``).
    criteria : str, Criterion or list, optional
        Independence and Separation (any ConditionalIndependence of the action given
        nothing or the outcome, such as "demographic_parity_difference"), measure "tv" or
        "max", either reference; default the estimator's own ``criteria``.
    delta : float, default=0.05
        In (0, 1): the probability that some bound fails.

    Returns
    -------
    HeldOutGuarantee
        ``deviations`` (held-out plug-in), ``bounds`` (UCB), ``certified``,
        ``smallest_epsilon``.

    Notes
    -----
    ``fairdecide.evaluation.certify`` is this function's name before (it warns), and
    ``DeviationCertificate`` its result's: the library's "certificates" are a solver's
    proofs about its program (``OptimizeResult.certificates``), while this is a
    statement about the population, as :func:`~fairdecide.certify_policy`'s
    :class:`~fairdecide.Guarantee` is over a confidence set.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import FairPolicyClassifier
    >>> from fairdecide.evaluation import certify_held_out
    >>> rng = np.random.RandomState(0)
    >>> z = rng.randint(2, size=6000)
    >>> X = np.c_[rng.normal(size=6000) + z, rng.normal(size=6000)]
    >>> y = (X[:, 0] + rng.normal(size=6000) > 0.5).astype(int)
    >>> clf = FairPolicyClassifier(epsilon=0.02, random_state=0)
    >>> clf = clf.fit(X[:3000], y[:3000], sensitive_features=z[:3000])
    >>> held = certify_held_out(clf, X[3000:], y[3000:], sensitive_features=z[3000:],
    ...                         epsilon=0.25)
    >>> held.certified
    True
    >>> round(held.deviations["independence"], 3), round(held.bounds["independence"], 3)
    (0.083, 0.211)
    """
    epsilon = as_real(epsilon, "epsilon", low=0.0)
    delta = as_real(delta, "delta", 0, 1, low_open=True, high_open=True)
    if not hasattr(estimator, "predict_proba") or not hasattr(estimator, "classes_"):
        raise FairdecideError(
            f"estimator must be a fitted classifier with predict_proba and classes_, got "
            f"{type(estimator).__name__} (fit it first)")
    crits = certifiable(estimator.criteria if criteria is None and hasattr(
        estimator, "criteria") else criteria)
    z_raw = sensitive_features
    # the estimator's column of X (group_column; sensitive_feature its deprecated name)
    column = (getattr(estimator, "group_column", None)
              or getattr(estimator, "sensitive_feature", None))
    if z_raw is None and column is not None and hasattr(X, "columns") and column in X.columns:
        z_raw = X[column].to_numpy(dtype=object)
    if z_raw is None:
        raise FairdecideError(
            "certify_held_out needs the group of each row: pass sensitive_features= (the "
            "bound compares groups)")
    kwargs = {} if sensitive_features is None else {"sensitive_features": sensitive_features}
    rows = as_float_array(estimator.predict_proba(X, **kwargs), "predict_proba", ndim=2)
    rows = check_distribution(rows, "predict_proba", (1,))
    classes = list(np.asarray(estimator.classes_).tolist())
    y_codes, _ = Labels.factorize(np.asarray(y, dtype=object), "y", classes)
    z_codes, groups = Labels.factorize(np.asarray(z_raw, dtype=object), "sensitive_features")
    n, k = rows.shape
    if len(y_codes) != n or len(z_codes) != n:
        raise FairdecideError(
            f"X has {n} rows but y has {len(y_codes)} and sensitive_features {len(z_codes)}")
    # the decisions are the classes unless the estimator names others (actions_)
    n_a = len(getattr(estimator, "actions_", classes))
    if k != n_a:
        raise FairdecideError(
            f"predict_proba has {k} columns but the estimator has {n_a} actions (classes_ "
            "unless actions_)")
    problem = DecisionProblem(np.zeros((n_a, len(classes))), outcome_depends_on_action=False)
    return bound_rows(crits, problem, rows, y_codes, z_codes, len(groups), delta, epsilon)


#: The earlier names, for one release: ``DeviationCertificate`` stays importable from
#: this module without a warning (the estimators' guarantee reads it); the public
#: ``fairdecide.evaluation.DeviationCertificate`` warns.
DeviationCertificate = HeldOutGuarantee
certify = deprecated_function(certify_held_out, "fairdecide.evaluation.certify",
                              "fairdecide.evaluation.certify_held_out")
