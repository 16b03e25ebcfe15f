"""Individual fairness on Adult: a policy that treats similar people similarly, certified.

2000 people from Adult decide "predict high income" or not, with payoffs (accuracy) from
a logistic regression. We ask for D_TV(pi(. | x_i), pi(. | x_j)) <= L ||x_i - x_j|| for
every pair (numerics standardised, categoricals one-hot), alone and beside demographic
parity, and read the certificate: the largest violation over all 1,999,000 pairs.
Then: a linear-softmax policy certified for everyone, seen or not, through its weights;
how far apart a smooth policy can still treat women and men (the worst-case bias); and
whether the decisions are meritocratic with respect to the predicted income.

Run with the Adult files in ``FAIRDECIDE_DATA`` (see docs/data.md).
"""

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairdecide as fd
from fairdecide.datasets import load_adult

N, L = 2000, 0.2

df = load_adult(split="both").dropna().reset_index(drop=True)
y = (df["income"] == ">50K").astype(int).to_numpy()
sex = df["sex"].to_numpy()
X = df.drop(columns=["income", "sex", "fnlwgt"])
categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
encode = ColumnTransformer([
    ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
    ("num", StandardScaler(), [c for c in X.columns if c not in categorical])])
A = encode.fit_transform(X)
scores = LogisticRegression(max_iter=2000).fit(A, y).predict_proba(A[:N])

world = fd.SampleWorld(A[:N], sex[:N], scores)
problem = fd.DecisionProblem.classification(2)

free = fd.optimize_policy(problem, world)
smooth = fd.optimize_policy(problem, world, fd.Lipschitz(constant=L), epsilon=0.0)
both = fd.optimize_policy(problem, world, [fd.Lipschitz(constant=L), fd.Independence()],
                          epsilon=[0.0, 0.02])
print(f"accuracy without constraints   : {free.utility:.4f}")
print(f"accuracy, {L}-Lipschitz        : {smooth.utility:.4f}")
print(f"accuracy, Lipschitz and DP 0.02: {both.utility:.4f}")
print()
print(both.summary())
cert = both.certificates["lipschitz"]
print(f"\nCertified: no pair of the {N:,} people is treated more differently than "
      f"{L} x their distance (largest violation {cert['max_violation']:.1e} over "
      f"{cert['pairs_checked']:,} pairs; {cert['cuts_in_program']:,} pairs were enough "
      "in the program).")

# A policy for people never seen: certified through its weights.
softmax = fd.optimize_policy(problem, world, fd.Lipschitz(constant=L), epsilon=0.0,
                             policy=fd.LinearSoftmaxPolicy(), n_restarts=2, random_state=0)
kappa = softmax.certificates["lipschitz"]["lipschitz_bound"]
print(f"\nlinear-softmax policy: accuracy {softmax.utility:.4f}, weight bound "
      f"{kappa:.4f} <= L = {L}: D_TV <= {kappa:.4f} d for every pair, seen or not")

# Smooth is not the same as fair to groups: how far apart can an L-Lipschitz policy
# treat women and men, and how far apart does ours?
women, men = sex[:N] == "Female", sex[:N] == "Male"
bias = fd.worst_case_bias(A[:N], women, men, L)
ours = fd.parity(smooth.policy.table, women, men)
print(f"\nworst case over all {L}-Lipschitz policies: D_TV(women, men) = "
      f"{bias.value:.4f}; the smooth policy above: {ours.tv:.4f}")

# Meritocracy: is anyone with a higher predicted income less likely to be predicted
# "high" than someone with a lower one?
merit = fd.meritocracy(both.policy.table, scores[:, 1], action=1)
print(f"\nmeritocratic in expectation w.r.t. the predicted income: {merit.meritocratic} "
      f"({merit.n_violations:,} of {merit.n_comparable:,} comparable pairs violate)")
