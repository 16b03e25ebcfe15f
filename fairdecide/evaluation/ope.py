"""Off-policy value estimators: direct, inverse propensity, self-normalised, doubly robust.

Every estimator returns a :class:`ValueEstimate` with the point value, a standard error
from the estimator's influence function, and a normal confidence interval. The
estimators share one input, :class:`OffPolicyInputs`: per logged individual i the reward
r_i = U(a_i, y_i), the logging propensity p_i = pi_0(a_i | x_i), the candidate policy's
action probabilities pi(. | x_i), and (for model-based estimators) the cross-fitted
outcome model's expected utility q(x_i, a) of every action.

Formulas (w_i = pi(a_i | x_i) / p_i, optionally clipped at M):

- direct (DM):            V = mean_i sum_a pi(a | x_i) q(x_i, a)
- inverse propensity:     V = mean_i w_i r_i
- self-normalised (SNIPS): V = sum_i w_i r_i / sum_i w_i
- doubly robust (DR):     V = mean_i [sum_a pi(a | x_i) q(x_i, a) + w_i (r_i - q(x_i, a_i))]
- on-policy (the logged decisions themselves): V = mean_i r_i

Standard errors are sd(psi) / sqrt(n) with psi the estimator's influence function:
psi_i = w_i r_i - V (IPS), w_i (r_i - V) / mean(w) (SNIPS, which corrects for the
normalisation) and the DR summand minus V (DR). The direct method's plug-in influence
function ignores the error of the fitted model (its intervals cover badly, as obp's do);
with propensities available, DM uses the efficient (DR) influence function, which
accounts for that error when the model is well specified.

No estimate is NaN or infinite: weights that overflow (a propensity such as 5e-324) and
estimates or standard errors that are not finite numbers raise a FairdecideError, and the
effective sample size is computed on the weights scaled by their maximum, so the
poor-overlap warning fires however large the weights.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from fairdecide._common.deprecation import warn_deprecated
from fairdecide._common.validation import as_code_array, as_float_array, as_real
from fairdecide.evaluation._weights import (
    _effective_sample_size,
    _robust_std,
    check_weights,
)
from fairdecide.exceptions import FairdecideError

__all__ = [
    "DirectMethod",
    "DoublyRobust",
    "FullInformation",
    "InverseProbability",
    "OffPolicyInputs",
    "OnPolicy",
    "SelfNormalized",
    "ValueEstimate",
]

POOR_OVERLAP_ESS = 0.1  # warn when the effective sample size is below this share of n


@dataclass(frozen=True)
class OffPolicyInputs:
    """Per-individual inputs of the estimators (validated arrays).

    Attributes
    ----------
    reward : ndarray of shape (n,)
        r_i = U(a_i, y_i).
    action : ndarray of int, shape (n,)
    target : ndarray of shape (n, n_actions)
        The candidate policy's action probabilities pi(. | x_i).
    propensity : ndarray of shape (n,) or None
        pi_0(a_i | x_i), the probability the logging policy gave the logged action.
    q : ndarray of shape (n, n_actions) or None
        Cross-fitted expected utility of each action, from the outcome model.
    weight : ndarray of shape (n,) or None
        Frequency weights: entry i stands for ``weight[i]`` identical rows (the atoms of
        :class:`~fairdecide.LoggedCounts`). Every mean, variance and effective sample
        size is then weighted, so the estimate equals the one on the expanded rows.
    """

    reward: np.ndarray
    action: np.ndarray
    target: np.ndarray
    propensity: np.ndarray | None = None
    q: np.ndarray | None = None
    weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        reward = as_float_array(self.reward, "reward", ndim=1)
        n = len(reward)
        if n == 0:
            raise FairdecideError("reward is empty: no logged rows to evaluate on")
        target = as_float_array(self.target, "target", ndim=2)
        if target.shape[0] != n:
            raise FairdecideError(
                f"target must have one row per reward ({n}), got shape {target.shape}")
        if np.any(target < 0) or np.any(target > 1 + 1e-9):
            raise FairdecideError(
                "target must hold action probabilities in [0, 1], got values in "
                f"[{target.min():.3g}, {target.max():.3g}]")
        action = as_code_array(self.action, "action", target.shape[1], "action")
        if len(action) != n:
            raise FairdecideError(
                f"action must have one entry per reward ({n}), got {len(action)}")
        values = {"reward": reward, "action": action, "target": target}
        if self.propensity is not None:
            p = as_float_array(self.propensity, "propensity", ndim=1)
            if p.shape != (n,):
                raise FairdecideError(f"propensity must have shape ({n},), got {p.shape}")
            if np.any(p <= 0) or np.any(p > 1):
                bad = int(np.argmax((p <= 0) | (p > 1)))
                raise FairdecideError(
                    f"propensity must lie in (0, 1]; row {bad} has {p[bad]!r}. A zero "
                    "propensity means the logged action could not have been taken: check "
                    "the logging policy, or drop those rows")
            values["propensity"] = p
        if self.q is not None:
            q = as_float_array(self.q, "q", ndim=2)
            if q.shape != target.shape:
                raise FairdecideError(
                    f"outcome model values q must have shape {target.shape}, got {q.shape}")
            values["q"] = q
        if self.weight is not None:
            c = as_float_array(self.weight, "weight", ndim=1)
            if c.shape != (n,) or np.any(c < 0) or c.sum() <= 0:
                raise FairdecideError(
                    f"weight must hold {n} non-negative frequency weights with a positive "
                    "sum")
            values["weight"] = c
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def n(self) -> int:
        """Number of entries (rows, or atoms when weighted)."""
        return len(self.reward)

    @property
    def n_rows(self) -> int:
        """Number of rows the entries stand for."""
        return self.n if self.weight is None else round(float(self.weight.sum()))

    def mean(self, v: np.ndarray) -> float:
        """The mean over rows of a per-entry value (weighted by the frequencies)."""
        return v.mean() if self.weight is None else (self.weight @ v) / self.weight.sum()

    def weights(self, clip: float | None = None) -> np.ndarray:
        """Importance weights pi(a_i | x_i) / p_i, clipped at ``clip`` if given."""
        if self.propensity is None:
            raise FairdecideError(
                "this estimator needs logging propensities: pass them, or estimate the "
                "logging policy (logging_model=...)")
        with np.errstate(over="ignore", divide="ignore"):
            w = self.target[np.arange(self.n), self.action] / self.propensity
        check_weights(w, self.propensity)
        return w if clip is None else np.minimum(w, clip)

    def model_value(self) -> np.ndarray:
        """sum_a pi(a | x_i) q(x_i, a) per row."""
        if self.q is None:
            raise FairdecideError("this estimator needs an outcome model (q)")
        return np.einsum("na,na->n", self.target, self.q)


@dataclass(frozen=True)
class ValueEstimate:
    """An estimated policy value with its uncertainty.

    Attributes
    ----------
    value : float
    std_error : float
    method : str
        How the value was estimated (``"ips"``, ``"on-policy"``, ...; the name of the
        ``method=`` of :func:`~fairdecide.evaluation.evaluate_policy`).
    n : int
    ess : float or None
        Effective sample size of the importance weights, (sum w)^2 / sum w^2.
    max_weight : float or None
    influence : ndarray of shape (n,)
        The influence-function values psi_i (mean zero), for combining estimates.
    draws : ndarray, optional
        Bootstrap replicates or posterior draws of the value; when present the interval
        is their percentile (credible) interval instead of the normal one.
    interval : {"normal", "bootstrap", "posterior"}
    """

    value: float
    std_error: float
    method: str
    n: int
    ess: float | None = None
    max_weight: float | None = None
    influence: np.ndarray = field(default=None, repr=False)
    draws: np.ndarray | None = field(default=None, repr=False)
    interval: str = "normal"

    @property
    def estimator(self) -> str:
        """Deprecated name of :attr:`method`."""
        warn_deprecated("ValueEstimate.estimator", "ValueEstimate.method", stacklevel=3)
        return self.method

    def confidence_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The interval at ``level``: normal (value +- z * std_error), or the percentile
        interval of the bootstrap replicates / posterior draws.

        Examples
        --------
        >>> ValueEstimate(0.5, 0.01, "ips", 100).confidence_interval(0.95)
        (0.4804..., 0.5195...)
        """
        level = as_real(level, "level", 0, 1, low_open=True, high_open=True)
        if self.draws is not None:
            lo, hi = np.quantile(self.draws, [(1 - level) / 2, (1 + level) / 2])
            return float(lo), float(hi)
        z = float(stats.norm.ppf(0.5 + level / 2))
        return (self.value - z * self.std_error, self.value + z * self.std_error)


def _check_clip(clip: float | None) -> None:
    if clip is not None:
        # a weight pi/p of an action the logging policy took no more often than the
        # candidate is >= 1 somewhere; clipping below 1 shrinks every weight, a bias
        # with no variance to buy
        as_real(clip, "clip (a cap on importance weights, >= 1)", low=1)


def _finish(name: str, summand: np.ndarray, value: float, psi: np.ndarray,
            w: np.ndarray | None, c: np.ndarray | None = None) -> ValueEstimate:
    n = len(summand) if c is None else round(float(c.sum()))
    if n < 2:
        raise FairdecideError(
            f"{name}: one logged row gives no standard error; at least 2 rows are needed")
    with np.errstate(over="ignore", invalid="ignore"):
        # the influence values are reported centred
        psi = psi - (psi.mean() if c is None else (c @ psi) / c.sum())
    se = float(_robust_std(psi, c) / np.sqrt(n))
    ess = max_w = None
    if w is not None:
        ess = _effective_sample_size(w, c)
        max_w = float(w[c > 0].max()) if c is not None else float(w.max())
    if not (np.isfinite(value) and np.isfinite(se)):
        detail = (f" (importance weights up to {max_w:.3g}: propensities far below the "
                  "evaluated policy's probabilities)" if max_w is not None else "")
        raise FairdecideError(
            f"the {name} estimate is not a finite number (value {float(value)!r}, standard "
            f"error {float(se)!r}){detail}; check the propensities and the rewards, clip "
            "the weights or use a model-based estimator")
    if se == 0 and n > 1:
        warnings.warn(
            f"the {name} estimate {float(value):.4g} has standard error 0: every row "
            "contributes the same value (no reward other than one value, e.g. no click "
            f"in {n} rows), so its normal interval has zero width and says nothing about "
            "the uncertainty. Read it as 'no information beyond these rows'; a "
            "model-based or Bayesian estimate, or more rows, gives an interval",
            stacklevel=3)
    if w is not None:
        if not ess >= POOR_OVERLAP_ESS * n:
            warnings.warn(
                f"poor overlap between the logging and evaluated policies: effective "
                f"sample size {ess:.0f} of {n} (max weight {max_w:.3g}); the {name} "
                "estimate is unreliable. Consider clipping, or the doubly robust estimator",
                stacklevel=3,
            )
    return ValueEstimate(float(value), se, name, n, ess, max_w, psi)


def _weighted_influence(inp: OffPolicyInputs, w: np.ndarray, v: float,
                        known: np.ndarray) -> np.ndarray:
    """The influence function of a weighted estimate: ``known`` (propensities known)
    or, when the inputs carry cell-mean rewards q because the propensities are the
    saturated per-cell frequencies of the same rows, the efficient influence function
    sum_a pi(a | x) q(x, a) + w (r - q(x, a_i)) - V (Hirano, Imbens and Ridder, 2003:
    weighting by estimated saturated propensities is efficient, and its variance is the
    efficient one, below that of weighting by the true propensities)."""
    if inp.q is None:
        return known
    return inp.model_value() + w * (inp.reward - inp.q[np.arange(inp.n), inp.action]) - v


@dataclass(frozen=True)
class InverseProbability:
    """Inverse propensity scoring, V = mean_i w_i r_i (optionally clipped weights).

    Parameters
    ----------
    clip : float, optional
        Clip weights at this value (bias for variance).
    """

    clip: float | None = None

    def __post_init__(self) -> None:
        _check_clip(self.clip)

    @property
    def name(self) -> str:
        return "ips" if self.clip is None else f"ips(clip={self.clip:g})"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        w = inp.weights(self.clip)
        with np.errstate(over="ignore", invalid="ignore"):  # _finish checks the result
            s = w * inp.reward
            v = inp.mean(s)
            psi = _weighted_influence(inp, w, v, s - v)
        return _finish(self.name, s, v, psi, w, inp.weight)


@dataclass(frozen=True)
class SelfNormalized:
    """Self-normalised inverse propensity scoring, V = sum w r / sum w."""

    clip: float | None = None

    def __post_init__(self) -> None:
        _check_clip(self.clip)

    @property
    def name(self) -> str:
        return "snips" if self.clip is None else f"snips(clip={self.clip:g})"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        w = inp.weights(self.clip)
        if w.sum() <= 0:
            raise FairdecideError(
                "the evaluated policy gives probability zero to every logged action; "
                "self-normalisation is undefined")
        u = w / w.max()  # scale-free: huge weights cannot overflow the sums
        v = float(inp.mean(u * inp.reward) / inp.mean(u))
        psi = _weighted_influence(inp, w, v, u * (inp.reward - v) / inp.mean(u))
        return _finish(self.name, w * inp.reward, v, psi, w, inp.weight)


@dataclass(frozen=True)
class DirectMethod:
    """Model-based estimate, V = mean_i sum_a pi(a | x_i) q(x_i, a)."""

    @property
    def name(self) -> str:
        return "dm"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        m = inp.model_value()
        v = inp.mean(m)
        w = None
        if inp.propensity is not None:
            # Efficient influence function: accounts for the outcome model's error; its
            # weights can make the standard error huge, so the overlap warning applies.
            w = inp.weights()
            psi = m - v + w * (inp.reward - inp.q[np.arange(inp.n), inp.action])
        else:
            psi = m - v
        return _finish(self.name, m, v, psi, w, inp.weight)


@dataclass(frozen=True)
class DoublyRobust:
    """Doubly robust estimate: the direct method corrected by weighted residuals.

    Consistent if either the outcome model or the propensities are right; with
    cross-fitted outcome models its intervals are valid under mild rate conditions.
    """

    clip: float | None = None

    def __post_init__(self) -> None:
        _check_clip(self.clip)

    @property
    def name(self) -> str:
        return "dr" if self.clip is None else f"dr(clip={self.clip:g})"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        w = inp.weights(self.clip)
        with np.errstate(over="ignore", invalid="ignore"):  # _finish checks the result
            s = inp.model_value() + w * (inp.reward - inp.q[np.arange(inp.n), inp.action])
            v = inp.mean(s)
        return _finish(self.name, s, v, s - v, w, inp.weight)


@dataclass(frozen=True)
class FullInformation:
    """For prediction problems, where the outcome is observed whatever the action: the
    candidate's utility is known for every row, V = mean_i sum_a pi(a | x_i) U(a, y_i).
    No propensities or models; the influence function is the summand minus V."""

    @property
    def name(self) -> str:
        return "full information"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        if inp.q is None:
            raise FairdecideError("full information needs the utilities of every action")
        m = inp.model_value()
        v = inp.mean(m)
        return _finish(self.name, m, v, m - v, None, inp.weight)


@dataclass(frozen=True)
class OnPolicy:
    """The value of the logged decisions themselves: what was actually done, V = mean_i
    r_i = mean_i U(a_i, y_i), with the influence function r_i - V (the usual interval of
    a mean). No propensities, no model and no counterfactual: every reward was
    observed. It is what ``evaluate_policy(problem, data, "logged")`` computes, and what
    the audit report (``fairdecide audit``) gives for "the logged decisions"."""

    @property
    def name(self) -> str:
        return "on-policy"

    def estimate(self, inp: OffPolicyInputs) -> ValueEstimate:
        v = inp.mean(inp.reward)
        return _finish(self.name, inp.reward, v, inp.reward - v, None, inp.weight)
