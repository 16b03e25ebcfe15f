"""A fixed number of offers on Adult: at most 10% of applicants, with and without parity.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/capacity_adult.py`` (a folder
holding adult.data[.gz] and adult.test[.gz]); without it the files are downloaded into
the cache (and their checksums verified).

A lender can make an offer to at most 10% of the applicants. The applicants are a fixed
population, the 13,567 test people of Adult, each with a probability of an income above
50K from a logistic regression fitted on the training people; an offer gains 1 from an
applicant above 50K and loses 0.5 from one below. ``fd.Capacity("offer", at_most=0.10)``
with ``epsilon=0`` bounds the expected share of offers, alone (the best policy offers to
the 10% of largest expected gain) and beside demographic parity (``fd.Independence``,
``measure="max", reference="pairwise"``: the women's and men's offer shares within
0.01). The policy gives each applicant a
probability of an offer; ``fd.sample_cohort`` draws one cohort of exactly k = 10% of
them with those probabilities.
"""

import time

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import fairdecide as fd
from fairdecide.datasets import load_adult

SHARE, EPSILON = 0.10, 0.01

t_start = time.perf_counter()
df = load_adult(split="both").dropna().drop(columns=["fnlwgt"]).reset_index(drop=True)
y = (df.pop("income") == ">50K").astype(int).to_numpy()
sex = df.pop("sex").to_numpy()
numeric = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
categorical = [c for c in df.columns if c not in numeric]
train, test = train_test_split(np.arange(len(df)), test_size=0.3, stratify=y,
                               random_state=0)
encode = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
                            ("num", StandardScaler(), numeric)])
X_train = encode.fit_transform(df.iloc[train])
X_test = encode.transform(df.iloc[test])
model = LogisticRegression(max_iter=2000).fit(X_train, y[train])
p_y = model.predict_proba(X_test)  # P(income <= 50K), P(income > 50K) per applicant

n = len(test)
k = int(np.floor(SHARE * n))  # the places: a whole number of people, k / n <= SHARE
people = fd.SampleWorld(X_test.toarray(), sex[test], p_y)
# U[a, y]: rows decline, offer; columns income <= 50K, > 50K
problem = fd.DecisionProblem(np.array([[0.0, 0.0], [-0.5, 1.0]]),
                             action_labels=("decline", "offer"))
places = fd.Capacity("offer", at_most=k / n)
# demographic parity as the gap between the women's and the men's offer shares
parity = fd.Independence(measure="max", reference="pairwise")
print(f"Adult: {len(train)} training people fit the scores; {n} applicants (the test "
      f"people), {k} places (k / n = {k / n:.6f} <= {SHARE})")
print()

runs = [("no capacity", [], []),
        ("capacity", [places], [0.0]),
        ("capacity + parity", [places, parity], [0.0, EPSILON])]
women = people.z == list(people.group_labels).index("Female")
results = {}
for name, criteria, eps in runs:
    t0 = time.perf_counter()
    res = fd.optimize_policy(problem, people, criteria or None, epsilon=eps or None)
    secs = time.perf_counter() - t0
    p_offer = res.policy.table[:, 1]  # each applicant's probability of an offer
    share = p_offer.mean()
    share_f, share_m = p_offer[women].mean(), p_offer[~women].mean()
    results[name] = p_offer
    deviations = {c: round(v, 6) for c, v in res.deviations.items()}
    print(f"{name:18s} utility {res.utility:.6f}  offer share {share:.6f}  "
          f"women {share_f:.6f}  men {share_m:.6f}  gap {abs(share_f - share_m):.6f}  "
          f"expected offers {p_offer.sum():.3f}  ({res.status}, {secs:.1f} s)")
    if deviations:
        print(f"{'':18s} deviations reported by optimize_policy: {deviations}")
print()
print("offer share: the mean of the applicants' offer probabilities (recomputed here from "
      "the policy); gap: |women's share - men's share|, demographic parity's difference.")
print(f"Without a capacity the best policy offers to every applicant whose P(>50K) exceeds "
      f"1/3: {results['no capacity'].mean():.1%} of them. The capacity offers to the "
      f"{k} of largest expected gain; parity within {EPSILON} then moves offers from men "
      "to women.")

p_fair = results["capacity + parity"]
fractional = int(np.sum((p_fair > 1e-6) & (p_fair < 1 - 1e-6)))
cohort = fd.sample_cohort(p_fair, k=k, random_state=0)
print()
print(f"One cohort drawn with sample_cohort: {int(cohort.sum())} offers (k = {k}); "
      f"women {int(cohort[women].sum())}, men {int(cohort[~women].sum())}; "
      f"{fractional} applicants had a fractional probability.")
print(f"total {time.perf_counter() - t_start:.0f} s")
