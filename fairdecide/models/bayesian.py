"""A Bayesian multinomial-logistic outcome model of individuals, sampled with pymc.

The model of P(y | a, x), with phi(x) = (x, 1) and K outcomes::

    P(y = k | a, x) = softmax(phi(x) B_a)_k,    B_a[:, 0] = 0,
    every free coefficient ~ Normal(0, prior_scale), independently.

The first outcome's column is fixed at zero (softmax is unchanged by adding a vector to
every column, so the model is otherwise not identified). The posterior is sampled with
NUTS; each draw of the coefficients is one world, so a set of draws is a
:class:`~fairdecide.Belief` that :func:`~fairdecide.optimize_policy` takes like any other
(``aggregate="mean"``: the Bayesian decision; ``"worst"``: maximin over the draws).

pymc is imported only when a model is fitted (``pip install "fairdecide[bayes]"``);
prediction from the stored draws needs only numpy.
"""

from __future__ import annotations

import logging
import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.deprecation import warn_deprecated
from fairdecide._common.registry import REGISTRY
from fairdecide._common.validation import as_float_array, as_int, as_real, check_random_state
from fairdecide.exceptions import FairdecideError
from fairdecide.models.individuals import ENCODINGS, check_action_counts, check_training_rows
from fairdecide.problem import DecisionProblem
from fairdecide.worlds.sample import SampleWorld

__all__ = ["BayesianOutcomeModel"]

RHAT_LIMIT = 1.01  # Vehtari et al. (2021), "Rank-normalization, folding, and localization"
ESS_PER_CHAIN = 100  # the same paper: bulk and tail ESS of at least 100 per chain


class BayesianOutcomeModel:
    """P(y | a, x) of individuals: Bayesian multinomial logistic regression (pymc, NUTS).

    With phi(x) = (x, 1), P(y = k | a, x) = softmax(phi(x) B_a)_k, where B_a has one
    column per outcome, the first fixed at zero, and every free coefficient has an
    independent Normal(0, ``prior_scale``) prior. Prediction problems fit one B on all
    rows. In interventions the action enters by ``action_encoding``:

    - ``"separate"``: one B_a per action, each informed only by the rows that took it
      (one pymc model; its posterior factorises over actions);
    - ``"feature"``: one B on (x, one-hot a): logits = x B_x + b_a, so the actions shift
      the logits and share the slopes. The one-hot columns are the per-action intercepts;
      a constant column beside them would be collinear with them, a direction only the
      prior identifies, which slows NUTS, so it is left out (same model family).

    The prior is on the coefficients of x as given: standardise the features first, so
    that ``prior_scale`` means the same for every feature and the sampler mixes well.

    Parameters
    ----------
    prior_scale : float, default=2.5
        Standard deviation of the Normal prior of every free coefficient.
    action_encoding : {"separate", "feature"}, default="separate"
    draws, tune : int, default=500
        NUTS draws kept, and tuning steps discarded, per chain.
    chains : int, default=2
        Chains, run one after another (``cores=1``).

    Attributes
    ----------
    coef_draws_ : ndarray
        The posterior draws of the coefficients, chains pooled, first outcome column 0:
        shape (S, d + 1, K) in prediction problems, (S, n_actions, d + 1, K) with
        ``"separate"`` and (S, d + n_actions, K) with ``"feature"`` (rows: the features,
        then the constant or the one-hot actions). S = chains * draws.
    rhat_max_ : float
        The largest rank-normalised split r-hat over the coefficients (want <= 1.01;
        with one chain, its two halves are compared).
    ess_min_ : float
        The smallest bulk or tail effective sample size over the coefficients.
    n_divergent_ : int
        Divergent NUTS transitions after tuning (want 0).
    idata_ : arviz.InferenceData
        The whole sample, for further diagnostics.

    A UserWarning is raised by :meth:`fit` when r-hat exceeds 1.01, an effective sample
    size falls below 100 per chain, or a transition diverged.

    Examples
    --------
    >>> import numpy as np
    >>> from fairdecide import DecisionProblem, Independence, optimize_policy
    >>> from fairdecide.models import BayesianOutcomeModel
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2)); z = rng.randint(2, size=200)
    >>> y = (rng.random_sample(200) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> problem = DecisionProblem.classification(2)
    >>> model = BayesianOutcomeModel(draws=300, tune=300, chains=2)
    >>> model = model.fit(X, z, y, problem, random_state=0)
    >>> model.coef_draws_.shape  # 2 x 300 draws of (x1, x2, 1) x 2 outcomes
    (600, 3, 2)
    >>> from fairdecide import Belief
    >>> belief = Belief.from_posterior(model, 8, random_state=0)
    >>> belief
    Belief(Bayes (8 draws), 8 scenarios, aggregate='mean')
    >>> optimize_policy(problem, belief, Independence(), epsilon=0.05).status
    'optimal'
    """

    def __init__(self, prior_scale: float = 2.5, action_encoding: str = "separate",
                 draws: int = 500, tune: int = 500, chains: int = 2) -> None:
        if action_encoding not in ENCODINGS:
            raise FairdecideError(
                f"action_encoding must be one of {ENCODINGS}, got {action_encoding!r}")
        self.prior_scale = as_real(prior_scale, "prior_scale", low=0, low_open=True)
        self.action_encoding = action_encoding
        self.draws = as_int(draws, "draws", minimum=1)
        self.tune = as_int(tune, "tune", minimum=0)
        self.chains = as_int(chains, "chains", minimum=1)

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, z: Any, y: Any, problem: DecisionProblem, a: Any = None,
            random_state: Any = None) -> BayesianOutcomeModel:
        """Sample the posterior given the training individuals; returns self.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Features (finite).
        z : array-like of shape (n,)
            Group labels (kept for the worlds; the model does not read them unless
            they are also among the features).
        y : array-like of shape (n,)
            Outcome labels of ``problem``; at least two distinct ones.
        problem : DecisionProblem
        a : array-like of shape (n,), optional
            Logged action labels; needed in interventions, each action at least twice.
        random_state : None, int or numpy RandomState
            Seeds NUTS.

        Returns
        -------
        self : BayesianOutcomeModel
            With the draws and diagnostics of the Attributes section; warns when they
            show the sample is unreliable.
        """
        X, z_codes, labels, y_codes, a_codes = check_training_rows(X, z, y, problem, a)
        if np.unique(y_codes).size < 2:
            raise FairdecideError(
                f"y has one outcome ({problem.outcome_labels[y_codes[0]]!r}) in all "
                f"{len(y_codes)} rows: a logistic model cannot learn how the outcome "
                "varies from it; the rows need at least two distinct outcomes")
        if a_codes is not None:
            check_action_counts(a_codes, problem)
        seed = int(check_random_state(random_state).randint(2**31 - 1))
        design = self._design(X, a_codes, problem)
        pm = _import_pymc()
        idata = _sample(pm, design, y_codes, problem.n_outcomes, self.prior_scale,
                        self.draws, self.tune, self.chains, seed)
        beta = np.asarray(idata.posterior["beta"].values, dtype=float)
        beta = beta.reshape(-1, *beta.shape[2:])  # (S, q, K - 1)
        coef = np.concatenate([np.zeros((*beta.shape[:2], 1)), beta], axis=2)
        if a_codes is not None and self.action_encoding == "separate":
            coef = coef.reshape(len(coef), problem.n_actions, -1, problem.n_outcomes)
        self.problem_, self.X_, self.z_, self.group_labels_ = problem, X, z_codes, labels
        self.y_, self.a_, self.coef_draws_, self.idata_ = y_codes, a_codes, coef, idata
        self.rhat_max_, self.ess_min_, self.n_divergent_ = _diagnose(idata, self.chains)
        return self

    def _design(self, X: np.ndarray, a: np.ndarray | None, problem: DecisionProblem
                ) -> np.ndarray:
        """The model's inputs, one row per individual, so that logits = design @ beta:
        (x, 1); with "separate" (x, 1) in the block of the row's action, zeros elsewhere;
        with "feature" (x, one-hot a)."""
        n, n_a = len(X), problem.n_actions
        phi = np.hstack([X, np.ones((n, 1))])
        if a is None:
            return phi
        if self.action_encoding == "feature":
            return np.hstack([X, np.eye(n_a)[a]])
        out = np.zeros((n, n_a, phi.shape[1]))
        out[np.arange(n), a] = phi
        return out.reshape(n, -1)

    # ------------------------------------------------------------------ prediction
    def _weights(self, coef: np.ndarray) -> np.ndarray:
        """Per-action coefficients of phi(x) = (x, 1) for draws ``coef``: shape
        (S, n_actions, d + 1, K), or (S, 1, d + 1, K) in prediction problems."""
        if self.a_ is None:
            return coef[:, None]
        if self.action_encoding == "separate":
            return coef
        d = self.X_.shape[1]
        slopes = np.broadcast_to(coef[:, None, :d], (len(coef), self.problem_.n_actions,
                                                      d, coef.shape[-1]))
        return np.concatenate([slopes, coef[:, d:, None, :]], axis=2)

    def _proba(self, X: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """P(y | a, x) of each row of X under each draw: (S, n, n_actions, K), or
        (S, n, K) in prediction problems."""
        phi = np.hstack([X, np.ones((len(X), 1))])
        logits = np.einsum("nd,sadk->snak", phi, self._weights(self.coef_draws_[draws]))
        logits -= logits.max(axis=-1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=-1, keepdims=True)
        return p[:, :, 0] if self.a_ is None else p

    def _base_world(self, X: Any, z: Any) -> SampleWorld:
        """The individuals the worlds describe (outcomes to be replaced): the training
        ones, or new features ``X`` with group labels ``z``."""
        if not hasattr(self, "coef_draws_"):
            raise FairdecideError("call fit(X, z, y, problem, a) first")
        n_y = self.problem_.n_outcomes

        def uniform(n: int) -> np.ndarray:
            shape = (n, n_y) if self.a_ is None else (n, self.problem_.n_actions, n_y)
            return np.full(shape, 1.0 / n_y)

        if X is None:
            if z is not None:
                raise FairdecideError("z was given without X: pass the new individuals' "
                                      "features X too, or neither")
            return SampleWorld.from_codes(self.X_, self.z_, uniform(len(self.X_)),
                                          group_labels=self.group_labels_)
        else:
            X = as_float_array(X, "X", ndim=(1, 2))
            X = X[:, None] if X.ndim == 1 else X
            if X.shape[1] != self.X_.shape[1]:
                raise FairdecideError(
                    f"X has {X.shape[1]} features but the model was fitted on "
                    f"{self.X_.shape[1]}")
            if z is None:
                raise FairdecideError("z (the groups of the new individuals) is needed "
                                      "with X")
        return SampleWorld(X, z, uniform(len(X)), group_labels=self.group_labels_)

    def sample(self, n: int, random_state: Any = None, X: Any = None, z: Any = None
               ) -> list[SampleWorld]:
        """``n`` posterior draws as worlds: each a :class:`~fairdecide.SampleWorld` of
        the training individuals (or of new ones, features ``X`` and group labels ``z``)
        with outcome probabilities P(y | a, x) = softmax(phi(x) B_a^(s)) of one draw s,
        picked from the pooled chains without replacement (``n`` at most chains *
        draws). :meth:`Belief.from_posterior <fairdecide.Belief.from_posterior>` makes
        them the scenarios of a belief."""
        base = self._base_world(X, z)
        n_draws = len(self.coef_draws_)
        n = as_int(n, "n_scenarios", minimum=1, maximum=n_draws)
        picked = np.sort(check_random_state(random_state).choice(n_draws, n,
                                                                 replace=False))
        return [base.with_outcomes(p) for p in self._proba(base.X, picked)]

    def belief(self, n_scenarios: int = N_SCENARIOS, X: Any = None, z: Any = None,
               aggregate: str = "mean", random_state: Any = None) -> Any:
        """Deprecated: ``Belief.from_posterior(model, n_scenarios, random_state,
        aggregate, X=X, z=z)``, the one door to a posterior's belief (this one is
        removed in the next release)."""
        warn_deprecated("BayesianOutcomeModel.belief(...)", "Belief.from_posterior(model, "
                        "n_scenarios, random_state, aggregate, X=X, z=z)")
        belief = REGISTRY["Belief"]  # registered by the uncertainty package, above us
        return belief.from_posterior(self, n_scenarios, random_state, aggregate, X=X, z=z)

    def posterior_mean_world(self, X: Any = None, z: Any = None) -> SampleWorld:
        """The plug-in world of the posterior mean of P(y | a, x) over all S draws.

        For the training individuals or new ones (``X``, ``z``)::

            p_y(i) = (1 / S) sum_s softmax(phi(x_i) B_a^(s))

        Returns
        -------
        SampleWorld
        """
        base = self._base_world(X, z)
        n_draws = len(self.coef_draws_)
        # average in chunks of draws: S x n x A x K at once can be large
        per_draw = max(1, base.p_y.size)
        step = max(1, min(n_draws, 2_000_000 // per_draw))
        total = np.zeros(base.p_y.shape)
        for start in range(0, n_draws, step):
            total += self._proba(base.X, np.arange(start, min(start + step, n_draws))
                                 ).sum(axis=0)
        return base.with_outcomes(total / n_draws)


# ---------------------------------------------------------------------- pymc
def _import_pymc() -> Any:
    try:
        import pymc
    except ImportError as exc:
        raise ImportError(
            'BayesianOutcomeModel samples its posterior with pymc, which is not installed '
            f'({exc}); install it with: pip install "fairdecide[bayes]"') from None
    return pymc


@contextmanager
def _quiet(name: str):
    """Silence a library's INFO log lines (pymc announces every sampling run)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def _sample(pm: Any, design: np.ndarray, y: np.ndarray, n_outcomes: int,
            prior_scale: float, draws: int, tune: int, chains: int, seed: int) -> Any:
    """NUTS draws of beta (q, K - 1), the free coefficients: logits = design @ beta with
    a zero column first, log-likelihood sum_i log softmax(logits_i)[y_i]."""
    import pytensor.tensor as pt

    onehot = np.eye(n_outcomes)[y]
    with pm.Model():
        beta = pm.Normal("beta", 0.0, prior_scale, shape=(design.shape[1], n_outcomes - 1))
        eta = pt.dot(design, beta)
        logits = pt.concatenate([pt.zeros((design.shape[0], 1)), eta], axis=1)
        pm.Potential("loglik", pt.sum(onehot * pt.special.log_softmax(logits, axis=1)))
        with _quiet("pymc"):
            return pm.sample(draws=draws, tune=tune, chains=chains, cores=1,
                             random_seed=seed, progressbar=False,
                             compute_convergence_checks=False)


def _diagnose(idata: Any, chains: int) -> tuple[float, float, int]:
    """Largest r-hat, smallest bulk/tail ESS and number of divergences of beta; warns
    when any is poor."""
    import arviz as az

    beta = np.asarray(idata.posterior["beta"].values)  # (chains, draws, q, K - 1)
    halves = beta
    if len(beta) == 1 and beta.shape[1] >= 4:  # one chain: compare its two halves
        half = beta.shape[1] // 2
        halves = np.stack([beta[0, :half], beta[0, half:2 * half]])
    rhat = float(az.rhat(az.convert_to_dataset({"beta": halves}))["beta"].max())
    ess = min(float(az.ess(az.convert_to_dataset({"beta": beta}), method=m)["beta"].min())
              for m in ("bulk", "tail"))
    divergent = int(idata.sample_stats["diverging"].sum())
    problems = []
    if not rhat <= RHAT_LIMIT:  # NaN (a constant chain) also fails
        problems.append(f"max r-hat {rhat:.3f} > {RHAT_LIMIT}")
    if not ess >= ESS_PER_CHAIN * chains:
        problems.append(f"min effective sample size {ess:.0f} < {ESS_PER_CHAIN} per chain "
                        f"({ESS_PER_CHAIN * chains})")
    if divergent:
        problems.append(f"{divergent} divergent transitions")
    if problems:
        warnings.warn(
            "the posterior sample may be unreliable: " + "; ".join(problems) + ". Raise "
            "draws and tune (or chains), or standardise the features", stacklevel=3)
    return rhat, ess, divergent
