"""Release under a fixed number of places on COMPAS: k beds, equal false-positive rates,
and who is passed over.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/capacity_compas.py`` (a folder
holding compas-scores-two-years.csv[.gz]); without it the file is downloaded into the
cache (and its checksum verified).

A jail has beds for at most 30% of the defendants in front of the court; everyone else
is released. The defendants are a fixed population, the African-American and Caucasian
defendants of one half of ProPublica's COMPAS data, each with a probability of
reoffending within two years from a logistic regression fitted on the other half (on
age, sex, charge degree and prior and juvenile counts; race is not a feature of the
score). Releasing someone who does not reoffend gains 1, releasing someone who does
loses 2; holding someone gains nothing. ``optimize_policy(..., capacity=...)`` holds
``fd.Capacity("detain", at_most=0.3)`` exactly, alone (the best policy holds the 30%
of highest risk) and beside equal false-positive rates
(``fd.Separation(outcomes=[0], measure="max", reference="pairwise")``: among those who
would not reoffend, the groups' detention rates within 0.02 of each other).

``fd.meritocracy`` then asks the book's question (definition 3.3.2): is anyone less
likely to reoffend held with higher probability than someone more likely to? The worth
of a defendant is their probability of not reoffending, the favourable action release.
Last, ``fd.sample_cohort`` draws one set of exactly k detentions with the policy's
probabilities, so the jail never holds more than its k beds.
"""

import time

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairdecide as fd
from fairdecide.datasets import load_compas

SHARE, EPSILON = 0.30, 0.02

t_start = time.perf_counter()
df = load_compas(propublica_filter=True)
df = df[df["race"].isin(["African-American", "Caucasian"])].reset_index(drop=True)
y = df["two_year_recid"].to_numpy()
numeric = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
categorical = ["sex", "c_charge_degree"]
fit_rows, court = train_test_split(np.arange(len(df)), test_size=0.5, stratify=y,
                                   random_state=0)
encode = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
                            ("num", StandardScaler(), numeric)])
X_fit = encode.fit_transform(df.iloc[fit_rows])
X_court = encode.transform(df.iloc[court])
model = LogisticRegression(max_iter=2000).fit(X_fit, y[fit_rows])
p_y = model.predict_proba(X_court)  # P(no reoffence), P(reoffence) per defendant
race = df["race"].to_numpy()[court]

n = len(court)
k = int(np.floor(SHARE * n))  # the beds: a whole number of people, k / n <= SHARE
people = fd.SampleWorld(np.asarray(X_court), race, p_y)
# U[a, y]: rows detain, release; columns no reoffence, reoffence. y is whether the
# defendant would reoffend if released, a property of the person that the decision does
# not change, so equal false-positive rates are linear in the policy (one exact LP).
problem = fd.DecisionProblem(np.array([[0.0, 0.0], [1.0, -2.0]]),
                             action_labels=("detain", "release"),
                             outcome_depends_on_action=False)
beds = fd.Capacity("detain", at_most=k / n)
equal_fpr = fd.Separation(outcomes=[0], measure="max", reference="pairwise")
print(f"COMPAS: {len(fit_rows)} defendants fit the risk score; {n} defendants in court "
      f"(African-American and Caucasian), {k} beds (k / n = {k / n:.6f} <= {SHARE})")
print()

black = race == "African-American"
worth = p_y[:, 0]  # the probability of not reoffending
runs = [("no capacity", None, None, None),
        ("capacity", None, None, beds),
        ("capacity + equal FPR", equal_fpr, EPSILON, beds)]
results = {}
for name, criterion, eps, cap in runs:
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, people, criterion, epsilon=eps, capacity=cap)
    secs = time.perf_counter() - t0
    p_hold = res.policy.table[:, 0]  # each defendant's probability of being held
    # false-positive rate: P(held | would not reoffend, group), under the risk score
    fpr = {g: float(p_hold[m] @ p_y[m, 0] / p_y[m, 0].sum())
           for g, m in (("African-American", black), ("Caucasian", ~black))}
    merit = fd.meritocracy(res.policy.table, worth, action=1)
    results[name] = (res, merit)
    print(f"{name:21s} utility {res.utility:.6f}  held {p_hold.mean():.6f}  "
          f"FPR African-American {fpr['African-American']:.6f}  Caucasian "
          f"{fpr['Caucasian']:.6f}  gap {abs(fpr['African-American'] - fpr['Caucasian']):.6f}"
          f"  expected held {p_hold.sum():.3f}  merit violations {merit.n_violations}  "
          f"({res.status}, {secs:.1f} s)")
print()
print("held: the mean of the defendants' probabilities of being held, recomputed here from "
      "the policy; FPR: the detention rate among those who would not reoffend, by the "
      "risk score; merit violations: pairs (i, j) where j is less likely than i to "
      "stay out of trouble yet more likely to be released.")
print(f"Without a capacity the best policy holds everyone whose risk exceeds 1/3: "
      f"{results['no capacity'][0].policy.table[:, 0].mean():.1%} of them. The capacity "
      f"holds the {k} of highest risk and releases everyone else.")

merit = results["capacity + equal FPR"][1]
print()
print(f"Equal false-positive rates within {EPSILON} move detentions between the groups: "
      f"{merit.n_violations} of {merit.n_comparable} ordered pairs "
      f"({merit.n_violations / merit.n_comparable:.2%}) now hold the less risky defendant "
      f"with higher probability (before the constraint: "
      f"{results['capacity'][1].n_violations}). The worst three, as (held, released):")
for (i, j), (v_i, v_j), gap in list(zip(merit.pairs, merit.worths, merit.gaps,
                                        strict=True))[:3]:
    print(f"  defendant {i} (P(no reoffence) {v_i:.3f}) is released with probability "
          f"{gap:.3f} less than defendant {j} ({v_j:.3f})")
# the same count over all n^2 pairs by brute force, and how far apart in worth they go
released = results["capacity + equal FPR"][0].policy.table[:, 1]
violating = (worth[:, None] > worth[None, :]) & (released[None, :] > released[:, None] + 1e-9)
widest = np.subtract.outer(worth, worth)[violating].max()
print(f"  all {n} x {n} pairs checked directly: {int(violating.sum())} violations, the "
      f"largest difference in P(no reoffence) {widest:.3f}")

p_fair = results["capacity + equal FPR"][0].policy.table[:, 0]
cohort = fd.sample_cohort(p_fair, k=k, random_state=0)
print()
print(f"One set of detentions drawn with sample_cohort: {int(cohort.sum())} held "
      f"(k = {k}); African-American {int(cohort[black].sum())}, Caucasian "
      f"{int(cohort[~black].sum())}.")
print(f"total {time.perf_counter() - t_start:.0f} s")
