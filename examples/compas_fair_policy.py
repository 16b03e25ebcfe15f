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

criteria = {"independence": fd.Independence(), "separation": fd.Separation(),
            "equal opportunity": fd.Separation(outcomes=[1]),
            "sufficiency": fd.Sufficiency()}
for name, crit in criteria.items():
    res = fd.optimize_policy(problem, world, crit, epsilon=0.02)
    print(f"\n{name} <= 0.02: accuracy {res.utility:.4f} ({res.status})")
    print(crit.breakdown(res.policy, world, problem).round(3).to_string(index=False))

blind = fd.optimize_policy(problem, world, fd.Separation(), epsilon=0.02, group_blind=True)
print(f"\ngroup-blind separation <= 0.02: accuracy {blind.utility:.4f}")
