"""How good and how fair were the COMPAS-based decisions, and how would a fair policy
have done?

The historical policy: flag a defendant as high risk when the COMPAS decile score is 5 or
more. Treated as a prediction of two-year recidivism (accuracy as utility). We audit the
logged decisions, then learn a policy under separation (equalised odds) on one half of
the data and evaluate both on the other half, with intervals.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/evaluate_compas_decisions.py``.
"""

import numpy as np

import fairdecide as fd
from fairdecide.datasets import load_compas
from fairdecide.evaluation import (
    audit,
    estimate_deviation,
    evaluate_policy,
    evaluate_policy_by_group,
)

df = load_compas()
df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
df["priors"] = df["priors_count"].clip(upper=3)
df["high_risk"] = (df["decile_score"] >= 5).astype(int)
data = fd.LoggedData.from_frame(df, features=["age_cat", "c_charge_degree", "priors"],
                                group="race", action="high_risk", outcome="two_year_recid")
problem = fd.DecisionProblem.classification(2, labels=[0, 1])

print("Audit of the historical decisions (high risk = decile score >= 5):")
print(audit(data, problem, random_state=0).round(4).to_string(index=False))

half = np.random.default_rng(0).permutation(data.n)
train, test = data.subset(half[: data.n // 2]), data.subset(half[data.n // 2:])
historical = fd.TabularPolicy.from_data(train, problem)  # the logged policy, per cell
world = fd.TabularWorld.from_data(train, problem, smoothing=0.5)
fair = fd.optimize_policy(problem, world, fd.Separation(), epsilon=0.05).policy

for name, policy in (("historical (cell frequencies)", historical),
                     ("separation <= 0.05", fair)):
    value = evaluate_policy(test, policy, problem)  # full information: y is always seen
    lo, hi = value.confidence_interval()
    groups = evaluate_policy_by_group(test, policy, problem)
    gap = groups.gaps().iloc[0]
    sep = estimate_deviation(test, problem, fd.Separation(), policy, random_state=0)
    print(f"\n{name}: accuracy {value.value:.4f} [{lo:.4f}, {hi:.4f}]; "
          f"accuracy gap {gap['gap']:+.4f} [{gap['low']:+.4f}, {gap['high']:+.4f}]; "
          f"separation {sep.value:.4f} [{sep.low:.4f}, {sep.high:.4f}]")
