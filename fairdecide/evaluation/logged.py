"""The logged decisions themselves as the policy ``"logged"``: what was actually done.

Its value is the on-policy mean of U(a_i, y_i) over the logged rows
(:class:`~fairdecide.evaluation.ope.OnPolicy`): every reward was observed, so no
propensity, model or counterfactual enters. Every door that values the logged decisions
(``evaluate_policy``, ``evaluate_policy_by_group``, ``estimate_deviation``, the audit
report) reads it through this module, so they give one number.

A policy that summarises the logs, the action rates per cell of
``TabularPolicy.from_data``, is another policy: it re-draws each decision at random with
its cell's rates, and loses whatever else the decisions used. :func:`warn_summary` says
so, naming both values, when the two differ.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fairdecide.data.counts import LoggedCounts
from fairdecide.data.logged import BanditData
from fairdecide.evaluation._weights import _robust_std
from fairdecide.evaluation.ope import OffPolicyInputs, OnPolicy, ValueEstimate
from fairdecide.exceptions import FairdecideError
from fairdecide.policies.adapters import as_policy
from fairdecide.problem import DecisionProblem

__all__ = ["LOGGED", "SUMMARY_GAP_SE", "is_logged", "logged_inputs", "warn_summary"]

#: The ``policy`` that names the logged decisions themselves (what was actually done).
LOGGED = "logged"

#: A policy estimated from the logs (``TabularPolicy.from_data``'s cell rates) whose
#: value differs from the logged decisions' by more than this many standard errors of
#: the difference is reported in a warning naming both.
SUMMARY_GAP_SE = 2.0


def is_logged(policy: Any) -> bool:
    """Whether ``policy`` names the logged decisions (the string "logged"); any other
    string is an error naming the one string accepted."""
    if isinstance(policy, str):
        if policy != LOGGED:
            raise FairdecideError(
                f"policy={policy!r}: the only policy given as a string is {LOGGED!r} (the "
                "logged decisions themselves); give a TabularPolicy, a fitted classifier "
                "with predict_proba or a callable otherwise")
        return True
    return False


def logged_inputs(data: Any, problem: DecisionProblem
                  ) -> tuple[OffPolicyInputs, BanditData | LoggedCounts, OnPolicy]:
    """The on-policy inputs of the logged decisions: their rewards U(a_i, y_i) (per atom,
    weighted by its rows, on LoggedCounts), the logged action as the target; the data as
    the rows the inputs stand for, and the estimator."""
    if data.a is None:
        raise FairdecideError(
            "policy='logged' needs the logged actions (a): the data have none")
    if isinstance(data, LoggedCounts):
        a, y, rows, c = (data.action_codes(problem), data.outcome_codes(problem), data,
                         data.weights)
    else:
        rows = data if isinstance(data, BanditData) else BanditData.from_logged(data,
                                                                                problem)
        a, y, c = rows.a, rows.y, None
    if int(a.max()) >= problem.n_actions or int(y.max()) >= problem.n_outcomes:
        raise FairdecideError("logged action or outcome codes exceed the problem's")
    target = np.eye(problem.n_actions)[a]
    return (OffPolicyInputs(problem.utility[a, y], a, target, weight=c), rows,
            OnPolicy())


def warn_summary(data: Any, policy: Any, problem: DecisionProblem,
                 result: ValueEstimate) -> None:
    """Warn when ``policy`` summarises the logged decisions (declares
    ``summarises_logs``: the cell rates of ``TabularPolicy.from_data``) and its value
    ``result`` differs from the logged decisions' own on these rows by more than
    SUMMARY_GAP_SE standard errors of the difference (from the two influence functions,
    which share the rows)."""
    if is_logged(policy) or not as_policy(policy, problem).summarises_logs \
            or data.a is None:
        return
    inputs, _, est = logged_inputs(data, problem)
    logged = est.estimate(inputs)
    gap = result.value - logged.value
    if result.influence is not None and len(result.influence) == len(logged.influence):
        se = _robust_std(result.influence - logged.influence, inputs.weight) / np.sqrt(
            logged.n)
    else:
        se = float(np.hypot(result.std_error, logged.std_error))
    if abs(gap) > SUMMARY_GAP_SE * se:
        warnings.warn(
            f"this policy is the logged decisions' action rates per cell (x, z) "
            f"(TabularPolicy.from_data), valued at {result.value:.4f} ({result.method}); "
            f"the logged decisions themselves are worth {logged.value:.4f} on these rows "
            f"(evaluate_policy(problem, data, 'logged')), {abs(gap) / se:.0f} standard "
            "errors apart. The cell policy re-draws each decision at random with its "
            "cell's rates, so it loses whatever else the decisions used (a score, an "
            "interview). Report the logged decisions' value as 'logged'",
            stacklevel=3)
