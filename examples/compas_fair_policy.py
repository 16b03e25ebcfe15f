"""Fair recidivism prediction on COMPAS, from the raw data to a verified fair policy.

Run with ``FAIRDECIDE_DATA=/path/to/data python examples/compas_fair_policy.py`` (a folder
holding compas-scores-two-years.csv[.gz]); without it the file is downloaded into the
cache (and its checksum verified).
"""

import fairdecide as fd
from fairdecide.datasets import load_compas

df = load_compas()
df = df[df["race"].isin(["African-American", "Caucasian"])].copy()
df["priors"] = df["priors_count"].clip(upper=3)
data = fd.LoggedData.from_frame(df, features=["age_cat", "c_charge_degree", "priors"],
                                group="race", outcome="two_year_recid")
problem = fd.DecisionProblem.classification(2, labels=[0, 1])
world = fd.TabularWorld.from_data(data, problem)
print(data, world, sep="\n")
best = fd.optimize_policy(problem, world)
print(
    "\nPredict two-year recidivism (action = predicted y: 1 = will reoffend) from the cell x =\n"
    "(age category, charge degree, prior offences 0-3+) and the group z = race; utility =\n"
    "accuracy, in the world estimated from all rows (in-sample). Unconstrained optimum:\n"
    f"accuracy {best.utility:.4f}.\n\n"
    "Each criterion below is bounded by 0.02; its breakdown lists, for every conditioning\n"
    "value (given) and group, the group's conditional P(target | given, group) (p_group)\n"
    "against the pooled P(target | given) (p_pooled). The deviation is the sum of\n"
    "weight x |difference| over the rows; mass = P(given, group)."
)

criteria = {"independence": fd.Independence(), "separation": fd.Separation(),
            "equal opportunity": fd.Separation(outcomes=[1]),
            "sufficiency": fd.Sufficiency()}
for name, crit in criteria.items():
    res = fd.optimize_policy(problem, world, crit, epsilon=0.02)
    print(f"\n{name} <= 0.02: accuracy {res.utility:.4f} ({res.status})")
    print(crit.breakdown(res.policy, world, problem).round(3).to_string(index=False))
    if name == "equal opportunity":
        print("(equal opportunity compares only those who reoffended, outcome=1; the rows of\n"
              "outcome=0 are not compared, hence NaN)")

blind = fd.optimize_policy(problem, world, fd.Separation(), epsilon=0.02, group_blind=True)
print(f"\ngroup-blind separation <= 0.02: accuracy {blind.utility:.4f}\n"
      "(a policy that may not read the group can equalise the groups' error rates only\n"
      "through the cells it acts on: here that costs far more accuracy)")
