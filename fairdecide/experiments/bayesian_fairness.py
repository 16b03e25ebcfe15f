"""The COMPAS experiment of "Bayesian Fairness" (Dimitrakakis, Liu, Parkes, Radanovic,
AAAI 2019) and "Approximate Inference for the Bayesian Fairness Framework"
(Athanasopoulos et al., EWAF 2023), solved exactly.

Setting: COMPAS two-year data; x = the observed combination of age category, charge
degree and juvenile felony, juvenile misdemeanour, juvenile other and prior counts (each
clipped at 2); z = sex x race (12 groups); y = two_year_recid; two actions (predict
reoffending or not); the policy sees x only (group-blind); utility = accuracy; fairness =
balance (separation) with the P(z | y)-weighted L1 measure. The model is the papers'
P(x) P(y | x) P(z | y, x) with Dirichlet(0.5) priors.

The trade-off is the library's everywhere: ``lam`` in [0, 1) weighs the mixture
(1 - lam) U - lam F, as in :func:`~fairdecide.optimize_policy`. The papers write the
objective T = U - lambda F (lambda >= 0); it is the mixture divided by 1 - lam, with
lambda = lam / (1 - lam) (:func:`papers_lambda`), so it orders policies alike. The
results report T (the papers' number, comparable with :data:`PUBLISHED`) and both
weights: ``lam`` and the papers' ``lambda``; the papers' lambda = 0.5 and 1 are
lam = 1/3 and 1/2 (:func:`lam_of`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairdecide._common.defaults import N_SCENARIOS
from fairdecide._common.tables import result_table
from fairdecide._common.validation import as_real, check_random_state
from fairdecide.criteria import Separation
from fairdecide.criteria.values import scenario_values
from fairdecide.data.logged import LoggedData
from fairdecide.datasets import load_compas, sample_logged_data
from fairdecide.exceptions import FairdecideError
from fairdecide.experiments.scenario_sgd import ScenarioSGD
from fairdecide.models import DirichletPosterior
from fairdecide.optimize import optimize_policy
from fairdecide.policies import TabularPolicy
from fairdecide.problem import DecisionProblem
from fairdecide.uncertainty.beliefs import Belief
from fairdecide.worlds.table import marginal_utility, scenario_marginals
from fairdecide.worlds.world import TabularWorld

__all__ = [
    "PUBLISHED",
    "balance",
    "compas_data",
    "fit_policies",
    "holdout_experiment",
    "lam_of",
    "objective_value",
    "papers_lambda",
    "posterior_values",
    "scenario_arrays",
    "semi_synthetic_experiment",
]

FEATURES = ["age_cat", "c_charge_degree", "juv_fel_count", "juv_misd_count",
            "juv_other_count", "priors_count"]
PRIOR = 0.5
FACTORIZATION = "papers"
# Values of T reported at 6000 training points (gradient methods), by the papers' lambda.
PUBLISHED = {1.0: {"Bayes": 0.516, "bootstrap": 0.510, "plug-in": 0.465},
             0.5: {"bootstrap": 0.531, "plug-in": 0.524},
             0.0: {"all methods": 0.641}}


def papers_lambda(lam: float) -> float:
    """The papers' weight lambda of T = U - lambda F for the library's mixture weight
    ``lam`` of (1 - lam) U - lam F: lambda = lam / (1 - lam) (lam < 1).

    Examples
    --------
    >>> papers_lambda(0.5), papers_lambda(0.0)
    (1.0, 0.0)
    """
    lam = as_real(lam, "lam (the mixture weight; lam < 1 has a finite papers' lambda)",
                  0.0, 1.0, high_open=True)
    return round(lam / (1.0 - lam), 12)


def lam_of(papers_lambda: float) -> float:
    """The library's mixture weight lam = lambda / (1 + lambda) of the papers' lambda.

    Examples
    --------
    >>> lam_of(1.0), round(lam_of(0.5), 4)
    (0.5, 0.3333)
    """
    lam = as_real(papers_lambda, "papers_lambda", low=0.0)
    return lam / (1.0 + lam)


def balance() -> Separation:
    """Balance: separation with the P(z | y)-weighted L1 measure."""
    return Separation(weighting="group", name="balance")


def compas_data(data_home: Any = None, *, download: bool = True
                ) -> tuple[LoggedData, DecisionProblem]:
    """The 7214 COMPAS rows as LoggedData (cells over all rows) and the accuracy problem."""
    df = load_compas(data_home, download=download)
    for col in FEATURES[2:]:
        df[col] = df[col].clip(upper=2)
    df["group"] = df["sex"] + " / " + df["race"]
    data = LoggedData.from_frame(df, features=FEATURES, group="group",
                                 outcome="two_year_recid")
    return data, DecisionProblem.classification(2, labels=[0, 1])


def objective_value(policy: TabularPolicy, world: TabularWorld, problem: DecisionProblem,
                    lam: float) -> tuple[float, float, float]:
    """(T, U, F) of ``policy`` in ``world``: the papers' T = U - lambda F, lambda =
    :func:`papers_lambda` (lam), with the balance measure."""
    U, F = scenario_values(problem, [world], policy, [balance()])
    return float(U[0] - papers_lambda(lam) * F[0, 0]), float(U[0]), float(F[0, 0])


def scenario_arrays(worlds: Any) -> tuple[np.ndarray, np.ndarray]:
    """P(x, z) of shape (K, n_x, n_z) and P(y | x, z) of shape (K, n_x, n_z, n_y) of K
    tabular worlds (e.g. ``posterior.sample(K)``), for :func:`posterior_values`."""
    worlds = list(worlds)
    if not worlds or not all(isinstance(w, TabularWorld) for w in worlds):
        raise FairdecideError("worlds must be a non-empty sequence of TabularWorld")
    return np.stack([w.p_xz for w in worlds]), np.stack([w.p_y for w in worlds])


def posterior_values(policy: TabularPolicy, scenarios: tuple[np.ndarray, np.ndarray],
                     problem: DecisionProblem, lam: float) -> np.ndarray:
    """T_k = U_k - lambda F_k of ``policy`` in every scenario, F the balance measure and
    lambda = :func:`papers_lambda` (lam).

    The same numbers as :func:`objective_value` on each world, from the group marginals
    M_k[z, a, y] = sum_x P_k(x, z) pi(a | x, z) P_k(y | x, z) computed at once (fast
    for the thousands of held-out draws that estimate a policy's posterior value).

    Parameters
    ----------
    policy : TabularPolicy
    scenarios : (ndarray (K, n_x, n_z), ndarray (K, n_x, n_z, n_y))
        From :func:`scenario_arrays`.
    problem : DecisionProblem
    lam : float
        The mixture weight, in [0, 1).

    Returns
    -------
    ndarray of shape (K,)
    """
    p_xz, p_y = scenarios
    table = getattr(policy, "table", None)
    if table is None or table.shape[:2] != p_xz.shape[1:]:
        raise FairdecideError(
            f"policy must be a TabularPolicy over the scenarios' {p_xz.shape[1:]} cells "
            f"and groups, got {type(policy).__name__}")
    M = scenario_marginals(p_xz, table, p_y)
    U = marginal_utility(M, problem.utility)
    crit = balance()
    F = np.array([crit.deviation_from_marginal(m, problem) for m in M])
    T = U - papers_lambda(lam) * F
    if not np.all(np.isfinite(T)):
        raise FairdecideError("a scenario's value is not finite: check its probabilities")
    return T


@dataclass(frozen=True)
class Fitted:
    policy: TabularPolicy
    seconds: float
    belief: Belief | None = None
    solver: str = ""
    iterations: Any = None


def fit_policies(
    train: LoggedData, problem: DecisionProblem, lam: float, *, n_scenarios: int = N_SCENARIOS,
    delta: float = 0.1, random_state: Any = None, methods: tuple[str, ...] = (
        "plug-in", "Bayes", "bootstrap", "maximin", "constant"),
) -> dict[str, Fitted]:
    """The exact optimal group-blind policy of each method for (1 - lam) U - lam F."""
    rng = check_random_state(random_state)
    # Small training samples can miss small groups: the prior speaks for them.
    post = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(train, problem)
    out: dict[str, Fitted] = {}

    def solve(belief: Belief) -> Fitted:
        t0 = time.perf_counter()
        res = optimize_policy(problem, belief, balance(), lam=lam, group_blind=True)
        return Fitted(res.policy, time.perf_counter() - t0, belief, res.solver,
                      res.stats.get("solver_iterations", res.stats.get("iterations")))

    for method in methods:
        seed = rng.randint(2**31 - 1)
        if method == "plug-in":
            out[method] = solve(Belief.plug_in(post.mean_world()))
        elif method == "Bayes":
            out[method] = solve(Belief.from_posterior(post, n_scenarios, random_state=seed))
        elif method == "bootstrap":
            out[method] = solve(Belief.from_bootstrap(
                train, problem, n_scenarios, smoothing=PRIOR, factorization=FACTORIZATION,
                random_state=seed, allow_empty_groups=True))
        elif method == "maximin":
            out[method] = solve(Belief.highest_density_draws(post, delta, n_scenarios,
                                                      random_state=seed))
        elif method == "constant":
            majority = np.bincount(train.outcome_codes(problem), minlength=2).argmax()
            out[method] = Fitted(TabularPolicy.constant(
                train.n_x, train.n_z, np.eye(problem.n_actions)[majority]), 0.0)
        else:
            raise ValueError(f"unknown method {method!r}")
    return out


def _fit_sweep(train: LoggedData, problem: DecisionProblem, lam: float, *, run: int,
               scenarios: tuple[int, ...], runs_by_k: dict, maximin_max: int | None,
               sgd: ScenarioSGD | None, sgd_runs: int | None, random_state: int,
               base: tuple[str, ...]) -> list[tuple[str, int, Fitted]]:
    """(method, K, fit) for the K-free methods ``base`` once, then Bayes and maximin for
    every K (within ``runs_by_k[K]`` runs), then the stochastic gradient."""
    out = []
    for i, K in enumerate(scenarios):
        if run >= runs_by_k.get(K, np.inf):
            continue
        methods = tuple(m for m in (base if i == 0 else ("Bayes", "maximin"))
                        if m != "maximin" or maximin_max is None or K <= maximin_max)
        fitted = fit_policies(train, problem, lam, n_scenarios=K, random_state=random_state,
                              methods=methods)
        out += [(m, {"plug-in": 1, "constant": 0}.get(m, K), f) for m, f in fitted.items()]
    if sgd is not None and (sgd_runs is None or run < sgd_runs):
        post = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(
            train, problem)
        res = sgd.solve(post, problem, balance(), lam, random_state=random_state + 7)
        out.append(("SGD", res.draws, Fitted(res.policy, res.seconds, None, "Adam",
                                             res.steps)))
    return out


def _score(fits: list, world: TabularWorld, held: Any, problem: DecisionProblem,
           lam: float, **keys: Any) -> list[dict]:
    """One row per fit: true T (in ``world``), in-sample and held-out posterior value."""
    rows = []
    for method, K, fit in fits:
        T, U, F = objective_value(fit.policy, world, problem, lam)
        inside = (posterior_values(fit.policy, scenario_arrays(fit.belief.worlds), problem,
                                   lam).mean() if fit.belief is not None else np.nan)
        outside = (posterior_values(fit.policy, held, problem, lam).mean()
                   if held is not None else np.nan)
        rows.append({**keys, "lam": lam, "lambda": papers_lambda(lam), "method": method,
                     "K": K, "T": T,
                     "utility": U, "balance": F, "in-sample": inside, "held-out": outside,
                     "seconds": fit.seconds, "solver": fit.solver,
                     "iterations": fit.iterations})
    return rows


def _sweep_args(scenarios: Any, n_scenarios: int, runs_by_k: Any) -> tuple[tuple, dict]:
    ks = (n_scenarios,) if scenarios is None else tuple(int(k) for k in scenarios)
    if not ks or min(ks) < 1:
        raise FairdecideError(f"scenarios must be positive counts, got {scenarios!r}")
    return ks, dict(runs_by_k or {})


#: The papers' lambda = 0, 0.5 and 1 as the library's mixture weights.
LAMS = (0.0, 1 / 3, 0.5)


def holdout_experiment(data: LoggedData, problem: DecisionProblem, *, lams=LAMS,
                       runs: int = 10, n_train: int = 6000, n_scenarios: int = N_SCENARIOS,
                       seed: int = 0, scenarios: Any = None, held_out: int = 0,
                       runs_by_k: Any = None, maximin_max: int | None = None,
                       sgd: ScenarioSGD | None = None, sgd_runs: int | None = None
                       ) -> pd.DataFrame:
    """Train on the first ``n_train`` rows of a random order, evaluate T on the
    posterior-mean world of the rest; one row per (run, lam, method, K).

    ``lams``: the mixture weights (default: the papers' lambda = 0, 0.5, 1).

    ``scenarios`` (default ``(n_scenarios,)``) lists the K of the Bayes and maximin
    beliefs (maximin only for K <= ``maximin_max``; K only in the first
    ``runs_by_k[K]`` runs). With ``held_out`` = H > 0, every policy's posterior value is
    also the mean T over H posterior draws independent of the fitted ones ("held-out";
    "in-sample" is the mean over the draws a policy was fitted on). ``sgd`` adds the
    stochastic-gradient policy (:class:`ScenarioSGD`) in the first ``sgd_runs`` runs.
    """
    ks, runs_by_k = _sweep_args(scenarios, n_scenarios, runs_by_k)
    rows = []
    for run in range(runs):
        order = np.random.default_rng(seed + run).permutation(data.n)
        train, test = data.subset(order[:n_train]), data.subset(order[n_train:])
        test_world = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(
            test, problem).mean_world()
        held = None
        if held_out:
            post = DirichletPosterior(PRIOR, FACTORIZATION, allow_empty_groups=True).fit(
                train, problem)
            held = scenario_arrays(post.sample(held_out, random_state=10**6 + seed + run))
        for lam in lams:
            fits = _fit_sweep(train, problem, lam, run=run, scenarios=ks,
                              runs_by_k=runs_by_k, maximin_max=maximin_max, sgd=sgd,
                              sgd_runs=sgd_runs,
                              random_state=seed + 1000 * run
                              + int(10 * papers_lambda(lam)),
                              base=("plug-in", "Bayes", "bootstrap", "maximin", "constant"))
            rows += _score(fits, test_world, held, problem, lam, run=run)
    return result_table(rows)


def semi_synthetic_experiment(data: LoggedData, problem: DecisionProblem, *,
                              sizes=(100, 300, 1000, 3000, 6000), lams=LAMS,
                              runs: int = 20, n_scenarios: int = N_SCENARIOS, seed: int = 0,
                              scenarios: Any = None, held_out: int = 0,
                              runs_by_k: Any = None, maximin_max: int | None = None,
                              sgd: ScenarioSGD | None = None, sgd_runs: int | None = None
                              ) -> pd.DataFrame:
    """Truth = posterior-mean world of all rows; train on ``n`` draws from it; evaluate
    exactly on the truth. Methods: plug-in, Bayes, maximin, constant and the oracle
    (and SGD); ``scenarios``, ``held_out``, ``runs_by_k``, ``maximin_max``, ``sgd`` and
    ``sgd_runs`` as in :func:`holdout_experiment`."""
    ks, runs_by_k = _sweep_args(scenarios, n_scenarios, runs_by_k)
    truth = DirichletPosterior(PRIOR, FACTORIZATION).fit(data, problem).mean_world()
    oracle = {lam: optimize_policy(problem, truth, balance(), lam=lam,
                                   group_blind=True).policy for lam in lams}
    rows = []
    for n in sizes:
        for run in range(runs):
            train = sample_logged_data(problem, truth, n,
                                       random_state=seed + 7919 * run + n)
            held = None
            if held_out:
                post = DirichletPosterior(PRIOR, FACTORIZATION,
                                          allow_empty_groups=True).fit(train, problem)
                held = scenario_arrays(post.sample(
                    held_out, random_state=10**6 + seed + 104729 * run + n))
            for lam in lams:
                fits = _fit_sweep(train, problem, lam, run=run, scenarios=ks,
                                  runs_by_k=runs_by_k, maximin_max=maximin_max, sgd=sgd,
                              sgd_runs=sgd_runs,
                                  random_state=seed + run,
                                  base=("plug-in", "Bayes", "maximin", "constant"))
                fits.append(("oracle", 0, Fitted(oracle[lam], 0.0)))
                rows += _score(fits, truth, held, problem, lam, n=n, run=run)
    return result_table(rows)
