"""School choice: a stable matching, the fairest stable lottery, the price of instability.

Run with ``python examples/matching_school_choice.py`` (synthetic data, no download).

200 pupils rank all 10 schools of 20 places each (a place for every pupil); each school
ranks the pupils by its own priorities, drawn independently (the markets of this kind
have many stable matchings). A third of the pupils are in group "b". Deferred
acceptance (``fd.deferred_acceptance``) gives the pupil-optimal stable matching; its
per-school admission rates differ between the groups. ``fd.optimize_matching`` then finds

- the lottery over stable matchings whose per-school rates are closest between the
  groups (the smallest gap any stable lottery can meet, which ``optimize_matching`` reports
  when asked for gap 0), and its cost in the pupils' utility (10 for a first choice,
  9 for a second, ...);
- the best lottery with the same gap when stability is given up, and how many blocking
  pairs (pupil and school that would both rather be together) its draws have.

One matching is drawn from each lottery (``result.sample``): a school never gets more
pupils than it has places, and a draw from the stable lottery is a stable matching.
"""

import numpy as np

import fairdecide as fd

rng = np.random.default_rng(2)
n, m, places = 200, 10, 20
group = np.where(rng.random(n) < 1 / 3, "b", "a")  # each student's group
pupils = np.argsort(-rng.gumbel(size=(n, m)), axis=1)
schools = np.argsort(-rng.normal(size=(n, m)), axis=0).T
market = fd.MatchingMarket(pupils.tolist(), schools.tolist(), [places] * m)
print(market)

da = fd.deferred_acceptance(market)
base = fd.optimize_matching(market, group=group)  # stable, no criterion: deferred acceptance
assert np.array_equal(base.X.argmax(axis=1), da)
print(f"deferred acceptance  utility {base.utility:.1f}  gap "
      f"{base.deviations['programme_gap']:.4f}  blocking pairs "
      f"{len(fd.blocking_pairs(market, da))}")

try:
    fd.optimize_matching(market, group=group, programme_gap=0.0)
    gap = 0.0
except fd.InfeasibleToleranceError as exc:
    gap = exc.smallest["programme_gap"] + 1e-6
    print(f"equal rates are out of reach among the stable matchings; the smallest gap is "
          f"{exc.smallest['programme_gap']:.4f}")

for stability in (True, False):
    res = fd.optimize_matching(market, group=group, programme_gap=gap, stability=stability)
    draw = res.sample(1, random_state=0)[0]
    counts = np.bincount(draw[draw >= 0], minlength=m)
    comp = res.comparison()
    name = "stable lottery" if stability else "unstable lottery"
    print(f"{name:<20} utility {res.utility:.1f}  gap {res.deviations['programme_gap']:.4f}"
          f"  worse off {comp['worse_off']}  better off {comp['better_off']}  "
          f"blocking pairs in a draw {len(fd.blocking_pairs(market, draw))}  "
          f"largest school {counts.max()} of {places}")
